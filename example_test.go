package crawl_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/asyncrawl/crawl"
)

// exampleSite serves pages, each a path and its HTML body, on loopback.
func exampleSite(pages map[string]string) *httptest.Server {
	mux := http.NewServeMux()
	for path, body := range pages {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, body)
		})
	}
	return httptest.NewServer(mux)
}

// exampleCollect returns a result hook and a function that returns the
// Results the hook was given, sorted by URL. The hook is safe for
// concurrent use, as a result hook must be.
func exampleCollect() (hook func(crawl.Result), sorted func() []crawl.Result) {
	var mu sync.Mutex
	var all []crawl.Result
	hook = func(r crawl.Result) {
		mu.Lock()
		all = append(all, r)
		mu.Unlock()
	}
	sorted = func() []crawl.Result {
		mu.Lock()
		defer mu.Unlock()
		out := slices.Clone(all)
		sort.Slice(out, func(i, j int) bool { return out[i].URL < out[j].URL })
		return out
	}
	return hook, sorted
}

// examplePath returns the path and query of a URL, the part of it that is
// the same in every run (the test server's port is not).
func examplePath(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	return u.RequestURI()
}

// This example crawls a small site: a redirect, a missing page and a link to
// another host, which is out of scope and not fetched.
func ExampleCrawler_Run() {
	mux := http.NewServeMux()
	page := func(body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, body)
		}
	}
	mux.HandleFunc("/{$}", page(`<a href="/about">About</a> <a href="/blog/">Blog</a> <a href="https://elsewhere.example/">Elsewhere</a>`))
	mux.HandleFunc("/about", page(`<a href="/">Home</a> <a href="/old-blog">Old blog</a>`))
	mux.HandleFunc("/blog/", page(`<a href="first#comments">First post</a> <a href="/missing">Gone</a>`))
	mux.HandleFunc("/blog/first", page(`<a href="../about">About</a>`))
	mux.Handle("/old-blog", http.RedirectHandler("/blog/", http.StatusMovedPermanently))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	var mu sync.Mutex
	var results []crawl.Result
	c, err := crawl.New(
		crawl.WithWorkers(4),
		crawl.WithResultHook(func(r crawl.Result) {
			mu.Lock() // the hook is called from several workers at once
			results = append(results, r)
			mu.Unlock()
		}),
	)
	if err != nil {
		log.Fatal(err)
	}
	stats, err := c.Run(context.Background(), srv.URL)
	if err != nil {
		log.Fatal(err)
	}

	// Workers finish in any order; sort for a stable listing.
	sort.Slice(results, func(i, j int) bool { return results[i].URL < results[j].URL })
	for _, r := range results {
		path := strings.TrimPrefix(r.URL, srv.URL)
		switch r.Kind() {
		case "redirect":
			fmt.Printf("%-12s %d %s -> %s\n", path, r.Status, r.Kind(), strings.TrimPrefix(r.NextURL, srv.URL))
		case "html":
			fmt.Printf("%-12s %d %s, %d links\n", path, r.Status, r.Kind(), r.NumURLs)
		default:
			fmt.Printf("%-12s %d %s\n", path, r.Status, r.Kind())
		}
	}
	fmt.Printf("done %d: html %d, redirects %d, errors %d, failures %d\n",
		stats.Done, stats.HTML, stats.Redirects, stats.Errors, stats.Failures)
	// Output:
	// /            200 html, 2 links
	// /about       200 html, 2 links
	// /blog/       200 html, 2 links
	// /blog/first  200 html, 1 links
	// /missing     404 error
	// /old-blog    301 redirect -> /blog/
	// done 6: html 4, redirects 1, errors 1, failures 0
}

