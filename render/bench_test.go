package render_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/asyncrawl/crawl"
	"github.com/asyncrawl/crawl/crawltest"
	"github.com/asyncrawl/crawl/render"
)

// benchPages is the size of the benchmark's site.
const benchPages = 60

// benchSite serves a tree of benchPages pages: each links to its two
// children in its markup (so a static crawl meets every page) and, from a
// script, fetches a JSON document and adds a paragraph, as a small app does.
func benchSite(tb testing.TB) *crawltest.Site {
	site := crawltest.Start(tb)
	h := site.Host("bench.example")
	for i := range benchPages {
		var links strings.Builder
		for _, c := range []int{2*i + 1, 2*i + 2} {
			if c < benchPages {
				fmt.Fprintf(&links, `<a href="/p/%d">page %d</a> `, c, c)
			}
		}
		h.Body(fmt.Sprintf("/p/%d", i), "text/html; charset=utf-8", fmt.Sprintf(`<!doctype html><html><head><title>page %d</title></head>
<body><nav>%s</nav><main id="app"></main><script>
fetch("/api/%d.json").then(r => r.json()).then(d => {
  const p = document.createElement("p"); p.textContent = d.text; document.getElementById("app").appendChild(p);
});
</script></body></html>`, i, links.String(), i))
		h.Body(fmt.Sprintf("/api/%d.json", i), "application/json", fmt.Sprintf(`{"text": "item %d"}`, i))
	}
	return site
}

// BenchmarkRender crawls the benchmark site statically and rendered with 1,
// 4 and 8 tabs, and reports pages/s and the peak memory of the browser
// (the sum of its processes' proportional set sizes, sampled every 50 ms).
func BenchmarkRender(b *testing.B) {
	needBrowser(b)
	for _, tabs := range []int{0, 1, 4, 8} {
		name := "static"
		if tabs > 0 {
			name = fmt.Sprintf("tabs=%d", tabs)
		}
		b.Run(name, func(b *testing.B) {
			site := benchSite(b)
			opts := []crawl.Option{crawl.WithHTTPClient(site.Client()), crawl.WithRobots(false), crawl.WithWorkers(16), crawl.WithHostWorkers(16)}
			if tabs > 0 {
				opts = append(opts, crawl.WithRenderer(render.New(render.Options{Tabs: tabs, Clicks: -1}), crawl.RenderAll))
			}
			c, err := crawl.New(opts...)
			if err != nil {
				b.Fatal(err)
			}
			stop := make(chan struct{})
			var peak int64
			var wg sync.WaitGroup
			wg.Go(func() {
				t := time.NewTicker(50 * time.Millisecond)
				defer t.Stop()
				for {
					peak = max(peak, browserPSS())
					select {
					case <-stop:
						return
					case <-t.C:
					}
				}
			})
			b.ResetTimer()
			start := time.Now()
			pages := 0
			for range b.N {
				stats, err := c.Run(context.Background(), "http://bench.example/p/0")
				if err != nil {
					b.Fatal(err)
				}
				pages += stats.Done
			}
			elapsed := time.Since(start)
			b.StopTimer()
			close(stop)
			wg.Wait()
			if pages != b.N*benchPages {
				b.Fatalf("crawled %d pages, want %d", pages, b.N*benchPages)
			}
			b.ReportMetric(float64(pages)/elapsed.Seconds(), "pages/s")
			b.ReportMetric(float64(peak)/(1<<20), "browser-MB")
		})
	}
}

// browserPSS returns the sum of the proportional set sizes, in bytes, of
// the processes of the browsers chromedp started.
func browserPSS() int64 {
	dirs, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	var sum int64
	for _, d := range dirs {
		cmd, err := os.ReadFile("/proc/" + d.Name() + "/cmdline")
		if err != nil || !strings.Contains(string(cmd), "chromedp-runner") {
			continue
		}
		f, err := os.Open("/proc/" + d.Name() + "/smaps_rollup")
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "Pss:"); ok {
				kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
				sum += kb << 10
			}
		}
		f.Close()
	}
	return sum
}
