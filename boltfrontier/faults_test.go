package boltfrontier

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/asyncrawl/crawl"
	bolt "go.etcd.io/bbolt"
)

// TestWire checks that a Request's Wire comes back from Take as it was
// pushed: from the Requests held in memory, from those read back from the
// file, from a retry, and after the file is opened anew.
func TestWire(t *testing.T) {
	f, path := open(t, &Options{Prefetch: 1})
	ctx := context.Background()
	f.Start(ctx, crawl.Policy{HostWorkers: 1})
	in := []crawl.Request{
		{URL: "http://a.test/~1", Wire: "http://a.test/%7E1"},
		{URL: "http://a.test/~2", Wire: "http://a.test/%7e2"},
		{URL: "http://a.test/3"},
		{URL: "http://a.test/~4", Wire: "http://a.test/%7E4"},
	}
	if _, err := f.Push(ctx, in...); err != nil {
		t.Fatal(err)
	}
	wire := func(l *crawl.Lease, want crawl.Request) {
		t.Helper()
		if l == nil || l.URL != want.URL || l.Wire != want.Wire {
			t.Fatalf("take: got %+v, want %s with Wire %q", l, want.URL, want.Wire)
		}
	}
	l := takeNow(t, f)
	wire(l, in[0])
	f.Ack(ctx, l, crawl.Outcome{})
	l = takeNow(t, f)
	wire(l, in[1])
	if err := f.Retry(ctx, l, time.Time{}); err != nil {
		t.Fatal(err)
	}
	l = takeNow(t, f)
	wire(l, in[1])
	if err := f.Retry(ctx, l, time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	l = takeNow(t, f)
	wire(l, in[2])
	f.Ack(ctx, l, crawl.Outcome{})
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	g, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	g.Start(ctx, crawl.Policy{HostWorkers: 1})
	wire(takeNow(t, g), in[3])
	// The retry, read back from the file.
	g.mu.Lock()
	got := g.hosts["http://a.test"].later[0].Request
	g.mu.Unlock()
	if got.Wire != in[1].Wire {
		t.Errorf("retry after reopen: got Wire %q, want %q", got.Wire, in[1].Wire)
	}
}

// TestExpiredLeaseAsLeased checks that a lease taken back after its term
// is handed out again as it was leased, not with the edits its old holder
// makes to its Lease meanwhile (which, under -race, must not race with the
// take-back either).
func TestExpiredLeaseAsLeased(t *testing.T) {
	dir := t.TempDir()
	synctest.Test(t, func(t *testing.T) {
		f, err := Open(filepath.Join(dir, "s.db"), &Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		ctx := context.Background()
		f.Start(ctx, crawl.Policy{HostWorkers: 2, LeaseTerm: time.Second})
		f.Push(ctx, crawl.Request{URL: "http://a.test/1", Redirects: 5}, crawl.Request{URL: "http://a.test/2", Redirects: 5})
		l1, _ := f.Take(ctx)
		l2, _ := f.Take(ctx)
		time.Sleep(2 * time.Second)
		// The holder of l1 edits it after its term, before the take-back.
		l1.Tries++
		l1.First = time.Now()
		l1.Redirects--
		// The holder of l2 edits it while another goroutine takes it back.
		edited := make(chan struct{})
		go func() {
			l2.Tries++
			l2.First = time.Now()
			close(edited)
		}()
		for range 2 {
			l, err := f.Take(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if l.Tries != 0 || !l.First.IsZero() || l.Redirects != 5 {
				t.Errorf("take after expiry: got %s with Tries %d, First %v, Redirects %d; want it as leased (0, zero, 5)",
					l.URL, l.Tries, l.First, l.Redirects)
			}
		}
		<-edited
	})
}

// TestBudgetSpentRetryBehindRobots checks that, with the page budget
// spent, a retry on a host whose robots.txt was never fetched is handed
// out after that robots.txt, and that Join then returns: a Run without
// robots.txt left a retry, and the next Run obeys robots.txt.
func TestBudgetSpentRetryBehindRobots(t *testing.T) {
	f, _ := open(t, nil)
	ctx := context.Background()
	f.Start(ctx, crawl.Policy{HostWorkers: 1, MaxPages: 1})
	f.Push(ctx, reqs("http://b.test/1", "http://b.test/2")...)
	l := mustTake(t, f, "http://b.test/1")
	l.Tries++
	if err := f.Retry(ctx, l, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if err := f.Start(ctx, crawl.Policy{HostWorkers: 1, MaxPages: 1, Robots: true}); err != nil {
		t.Fatal(err)
	}
	r := mustTake(t, f, "http://b.test/robots.txt")
	if _, err := f.Ack(ctx, r, crawl.Outcome{}); err != nil {
		t.Fatal(err)
	}
	l = mustTake(t, f, "http://b.test/1")
	if l.Tries != 1 {
		t.Errorf("retry: got Tries %d, want 1", l.Tries)
	}
	if _, err := f.Ack(ctx, l, crawl.Outcome{}); err != nil {
		t.Fatal(err)
	}
	jctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := f.Join(jctx); err != nil {
		t.Errorf("join: %v, want nil (budget spent, nothing out)", err)
	}
	if l := takeNow(t, f); l != nil {
		t.Errorf("take with the budget spent: got %s, want nothing", l.URL)
	}
	if c, _ := f.Counts(ctx); c != (crawl.Counts{Queued: 1, Done: 1, Pages: 1}) {
		t.Errorf("counts %+v, want 1 queued, 1 done, 1 page", c)
	}
}

// TestDamagedHostRecord checks that an Ack or a Push whose links meet a
// damaged host record in the file returns an error and changes nothing:
// the lease is still out and may be acked again, no link is admitted, and
// Join returns once the lease is acked.
func TestDamagedHostRecord(t *testing.T) {
	f, path := open(t, nil)
	ctx := context.Background()
	p := crawl.Policy{HostWorkers: 1, Robots: true}
	f.Start(ctx, p)
	f.Push(ctx, reqs("http://b.test/0")...)
	r := mustTake(t, f, "http://b.test/robots.txt")
	f.Ack(ctx, r, crawl.Outcome{Rules: &crawl.HostRules{Denied: "/x"}})
	l := mustTake(t, f, "http://b.test/0")
	f.Ack(ctx, l, crawl.Outcome{})
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	// A record whose checksum holds but which does not decode (Open
	// refuses one whose checksum fails: TestDamagedRecordRefused).
	db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketHosts).Put([]byte("http://b.test"), seal([]byte("http://b.test"), []byte{9, 9}))
	})
	db.Close()

	f, err = Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.Start(ctx, p)
	f.Push(ctx, reqs("http://a.test/1")...)
	r = mustTake(t, f, "http://a.test/robots.txt")
	f.Ack(ctx, r, crawl.Outcome{})
	l = mustTake(t, f, "http://a.test/1")
	before, _ := f.Counts(ctx)
	n, err := f.Ack(ctx, l, crawl.Outcome{Links: reqs("http://a.test/2", "http://b.test/1"), Result: &crawl.Result{URL: l.URL}})
	if err == nil || errors.Is(err, crawl.ErrLeaseLost) {
		t.Fatalf("ack with a link to a damaged host: got %d, %v; want an error", n, err)
	}
	if c, _ := f.Counts(ctx); c != before {
		t.Errorf("counts after the failed ack: got %+v, want %+v (unchanged)", c, before)
	}
	if n, err := f.Push(ctx, reqs("http://a.test/3", "http://b.test/2")...); err == nil {
		t.Errorf("push with a damaged host: got %d, nil; want an error", n)
	}
	if c, _ := f.Counts(ctx); c != before {
		t.Errorf("counts after the failed push: got %+v, want %+v (unchanged)", c, before)
	}
	if err := f.Extend(ctx, l); err != nil {
		t.Errorf("extend after the failed ack: got %v, want the lease still out", err)
	}
	if n, err := f.Ack(ctx, l, crawl.Outcome{Links: reqs("http://a.test/2")}); n != 1 || err != nil {
		t.Fatalf("ack again without the damaged host: got %d, %v; want 1, nil", n, err)
	}
	l = mustTake(t, f, "http://a.test/2")
	f.Ack(ctx, l, crawl.Outcome{})
	jctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := f.Join(jctx); err != nil {
		t.Errorf("join: %v, want nil", err)
	}
	if c, _ := f.Counts(ctx); c.Done != 3 || c.Queued != 0 {
		t.Errorf("counts %+v, want 3 done, 0 queued", c)
	}
}
