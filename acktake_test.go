package crawl_test

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/asyncrawl/crawl"
)

// ackTaker is a MemoryFrontier that is a crawl.AckTaker: Ack, then a Take
// that waits at most a millisecond (none: no lease). It counts the leases
// its AckTakes brought.
type ackTaker struct {
	*crawl.MemoryFrontier
	calls, brought atomic.Int64
}

func (f *ackTaker) AckTake(ctx, take context.Context, l *crawl.Lease, o crawl.Outcome) (int, *crawl.Lease, error) {
	f.calls.Add(1)
	n, err := f.Ack(ctx, l, o)
	if err != nil || take.Err() != nil {
		return n, nil, err
	}
	tctx, cancel := context.WithTimeout(take, time.Millisecond)
	defer cancel()
	next, err := f.Take(tctx)
	if err != nil {
		return n, nil, nil
	}
	f.brought.Add(1)
	return n, next, nil
}

// TestAckTake: with a Frontier that is an AckTaker, the workers ack with
// AckTake and work on the lease it brings without a Take. A Run cancelled
// while the workers hold leases AckTake brought gives them back (nothing
// is left leased), and a second Run on the frontier finishes the crawl:
// each page has one Result in all, and only the fetches the cancel cut
// are made twice.
func TestAckTake(t *testing.T) {
	const n = 60
	mux := http.NewServeMux()
	var hrefs []string
	for i := range n {
		hrefs = append(hrefs, "/p/"+strconv.Itoa(i))
	}
	mux.Handle("/{$}", htmlPage(crawlerLinks(hrefs...)))
	block := make(chan struct{})
	var fetched atomic.Int64
	mux.HandleFunc("/p/{i}", func(w http.ResponseWriter, r *http.Request) {
		if fetched.Add(1) == n/2 {
			<-block // the Run is cancelled while this one waits
		}
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte("<p>leaf</p>"))
	})
	s := newSite(t, mux)
	f := &ackTaker{MemoryFrontier: crawl.NewMemoryFrontier()}
	results := map[string]int{}
	var mu sync.Mutex
	run := func(ctx context.Context) (*crawl.Stats, error) {
		c, err := crawl.New(crawl.WithHTTPClient(s.Client()), crawl.WithFrontier(f), crawl.WithWorkers(4),
			crawl.WithHostWorkers(4), crawl.WithRobots(false),
			crawl.WithResultHook(func(r crawl.Result) { mu.Lock(); results[r.URL]++; mu.Unlock() }))
		if err != nil {
			t.Fatal(err)
		}
		return c.Run(ctx, s.URL+"/")
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for fetched.Load() < n/2 {
			time.Sleep(time.Millisecond)
		}
		cancel()
		time.Sleep(20 * time.Millisecond)
		close(block)
	}()
	if _, err := run(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("first Run: %v, want context.Canceled", err)
	}
	c, err := f.Counts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if c.Leased != 0 {
		t.Fatalf("after a cancelled Run: Counts %+v, want nothing leased", c)
	}
	// Bounded: a lease AckTake brought and no worker took would keep the
	// crawl from ending.
	ctx2, cancel2 := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel2()
	if _, err := run(ctx2); err != nil {
		t.Fatalf("second Run: %v (want the crawl to end)", err)
	}
	if f.calls.Load() == 0 || f.brought.Load() == 0 {
		t.Fatalf("AckTake called %d times, bringing %d leases: want the workers to ack with it and use what it brings", f.calls.Load(), f.brought.Load())
	}
	twice := 0
	for _, h := range hrefs {
		switch got := s.Hits(h); {
		case got == 2:
			twice++ // its fetch was under way when the Run was cancelled
		case got != 1:
			t.Errorf("%s fetched %d times, want once (twice if the cancel cut its fetch)", h, got)
		}
		if got := results[s.URL+h]; got != 1 {
			t.Errorf("%s has %d Results, want one", h, got)
		}
	}
	if twice > 4 {
		t.Errorf("%d pages fetched twice, want at most the 4 workers' fetches the cancel cut", twice)
	}
	if c, err := f.Counts(context.Background()); err != nil || c.Leased != 0 || c.Queued != 0 || c.Done != n+1 {
		t.Fatalf("after the crawl: Counts %+v (%v), want Done %d and nothing queued or leased", c, err, n+1)
	}
}
