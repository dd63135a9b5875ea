package redisfrontier

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/asyncrawl/crawl"
	"github.com/asyncrawl/crawl/redisfrontier/redistest"
	"github.com/redis/go-redis/v9"
)

// cacheKept returns how many of in c holds, and fails t if c holds any of
// n fingerprints it was never given.
func cacheKept(t *testing.T, c *seenCache, in []uint64, n int) int {
	t.Helper()
	c.mu.RLock()
	defer c.mu.RUnlock()
	kept := 0
	for _, h := range in {
		if c.has(h) {
			kept++
		}
	}
	for i := range n {
		if c.has(fingerprint(fmt.Sprint("https://b.example/", i))) {
			t.Fatalf("the cache has a fingerprint it was never given")
		}
	}
	return kept
}

// TestSeenCacheTable: the table keeps what it was given while it has room,
// never answers yes for what it was not given, and forgets everything at a
// reset to another run.
func TestSeenCacheTable(t *testing.T) {
	c := newSeenCache(1024)
	if c.bytes() != 8192 {
		t.Fatalf("a cache of 1024 fingerprints takes %d bytes, want 8192", c.bytes())
	}
	var in []uint64
	for i := range 512 {
		in = append(in, fingerprint(fmt.Sprint("https://a.example/", i)))
	}
	c.add("r1", in)
	kept := cacheKept(t, c, in, 10000)
	if kept < 400 {
		t.Errorf("a cache of 1024 kept %d of 512 fingerprints", kept)
	}
	c.add("r2", in[:1]) // the server is on another run now
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.run != "r2" || !c.has(in[0]) || c.has(in[1]) {
		t.Errorf("after an addition from run r2: run %q, has the new one %v, an old one %v; want r2, true, false",
			c.run, c.has(in[0]), c.has(in[1]))
	}
}

// TestSeenCacheGrows: a large cache starts small and doubles as it fills,
// keeping what it holds, up to its most; a reset starts it small again.
func TestSeenCacheGrows(t *testing.T) {
	c := newSeenCache(1 << 20)
	if c.bytes() != 8*cacheStart {
		t.Fatalf("a new cache of 1<<20 fingerprints takes %d bytes, want %d", c.bytes(), 8*cacheStart)
	}
	var in []uint64
	for i := range 100000 {
		in = append(in, fingerprint(fmt.Sprint("https://a.example/", i)))
	}
	for j := 0; j < len(in); j += 1000 {
		c.add("r1", in[j:j+1000])
	}
	if c.bytes() <= 8*cacheStart || c.bytes() > 8<<20 {
		t.Errorf("after 100,000 fingerprints the cache takes %d bytes, want more than %d and at most %d", c.bytes(), 8*cacheStart, 8<<20)
	}
	kept := cacheKept(t, c, in, 20000)
	if kept < 99800 {
		t.Errorf("a cache of 1<<20 kept %d of 100,000 fingerprints as it grew", kept)
	}
	for j := 0; j < 1600000; j += 1000 {
		more := make([]uint64, 1000)
		for i := range more {
			more[i] = uint64(j+i+1) * 0x9e3779b97f4a7c15 // spread like fingerprints
		}
		c.add("r1", more)
	}
	if c.bytes() != 8<<20 {
		t.Errorf("after 1,700,000 fingerprints the cache takes %d bytes, want its most, %d", c.bytes(), 8<<20)
	}
	c.add("r2", in[:1])
	if c.bytes() != 8*cacheStart {
		t.Errorf("after a reset the cache takes %d bytes, want %d", c.bytes(), 8*cacheStart)
	}
}

// TestSeenCacheServerLost: a redis-server that comes back without the
// writes the cache learned from (here, as it was when the crawl started:
// with no data at all, the crawl would be gone, see ErrCrawlDeleted) does
// not make the Frontier drop URLs as seen: the script finds the server on
// another run, and the URL is admitted.
func TestSeenCacheServerLost(t *testing.T) {
	s := redistest.Start(t)
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: s.Addr()})
	defer c.Close()
	f := New(c, &Options{Name: "lost"})
	defer f.Close()
	if err := f.Start(ctx, crawl.Policy{HostWorkers: 4}); err != nil {
		t.Fatal(err)
	}
	started := s.Snapshot()
	a := crawl.Request{URL: "https://a.example/1"}
	if n, err := f.Push(ctx, a); n != 1 || err != nil {
		t.Fatalf("Push of a new URL: %d, %v", n, err)
	}
	if n, err := f.Push(ctx, a); n != 0 || err != nil {
		t.Fatalf("Push of it again: %d, %v; want 0", n, err)
	}
	if run := f.seen.run; run == "" {
		t.Fatalf("the cache learned nothing from a Push")
	}
	s.RestartFrom(started)
	n, err := f.Push(ctx, a)
	if n != 1 || err != nil {
		t.Fatalf("Push of a URL the restarted server lost: %d, %v; want it admitted", n, err)
	}
}

// TestSeenCacheAckGivenUp: the links an Ack's cache dropped are the
// caller's until the Ack returns; one that returns early (its ctx done
// while the server is down) keeps a copy, so that when the server comes
// back without the writes the cache learned from, the dropped links are
// sent as they were, whatever the caller did to its slice since. The
// server comes back as it was when the crawl started.
func TestSeenCacheAckGivenUp(t *testing.T) {
	s := redistest.Start(t)
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: s.Addr(), MaxRetries: -1})
	defer c.Close()
	f := New(c, &Options{Name: "givenup"})
	defer f.Close()
	if err := f.Start(ctx, crawl.Policy{HostWorkers: 4}); err != nil {
		t.Fatal(err)
	}
	started := s.Snapshot()
	known := crawl.Request{URL: "https://a.example/known"}
	if n, err := f.Push(ctx, crawl.Request{URL: "https://a.example/"}, known); n != 2 || err != nil {
		t.Fatalf("Push of 2 new URLs: %d, %v", n, err)
	}
	l, err := f.Take(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s.Kill()
	links := []crawl.Request{known}
	actx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	_, err = f.Ack(actx, l, crawl.Outcome{Links: links})
	cancel()
	if err == nil {
		t.Fatalf("Ack while the server is down returned nil, want its ctx's error")
	}
	links[0] = crawl.Request{URL: "https://a.example/overwritten"}
	s.RestartFrom(started)
	// The Ack goes on: once it is through, the known link is admitted on
	// the server that lost it, and the overwritten one never was.
	deadline := time.Now().Add(10 * time.Second)
	for {
		n, err := c.Exists(ctx, f.prefix+"q:https://a.example").Result()
		if err == nil && n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the Ack given up never reached the restarted server")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n, err := f.Push(ctx, crawl.Request{URL: "https://a.example/overwritten"}); n != 1 || err != nil {
		t.Errorf("Push of a URL the caller wrote after its Ack returned: %d, %v; want 1 (the Ack did not send it)", n, err)
	}
	q, _ := c.LRange(ctx, f.prefix+"q:https://a.example", 0, -1).Result()
	if len(q) != 2 || !strings.HasSuffix(q[0], known.URL) {
		t.Errorf("the host's queue after the Ack given up and a Push: %q, want %s first, then the pushed one", q, known.URL)
	}
}
