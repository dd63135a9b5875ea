package redisfrontier_test

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/asyncrawl/crawl"
	"github.com/asyncrawl/crawl/redisfrontier"
	"github.com/asyncrawl/crawl/redisfrontier/redistest"
	"github.com/redis/go-redis/v9"
)

// TestRedisDown: while redis-server is down, every call waits (a call
// whose ctx ends returns ctx.Err(), not a connection error), and once it
// is back on its AOF the calls that waited succeed and nothing is lost.
func TestRedisDown(t *testing.T) {
	s := redistest.Start(t)
	p := crawl.Policy{HostWorkers: 4, LeaseTerm: time.Minute}
	f := process(t, s, "down", p)
	if _, err := f.Push(t.Context(), siteURL(0), siteURL(1), siteURL(2)); err != nil {
		t.Fatal(err)
	}
	l0, err := f.Take(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond) // past an AOF fsync, though kill -9 needs none
	s.Kill()

	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	_, err = f.Counts(ctx)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Counts with a 300ms deadline, Redis down: got %v, want context.DeadlineExceeded", err)
	}

	var (
		wg       sync.WaitGroup
		pushed   int
		acked    int
		taken    *crawl.Lease
		errs     [4]error
		returned = make(chan string, 4)
	)
	wg.Go(func() {
		pushed, errs[0] = f.Push(t.Context(), siteURL(3), siteURL(0))
		returned <- "Push"
	})
	wg.Go(func() {
		acked, errs[1] = f.Ack(t.Context(), l0, crawl.Outcome{Links: []crawl.Request{siteURL(4)}, Result: &crawl.Result{URL: l0.URL, Status: 200}})
		returned <- "Ack"
	})
	wg.Go(func() {
		taken, errs[2] = f.Take(t.Context())
		returned <- "Take"
	})
	wg.Go(func() {
		errs[3] = f.Pause(t.Context(), crawl.HostKey(siteURL(9).URL), time.Now())
		returned <- "Pause"
	})
	select {
	case m := <-returned:
		t.Fatalf("%s returned while Redis was down, want it to wait", m)
	case <-time.After(time.Second):
	}
	s.Restart()
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("call %d, after Redis came back: %v", i, err)
		}
	}
	if pushed != 1 || acked != 1 {
		t.Errorf("after Redis came back: Push admitted %d (want 1, URL 3), Ack admitted %d (want 1, URL 4)", pushed, acked)
	}
	if taken == nil || taken.URL == l0.URL {
		t.Errorf("Take after Redis came back: %v, want a URL other than the acked %s", taken, l0.URL)
	}
	c, err := f.Counts(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if want := (crawl.Counts{Queued: 3, Leased: 1, Done: 1, Pages: 2}); c != want {
		t.Errorf("Counts after the outage: %+v, want %+v (5 URLs, 1 acked, 1 leased)", c, want)
	}
	if st, err := f.Stats(t.Context()); err != nil || st.Done != 1 {
		t.Errorf("Stats after the outage: Done %d, %v; want 1 (the Ack counted once, whatever its tries)", st.Done, err)
	}
}

// TestRedisKilledMidCrawl: redis-server (AOF everysec) is killed with
// SIGKILL in the middle of a crawl by two processes and restarted; the
// processes ride through: no URL is lost or acked twice, Join returns in
// both after the last Ack, and the Counts are exact.
func TestRedisKilledMidCrawl(t *testing.T) {
	s := redistest.Start(t)
	p := crawl.Policy{HostWorkers: 4, LeaseTerm: 5 * time.Second}
	procs := []*redisfrontier.Frontier{process(t, s, "kill", p), process(t, s, "kill", p)}
	crawlShared(t, procs, 600, func() {
		s.Kill()
		time.Sleep(300 * time.Millisecond)
		s.Restart()
	})
}

// TestRedisRefuses: a server that refuses the client's connections (here a
// database it does not have, which the client SELECTs as it connects)
// fails Start at once with the server's reply, rather than waiting as for
// an outage: its scripts are never sent, and their missing replies are
// no outage.
func TestRedisRefuses(t *testing.T) {
	s := redistest.Start(t)
	f, err := redisfrontier.Open(t.Context(), "redis://"+s.Addr()+"/99", &redisfrontier.Options{Name: "refused"})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	err = f.Start(ctx, crawl.Policy{HostWorkers: 1})
	if err == nil || ctx.Err() != nil || !strings.Contains(err.Error(), "DB index is out of range") {
		t.Errorf("Start on a database the server does not have: %v (its ctx %v); want the server's reply at once", err, ctx.Err())
	}
}

// TestRedisDownClose: a process that has found Redis down (a call of its
// timed out on it) and is then stopped gives up at once rather than
// waiting 5 s more at each step, as Ctrl-C of a crawl does: an AckTake
// whose ctx ends while it leases for the Takes waiting, then Close. Its
// leases come back when their term ends.
func TestRedisDownClose(t *testing.T) {
	s := redistest.Start(t)
	p := crawl.Policy{HostWorkers: 1, LeaseTerm: time.Minute}
	f := process(t, s, "downclose", p)
	if _, err := f.Push(t.Context(), siteURL(0), siteURL(1), siteURL(4)); err != nil {
		t.Fatal(err)
	}
	l, err := f.Take(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	s.Kill()
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	if _, err := f.Counts(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Counts, Redis down: %v, want context.DeadlineExceeded", err)
	}
	cancel()
	// A Take waits, so that the AckTake's call leases for it.
	waiting := make(chan struct{})
	go func() {
		defer close(waiting)
		f.Take(t.Context())
	}()
	time.Sleep(100 * time.Millisecond)
	ctx, cancel = context.WithTimeout(t.Context(), 300*time.Millisecond)
	start := time.Now()
	_, _, err = f.AckTake(ctx, ctx, l, crawl.Outcome{Result: &crawl.Result{URL: l.URL, Status: 200}})
	cancel()
	if took := time.Since(start); !errors.Is(err, context.DeadlineExceeded) || took > 3*time.Second {
		t.Errorf("AckTake whose ctx ends after 300ms, Redis down: %v after %v; want context.DeadlineExceeded at once (not 5s more)", err, took.Round(time.Millisecond))
	}
	start = time.Now()
	f.Close()
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("Close, Redis known down: %v; want at once (a quarter of a second), not 5s", took.Round(time.Millisecond))
	}
	<-waiting
}

