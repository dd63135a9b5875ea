package urlstd

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"
)

// stdCases are cases of the URL Standard's basic URL parser for http(s),
// worked out from its text, then made the key the crawl dedupes on (RFC
// 3986, section 6.2.2: unreserved escapes decoded, hex upper-cased; see
// URL.Key), the fragment dropped. want "" is a failure. What is sent,
// the Standard's serialisation, is checked against node's URL on these
// references and more by TestResolveRefNode.
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
	{"http://h/", "/a|b?a|b", "http://h/a|b?a|b"}, // "|" left as it is
	{"http://h/", "/a?b?c", "http://h/a?b?c"},
	{"http://h/", "/[a]:@!$&()*+,;=", "http://h/[a]:@!$&()*+,;="},
	{"http://h/", "/a\x7fb", "http://h/a%7Fb"},
	// Reserved escapes stay, unreserved ones are decoded.
	{"http://h/", "/a%3Bb", "http://h/a%3Bb"},
	{"http://h/", "/a;b", "http://h/a;b"},
	{"http://h/", "/%7euser", "http://h/~user"},
	{"http://h/", "/a%2fb%3f?%2f%3d%41", "http://h/a%2Fb%3F?%2F%3DA"},
	// Percent signs not followed by two hex digits stay "%", and the
	// escapes around them are normalised, never into a new escape.
	{"http://h/", "/100%", "http://h/100%"},
	{"http://h/", "/%zz?%zz&%41", "http://h/%zz?%zz&A"},
	{"http://h/", "/a%25zz?%7e%zz", "http://h/a%25zz?~%zz"},
	{"http://h/", "/%0%61", "http://h/%0%61"},
	{"http://h/", "/%%30%61", "http://h/%0%61"},
	{"http://h/", "/%%30a", "http://h/%0%61"},
	{"http://h/", "/%0a", "http://h/%0A"},
	{"http://h/", "/%%7e%7e", "http://h/%~~"},
	{"http://h/", "/%a%62%63", "http://h/%a%62c"},
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
		u, err := Resolve(base, c.ref)
		if err != nil {
			if c.want != "" {
				t.Errorf("Resolve(%q, %q): got error %v, want %q", c.base, c.ref, err, c.want)
			}
			continue
		}
		_, key := Forms(u)
		switch {
		case c.want == "":
			t.Errorf("Resolve(%q, %q) = %q, want an error", c.base, c.ref, String(u))
		case key != c.want:
			t.Errorf("Resolve(%q, %q) = %q, key %q, want key %q", c.base, c.ref, String(u), key, c.want)
		default:
			checkWire(t, u)
		}
	}
}

// nodeCase is a case of testdata/whatwg/node.json: what node's URL made of
// input against base (see testdata/whatwg/gen.js).
type nodeCase struct {
	Base, Input string
	Href        string // the serialisation, without fragment
	Wire        string // pathname and search: the request-target
	Failure     bool   // no URL, or not an http(s) one
}

// nodeKnown are the inputs of node.json where the crawler knowingly
// differs from node, and what it gives: "" for an error.
var nodeKnown = map[string]string{
	// whatwg/url#846 (2025) added "^" to the path percent-encode set,
	// as Chrome and Firefox encode it; node 20's parser predates it
	// (nodejs/node#57313).
	"/{a}^`?{a}^`": "http://h/%7Ba%7D%5E%60?{a}^`",
	"/a^b":         "http://h/a%5Eb",
	// The host is made canonical past the Standard (see CanonicalHost):
	// one trailing dot removed, and an empty label refused. The
	// request-target is the Standard's.
	"http://B\u00fccher.example./": "http://xn--bcher-kva.example/",
	"http://EXAMPLE.com./a|b":      "http://example.com/a|b",
	"http://a..b/":                 "",
}

