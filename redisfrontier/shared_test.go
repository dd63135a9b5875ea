package redisfrontier_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/asyncrawl/crawl"
	"github.com/asyncrawl/crawl/redisfrontier"
	"github.com/asyncrawl/crawl/redisfrontier/redistest"
	"github.com/redis/go-redis/v9"
)

// process returns a Frontier of crawl name on s with a client of its own,
// as another crawler process would have, started under p.
func process(t *testing.T, s *redistest.Server, name string, p crawl.Policy) *redisfrontier.Frontier {
	t.Helper()
	f := open(t, s, &redisfrontier.Options{Name: name})
	if err := f.Start(t.Context(), p); err != nil {
		t.Fatalf("Start: %v", err)
	}
	return f
}

// siteURL is URL n of a test site of 4 hosts; URL n links to 2n+1 and
// 2n+2, up to size.
func siteURL(n int) crawl.Request {
	return crawl.Request{URL: fmt.Sprintf("https://h%d.example/%d", n%4, n)}
}

func siteLinks(u string, size int) []crawl.Request {
	n, _ := strconv.Atoi(u[len(crawl.HostKey(u))+1:])
	var out []crawl.Request
	for _, c := range []int{2*n + 1, 2*n + 2, n / 2} {
		if c < size {
			out = append(out, siteURL(c))
		}
	}
	return out
}

// TestSharedLeaseTakenBack: a lease of one process, not extended, is taken
// back after the term by the other process; the first holder's Ack,
// Retry and Extend then return ErrLeaseLost, and Counts, read from either
// process, are the crawl's.
func TestSharedLeaseTakenBack(t *testing.T) {
	s := redistest.Start(t)
	const term = 300 * time.Millisecond
	p := crawl.Policy{HostWorkers: 1, LeaseTerm: term}
	a, b := process(t, s, "shared", p), process(t, s, "shared", p)
	if a.Owner() == b.Owner() {
		t.Fatalf("two Frontiers with one owner %q", a.Owner())
	}
	if n, err := a.Push(t.Context(), siteURL(0)); n != 1 || err != nil {
		t.Fatalf("Push: %d, %v; want 1, nil", n, err)
	}
	la, err := a.Take(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	lb, err := b.Take(ctx) // a stalls: b gets the URL once the lease expires
	if err != nil {
		t.Fatalf("Take in process b while a holds the only URL, term %v: %v", term, err)
	}
	if lb.URL != la.URL || lb.ID == la.ID {
		t.Fatalf("process b took %s (lease %s), want %s under a new lease (a's was %s)", lb.URL, lb.ID, la.URL, la.ID)
	}
	if d := time.Since(began); d < term/2 {
		t.Errorf("b took the URL %v after a did, want about the term, %v", d, term)
	}
	if _, err := a.Ack(t.Context(), la, crawl.Outcome{Result: &crawl.Result{URL: la.URL, Status: 200}}); !errors.Is(err, crawl.ErrLeaseLost) {
		t.Errorf("Ack by a of its lease taken back: got %v, want ErrLeaseLost", err)
	}
	if err := a.Retry(t.Context(), la, time.Time{}); !errors.Is(err, crawl.ErrLeaseLost) {
		t.Errorf("Retry by a of its lease taken back: got %v, want ErrLeaseLost", err)
	}
	if err := a.Extend(t.Context(), la); !errors.Is(err, crawl.ErrLeaseLost) {
		t.Errorf("Extend by a of its lease taken back: got %v, want ErrLeaseLost", err)
	}
	for _, f := range []*redisfrontier.Frontier{a, b} {
		if c, _ := f.Counts(t.Context()); c != (crawl.Counts{Leased: 1, Pages: 1}) {
			t.Errorf("Counts with b holding the URL, a's ack refused: %+v, want Leased 1, Pages 1", c)
		}
	}
	if _, err := b.Ack(t.Context(), lb, crawl.Outcome{Result: &crawl.Result{URL: lb.URL, Status: 200}}); err != nil {
		t.Fatalf("Ack by b: %v", err)
	}
	for _, f := range []*redisfrontier.Frontier{a, b} {
		if c, _ := f.Counts(t.Context()); c != (crawl.Counts{Done: 1, Pages: 1}) {
			t.Errorf("Counts after b's ack: %+v, want Done 1, Pages 1", c)
		}
		if st, _ := f.Stats(t.Context()); st.Done != 1 || st.StatusCounts[200] != 1 {
			t.Errorf("Stats after b's ack (a's refused): Done %d, 200s %d; want 1, 1", st.Done, st.StatusCounts[200])
		}
	}
}

// crawlSite runs workers on f until ctx is done, acking each URL with its
// links; took is called with each lease taken, acked as its Ack begins and
// again when it has returned, with its error.
func crawlSite(ctx context.Context, f *redisfrontier.Frontier, workers, size int, took func(*crawl.Lease), acked func(*crawl.Lease, bool, error)) *sync.WaitGroup {
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				l, err := f.Take(ctx)
				if err != nil {
					return
				}
				took(l)
				time.Sleep(time.Millisecond) // as if fetching
				acked(l, false, nil)
				_, err = f.Ack(context.Background(), l, crawl.Outcome{Links: siteLinks(l.URL, size), Result: &crawl.Result{URL: l.URL, Status: 200, ContentType: "text/html", Size: 100}})
				acked(l, true, err)
			}
		})
	}
	return &wg
}