// TestRedisFrozenClose: a server that hangs (stopped: it takes
// connections and never answers) keeps a call waiting long before the
// call fails (go-redis tries a timed-out call again, up to 12 s); a Close
// while the calls have waited with no reply for longer than any server
// under load takes gives up at once rather than wait 5 s more for it.
func TestRedisFrozenClose(t *testing.T) {
	s := redistest.Start(t)
	p := crawl.Policy{HostWorkers: 1, LeaseTerm: time.Minute}
	f := process(t, s, "frozenclose", p)
	if _, err := f.Push(t.Context(), siteURL(0)); err != nil {
		t.Fatal(err)
	}
	s.Freeze()
	defer s.Thaw()
	pushed := make(chan error, 1)
	go func() {
		_, err := f.Push(t.Context(), siteURL(1))
		pushed <- err
	}()
	time.Sleep(2500 * time.Millisecond)
	select {
	case err := <-pushed:
		t.Fatalf("Push to a stopped server returned %v within 2.5 s; the test needs it waiting", err)
	default:
	}
	start := time.Now()
	f.Close()
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("Close, its calls kept waiting 2.5 s with no reply: %v; want at once (a quarter of a second), not 5 s", took.Round(time.Millisecond))
	}
	if err := <-pushed; err == nil {
		t.Error("Push to a stopped server, then Close: nil error, want one")
	}
}

// TestCloseLeavesNoGoroutine: the goroutines a Frontier starts end with
// Close, even with the server stopped (SIGSTOP) while a Take cut by its
// ctx gives its leases back and an Ack cut by its ctx goes on to the
// server: Close ends those calls. With the client Open made, which Close
// closes, none is left when Close returns; with the caller's, the client
// ends its call to the stopped server at its ReadTimeout (3 s), and the
// goroutine with it. Before, they went on after Close: a Take's undo for
// up to a minute, an Ack's flush for as long as the server was stopped.
func TestCloseLeavesNoGoroutine(t *testing.T) {
	for _, own := range []bool{true, false} {
		t.Run(map[bool]string{true: "own client", false: "caller's client"}[own], func(t *testing.T) {
			s := redistest.Start(t)
			p := crawl.Policy{HostWorkers: 1, LeaseTerm: time.Minute}
			var f *redisfrontier.Frontier
			if own {
				f = open(t, s, &redisfrontier.Options{Name: "leftover"})
			} else {
				client := redis.NewClient(redisfrontier.ClientOptions(&redis.Options{Addr: s.Addr()}))
				defer client.Close()
				f = redisfrontier.New(client, &redisfrontier.Options{Name: "leftover"})
			}
			l := startLeased(t, f, p)
			s.Freeze()
			defer s.Thaw()
			var wg sync.WaitGroup
			cut := func(fn func(ctx context.Context)) {
				ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
				wg.Go(func() {
					defer cancel()
					fn(ctx)
				})
			}
			cut(func(ctx context.Context) { f.Take(ctx) })
			cut(func(ctx context.Context) { f.Ack(ctx, l, crawl.Outcome{Links: []crawl.Request{siteURL(2)}}) })
			wg.Wait()
			start := time.Now()
			f.Close()
			if took := time.Since(start); took > 7*time.Second {
				t.Errorf("Close with the server stopped took %v; want it bounded (the grace of 5 s at most)", took.Round(time.Millisecond))
			}
			settle := time.Duration(0)
			if !own {
				settle = 3500 * time.Millisecond // the client's ReadTimeout, and some
			}
			if left := frontierGoroutines(settle); left != "" {
				t.Errorf("goroutines of the Frontier left %v after Close returned:\n%s", settle, left)
			}
		})
	}
}

// startLeased starts f's crawl under p, pushes two URLs, and returns the
// lease of one.
func startLeased(t *testing.T, f *redisfrontier.Frontier, p crawl.Policy) *crawl.Lease {
	t.Helper()
	if err := f.Start(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Push(t.Context(), siteURL(0), siteURL(1)); err != nil {
		t.Fatal(err)
	}
	l, err := f.Take(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// frontierGoroutines returns the stacks of the goroutines running the
// package's code (its tests' aside), after d and a short settle.
func frontierGoroutines(d time.Duration) string {
	time.Sleep(d)
	var keep []string
	for range 20 {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		keep = keep[:0]
		for _, g := range strings.Split(string(buf), "\n\n") {
			if strings.Contains(g, "crawl/redisfrontier.") && !strings.Contains(g, "redisfrontier_test.") {
				keep = append(keep, g)
			}
		}
		if len(keep) == 0 {
			return ""
		}
		time.Sleep(10 * time.Millisecond)
	}
	return strings.Join(keep, "\n\n")
}