// This example skips every URL with a query string, such as the sort orders
// and pages of a listing, which would otherwise multiply the crawl. The root
// is always fetched, filter or not.
func ExampleWithFilter() {
	srv := exampleSite(map[string]string{
		"/{$}":      `<a href="/list">Products</a> <a href="/about">About</a>`,
		"/list":     `<a href="/list?sort=price">By price</a> <a href="/list?page=2">Next</a> <a href="/item/1">One</a> <a href="/item/2?ref=list">Two</a>`,
		"/item/{n}": `<a href="/list">Back</a>`,
		"/about":    `<a href="/">Home</a>`,
	})
	defer srv.Close()

	hook, sorted := exampleCollect()
	c, err := crawl.New(
		crawl.WithFilter(func(u *url.URL) bool { return u.RawQuery == "" }),
		crawl.WithResultHook(hook),
	)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := c.Run(context.Background(), srv.URL+"/?from=example"); err != nil {
		log.Fatal(err)
	}
	for _, r := range sorted() {
		fmt.Println(examplePath(r.URL), r.Status)
	}
	// Output:
	// / 200
	// /?from=example 200
	// /about 200
	// /item/1 200
	// /list 200
}

// This example adds links the default extractor cannot see: those listed,
// one absolute URL a line, in a plain-text sitemap given as a second root.
// For every other page it falls back to crawl.ExtractLinks.
func ExampleWithLinkExtractor() {
	mux := http.NewServeMux()
	for _, path := range []string{"/{$}", "/docs", "/orphan", "/orphan/child"} {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			switch r.URL.Path {
			case "/":
				fmt.Fprint(w, `<a href="/docs">Docs</a>`)
			case "/orphan":
				fmt.Fprint(w, `<a href="/orphan/child">Child</a>`)
			default:
				fmt.Fprint(w, `<p>Nothing links to the orphans.</p>`)
			}
		})
	}
	mux.HandleFunc("/sitemap.txt", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintf(w, "http://%s/docs\n\n  http://%s/orphan  \n", r.Host, r.Host)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	sitemap := func(ctx context.Context, p *crawl.Page) ([]*url.URL, error) {
		if p.ContentType != "text/plain" || !strings.HasSuffix(p.URL.Path, "/sitemap.txt") {
			return crawl.ExtractLinks(ctx, p)
		}
		var links []*url.URL
		sc := bufio.NewScanner(bytes.NewReader(p.Body))
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			if line == "" {
				continue
			}
			u, err := url.Parse(line)
			if err != nil {
				continue // a bad line does not spoil the others
			}
			links = append(links, u)
		}
		return links, sc.Err()
	}

	hook, sorted := exampleCollect()
	c, err := crawl.New(crawl.WithLinkExtractor(sitemap), crawl.WithResultHook(hook))
	if err != nil {
		log.Fatal(err)
	}
	if _, err := c.Run(context.Background(), srv.URL, srv.URL+"/sitemap.txt"); err != nil {
		log.Fatal(err)
	}
	for _, r := range sorted() {
		fmt.Println(examplePath(r.URL), r.ContentType, r.NumURLs)
	}
	// Output:
	// / text/html 1
	// /docs text/html 0
	// /orphan text/html 1
	// /orphan/child text/html 0
	// /sitemap.txt text/plain 2
}

// This example is the pattern the crawler is built on, the asyncio.Queue of
// "500 Lines or Less": workers Get an item, Put the new items it leads to,
// then call TaskDone; Join returns once every item put has been done, and
// cancelling the workers' context stops them. A map of links stands in for
// the web.
func ExampleQueue() {
	web := map[string][]string{
		"/":      {"/a", "/b"},
		"/a":     {"/b", "/c"},
		"/b":     {"/", "/c", "/d"},
		"/c":     {},
		"/d":     {"/a", "/e"},
		"/e":     {},
		"/never": {"/"},
	}
	q := crawl.NewQueue[string](0)
	var mu sync.Mutex
	seen := map[string]bool{"/": true}
	var visited []string

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := q.Put(ctx, "/"); err != nil {
		log.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			for {
				page, err := q.Get(ctx) // yield from q.get()
				if err != nil {
					return // cancelled: the crawl is over
				}
				mu.Lock()
				visited = append(visited, page)
				var next []string
				for _, link := range web[page] {
					if !seen[link] {
						seen[link] = true
						next = append(next, link)
					}
				}
				mu.Unlock()
				for _, link := range next {
					// Put before TaskDone, so Join cannot return while
					// work is still to come.
					if err := q.Put(ctx, link); err != nil {
						return
					}
				}
				if err := q.TaskDone(); err != nil {
					log.Fatal(err)
				}
			}
		})
	}
	if err := q.Join(ctx); err != nil { // yield from q.join()
		log.Fatal(err)
	}
	cancel() // for w in workers: w.cancel()
	wg.Wait()

	sort.Strings(visited)
	fmt.Println("visited:", visited)
	fmt.Println("queued:", q.Len(), "unfinished:", q.Unfinished())
	// Output:
	// visited: [/ /a /b /c /d /e]
	// queued: 0 unfinished: 0
}

