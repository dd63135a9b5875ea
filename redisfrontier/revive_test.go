package redisfrontier_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/asyncrawl/crawl"
	"github.com/asyncrawl/crawl/redisfrontier"
	"github.com/asyncrawl/crawl/redisfrontier/redistest"
)

// TestTTLRevived: a crawl done, its keys set to expire, that gets work
// again (a rerun with a larger page budget takes the pages the budget
// held back; a Push of a URL not seen) keeps its keys while it runs,
// however long past the expiry it runs, and sets them to expire again
// when it is done anew.
func TestTTLRevived(t *testing.T) {
	const ttl = 3 * time.Second
	for _, tc := range []struct {
		how    string
		shards int
	}{{"budget", 1}, {"push", 1}, {"budget", 4}, {"push", 4}} {
		how := tc.how
		t.Run(fmt.Sprintf("%s/shards=%d", how, tc.shards), func(t *testing.T) {
			s := redistest.Start(t)
			c := client(t, s)
			name := fmt.Sprintf("revived-%s-%d", how, tc.shards)
			p := crawl.Policy{HostWorkers: 2, MaxPages: 2}
			if how == "push" {
				p.MaxPages = 0
			}
			f := open(t, s, &redisfrontier.Options{Name: name, TTL: ttl, Shards: tc.shards})
			if err := f.Start(t.Context(), p); err != nil {
				t.Fatal(err)
			}
			if _, err := f.Push(t.Context(), siteURL(0), siteURL(1), siteURL(2), siteURL(3)); err != nil {
				t.Fatal(err)
			}
			first := 4
			if how == "budget" {
				first = 2
			}
			for range first {
				l, err := f.Take(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				ack(t, f, l)
			}
			if err := f.Join(t.Context()); err != nil {
				t.Fatal(err)
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			if d, _ := c.PTTL(t.Context(), "crawl:{"+name+"}:meta").Result(); d <= 0 {
				t.Fatalf("the meta hash's TTL after the crawl was done: %v, want about %v", d, ttl)
			}

			// A rerun that gets work, and holds it past the expiry.
			g := open(t, s, &redisfrontier.Options{Name: name, TTL: ttl, Shards: tc.shards})
			p.MaxPages = 0
			if err := g.Start(t.Context(), p); err != nil {
				t.Fatal(err)
			}
			want := 2
			if how == "push" {
				if n, err := g.Push(t.Context(), siteURL(4)); n != 1 || err != nil {
					t.Fatalf("Push of a URL not seen into the crawl done: %d, %v; want 1, nil", n, err)
				}
				want = 1
			}
			l, err := g.Take(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			keys := crawlKeys(t, c, name)
			if tc.shards > 1 && !strings.Contains(strings.Join(keys, " "), "crawl:{"+name+":") {
				t.Fatalf("keys of a crawl of %d shards: %q, want its shards' too", tc.shards, keys)
			}
			for _, k := range keys {
				if d, _ := c.PTTL(t.Context(), k).Result(); d != -1 && !strings.Contains(k, ":ops:") {
					t.Errorf("TTL of %s while the crawl has work again: %v, want none (-1)", k, d)
				}
			}
			time.Sleep(ttl + 200*time.Millisecond)
			ack(t, g, l)
			for range want - 1 {
				l, err := g.Take(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				ack(t, g, l)
			}
			if err := g.Join(t.Context()); err != nil {
				t.Fatalf("Join of the rerun: %v", err)
			}
			if got, err := g.Counts(t.Context()); err != nil || got.Done != first+want {
				t.Errorf("Counts after the rerun: %+v, %v; want Done %d", got, err, first+want)
			}
			for _, k := range crawlKeys(t, c, name) {
				if d, _ := c.PTTL(t.Context(), k).Result(); (d <= 0 || d > ttl) && !strings.Contains(k, ":ops:") {
					t.Errorf("TTL of %s once the crawl is done anew: %v, want in (0, %v]", k, d, ttl)
				}
			}
		})
	}
}

// TestTTLMixedBudgets: two processes of one crawl under different page
// budgets. The one with the smaller budget finds the crawl over when its
// budget is spent and sets the crawl's keys to expire; the other, which
// still has work under its larger budget, keeps them (its Join, within
// a poll) while it crawls, however long past the expiry, and sets them
// to expire again when it is done.
func TestTTLMixedBudgets(t *testing.T) {
	const ttl = 5 * time.Second
	for _, shards := range []int{1, 4} {
		t.Run(fmt.Sprintf("shards=%d", shards), func(t *testing.T) {
			s := redistest.Start(t)
			c := client(t, s)
			name := fmt.Sprintf("mixed-%d", shards)
			small := open(t, s, &redisfrontier.Options{Name: name, TTL: ttl, Shards: shards})
			if err := small.Start(t.Context(), crawl.Policy{HostWorkers: 2, MaxPages: 2}); err != nil {
				t.Fatal(err)
			}
			large := open(t, s, &redisfrontier.Options{Name: name, TTL: ttl, Shards: shards})
			if err := large.Start(t.Context(), crawl.Policy{HostWorkers: 2}); err != nil {
				t.Fatal(err)
			}
			if _, err := small.Push(t.Context(), siteURL(0), siteURL(1), siteURL(2), siteURL(3)); err != nil {
				t.Fatal(err)
			}
			// Bounded, so that a Take or Join that waits for good fails
			// the test rather than hangs it.
			bound, stop := context.WithTimeout(t.Context(), 30*time.Second)
			defer stop()
			joined := make(chan error, 1)
			go func() { joined <- large.Join(bound) }()
			for range 2 {
				l, err := small.Take(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				ack(t, small, l)
			}
			// A Take under the spent budget parks the hosts left.
			ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
			if l, err := small.Take(ctx); !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Take under a spent budget: %v, %v; want it to wait", l, err)
			}
			cancel()
			if err := small.Join(t.Context()); err != nil {
				t.Fatal(err)
			}
			meta := "crawl:{" + name + "}:meta"
			if d, _ := c.PTTL(t.Context(), meta).Result(); d <= 0 {
				t.Fatalf("the meta hash's TTL once the smaller budget is spent: %v, want about %v", d, ttl)
			}
			// The larger budget's Join keeps the keys.
			kept := time.Now().Add(ttl - time.Second)
			for {
				if d, _ := c.PTTL(t.Context(), meta).Result(); d == -1 {
					break
				}
				if time.Now().After(kept) {
					t.Fatalf("the meta hash still set to expire while a process has work under its budget")
				}
				time.Sleep(50 * time.Millisecond)
			}
			for _, k := range crawlKeys(t, c, name) {
				if d, _ := c.PTTL(t.Context(), k).Result(); d != -1 && !strings.Contains(k, ":ops:") {
					t.Errorf("TTL of %s while a process has work: %v, want none (-1)", k, d)
				}
			}
			time.Sleep(ttl + 200*time.Millisecond)
			for range 2 {
				l, err := large.Take(bound)
				if err != nil {
					t.Fatalf("Take past the expiry the smaller budget set: %v", err)
				}
				ack(t, large, l)
			}
			if err := <-joined; err != nil {
				t.Fatalf("Join under the larger budget: %v", err)
			}
			if got, err := large.Counts(t.Context()); err != nil || got.Done != 4 {
				t.Errorf("Counts: %+v, %v; want Done 4", got, err)
			}
			for _, k := range crawlKeys(t, c, name) {
				if d, _ := c.PTTL(t.Context(), k).Result(); (d <= 0 || d > ttl) && !strings.Contains(k, ":ops:") {
					t.Errorf("TTL of %s once the crawl is done: %v, want in (0, %v]", k, d, ttl)
				}
			}
		})
	}
}

// TestTTLKeptSparesOps: a crawl done under a TTL, then done again by a
// process that keeps the keys (a negative TTL), keeps the crawl's keys
// but not the records of the processes' replies: a dead process's
// (started, never closed) keep the first finish's expiry, and the
// keeping process's own go a week after, as after its Start.
func TestTTLKeptSparesOps(t *testing.T) {
	const ttl = time.Hour
	s := redistest.Start(t)
	c := client(t, s)
	name := "kept-ops"
	p := crawl.Policy{HostWorkers: 2}
	dead := open(t, s, &redisfrontier.Options{Name: name, TTL: ttl})
	if err := dead.Start(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	first := open(t, s, &redisfrontier.Options{Name: name, TTL: ttl})
	if err := first.Start(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	if _, err := first.Push(t.Context(), siteURL(0)); err != nil {
		t.Fatal(err)
	}
	l, err := first.Take(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	ack(t, first, l)
	if err := first.Join(t.Context()); err != nil {
		t.Fatal(err)
	}
	keeper := open(t, s, &redisfrontier.Options{Name: name, TTL: -1})
	if err := keeper.Start(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	if n, err := keeper.Push(t.Context(), siteURL(1)); n != 1 || err != nil {
		t.Fatalf("Push of a URL not seen: %d, %v; want 1, nil", n, err)
	}
	l, err = keeper.Take(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	ack(t, keeper, l)
	if err := keeper.Join(t.Context()); err != nil {
		t.Fatal(err)
	}
	ops := "crawl:{" + name + "}:ops:"
	for _, k := range crawlKeys(t, c, name) {
		d, _ := c.PTTL(t.Context(), k).Result()
		switch {
		case k == ops+dead.Owner():
			if d <= 0 || d > ttl {
				t.Errorf("TTL of the dead process's %s once the crawl is kept: %v, want the first finish's, in (0, %v]", k, d, ttl)
			}
		case k == ops+keeper.Owner():
			if d < 6*24*time.Hour || d > 7*24*time.Hour {
				t.Errorf("TTL of the keeping process's %s: %v, want about a week", k, d)
			}
		case strings.HasPrefix(k, ops):
		case d != -1:
			t.Errorf("TTL of %s once the crawl is kept: %v, want none (-1)", k, d)
		}
	}
}
