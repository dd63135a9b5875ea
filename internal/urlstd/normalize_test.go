package urlstd

import (
	"net/url"
	"testing"
)

func TestNormalize(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"HTTP://Example.COM/Path", "http://example.com/Path"},
		{"http://example.com:80/", "http://example.com/"},
		{"https://example.com:443/", "https://example.com/"},
		{"http://example.com:8080/", "http://example.com:8080/"},
		{"https://example.com:80/", "https://example.com:80/"},
		{"http://example.com:443/", "http://example.com:443/"},
		{"http://example.com:/", "http://example.com/"},
		{"http://example.com", "http://example.com/"},
		{"http://example.com?q=1", "http://example.com/?q=1"},
		{"http://example.com/#top", "http://example.com/"},
		{"http://example.com/a#", "http://example.com/a"},
		{"http://example.com/a?b=1&c=2#frag", "http://example.com/a?b=1&c=2"},
		{"http://example.com/a?", "http://example.com/a?"},
		{"http://[::1]:80/", "http://[::1]/"},
		{"http://[::1]/", "http://[::1]/"},
		{"http://[::1]:8080/", "http://[::1]:8080/"},
		{"http://[::1]", "http://[::1]/"},
		{"https://[2001:DB8::1]:443", "https://[2001:db8::1]/"},
		// Userinfo is dropped: "http://u@h/" is h (issue 11).
		{"http://user:Pass@Example.com:80/x", "http://example.com/x"},
		{"http://user@example.com/", "http://example.com/"},
		{"http://@example.com/", "http://example.com/"},
		// The host in its canonical form (issue 11): IDNA to ASCII,
		// lower case, one trailing dot removed, the port without
		// leading zeros.
		{"http://example.com./", "http://example.com/"},
		{"http://EXAMPLE.COM.:80/", "http://example.com/"},
		{"http://b\u00fccher.example/", "http://xn--bcher-kva.example/"},
		{"http://B\u00dcCHER.example:8080/p", "http://xn--bcher-kva.example:8080/p"},
		{"http://XN--BCHER-KVA.example/", "http://xn--bcher-kva.example/"},
		{"http://b%C3%BCcher.example/", "http://xn--bcher-kva.example/"},
		{"http://b\u00fccher\u3002example\u3002/", "http://xn--bcher-kva.example/"}, // ideographic full stops
		{"http://fa\u00df.de/", "http://xn--fa-hia.de/"},                            // non-transitional: "ß" kept, not "ss"
		{"http://my_host.example.com/", "http://my_host.example.com/"},
		{"http://r3---sn-abc.example.com/", "http://r3---sn-abc.example.com/"},
		{"http://127.0.0.1./", "http://127.0.0.1/"},
		{"http://example.com:0080/", "http://example.com/"},
		{"http://example.com:08080/", "http://example.com:8080/"},
		{"http://[::1]:0443/", "http://[::1]:443/"},
		{"http://example.com/%7Euser/A%2Fb", "http://example.com/~user/A%2Fb"}, // unreserved decoded, an encoded slash kept
		{"http://example.com/%7euser/a%2fb", "http://example.com/~user/a%2Fb"},
		{"http://example.com/%41%62c", "http://example.com/Abc"},
		{"http://example.com/a%20b", "http://example.com/a%20b"},
		{"http://example.com/caf%c3%a9", "http://example.com/caf%C3%A9"},
		{"http://example.com/caf\xc3\xa9", "http://example.com/caf%C3%A9"},
		{"http://example.com/a%2Fb/caf\xc3\xa9", "http://example.com/a%2Fb/caf%C3%A9"}, // the encoded slash kept
		{"http://example.com/a%2fb c", "http://example.com/a%2Fb%20c"},
		{"http://example.com/?q=%7e%2f&r=%4a", "http://example.com/?q=~%2F&r=J"},
		{"http://example.com/?q=%7e%2f%zz", "http://example.com/?q=~%2F%zz"}, // a malformed escape stays, the others are normalised
		{"http://example.com/?q=%0%61", "http://example.com/?q=%0%61"},       // but none makes an escape of it
		{"http://example.com/?q=100%", "http://example.com/?q=100%"},
		{"http://127.0.0.1:80/", "http://127.0.0.1/"},
		{"http://:80/x", "http://:80/x"}, // no host name: nothing to normalise
		// Hosts that cannot be made canonical are only lower-cased,
		// port and all; scope.contains refuses them.
		{"http://Example.com..:80/", "http://example.com..:80/"},
		{"http://a..b/", "http://a..b/"},
		{"http://.example.com/", "http://.example.com/"},
		{"http://XN--ZZZZ.example/", "http://xn--zzzz.example/"},
		{"http://example.com:65536/", "http://example.com:65536/"},
		{"http://U@a..b/", "http://a..b/"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			u, err := url.Parse(tt.in)
			if err != nil {
				t.Fatalf("url.Parse(%q): %v", tt.in, err)
			}
			Normalize(u)
			if got := String(u); got != tt.want {
				t.Errorf("Normalize(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestNormalizeSame checks pairs that must dedupe to one key.
func TestNormalizeSame(t *testing.T) {
	pairs := [][2]string{
		{"http://h", "http://h/"},
		{"HTTP://H:80", "http://h/"},
		{"https://h:443/#x", "https://h/"},
		{"http://h/?q", "http://H/?q#f"},
		{"http://h/%7Euser", "http://h/~user"},
		{"http://h/%7euser/%c3%a9", "http://h/~user/%C3%A9"},
		{"http://h/caf%C3%A9", "http://h/café"},
		{"http://h/?a=%4A", "http://h/?a=J"},
		{"http://h/?x=%7E&y=%zz", "http://h/?x=~&y=%zz"}, // a malformed escape beside
		{"http://h/?%%30%61", "http://h/?%0%61"},
		{"http://h/a/./b/../c", "http://h/a/c"},
		{"http://h/a/%2e%2E/c", "http://h/c"},
		{"http://h/..", "http://h/"},
		{"http://u:p@h/p", "http://h/p"},
		{"http://u1@h/p", "http://u2:pw@h/p"},
		{"http://h./p", "http://h/p"},
		{"http://b\u00fccher.example/p", "http://xn--bcher-kva.example/p"},
		{"http://B\u00dcCHER.example/p", "http://xn--bcher-kva.example/p"},
		{"http://www.b\u00fccher.example./p", "http://www.xn--bcher-kva.example/p"},
	}
	for _, p := range pairs {
		a, b := scopeNorm(t, p[0]), scopeNorm(t, p[1])
		if a != b {
			t.Errorf("Normalize(%q) = %q, Normalize(%q) = %q, want equal", p[0], a, p[1], b)
		}
	}
}

// scopeNorm parses and normalises s and returns its string form.
func scopeNorm(t *testing.T, s string) string {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatalf("url.Parse(%q): %v", s, err)
	}
	Normalize(u)
	return String(u)
}

// FuzzNormalize checks that Normalize drops the userinfo, leaves each host
// canonical or refused by CanonicalHostPort, and is idempotent: normalising a
// normalised URL again, in place or through a round trip (printed, parsed
// and normalised again), prints the same. That is what the seen set relies
// on: a URL queued under its normalised key and found again, as a link or
// a redirect target, gets the same key.
func FuzzNormalize(f *testing.F) {
	for _, s := range []string{
		"http://example.com", "HTTP://Example.COM:80/a?b#c", "https://h:443", "https://h:80",
		"http://[::1]:80", "http://[fe80::1%25en0]:80/", "http://h:", "http://:80", "//h:80/x",
		"http:opaque", "http:///path", "http://u:p@h:80/", "mailto:x@y", "/rel?x#y", "",
		"http://h/a%2Fb?c=%20#f", "http://H%41/", "http://a:80:80/", "http://[::1]:/",
		"//::", "//h::/x", "//h:80:/", "//:A:", "//://",
		"%2a", "?%0%61", "//[::%25\xb9]", "http://h/a/%2e%2E/c", "http://h/%7euser?q=%4a",
		"/%2F\xda", "/%2F@ @", "http://h/a%2Fb/caf\xc3\xa9", "http://h/a%2F\x01",
		"http://u:p@B\u00dcCHER.example.:080/", "http://xn--bcher-kva.example./", "http://XN--ZZZ.example/",
		"http://h..:80/", "http://h.:/", "//h.::/", "http://b%C3%BCcher\u3002example/", "http://[::1]:00/",
		"http://fa\u00df.de/", "http://\u0627\u0644.example/", "http://a\u200db.example/", "http://\xff.example/",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, err := url.Parse(s)
		if err != nil {
			return
		}
		if v, err := url.Parse(u.String()); err != nil || v.Host != u.Host || v.User.String() != u.User.String() || v.Path != u.Path {
			// net/url itself cannot round-trip this URL (an invalid
			// byte in an IPv6 zone, say, or a path "//x" without a
			// host, printed as an authority); Normalize is not to
			// blame.
			return
		}
		_, stdErr := Parse(RefString(u), nil)
		Normalize(u)
		once := String(u)
		if u.User != nil {
			t.Errorf("Normalize(%q) = %q, which keeps the userinfo", s, once)
		}
		if stdErr != nil {
			// The URL Standard refuses it ("http://A.0.", a host
			// ending in a number that is no IPv4 address): scope
			// refuses it too, and Normalize only tidies it.
			return
		}
		// A host Normalize made canonical is its own canonical form;
		// one it could not stays refused. Only http(s) URLs are
		// crawled: another (or none, "//h") keeps its host as written,
		// lower-cased, and scope refuses it.
		crawlable := u.Scheme == "http" || u.Scheme == "https"
		if h, err := CanonicalHostPort(u.Host, u.Scheme); crawlable && err == nil && h != u.Host {
			t.Errorf("Normalize(%q) = %q: CanonicalHostPort(%q) = %q, want it unchanged", s, once, u.Host, h)
		}
		// Normalising the same URL value again changes nothing.
		w := *u
		Normalize(&w)
		if again := String(&w); again != once {
			t.Errorf("Normalize(%q) = %q, but normalising the result in place gives %q", s, once, again)
		}
		v, err := url.Parse(once)
		if err != nil {
			// A key may hold a "%" not followed by two hex digits
			// ("http:0/%0" is "http://0.0.0.0/%0"), which url.Parse
			// refuses and the URL Standard's parser reads.
			if v, err = Resolve(nil, once); err != nil {
				t.Fatalf("Normalize(%q) = %q, which neither url.Parse nor Resolve parses: %v", s, once, err)
			}
		}
		if !IsHTTP(u) {
			// Not a URL the crawl would fetch ("http:/0%2F " has no
			// host: the Standard's parser refused it, and scope
			// does): its string need not normalise to itself.
			return
		}
		Normalize(v)
		if twice := String(v); twice != once {
			t.Errorf("Normalize(%q) = %q, but normalising that again gives %q", s, once, twice)
		}
	})
}