// This example waits for a batch of jobs. A bounded queue makes the producer
// wait while the worker is two jobs behind; Join returns once the worker has
// called TaskDone for every job.
func ExampleQueue_Join() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	q := crawl.NewQueue[int](2)

	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			job, err := q.Get(ctx)
			if err != nil {
				return
			}
			fmt.Println("job", job, "done")
			q.TaskDone()
		}
	})
	for job := 1; job <= 5; job++ {
		if err := q.Put(ctx, job); err != nil { // blocks while 2 are queued
			log.Fatal(err)
		}
	}
	if err := q.Join(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println("all done, unfinished:", q.Unfinished())
	cancel()
	wg.Wait()
	// Output:
	// job 1 done
	// job 2 done
	// job 3 done
	// job 4 done
	// job 5 done
	// all done, unfinished: 0
}

// Result.WriteReportLine writes a Result as a line of crawl.py's report;
// Stats.WriteReport writes the summary after the lines.
func ExampleResult_WriteReportLine() {
	for _, r := range []crawl.Result{
		{URL: "http://example.com/", Status: 200, ContentType: "text/html", Encoding: "utf-8", Size: 1256, NumURLs: 12, NumNewURLs: 9},
		{URL: "http://example.com/logo.png", Status: 200, ContentType: "image/png", Size: 4096},
		{URL: "http://example.com/old", Status: 301, NextURL: "http://example.com/new"},
		{URL: "http://example.com/private/", Err: errors.New("fetch http://example.com/private/: disallowed by robots.txt")},
	} {
		r.WriteReportLine(os.Stdout)
	}
	// Output:
	// http://example.com/ 200 text/html utf-8 1256 9/12
	// http://example.com/logo.png 200 image/png ? 4096 0/0
	// http://example.com/old 301 redirect http://example.com/new
	// http://example.com/private/ error fetch http://example.com/private/: disallowed by robots.txt
}

// A crawl that a program feeds while it runs: Start returns at once, Add
// queues URLs found elsewhere, and the crawl ends once Close was called
// and nothing is left.
func ExampleCrawler_Start() {
	site := exampleSite(map[string]string{
		"/":        `<a href="/news">News</a>`,
		"/news":    `News.`,
		"/archive": `<a href="/news">News</a> <a href="/old">Old</a>`,
		"/old":     `Old.`,
	})
	defer site.Close()
	hook, sorted := exampleCollect()
	c, err := crawl.New(crawl.WithResultHook(hook))
	if err != nil {
		log.Fatal(err)
	}
	cr, err := c.Start(context.Background(), site.URL+"/")
	if err != nil {
		log.Fatal(err)
	}
	// From another source: a queue, a user, another crawl. A URL
	// refused is an error; the others are added.
	n, err := cr.Add(site.URL+"/archive", site.URL+"/news", "https://elsewhere.example/")
	fmt.Println("new in scope:", n >= 1)
	fmt.Println("refused as out of scope:", errors.Is(err, crawl.ErrOutOfScope))
	cr.Close()
	stats, err := cr.Wait()
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range sorted() {
		fmt.Println(strings.TrimPrefix(r.URL, site.URL), r.Status)
	}
	fmt.Println("done:", stats.Done)
	// Output:
	// new in scope: true
	// refused as out of scope: true
	// / 200
	// /archive 200
	// /news 200
	// /old 200
	// done: 4
}
