package redisfrontier

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/asyncrawl/crawl"
	"github.com/asyncrawl/crawl/redisfrontier/redistest"
)

// openSharded returns a started Frontier of crawl name in 8 shards on s,
// closed when the test ends.
func openSharded(t *testing.T, s *redistest.Server, name string, p crawl.Policy) *Frontier {
	t.Helper()
	f, err := Open(context.Background(), s.URL(), &Options{Name: name, Shards: 8})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if err := f.Start(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	return f
}

// otherShardHost returns a host key whose shard, of 8, is not host's.
func otherShardHost(t *testing.T, host string) string {
	for _, h := range []string{"https://b.example", "https://c.example", "https://d.example", "https://e.example"} {
		if shardOf(h, 8) != shardOf(host, 8) {
			return h
		}
	}
	t.Fatal("no host of another shard")
	return ""
}

// TestBudgetHandOverCut cuts each hand-over of the page budget between its
// two writes, as a process killed there would: a grant made on the
// control keys and not applied on its shard, and a give-back made on its
// shard and not taken back on the control keys. The next balance completes
// either from the totals both sides keep: the pages are taken, never more
// than Policy.MaxPages. Without the completion the budget would stay
// counted nowhere, and the Takes would wait for ever.
func TestBudgetHandOverCut(t *testing.T) {
	s := redistest.Start(t)
	ctx := context.Background()
	p := crawl.Policy{HostWorkers: 4, MaxPages: 2}
	const a = "https://a.example"
	take := func(f *Frontier, what string) *crawl.Lease {
		t.Helper()
		tctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		l, err := f.Take(tctx)
		if err != nil {
			t.Fatalf("%s: Take: %v", what, err)
		}
		return l
	}
	noTake := func(f *Frontier, what string) {
		t.Helper()
		tctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		defer cancel()
		if l, err := f.Take(tctx); err == nil {
			t.Fatalf("%s: Take gave %s, want nothing (Policy.MaxPages 2)", what, l.URL)
		}
	}

	t.Run("grant", func(t *testing.T) {
		f := openSharded(t, s, "cut-grant", p)
		if _, err := f.Push(ctx, crawl.Request{URL: a + "/1"}, crawl.Request{URL: a + "/2"}, crawl.Request{URL: a + "/3"}); err != nil {
			t.Fatal(err)
		}
		// The control keys grant a's shard the whole budget; the process
		// dies before its shard hears of it.
		v := shardOf(a, 8)
		if g, err := f.evalOn(ctx, -1, ctlGrantScript, 0, 0, v, 0, 2); err != nil || g != "2" {
			t.Fatalf("ctlGrantScript = %q, %v; want 2", g, err)
		}
		take(f, "the grant cut before its shard")
		take(f, "the grant cut before its shard, its second page")
		noTake(f, "2 pages taken")
		if c, err := f.Counts(ctx); err != nil || c.Pages != 2 {
			t.Errorf("Counts = %+v, %v; want 2 pages", c, err)
		}
	})

	t.Run("give-back", func(t *testing.T) {
		f := openSharded(t, s, "cut-give", p)
		b := otherShardHost(t, a)
		// a's shard holds the whole budget, then gives it back; the
		// process dies before the control keys take it back.
		v := shardOf(a, 8)
		if _, err := f.evalOn(ctx, -1, ctlGrantScript, 0, 0, v, 0, 2); err != nil {
			t.Fatal(err)
		}
		if _, err := f.evalOn(ctx, v, shardGrantScript, 0, 0, 2); err != nil {
			t.Fatal(err)
		}
		if r, err := f.evalOn(ctx, v, shardGiveScript, 0, 0); err != nil || r != "2 2" {
			t.Fatalf("shardGiveScript = %q, %v; want \"2 2\" (granted 2, given back 2)", r, err)
		}
		if _, err := f.Push(ctx, crawl.Request{URL: b + "/1"}, crawl.Request{URL: b + "/2"}, crawl.Request{URL: b + "/3"}); err != nil {
			t.Fatal(err)
		}
		take(f, "the give-back cut before the control keys")
		take(f, "the give-back cut before the control keys, the second page")
		noTake(f, "2 pages taken")
	})
}

// TestShardedLifecycle reads and deletes a crawl of several shards:
// Inspect sums the shards, Reset refuses it while a lease is out unless
// forced, and then deletes every key of every shard, after which the
// process on it gets ErrCrawlDeleted.
func TestShardedLifecycle(t *testing.T) {
	s := redistest.Start(t)
	ctx := context.Background()
	const name = "sharded-life"
	f := openSharded(t, s, name, crawl.Policy{HostWorkers: 1, LeaseTerm: time.Minute})
	b := otherShardHost(t, "https://a.example")
	if n, err := f.Push(ctx, crawl.Request{URL: "https://a.example/1"}, crawl.Request{URL: "https://a.example/2"}, crawl.Request{URL: b + "/1"}); n != 3 || err != nil {
		t.Fatalf("Push = %d, %v", n, err)
	}
	tctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := f.Take(tctx); err != nil {
		t.Fatal(err)
	}
	st, err := Inspect(ctx, f.rdb, name)
	if err != nil {
		t.Fatal(err)
	}
	if st.Queued != 2 || st.Leased != 1 || st.Pending != 3 || st.Done || len(st.Holders) != 1 || st.Holders[0].Owner != f.Owner() {
		t.Errorf("Inspect = %+v; want 2 queued, 1 leased by %s, 3 pending, not done", st, f.Owner())
	}
	if _, err := Reset(ctx, f.rdb, name, false); !errors.Is(err, ErrLeased) {
		t.Fatalf("Reset with a lease out = %v, want ErrLeased", err)
	}
	if n, err := Reset(ctx, f.rdb, name, true); err != nil || n == 0 {
		t.Fatalf("Reset forced = %d, %v", n, err)
	}
	var left []string
	if err := scanKeys(ctx, f.rdb, name, "", func(keys []string) error { left = append(left, keys...); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(left) != 0 {
		t.Errorf("after Reset, keys of the crawl left: %v", left)
	}
	if _, err := f.Push(ctx, crawl.Request{URL: "https://a.example/3"}); !errors.Is(err, ErrCrawlDeleted) {
		t.Errorf("Push after Reset = %v, want ErrCrawlDeleted", err)
	}
}
