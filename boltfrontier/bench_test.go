package boltfrontier

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/asyncrawl/crawl"
)

// BenchmarkAck measures a URL's way through the Frontier: Take, then Ack
// with a Result and 10 links, all new (fan-out 10), over 100 hosts; one
// op is one URL. It runs sequentially and with 8 workers, with the
// default fsync per commit, NoSync, and SyncAck.
func BenchmarkAck(b *testing.B) {
	for _, c := range []struct {
		name    string
		opts    Options
		workers int
	}{
		{"sync", Options{}, 1},
		{"sync/8workers", Options{}, 8},
		{"nosync", Options{NoSync: true}, 1},
		{"nosync/8workers", Options{NoSync: true}, 8},
		{"syncack/8workers", Options{SyncAck: true}, 8},
	} {
		b.Run(c.name, func(b *testing.B) {
			f, err := Open(filepath.Join(b.TempDir(), "bench.db"), &c.opts)
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			ctx := context.Background()
			f.Start(ctx, crawl.Policy{HostWorkers: 1000})
			var next int
			var mu sync.Mutex
			links := func() []crawl.Request {
				mu.Lock()
				defer mu.Unlock()
				rs := make([]crawl.Request, 10)
				for i := range rs {
					next++
					rs[i] = crawl.Request{URL: fmt.Sprintf("https://host%d.example.com/some/path/page-%d.html", next%100, next), Depth: 1}
				}
				return rs
			}
			f.Push(ctx, links()...)
			var n int
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			var wg sync.WaitGroup
			for range c.workers {
				wg.Go(func() {
					for {
						mu.Lock()
						if n >= b.N {
							mu.Unlock()
							return
						}
						n++
						mu.Unlock()
						l, err := f.Take(ctx)
						if err != nil {
							b.Error(err)
							return
						}
						res := &crawl.Result{URL: l.URL, Status: 200, Size: 1000, ContentType: "text/html"}
						if _, err := f.Ack(ctx, l, crawl.Outcome{Result: res, Links: links()}); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "urls/s")
		})
	}
}

// TestMemory reports the memory a Frontier holds with many URLs queued:
// set BOLT_MEM to a number of URLs (BOLT_MEM=1 for 100,000 then
// 1,000,000). It pushes them over 1,000 hosts, takes and acks 1,000,
// and logs HeapInuse after a GC and the process's peak RSS (VmHWM), then
// how long Open takes to read the file back (its seen log above all);
// and the same, but Open, for a crawl.MemoryFrontier when
// BOLT_MEM_COMPARE is set.
func TestMemory(t *testing.T) {
	env := os.Getenv("BOLT_MEM")
	if env == "" {
		t.Skip("set BOLT_MEM=1 (or a number of URLs) to run")
	}
	sizes := []int{100_000, 1_000_000}
	if n, _ := strconv.Atoi(env); n > 1 {
		sizes = []int{n}
	}
	ctx := context.Background()
	for _, n := range sizes {
		var f crawl.Frontier
		name := "boltfrontier"
		path := filepath.Join(t.TempDir(), "mem.db")
		if os.Getenv("BOLT_MEM_COMPARE") != "" {
			f, name = crawl.NewMemoryFrontier(), "MemoryFrontier"
		} else {
			bf, err := Open(path, nil)
			if err != nil {
				t.Fatal(err)
			}
			f = bf
		}
		f.Start(ctx, crawl.Policy{HostWorkers: 4})
		start := time.Now()
		batch := make([]crawl.Request, 0, 1000)
		for i := range n {
			batch = append(batch, crawl.Request{URL: fmt.Sprintf("https://host%d.example.com/some/path/page-%d.html", i%1000, i), Depth: 3})
			if len(batch) == cap(batch) || i == n-1 {
				if _, err := f.Push(ctx, batch...); err != nil {
					t.Fatal(err)
				}
				batch = batch[:0]
			}
		}
		pushed := time.Since(start)
		for range 1000 {
			l, err := f.Take(ctx)
			if err != nil {
				t.Fatal(err)
			}
			f.Ack(ctx, l, crawl.Outcome{Result: &crawl.Result{URL: l.URL}})
		}
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		c, _ := f.Counts(ctx)
		t.Logf("%s: %d URLs queued (pushed in %v): HeapInuse %.1f MiB, VmHWM %s, VmRSS %s (RssAnon %s, RssFile %s: the mapped file)",
			name, c.Queued, pushed.Round(time.Millisecond), float64(ms.HeapInuse)/(1<<20), procStatus("VmHWM"), procStatus("VmRSS"), procStatus("RssAnon"), procStatus("RssFile"))
		f.Close()
		if name == "boltfrontier" {
			start := time.Now()
			bf, err := Open(path, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: Open of the file again: %v", name, time.Since(start).Round(time.Millisecond))
			bf.Close()
		}
	}
}

// procStatus returns a field of /proc/self/status.
func procStatus(field string) string {
	fh, err := os.Open("/proc/self/status")
	if err != nil {
		return "?"
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "?"
}
