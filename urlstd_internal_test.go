package crawl

import (
	"net/http"
	"net/url"
	"testing"
)

// stdCases are cases of the URL Standard's basic URL parser for http(s),
// worked out from its text, then normalised as the crawl dedupes (RFC
// 3986, section 6.2.2: unreserved escapes decoded, hex upper-cased) and
// the fragment dropped. want "" is a failure.
var stdCases = []struct {
	base, ref, want string
}{
	// Spaces, quotes, non-ASCII: the path, query and special-query sets.
	{"http://h/", "/q?x=a b", "http://h/q?x=a%20b"},
	{"http://h/", "/a b", "http://h/a%20b"},
	{"http://h/", "/a%20b", "http://h/a%20b"},
	{"http://h/", "/caf\u00e9?q=caf\u00e9#caf\u00e9", "http://h/caf%C3%A9?q=caf%C3%A9"},
	{"http://h/", `/"q"?"q"`, "http://h/%22q%22?%22q%22"},
	{"http://h/", "/it's?it's", "http://h/it's?it%27s"},
	{"http://h/", "/<a>?<a>", "http://h/%3Ca%3E?%3Ca%3E"},
	{"http://h/", "/{a}^`?{a}^`", "http://h/%7Ba%7D%5E%60?{a}^`"},
	{"http://h/", "/a|b?a|b", "http://h/a%7Cb?a|b"}, // "|" in a path: net/url
	{"http://h/", "/a?b?c", "http://h/a?b?c"},
	{"http://h/", "/[a]:@!$&()*+,;=", "http://h/[a]:@!$&()*+,;="},
	{"http://h/", "/a\x7fb", "http://h/a%7Fb"},
	// Reserved escapes stay, unreserved ones are decoded.
	{"http://h/", "/a%3Bb", "http://h/a%3Bb"},
	{"http://h/", "/a;b", "http://h/a;b"},
	{"http://h/", "/%7euser", "http://h/~user"},
	{"http://h/", "/a%2fb%3f?%2f%3d%41", "http://h/a%2Fb%3F?%2F%3DA"},
	// Percent signs not followed by two hex digits.
	{"http://h/", "/100%", "http://h/100%25"},
	{"http://h/", "/%zz?%zz&%41", "http://h/%25zz?%zz&%41"},
	// Backslashes, tabs and newlines, C0 and space at the ends.
	{"http://h/", `\a\b`, "http://h/a/b"},
	{"http://h/a/", `\\x\y`, "http://x/y"},
	{"http://h/", "/a\t\nb\r?c\td", "http://h/ab?cd"},
	{"http://h/", " \x00\x1f/a b \x01", "http://h/a%20b"},
	{"http://h/", "ht\ntp://x/", "http://x/"},
	// Dot segments, with their %2e forms.
	{"http://h/a/b/c", "../d", "http://h/a/d"},
	{"http://h/a/b/c", "./d", "http://h/a/b/d"},
	{"http://h/a/b/c", "..", "http://h/a/"},
	{"http://h/a/b/c", ".", "http://h/a/b/"},
	{"http://h/a/b/c", "/../../x", "http://h/x"},
	{"http://h/", "/a/%2e/b/%2E%2e/c", "http://h/a/c"},
	{"http://h/", "/a/.%2E/b", "http://h/b"},
	{"http://h/", "/a/%2e./b", "http://h/b"},
	{"http://h/", "/a/%2e", "http://h/a/"},
	{"http://h/", "/a/...", "http://h/a/..."},
	{"http://h/", "/a/%2e%2e%2e", "http://h/a/..."},
	{"http://h/", "/.well-known/x", "http://h/.well-known/x"},
	// Relative references of every start.
	{"http://h/a/b?q#f", "", "http://h/a/b?q"},
	{"http://h/a/b?q", "?", "http://h/a/b?"},
	{"http://h/a/b?q", "?x", "http://h/a/b?x"},
	{"http://h/a/b?q", "#x", "http://h/a/b?q"},
	{"http://h/a/b", "c", "http://h/a/c"},
	{"http://h/a/b", "//x", "http://x/"},
	{"https://h/a/b", "//x:443/y", "https://x/y"},
	{"http://h/a/b", "///x", "http://x/"},
	{"http://h/a/b", "http:foo", "http://h/a/foo"},
	{"http://h/a/b", "http:/x", "http://h/x"},
	{"https://h/a/b", "http:foo", "http://foo/"},
	{"https://h/a/b", "http:/x", "http://x/"},
	{"http://h/", "HTTP://X/", "http://x/"},
	{"", "http:\\\\x\\y", "http://x/y"},
	{"", "http:x", "http://x/"},
	{"", "/x", ""},
	{"", "x", ""},
	{"http://h/", "mailto:a@b", ""},
	{"http://h/", "javascript:void(0)", ""},
	{"http://h/", "ftp://h/", ""},
	// Hosts: empty, userinfo, IDNA, percent-encoded.
	{"", "http://", ""},
	{"", "http:///", ""},
	{"", "http://u:p@/x", ""},
	{"", "http://u:p@H/x", "http://h/x"},
	{"", "http://a@b@c/", "http://c/"},
	{"", "http://B\u00fccher.example./", "http://xn--bcher-kva.example/"},
	{"", "http://%65x.com/", "http://ex.com/"},
	{"", "http://a..b/", ""},
	{"", "http://a b/", ""},
	{"", "http://a%zzb/", ""},
	// Ports.
	{"", "http://h:80/", "http://h/"},
	{"", "https://h:443/", "https://h/"},
	{"", "http://h:443/", "http://h:443/"},
	{"", "http://h:0080/", "http://h/"},
	{"", "http://h:/", "http://h/"},
	{"", "http://h:8080", "http://h:8080/"},
	{"", "http://h:0/", "http://h:0/"},
	{"", "http://h:0x50/", ""},
	{"", "http://h:65535/", "http://h:65535/"},
	{"", "http://h:65536/", ""},
	{"", "http://h:1:2/", ""},
	{"", "http://:80/", ""},
	// IPv4 number forms.
	{"", "http://0x7f.1/", "http://127.0.0.1/"},
	{"", "http://127.1/", "http://127.0.0.1/"},
	{"", "http://2130706433/", "http://127.0.0.1/"},
	{"", "http://0177.0.0.1/", "http://127.0.0.1/"},
	{"", "http://0x7F000001/", "http://127.0.0.1/"},
	{"", "http://127.0.0.1./", "http://127.0.0.1/"},
	{"", "http://1.2.3.4.5/", ""},
	{"", "http://256.0.0.1/", ""},
	{"", "http://1.2.65536/", ""},
	{"", "http://1.2.65535/", "http://1.2.255.255/"},
	{"", "http://4294967296/", ""},
	{"", "http://09.1/", ""},
	{"", "http://example.0x/", ""},
	{"", "http://1.2.3.a/", "http://1.2.3.a/"},
	{"", "http://0x/", "http://0.0.0.0/"},
	{"", "http://1.2.3.04/", "http://1.2.3.4/"},
	{"", "http://01.2.3.4:8080/", "http://1.2.3.4:8080/"},
	{"", "http://255.255.255.255/", "http://255.255.255.255/"},
	// IPv6.
	{"", "http://[0:0:0:0:0:0:0:1]/", "http://[::1]/"},
	{"", "http://[2001:DB8:0:0:1:0:0:1]:80/", "http://[2001:db8::1:0:0:1]/"},
	{"", "http://[1:0:1:0:1:0:1:0]/", "http://[1:0:1:0:1:0:1:0]/"},
	{"", "http://[::ffff:1.2.3.4]/", "http://[::ffff:102:304]/"},
	{"", "http://[::]/", "http://[::]/"},
	{"", "http://[1::]:8080/", "http://[1::]:8080/"},
	{"", "http://[fe80::1%25eth0]/", ""},
	{"", "http://[1.2.3.4]/", ""},
	{"", "http://[::1/", ""},
}

