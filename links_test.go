package crawl_test

import (
	"context"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/asyncrawl/crawl"
)

// linksPage returns a Page at pageURL with the given content type and body,
// as the crawler hands it to a link extractor.
func linksPage(t testing.TB, pageURL, contentType, body string) *crawl.Page {
	t.Helper()
	u, err := url.Parse(pageURL)
	if err != nil {
		t.Fatalf("url.Parse(%q): %v", pageURL, err)
	}
	return &crawl.Page{URL: u, Status: 200, ContentType: contentType, Body: []byte(body)}
}

// linksStrings runs ExtractLinks and returns the links as strings, in order.
func linksStrings(t testing.TB, p *crawl.Page) []string {
	t.Helper()
	links, err := crawl.ExtractLinks(context.Background(), p)
	if err != nil {
		t.Fatalf("ExtractLinks: %v", err)
	}
	out := []string{}
	for _, u := range links {
		out = append(out, u.String())
	}
	return out
}

func TestExtractLinks(t *testing.T) {
	const page = "http://example.com/dir/page.html"
	tests := []struct {
		name string
		page string // default: page
		body string
		want []string
	}{
		{
			name: "a base in svg or math is not HTML's",
			body: `<svg><base href="/svg/"></svg><math><base href="/math/"></math><a href="x">x</a>`,
			want: []string{"http://example.com/dir/x"},
		},
		{
			name: "nor one in a template",
			body: `<template><base href="/tpl/"></template><a href="x">x</a>`,
			want: []string{"http://example.com/dir/x"},
		},
		{
			name: "a template's links are not the document's",
			body: `<template><a href="/tpl">t</a><template><a href="/tpl2">t</a></template></template><a href="/real">r</a>`,
			want: []string{"http://example.com/real"},
		},
		{
			name: "an HTML tag breaks out of svg, and a base after it is HTML's",
			body: `<svg><p>breakout</p><base href="/brk/"><a href="x">x</a>`,
			want: []string{"http://example.com/brk/x"},
		},
		{
			name: "a base in svg's foreignObject is HTML's",
			body: `<svg><foreignObject><base href="/fo/"></foreignObject></svg><a href="x">x</a>`,
			want: []string{"http://example.com/fo/x"},
		},
		{
			name: "a and area href",
			body: `<a href="/a">A</a><map><area href="/area" alt=x></map>`,
			want: []string{"http://example.com/a", "http://example.com/area"},
		},
		{
			name: "frame and iframe src",
			body: `<frameset><frame src="f1.html"></frameset><iframe src="/if.html"></iframe>`,
			want: []string{"http://example.com/dir/f1.html", "http://example.com/if.html"},
		},
		{
			name: "img, script and source src are not links",
			body: `<img src="/i.png"><script src="/s.js"></script><video><source src="/v.mp4"></video><a href="/ok">`,
			want: []string{"http://example.com/ok"},
		},
		{
			name: "link rel naming documents is followed",
			body: `<link rel="next" href="/p2"><link rel="alternate" hreflang="fr" href="/fr/"><link rel="canonical" href="/canon">`,
			want: []string{"http://example.com/p2", "http://example.com/fr/", "http://example.com/canon"},
		},
		{
			name: "link rel naming resources is not followed",
			body: `<link rel="stylesheet" href="/s.css"><link rel="icon" href="/f.ico">` +
				`<link rel="shortcut icon" href="/f2.ico"><link rel="preload" href="/font.woff2" as="font">` +
				`<link rel="STYLESHEET" href="/upper.css"><link href="/after.css" rel="stylesheet">` +
				`<link rel="manifest" href="/m.json"><link rel="dns-prefetch" href="//cdn.example/">`,
			want: []string{},
		},
		{
			name: "link without rel is followed",
			body: `<link href="/norel">`,
			want: []string{"http://example.com/norel"},
		},
		{
			name: "absolute base",
			body: `<head><base href="https://cdn.example.org/root/"></head><a href="x">x</a><a href="/y">y</a>`,
			want: []string{"https://cdn.example.org/root/x", "https://cdn.example.org/y"},
		},
		{
			name: "relative base resolves against the page",
			body: `<base href="../other/"><a href="x">x</a>`,
			want: []string{"http://example.com/other/x"},
		},
		{
			name: "only the first base counts",
			body: `<base href="/first/"><base href="/second/"><a href="x">x</a>`,
			want: []string{"http://example.com/first/x"},
		},
		{
			name: "a base that is not http is ignored and still counts as the first",
			body: `<base href="javascript:void(0)"><base href="/second/"><a href="x">x</a>`,
			want: []string{"http://example.com/dir/x"},
		},
		{
			name: "base applies to links before it too",
			body: `<head><link rel="canonical" href="c"><base href="/b/"></head><a href="x">x</a>`,
			want: []string{"http://example.com/b/c", "http://example.com/b/x"},
		},
		{
			name: "tag names in any case",
			body: `<A HREF="/a1"></A><Area Href="/a2"><IFRAME SRC="/f"></IFRAME><NoScript><a href="/n"></a></NoScript>`,
			want: []string{"http://example.com/a1", "http://example.com/a2", "http://example.com/f", "http://example.com/n"},
		},
		{
			name: "base without href does not count",
			body: `<base target="_blank"><base href="/b/"><a href="x">x</a>`,
			want: []string{"http://example.com/b/x"},
		},
		{
			name: "entities decoded",
			body: `<a href="/search?a=1&amp;b=2">s</a><a href="/caf&#233;">c</a>`,
			want: []string{"http://example.com/search?a=1&b=2", "http://example.com/caf%C3%A9"},
		},
		{
			name: "unquoted attribute",
			body: `<a href=/unquoted>u</a><a class=x href=rel.html title=t>r</a>`,
			want: []string{"http://example.com/unquoted", "http://example.com/dir/rel.html"},
		},
		{
			name: "single-quoted attribute",
			body: `<a href='/single'>s</a>`,
			want: []string{"http://example.com/single"},
		},
		{
			name: "upper-case tags and attributes",
			body: `<A HREF="/upper">U</A><IFRAME SRC="/frame"></IFRAME><Link REL="Next" HRef="/next">`,
			want: []string{"http://example.com/upper", "http://example.com/frame", "http://example.com/next"},
		},
		{
			name: "whitespace around href trimmed",
			body: "<a href=\"  /spaced \n\t\">s</a>",
			want: []string{"http://example.com/spaced"},
		},
		{
			name: "first href of a tag wins",
			body: `<a href="/one" href="/two">x</a>`,
			want: []string{"http://example.com/one"},
		},
		{
			name: "comments are not links",
			body: `<!-- <a href="/commented">x</a> --><!--<a href=/c2>--><a href="/real">r</a>`,
			want: []string{"http://example.com/real"},
		},
		{
			name: "data-href is not a link",
			body: `<a data-href="/data">d</a><div href="/div">x</div><span data-src="/s"></span>`,
			want: []string{},
		},
		{
			name: "script and style contents are not links",
			body: `<script>var s = "<a href='/in-script'>x</a>"; document.write('<a href="/w">');</script>` +
				`<style>/* <a href="/in-style"> */</style><textarea><a href="/in-textarea"></textarea>` +
				`<a href="/after">a</a>`,
			want: []string{"http://example.com/after"},
		},
		{
			name: "fragments dropped",
			body: `<a href="#top">top</a><a href="/x#sec">x</a><a href="other.html#">o</a>`,
			want: []string{"http://example.com/dir/page.html", "http://example.com/x", "http://example.com/dir/other.html"},
		},
		{
			name: "fragment alone keeps the page's query",
			page: "http://example.com/list?page=2",
			body: `<a href="#item3">i</a>`,
			want: []string{"http://example.com/list?page=2"},
		},
		{
			name: "schemes other than http and https dropped",
			body: `<a href="javascript:void(0)">j</a><a href="mailto:a@example.com">m</a>` +
				`<a href="ftp://example.com/f">f</a><a href="tel:+123">t</a><a href="data:text/html,<a>">d</a>` +
				`<a href="https://secure.example.com/s">s</a><a href="HTTP://Example.com/up">u</a>`,
			want: []string{"https://secure.example.com/s", "http://example.com/up"},
		},
		{
			name: "protocol-relative uses the page's scheme",
			page: "https://example.com/",
			body: `<a href="//other.example/x">o</a>`,
			want: []string{"https://other.example/x"},
		},
		{
			name: "dot segments resolved",
			page: "http://example.com/a/b/c.html",
			body: `<a href="../up.html">u</a><a href="./here.html">h</a><a href="../../../../top">t</a><a href="/x/./y/../z">z</a>`,
			want: []string{"http://example.com/a/up.html", "http://example.com/a/b/here.html", "http://example.com/top", "http://example.com/x/z"},
		},
		{
			name: "duplicates kept in document order",
			body: `<a href="/b">1</a><a href="/a">2</a><a href="/b">3</a>`,
			want: []string{"http://example.com/b", "http://example.com/a", "http://example.com/b"},
		},
		{
			name: "self-closing tags",
			body: `<a href="/sc"/><link rel="next" href="/n"/>`,
			want: []string{"http://example.com/sc", "http://example.com/n"},
		},
		{
			name: "unparseable href skipped",
			body: `<a href="http://[::1">bad</a><a href="http://exa mple.com/">sp</a><a href="/good">g</a>`,
			want: []string{"http://example.com/good"},
		},
		{
			// "<b <a href=/m3>" is one b tag whose attributes are "<a" and
			// href, as a browser tokenizes it, so /m3 is no link.
			name: "malformed html",
			body: `<html><body><div><p>unclosed <a href="/m1">one<a href="/m2"> 3 < 4 <b <a href="/m3">x</a> <<a href=/m4>`,
			want: []string{"http://example.com/m1", "http://example.com/m2", "http://example.com/m4"},
		},
		{
			name: "empty body",
			body: ``,
			want: []string{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pu := tt.page
			if pu == "" {
				pu = page
			}
			got := linksStrings(t, linksPage(t, pu, "text/html", tt.body))
			if !slices.Equal(got, tt.want) {
				t.Errorf("ExtractLinks(%s, %q)\n got %q\nwant %q", pu, tt.body, got, tt.want)
			}
		})
	}
}

