package redisfrontier_test

import (
	"context"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/asyncrawl/crawl"
	"github.com/asyncrawl/crawl/redisfrontier"
	"github.com/asyncrawl/crawl/redisfrontier/redistest"
	"github.com/redis/go-redis/v9"
)

// benchURL is the URL number i of the benchmark's site, on one of 100
// hosts. It is built without fmt, whose cost would count in the
// benchmark's client CPU as the frontier's.
func benchURL(i int) crawl.Request {
	b := make([]byte, 0, 40)
	b = append(b, "https://h"...)
	b = strconv.AppendInt(b, int64(i%100), 10)
	b = append(b, ".example/p/"...)
	b = strconv.AppendInt(b, int64(i), 10)
	return crawl.Request{URL: string(b), Depth: 1, Referrer: "https://h0.example/"}
}

// benchNumber reverses benchURL.
func benchNumber(url string) int {
	i, _ := strconv.Atoi(url[strings.LastIndexByte(url, '/')+1:])
	return i
}

// BenchmarkFrontier measures the frontier alone through one local
// redis-server with AOF everysec: 32 workers take a URL and ack it with 10
// links, until b.N URLs are acked, as the crawler's workers do: each acks
// with AckTake and calls Take only when that brought no lease
// ("ack+take": Ack then Take, two steps). With "new=1", the crawl starts from
// URLs 0 to 999 and URL i links to URLs i+1000, i+2000, ... i+10000, so
// that one link in ten is new (the others were pushed by URL i-1000 to
// i-9000), as in a crawl's steady state; with "new=10", it starts from URL
// 0 and URL i links to URLs 10i+1 to 10i+10, all new (the queue grows
// tenfold over the run). It reports URLs/s, acked.
func BenchmarkFrontier(b *testing.B) {
	steady := func(i, k int) int { return i + 1000*(k+1) }
	b.Run("new=1", func(b *testing.B) { benchFrontier(b, 1, 1000, steady, false) })
	b.Run("new=1,ack+take", func(b *testing.B) { benchFrontier(b, 1, 1000, steady, true) })
	b.Run("new=10", func(b *testing.B) { benchFrontier(b, 1, 1, func(i, k int) int { return 10*i + 1 + k }, false) })
	// Two Frontiers, as two crawler processes would have, 16 workers
	// each.
	b.Run("new=1,procs=2", func(b *testing.B) { benchFrontier(b, 2, 1000, steady, false) })
}

// BenchmarkCluster is BenchmarkFrontier's "new=1" on a crawl of
// DefaultShards shards: on one redis-server, and on a Redis Cluster of 3
// masters (and 3 replicas). server-µs/URL is the CPU time of every
// master together (the replicas' is left out).
func BenchmarkCluster(b *testing.B) {
	steady := func(i, k int) int { return i + 1000*(k+1) }
	b.Run("servers=1", func(b *testing.B) {
		s := redistest.Start(b)
		benchFrontierOn(b, 1, 1000, steady, false, []string{s.Addr()}, func() (*redisfrontier.Frontier, error) {
			return redisfrontier.Open(context.Background(), s.URL(), &redisfrontier.Options{Name: "bench", Shards: redisfrontier.DefaultShards})
		})
	})
	b.Run("masters=3", func(b *testing.B) {
		c := redistest.StartCluster(b, 3, 1)
		benchFrontierOn(b, 1, 1000, steady, false, c.Masters(), func() (*redisfrontier.Frontier, error) {
			return redisfrontier.OpenCluster(context.Background(), c.Addrs(), &redisfrontier.Options{Name: "bench"})
		})
	})
	b.Run("masters=3,procs=2", func(b *testing.B) {
		c := redistest.StartCluster(b, 3, 1)
		benchFrontierOn(b, 2, 1000, steady, false, c.Masters(), func() (*redisfrontier.Frontier, error) {
			return redisfrontier.OpenCluster(context.Background(), c.Addrs(), &redisfrontier.Options{Name: "bench"})
		})
	})
}

