package scrape_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/asyncrawl/crawl"
	"github.com/asyncrawl/crawl/scrape"
)

// testPage is a response of the test site.
type testPage struct {
	contentType string
	body        string
}

// testSite serves pages and counts the requests it is sent.
type testSite struct {
	*httptest.Server
	requests atomic.Int64
}

func startSite(t *testing.T, pages map[string]testPage) *testSite {
	t.Helper()
	s := &testSite{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		p, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", p.contentType)
		fmt.Fprint(w, p.body)
	}))
	t.Cleanup(s.Close)
	return s
}

const htmlType = "text/html; charset=utf-8"

// site is the test site: three HTML pages, one of them XHTML, a page of
// plain text and one of JSON that hold what would match, and a page whose
// links resolve against its <base href>.
var site = map[string]testPage{
	"/": {htmlType, `<!DOCTYPE html>
<html><head><title>
   Home
   page </title>
<meta name="description" content="The home page"></head>
<body><h1>Welcome</h1>
<ul class="items">
 <li><a href="/a.html" class="x">First
     item</a></li>
 <li><a href="b.xhtml">Second</a></li>
 <li><a>No link</a></li>
 <li><a href="notes.txt">Notes</a> <a href="data.json">Data</a></li>
</ul>
<a href="/docs/">Docs</a>
</body></html>`},
	"/a.html": {htmlType, `<title>A</title><h1>Page A</h1><h1>A's second heading</h1><a href="/">home</a>`},
	"/b.xhtml": {"application/xhtml+xml", `<?xml version="1.0" encoding="utf-8"?>
<html xmlns="http://www.w3.org/1999/xhtml"><head><title>B</title></head><body><h1>Page B</h1></body></html>`},
	"/notes.txt": {"text/plain", `<title>not HTML</title><h1>not HTML</h1>`},
	"/data.json": {"application/json", `{"h1": "<h1>not HTML</h1>"}`},
	"/docs/": {htmlType, `<html><head><base href="/guide/v2/"><title>Docs</title></head>
<body><h1>Docs</h1><a class="rel" href="intro.html#top">Intro</a>
<a class="rel" href="../v1/">Old</a><a class="rel" href="mailto:docs@example.com">Mail</a>
<a class="rel" href="//other.example/x">Other host</a><a class="rel">No href</a></body></html>`},
	"/guide/v2/intro.html": {htmlType, `<title>Intro</title><h1>Intro</h1>`},
	"/guide/v1/":           {htmlType, `<title>Old</title><h1>Old</h1>`},
}

// htmlPages is how many pages of site are HTML.
const htmlPages = 6

// crawlSite crawls the site from its root with c's hook and the given
// options, and returns the Results by path.
func crawlSite(t *testing.T, s *testSite, c *scrape.Collector, opts ...crawl.Option) map[string]crawl.Result {
	t.Helper()
	var mu sync.Mutex
	results := map[string]crawl.Result{}
	opts = append([]crawl.Option{
		crawl.WithPageHook(c.Hook),
		crawl.WithRobots(false),
		crawl.WithResultHook(func(r crawl.Result) {
			mu.Lock()
			results[path(t, r.URL)] = r
			mu.Unlock()
		}),
	}, opts...)
	cr, err := crawl.New(opts...)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cr.Run(context.Background(), s.URL+"/"); err != nil {
		t.Fatal(err)
	}
	return results
}

// path returns the path of a URL of the test site.
func path(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Path
}

// fields collects values by page path, safely for concurrent use.
type fields struct {
	mu sync.Mutex
	m  map[string][]string
}

func (f *fields) add(e *scrape.Element, v string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.m == nil {
		f.m = map[string][]string{}
	}
	f.m[e.Page.URL.Path] = append(f.m[e.Page.URL.Path], v)
}

func (f *fields) get() map[string][]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.m
}

func TestOnHTMLSelectors(t *testing.T) {
	s := startSite(t, site)
	c := scrape.New()
	var titles, headings, names fields
	for _, reg := range []struct {
		selector string
		f        func(*scrape.Element)
	}{
		{"title", func(e *scrape.Element) { titles.add(e, e.Text()) }},
		{"h1", func(e *scrape.Element) { headings.add(e, fmt.Sprintf("%d:%s", e.Index, e.Text())) }},
		{`meta[name="description"], ul.items > li:first-child a`, func(e *scrape.Element) { names.add(e, e.Name) }},
	} {
		if err := c.OnHTML(reg.selector, reg.f); err != nil {
			t.Fatalf("OnHTML(%q): %v", reg.selector, err)
		}
	}
	crawlSite(t, s, c)
	for _, tc := range []struct {
		name      string
		got, want map[string][]string
	}{
		{"titles", titles.get(), map[string][]string{
			"/": {"Home page"}, "/a.html": {"A"}, "/b.xhtml": {"B"}, "/docs/": {"Docs"},
			"/guide/v2/intro.html": {"Intro"}, "/guide/v1/": {"Old"},
		}},
		{"headings", headings.get(), map[string][]string{
			"/": {"0:Welcome"}, "/a.html": {"0:Page A", "1:A's second heading"}, "/b.xhtml": {"0:Page B"},
			"/docs/": {"0:Docs"}, "/guide/v2/intro.html": {"0:Intro"}, "/guide/v1/": {"0:Old"},
		}},
		// A group matches in document order.
		{"group", names.get(), map[string][]string{"/": {"meta", "a"}}},
	} {
		if !equal(tc.got, tc.want) {
			t.Errorf("%s: got %q, want %q", tc.name, tc.got, tc.want)
		}
	}
}

