package crawl_test

import (
	"bytes"
	"context"
	"fmt"
	"log"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/asyncrawl/crawl"
	"github.com/asyncrawl/crawl/crawltest"
)

// New takes the options of a crawl; it starts nothing. A bad value is an
// error from New, naming the option, before any request is sent.
func ExampleNew() {
	c, err := crawl.New(
		crawl.WithWorkers(16),
		crawl.WithMaxDepth(3),
		crawl.WithHostDelay(250*time.Millisecond),
		crawl.WithUserAgent("mybot/1.0 (+https://example.com/bot)"),
	)
	fmt.Println(c != nil, err)

	_, err = crawl.New(crawl.WithWorkers(0))
	fmt.Println(err)
	// Output:
	// true <nil>
	// crawl: WithWorkers(0): need at least 1 worker
}

// Check a site's links, as a CI job does: every broken URL, with the page
// that linked to it (Result.Referrer), links to other sites included
// (fetched for their status only). A program exits with status 1 when one
// is broken, so that the job fails.
func ExampleResult_Broken() {
	site := crawltest.New() // serves www.example.com and other.example offline
	defer site.Close()
	site.Page("/", "/guide", "/old", "http://other.example/spec")
	site.Body("/guide", "text/html", `<img src="/logo.png"><a href="/">home</a> <a href="/faq">FAQ</a> <a href="http://other.example/gone">gone</a>`)
	site.Redirect("/old", http.StatusMovedPermanently, "/removed")
	site.Host("other.example").Page("/spec")

	var mu sync.Mutex
	var broken []string
	c, err := crawl.New(
		crawl.WithHTTPClient(site.Client()), // leave out on the real web
		crawl.WithRequisites(true), crawl.WithCheckExternal(true),
		crawl.WithResultHook(func(r crawl.Result) {
			if r.Broken() {
				mu.Lock()
				broken = append(broken, fmt.Sprintf("%s %d, linked from %s", r.URL, r.Status, r.Referrer))
				mu.Unlock()
			}
		}),
	)
	if err != nil {
		log.Fatal(err)
	}
	stats, err := c.Run(context.Background(), "http://www.example.com/")
	if err != nil {
		log.Fatal(err)
	}
	sort.Strings(broken)
	for _, b := range broken {
		fmt.Println(b)
	}
	fmt.Printf("%d URLs checked, %d broken\n", stats.Done, len(broken))
	code := 0
	if len(broken) > 0 {
		code = 1
	}
	fmt.Println("exit status", code) // a program calls os.Exit(code)
	// Output:
	// http://other.example/gone 404, linked from http://www.example.com/guide
	// http://www.example.com/faq 404, linked from http://www.example.com/guide
	// http://www.example.com/logo.png 404, linked from http://www.example.com/guide
	// http://www.example.com/removed 404, linked from http://www.example.com/old
	// 8 URLs checked, 4 broken
	// exit status 1
}

// A page hook sees every response: its body, its headers and its links,
// each with what the crawl did with it (Link.Fate). Here it finds the
// pages that still name an old product, and the links that leave the
// site. It is called from several workers at once.
func ExampleWithPageHook() {
	site := crawltest.New()
	defer site.Close()
	site.Body("/", "text/html", `<a href="/guide">Guide</a> <a href="/news">News</a>`)
	site.Body("/guide", "text/html", `Install OldName 2. <a href="https://github.com/example/oldname">Source</a>`)
	site.Body("/news", "text/html", `NewName 3 is out.`)

	var mu sync.Mutex
	var lines []string
	c, err := crawl.New(
		crawl.WithHTTPClient(site.Client()),
		crawl.WithPageHook(func(p *crawl.Page) {
			mu.Lock()
			defer mu.Unlock()
			if bytes.Contains(p.Body, []byte("OldName")) { // p.Body is valid only during the call
				lines = append(lines, "names OldName: "+p.URL.Path)
			}
			for _, l := range p.Links {
				if l.Fate == crawl.LinkOutOfScope {
					lines = append(lines, fmt.Sprintf("leaves the site: %s -> %s (%q)", p.URL.Path, l.URL, l.Text))
				}
			}
		}),
	)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := c.Run(context.Background(), "http://www.example.com/"); err != nil {
		log.Fatal(err)
	}
	sort.Strings(lines)
	for _, l := range lines {
		fmt.Println(l)
	}
	// Output:
	// leaves the site: /guide -> https://github.com/example/oldname ("Source")
	// names OldName: /guide
}

// A result hook is called exactly once for every URL the crawl took,
// whatever became of it: a page, a redirect, an error status or a
// failure. Here it keeps each URL's status. It is called from several
// workers at once.
func ExampleWithResultHook() {
	site := crawltest.New()
	defer site.Close()
	site.Page("/", "/a", "/b", "/c")
	site.Page("/a")
	site.Redirect("/b", http.StatusFound, "/a")
	site.Page("/c").Status(http.StatusServiceUnavailable)

	var mu sync.Mutex
	status := map[string]int{}
	c, err := crawl.New(
		crawl.WithHTTPClient(site.Client()),
		crawl.WithMaxTries(1), // no retry of the 503
		crawl.WithResultHook(func(r crawl.Result) {
			mu.Lock()
			status[r.URL] = r.Status
			mu.Unlock()
		}),
	)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := c.Run(context.Background(), "http://www.example.com/"); err != nil {
		log.Fatal(err)
	}
	urls := make([]string, 0, len(status))
	for u := range status {
		urls = append(urls, u)
	}
	sort.Strings(urls)
	for _, u := range urls {
		fmt.Println(status[u], u)
	}
	// Output:
	// 200 http://www.example.com/
	// 200 http://www.example.com/a
	// 302 http://www.example.com/b
	// 503 http://www.example.com/c
}