// TestResolveRefNode checks Resolve against node's URL, a WHATWG URL
// parser, on the corpus of testdata/whatwg (stdCases' references and
// more: malformed escapes, "|", non-ASCII, IDNA): the URL is node's
// serialisation, and what a request made from it sends is node's
// pathname and search, as a browser sends them.
func TestResolveRefNode(t *testing.T) {
	b, err := os.ReadFile("testdata/whatwg/node.json")
	if err != nil {
		t.Fatal(err)
	}
	var corpus struct {
		Node  string
		Cases []nodeCase
	}
	if err := json.Unmarshal(b, &corpus); err != nil {
		t.Fatal(err)
	}
	for _, c := range corpus.Cases {
		var base *url.URL
		if c.Base != "" {
			if base, err = url.Parse(c.Base); err != nil {
				t.Fatal(err)
			}
		}
		want, wire := c.Href, c.Wire
		if k, ok := nodeKnown[c.Input]; ok {
			want = k
			if k == "" {
				c.Failure = true
			} else {
				rest := k[len("http://"):]
				wire = rest[strings.IndexByte(rest, '/'):]
			}
		}
		u, err := Resolve(base, c.Input)
		switch {
		case c.Failure && err == nil:
			t.Errorf("Resolve(%q, %q) = %q, want an error, as node %s", c.Base, c.Input, String(u), corpus.Node)
			continue
		case c.Failure:
			continue
		case err != nil:
			t.Errorf("Resolve(%q, %q): got error %v, want %q, as node %s", c.Base, c.Input, err, want, corpus.Node)
			continue
		}
		if got := String(u); got != want {
			t.Errorf("Resolve(%q, %q) = %q, want %q, as node %s", c.Base, c.Input, got, want, corpus.Node)
		}
		if got, _ := Forms(u); got != want {
			t.Errorf("Resolve(%q, %q): wire form %q, want %q", c.Base, c.Input, got, want)
		}
		req, _, err := NewRequest(context.Background(), http.MethodGet, want)
		if err != nil {
			t.Errorf("NewRequest(%q): %v", want, err)
			continue
		}
		got := req.URL.RequestURI()
		if strings.HasPrefix(req.URL.Opaque, "//") {
			// A path that starts with "//" and that net/url cannot
			// hold but in Opaque goes out in absolute form.
			got = got[len(req.URL.Scheme)+3+len(req.URL.Host):]
		}
		if got != wire {
			t.Errorf("Resolve(%q, %q) = %q: request-target %q, want %q, as node %s", c.Base, c.Input, want, got, wire, corpus.Node)
		}
		checkWire(t, u)
	}
}

// checkWire checks that what the URL says it is goes on the wire: its
// String is its serialisation, and its RequestURI the serialisation after
// the host, or all of it (absolute form) for a path in Opaque; the request
// the crawler makes from its string form (and http.NewRequest, where
// net/url parses it) sends the serialisation after the host.
func checkWire(t *testing.T, u *url.URL) {
	t.Helper()
	s := u.String()
	if got := String(u); got != s {
		t.Errorf("String(%q) = %q, want its String", s, got)
	}
	want := s[len(u.Scheme)+3+len(u.Host):]
	wantURI := want
	if u.Opaque != "" {
		wantURI = s // absolute form: see URL.SetURL
	}
	if got := u.RequestURI(); got != wantURI {
		t.Errorf("RequestURI of %q: got %q, want %q", s, got, wantURI)
	}
	r, ru, err := NewRequest(context.Background(), http.MethodGet, s)
	if err != nil {
		t.Errorf("NewRequest(%q): %v", s, err)
		return
	}
	if strings.HasPrefix(want, "//") && u.Opaque != "" {
		want = s // absolute form: see originForm
	}
	if got := r.URL.RequestURI(); got != want {
		t.Errorf("RequestURI of NewRequest(%q): got %q, want %q", s, got, want)
	}
	if got := String(r.URL); got != s {
		t.Errorf("NewRequest(%q).URL: got %q, want %q", s, got, s)
	}
	if *ru != *u {
		t.Errorf("NewRequest(%q): URL %#v, want %#v", s, ru, u)
	}
	if r.Host != u.Host {
		t.Errorf("NewRequest(%q).Host: got %q, want %q", s, r.Host, u.Host)
	}
	if u.Opaque != "" {
		// url.Parse refuses it ("%zz") or would send it otherwise ("|").
		return
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

// FuzzWHATWG checks Resolve on any reference against a few bases: it
// never panics; the URL it gives is its own wire form (parsed anew, it is
// itself), which a request made from it sends; and its key is the key of
// its wire form parsed anew, and its own key, and what Normalize gives:
// the seen set meets one URL under one key, however it came.
func FuzzWHATWG(f *testing.F) {
	for _, c := range stdCases {
		f.Add(c.ref)
	}
	for _, s := range []string{
		"%", "%%2e%2e/", "/a/%2e%2", "//[::1]:0x/", "http://\u00e9.example/%zz?%zz",
		"http://a/b|c%7c", "\\\\?\\", "http://1.2.3.0x100/", "http://[::1.2.3.4]/", "?\x00#\x00",
		"/%0%61?%%30%61", "//a|%zz", "/%%7e%41%zz", "/a%2%7e", "/%7e%",
	} {
		f.Add(s)
	}
	var bases []*url.URL
	for _, b := range []string{"http://h/a/b?q", "https://x.example:8443/%2F/", "http://[::1]/", "http://h/a%zz|b/?%7e"} {
		u, err := url.Parse(b)
		if err != nil {
			u = &url.URL{Scheme: "http", Host: "h", Opaque: "/a%zz|b/", RawQuery: "%7e"}
		}
		bases = append(bases, u)
	}
	f.Fuzz(func(t *testing.T, ref string) {
		for _, base := range append(bases, nil) {
			u, err := Resolve(base, ref)
			if err != nil {
				continue
			}
			s := String(u)
			if u.Fragment != "" || u.User != nil || (u.Scheme != "http" && u.Scheme != "https") {
				t.Errorf("Resolve(%v, %q) = %q, want http(s) without userinfo and fragment", base, ref, s)
			}
			wire, key := Forms(u)
			if wire != s {
				t.Errorf("Resolve(%v, %q) = %q: wire form %q, want it", base, ref, s, wire)
			}
			if std, err := Parse(s, nil); err != nil || std.Key() != key {
				t.Errorf("Resolve(%v, %q) = %q: key %q, but parsed again its key is %q (%v)", base, ref, s, key, std.Key(), err)
			}
			again, err := Resolve(nil, s)
			if err != nil || String(again) != s {
				t.Errorf("Resolve(%v, %q) = %q, parsed again: got %v, %v; want it unchanged", base, ref, s, again, err)
				continue
			}
			if _, k := Forms(again); k != key {
				t.Errorf("Resolve(%v, %q) = %q, key %q; its wire form parsed again has key %q", base, ref, s, key, k)
			}
			if ku, err := Resolve(nil, key); err != nil {
				t.Errorf("Resolve(%v, %q): key %q does not parse: %v", base, ref, key, err)
			} else if w, k := Forms(ku); w != key || k != key {
				t.Errorf("Resolve(%v, %q): key %q, parsed again: wire %q, key %q; want it unchanged", base, ref, key, w, k)
			}
			v := *u
			Normalize(&v)
			if got := String(&v); got != key {
				t.Errorf("Resolve(%v, %q) = %q, normalised: got %q, want its key %q", base, ref, s, got, key)
			}
			if h, err := CanonicalHostPort(u.Host, u.Scheme); err != nil || h != u.Host {
				t.Errorf("Resolve(%v, %q) = %q: CanonicalHostPort(%q) = %q, %v; want it unchanged", base, ref, s, u.Host, h, err)
			}
			checkWire(t, u)
		}
	})
}

// escapeTokens splits s into what RFC 3986's equivalences compare: an
// escape of an unreserved character is the character, another escape is
// itself with its hex digits upper-cased, and a "%" not followed by two
// hex digits is a token of its own, no character.
func escapeTokens(s string) []string {
	var ts []string
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] != '%':
			ts = append(ts, s[i:i+1])
		case i+2 >= len(s) || !IsHex(s[i+1]) || !IsHex(s[i+2]):
			ts = append(ts, "lone %")
		default:
			if v := Unhex(s[i+1])<<4 | Unhex(s[i+2]); IsUnreserved(v) {
				ts = append(ts, string(rune(v)))
			} else {
				ts = append(ts, strings.ToUpper(s[i:i+3]))
			}
			i += 2
		}
	}
	return ts
}