func equal(a, b map[string][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || !slices.Equal(v, w) {
			return false
		}
	}
	return true
}

func TestElementHelpers(t *testing.T) {
	s := startSite(t, site)
	c := scrape.New()
	type got struct {
		attr, childText, childAttr, missingText, missingAttr string
		childTexts, childAttrs, forEach                      []string
	}
	var mu sync.Mutex
	var calls []got
	err := c.OnHTML("ul.items", func(e *scrape.Element) {
		g := got{
			attr:        e.Attr("class"),
			childText:   e.ChildText("a"),
			childAttr:   e.ChildAttr("a", "href"),
			missingText: e.ChildText("h2"),
			missingAttr: e.ChildAttr("a", "title"),
			childTexts:  e.ChildTexts("a"),
			childAttrs:  e.ChildAttrs("a", "href"),
		}
		e.ForEach("li", func(i int, li *scrape.Element) {
			g.forEach = append(g.forEach, fmt.Sprintf("%d %s %s %s", i, li.Name, li.ChildText("a"), li.ChildAttr("a", "href")))
		})
		mu.Lock()
		calls = append(calls, g)
		mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	crawlSite(t, s, c)
	want := got{
		attr:        "items",
		childText:   "First item",
		childAttr:   "/a.html",
		childTexts:  []string{"First item", "Second", "No link", "Notes", "Data"},
		childAttrs:  []string{"/a.html", "b.xhtml", "notes.txt", "data.json"},
		forEach:     []string{"0 li First item /a.html", "1 li Second b.xhtml", "2 li No link ", "3 li Notes notes.txt"},
		missingText: "", missingAttr: "",
	}
	if len(calls) != 1 {
		t.Fatalf("got %d calls, want 1 (one ul.items on the site)", len(calls))
	}
	g := calls[0]
	if g.attr != want.attr || g.childText != want.childText || g.childAttr != want.childAttr ||
		g.missingText != want.missingText || g.missingAttr != want.missingAttr ||
		!slices.Equal(g.childTexts, want.childTexts) || !slices.Equal(g.childAttrs, want.childAttrs) ||
		!slices.Equal(g.forEach, want.forEach) {
		t.Errorf("got %+v, want %+v", g, want)
	}
}

func TestAbsURL(t *testing.T) {
	s := startSite(t, site)
	c := scrape.New()
	var got fields
	err := c.OnHTML("a", func(e *scrape.Element) { got.add(e, e.AbsURL("href")) })
	if err != nil {
		t.Fatal(err)
	}
	crawlSite(t, s, c)
	want := map[string][]string{
		// Against the page's URL...
		"/":        {s.URL + "/a.html", s.URL + "/b.xhtml", "", s.URL + "/notes.txt", s.URL + "/data.json", s.URL + "/docs/"},
		"/a.html":  {s.URL + "/"},
		"/b.xhtml": nil,
		// ... or its <base href>, without the fragment; not mailto:, and
		// nothing for no href.
		"/docs/": {s.URL + "/guide/v2/intro.html", s.URL + "/guide/v1/", "", "http://other.example/x", ""},
	}
	for path, w := range want {
		if g := got.get()[path]; !slices.Equal(g, w) {
			t.Errorf("%s: got %q, want %q", path, g, w)
		}
	}
}

// TestOneParsePerPage registers several callbacks, on selectors that match
// and that do not, and checks that each HTML page is parsed once, and that
// the pages that are not HTML (text/plain, JSON) are not parsed, although
// they hold what the selectors would match.
func TestOneParsePerPage(t *testing.T) {
	s := startSite(t, site)
	c := scrape.New()
	var calls atomic.Int64
	var onText fields
	for _, sel := range []string{"title", "h1", "a", "html", "nothing-matches", "body *"} {
		if err := c.OnHTML(sel, func(e *scrape.Element) {
			calls.Add(1)
			if e.Page.ContentType != "text/html" && e.Page.ContentType != "application/xhtml+xml" {
				onText.add(e, sel)
			}
		}); err != nil {
			t.Fatal(err)
		}
	}
	before := scrape.Parses()
	results := crawlSite(t, s, c)
	if got := scrape.Parses() - before; got != htmlPages {
		t.Errorf("got %d parses for %d HTML pages and 6 callbacks, want %d", got, htmlPages, htmlPages)
	}
	if calls.Load() == 0 {
		t.Errorf("got no callback called, want some")
	}
	if got := onText.get(); len(got) != 0 {
		t.Errorf("callbacks called on pages that are not HTML: %q", got)
	}
	for _, p := range []string{"/notes.txt", "/data.json"} {
		if r, ok := results[p]; !ok || r.Status != http.StatusOK {
			t.Errorf("%s: got Result %+v (found %v), want one with status 200: the page was not crawled", p, r, ok)
		}
	}
}

func TestBadSelector(t *testing.T) {
	c := scrape.New()
	called := false
	for _, sel := range []string{"[[", "", "a[href", "p:nosuchpseudo"} {
		err := c.OnHTML(sel, func(*scrape.Element) { called = true })
		var se *scrape.SelectorError
		if !errors.As(err, &se) || se.Selector != sel {
			t.Errorf("OnHTML(%q): got error %v, want a *SelectorError for %q", sel, err, sel)
		}
	}
	if err := c.OnHTML("a", nil); err == nil {
		t.Errorf("OnHTML(\"a\", nil): got no error, want one")
	}
	// None of them was registered: a crawl parses nothing.
	s := startSite(t, site)
	before := scrape.Parses()
	crawlSite(t, s, c)
	if got := scrape.Parses() - before; got != 0 || called {
		t.Errorf("got %d parses, callback called %v, want none: no callback was registered", got, called)
	}
}

// TestBadChildSelector checks that a child helper given a selector that
// does not compile panics, which the crawler recovers into the page's
// Result.Err, so that the mistake shows on every page.
func TestBadChildSelector(t *testing.T) {
	s := startSite(t, site)
	c := scrape.New()
	if err := c.OnHTML("html", func(e *scrape.Element) { e.ChildText("li[[") }); err != nil {
		t.Fatal(err)
	}
	results := crawlSite(t, s, c)
	if err := results["/"].Err; !errors.Is(err, crawl.ErrPanic) || !strings.Contains(err.Error(), `"li[["`) {
		t.Errorf("got Result.Err %v, want a panic naming the selector", err)
	}
	// A page whose hook panicked has its links left unfollowed.
	if len(results) != 1 {
		t.Errorf("got %d Results, want 1, the root's", len(results))
	}
}

func TestDocument(t *testing.T) {
	u, _ := url.Parse("http://example.com/")
	for _, tc := range []struct {
		name  string
		page  crawl.Page
		title string
		ok    bool
	}{
		{"html", crawl.Page{URL: u, ContentType: "text/html", Encoding: "utf-8", Body: []byte("<title>T</title>")}, "T", true},
		{"xhtml", crawl.Page{URL: u, ContentType: "application/xhtml+xml", Encoding: "utf-8", Body: []byte("<title>X</title>")}, "X", true},
		{"text", crawl.Page{URL: u, ContentType: "text/plain", Encoding: "utf-8", Body: []byte("<title>T</title>")}, "", false},
		{"no type", crawl.Page{URL: u, Body: []byte("<title>T</title>")}, "", false},
		// Left in a content coding the crawler does not decode.
		{"br", crawl.Page{URL: u, ContentType: "text/html", Body: []byte("\x1b\x03<title>")}, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := scrape.Parses()
			doc, ok := scrape.Document(&tc.page)
			if ok != tc.ok || scrape.IsHTML(&tc.page) != tc.ok {
				t.Fatalf("got ok %v, IsHTML %v, want %v", ok, scrape.IsHTML(&tc.page), tc.ok)
			}
			if n := scrape.Parses() - before; n != map[bool]int64{true: 1, false: 0}[tc.ok] {
				t.Errorf("got %d parses, want %v", n, map[bool]int{true: 1, false: 0}[tc.ok])
			}
			if ok {
				if got := doc.Find("title").Text(); got != tc.title {
					t.Errorf("got title %q, want %q", got, tc.title)
				}
			}
		})
	}
}

func TestCollapse(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"a", "a"},
		{"a b", "a b"},
		{"  a  ", "a"},
		{"\t\na\r\n\f b \n", "a b"},
		{"a\nb", "a b"},
		{"a  b   c", "a b c"},
		{" \t\n ", ""},
		{"a\u00a0 b", "a\u00a0 b"}, // no-break space is kept
		{"\u2003a\u2003", "\u2003a\u2003"},
	} {
		if got := scrape.Collapse(tc.in); got != tc.want {
			t.Errorf("Collapse(%q): got %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestConcurrentCrawl crawls a site of many pages with several workers,
// so that the race detector sees the callbacks run at once, and checks
// that every page was seen once by every callback.
func TestConcurrentCrawl(t *testing.T) {
	const pages = 60
	m := map[string]testPage{}
	for n := range pages {
		m[fmt.Sprintf("/p/%d", n)] = testPage{htmlType, fmt.Sprintf(
			`<title>Page %d</title><h1>%d</h1><a href="/p/%d">next</a><a href="/p/%d">skip</a>`, n, n, (n+1)%pages, (n+7)%pages)}
	}
	m["/"] = testPage{htmlType, `<a href="/p/0">start</a>`}
	s := startSite(t, m)
	c := scrape.New()
	var titles, links fields
	if err := c.OnHTML("title", func(e *scrape.Element) { titles.add(e, e.Text()) }); err != nil {
		t.Fatal(err)
	}
	if err := c.OnHTML("a", func(e *scrape.Element) { links.add(e, e.AbsURL("href")) }); err != nil {
		t.Fatal(err)
	}
	before := scrape.Parses()
	crawlSite(t, s, c, crawl.WithWorkers(8), crawl.WithHostWorkers(8))
	if got := scrape.Parses() - before; got != pages+1 {
		t.Errorf("got %d parses, want %d", got, pages+1)
	}
	got := titles.get()
	for n := range pages {
		p := fmt.Sprintf("/p/%d", n)
		if want := []string{fmt.Sprintf("Page %d", n)}; !slices.Equal(got[p], want) {
			t.Errorf("%s: got titles %q, want %q", p, got[p], want)
		}
		want := []string{fmt.Sprintf("%s/p/%d", s.URL, (n+1)%pages), fmt.Sprintf("%s/p/%d", s.URL, (n+7)%pages)}
		if g := links.get()[p]; !slices.Equal(g, want) {
			t.Errorf("%s: got links %q, want %q", p, g, want)
		}
	}
}

// TestOnHTMLWhileCrawling registers a callback from inside another while
// the crawl runs, which the race detector checks, and checks that it
// applies to the pages that come after.
func TestOnHTMLWhileCrawling(t *testing.T) {
	s := startSite(t, site)
	c := scrape.New()
	var once sync.Once
	var late fields
	err := c.OnHTML("title", func(e *scrape.Element) {
		once.Do(func() {
			if err := c.OnHTML("h1", func(e *scrape.Element) { late.add(e, e.Text()) }); err != nil {
				t.Error(err)
			}
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	crawlSite(t, s, c, crawl.WithWorkers(1))
	got := late.get()
	var paths []string
	for p := range got {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	// The first page's callbacks were fixed when its Hook began; every
	// page after it has the late one.
	if len(paths) != htmlPages-1 || got["/"] != nil {
		t.Errorf("got the late callback on %q, want it on every HTML page but the first, /", paths)
	}
}

// TestComposesWithPageHook gives the Collector's Hook beside a page hook
// of the program's own, before and after it: all three run on every page.
func TestComposesWithPageHook(t *testing.T) {
	s := startSite(t, site)
	c := scrape.New()
	var titles, before, after atomic.Int64
	if err := c.OnHTML("title", func(*scrape.Element) { titles.Add(1) }); err != nil {
		t.Fatal(err)
	}
	results := crawlSite(t, s, c,
		crawl.WithPageHook(func(p *crawl.Page) { after.Add(1) }))
	// crawlSite gives c.Hook first; once more with the program's first.
	c2 := scrape.New()
	if err := c2.OnHTML("title", func(*scrape.Element) { titles.Add(1) }); err != nil {
		t.Fatal(err)
	}
	cr, err := crawl.New(crawl.WithRobots(false),
		crawl.WithPageHook(func(p *crawl.Page) { before.Add(1) }),
		crawl.WithPageHook(c2.Hook))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cr.Run(context.Background(), s.URL+"/"); err != nil {
		t.Fatal(err)
	}
	pages := int64(len(results))
	if before.Load() != pages || after.Load() != pages || titles.Load() != 2*htmlPages {
		t.Errorf("got the program's hooks on %d and %d pages, titles %d; want %d, %d and %d",
			before.Load(), after.Load(), titles.Load(), pages, pages, 2*htmlPages)
	}
}

// FuzzCollapse checks Collapse against a plain model: the fields of s
// between runs of ASCII white space, joined by one space.
func FuzzCollapse(f *testing.F) {
	for _, s := range []string{"", " a ", "a\t\nb", "a b", "\u00a0a  b\f", "\r\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := strings.Join(strings.FieldsFunc(s, func(r rune) bool {
			return r == ' ' || r == '\t' || r == '\n' || r == '\f' || r == '\r'
		}), " ")
		if got := scrape.Collapse(s); got != want {
			t.Errorf("Collapse(%q): got %q, want %q", s, got, want)
		}
	})
}
