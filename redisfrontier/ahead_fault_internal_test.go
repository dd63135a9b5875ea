package redisfrontier

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/asyncrawl/crawl"
	"github.com/asyncrawl/crawl/redisfrontier/redistest"
	"github.com/redis/go-redis/v9"
)

// The failure paths of leases ahead (see ahead.go): a script call that
// fails while it promotes, keeps, or gives back leases ahead, and a
// server rolled back while a process holds them. A call is failed by
// faultHook, a client hook that answers one chosen script call with a
// Redis error before it is sent (the script does not run), as a server
// out of memory or a script error would: evalMany does not try such a
// call again.

// errInjected is the error faultHook answers with.
// It is what a server out of memory answers (maxmemory, noeviction) to a
// script whose first write is refused: the script does nothing.
var errInjected = injectedError("OOM command not allowed when used memory > 'maxmemory' (injected)")

// injectedError is a Redis error reply (redis.Error), so that evalMany
// takes it for the server's answer, not a connection's failure.
type injectedError string

func (e injectedError) Error() string { return string(e) }
func (injectedError) RedisError()     {}

// faultHook fails, once armed, the next script call whose script and
// arguments match picks, then lets every call through again.
type faultHook struct {
	mu    sync.Mutex
	match func(script *redis.Script, argv []string) bool
	fired chan struct{} // closed once a call was failed
}

// arm has the next script call that match picks fail.
func (h *faultHook) arm(match func(script *redis.Script, argv []string) bool) <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.match = match
	h.fired = make(chan struct{})
	return h.fired
}

// fail reports whether cmd is the call to fail, and if so sets its error
// and disarms h.
func (h *faultHook) fail(cmd redis.Cmder) bool {
	script, argv := scriptCall(cmd)
	if script == nil {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.match == nil || !h.match(script, argv) {
		return false
	}
	h.match = nil
	close(h.fired)
	cmd.SetErr(errInjected)
	return true
}

func (h *faultHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *faultHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if h.fail(cmd) {
			return cmd.Err()
		}
		return next(ctx, cmd)
	}
}

func (h *faultHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		var rest []redis.Cmder
		for _, c := range cmds {
			if !h.fail(c) {
				rest = append(rest, c)
			}
		}
		if len(rest) == 0 {
			return errInjected
		}
		return next(ctx, rest)
	}
}

// faultScripts are the scripts faultHook tells apart, by their SHA1.
var faultScripts = map[string]*redis.Script{
	ackScript.Hash():     ackScript,
	ackTakeScript.Hash(): ackTakeScript,
	retryScript.Hash():   retryScript,
}

// scriptCall returns the script that cmd runs, if it is one of faultScripts,
// and its ARGV, 1-based as the script reads it (argv[0] is empty).
func scriptCall(cmd redis.Cmder) (*redis.Script, []string) {
	args := cmd.Args()
	if len(args) < 3 {
		return nil, nil
	}
	var hash string
	switch cmd.Name() {
	case "evalsha":
		hash = fmt.Sprint(args[1])
	case "eval":
		sum := sha1.Sum([]byte(fmt.Sprint(args[1])))
		hash = hex.EncodeToString(sum[:])
	default:
		return nil, nil
	}
	script := faultScripts[hash]
	nkeys, err := strconv.Atoi(fmt.Sprint(args[2]))
	if script == nil || err != nil || len(args) < 3+nkeys {
		return nil, nil
	}
	argv := []string{""}
	for _, a := range args[3+nkeys:] {
		argv = append(argv, fmt.Sprint(a))
	}
	return script, argv
}

// promotes picks an acks' call that promotes a lease ahead: one of its
// acks' ops (see ackScript) is "+" or "?" and an ID.
func promotes(script *redis.Script, argv []string) bool {
	if script != ackScript && script != ackTakeScript {
		return false
	}
	for _, a := range argv {
		if id, ok := opPromotes(a); ok && id != "" {
			return true
		}
	}
	return false
}

// retriesAhead picks a Retry's call (not a release's) that gives back
// leases ahead of its lease.
func retriesAhead(script *redis.Script, argv []string) bool {
	return script == retryScript && len(argv) > 15 && argv[10] != "" && argv[14] == "0" && argv[15] != ""
}

// givesAhead picks giveAhead's call: leases ahead given back, no lease.
func givesAhead(script *redis.Script, argv []string) bool {
	return script == retryScript && len(argv) > 15 && argv[10] == "" && argv[14] == "1" && argv[15] != ""
}

