// Command basic serves a small site on loopback, crawls it and prints the
// report. It needs no network:
//
//	go run ./examples/basic
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"sync"

	"github.com/asyncrawl/crawl"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// run serves the site, crawls it and writes the report to out.
func run(ctx context.Context, out io.Writer) error {
	mux := http.NewServeMux()
	page := func(body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, body)
		}
	}
	mux.HandleFunc("/{$}", page(`<h1>Home</h1><a href="/about">About</a> <a href="/blog/">Blog</a> <a href="https://elsewhere.example/">Elsewhere</a>`))
	mux.HandleFunc("/about", page(`<p>About us. <a href="/">Home</a> <a href="/old-blog">Old blog</a></p>`))
	mux.HandleFunc("/blog/", page(`<a href="first">First post</a> <a href="second#comments">Second post</a> <a href="/missing">Gone</a>`))
	mux.HandleFunc("/blog/first", page(`<p>First. <a href="../about">About</a></p>`))
	mux.HandleFunc("/blog/second", page(`<p>Second. <img src="/logo.png"> <a href="/logo.png">Logo</a></p>`))
	mux.HandleFunc("/logo.png", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Write([]byte("\x89PNG\r\n\x1a\n"))
	})
	mux.Handle("/old-blog", http.RedirectHandler("/blog/", http.StatusMovedPermanently))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	var mu sync.Mutex
	var results []crawl.Result
	c, err := crawl.New(
		crawl.WithWorkers(4),
		crawl.WithResultHook(func(r crawl.Result) {
			mu.Lock()
			results = append(results, r)
			mu.Unlock()
		}),
	)
	if err != nil {
		return err
	}
	stats, err := c.Run(ctx, srv.URL)
	if err != nil {
		return err
	}
	sort.Slice(results, func(i, j int) bool { return results[i].URL < results[j].URL })
	for _, r := range results {
		if err := r.WriteReportLine(out); err != nil {
			return err
		}
	}
	return stats.WriteReport(out)
}