func TestResolveRefStandard(t *testing.T) {
	for _, c := range stdCases {
		var base *url.URL
		if c.base != "" {
			var err error
			if base, err = url.Parse(c.base); err != nil {
				t.Fatal(err)
			}
		}
		u, err := resolveRef(base, c.ref)
		switch {
		case c.want == "" && err == nil:
			t.Errorf("resolveRef(%q, %q) = %q, want an error", c.base, c.ref, u)
		case c.want != "" && err != nil:
			t.Errorf("resolveRef(%q, %q): got error %v, want %q", c.base, c.ref, err, c.want)
		case c.want != "" && u.String() != c.want:
			t.Errorf("resolveRef(%q, %q) = %q, want %q", c.base, c.ref, u, c.want)
		case c.want != "":
			checkWire(t, u)
		}
	}
}

// checkWire checks that what the URL says it is goes on the wire: its
// RequestURI, and that of the request http.NewRequest makes from its
// string, are its serialisation after the host.
func checkWire(t *testing.T, u *url.URL) {
	t.Helper()
	s := u.String()
	want := s[len(u.Scheme)+3+len(u.Host):]
	if got := u.RequestURI(); got != want {
		t.Errorf("RequestURI of %q: got %q, want %q", s, got, want)
	}
	req, err := http.NewRequest(http.MethodGet, s, nil)
	if err != nil {
		t.Errorf("http.NewRequest(%q): %v", s, err)
		return
	}
	if got := req.URL.RequestURI(); got != want {
		t.Errorf("RequestURI of http.NewRequest(%q): got %q, want %q", s, got, want)
	}
	if got := req.URL.String(); got != s {
		t.Errorf("http.NewRequest(%q).URL: got %q, want %q", s, got, s)
	}
}

