package scrape_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strings"
	"sync"

	"github.com/asyncrawl/crawl"
	"github.com/asyncrawl/crawl/scrape"
)

// Crawl a site and collect each page's title and first heading into JSON,
// one object per line.
func ExampleCollector() {
	site := exampleSite(map[string]string{
		"/":      `<title>Home</title><h1>Welcome</h1><a href="/about">About</a> <a href="/blog/">Blog</a>`,
		"/about": `<title>About us</title><h1>Who we are</h1>`,
		"/blog/": `<title>Blog</title><h1>Latest  posts</h1><a href="../about">About</a>`,
	})
	defer site.Close()

	type page struct {
		URL   string `json:"url"`
		Title string `json:"title"`
		H1    string `json:"h1"`
	}
	var mu sync.Mutex // the callback runs on several workers at once
	var pages []page

	c := scrape.New()
	err := c.OnHTML("html", func(e *scrape.Element) {
		p := page{URL: e.Page.URL.Path, Title: e.ChildText("title"), H1: e.ChildText("h1")}
		mu.Lock()
		pages = append(pages, p)
		mu.Unlock()
	})
	if err != nil {
		log.Fatal(err)
	}
	cr, err := crawl.New(crawl.WithPageHook(c.Hook))
	if err != nil {
		log.Fatal(err)
	}
	if _, err := cr.Run(context.Background(), site.URL); err != nil {
		log.Fatal(err)
	}

	sort.Slice(pages, func(i, j int) bool { return pages[i].URL < pages[j].URL })
	enc := json.NewEncoder(os.Stdout)
	for _, p := range pages {
		enc.Encode(p)
	}
	// Output:
	// {"url":"/","title":"Home","h1":"Welcome"}
	// {"url":"/about","title":"About us","h1":"Who we are"}
	// {"url":"/blog/","title":"Blog","h1":"Latest posts"}
}

// List each page's links, with their text and their URL made absolute
// against the page's base (its <base href>, else its URL), without the
// fragment; a link that is not http(s) has none.
func ExampleCollector_OnHTML() {
	site := exampleSite(map[string]string{
		"/":           `<base href="/docs/"><a href="intro">Start  here</a> <a href="mailto:x@example.com">Mail</a>`,
		"/docs/intro": `<ul><li><a href="../">Home</a></li><li><a href="#top">Top</a></li></ul>`,
	})
	defer site.Close()

	var mu sync.Mutex
	var lines []string
	c := scrape.New()
	err := c.OnHTML("a[href]", func(e *scrape.Element) {
		line := fmt.Sprintf("%s: %q -> %q", e.Page.URL.Path, e.Text(), e.AbsURL("href"))
		mu.Lock()
		lines = append(lines, strings.ReplaceAll(line, site.URL, ""))
		mu.Unlock()
	})
	if err != nil {
		log.Fatal(err)
	}
	cr, err := crawl.New(crawl.WithPageHook(c.Hook))
	if err != nil {
		log.Fatal(err)
	}
	if _, err := cr.Run(context.Background(), site.URL); err != nil {
		log.Fatal(err)
	}
	sort.Strings(lines)
	for _, l := range lines {
		fmt.Println(l)
	}
	// Output:
	// /: "Mail" -> ""
	// /: "Start here" -> "/docs/intro"
	// /docs/intro: "Home" -> "/"
	// /docs/intro: "Top" -> "/docs/intro"
}

// exampleSite serves pages, each a path and its HTML body, on loopback.
func exampleSite(pages map[string]string) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, body)
	}))
}
