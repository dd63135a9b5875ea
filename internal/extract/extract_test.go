package extract

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"testing"
)

func TestForEachSrcset(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"a.png", []string{"a.png"}},
		{"a.png 1x, b.png 2x", []string{"a.png", "b.png"}},
		{"a.png 100w,b.png 200w", []string{"a.png", "b.png"}},
		{"  a.png,b.png,c.png  ", []string{"a.png,b.png,c.png"}}, // one URL, as the standard reads it
		{"a.png, b.png,c.png", []string{"a.png", "b.png,c.png"}},
		{"a,b.png 1x", []string{"a,b.png"}},            // a comma inside a URL stays
		{"a.png,, ,b.png", []string{"a.png", "b.png"}}, // trailing commas end a URL
		{"data:image/png;base64,AAAA 1x, b.png 2x", []string{"data:image/png;base64,AAAA", "b.png"}},
		{"a.png (min-width: 1px, x) 1x, b.png", []string{"a.png", "b.png"}}, // a comma in parentheses does not end descriptors
		{"a.png 1x 2x junk, b.png", []string{"a.png", "b.png"}},             // invalid descriptors: the URL is still named
		{"\ta.png\n1x,\fb.png\r2x", []string{"a.png", "b.png"}},
		{", , ,", nil},
		{"", nil},
		{"a.png (unclosed, b.png", []string{"a.png"}},
	}
	for _, tt := range tests {
		var got []string
		forEachSrcset([]byte(tt.in), func(ref []byte) { got = append(got, string(ref)) })
		if strings.Join(got, "|") != strings.Join(tt.want, "|") {
			t.Errorf("srcset %q: got %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestParseRefresh(t *testing.T) {
	tests := []struct {
		in   string
		want string // "" when no URL
	}{
		{"5; url=/x", "/x"},
		{"0;URL='x'", "x"},
		{"3 ; url = x", "x"},
		{"0; URL=\"/q\" trailing", "/q"},
		{"0;url='/unterminated", "/unterminated"},
		{"0, /comma", "/comma"},
		{"0 /space", "/space"},
		{"1.5; url=/frac", "/frac"},
		{".5; url=/dot", "/dot"},
		{"0; uri=/x", "uri=/x"}, // not "url=": all of it is the URL
		{"0; url /nofeq", "url /nofeq"},
		{"0;/x", "/x"},
		{"  7  ;  url=/ws  ", "/ws"},
		{"10", ""},
		{"10;", ""},
		{"", ""},
		{"url=/x", ""}, // no time
		{"5x; url=/x", ""},
		{"-1; url=/x", ""},
	}
	for _, tt := range tests {
		got, ok := parseRefresh([]byte(tt.in))
		if string(got) != tt.want || ok != (tt.want != "") {
			t.Errorf("parseRefresh(%q): got %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.want != "")
		}
	}
}

func TestParseLinkHeader(t *testing.T) {
	tests := []struct {
		in   string
		want []string // "ref rel"
	}{
		{`</a>; rel=next`, []string{"/a next"}},
		{`</a>; rel="next"`, []string{"/a next"}},
		{`</a>; rel="next prev", </b>;rel=stylesheet`, []string{"/a next prev", "/b stylesheet"}},
		{`<https://x.example/?a=1,2>; rel="alternate"; type="text/html"`, []string{"https://x.example/?a=1,2 alternate"}},
		{`</a>; title="a, b; c"; rel=next, </b>`, []string{"/a next", "/b "}},
		{`</a>; rel=next; rel=prev`, []string{"/a next"}}, // only the first rel counts
		{`</a>; REL = "preload" ; as=font`, []string{"/a preload"}},
		{`</a>; title="q\"uote"; rel=x`, []string{"/a x"}},
		{`</a>; anchor="#x"; rel=next`, []string{"/a next"}},
		{`garbage, </b>; rel=next`, []string{"/b next"}},
		{`"quoted, junk", </b>`, []string{"/b "}},
		{`</unterminated`, nil},
		{``, nil},
		{` , ,`, nil},
	}
	for _, tt := range tests {
		var got []string
		parseLinkHeader(tt.in, func(ref, rel string) { got = append(got, ref+" "+rel) })
		if strings.Join(got, "|") != strings.Join(tt.want, "|") {
			t.Errorf("Link %q: got %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestCSSScanner(t *testing.T) {
	tests := []struct {
		in   string
		want []string // "ref source"
	}{
		{`a{background:url(x.png)}`, []string{"x.png u"}},
		{`a{background:URL( "x y.png" )}`, []string{"x y.png u"}},
		{`a{background:url('x.png')}`, []string{"x.png u"}},
		{`@import "a.css";`, []string{"a.css i"}},
		{`@IMPORT url(a.css) screen;`, []string{"a.css i"}},
		{`@import 'a.css' layer(x); b{c:url(d)}`, []string{"a.css i", "d u"}},
		{`/* url(no) @import "no"; */ x{}`, nil},
		{`a{content:"url(no)"} b{c:url(yes)}`, []string{"yes u"}},
		{`a{b:myurl(no)} c{d:url(yes)}`, []string{"yes u"}},
		{`a{b:url(\28 x\29 .png)}`, []string{"(x).png u"}},
		{`a{b:url("a\"b")}`, []string{`a"b u`}},
		{`@font-face{src:url(f.woff2) format("woff2"),url(f.woff)}`, []string{"f.woff2 u", "f.woff u"}},
		{`a{b:url(`, []string{" u"}},
		{`a{b:url("unterminated`, []string{"unterminated u"}},
		{`/* unterminated url(x)`, nil},
		{`@import`, nil},
	}
	for _, tt := range tests {
		var s linkScanner
		s.anchor = -1
		s.css([]byte(tt.in), "u", "i", 0, resolvePage)
		var got []string
		for _, p := range s.pend {
			got = append(got, p.ref+" "+p.source)
		}
		// add drops empty references.
		want := tt.want
		if len(want) == 1 && want[0] == " u" {
			want = nil
		}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("css %q: got %q, want %q", tt.in, got, want)
		}
	}
}

func TestConditionalComment(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"[if IE]><a href=x><![endif]", "<a href=x>", true},
		{"[if lt IE 9]>\n<script src=s></script>\n<![endif]", "\n<script src=s></script>\n", true},
		{"[IF IE]><b><![ENDIF]", "<b>", true},
		{"[if !IE]><!", "<!", true},
		{" plain comment ", "", false},
		{"[if IE]", "", false},
		{"[endif]", "", false},
	}
	for _, tt := range tests {
		got, ok := conditionalComment([]byte(tt.in))
		if string(got) != tt.want || ok != tt.ok {
			t.Errorf("conditionalComment(%q): got %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestDoctypeSystemID(t *testing.T) {
	tests := []struct{ in, want string }{
		{`html`, ""},
		{`html PUBLIC "-//W3C//DTD HTML 4.01//EN" "http://www.w3.org/TR/html4/strict.dtd"`, "http://www.w3.org/TR/html4/strict.dtd"},
		{`html public '-//x' 'http://d.example/x.dtd'`, "http://d.example/x.dtd"},
		{`HTML PUBLIC "-//W3C//DTD HTML 4.01//EN"`, ""},
		{`svg SYSTEM "http://d.example/svg.dtd"`, "http://d.example/svg.dtd"},
		{`html SYSTEM "unterminated`, ""},
	}
	for _, tt := range tests {
		if got := string(doctypeSystemID([]byte(tt.in))); got != tt.want {
			t.Errorf("doctypeSystemID(%q): got %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestScanLinksMetaAndBase checks what scanLinks gives the crawler besides
// links: robots directives, read in the same pass, and the base URL.
func TestScanLinksMetaAndBase(t *testing.T) {
	page, _ := url.Parse("https://s.example/d/p")
	tests := []struct {
		body     string
		meta     Meta
		base     string
		numLinks int
	}{
		{`<a href=x>`, Meta{}, "https://s.example/d/p", 1},
		{`<meta name=ROBOTS content="noindex, NoFollow"><a href=x rel=nofollow>`, Meta{true, true}, "https://s.example/d/p", 1},
		{`<meta name=robots content=none><base href="/b/"><a href=x>`, Meta{true, true}, "https://s.example/b/", 2},
		{`<base href="javascript:x"><a href=x>`, Meta{}, "https://s.example/d/p", 1},
		{`<iframe srcdoc="<meta name=robots content=noindex><base href=/ignored/>"></iframe>`, Meta{}, "https://s.example/d/p", 1},
		{`<!--[if IE]><meta name=robots content=nofollow><![endif]-->`, Meta{}, "https://s.example/d/p", 0},
	}
	for _, tt := range tests {
		links, meta, base := scanLinks(nil, page, http.Header{}, []byte(tt.body), "text/html")
		if meta != tt.meta || base.String() != tt.base || len(links) != tt.numLinks {
			t.Errorf("scanLinks(%q): got meta %+v, base %s, %d links; want %+v, %s, %d",
				tt.body, meta, base, len(links), tt.meta, tt.base, tt.numLinks)
		}
	}
}

// TestDataURINesting checks that data: documents nest at most maxNest deep
// and that large ones are not read.
func TestDataURINesting(t *testing.T) {
	page, _ := url.Parse("https://s.example/")
	b64 := func(s string) string { return "data:text/html;base64," + base64.StdEncoding.EncodeToString([]byte(s)) }
	l3 := `<a href='https://x.example/3'>`
	l2 := `<a href='https://x.example/2'><iframe src='` + b64(l3) + `'></iframe>`
	l1 := `<a href='https://x.example/1'><iframe src='` + b64(l2) + `'></iframe>`
	body := `<iframe src="` + b64(l1) + `"></iframe>`
	links, _, _ := scanLinks(nil, page, nil, []byte(body), "text/html")
	var got []string
	for _, l := range links {
		got = append(got, l.URL.String())
	}
	if want := "https://x.example/1 https://x.example/2"; strings.Join(got, " ") != want {
		t.Errorf("nested data: URIs: got %q, want %s (depth 3 is not read)", got, want)
	}
	big := `<iframe src="data:text/html,<a href='https://x.example/big'>` + strings.Repeat("x", maxDataURI) + `"></iframe>`
	if links, _, _ := scanLinks(nil, page, nil, []byte(big), "text/html"); len(links) != 0 {
		t.Errorf("data: URI over %d bytes: got %d links, want 0", maxDataURI, len(links))
	}
}

func TestNormRel(t *testing.T) {
	for in, want := range map[string]string{
		"next": "next", "Next": "next", " a  b ": "a b", "a\tb": "a b", "": "", "nofollow noopener": "nofollow noopener",
	} {
		if got := normRel([]byte(in)); got != want {
			t.Errorf("normRel(%q): got %q, want %q", in, got, want)
		}
	}
}

// scanLinks is scanLinksMax resolving every link, without guessing.
func scanLinks(dst []Link, page *url.URL, header http.Header, body []byte, contentType string) ([]Link, Meta, *url.URL) {
	links, meta, base, _ := scanLinksMax(dst, page, header, body, contentType, 0, false)
	return links, meta, base
}

// scanLinksMax is Scan of Links.
func scanLinksMax(dst []Link, page *url.URL, header http.Header, body []byte, contentType string, max int, spec bool) ([]Link, Meta, *url.URL, int) {
	return Scan(dst, func(l Link) Link { return l }, page, header, body, contentType, max, spec, nil)
}

// A page of many more links than Scan's max keeps max of them: the rest are
// counted as unread, not held, so its memory does not grow with them.
func TestScanMaxBoundsMemory(t *testing.T) {
	var b strings.Builder
	const n = 100000
	for i := range n {
		fmt.Fprintf(&b, `<a href="http://other%d.example/p/%d">x</a>`, i, i)
	}
	body := []byte(b.String())
	page, _ := url.Parse("http://h.example/")
	id := func(l Link) Link { return l }
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	links, _, _, unread := Scan(nil, id, page, nil, body, "text/html", 40, false, nil)
	runtime.ReadMemStats(&after)
	if len(links) != 40 || unread != n-40 {
		t.Fatalf("%d links, %d unread; want 40 and %d", len(links), unread, n-40)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > uint64(len(body))/4 {
		t.Errorf("Scan allocated %d bytes for a %d-byte page whose links past 40 are not kept; want under a quarter of the page", got, len(body))
	}
}
