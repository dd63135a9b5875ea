package redisfrontier

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/asyncrawl/crawl"
	"github.com/asyncrawl/crawl/redisfrontier/redistest"
	"github.com/redis/go-redis/v9"
)

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
	c.mu.RLock()
	kept := 0
	for _, h := range in {
		if c.has(h) {
			kept++
		}
	}
	for i := range 10000 {
		if c.has(fingerprint(fmt.Sprint("https://b.example/", i))) {
			t.Fatalf("the cache has a fingerprint it was never given")
		}
	}
	c.mu.RUnlock()
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

// TestSeenCacheServerLost: a redis-server that comes back without the
// writes the cache learned from (here, with no data at all) does not make
// the Frontier drop URLs as seen: the script finds the server on another
// run, and the URL is admitted.
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
	s.Kill()
	files, _ := filepath.Glob(filepath.Join(s.Dir(), "*"))
	for _, p := range files {
		os.RemoveAll(p)
	}
	s.Restart()
	n, err := f.Push(ctx, a)
	if n != 1 || err != nil {
		t.Fatalf("Push of a URL the restarted server lost: %d, %v; want it admitted", n, err)
	}
}
