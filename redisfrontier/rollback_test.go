package redisfrontier_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/asyncrawl/crawl"
	"github.com/asyncrawl/crawl/redisfrontier/redistest"
)

// TestRolledBackLease: redis-server comes back from an older state (its
// files as they were before a lease was taken: a backup restored, or an
// AOF that lost its last second), so the server has forgotten the lease
// and hands its URL, and another, out again. The forgotten lease's Ack is
// refused with ErrLeaseLost and ends no lease made since; every URL is
// then handed out, acked and counted exactly once.
func TestRolledBackLease(t *testing.T) {
	s := redistest.Start(t)
	// No term: only a rollback can take the lease back.
	f := process(t, s, "rollback", crawl.Policy{HostWorkers: 4})
	first := crawl.Request{URL: "https://b.example/1"}
	if n, err := f.Push(t.Context(), first); n != 1 || err != nil {
		t.Fatalf("Push: %d, %v; want 1, nil", n, err)
	}
	snap := s.Snapshot()
	stale, err := f.Take(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	s.RestartFrom(snap)

	// After the rollback, another URL, on a host that sorts first: it is
	// the next lease the server makes, as the forgotten one was.
	second := crawl.Request{URL: "https://a.example/1"}
	if n, err := f.Push(t.Context(), second); n != 1 || err != nil {
		t.Fatalf("Push after the rollback: %d, %v; want 1, nil", n, err)
	}
	fresh, err := f.Take(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("lease before the rollback %s (%s), after %s (%s)", stale.ID, stale.URL, fresh.ID, fresh.URL)
	if _, err := f.Ack(t.Context(), stale, crawl.Outcome{Result: &crawl.Result{URL: stale.URL, Status: 200}}); !errors.Is(err, crawl.ErrLeaseLost) {
		t.Errorf("Ack of the lease the server forgot in its rollback: got %v, want ErrLeaseLost", err)
	}
	if err := f.Extend(t.Context(), stale); !errors.Is(err, crawl.ErrLeaseLost) {
		t.Errorf("Extend of the lease the server forgot: got %v, want ErrLeaseLost", err)
	}
	if err := f.Retry(t.Context(), stale, time.Time{}); !errors.Is(err, crawl.ErrLeaseLost) {
		t.Errorf("Retry of the lease the server forgot: got %v, want ErrLeaseLost", err)
	}

	acked := map[string]int{}
	ack := func(l *crawl.Lease) {
		t.Helper()
		if _, err := f.Ack(t.Context(), l, crawl.Outcome{Result: &crawl.Result{URL: l.URL, Status: 200}}); err != nil {
			t.Errorf("Ack of %s (lease %s), taken after the rollback: %v", l.URL, l.ID, err)
			return
		}
		acked[l.URL]++
	}
	ack(fresh)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	l, err := f.Take(ctx)
	if err != nil {
		t.Fatalf("Take of the URL left: %v", err)
	}
	ack(l)
	if err := f.Join(ctx); err != nil {
		t.Fatalf("Join: %v", err)
	}
	for _, r := range []crawl.Request{first, second} {
		if acked[r.URL] != 1 {
			t.Errorf("%s handed out and acked %d times after the rollback, want once", r.URL, acked[r.URL])
		}
	}
	c, err := f.Counts(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if want := (crawl.Counts{Done: 2, Pages: 2}); c != want {
		t.Errorf("Counts: got %+v, want %+v", c, want)
	}
	if st, err := f.Stats(t.Context()); err != nil || st.Done != 2 {
		t.Errorf("Stats: Done %d, %v; want 2, each URL counted once", st.Done, err)
	}
}