// FuzzWHATWG checks resolveRef on any reference against a few bases: it
// never panics, its result is its own normal form (parsed anew, and by
// normalize), and that form is what a request made from it sends.
func FuzzWHATWG(f *testing.F) {
	for _, c := range stdCases {
		f.Add(c.ref)
	}
	for _, s := range []string{
		"%", "%%2e%2e/", "/a/%2e%2", "//[::1]:0x/", "http://\u00e9.example/%zz?%zz",
		"http://a/b|c%7c", "\\\\?\\", "http://1.2.3.0x100/", "http://[::1.2.3.4]/", "?\x00#\x00",
	} {
		f.Add(s)
	}
	var bases []*url.URL
	for _, b := range []string{"http://h/a/b?q", "https://x.example:8443/%2F/", "http://[::1]/"} {
		u, err := url.Parse(b)
		if err != nil {
			f.Fatal(err)
		}
		bases = append(bases, u)
	}
	f.Fuzz(func(t *testing.T, ref string) {
		for _, base := range append(bases, nil) {
			u, err := resolveRef(base, ref)
			if err != nil {
				continue
			}
			s := u.String()
			if u.Fragment != "" || u.User != nil || (u.Scheme != "http" && u.Scheme != "https") {
				t.Errorf("resolveRef(%v, %q) = %q, want http(s) without userinfo and fragment", base, ref, s)
			}
			again, err := resolveRef(nil, s)
			if err != nil || again.String() != s {
				t.Errorf("resolveRef(%v, %q) = %q, parsed again: got %v, %v; want it unchanged", base, ref, s, again, err)
			}
			v := *u
			normalize(&v)
			if v.String() != s {
				t.Errorf("resolveRef(%v, %q) = %q, normalised: got %q, want it unchanged", base, ref, s, v.String())
			}
			if h, err := canonicalHostPort(u.Host, u.Scheme); err != nil || h != u.Host {
				t.Errorf("resolveRef(%v, %q) = %q: canonicalHostPort(%q) = %q, %v; want it unchanged", base, ref, s, u.Host, h, err)
			}
			checkWire(t, u)
		}
	})
}
