package crawl

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/asyncrawl/crawl/internal/urlstd"
)

func TestParseRoot(t *testing.T) {
	tests := []struct {
		in   string
		want string // "" when an error wrapping ErrBadRoot is expected
	}{
		{"example.com", "http://example.com/"},
		{"Example.COM", "http://example.com/"},
		{"example.com/docs", "http://example.com/docs"},
		{"example.com:8080/docs?x=1", "http://example.com:8080/docs?x=1"},
		{"localhost:8080", "http://localhost:8080/"},
		{"  https://example.com:443/a#frag  ", "https://example.com/a"},
		{"HTTP://example.com", "http://example.com/"},
		{"http://[::1]:80", "http://[::1]/"},
		{"ftp://example.com/", ""},
		{"file:///etc/passwd", ""},
		{"", ""},
		{"   ", ""},
		{"http://", ""},
		{"https:///path", "https://path/"}, // the URL Standard skips the slashes
		{"http://:80/", ""},
		{"http://[::1", ""},
		{"http://exa mple.com/", ""},
		{"http://u:pw@example.com/a", "http://example.com/a"},
		{"example.com./", "http://example.com/"},
		{"http://B\u00dccher.example/", "http://xn--bcher-kva.example/"},
		{"http://example.com../", ""},
		{"http://a..example.com/", ""},
		{"http://xn--zzzz.example/", ""},
		{"http://xn--abc.example/", ""}, // punycode of ASCII only
		{"http://exa!mple.com/", ""},
		{"http://[::1]x/", ""},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			u, err := parseRoot(tt.in)
			if tt.want == "" {
				if !errors.Is(err, ErrBadRoot) {
					t.Errorf("parseRoot(%q) = %v, %v; want an error wrapping ErrBadRoot", tt.in, u, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseRoot(%q): %v", tt.in, err)
			}
			if got := u.String(); got != tt.want {
				t.Errorf("parseRoot(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestParseRootNamesHost checks that the error for a root whose host fails
// IDNA names the host.
func TestParseRootNamesHost(t *testing.T) {
	for _, root := range []string{"http://xn--zzzz.example/", "https://a..b:8443/x"} {
		_, err := parseRoot(root)
		u, _ := url.Parse(root)
		if !errors.Is(err, ErrBadRoot) || !strings.Contains(fmt.Sprint(err), strconv.Quote(u.Host)) {
			t.Errorf("parseRoot(%q) = %v, want an error wrapping ErrBadRoot that names %q", root, err, u.Host)
		}
	}
}

// TestParseRootKeepsCause checks that a root url.Parse rejects reports both
// ErrBadRoot and the parser's error.
func TestParseRootKeepsCause(t *testing.T) {
	_, err := parseRoot("http://[::1")
	var ue *url.Error
	if !errors.As(err, &ue) {
		t.Errorf("parseRoot(%q) = %v, want an error wrapping *url.Error", "http://[::1", err)
	}
}

func TestScopeContains(t *testing.T) {
	tests := []struct {
		name    string
		roots   []string
		lenient bool
		in      []string
		out     []string
	}{
		{
			name:  "strict adds www",
			roots: []string{"http://example.com/"},
			in: []string{"http://example.com/x", "http:example.com", "https://example.com/", "http://www.example.com/",
				"http://EXAMPLE.com/", "http://example.com:8080/", "https://WWW.Example.com:8443/y"},
			out: []string{"http://sub.example.com/", "http://www.www.example.com/", "http://example.org/",
				"http://notexample.com/", "http://example.com.evil.org/", "ftp://example.com/",
				"mailto:a@example.com"},
		},
		{
			name:  "strict with a trailing dot",
			roots: []string{"http://example.com./"},
			in:    []string{"http://example.com/", "http://example.com./", "http://www.example.com./", "http://WWW.EXAMPLE.COM/"},
			out:   []string{"http://example.com../", "http://a.example.com/", "http://com./"},
		},
		{
			name:  "strict IDN",
			roots: []string{"http://b\u00fccher.example/"},
			in: []string{"http://xn--bcher-kva.example/", "http://B\u00dcCHER.example/", "http://www.b\u00fccher.example/",
				"http://www.xn--bcher-kva.example./"},
			out: []string{"http://bucher.example/", "http://xn--bcher-kva.example../", "http://b\u00fccher..example/"},
		},
		{
			name:  "strict refuses hosts it cannot make canonical",
			roots: []string{"http://example.com/"},
			out:   []string{"http://example.com:99999/", "http://www..example.com/", "http://exa!mple.com/"},
		},
		{
			name:  "strict removes www",
			roots: []string{"http://www.example.com/"},
			in:    []string{"http://www.example.com/", "http://example.com/", "https://example.com:9/"},
			out:   []string{"http://www2.example.com/", "http://a.example.com/", "http://www.www.example.com/"},
		},
		{
			name:  "strict with two roots",
			roots: []string{"http://a.example/", "https://b.example:8443/"},
			in:    []string{"http://a.example/", "http://www.a.example/", "http://b.example/", "https://www.b.example/"},
			out:   []string{"http://c.example/", "http://example/"},
		},
		{
			name:  "strict IP root gets no www",
			roots: []string{"http://127.0.0.1:8080/"},
			in:    []string{"http://127.0.0.1/", "http://127.0.0.1:9999/x"},
			out:   []string{"http://www.127.0.0.1/", "http://127.0.0.2/", "http://localhost/"},
		},
		{
			name:  "strict IPv6 root",
			roots: []string{"http://[::1]:8080/"},
			in:    []string{"http://[::1]/", "https://[::1]:1/"},
			out:   []string{"http://[::2]/", "http://127.0.0.1/"},
		},
		{
			name:    "lenient uses the registrable domain",
			roots:   []string{"http://example.co.uk/"},
			lenient: true,
			in: []string{"http://example.co.uk/", "http://a.example.co.uk/", "https://b.a.example.co.uk:444/",
				"http://www.example.co.uk/", "http://A.Example.CO.UK/"},
			out: []string{"http://other.co.uk/", "http://co.uk/", "http://example.com/", "http://example.co.uk.evil.org/",
				"ftp://a.example.co.uk/"},
		},
		{
			name:    "lenient from a subdomain root",
			roots:   []string{"https://a.example.co.uk/"},
			lenient: true,
			in:      []string{"http://example.co.uk/", "http://b.example.co.uk/"},
			out:     []string{"http://a.other.co.uk/"},
		},
		{
			name:    "lenient with a trailing dot",
			roots:   []string{"http://example.com./"},
			lenient: true,
			in:      []string{"http://example.com/", "http://a.example.com/", "http://a.example.com./", "http://www.example.com/"},
			out:     []string{"http://example.org/", "http://a..example.com/", "http://example.com../"},
		},
		{
			name:    "lenient IDN",
			roots:   []string{"http://www.b\u00fccher.co.uk/"},
			lenient: true,
			in:      []string{"http://a.xn--bcher-kva.co.uk/", "http://b.B\u00dcCHER.co.uk./", "http://xn--bcher-kva.co.uk/"},
			out:     []string{"http://bucher.co.uk/", "http://a.xn--zzzz.b\u00fccher.co.uk/", "http://co.uk/"},
		},
		{
			name:    "lenient private suffix",
			roots:   []string{"https://alice.github.io/"},
			lenient: true,
			in:      []string{"https://alice.github.io/", "https://www.alice.github.io/"},
			out:     []string{"https://bob.github.io/", "https://github.io/"},
		},
		{
			name:    "lenient IP root is that address only",
			roots:   []string{"http://127.0.0.1:8080/"},
			lenient: true,
			in:      []string{"http://127.0.0.1/", "http://127.0.0.1:1234/"},
			out:     []string{"http://127.0.0.2/", "http://0.0.1/", "http://localhost/"},
		},
		{
			name:    "lenient localhost",
			roots:   []string{"http://localhost:8080/"},
			lenient: true,
			in:      []string{"http://localhost/", "https://LOCALHOST:1/"},
			out:     []string{"http://127.0.0.1/", "http://example.com/"},
		},
		{
			name:  "strict localhost",
			roots: []string{"http://localhost:8080/"},
			in:    []string{"http://localhost/", "http://www.localhost/"},
			out:   []string{"http://127.0.0.1/", "http://a.localhost/"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var roots []*url.URL
			for _, r := range tt.roots {
				u, err := parseRoot(r)
				if err != nil {
					t.Fatalf("parseRoot(%q): %v", r, err)
				}
				roots = append(roots, u)
			}
			s := newScope(roots, &config{lenient: tt.lenient})
			check := func(raw string, want bool) {
				u, err := url.Parse(raw)
				if err != nil {
					t.Fatalf("url.Parse(%q): %v", raw, err)
				}
				urlstd.Normalize(u)
				if got := s.contains(u); got != want {
					t.Errorf("roots %q lenient=%v: contains(%q) = %v, want %v", tt.roots, tt.lenient, raw, got, want)
				}
			}
			for _, raw := range tt.in {
				check(raw, true)
			}
			for _, raw := range tt.out {
				check(raw, false)
			}
		})
	}
}

func TestSegmentRepeats(t *testing.T) {
	many := strings.Repeat("/x", 40) // past the 32 segments kept on the stack
	distinct := ""
	for i := range 100 {
		distinct += "/s" + strconv.Itoa(i)
	}
	tests := []struct {
		path string
		max  int
		want bool
	}{
		{"/", 2, false},
		{"/a", 2, false},
		{"/a/a", 2, false},
		{"/a/a/", 2, false},
		{"/a/a/a", 2, true},
		{"/a/a/a/", 2, true},
		{"/a/b/a/c/a", 2, true}, // anywhere in the path
		{"/a/b/c/a/d/e/f/a", 2, true},
		{"/a/b/c/d/e/f/g", 2, false},
		{"/a//a//b", 2, false}, // empty segments do not count
		{"/a/A/a", 2, false},   // case counts
		{"/a%2Fa/a/a", 2, false},
		{"/a/a/a", 3, false},
		{"/a/a/a/a", 3, true},
		{"/a/b", 1, false},
		{"/a/b/a", 1, true},
		{"/2024/01/01/", 2, false},
		{many, 2, true},
		{many, 40, false},
		{many, 39, true},
		{distinct, 1, false},
		{distinct + "/s42", 1, true},
	}
	for _, tt := range tests {
		if got := segmentRepeats(tt.path, tt.max); got != tt.want {
			t.Errorf("segmentRepeats(%q, %d) = %v, want %v", tt.path, tt.max, got, tt.want)
		}
	}
	// It runs for every link of every page.
	path := "/a/b/c/d/e/f/g/h/i/j/k/l/a/b/c/d/e/f/g/h/i/j/k/l"
	if n := testing.AllocsPerRun(100, func() { segmentRepeats(path, 2) }); n != 0 {
		t.Errorf("segmentRepeats(%q, 2): got %v allocations, want 0", path, n)
	}
}

func TestScopeTrap(t *testing.T) {
	long := "http://example.com/" + strings.Repeat("x", 100)
	tests := []struct {
		url       string
		maxLength int
		maxRepeat int
		want      refusal
	}{
		{long, 0, 0, refuseNone},
		{long, len(long), 2, refuseNone},
		{long, len(long) - 1, 2, refuseURLLength},
		{"http://example.com/a/a/a", 0, 2, refuseSegmentRepeats},
		{"http://example.com/a/a/a", 0, 0, refuseNone},
		{"http://example.com/a/a?q=/a/a/a", 0, 2, refuseNone}, // the query does not count
		{"http://example.com/a/a/a", 10, 2, refuseURLLength},  // length first
		// A path with "|" is in Opaque, after the host, which is no
		// segment.
		{"http://example.com/example.com/example.com/a|b", 0, 2, refuseNone},
		{"http://example.com/a|/a|/a|", 0, 2, refuseSegmentRepeats},
	}
	for _, tt := range tests {
		u, err := url.Parse(tt.url)
		if err != nil {
			t.Fatal(err)
		}
		urlstd.Normalize(u)
		s := &scope{maxURLLength: tt.maxLength, maxSegmentRepeats: tt.maxRepeat}
		if got := s.trap(urlstd.String(u), u); got != tt.want {
			t.Errorf("trap(%s) with length %d, repeats %d: got %s, want %s",
				tt.url, tt.maxLength, tt.maxRepeat, refusalNames[got], refusalNames[tt.want])
		}
	}
}

// BenchmarkScopeContains weighs the scope check of a link on a root's
// host, which most links of a crawl are.
func BenchmarkScopeContains(b *testing.B) {
	root, err := url.Parse("http://127.0.0.1:8700/p/0.html")
	if err != nil {
		b.Fatal(err)
	}
	s := newScope([]*url.URL{root}, &config{})
	u := root.JoinPath("../17.html")
	for b.Loop() {
		if !s.contains(u) {
			b.Fatalf("contains(%s) with root %s: got false, want true", u, root)
		}
	}
}

// TestNormalizeMalformedHost checks references that url.Parse accepts only
// because they have no scheme ("//h::" has two colons, which it rejects in
// an http URL), resolved against an http page as the crawler resolves links.
// urlstd.Normalize must not trim such a host into a valid one, which would fetch a
// page a second time under another key; left alone, it is out of scope.
func TestNormalizeMalformedHost(t *testing.T) {
	base, err := url.Parse("http://example.com/dir/")
	if err != nil {
		t.Fatal(err)
	}
	root, err := parseRoot("example.com")
	if err != nil {
		t.Fatal(err)
	}
	sc := newScope([]*url.URL{root}, &config{})
	tests := []struct{ ref, want string }{
		{"//Example.COM::/x", "http://example.com::/x"},
		{"//example.com:80:/x", "http://example.com:80:/x"},
		{"//example.com:8080:", "http://example.com:8080:/"},
	}
	for _, tt := range tests {
		ref, err := url.Parse(tt.ref)
		if err != nil {
			t.Fatalf("url.Parse(%q): %v", tt.ref, err)
		}
		u := base.ResolveReference(ref)
		urlstd.Normalize(u)
		if got := u.String(); got != tt.want {
			t.Errorf("urlstd.Normalize(resolve %q against %s) = %q, want %q", tt.ref, base, got, tt.want)
		}
		if sc.contains(u) {
			t.Errorf("scope of %s contains %q, want not", root, u)
		}
	}
}