// faultCrawl starts a redis-server, a client with a faultHook, and crawl
// name on it with p and n URLs of host, in order; the Frontier is closed
// when the test ends.
func faultCrawl(t *testing.T, name string, p crawl.Policy, host string, n int) (*Frontier, *faultHook, *redistest.Server, []string) {
	t.Helper()
	s := redistest.Start(t)
	h := &faultHook{}
	c := redis.NewClient(&redis.Options{Addr: s.Addr()})
	c.AddHook(h)
	t.Cleanup(func() { c.Close() })
	f := New(c, &Options{Name: name})
	if err := f.Start(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	var reqs []crawl.Request
	var urls []string
	for i := range n {
		reqs = append(reqs, crawl.Request{URL: host + "/" + strconv.Itoa(i)})
		urls = append(urls, reqs[i].URL)
	}
	if added, err := f.Push(t.Context(), reqs...); added != n || err != nil {
		t.Fatalf("Push of %d URLs: %d, %v", n, added, err)
	}
	return f, h, s, urls
}

// takeAheadOf takes a lease of f's process starved: it comes with leases
// ahead, aheadDepth of them when the host has that many Requests left.
func takeAheadOf(t *testing.T, f *Frontier, host string) *crawl.Lease {
	t.Helper()
	starve(t, f)
	l, err := f.Take(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if kinds, _ := serverLeases(t, f, host); kinds["S"] == 0 {
		t.Fatalf("a starved Take: leases out on the server %v, want leases ahead", kinds)
	}
	return l
}

// tally counts each URL's Acks that succeeded, and what else went wrong.
type tally struct {
	mu    sync.Mutex
	acked map[string]int
	errs  []error
	held  map[string]int // leases held now, by host
	peak  int            // the most leases of one host held at once
}

func newTally() *tally { return &tally{acked: map[string]int{}, held: map[string]int{}} }

// hold records l held by a caller, fetching, until the func it returns is
// called.
func (c *tally) hold(l *crawl.Lease) func() {
	h := crawl.HostKey(l.URL)
	c.mu.Lock()
	c.held[h]++
	c.peak = max(c.peak, c.held[h])
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		c.held[h]--
		c.mu.Unlock()
	}
}

// ack acks l on f and counts it; ErrLeaseLost is counted as no ack.
func (c *tally) ack(f *Frontier, l *crawl.Lease) {
	_, err := f.Ack(context.Background(), l, crawl.Outcome{})
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case err == nil:
		c.acked[l.URL]++
	case !errors.Is(err, crawl.ErrLeaseLost):
		c.errs = append(c.errs, fmt.Errorf("Ack of %s: %w", l.URL, err))
	}
}

// finish takes and acks, with workers Takes at once, until Join returns
// (within a deadline), then checks that each of urls was acked once and
// that the Counts are exact.
func (c *tally) finish(t *testing.T, f *Frontier, workers int, urls []string) {
	t.Helper()
	run, stop := context.WithCancel(t.Context())
	defer stop()
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				l, err := f.Take(run)
				if err != nil {
					return
				}
				// Fetched while held: the Ack hands the slot on (to
				// a lease ahead, to a Take waiting) as soon as it is
				// called.
				done := c.hold(l)
				time.Sleep(time.Millisecond)
				done()
				c.ack(f, l)
			}
		})
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	jerr := f.Join(ctx)
	stop()
	wg.Wait()
	if jerr != nil {
		kinds, _ := serverLeases(t, f, crawl.HostKey(urls[0]))
		t.Fatalf("Join: %v (leases out on the server: %v)", jerr, kinds)
	}
	c.check(t, f, urls)
}

// check checks that each of urls was acked once, nothing else failed, and
// the Counts are exact.
func (c *tally) check(t *testing.T, f *Frontier, urls []string) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, err := range c.errs {
		t.Error(err)
	}
	for _, u := range urls {
		if c.acked[u] != 1 {
			t.Errorf("%s acked %d times, want once", u, c.acked[u])
		}
	}
	n := len(urls)
	if got, err := f.Counts(t.Context()); err != nil || got != (crawl.Counts{Done: n, Pages: n}) {
		t.Errorf("Counts: got %+v, %v; want Done %d, Pages %d, nothing queued or leased", got, err, n, n)
	}
}

