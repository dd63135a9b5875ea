package crawl_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"sync"

	"github.com/asyncrawl/crawl"
)

// Page.Resolve resolves a reference as written in a page against the
// page's document base (its <base href>), as a browser does: the URL
// Standard's parsing and percent-encoding, dot segments, default ports.
func ExamplePage_Resolve() {
	u, _ := url.Parse("https://example.com/docs/guide/")
	base, _ := url.Parse("https://example.com/docs/v2/")
	p := &crawl.Page{URL: u, Base: base}
	for _, ref := range []string{"intro", "../img/a b.png", `\search?q=café`, "https://EXAMPLE.com:443/%7Euser/", "mailto:x@example.com"} {
		r, err := p.Resolve(ref)
		if err != nil {
			fmt.Println(ref, "->", err)
			continue
		}
		fmt.Println(ref, "->", r)
	}
	// Output:
	// intro -> https://example.com/docs/v2/intro
	// ../img/a b.png -> https://example.com/docs/img/a%20b.png
	// \search?q=café -> https://example.com/search?q=caf%C3%A9
	// https://EXAMPLE.com:443/%7Euser/ -> https://example.com/%7Euser/
	// mailto:x@example.com -> resolve "mailto:x@example.com": not an http(s) URL
}

// With WithRequisites, a crawl fetches what each page needs to render
// (images, scripts, stylesheets and what they import), on any host, once
// each, as wget -p does; each Result says which page named it (Referrer).
// The page hook sees each link's role and what became of it (Fate).
func ExampleWithRequisites() {
	mux := http.NewServeMux()
	page := func(body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, body)
		}
	}
	mux.Handle("/{$}", page(`<link rel=stylesheet href=/site.css><img src=/logo.png alt=Logo><a href=/about>About</a>`))
	mux.Handle("/about", page(`<img src=/logo.png><a href=/>Home</a>`))
	mux.HandleFunc("/site.css", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/css")
		fmt.Fprint(w, `@font-face { src: url(/font.woff2) }`)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "binary") })
	srv := httptest.NewServer(mux)
	defer srv.Close()

	var mu sync.Mutex
	var lines []string
	c, err := crawl.New(crawl.WithRequisites(true), crawl.WithRobots(false),
		crawl.WithPageHook(func(p *crawl.Page) {
			mu.Lock()
			defer mu.Unlock()
			for _, l := range p.Links {
				lines = append(lines, fmt.Sprintf("link on %s: %s %s (%s) %s", examplePath(l.Page), l.Role, examplePath(l.URL.String()), l.Source, l.Fate))
			}
		}),
		crawl.WithResultHook(func(r crawl.Result) {
			mu.Lock()
			defer mu.Unlock()
			lines = append(lines, fmt.Sprintf("result %s %d from %q", examplePath(r.URL), r.Status, strings.TrimPrefix(r.Referrer, srv.URL)))
		}))
	if err != nil {
		fmt.Println(err)
		return
	}
	if _, err := c.Run(context.Background(), srv.URL+"/"); err != nil {
		fmt.Println(err)
		return
	}
	sort.Strings(lines)
	fmt.Println(strings.Join(lines, "\n"))
	// Output:
	// link on /: navigation /about (a href) followed
	// link on /: requisite /logo.png (img src) followed
	// link on /: requisite /site.css (link href) followed
	// link on /about: navigation / (a href) followed
	// link on /about: requisite /logo.png (img src) followed
	// link on /site.css: requisite /font.woff2 (css url) followed
	// result / 200 from ""
	// result /about 200 from "/"
	// result /font.woff2 200 from "/site.css"
	// result /logo.png 200 from "/"
	// result /site.css 200 from "/"
}

// A LinkFilter decides on links knowing what kind each is: here a crawl
// that fetches the scripts and stylesheets a page needs but not its
// images, and skips the links whose anchor text says "Log out".
func ExampleWithLinkFilter() {
	srv := exampleSite(map[string]string{
		"/{$}":    `<script src=/app.js></script><img src=/big.jpg><a href=/docs>Docs</a><a href=/logout>Log out</a>`,
		"/docs":   `docs`,
		"/app.js": `app`,
	})
	defer srv.Close()
	filter := func(l *crawl.Link) bool {
		return !strings.HasPrefix(l.Source, "img ") && l.Text != "Log out"
	}
	hook, results := exampleCollect()
	c, err := crawl.New(crawl.WithRequisites(true), crawl.WithRobots(false),
		crawl.WithLinkFilter(filter), crawl.WithResultHook(hook))
	if err != nil {
		fmt.Println(err)
		return
	}
	if _, err := c.Run(context.Background(), srv.URL+"/"); err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range results() {
		fmt.Println(examplePath(r.URL), r.Status)
	}
	// Output:
	// / 200
	// /app.js 200
	// /docs 200
}