// TestSharedJoin: two processes crawl one site; Join in each returns only
// once every URL is acked, by either, and each URL is acked once.
func TestSharedJoin(t *testing.T) {
	s := redistest.Start(t)
	p := crawl.Policy{HostWorkers: 2, LeaseTerm: 10 * time.Second}
	crawlShared(t, []*redisfrontier.Frontier{process(t, s, "join", p), process(t, s, "join", p)}, 300, nil)
}

// crawlShared has procs crawl the test site of size URLs from URL 0, with
// 8 workers each, calling midway (if not nil) once a third of the URLs are
// acked. It checks that no URL is leased to two holders at once, that
// every Ack succeeds, that Join in each process returns only once every
// Ack has begun, that every URL is acked once, and that Counts are exact.
func crawlShared(t *testing.T, procs []*redisfrontier.Frontier, size int, midway func()) {
	t.Helper()
	var (
		mu       sync.Mutex
		acks     = map[string]int{}
		held     = map[string]bool{}
		problems []string
		begun    int
	)
	took := func(l *crawl.Lease) {
		mu.Lock()
		defer mu.Unlock()
		if held[l.URL] {
			problems = append(problems, l.URL+" leased to two holders at once")
		}
		held[l.URL] = true
	}
	acked := func(l *crawl.Lease, returned bool, err error) {
		mu.Lock()
		defer mu.Unlock()
		if !returned {
			delete(held, l.URL)
			begun++
			return
		}
		if err != nil {
			problems = append(problems, fmt.Sprintf("Ack of %s: %v", l.URL, err))
		}
		acks[l.URL]++
	}
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	var wgs []*sync.WaitGroup
	for _, f := range procs {
		wgs = append(wgs, crawlSite(ctx, f, 8, size, took, acked))
	}
	if _, err := procs[0].Push(t.Context(), siteURL(0)); err != nil {
		t.Fatal(err)
	}
	joined := make(chan int, len(procs)) // the Acks begun when Join returned
	for _, f := range procs {
		go func() {
			jctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			if err := f.Join(jctx); err != nil {
				t.Errorf("Join: %v", err)
			}
			mu.Lock()
			joined <- begun
			mu.Unlock()
		}()
	}
	for midway != nil {
		mu.Lock()
		n := len(acks)
		mu.Unlock()
		if n >= size/3 {
			midway()
			break
		}
		time.Sleep(2 * time.Millisecond)
	}
	for range procs {
		if n := <-joined; n < size {
			t.Errorf("Join returned when %d Acks of the %d URLs had begun, want it to wait for all", n, size)
		}
	}
	stop()
	for _, wg := range wgs {
		wg.Wait()
	}
	if len(acks) != size {
		t.Errorf("%d URLs acked, want %d", len(acks), size)
	}
	for _, p := range problems {
		t.Error(p)
	}
	for u, n := range acks {
		if n != 1 {
			t.Errorf("%s acked %d times, want once", u, n)
		}
	}
	for _, f := range procs {
		if c, _ := f.Counts(t.Context()); c != (crawl.Counts{Done: size, Pages: size}) {
			t.Errorf("Counts: %+v, want Done and Pages %d", c, size)
		}
	}
}