// benchFrontier runs BenchmarkFrontier with procs Frontiers from URLs 0
// to roots-1, with link(i, k) the number of URL i's link k; separate has
// the workers Ack then Take rather than AckTake.
//
// With $BENCH_REDIS set (host:port), it runs on that redis-server rather
// than one of its own, emptying its database 0 first: bench/redisreplay
// records the scripts' calls there.
func benchFrontier(b *testing.B, procs, roots int, link func(i, k int) int, separate bool) {
	addr, url := os.Getenv("BENCH_REDIS"), ""
	if addr != "" {
		c := redis.NewClient(&redis.Options{Addr: addr})
		err := c.FlushDB(context.Background()).Err()
		c.Close()
		if err != nil {
			b.Fatalf("BENCH_REDIS=%s: %v", addr, err)
		}
		url = "redis://" + addr + "/0"
	} else {
		s := redistest.Start(b)
		addr, url = s.Addr(), s.URL()
	}
	benchFrontierOn(b, procs, roots, link, separate, []string{addr}, func() (*redisfrontier.Frontier, error) {
		return redisfrontier.Open(context.Background(), url, &redisfrontier.Options{Name: "bench"})
	})
}

// benchFrontierOn is benchFrontier with the Frontiers open makes, the CPU
// time of the servers at addrs counted.
func benchFrontierOn(b *testing.B, procs, roots int, link func(i, k int) int, separate bool, addrs []string, open func() (*redisfrontier.Frontier, error)) {
	ctx := context.Background()
	p := crawl.Policy{HostWorkers: 1000, LeaseTerm: time.Minute, Roots: []string{"https://h0.example/"}}
	var fs []*redisfrontier.Frontier
	for range procs {
		f, err := open()
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		if err := f.Start(ctx, p); err != nil {
			b.Fatal(err)
		}
		fs = append(fs, f)
	}
	f := fs[0]
	seeds := make([]crawl.Request, roots)
	for i := range seeds {
		seeds[i] = benchURL(i)
	}
	if _, err := f.Push(ctx, seeds...); err != nil {
		b.Fatal(err)
	}
	var (
		acked atomic.Int64
		wg    sync.WaitGroup
	)
	var cs []*redis.Client
	for _, a := range addrs {
		c := redis.NewClient(&redis.Options{Addr: a})
		defer c.Close()
		cs = append(cs, c)
	}
	serverCPU0, selfCPU0 := serverCPU(b, cs...), selfCPU()
	b.ResetTimer()
	start := time.Now()
	// The Takes still waiting when b.N URLs are acked end with run (one
	// ctx for all: a timer a Take would count in the client's CPU).
	run, stop := context.WithCancel(ctx)
	defer stop()
	for w := range 32 {
		f := fs[w%procs]
		wg.Go(func() {
			links := make([]crawl.Request, 10)
			var next *crawl.Lease
			for acked.Load() < int64(b.N) {
				l := next
				if l == nil {
					var err error
					if l, err = f.Take(run); err != nil {
						if run.Err() == nil {
							b.Error(err)
						}
						return
					}
				}
				i := benchNumber(l.URL)
				for k := range links {
					links[k] = benchURL(link(i, k))
				}
				o := crawl.Outcome{Links: links, Result: &crawl.Result{URL: l.URL, Status: 200, ContentType: "text/html", Size: 1000}}
				var err error
				if separate {
					next = nil
					_, err = f.Ack(ctx, l, o)
				} else {
					_, next, err = f.AckTake(ctx, run, l, o)
				}
				if err != nil {
					b.Error(err)
					return
				}
				if acked.Add(1) == int64(b.N) {
					stop()
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	n := float64(acked.Load())
	b.ReportMetric(n/time.Since(start).Seconds(), "URLs/s")
	// CPU time, which other jobs on the machine do not inflate as they
	// do the wall time.
	b.ReportMetric((serverCPU(b, cs...)-serverCPU0).Seconds()*1e6/n, "server-µs/URL")
	b.ReportMetric((selfCPU()-selfCPU0).Seconds()*1e6/n, "client-µs/URL")
	if os.Getenv("BENCH_STATS") != "" {
		var all []string
		for _, c := range cs {
			info, _ := c.Info(ctx, "commandstats", "cpu").Result()
			all = append(all, info)
		}
		os.WriteFile(os.Getenv("BENCH_STATS"), []byte(strings.Join(all, "\n")), 0o644)
	}
}

// serverCPU returns the CPU time the servers used so far (INFO cpu).
func serverCPU(b *testing.B, cs ...*redis.Client) time.Duration {
	var total float64
	for _, c := range cs {
		info, err := c.Info(context.Background(), "cpu").Result()
		if err != nil {
			b.Fatal(err)
		}
		for _, line := range strings.Split(info, "\r\n") {
			for _, k := range []string{"used_cpu_user:", "used_cpu_sys:"} {
				if v, ok := strings.CutPrefix(line, k); ok {
					f, _ := strconv.ParseFloat(v, 64)
					total += f
				}
			}
		}
	}
	return time.Duration(total * float64(time.Second))
}

// selfCPU returns the CPU time this process used so far.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
