package extract

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/asyncrawl/crawl/internal/urlstd"
)

// TestSpeculate checks which strings of a script, a page's text and its
// other attributes scanLinksMax guesses are URLs with spec on, with what
// role and source.
func TestSpeculate(t *testing.T) {
	type found struct {
		url    string
		role   Role
		source string
	}
	const page = "https://example.test/dir/page.html"
	tests := []struct {
		name string
		ct   string
		body string
		want []found
	}{
		{"script path", "text/html", `<script>fetch("/api/x")</script>`,
			[]found{{"https://example.test/api/x", Navigation, "script speculative"}}},
		{"script absolute", "text/html", `<script>var u = 'http://x.test/y';</script>`,
			[]found{{"http://x.test/y", Navigation, "script speculative"}}},
		{"script image", "text/html", `<script>img.src = "foo.png"</script>`,
			[]found{{"https://example.test/dir/foo.png", Requisite, "script speculative"}}},
		{"script relative without dot", "text/html", `<script>var p = "a/b"</script>`, nil},
		{"script dot relative", "text/html", `<script>var p = "./a/b"</script>`,
			[]found{{"https://example.test/dir/a/b", Navigation, "script speculative"}, {"https://example.test/a/b", Navigation, "script speculative"}}},
		{"text dot relative, also from the root", "text/html", `<p>See ./docs/a.pdf or ../../x/y.html.</p>`,
			[]found{{"https://example.test/dir/docs/a.pdf", Reference, "text speculative"}, {"https://example.test/docs/a.pdf", Reference, "text speculative"},
				{"https://example.test/x/y.html", Navigation, "text speculative"}}},
		{"under the base's path", "text/html", `<base href="/app/v2"><p>Get /files/a.pdf</p><a href="/b">b</a>`,
			[]found{{"https://example.test/files/a.pdf", Reference, "text speculative"}, {"https://example.test/app/v2/files/a.pdf", Reference, "text speculative"}}},
		{"base of the root adds nothing", "text/html", `<base href="/"><p>Get /files/a.pdf</p>`,
			[]found{{"https://example.test/files/a.pdf", Reference, "text speculative"}}},
		{"script dot dot relative", "text/html", `<script>load('../up.json')</script>`,
			[]found{{"https://example.test/up.json", Reference, "script speculative"}}},
		{"script comments", "text/html", "<script>// see /commented.html\n/* and '/also.html' */ x = 1</script>", nil},
		{"script json escapes", "text/html", `<script type="application/json">{"u":"\/data\/feed.xml"}</script>`,
			[]found{{"https://example.test/data/feed.xml", Reference, "script speculative"}}},
		{"script template", "text/html", "<script>u = `/user/${id}`</script>", nil},
		{"script words", "text/html", `<script>say("hello world", 'ok', "/")</script>`, nil},
		{"script scheme-relative", "text/html", `<script>s = "//cdn.example.net/lib.js"</script>`,
			[]found{{"https://cdn.example.net/lib.js", Requisite, "script speculative"}}},
		{"text", "text/html", `<p>Docs at /docs/intro, mirror http://mirror.test/a.pdf.</p>`,
			[]found{
				{"https://example.test/docs/intro", Navigation, "text speculative"},
				{"http://mirror.test/a.pdf", Reference, "text speculative"},
			}},
		{"text comment slashes", "text/html", `<p>// comment</p>`, nil},
		{"text plain words", "text/html", `<p>a/b and c or 3/4</p>`, nil},
		{"attribute data", "text/html", `<div data-url="/api/x" class="a b" id="main"></div>`,
			[]found{{"https://example.test/api/x", Navigation, "attribute speculative"}}},
		{"attribute onclick", "text/html", `<button onclick="location.href='../other.php'">go</button>`,
			[]found{{"https://example.test/other.php", Navigation, "attribute speculative"}}},
		{"attribute meta content", "text/html", `<meta property="og:image" content="https://example.test/card.jpg">`,
			[]found{{"https://example.test/card.jpg", Requisite, "attribute speculative"}}},
		{"url attributes not guessed", "text/html", `<a href="/a.html">x</a><img src="/i.png"><meta http-equiv="refresh" content="0; url=/r.html">`, nil},
		{"external script", "application/javascript", `import("./chunk.js"); fetch('/api/y')`,
			[]found{
				{"https://example.test/dir/chunk.js", Requisite, "script speculative"},
				{"https://example.test/chunk.js", Requisite, "script speculative"},
				{"https://example.test/api/y", Navigation, "script speculative"},
			}},
		{"css not guessed", "text/css", `/* "/x.html" */ a { content: "/y.html" }`, nil},
	}
	pageURL, err := url.Parse(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			links, _, _, _ := scanLinksMax(nil, pageURL, nil, []byte(tt.body), tt.ct, 0, true)
			var got []found
			for _, l := range links {
				if !l.Speculative {
					if strings.Contains(l.Source, "speculative") {
						t.Errorf("%s: Source %q, but Speculative false", l.URL, l.Source)
					}
					continue
				}
				got = append(got, found{l.URL.String(), l.Role, l.Source})
			}
			if len(got) != len(tt.want) {
				t.Fatalf("scanLinksMax(%q, %s): got %v, want %v", tt.body, tt.ct, got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("scanLinksMax(%q, %s): link %d: got %v, want %v", tt.body, tt.ct, i, got[i], tt.want[i])
				}
			}
			// Without spec, nothing is guessed.
			links, _, _, _ = scanLinksMax(nil, pageURL, nil, []byte(tt.body), tt.ct, 0, false)
			for _, l := range links {
				if l.Speculative {
					t.Errorf("scanLinksMax(%q, %s) without spec: got speculative link %s", tt.body, tt.ct, l.URL)
				}
			}
		})
	}
}

