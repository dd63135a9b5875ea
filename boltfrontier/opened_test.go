package boltfrontier_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/asyncrawl/crawl"
	"github.com/asyncrawl/crawl/boltfrontier"
)

// TestRobotsAckedNilRulesKept checks that a host whose robots.txt was
// acked with nil Rules (no rules: every URL allowed, as Frontier.Ack's doc
// says), or found unavailable, is open: after a reopen and a new Start
// under Policy.Robots its robots.txt is asked for once more, as a new
// Run's (a first try: an unavailable one is tried again), and once acked
// in that Run, not again (it was, from the file's point of view a host
// with no rules had never been opened).
func TestRobotsAckedNilRulesKept(t *testing.T) {
	for _, rules := range []*crawl.HostRules{nil, {Denied: "robots.txt answered 503"}} {
		ctx := context.Background()
		path := filepath.Join(t.TempDir(), "state")
		f, err := boltfrontier.Open(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		p := crawl.Policy{HostWorkers: 2, Robots: true}
		if err := f.Start(ctx, p); err != nil {
			t.Fatal(err)
		}
		if _, err := f.Push(ctx, crawl.Request{URL: "http://c.example/p"}); err != nil {
			t.Fatal(err)
		}
		l, err := f.Take(ctx)
		if err != nil || l.Kind != crawl.RobotsRequest {
			t.Fatalf("first Take: got %v, %v; want the robots.txt", l, err)
		}
		if _, err := f.Ack(ctx, l, crawl.Outcome{Rules: rules}); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		if f, err = boltfrontier.Open(path, nil); err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := f.Start(ctx, p); err != nil {
			t.Fatal(err)
		}
		tctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		l, err = f.Take(tctx)
		if err != nil || l.Kind != crawl.RobotsRequest || l.Tries != 0 {
			t.Fatalf("rules %+v: Take after reopen: got %v, %v; want the robots.txt again, a first try in the new Run", rules, l, err)
		}
		if _, err := f.Ack(ctx, l, crawl.Outcome{Rules: rules}); err != nil {
			t.Fatal(err)
		}
		l, err = f.Take(tctx)
		if err != nil || l.URL != "http://c.example/p" {
			t.Fatalf("rules %+v: Take after the robots.txt acked again: got %v, %v; want http://c.example/p (its robots.txt was acked in this Run)", rules, l, err)
		}
	}
}
