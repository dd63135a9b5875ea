package redisfrontier_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/asyncrawl/crawl"
	"github.com/asyncrawl/crawl/redisfrontier"
	"github.com/asyncrawl/crawl/redisfrontier/redistest"
	"github.com/redis/go-redis/v9"
)

// TestSeenMemory measures what the seen set costs the server per URL at
// 1,000,000 URLs of about 55 bytes, as the delta of INFO's used_memory:
// the URLs are pushed, then every key of the crawl but the seen set's is
// deleted. It takes about half a minute, so it runs only when the
// environment variable REDISFRONTIER_MEM is set.
func TestSeenMemory(t *testing.T) {
	if os.Getenv("REDISFRONTIER_MEM") == "" {
		t.Skip("set REDISFRONTIER_MEM=1 to measure the seen set's memory (about 30s)")
	}
	const n = 1_000_000
	for _, buckets := range []int{4096, 16384} {
		t.Run(fmt.Sprintf("buckets=%d", buckets), func(t *testing.T) {
			s := redistest.Start(t)
			ctx := context.Background()
			c := redis.NewClient(&redis.Options{Addr: s.Addr()})
			defer c.Close()
			f := redisfrontier.New(c, &redisfrontier.Options{Name: "mem", SeenBuckets: buckets})
			defer f.Close()
			if err := f.Start(ctx, crawl.Policy{HostWorkers: 1}); err != nil {
				t.Fatal(err)
			}
			before := usedMemory(t, c)
			batch := make([]crawl.Request, 0, 5000)
			for i := range n {
				batch = append(batch, crawl.Request{URL: fmt.Sprintf("https://www.site%04d.example.com/articles/%08d.html", i%1000, i)})
				if len(batch) == cap(batch) {
					if _, err := f.Push(ctx, batch...); err != nil {
						t.Fatal(err)
					}
					batch = batch[:0]
				}
			}
			all := usedMemory(t, c)
			var del []string
			iter := c.Scan(ctx, 0, "crawl:{mem}:*", 10000).Iterator()
			for iter.Next(ctx) {
				if !strings.HasPrefix(iter.Val(), "crawl:{mem}:s:") {
					del = append(del, iter.Val())
				}
			}
			for len(del) > 0 {
				k := min(len(del), 1000)
				if err := c.Del(ctx, del[:k]...).Err(); err != nil {
					t.Fatal(err)
				}
				del = del[k:]
			}
			seen := usedMemory(t, c)
			enc, _ := c.ObjectEncoding(ctx, "crawl:{mem}:s:0").Result()
			t.Logf("%d URLs, %d buckets (bucket 0: %s): seen set %.1f bytes/URL; seen set and queue %.1f bytes/URL",
				n, buckets, enc, float64(seen-before)/n, float64(all-before)/n)
		})
	}
}

// usedMemory returns INFO's used_memory.
func usedMemory(t *testing.T, c *redis.Client) int64 {
	t.Helper()
	info, err := c.Info(context.Background(), "memory").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, "used_memory:"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no used_memory in INFO memory")
	return 0
}
