package redisfrontier_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/asyncrawl/crawl"
	"github.com/asyncrawl/crawl/redisfrontier/redistest"
	"github.com/redis/go-redis/v9"
)

// scriptCalls returns the script calls the server at addr has run so far
// (EVALSHA and EVAL, INFO commandstats).
func scriptCalls(t *testing.T, addr string) int {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	info, err := c.Info(t.Context(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(info, "\r\n") {
		for _, cmd := range []string{"cmdstat_evalsha:calls=", "cmdstat_eval:calls="} {
			if rest, ok := strings.CutPrefix(line, cmd); ok {
				v, _ := strconv.Atoi(rest[:strings.IndexByte(rest, ',')])
				n += v
			}
		}
	}
	return n
}

// TestAckTake: a worker that acks with AckTake has its next lease in the
// same script call, one round trip a URL where Ack then Take cost two; on
// one host with HostWorkers 1, the slot the ack frees is the one the next
// lease takes. A lease made for an AckTake whose take ctx is done goes
// back, and the crawl ends with nothing leased.
func TestAckTake(t *testing.T) {
	s := redistest.Start(t)
	p := crawl.Policy{HostWorkers: 1, LeaseTerm: time.Minute}
	f := process(t, s, "acktake", p)
	const n = 20
	var reqs []crawl.Request
	for i := range n {
		reqs = append(reqs, crawl.Request{URL: "https://h.example/" + strconv.Itoa(i)})
	}
	if _, err := f.Push(t.Context(), reqs...); err != nil {
		t.Fatal(err)
	}
	l, err := f.Take(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var a crawl.AckTaker = f
	before := 0
	var got []string
	for i := 0; l != nil; i++ {
		got = append(got, l.URL)
		if i == n-5 {
			break
		}
		if i == 1 {
			// The first loaded the script (NOSCRIPT, then EVAL).
			before = scriptCalls(t, s.Addr())
		}
		var next *crawl.Lease
		_, next, err = a.AckTake(t.Context(), t.Context(), l, crawl.Outcome{Result: &crawl.Result{URL: l.URL, Status: 200}})
		if err != nil {
			t.Fatal(err)
		}
		if next == nil {
			t.Fatalf("AckTake of %s returned no lease, want the host's next URL (%d of %d acked)", l.URL, i+1, n)
		}
		l = next
	}
	calls := scriptCalls(t, s.Addr()) - before
	// One call an AckTake (and the reads of INFO are no script calls).
	if acks := len(got) - 2; calls != acks {
		t.Errorf("%d AckTakes made %d script calls, want one each", acks, calls)
	}
	for i, u := range got {
		if want := reqs[i].URL; u != want {
			t.Fatalf("lease %d is %s, want %s (in order of admission)", i, u, want)
		}
	}

	// A take ctx done: the ack is made, no lease comes back, none is out.
	done, cancel := context.WithCancel(t.Context())
	cancel()
	_, next, err := a.AckTake(t.Context(), done, l, crawl.Outcome{Result: &crawl.Result{URL: l.URL, Status: 200}})
	if err != nil || next != nil {
		t.Fatalf("AckTake with its take ctx done: got (%v, %v), want no lease and no error", next, err)
	}
	c, err := f.Counts(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if left := n - len(got); c.Leased != 0 || c.Queued != left || c.Done != len(got) {
		t.Fatalf("Counts after an AckTake with its take ctx done: %+v, want Queued %d, Leased 0, Done %d", c, left, len(got))
	}

	// An AckTake of a lease lost returns ErrLeaseLost and no lease, and
	// leaves nothing leased.
	l, err = f.Take(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Ack(t.Context(), l, crawl.Outcome{}); err != nil {
		t.Fatal(err)
	}
	_, next, err = a.AckTake(t.Context(), t.Context(), l, crawl.Outcome{})
	if err != crawl.ErrLeaseLost || next != nil {
		t.Fatalf("AckTake of a lease acked already: got (%v, %v), want no lease and ErrLeaseLost", next, err)
	}
	if c, err := f.Counts(t.Context()); err != nil || c.Leased != 0 {
		t.Fatalf("Counts after an AckTake of a lost lease: %+v, %v; want Leased 0", c, err)
	}
}
