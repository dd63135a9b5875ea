package crawl

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// TestFrontierSchedule drives the in-memory frontier with workers that
// take tasks, "fetch" them for a random (fake) time, sometimes put them back
// for a retry or pause their host, and push new tasks on several hosts. In
// a synctest bubble time is fake, so the delays cost nothing and the
// assertions on time are exact. It checks what the crawl relies on:
//   - never more than hostWorkers tasks of one host in flight;
//   - two starts on one host never closer than half the host delay, and no
//     start during a pause;
//   - a retry never starts before its time;
//   - every task pushed is done exactly once, and join returns only then;
//   - with idle workers and ready work, nobody waits (the crawl ends).
func TestFrontierSchedule(t *testing.T) {
	for seed := range uint64(20) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { frontierRun(t, seed) })
		})
	}
}

func frontierRun(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 1))
	cfg := defaultConfig()
	cfg.hostWorkers = 1 + rng.IntN(4)
	cfg.hostDelay = time.Duration(rng.IntN(3)) * 10 * time.Millisecond
	cfg.robots = rng.IntN(2) == 0
	workers := 1 + rng.IntN(8)
	hosts := 1 + rng.IntN(4)
	f := NewMemoryFrontier()
	if err := f.Start(context.Background(), Policy{HostWorkers: cfg.hostWorkers, HostDelay: cfg.hostDelay, Robots: cfg.robots}); err != nil {
		t.Fatal(err)
	}
	retryAt := map[string]time.Time{}

	var mu sync.Mutex
	inflight := map[string]int{}
	lastStart := map[string]time.Time{}
	// pauses[h] is the host's last pause: when it was asked for, and its
	// end. Time is fake and stands still while goroutines run, so a start
	// at the very instant of the pause may have been dispatched before it.
	pauses := map[string][2]time.Time{}
	done := map[string]int{}
	pushed := 0
	const maxTasks = 200
	fail := func(format string, args ...any) {
		t.Helper()
		t.Errorf("seed %d (hostWorkers %d, delay %v, robots %v, %d workers, %d hosts): "+format,
			append([]any{seed, cfg.hostWorkers, cfg.hostDelay, cfg.robots, workers, hosts}, args...)...)
	}
	newTasks := func(n int) []Request {
		mu.Lock()
		defer mu.Unlock()
		var ts []Request
		for range n {
			if pushed >= maxTasks {
				break
			}
			ts = append(ts, Request{URL: fmt.Sprintf("http://h%d.test/p%d", rng.IntN(hosts), pushed)})
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
				h := HostKey(tk.URL)
				now := time.Now()
				mu.Lock()
				inflight[h]++
				if inflight[h] > cfg.hostWorkers {
					fail("%d tasks of %s in flight, limit %d", inflight[h], h, cfg.hostWorkers)
				}
				if last, ok := lastStart[h]; ok && now.Sub(last) < cfg.hostDelay/2 {
					fail("%s started %v after the previous start, delay %v", tk.URL, now.Sub(last), cfg.hostDelay)
				}
				if p := pauses[h]; now.After(p[0]) && now.Before(p[1]) {
					fail("%s started during its host's pause", tk.URL)
				}
				if at := retryAt[tk.URL]; now.Before(at) {
					fail("retry of %s started %v early", tk.URL, at.Sub(now))
				}
				lastStart[h] = now
				mu.Unlock()

				time.Sleep(time.Duration(wrng.IntN(20)) * time.Millisecond)

				mu.Lock()
				inflight[h]--
				mu.Unlock()
				switch r := wrng.IntN(10); {
				case tk.Kind == RobotsRequest && r < 3:
					tk.Tries++
					at := time.Now().Add(time.Duration(wrng.IntN(30)) * time.Millisecond)
					mu.Lock()
					retryAt[tk.URL] = at
					mu.Unlock()
					f.Retry(ctx, tk, at)
				case tk.Kind == RobotsRequest:
					f.Ack(ctx, tk, Outcome{Rules: &HostRules{}})
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
					if _, err := f.Ack(ctx, tk, Outcome{Links: newTasks(wrng.IntN(4))}); err != nil {
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
	if c, _ := f.Counts(context.Background()); c.Queued != 0 || c.Leased != 0 || c.Done != pushed {
		fail("Counts after join = %+v, want 0 queued, 0 leased, %d done", c, pushed)
	}
	if _, err := f.Ack(context.Background(), &Lease{ID: "1", Request: Request{URL: "http://h0.test/x"}}, Outcome{}); !errors.Is(err, ErrLeaseLost) {
		fail("ack of a lease not out: got %v, want ErrLeaseLost", err)
	}
}

// TestFrontierBudget checks that the page budget is exact with many
// workers and that join returns once the tasks taken are done.
func TestFrontierBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := NewMemoryFrontier()
		f.Start(context.Background(), Policy{HostWorkers: 100, MaxPages: 7})
		var ts []Request
		for i := range 50 {
			ts = append(ts, Request{URL: fmt.Sprintf("http://h%d.test/p%d", i%3, i)})
		}
		f.Push(context.Background(), ts...)
		ctx, stop := context.WithCancel(context.Background())
		var mu sync.Mutex
		taken := 0
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
					mu.Unlock()
					time.Sleep(time.Millisecond)
					f.Ack(ctx, tk, Outcome{})
				}
			})
		}
		if err := f.Join(context.Background()); err != nil {
			t.Fatal(err)
		}
		stop()
		wg.Wait()
		c, _ := f.Counts(context.Background())
		if taken != 7 || c.Pages != 7 || c.Queued != 43 {
			t.Errorf("taken %d, counts %+v; want 7 taken, 7 pages, 43 queued", taken, c)
		}
	})
}

// TestFrontierStaleTimer checks that the first waiter sets a timer for a
// host that enters the heap after the waiter's timer fired on a host that
// then left the heap: the time it armed must not stay recorded, or a later
// host is taken as covered by a timer nobody holds.
func TestFrontierStaleTimer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := NewMemoryFrontier()
		f.Start(context.Background(), Policy{HostWorkers: 1, MaxPages: 1})
		ctx, stop := context.WithCancel(context.Background())
		defer stop()
		// c is paused, so the first pop moves it to the heap; b's page
		// spends the budget.
		f.Push(ctx, Request{URL: "http://c.test/1"})
		f.Pause(ctx, "http://c.test", time.Now().Add(10*time.Millisecond))
		f.Push(ctx, Request{URL: "http://b.test/1"})
		b, err := f.Take(ctx)
		if err != nil || b.URL != "http://b.test/1" {
			t.Fatalf("got %v, %v; want http://b.test/1", b, err)
		}
		got := make(chan *Lease, 1)
		go func() {
			if tk, err := f.Take(ctx); err == nil {
				got <- tk
			}
		}()
		// The waiter's timer fires for c, which leaves the heap: its
		// fresh task is past the budget.
		time.Sleep(10 * time.Millisecond)
		synctest.Wait()
		b.Tries = 1
		f.Retry(ctx, b, time.Now().Add(10*time.Millisecond))
		time.Sleep(20 * time.Millisecond)
		synctest.Wait()
		select {
		case tk := <-got:
			if tk.URL != b.URL {
				t.Errorf("got %q, want %q", tk.URL, b.URL)
			}
		default:
			t.Errorf("the retry of %s was due 10ms ago and the waiter was not served", b.URL)
		}
	})
}