func TestExtractLinksContentType(t *testing.T) {
	const body = `<a href="/x">x</a>`
	tests := []struct {
		contentType string
		want        []string
	}{
		{"text/html", []string{"http://example.com/x"}},
		{"application/xhtml+xml", []string{"http://example.com/x"}},
		{"text/plain", nil},
		{"application/json", nil},
		{"image/png", nil},
		{"", nil},
	}
	for _, tt := range tests {
		t.Run(tt.contentType, func(t *testing.T) {
			links, err := crawl.ExtractLinks(context.Background(), linksPage(t, "http://example.com/", tt.contentType, body))
			if err != nil {
				t.Fatalf("ExtractLinks: %v", err)
			}
			var got []string
			for _, u := range links {
				got = append(got, u.String())
			}
			if tt.want == nil && links != nil {
				t.Errorf("ContentType %q: got %q, want nil", tt.contentType, got)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("ContentType %q: got %q, want %q", tt.contentType, got, tt.want)
			}
		})
	}
}

// TestExtractLinksXHTML parses a real XHTML document: an XML prolog, a
// namespace, CDATA-free script and self-closing elements.
func TestExtractLinksXHTML(t *testing.T) {
	const body = `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Strict//EN" "http://www.w3.org/TR/xhtml1/DTD/xhtml1-strict.dtd">
<html xmlns="http://www.w3.org/1999/xhtml"><head><title>t</title><link rel="stylesheet" href="s.css"/></head>
<body><p><a href="one.xhtml">1</a><br/><a href="/two.xhtml">2</a></p></body></html>`
	got := linksStrings(t, linksPage(t, "http://example.com/doc/", "application/xhtml+xml", body))
	want := []string{"http://example.com/doc/one.xhtml", "http://example.com/two.xhtml"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestExtractLinksNoscript checks that links inside <noscript> are found: the
// crawler runs no scripts, so it is the reader <noscript> content is for.
func TestExtractLinksNoscript(t *testing.T) {
	const body = `<noscript><a href="/nojs">no js</a></noscript><a href="/after">a</a>` +
		`<noscript/><a href="/self-closed">s</a>`
	got := linksStrings(t, linksPage(t, "http://example.com/", "text/html", body))
	want := []string{"http://example.com/nojs", "http://example.com/after", "http://example.com/self-closed"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestExtractLinksMalformed feeds broken documents that must neither panic
// nor hang; what they yield is not specified beyond the fuzz properties.
func TestExtractLinksMalformed(t *testing.T) {
	bodies := []string{
		`<`, `<a`, `<a href`, `<a href=`, `<a href="`, `<a href='/x`, `</a href="/x">`,
		`<!--`, `<!-- <a href="/x">`, `<script>`, `<script><a href="/x">`, `<base href=`,
		`<a href="/x"` + strings.Repeat("<b>", 1000), strings.Repeat("<a href=/x>", 1000),
		"<a href=\"/\x00\">", "\xff\xfe<a href=/x>", `<a href="&#xFFFFFFFF;">`, `<a href="&">`,
		`<plaintext><a href="/x">`, `<svg><a xlink:href="/x" href="/y"></a></svg>`,
	}
	for _, b := range bodies {
		p := linksPage(t, "http://example.com/", "text/html", b)
		links, err := crawl.ExtractLinks(context.Background(), p)
		if err != nil {
			t.Errorf("ExtractLinks(%q): %v", b, err)
		}
		linksCheck(t, b, links)
	}
}

// linksCheck fails t if a link is not an absolute http(s) URL with a host
// and without a fragment, as a value and as printed, or if a request made
// with it does not carry its path: a path that net/url cannot parse back
// ("/%zz", "/a|b") is in Opaque, with the host, which is sent as it is.
func linksCheck(t *testing.T, body string, links []*url.URL) {
	t.Helper()
	for _, u := range links {
		if !u.IsAbs() || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
			u.Fragment != "" || u.RawFragment != "" {
			t.Errorf("ExtractLinks(%q): got link %q (scheme %q host %q fragment %q), want absolute http(s) with host, no fragment",
				body, u, u.Scheme, u.Host, u.Fragment)
			continue
		}
		if u.Opaque != "" {
			if !strings.HasPrefix(u.Opaque, "//"+u.Host+"/") || u.RequestURI() != u.String() {
				t.Errorf("ExtractLinks(%q): got link %q with Opaque %q, RequestURI %q; want //%s and a path, sent as the URL",
					body, u, u.Opaque, u.RequestURI(), u.Host)
			}
			continue
		}
		v, err := url.Parse(u.String())
		if err != nil || v.Scheme != u.Scheme || v.Host != u.Host || v.Fragment != "" {
			t.Errorf("ExtractLinks(%q): got link %q, which parses again as %v, %v; want the same scheme and host, no fragment",
				body, u, v, err)
		}
	}
}

func FuzzExtractLinks(f *testing.F) {
	seeds := []string{
		`<a href="/a">`, `<base href="https://b.example/x/"><a href="y#z">`, `<a href="//h/p">`,
		`<a href="#f">`, `<a href="javascript:x">`, `<link rel="stylesheet next" href="/s">`,
		`<iframe src="?q#f"></iframe>`, `<a href="http://[::1]:80/">`, `<a href="http://:80/">`,
		`<a href="http:opaque">`, `<a href="http:/path">`, `<a href="%zz">`, `<area href=x>`,
		`<!-- <a href=x> --><script><a href=y></script>`, `<a href="HTTPS://X/#">`,
		`<base href="http:"><a href="x">`, `<base href="//"><a href=x>`,
	}
	for _, s := range seeds {
		f.Add(s, "http://example.com/dir/page.html")
	}
	f.Add(`<a href=x>`, "https://example.com")
	f.Add(`<a href=../../x>`, "http://[::1]:8080/a/b")
	f.Fuzz(func(t *testing.T, body, pageURL string) {
		u, err := url.Parse(pageURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return // the crawler only fetches absolute http(s) URLs
		}
		u.Fragment, u.RawFragment = "", ""
		for _, ct := range []string{"text/html", "application/xhtml+xml"} {
			links, err := crawl.ExtractLinks(context.Background(), &crawl.Page{URL: u, ContentType: ct, Body: []byte(body)})
			if err != nil {
				t.Fatalf("ExtractLinks: %v", err)
			}
			linksCheck(t, body, links)
		}
	})
}

// The query of a <base href> in a page of a legacy encoding is encoded in
// the page's encoding, as a link's (docs/urls.md), whichever extractor
// reads the page: the default one, ExtractLinks, and a custom one that
// resolves against Page.Base (Page.Resolve). The site counts what it was
// sent.
func TestBaseQueryEncoding(t *testing.T) {
	srv := countingSite(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/" {
			w.Header().Set("Content-Type", "text/html; charset=windows-1252")
			w.Write([]byte("<base href=\"/b/?bq=\xe9\"><a href=\"\">x</a>"))
			return
		}
		w.Header().Set("Content-Type", "text/plain")
	})
	for _, tt := range []struct {
		name string
		opts []crawl.Option
	}{
		{"default", nil},
		{"ExtractLinks", []crawl.Option{crawl.WithLinkExtractor(crawl.ExtractLinks)}},
		{"Page.Resolve", []crawl.Option{crawl.WithLinkExtractor(func(ctx context.Context, p *crawl.Page) ([]*url.URL, error) {
			u, err := p.Resolve("")
			if err != nil {
				return nil, err
			}
			return []*url.URL{u}, nil
		})}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if sent := srv.crawl(t, tt.opts...); sent["/b/?bq=%E9"] != 1 {
				t.Errorf("requests: %v; want /b/?bq=%%E9 once (é in windows-1252)", sent)
			}
		})
	}
}

// countedSite is an httptest server that counts the request URIs it is
// sent.
type countedSite struct {
	*httptest.Server
	mu   sync.Mutex
	sent map[string]int
}

// countingSite starts a countedSite serving h, closed when the test ends.
func countingSite(t *testing.T, h http.HandlerFunc) *countedSite {
	s := &countedSite{sent: map[string]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.sent[r.URL.RequestURI()]++
		s.mu.Unlock()
		h(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// crawl runs a crawl of the site's root, robots.txt not obeyed, with opts,
// and returns the requests it got, counted from zero.
func (s *countedSite) crawl(t *testing.T, opts ...crawl.Option) map[string]int {
	t.Helper()
	s.mu.Lock()
	clear(s.sent)
	s.mu.Unlock()
	c, err := crawl.New(append([]crawl.Option{crawl.WithRobots(false)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Run(t.Context(), s.URL+"/"); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.sent)
}

// A page sent with no Content-Type at all is read for links if a browser
// would take it for HTML (MIME sniffing: "<!doctype html", "<html", ...
// first), as Chromium renders and follows it; one that starts otherwise
// (a PDF) is not read.
func TestNoContentTypeSniffed(t *testing.T) {
	srv := countingSite(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Content-Type"] = nil // no header at all, nor net/http's own sniffing
		switch r.URL.Path {
		case "/":
			w.Write([]byte("<!doctype html><title>t</title><a href=\"nc?x=\xc3\xa9\">x</a><a href=\"/pdf\">p</a>"))
		case "/pdf":
			w.Write([]byte("%PDF-1.4\n<a href=\"/from-pdf\">"))
		default:
			w.Write([]byte("plain"))
		}
	})
	var mu sync.Mutex
	types := map[string]string{}
	sent := srv.crawl(t, crawl.WithResultHook(func(r crawl.Result) {
		mu.Lock()
		types[r.URL] = r.ContentType
		mu.Unlock()
	}))
	if sent["/nc?x=%C3%A9"] != 1 || sent["/pdf"] != 1 || sent["/from-pdf"] != 0 {
		t.Errorf("requests %v; want /nc?x=%%C3%%A9 and /pdf once (the untyped page read as HTML), /from-pdf never", sent)
	}
	mu.Lock()
	defer mu.Unlock()
	if got := types[srv.URL+"/"]; got != "text/html" {
		t.Errorf("the untyped HTML page's ContentType %q, want text/html", got)
	}
	if got := types[srv.URL+"/pdf"]; got != "" {
		t.Errorf("the untyped PDF's ContentType %q, want none", got)
	}
}
