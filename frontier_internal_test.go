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
	f := newMemFrontier(&cfg)

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
	newTasks := func(n int) []task {
		mu.Lock()
		defer mu.Unlock()
		var ts []task
		for range n {
			if pushed >= maxTasks {
				break
			}
			ts = append(ts, task{url: fmt.Sprintf("http://h%d.test/p%d", rng.IntN(hosts), pushed)})
			pushed++
		}
		return ts
	}
	if _, err := f.push(context.Background(), newTasks(3)...); err != nil {
		t.Fatal(err)
	}

	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for w := range workers {
		wrng := rand.New(rand.NewPCG(seed, uint64(w)+2))
		wg.Go(func() {
			for {
				tk, err := f.pop(ctx)
				if err != nil {
					return
				}
				h := hostKey(tk.url)
				now := time.Now()
				mu.Lock()
				inflight[h]++
				if inflight[h] > cfg.hostWorkers {
					fail("%d tasks of %s in flight, limit %d", inflight[h], h, cfg.hostWorkers)
				}
				if last, ok := lastStart[h]; ok && now.Sub(last) < cfg.hostDelay/2 {
					fail("%s started %v after the previous start, delay %v", tk.url, now.Sub(last), cfg.hostDelay)
				}
				if p := pauses[h]; now.After(p[0]) && now.Before(p[1]) {
					fail("%s started during its host's pause", tk.url)
				}
				if now.Before(tk.at) {
					fail("retry of %s started %v early", tk.url, tk.at.Sub(now))
				}
				lastStart[h] = now
				mu.Unlock()

				time.Sleep(time.Duration(wrng.IntN(20)) * time.Millisecond)

				mu.Lock()
				inflight[h]--
				mu.Unlock()
				switch r := wrng.IntN(10); {
				case tk.kind == kindRobots && r < 3:
					tk.tries++
					tk.at = time.Now().Add(time.Duration(wrng.IntN(30)) * time.Millisecond)
					f.retry(tk)
				case tk.kind == kindRobots:
					f.open(tk, gate{})
				case r == 0 && tk.tries < 3:
					tk.tries++
					tk.at = time.Now().Add(time.Duration(wrng.IntN(50)) * time.Millisecond)
					f.retry(tk)
				case r == 1 && tk.tries < 3:
					until := time.Now().Add(40 * time.Millisecond)
					mu.Lock()
					pauses[h] = [2]time.Time{time.Now(), until}
					mu.Unlock()
					f.pause(tk.url, until)
					tk.tries++
					tk.at = until
					f.retry(tk)
				default:
					if _, err := f.push(ctx, newTasks(wrng.IntN(4))...); err != nil {
						fail("push: %v", err)
					}
					mu.Lock()
					done[tk.url]++
					mu.Unlock()
					if err := f.done(tk); err != nil {
						fail("done %s: %v", tk.url, err)
					}
				}
			}
		})
	}
	jctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	if err := f.join(jctx); err != nil {
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
	if q := f.queued(); q != 0 {
		fail("queued() = %d after join, want 0", q)
	}
	if err := f.done(task{url: "http://h0.test/x"}); !errors.Is(err, ErrTaskDone) {
		fail("done after the last task: got %v, want ErrTaskDone", err)
	}
}

// TestFrontierBudget checks that the page budget is exact with many
// workers and that join returns once the tasks taken are done.
func TestFrontierBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := defaultConfig()
		cfg.robots = false
		cfg.maxPages = 7
		cfg.hostWorkers = 100
		f := newMemFrontier(&cfg)
		var ts []task
		for i := range 50 {
			ts = append(ts, task{url: fmt.Sprintf("http://h%d.test/p%d", i%3, i)})
		}
		f.push(context.Background(), ts...)
		ctx, stop := context.WithCancel(context.Background())
		var mu sync.Mutex
		taken := 0
		var wg sync.WaitGroup
		for range 20 {
			wg.Go(func() {
				for {
					tk, err := f.pop(ctx)
					if err != nil {
						return
					}
					mu.Lock()
					taken++
					mu.Unlock()
					time.Sleep(time.Millisecond)
					f.done(tk)
				}
			})
		}
		if err := f.join(context.Background()); err != nil {
			t.Fatal(err)
		}
		stop()
		wg.Wait()
		if taken != 7 || !f.spent() || f.queued() != 43 {
			t.Errorf("taken %d, spent %v, queued %d; want 7, true, 43", taken, f.spent(), f.queued())
		}
	})
}

// TestFrontierStaleTimer checks that the first waiter sets a timer for a
// host that enters the heap after the waiter's timer fired on a host that
// then left the heap: the time it armed must not stay recorded, or a later
// host is taken as covered by a timer nobody holds.
func TestFrontierStaleTimer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := defaultConfig()
		cfg.robots = false
		cfg.maxPages = 1
		cfg.hostWorkers = 1
		cfg.hostDelay = 0
		f := newMemFrontier(&cfg)
		ctx, stop := context.WithCancel(context.Background())
		defer stop()
		// c is paused, so the first pop moves it to the heap; b's page
		// spends the budget.
		f.push(ctx, task{url: "http://c.test/1"})
		f.pause("http://c.test/1", time.Now().Add(10*time.Millisecond))
		f.push(ctx, task{url: "http://b.test/1"})
		b, err := f.pop(ctx)
		if err != nil || b.url != "http://b.test/1" {
			t.Fatalf("got %q, %v; want http://b.test/1", b.url, err)
		}
		got := make(chan task, 1)
		go func() {
			if tk, err := f.pop(ctx); err == nil {
				got <- tk
			}
		}()
		// The waiter's timer fires for c, which leaves the heap: its
		// fresh task is past the budget.
		time.Sleep(10 * time.Millisecond)
		synctest.Wait()
		b.tries = 1
		b.at = time.Now().Add(10 * time.Millisecond)
		f.retry(b)
		time.Sleep(20 * time.Millisecond)
		synctest.Wait()
		select {
		case tk := <-got:
			if tk.url != b.url {
				t.Errorf("got %q, want %q", tk.url, b.url)
			}
		default:
			t.Errorf("the retry of %s was due 10ms ago and the waiter was not served", b.url)
		}
	})
}