// FuzzNormalizePercent checks that NormalizePercent is a faithful key:
// its result has the same tokens as its input (no escape made or lost,
// none merged with a "%" written alone) and is its own normal form.
func FuzzNormalizePercent(f *testing.F) {
	for _, s := range []string{
		"%0%61", "%%30%61", "%%30a", "%0a", "%7e%zz", "a%25zz", "%zz", "100%", "%%7e%7e", "%a%62%63",
		"%%%41%41", "%2%30%30", "%C3%a9|%7C", "%", "%%", "%%%", "%4%31%42",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n := NormalizePercent(s)
		if got, want := escapeTokens(n), escapeTokens(s); !slices.Equal(got, want) {
			t.Errorf("NormalizePercent(%q) = %q, tokens %q, want %q", s, n, got, want)
		}
		if again := NormalizePercent(n); again != n {
			t.Errorf("NormalizePercent(%q) = %q, normalised again %q, want it unchanged", s, n, again)
		}
	})
}

// benchBase and benchRefs are a page URL and a mix of its links.
var benchBase = "https://www.example.com/docs/guide/index.html?x=1"
var benchRefs = []string{
	"/", "/about", "page2.html", "../api/reference.html", "https://other.example.org/path/to/page?q=1&r=2",
	"/search?q=a b&lang=en", "#top", "?page=3", "//cdn.example.net/x/y.html", "/caf\u00e9/men\u00fc",
	"/a/b/c/d/e/f.html", "mailto:a@b.example", "/products/12345?color=red&size=m", "./sibling.html",
	"http://www.example.com:80/docs/", "/%7Euser/home",
}

// BenchmarkResolveRef measures Resolve's cost per href on a mix of
// references, against the base pre-parsed, as pageLinks.link resolves.
func BenchmarkResolveRef(b *testing.B) {
	base, err := Parse(benchBase, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, r := range benchRefs {
			if u, err := Parse(r, &base); err == nil {
				_ = u.URL()
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(benchRefs)), "ns/href")
}

// BenchmarkNetURLParse measures, for comparison, what links were resolved
// with before: url.URL.Parse against the page's URL.
func BenchmarkNetURLParse(b *testing.B) {
	base, err := url.Parse(benchBase)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, r := range benchRefs {
			if u, err := base.Parse(r); err == nil {
				_ = u.String()
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(benchRefs)), "ns/href")
}
