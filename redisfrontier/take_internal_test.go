package redisfrontier

import (
	"context"
	"testing"

	"github.com/asyncrawl/crawl"
)

// TestTakeCutAfterLease: a Take whose ctx ends after its script has leased
// a URL, before the host's rules are read, either returns the lease, with
// its rules, or leaves the URL queued: never a lease out that no one
// holds.
func TestTakeCutAfterLease(t *testing.T) {
	ctx := context.Background()
	f := startFrontier(t, "cut", crawl.Policy{HostWorkers: 4, Robots: true})
	defer f.Close()
	page := crawl.Request{URL: "https://a.example/1"}
	if _, err := f.Push(ctx, page); err != nil {
		t.Fatal(err)
	}
	robots, err := f.Take(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rules := &crawl.HostRules{Robots: []byte("User-agent: *\nDisallow: /private\n")}
	if _, err := f.Ack(ctx, robots, crawl.Outcome{Rules: rules}); err != nil {
		t.Fatal(err)
	}

	cut, cancel := context.WithCancel(ctx)
	defer cancel()
	f.afterTakeScript = cancel
	l, err := f.Take(cut)
	f.afterTakeScript = nil
	c, cerr := f.Counts(ctx)
	if cerr != nil {
		t.Fatal(cerr)
	}
	if err != nil {
		if want := (crawl.Counts{Queued: 1}); c != want {
			t.Fatalf("Take cut after its script leased: %v, and Counts %+v; want the URL queued as before, %+v", err, c, want)
		}
		return
	}
	if l.URL != page.URL || l.Rules == nil || string(l.Rules.Robots) != string(rules.Robots) {
		t.Errorf("Take cut after its script leased: got %s with rules %+v, want %s with %+v", l.URL, l.Rules, page.URL, rules)
	}
	if want := (crawl.Counts{Leased: 1, Pages: 1}); c != want {
		t.Errorf("Take cut after its script leased returned its lease; Counts %+v, want %+v", c, want)
	}
	if _, err := f.Ack(ctx, l, crawl.Outcome{Result: &crawl.Result{URL: l.URL, Status: 200}}); err != nil {
		t.Errorf("Ack of the lease: %v", err)
	}
	if err := f.Join(ctx); err != nil {
		t.Errorf("Join: %v", err)
	}
}

// TestAckTakeCutMidCall: an AckTake whose take ctx ends while its Acks'
// call is on its way (after the call leased for it, before the lease is
// handed out) gets no lease, and the lease made for it goes back: nothing
// is left leased, and the URL is taken again.
func TestAckTakeCutMidCall(t *testing.T) {
	ctx := context.Background()
	f := startFrontier(t, "acktakecut", crawl.Policy{HostWorkers: 4})
	defer f.Close()
	if _, err := f.Push(ctx, crawl.Request{URL: "https://a.example/1"}, crawl.Request{URL: "https://a.example/2"}); err != nil {
		t.Fatal(err)
	}
	l, err := f.Take(ctx)
	if err != nil {
		t.Fatal(err)
	}
	take, cancel := context.WithCancel(ctx)
	f.beforeServe = cancel
	_, next, err := f.AckTake(ctx, take, l, crawl.Outcome{Result: &crawl.Result{URL: l.URL, Status: 200}})
	if err != nil || next != nil {
		t.Fatalf("AckTake with its take ctx ended mid-call: got (%v, %v), want no lease and no error", next, err)
	}
	f.beforeServe = nil
	c, err := f.Counts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if c.Leased != 0 || c.Queued != 1 || c.Done != 1 {
		t.Fatalf("Counts after an AckTake cut mid-call: %+v, want Queued 1, Leased 0, Done 1", c)
	}
	if l2, err := f.Take(ctx); err != nil || l2.URL != "https://a.example/2" {
		t.Fatalf("Take after: %v, %v; want https://a.example/2 again", l2, err)
	}
}
