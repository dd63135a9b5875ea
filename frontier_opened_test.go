package crawl_test

import (
	"context"
	"testing"
	"time"

	"github.com/asyncrawl/crawl"
)

// TestMemoryFrontierNilRulesKept checks that a host whose robots.txt was
// acked with nil Rules stays open when the frontier is reused by a new
// Start under Policy.Robots: its robots.txt is not handed out again.
func TestMemoryFrontierNilRulesKept(t *testing.T) {
	ctx := context.Background()
	f := crawl.NewMemoryFrontier()
	defer f.Close()
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
	if _, err := f.Ack(ctx, l, crawl.Outcome{}); err != nil {
		t.Fatal(err)
	}
	if err := f.Start(ctx, p); err != nil {
		t.Fatal(err)
	}
	tctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	l, err = f.Take(tctx)
	if err != nil || l.URL != "http://c.example/p" {
		t.Fatalf("Take after a new Start: got %v, %v; want http://c.example/p (its robots.txt was acked with nil Rules)", l, err)
	}
}