// TestSpeculateAfterMarkup checks that guessed links come after those the
// markup names, so that a per-page cap keeps the latter, and that their
// number is bounded.
func TestSpeculateAfterMarkup(t *testing.T) {
	page, _ := url.Parse("https://example.test/")
	body := `<script>x = ["/s1", "/s2"]</script><a href="/a">a</a>`
	links, _, _, unread := scanLinksMax(nil, page, nil, []byte(body), "text/html", 1, true)
	if len(links) != 1 || links[0].URL.Path != "/a" || links[0].Speculative || unread != 2 {
		t.Errorf("max 1: got %v (unread %d), want /a alone, 2 unread", links, unread)
	}
	big := "<script>" + strings.Repeat(`"/p",`, 3*maxSpecCandidates) + "</script>"
	links, _, _, _ = scanLinksMax(nil, page, nil, []byte(big), "text/html", 0, true)
	if len(links) != maxSpecCandidates {
		t.Errorf("%d candidates: got %d links, want %d", 3*maxSpecCandidates, len(links), maxSpecCandidates)
	}
	long := `<script>x = "/` + strings.Repeat("a", maxSpecLen) + `"</script>`
	if links, _, _, _ = scanLinksMax(nil, page, nil, []byte(long), "text/html", 0, true); len(links) != 0 {
		t.Errorf("a string over %d bytes: got %d links, want 0", maxSpecLen, len(links))
	}
}

// TestSpecRole checks what specRole takes for a URL, and its role.
func TestSpecRole(t *testing.T) {
	tests := []struct {
		in   string
		ok   bool
		role Role
	}{
		{"/api/x", true, Navigation},
		{"a/b", false, 0},
		{"./a", true, Navigation},
		{"../a.css", true, Requisite},
		{"http://x.test/y", true, Navigation},
		{"HTTPS://x.test", true, Navigation},
		{"http://", false, 0},
		{"//", false, 0},
		{"// comment", false, 0},
		{"//nohost", false, 0},
		{"foo.png", true, Requisite},
		{"FOO.JPEG", true, Requisite},
		{"a/b.pdf?x=1#y", true, Reference},
		{".png", false, 0},
		{"node.exe", false, 0},
		{"/v1.2", true, Reference},
		{"/", false, 0},
		{"/*", false, 0},
		{"/a b", false, 0},
		{`/a\b`, false, 0},
		{"index.php", true, Navigation},
		{"/page.aspx?id=3", true, Navigation},
	}
	for _, tt := range tests {
		role, ok := specRole([]byte(tt.in))
		if ok != tt.ok || ok && role != tt.role {
			t.Errorf("specRole(%q): got %v, %v; want %v, %v", tt.in, role, ok, tt.role, tt.ok)
		}
	}
}

// FuzzSpeculate checks that guessing never panics and gives only absolute
// http(s) URLs marked speculative.
func FuzzSpeculate(f *testing.F) {
	f.Add(`<script>fetch("/api/x"); s = '\'; "//a.b/c.js"</script><p>./x ../y.png</p><i data-x="/z">`)
	f.Add("`/a/${b}` \"\\/x\\/y.html\" /* '/c' */ // '/d'\n")
	page, _ := url.Parse("https://example.test/a/")
	f.Fuzz(func(t *testing.T, body string) {
		for _, ct := range []string{"text/html", "text/javascript"} {
			links, _, _, _ := scanLinksMax(nil, page, nil, []byte(body), ct, 0, true)
			for _, l := range links {
				if l.URL == nil || !urlstd.IsHTTP(l.URL) || l.URL.Fragment != "" {
					t.Fatalf("%s: got link %v", ct, l.URL)
				}
			}
		}
	})
}

// BenchmarkScanLinksSpeculative compares scanLinksMax with and without
// guessing on a page of markup links, text, attributes and a script:
//
//	go test -run '^$' -bench ScanLinksSpeculative ./internal/extract/
func BenchmarkScanLinksSpeculative(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(`<html><head><script>var cfg = {api: "/api/v2/items", cdn: "https://cdn.example.test/app.js", n: 3, s: 'hello world'};</script></head><body>`)
	for i := range 50 {
		fmt.Fprintf(&sb, `<div class="item" data-id="%d" data-href="/items/%d"><a href="/p/%d">Item %d</a> <p>Some text about item %d, see docs/readme.txt or /help.</p></div>`, i, i, i, i, i)
	}
	sb.WriteString(`</body></html>`)
	body := []byte(sb.String())
	page, _ := url.Parse("https://example.test/")
	for _, spec := range []bool{false, true} {
		b.Run(fmt.Sprintf("spec=%t", spec), func(b *testing.B) {
			links, _, _, _ := scanLinksMax(nil, page, nil, body, "text/html", 0, spec)
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				scanLinksMax(links[:0], page, nil, body, "text/html", 0, spec)
			}
			b.ReportMetric(float64(len(links)), "links/page")
		})
	}
}
