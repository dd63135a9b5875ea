package scrape_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/asyncrawl/crawl"
	"github.com/asyncrawl/crawl/scrape"
)

// benchPages is the number of pages of the benchmark site.
const benchPages = 2000

// benchSite serves benchPages pages of about 2 KB under /p/N.html, each
// with a title, a heading, 20 links (page N links to N+1, so that every
// page is reached from /p/0.html) and a paragraph, as the crawl package's
// own BenchmarkCrawl site does.
func benchSite(b *testing.B) *httptest.Server {
	pages := make([][]byte, benchPages)
	for n := range pages {
		var sb strings.Builder
		fmt.Fprintf(&sb, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Page %d</title>\n", n)
		sb.WriteString(`<link rel="stylesheet" href="/static/site.css"></head><body>` + "\n")
		fmt.Fprintf(&sb, "<h1>Page %d</h1>\n<ul>\n", n)
		for i := range 20 {
			to := (n + 1 + i*97) % benchPages
			fmt.Fprintf(&sb, "<li><a class=\"item\" href=\"/p/%d.html\">Item %d of page %d</a></li>\n", to, i, n)
		}
		sb.WriteString("</ul>\n<p>Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua.</p>\n</body></html>\n")
		pages[n] = []byte(sb.String())
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name, _ := strings.CutPrefix(r.URL.Path, "/p/")
		n, err := strconv.Atoi(strings.TrimSuffix(name, ".html"))
		if err != nil || n < 0 || n >= benchPages {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(pages[n])
	}))
	b.Cleanup(srv.Close)
	return srv
}

// BenchmarkCrawl crawls the benchmark site with 16 workers, alone and
// with a Collector of three selectors (the title's text, the heading's,
// and each link's absolute URL), so that the difference of their
// ns/page and B/page is what the Collector costs per page. The figures
// count the in-process server's work and allocations as well as the
// crawler's; cpu-ns/page is the CPU time of the whole process (on unix),
// which other processes on the machine change less than the wall time.
func BenchmarkCrawl(b *testing.B) {
	b.Run("alone", func(b *testing.B) { benchCrawl(b, nil) })
	b.Run("scrape", func(b *testing.B) {
		c := scrape.New()
		var n atomic.Int64
		for _, reg := range []struct {
			selector string
			f        func(*scrape.Element)
		}{
			{"title", func(e *scrape.Element) { n.Add(int64(len(e.Text()))) }},
			{"h1", func(e *scrape.Element) { n.Add(int64(len(e.Text()))) }},
			{"a.item", func(e *scrape.Element) { n.Add(int64(len(e.AbsURL("href")))) }},
		} {
			if err := c.OnHTML(reg.selector, reg.f); err != nil {
				b.Fatal(err)
			}
		}
		benchCrawl(b, c)
		if n.Load() == 0 {
			b.Fatal("the callbacks found nothing")
		}
	})
}

func benchCrawl(b *testing.B, c *scrape.Collector) {
	srv := benchSite(b)
	opts := []crawl.Option{crawl.WithWorkers(16), crawl.WithHostWorkers(16), crawl.WithRobots(false)}
	if c != nil {
		opts = append(opts, crawl.WithPageHook(c.Hook))
	}
	cr, err := crawl.New(opts...)
	if err != nil {
		b.Fatal(err)
	}
	var ms0, ms1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms0)
	cpu0, cpuOK := cpuTime()
	b.ResetTimer()
	for b.Loop() {
		stats, err := cr.Run(context.Background(), srv.URL+"/p/0.html")
		if err != nil {
			b.Fatal(err)
		}
		if stats.HTML != benchPages || stats.Failures != 0 || stats.Errors != 0 {
			b.Fatalf("got %d pages, %d failures, %d errors; want %d pages, none failed", stats.HTML, stats.Failures, stats.Errors, benchPages)
		}
	}
	b.StopTimer()
	cpu1, _ := cpuTime()
	runtime.ReadMemStats(&ms1)
	pages := float64(benchPages) * float64(b.N)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/pages, "ns/page")
	if cpuOK {
		b.ReportMetric(float64((cpu1-cpu0).Nanoseconds())/pages, "cpu-ns/page")
	}
	b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/pages, "allocs/page")
	b.ReportMetric(float64(ms1.TotalAlloc-ms0.TotalAlloc)/pages, "B/page")
}

// BenchmarkHook runs a Collector of the three selectors of
// BenchmarkCrawl/scrape on one page of the benchmark site, without the
// crawl: the helper's own cost per page, parse included.
func BenchmarkHook(b *testing.B) {
	for _, bc := range []struct {
		name      string
		selectors int
	}{{"parse", 0}, {"3selectors", 3}} {
		b.Run(bc.name, func(b *testing.B) {
			srv := benchSite(b)
			resp, err := http.Get(srv.URL + "/p/1.html")
			if err != nil {
				b.Fatal(err)
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				b.Fatal(err)
			}
			u, _ := url.Parse(srv.URL + "/p/1.html")
			p := &crawl.Page{URL: u, Base: u, Status: 200, ContentType: "text/html", Encoding: "utf-8", Body: body}
			c := scrape.New()
			var n int
			regs := []struct {
				selector string
				f        func(*scrape.Element)
			}{
				{"title", func(e *scrape.Element) { n += len(e.Text()) }},
				{"h1", func(e *scrape.Element) { n += len(e.Text()) }},
				{"a.item", func(e *scrape.Element) { n += len(e.AbsURL("href")) }},
			}
			for _, reg := range regs[:bc.selectors] {
				if err := c.OnHTML(reg.selector, reg.f); err != nil {
					b.Fatal(err)
				}
			}
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				if bc.selectors == 0 {
					scrape.Document(p)
				} else {
					c.Hook(p)
				}
			}
			if bc.selectors > 0 && n == 0 {
				b.Fatal("the callbacks found nothing")
			}
		})
	}
}
