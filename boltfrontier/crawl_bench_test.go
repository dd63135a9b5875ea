package boltfrontier_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/asyncrawl/crawl"
	"github.com/asyncrawl/crawl/boltfrontier"
)

// crawlPages is the size of the site of BenchmarkCrawlFrontier, that of
// the shared benchmark's compare.sh.
const crawlPages = 10_000

// newCrawlSite serves crawlPages pages of 20 links each, as compare.sh's
// site does: most links go to pages already seen.
func newCrawlSite(b *testing.B) *httptest.Server {
	rng := rand.New(rand.NewPCG(1, 2))
	pages := make([][]byte, crawlPages)
	for i := range pages {
		var sb strings.Builder
		fmt.Fprintf(&sb, "<html><body><h1>%d</h1>\n", i)
		fmt.Fprintf(&sb, "<a href=\"/p/%d\">next</a>\n", (i+1)%crawlPages)
		for range 19 {
			fmt.Fprintf(&sb, "<a href=\"/p/%d\">x</a>\n", rng.IntN(crawlPages))
		}
		sb.WriteString("</body></html>\n")
		pages[i] = []byte(sb.String())
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/p/"))
		if err != nil || n < 0 || n >= crawlPages {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(pages[n])
	}))
	b.Cleanup(srv.Close)
	return srv
}

// BenchmarkCrawlFrontier crawls the 10,000-page site with 16 workers, once
// with the in-memory frontier and once with a bbolt state file, in one run
// of the benchmark, so that their pages/s compare on the same machine at
// the same moment.
func BenchmarkCrawlFrontier(b *testing.B) {
	srv := newCrawlSite(b)
	for _, tt := range []struct {
		name string
		open func(b *testing.B) crawl.Frontier
	}{
		{"memory", func(*testing.B) crawl.Frontier { return crawl.NewMemoryFrontier() }},
		{"bolt", func(b *testing.B) crawl.Frontier {
			f, err := boltfrontier.Open(filepath.Join(b.TempDir(), "state"), nil)
			if err != nil {
				b.Fatal(err)
			}
			return f
		}},
		{"bolt-nosync", func(b *testing.B) crawl.Frontier {
			f, err := boltfrontier.Open(filepath.Join(b.TempDir(), "state"), &boltfrontier.Options{NoSync: true})
			if err != nil {
				b.Fatal(err)
			}
			return f
		}},
	} {
		b.Run(tt.name, func(b *testing.B) {
			pages := 0
			for b.Loop() {
				f := tt.open(b)
				c, err := crawl.New(crawl.WithWorkers(16), crawl.WithHostWorkers(16), crawl.WithFrontier(f))
				if err != nil {
					b.Fatal(err)
				}
				stats, err := c.Run(context.Background(), srv.URL+"/p/0")
				if err != nil {
					b.Fatal(err)
				}
				if stats.HTML != crawlPages || stats.Failures != 0 {
					b.Fatalf("got %d pages, %d failures; want %d, 0", stats.HTML, stats.Failures, crawlPages)
				}
				pages += stats.HTML
				f.Close()
			}
			b.ReportMetric(float64(pages)/b.Elapsed().Seconds(), "pages/s")
		})
	}
}
