package redisfrontier

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/asyncrawl/crawl"
	"github.com/asyncrawl/crawl/redisfrontier/redistest"
	"github.com/redis/go-redis/v9"
)

// BenchmarkScriptCalls tells a script call's cost from a lease's: b.N
// leases taken by take calls of n leases each, then acked (each with 10
// links, one new) by k Acks at once, which go in calls of up to k acks,
// on one redis-server holding 100 hosts' URLs. It reports, from INFO
// commandstats, the server's time in the scripts (EVALSHA) a call and a
// URL, and the URLs a call.
func BenchmarkScriptCalls(b *testing.B) {
	for _, n := range []int{1, 16} {
		b.Run("take/n="+strconv.Itoa(n), func(b *testing.B) { benchCalls(b, n, 0) })
	}
	for _, k := range []int{1, 16} {
		b.Run("ack/k="+strconv.Itoa(k), func(b *testing.B) { benchCalls(b, 16, k) })
	}
}

// benchCalls takes b.N leases n at a time and, with k > 0, acks them k
// at once, measuring the takes (k 0) or the acks.
func benchCalls(b *testing.B, n, k int) {
	ctx := context.Background()
	s := redistest.Start(b)
	c := redis.NewClient(&redis.Options{Addr: s.Addr()})
	defer c.Close()
	f := New(c, &Options{Name: "calls"})
	defer f.Close()
	if err := f.Start(ctx, crawl.Policy{HostWorkers: 1 << 20, LeaseTerm: time.Minute}); err != nil {
		b.Fatal(err)
	}
	url := func(i int) crawl.Request {
		return crawl.Request{URL: "https://h" + strconv.Itoa(i%100) + ".example/p/" + strconv.Itoa(i), Depth: 1}
	}
	reqs := make([]crawl.Request, 0, maxBatch)
	for i := 0; i < b.N; i++ {
		reqs = append(reqs, url(i))
		if len(reqs) == maxBatch || i == b.N-1 {
			if _, err := f.Push(ctx, reqs...); err != nil {
				b.Fatal(err)
			}
			reqs = reqs[:0]
		}
	}
	var ls []*crawl.Lease
	take := func() {
		for len(ls) < b.N {
			got, _, err := f.takeN(ctx, min(n, b.N-len(ls)))
			if err != nil {
				b.Fatal(err)
			}
			ls = append(ls, got...)
		}
	}
	if k > 0 {
		take()
	}
	calls0, usec0 := evalshaStats(b, c)
	b.ResetTimer()
	if k == 0 {
		take()
	} else {
		var (
			wg   sync.WaitGroup
			mu   sync.Mutex
			next = b.N
		)
		for range k {
			wg.Go(func() {
				links := make([]crawl.Request, 10)
				for {
					mu.Lock()
					if len(ls) == 0 {
						mu.Unlock()
						return
					}
					l := ls[0]
					ls = ls[1:]
					links[0] = url(next) // new; the others seen
					next++
					mu.Unlock()
					for j := 1; j < len(links); j++ {
						links[j] = url(j)
					}
					if _, err := f.Ack(ctx, l, crawl.Outcome{Links: links, Result: &crawl.Result{URL: l.URL, Status: 200, ContentType: "text/html", Size: 1000}}); err != nil {
						b.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
	}
	b.StopTimer()
	calls1, usec1 := evalshaStats(b, c)
	calls := calls1 - calls0
	b.ReportMetric((usec1-usec0)/calls, "server-µs/call")
	b.ReportMetric((usec1-usec0)/float64(b.N), "server-µs/URL")
	b.ReportMetric(float64(b.N)/calls, "URLs/call")
}

// evalshaStats returns the EVALSHA calls the server has run and the
// microseconds it spent in them (INFO commandstats).
func evalshaStats(b *testing.B, c *redis.Client) (calls, usec float64) {
	info, err := c.Info(context.Background(), "commandstats").Result()
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(info, "\r\n") {
		v, ok := strings.CutPrefix(line, "cmdstat_evalsha:")
		if !ok {
			continue
		}
		for _, kv := range strings.Split(v, ",") {
			name, x, _ := strings.Cut(kv, "=")
			f, _ := strconv.ParseFloat(x, 64)
			switch name {
			case "calls":
				calls = f
			case "usec":
				usec = f
			}
		}
	}
	return calls, usec
}
