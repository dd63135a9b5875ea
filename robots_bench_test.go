package crawl

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/asyncrawl/crawl/internal/robots"
)

// hostilePages is the number of pages of each site of
// BenchmarkHostileRobots.
const hostilePages = 3000

// newPagesServer starts a site of hostilePages pages under /p/N.html,
// page N linking to page N+1 and to nine others, drawn from a generator
// seeded with seed, and serving robots as its /robots.txt.
func newPagesServer(b *testing.B, seed uint64, robots []byte, n int) *httptest.Server {
	b.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	pages := make([][]byte, n)
	for i := range pages {
		var sb strings.Builder
		fmt.Fprintf(&sb, "<!DOCTYPE html>\n<html><head><title>Page %d</title></head><body>\n", i)
		fmt.Fprintf(&sb, "<a href=\"/p/%d.html\">next</a>\n", (i+1)%n)
		for range 9 {
			fmt.Fprintf(&sb, "<a href=\"/p/%d.html\">item</a>\n", rng.IntN(n))
		}
		sb.WriteString("</body></html>\n")
		pages[i] = []byte(sb.String())
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			w.Header().Set("Content-Type", "text/plain")
			w.Write(robots)
			return
		}
		name, ok := strings.CutPrefix(r.URL.Path, "/p/")
		k, err := strconv.Atoi(strings.TrimSuffix(name, ".html"))
		if !ok || err != nil || k < 0 || k >= n {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(pages[k])
	}))
	b.Cleanup(srv.Close)
	return srv
}

// BenchmarkHostileRobots crawls site B, hostilePages pages with an empty
// robots.txt, alone ("alone") and in one Run with site A, a tenth as many pages
// behind the "mix" hostile robots.txt of 500 KiB ("beside"), with 16
// workers. The servers listen on different loopback ports, so they are
// different hosts. The metric b-sec is B's crawl time, from the start of
// Run to B's last Result; issue 11 asks that beside be at most 1.5 times
// alone. "beside-plain" is the control: B beside a site like A with an
// empty robots.txt, which costs B its share of the CPU but nothing of
// robots.txt; on a machine of few cores it, not alone, is what beside
// should be compared with.
//
//	go test -run '^$' -bench HostileRobots -benchtime 3x .
func BenchmarkHostileRobots(b *testing.B) {
	// Site A is a tenth of B's size: what B may lose beside it is the
	// cost of A's robots.txt, not the sharing of workers and cores with a
	// crawl as large as its own.
	siteA := newPagesServer(b, 1, robots.Hostile("mix"), hostilePages/10)
	siteB := newPagesServer(b, 2, nil, hostilePages)
	plainA := newPagesServer(b, 1, nil, hostilePages/10)
	for _, c := range []struct {
		name  string
		roots []string
	}{
		{"alone", []string{siteB.URL + "/p/0.html"}},
		{"beside", []string{siteA.URL + "/p/0.html", siteB.URL + "/p/0.html"}},
		{"beside-plain", []string{plainA.URL + "/p/0.html", siteB.URL + "/p/0.html"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			var total time.Duration
			for b.Loop() {
				var (
					start = time.Now()
					lastB atomic.Int64 // nanoseconds from start to B's last Result
					numB  atomic.Int64
				)
				hook := func(r Result) {
					if !strings.HasPrefix(r.URL, siteB.URL+"/") {
						return
					}
					numB.Add(1)
					d := int64(time.Since(start))
					for {
						old := lastB.Load()
						if d <= old || lastB.CompareAndSwap(old, d) {
							break
						}
					}
				}
				cr, err := New(WithWorkers(16), WithResultHook(hook))
				if err != nil {
					b.Fatal(err)
				}
				if _, err := cr.Run(context.Background(), c.roots...); err != nil {
					b.Fatal(err)
				}
				if got := numB.Load(); got != hostilePages {
					b.Fatalf("results of site B: got %d, want %d", got, hostilePages)
				}
				total += time.Duration(lastB.Load())
			}
			b.ReportMetric(total.Seconds()/float64(b.N), "b-sec")
		})
	}
}
