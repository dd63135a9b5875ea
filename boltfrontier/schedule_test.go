package boltfrontier

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/asyncrawl/crawl"
)

// open opens a new state file in a temporary directory, closed when the
// test ends.
func open(t testing.TB, opts *Options) (*Frontier, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "state.db")
	f, err := Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	return f, path
}

// TestSchedule drives the Frontier as crawl's own schedule test drives the
// MemoryFrontier: workers take, "fetch" for a random fake time, sometimes
// retry or pause their host, and push new URLs on a few hosts. A prefetch
// of 2 makes hosts read their queues back from the file. It checks host
// workers, host delay, pauses, retry times, that every URL is done exactly
// once, that Join returns then, and that the file says the same on reopen.
func TestSchedule(t *testing.T) {
	for seed := range uint64(12) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			dir := t.TempDir()
			synctest.Test(t, func(t *testing.T) { scheduleRun(t, seed, dir) })
		})
	}
}

func scheduleRun(t *testing.T, seed uint64, dir string) {
	rng := rand.New(rand.NewPCG(seed, 1))
	hostWorkers := 1 + rng.IntN(4)
	hostDelay := time.Duration(rng.IntN(3)) * 10 * time.Millisecond
	robots := rng.IntN(2) == 0
	workers := 1 + rng.IntN(8)
	hosts := 1 + rng.IntN(4)
	path := filepath.Join(dir, "state.db")
	f, err := Open(path, &Options{Prefetch: 2, NoSync: true, CommitMax: 1 + rng.IntN(20)})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Start(context.Background(), crawl.Policy{HostWorkers: hostWorkers, HostDelay: hostDelay, Robots: robots}); err != nil {
		t.Fatal(err)
	}
	retryAt := map[string]time.Time{}
	var mu sync.Mutex
	inflight := map[string]int{}
	lastStart := map[string]time.Time{}
	pauses := map[string][2]time.Time{}
	done := map[string]int{}
	pushed := 0
	const maxTasks = 150
	fail := func(format string, args ...any) {
		t.Helper()
		t.Errorf("seed %d (hostWorkers %d, delay %v, robots %v, %d workers, %d hosts): "+format,
			append([]any{seed, hostWorkers, hostDelay, robots, workers, hosts}, args...)...)
	}
	newTasks := func(n int) []crawl.Request {
		mu.Lock()
		defer mu.Unlock()
		var ts []crawl.Request
		for range n {
			if pushed >= maxTasks {
				break
			}
			ts = append(ts, crawl.Request{URL: fmt.Sprintf("http://h%d.test/p%d", rng.IntN(hosts), pushed)})
			pushed++
		}
		return ts
	}
	if _, err := f.Push(context.Background(), newTasks(3)...); err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for w := range workers {
		wrng := rand.New(rand.NewPCG(seed, uint64(w)+2))
		wg.Go(func() {
			for {
				tk, err := f.Take(ctx)
				if err != nil {
					return
				}
				h := crawl.HostKey(tk.URL)
				now := time.Now()
				mu.Lock()
				inflight[h]++
				if inflight[h] > hostWorkers {
					fail("%d tasks of %s in flight, limit %d", inflight[h], h, hostWorkers)
				}
				if last, ok := lastStart[h]; ok && now.Sub(last) < hostDelay/2 {
					fail("%s started %v after the previous start, delay %v", tk.URL, now.Sub(last), hostDelay)
				}
				if p := pauses[h]; now.After(p[0]) && now.Before(p[1]) {
					fail("%s started during its host's pause", tk.URL)
				}
				if at := retryAt[tk.URL]; now.Before(at) {
					fail("retry of %s started %v early", tk.URL, at.Sub(now))
				}
				if robots && tk.Kind != crawl.RobotsRequest && tk.Rules == nil {
					fail("lease of %s without its host's rules", tk.URL)
				}
				lastStart[h] = now
				mu.Unlock()

				time.Sleep(time.Duration(wrng.IntN(20)) * time.Millisecond)

				mu.Lock()
				inflight[h]--
				mu.Unlock()
				switch r := wrng.IntN(10); {
				case tk.Kind == crawl.RobotsRequest && r < 3:
					tk.Tries++
					at := time.Now().Add(time.Duration(wrng.IntN(30)) * time.Millisecond)
					mu.Lock()
					retryAt[tk.URL] = at
					mu.Unlock()
					f.Retry(ctx, tk, at)
				case tk.Kind == crawl.RobotsRequest:
					f.Ack(ctx, tk, crawl.Outcome{Rules: &crawl.HostRules{Robots: []byte("User-agent: *\n")}})
				case r == 0 && tk.Tries < 3:
					tk.Tries++
					at := time.Now().Add(time.Duration(wrng.IntN(50)) * time.Millisecond)
					mu.Lock()
					retryAt[tk.URL] = at
					mu.Unlock()
					f.Retry(ctx, tk, at)
				case r == 1 && tk.Tries < 3:
					until := time.Now().Add(40 * time.Millisecond)
					mu.Lock()
					pauses[h] = [2]time.Time{time.Now(), until}
					retryAt[tk.URL] = until
					mu.Unlock()
					f.Pause(ctx, h, until)
					tk.Tries++
					f.Retry(ctx, tk, until)
				default:
					mu.Lock()
					done[tk.URL]++
					mu.Unlock()
					res := &crawl.Result{URL: tk.URL, Status: 200, Tries: tk.Tries + 1}
					if _, err := f.Ack(ctx, tk, crawl.Outcome{Result: res, Links: newTasks(wrng.IntN(4))}); err != nil {
						fail("ack %s: %v", tk.URL, err)
					}
				}
			}
		})
	}
	jctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	if err := f.Join(jctx); err != nil {
		fail("join: %v (the crawl never ended: a task was lost or nobody was woken)", err)
	}
	stop()
	wg.Wait()

	mu.Lock()
	defer mu.Unlock()
	if len(done) != pushed {
		fail("%d tasks done, %d pushed", len(done), pushed)
	}
	for u, n := range done {
		if n != 1 {
			fail("%s done %d times", u, n)
		}
	}
	if c, _ := f.Counts(context.Background()); c.Queued != 0 || c.Leased != 0 || c.Done != pushed || c.Pages != pushed {
		fail("Counts after join = %+v, want 0 queued, 0 leased, %d done and pages", c, pushed)
	}
	if _, err := f.Ack(context.Background(), &crawl.Lease{ID: "1", Request: crawl.Request{URL: "http://h0.test/x"}}, crawl.Outcome{}); !errors.Is(err, crawl.ErrLeaseLost) {
		fail("ack of a lease not out: got %v, want ErrLeaseLost", err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	f, err = Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if c, _ := f.Counts(context.Background()); c.Queued != 0 || c.Leased != 0 || c.Done != pushed || c.Pages != pushed {
		fail("Counts after reopen = %+v, want 0 queued, 0 leased, %d done and pages", c, pushed)
	}
	results := map[string]int{}
	f.Results(context.Background(), func(r crawl.Result) bool { results[r.URL]++; return true })
	for u := range done {
		if results[u] != 1 {
			fail("%s has %d Results, want 1", u, results[u])
		}
	}
	if len(results) != len(done) {
		fail("%d URLs have Results, want %d", len(results), len(done))
	}
}

// TestBudget checks that the page budget is exact with many workers, that
// Unsent acks do not count, and that Join returns once the URLs taken
// are done.
func TestBudget(t *testing.T) {
	dir := t.TempDir()
	synctest.Test(t, func(t *testing.T) {
		f, err := Open(filepath.Join(dir, "s.db"), &Options{Prefetch: 3, NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		f.Start(context.Background(), crawl.Policy{HostWorkers: 100, MaxPages: 7})
		var ts []crawl.Request
		for i := range 50 {
			ts = append(ts, crawl.Request{URL: fmt.Sprintf("http://h%d.test/p%d", i%3, i)})
		}
		f.Push(context.Background(), ts...)
		ctx, stop := context.WithCancel(context.Background())
		var mu sync.Mutex
		taken, unsent := 0, 0
		var wg sync.WaitGroup
		for range 20 {
			wg.Go(func() {
				for {
					tk, err := f.Take(ctx)
					if err != nil {
						return
					}
					mu.Lock()
					taken++
					u := unsent < 2
					if u {
						unsent++
					}
					mu.Unlock()
					time.Sleep(time.Millisecond)
					f.Ack(ctx, tk, crawl.Outcome{Unsent: u})
				}
			})
		}
		if err := f.Join(context.Background()); err != nil {
			t.Fatal(err)
		}
		stop()
		wg.Wait()
		c, _ := f.Counts(context.Background())
		if taken != 9 || c.Pages != 7 || c.Queued != 41 || c.Done != 9 {
			t.Errorf("taken %d, counts %+v; want 9 taken (2 unsent), 7 pages, 41 queued, 9 done", taken, c)
		}
	})
}

// TestLeaseExpiry checks that a lease not extended is taken back after
// LeaseTerm and handed out again, and that its old holder gets
// ErrLeaseLost; an extended one is kept.
func TestLeaseExpiry(t *testing.T) {
	dir := t.TempDir()
	synctest.Test(t, func(t *testing.T) {
		f, err := Open(filepath.Join(dir, "s.db"), &Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		ctx := context.Background()
		f.Start(ctx, crawl.Policy{HostWorkers: 2, LeaseTerm: time.Second})
		f.Push(ctx, crawl.Request{URL: "http://a.test/1"}, crawl.Request{URL: "http://a.test/2"})
		l1, _ := f.Take(ctx)
		l2, _ := f.Take(ctx)
		for range 3 {
			time.Sleep(500 * time.Millisecond)
			if err := f.Extend(ctx, l2); err != nil {
				t.Fatalf("extend %s: %v", l2.URL, err)
			}
		}
		l3, err := f.Take(ctx)
		if err != nil || l3.URL != l1.URL {
			t.Fatalf("take after expiry: got %v, %v; want %s again", l3, err, l1.URL)
		}
		if err := f.Extend(ctx, l1); !errors.Is(err, crawl.ErrLeaseLost) {
			t.Errorf("extend of expired lease: got %v, want ErrLeaseLost", err)
		}
		if _, err := f.Ack(ctx, l1, crawl.Outcome{}); !errors.Is(err, crawl.ErrLeaseLost) {
			t.Errorf("ack of expired lease: got %v, want ErrLeaseLost", err)
		}
		if err := f.Retry(ctx, l1, time.Time{}); !errors.Is(err, crawl.ErrLeaseLost) {
			t.Errorf("retry of expired lease: got %v, want ErrLeaseLost", err)
		}
		f.Ack(ctx, l2, crawl.Outcome{Result: &crawl.Result{URL: l2.URL}})
		f.Ack(ctx, l3, crawl.Outcome{Result: &crawl.Result{URL: l3.URL}})
		if c, _ := f.Counts(ctx); c != (crawl.Counts{Done: 2, Pages: 2}) {
			t.Errorf("counts %+v, want 2 done, 2 pages", c)
		}
	})
}

// TestCloseWakesTake checks that Close wakes a blocked Take with
// ErrFrontierClosed and that every later call returns it.
func TestCloseWakesTake(t *testing.T) {
	f, _ := open(t, nil)
	errc := make(chan error, 1)
	go func() {
		_, err := f.Take(context.Background())
		errc <- err
	}()
	time.Sleep(10 * time.Millisecond)
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; !errors.Is(err, crawl.ErrFrontierClosed) {
		t.Errorf("blocked Take after Close: got %v, want ErrFrontierClosed", err)
	}
	ctx := context.Background()
	if _, err := f.Push(ctx, crawl.Request{URL: "http://a.test/"}); !errors.Is(err, crawl.ErrFrontierClosed) {
		t.Errorf("Push after Close: got %v", err)
	}
	if _, err := f.Counts(ctx); !errors.Is(err, crawl.ErrFrontierClosed) {
		t.Errorf("Counts after Close: got %v", err)
	}
	if err := f.Results(ctx, func(crawl.Result) bool { return true }); !errors.Is(err, crawl.ErrFrontierClosed) {
		t.Errorf("Results after Close: got %v", err)
	}
	if err := f.Close(); !errors.Is(err, crawl.ErrFrontierClosed) {
		t.Errorf("second Close: got %v", err)
	}
}

// TestTakeCtx checks that a blocked Take returns ctx.Err when ctx is done.
func TestTakeCtx(t *testing.T) {
	f, _ := open(t, nil)
	defer f.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := f.Take(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Take on an empty frontier: got %v, want DeadlineExceeded", err)
	}
}
