package redisfrontier

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/asyncrawl/crawl"
)

// A Take that comes while Close is under way, after Close's script gave
// back the process's leases, leases nothing: it ends with
// ErrFrontierClosed, and the lease given back stays queued. (It took the
// lease back and returned it, with a nil error, when the Take goroutine of
// frontiertest's Close check was scheduled late on a loaded machine.)
func TestTakeDuringClose(t *testing.T) {
	ctx := context.Background()
	f := startFrontier(t, t.Name(), crawl.Policy{HostWorkers: 1})
	if _, err := f.Push(ctx, crawl.Request{URL: "https://a.example/1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Take(ctx); err != nil {
		t.Fatal(err)
	}
	// Close, up to its script: the lease is given back.
	f.mu.Lock()
	f.closing = true
	f.mu.Unlock()
	if _, err := f.eval(ctx, closeScript, false); err != nil {
		t.Fatal(err)
	}

	tctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	l, err := f.Take(tctx)
	if !errors.Is(err, crawl.ErrFrontierClosed) {
		t.Errorf("Take while Close is under way: got %v (lease %v), want ErrFrontierClosed", err, l)
	}
	if cnt, err := f.Counts(ctx); err != nil || cnt.Queued != 1 || cnt.Leased != 0 {
		t.Errorf("after it: Counts %+v, %v, want the URL queued, none leased", cnt, err)
	}

	f.mu.Lock()
	f.closing = false // for the Close below, which would wait for this one
	f.mu.Unlock()
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}