// waitingTakes starts two Takes of f, one leading (asking the server),
// one waiting for it to hand out a lease, and returns once the second
// waits: the leases they get, and a stop that ends both and waits for
// them.
func waitingTakes(t *testing.T, f *Frontier) (<-chan *crawl.Lease, func()) {
	t.Helper()
	got := make(chan *crawl.Lease, 2)
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			if l, err := f.Take(ctx); err == nil {
				got <- l
			}
		})
	}
	waitWaiters(t, f, 1)
	stop := func() { cancel(); wg.Wait() }
	t.Cleanup(stop)
	return got, stop
}

// waitWaiters waits until n Takes wait for a lease leading ones hand out.
func waitWaiters(t *testing.T, f *Frontier, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; {
		f.tmu.Lock()
		w := len(f.waiters)
		f.tmu.Unlock()
		if w == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d Takes wait, want %d", w, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestAheadFaultAck: an Ack whose call fails (the script not run) as it
// promotes its lease's lease ahead, handed to a Take waiting or kept for
// the AckTake's caller. The Ack returns the error, and its lease is still
// its caller's, who acks it again. No lease is left leased with no
// holder (with no LeaseTerm, nothing expires: a lease ahead that did not
// go back is lost, and Join never returns), the host never has more than
// HostWorkers leases held, and every URL is acked once, each counted
// once.
func TestAheadFaultAck(t *testing.T) {
	const host, n = "https://h.example", 12
	p := crawl.Policy{HostWorkers: 1} // no term: nothing expires
	t.Run("waiter", func(t *testing.T) {
		f, h, _, urls := faultCrawl(t, "fault-ack-waiter", p, host, n)
		c := newTally()
		l := takeAheadOf(t, f, host)
		doneL := c.hold(l)
		got, stop := waitingTakes(t, f)
		fired := h.arm(promotes)
		if _, err := f.Ack(t.Context(), l, crawl.Outcome{}); !errors.Is(err, errInjected) {
			t.Fatalf("Ack whose call fails: got %v, want %v", err, errInjected)
		}
		<-fired
		// The Take waiting was handed the lease ahead at the Ack, before
		// its call: it holds it, though the call failed.
		var s *crawl.Lease
		select {
		case s = <-got:
		case <-time.After(10 * time.Second):
			t.Fatal("no Take had the lease ahead of the Ack that failed")
		}
		stop()
		doneS := c.hold(s)
		// The Ack's lease is still its caller's: acked again. Then the
		// lease ahead, whose promotion failed.
		c.ack(f, l)
		doneL()
		c.ack(f, s)
		doneS()
		select {
		case l := <-got:
			c.ack(f, l) // the leading Take's, if it had one
		default:
		}
		// The two held at once were the price of handing the lease
		// ahead out before the call; none is held now, and the host's
		// count of leases out must say so, or it lets more than
		// HostWorkers out from now on.
		if kinds, hn := serverLeases(t, f, host); kinds["P"] != 0 || kinds["R"] != 0 || (hn != "0" && hn != "") {
			t.Errorf("both leases acked, none held: leases out on the server %v, host's n %q; want no lease holding a slot, n 0", kinds, hn)
		}
		c.mu.Lock()
		c.peak = 0
		c.mu.Unlock()
		c.finish(t, f, 3, urls)
		if c.peak > p.HostWorkers {
			t.Errorf("after the fault, %d leases of the host held at once, want at most HostWorkers %d", c.peak, p.HostWorkers)
		}
	})
	t.Run("acktake", func(t *testing.T) {
		f, h, _, urls := faultCrawl(t, "fault-ack-acktake", p, host, n)
		c := newTally()
		l := takeAheadOf(t, f, host)
		fired := h.arm(promotes)
		_, next, err := f.AckTake(t.Context(), t.Context(), l, crawl.Outcome{})
		if !errors.Is(err, errInjected) || next != nil {
			t.Fatalf("AckTake whose call fails: got %v, %v; want no lease, %v", next, err, errInjected)
		}
		<-fired
		// Nothing is the process's but the lease its caller holds:
		// the leases ahead went back, first in the queue.
		if kinds, _ := serverLeases(t, f, host); kinds["S"] != 0 || kinds["P"] != 1 {
			t.Errorf("after the AckTake that failed: leases out on the server %v, want only the lease acked (P 1), no lease ahead", kinds)
		}
		c.ack(f, l)
		c.finish(t, f, 3, urls)
		if c.peak > p.HostWorkers {
			t.Errorf("%d leases of the host held at once, want at most HostWorkers %d", c.peak, p.HostWorkers)
		}
	})
}

// TestAheadFaultRetry: a Retry whose call fails (the script not run)
// returns the error and keeps its lease's leases ahead for it again, in
// order: its caller, who still holds the lease, then acks it, and the
// first lease ahead goes to the Take waiting; or retries it again, and
// they go back, first in the queue. With no LeaseTerm nothing expires: a
// lease ahead the Retry dropped would be leased for ever. Every URL is
// acked once, each counted once.
func TestAheadFaultRetry(t *testing.T) {
	const host, n = "https://h.example", 12
	p := crawl.Policy{HostWorkers: 1}
	for _, then := range []string{"ack", "retry"} {
		t.Run(then, func(t *testing.T) {
			f, h, _, urls := faultCrawl(t, "fault-retry-"+then, p, host, n)
			c := newTally()
			l := takeAheadOf(t, f, host)
			fired := h.arm(retriesAhead)
			if err := f.Retry(t.Context(), l, time.Time{}); !errors.Is(err, errInjected) {
				t.Fatalf("Retry whose call fails: got %v, want %v", err, errInjected)
			}
			<-fired
			if kinds, _ := serverLeases(t, f, host); kinds["P"] != 1 || kinds["S"] != aheadDepth {
				t.Fatalf("after the Retry that failed: leases out on the server %v, want the lease and its %d ahead, as before", kinds, aheadDepth)
			}
			switch then {
			case "ack":
				got, stop := waitingTakes(t, f)
				c.ack(f, l)
				var s *crawl.Lease
				select {
				case s = <-got:
				case <-time.After(10 * time.Second):
					t.Fatal("no Take had the lease ahead of the Ack after the Retry that failed")
				}
				if s.URL != urls[1] {
					t.Errorf("the Take waiting at the Ack of %s got %s, want %s, its first lease ahead, kept after the Retry that failed", l.URL, s.URL, urls[1])
				}
				stop()
				c.ack(f, s)
				select {
				case l := <-got:
					c.ack(f, l)
				default:
				}
			case "retry":
				if err := f.Retry(t.Context(), l, time.Time{}); err != nil {
					t.Fatalf("Retry again: %v", err)
				}
				if kinds, _ := serverLeases(t, f, host); len(kinds) != 0 {
					t.Errorf("after the Retry made again: leases out on the server %v, want none", kinds)
				}
				// All back as if never taken, in order.
				l, err := f.Take(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				if l.URL != urls[0] {
					t.Errorf("Take after the Retry: got %s, want %s, the URL retried, first", l.URL, urls[0])
				}
				c.ack(f, l)
			}
			c.finish(t, f, 3, urls)
		})
	}
}

// TestAheadFaultGiveBack: a give-back of leases ahead whose call fails
// (here, that of a Pause of their host) leaves them leased on the server,
// the process no longer holding them; when their term ends they come
// back, first in the queue, as if never taken: each URL is acked once,
// and counted once in Pages.
func TestAheadFaultGiveBack(t *testing.T) {
	const host, n = "https://h.example", 12
	p := crawl.Policy{HostWorkers: 1, LeaseTerm: 500 * time.Millisecond}
	f, h, _, urls := faultCrawl(t, "fault-give", p, host, n)
	c := newTally()
	l := takeAheadOf(t, f, host)
	fired := h.arm(givesAhead)
	if err := f.Pause(t.Context(), host, time.Now()); err != nil {
		t.Fatalf("Pause: %v", err)
	}
	<-fired
	if kinds, _ := serverLeases(t, f, host); kinds["S"] != aheadDepth {
		t.Fatalf("after the give-back that failed: leases out on the server %v, want still %d ahead", kinds, aheadDepth)
	}
	c.ack(f, l) // lost if its term ended meanwhile: it comes back then
	// The Takes wait for the term's end, then take them back.
	c.finish(t, f, 3, urls)
}

// TestAheadFaultRollback: redis-server comes back from its files as they
// were before a process took a lease with leases ahead (and another URL,
// of a host that sorts first, is pushed then, so that the leases made
// after the rollback are not of the URLs of those forgotten). The
// process's Ack of the forgotten lease hands its forgotten lease ahead to
// a Take waiting, and both are refused with ErrLeaseLost; nothing of
// theirs ends a lease made since. The crawl then ends: Join returns, each
// URL acked once, and the Counts exact.
func TestAheadFaultRollback(t *testing.T) {
	const host, n = "https://h.example", 8
	p := crawl.Policy{HostWorkers: 1}
	f, _, srv, urls := faultCrawl(t, "fault-rollback", p, host, n)
	c := newTally()
	snap := srv.Snapshot()
	stale := takeAheadOf(t, f, host)
	srv.RestartFrom(snap)
	first := "https://a.example/1"
	if added, err := f.Push(t.Context(), crawl.Request{URL: first}); added != 1 || err != nil {
		t.Fatalf("Push after the rollback: %d, %v; want 1, nil", added, err)
	}
	urls = append(urls, first)
	// Leases made after the rollback: the other host's, then the host's
	// first again, with leases ahead.
	var fresh []*crawl.Lease
	for range 2 {
		starve(t, f)
		l, err := f.Take(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		fresh = append(fresh, l)
	}
	if fresh[0].URL != first {
		t.Fatalf("first lease after the rollback: %s, want %s", fresh[0].URL, first)
	}
	got, stop := waitingTakes(t, f)
	if _, err := f.Ack(t.Context(), stale, crawl.Outcome{}); !errors.Is(err, crawl.ErrLeaseLost) {
		t.Errorf("Ack of the lease the server forgot in its rollback: got %v, want ErrLeaseLost", err)
	}
	var s *crawl.Lease
	select {
	case s = <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("no Take had the lease ahead of the forgotten lease at its Ack")
	}
	stop()
	if s.URL != urls[1] {
		t.Errorf("the Take waiting at the Ack of the forgotten %s got %s, want %s, its lease ahead", stale.URL, s.URL, urls[1])
	}
	if _, err := f.Ack(t.Context(), s, crawl.Outcome{}); !errors.Is(err, crawl.ErrLeaseLost) {
		t.Errorf("Ack of the lease ahead the server forgot in its rollback: got %v, want ErrLeaseLost", err)
	}
	select {
	case l := <-got:
		c.ack(f, l)
	default:
	}
	for _, l := range fresh {
		c.ack(f, l)
	}
	c.finish(t, f, 3, urls)
}

// TestAheadFaultSlotless: a lease ahead handed to a Take whose promotion
// failed holds no slot of its host, so its Ack frees none: on a host with
// HostWorkers 2, where another lease has leases ahead of its own, that Ack
// must not take one of them into a slot (the host would have 3 leases
// holding slots, past HostWorkers); nor after a Retry of it whose call
// failed too.
func TestAheadFaultSlotless(t *testing.T) {
	for _, retry := range []bool{false, true} {
		t.Run(fmt.Sprintf("retry=%v", retry), func(t *testing.T) { aheadSlotless(t, retry) })
	}
}

func aheadSlotless(t *testing.T, retry bool) {
	const host, n = "https://h.example", 16
	p := crawl.Policy{HostWorkers: 2}
	f, h, _, _ := faultCrawl(t, "ahead-fault-slotless", p, host, n)
	starve(t, f)
	if _, err := f.Take(t.Context()); err != nil { // A, held to the end
		t.Fatal(err)
	}
	b := takeAheadOf(t, f, host)
	got, stop := waitingTakes(t, f)
	fired := h.arm(promotes)
	if _, err := f.Ack(t.Context(), b, crawl.Outcome{}); !errors.Is(err, errInjected) {
		t.Fatalf("Ack whose call fails: %v, want the injected error", err)
	}
	<-fired
	var s1 *crawl.Lease
	select {
	case s1 = <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("the failed Ack handed its lease ahead to no waiting Take")
	}
	stop()
	if _, err := f.Ack(t.Context(), b, crawl.Outcome{}); err != nil {
		t.Fatalf("Ack again: %v", err)
	}
	takeAheadOf(t, f, host) // C, with leases ahead of its own, held
	if retry {
		h.arm(func(script *redis.Script, argv []string) bool {
			return script == retryScript && len(argv) > 14 && argv[10] == s1.ID && argv[14] == "0"
		})
		if err := f.Retry(t.Context(), s1, time.Time{}); !errors.Is(err, errInjected) {
			t.Fatalf("Retry whose call fails: %v, want the injected error", err)
		}
	}
	got, stop = waitingTakes(t, f)
	if _, err := f.Ack(t.Context(), s1, crawl.Outcome{}); err != nil {
		t.Fatalf("Ack of the lease ahead never promoted: %v", err)
	}
	select {
	case <-got:
	case <-time.After(time.Second):
	}
	stop()
	kinds, hn := serverLeases(t, f, host)
	if got, _ := strconv.Atoi(hn); got > p.HostWorkers || kinds["P"] > p.HostWorkers {
		t.Errorf("host's leases holding slots: n %s, leases out %v; want at most HostWorkers %d", hn, kinds, p.HostWorkers)
	}
}