// serverTime returns the Redis server's clock.
func serverTime(t *testing.T, c *redis.Client) time.Time {
	t.Helper()
	tm, err := c.Time(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	return tm
}

// TestSharedPoliteness: two processes take one host's URLs at once; on
// the server's clock, the starts are at least HostDelay/2 apart (pauses
// are drawn from [d/2, 3d/2]) and never more than HostWorkers are out.
func TestSharedPoliteness(t *testing.T) {
	s := redistest.Start(t)
	const (
		d = 100 * time.Millisecond
		n = 12
	)
	p := crawl.Policy{HostWorkers: 2, HostDelay: d, LeaseTerm: 10 * time.Second}
	procs := []*redisfrontier.Frontier{process(t, s, "polite", p), process(t, s, "polite", p)}
	var reqs []crawl.Request
	for i := range n {
		reqs = append(reqs, crawl.Request{URL: fmt.Sprintf("https://one.example/%d", i)})
	}
	if _, err := procs[0].Push(t.Context(), reqs...); err != nil {
		t.Fatal(err)
	}
	clock := redis.NewClient(&redis.Options{Addr: s.Addr()})
	defer clock.Close()
	type span struct{ began, ended time.Time }
	var (
		mu     sync.Mutex
		spans  []span
		out    int
		peak   int
		taken  int
		wg     sync.WaitGroup
		failed error
	)
	for _, f := range procs {
		for range 3 {
			wg.Go(func() {
				for {
					mu.Lock()
					if taken == n {
						mu.Unlock()
						return
					}
					mu.Unlock()
					ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
					began := serverTime(t, clock)
					l, err := f.Take(ctx)
					ended := serverTime(t, clock)
					cancel()
					if err != nil {
						continue // the last URLs are the others'
					}
					mu.Lock()
					taken++
					out++
					peak = max(peak, out)
					spans = append(spans, span{began, ended})
					mu.Unlock()
					time.Sleep(30 * time.Millisecond)
					mu.Lock()
					out--
					mu.Unlock()
					if _, err := f.Ack(context.Background(), l, crawl.Outcome{}); err != nil {
						mu.Lock()
						failed = err
						mu.Unlock()
					}
				}
			})
		}
	}
	wg.Wait()
	if failed != nil {
		t.Fatal(failed)
	}
	if peak > p.HostWorkers {
		t.Errorf("%d leases of one host out at once over two processes, HostWorkers %d", peak, p.HostWorkers)
	}
	// Each start lies within its Take's span, on the server's clock. Two
	// starts were surely closer than d/2 when even the farthest points of
	// their spans are; and n starts take at least (n-1)·d/2.
	first, last := spans[0].began, spans[0].ended
	for i := range spans {
		if spans[i].began.Before(first) {
			first = spans[i].began
		}
		if spans[i].ended.After(last) {
			last = spans[i].ended
		}
		for j := range i {
			if far := max(spans[j].ended.Sub(spans[i].began), spans[i].ended.Sub(spans[j].began)); far < d/2 {
				t.Errorf("two starts of one host at most %v apart on the server's clock, HostDelay %v", far, d)
			}
		}
	}
	if span, least := last.Sub(first), time.Duration(n-1)*d/2; span < least {
		t.Errorf("%d starts of one host, HostDelay %v, over two processes: within %v on the server's clock, want at least %v", n, d, span, least)
	}
	if len(spans) != n {
		t.Errorf("%d URLs taken, want %d", len(spans), n)
	}
}

// TestOwnerRestart: a process that dies without Close, under a LeaseTerm
// of 0 (leases never expire), leaves its leases out; started again with
// the same Options.Owner, it takes them back at Start, and the dead
// incarnation's leases are lost to it.
func TestOwnerRestart(t *testing.T) {
	s := redistest.Start(t)
	p := crawl.Policy{HostWorkers: 1}
	c1 := redis.NewClient(&redis.Options{Addr: s.Addr()})
	dead := redisfrontier.New(c1, &redisfrontier.Options{Name: "restart", Owner: "worker-1"})
	if err := dead.Start(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	if _, err := dead.Push(t.Context(), siteURL(0)); err != nil {
		t.Fatal(err)
	}
	l, err := dead.Take(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	c1.Close() // the process dies: no Close, its lease stays out

	f := open(t, s, &redisfrontier.Options{Name: "restart", Owner: "worker-1"})
	if err := f.Start(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	if c, _ := f.Counts(t.Context()); c != (crawl.Counts{Queued: 1, Pages: 1}) {
		t.Errorf("Counts after the owner's restart: %+v, want its lease queued again", c)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	l2, err := f.Take(ctx)
	if err != nil || l2.URL != l.URL {
		t.Fatalf("Take after the owner's restart: %v, %v; want %s again", l2, err, l.URL)
	}
	if err := f.Extend(t.Context(), l); !errors.Is(err, crawl.ErrLeaseLost) {
		t.Errorf("Extend of the dead incarnation's lease: %v, want ErrLeaseLost", err)
	}
	if _, err := f.Ack(t.Context(), l2, crawl.Outcome{}); err != nil {
		t.Fatal(err)
	}
}
