package redisfrontier

import (
	"context"
	"testing"
	"time"

	"github.com/asyncrawl/crawl"
	"github.com/redis/go-redis/v9"
)

// TestReplay: a script call sent twice under one call number (go-redis, or
// eval's own retry, sending it again after its reply was lost) changes the
// crawl once and answers the same both times: Push admits once, Take
// leases once, Ack counts once.
func TestReplay(t *testing.T) {
	ctx := context.Background()
	f := startFrontier(t, "replay", crawl.Policy{HostWorkers: 4})
	defer f.Close()
	twice := func(what string, script *redis.Script, args ...any) string {
		t.Helper()
		seq, low := f.beginOp()
		defer f.endOp(seq)
		first, err := f.evalAs(ctx, script, seq, low, args...)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		again, err := f.evalAs(ctx, script, seq, low, args...)
		if err != nil {
			t.Fatalf("%s sent again: %v", what, err)
		}
		if again != first {
			t.Errorf("%s sent again: reply %q, want %q as the first time", what, again, first)
		}
		return first
	}
	reqs := []crawl.Request{{URL: "https://a.example/1"}, {URL: "https://a.example/2"}}
	pr := fields{s: twice("Push", pushScript, appendAdmissions([]any{"-"}, admissions(reqs, f.bits))...)}
	if run, got := pr.next(), pr.int(); run != "-" || got != 2 {
		t.Errorf("Push of 2 new URLs, twice: run %q, admitted %d, want -, 2", run, got)
	}
	twice("Take", takeScript, 1, "t0k", "0.5")
	if cnt, _ := f.Counts(ctx); cnt != (crawl.Counts{Queued: 1, Leased: 1, Pages: 1}) {
		t.Fatalf("Take for one lease, twice: Counts %+v, want one leased, one queued", cnt)
	}
	l, err := f.Take(ctx)
	if err != nil {
		t.Fatal(err)
	}
	a := &pendingAck{args: []any{l.ID, "0", "0", "", 0, "0.5", "", ""},
		stats: appendStats(nil, crawl.Outcome{Result: &crawl.Result{URL: l.URL, Status: 200, ContentType: "text/html", Size: 10}})}
	links := admissions([]crawl.Request{{URL: "https://a.example/3"}}, f.bits)
	args := appendAcks([]any{"-"}, []*pendingAck{a}, func(int) []admission { return links })
	reply := twice("Ack", ackScript, args...)
	r := fields{s: reply}
	r.next() // the run
	if acked := r.next(); acked != "11 " {
		t.Errorf("Ack with one new link, twice: reply %q, want \"11 \" (owned, 1 admitted)", acked)
	}
	if cnt, _ := f.Counts(ctx); cnt != (crawl.Counts{Queued: 1, Leased: 1, Done: 1, Pages: 2}) {
		t.Errorf("Ack twice: Counts %+v, want Done 1", cnt)
	}
	if st, _ := f.Stats(ctx); st.Done != 1 || st.HTML != 1 || st.HTMLBytes != 10 {
		t.Errorf("Ack twice: Stats Done %d, HTML %d, HTMLBytes %d; want 1, 1, 10", st.Done, st.HTML, st.HTMLBytes)
	}
}

// TestTakeGivenUp: a Take whose ctx ends while its call may be on the
// server gives back what the call leased, as if it had never been made:
// the URL is queued again, the budget and the host's delay not charged.
func TestTakeGivenUp(t *testing.T) {
	ctx := context.Background()
	f := startFrontier(t, "givenup", crawl.Policy{HostWorkers: 1, HostDelay: time.Hour})
	defer f.Close()
	if _, err := f.Push(ctx, crawl.Request{URL: "https://a.example/1"}); err != nil {
		t.Fatal(err)
	}
	// The call goes out under its number after all: as if it had run and
	// its reply been lost.
	seq, low := f.beginOp()
	if _, err := f.evalAs(ctx, takeScript, seq, low, 1, "t0k", "0.5"); err != nil {
		t.Fatal(err)
	}
	go f.undoTake(seq, low, []any{1, "t0k", "0.5"}) // it ends the call
	deadline := time.Now().Add(5 * time.Second)
	for {
		cnt, err := f.Counts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if cnt == (crawl.Counts{Queued: 1}) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a take given up: Counts %+v, want the URL queued again, nothing leased or paid", cnt)
		}
		time.Sleep(10 * time.Millisecond)
	}
	tctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if _, err := f.Take(tctx); err != nil {
		t.Errorf("Take after a take given up, HostDelay 1h: %v, want the URL at once (no request was sent)", err)
	}
}
