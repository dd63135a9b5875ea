package crawl_test

import (
	"context"
	"testing"
	"time"

	"github.com/asyncrawl/crawl"
)

// TestMemoryFrontierPauseOutlivesUnsent checks that a Pause made while a
// lease is out holds its host back even when that lease is then acked
// Unsent, which gives back the host's delay the Take charged: the pause is
// not given back with it.
func TestMemoryFrontierPauseOutlivesUnsent(t *testing.T) {
	checkPauseOutlivesUnsent(t, crawl.NewMemoryFrontier())
}

func checkPauseOutlivesUnsent(t *testing.T, f crawl.Frontier) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := f.Start(ctx, crawl.Policy{HostWorkers: 1, HostDelay: 20 * time.Second}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Push(ctx, crawl.Request{URL: "http://a.example/1"}, crawl.Request{URL: "http://a.example/2"}); err != nil {
		t.Fatal(err)
	}
	l, err := f.Take(ctx)
	if err != nil {
		t.Fatal(err)
	}
	until := time.Now().Add(300 * time.Millisecond)
	if err := f.Pause(ctx, "http://a.example", until); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Ack(ctx, l, crawl.Outcome{Unsent: true}); err != nil {
		t.Fatal(err)
	}
	l, err = f.Take(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if now := time.Now(); now.Before(until) {
		t.Errorf("Take handed out %s %v before the end of its host's Pause; want none before it", l.URL, until.Sub(now))
	}
}
