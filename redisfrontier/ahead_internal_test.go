package redisfrontier

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/asyncrawl/crawl"
	"github.com/asyncrawl/crawl/redisfrontier/redistest"
	"github.com/redis/go-redis/v9"
)

// serverLeases returns the kinds of the leases out on the server ("P",
// "R", "S" for a lease ahead) by count, and the host's field n.
func serverLeases(t *testing.T, f *Frontier, host string) (map[string]int, string) {
	t.Helper()
	ctx := context.Background()
	all, err := f.rdb.HGetAll(ctx, f.prefix+"leases").Result()
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, rec := range all {
		kinds[rec[:1]]++
	}
	n, _ := f.rdb.HGet(ctx, f.prefix+"h:"+host, "n").Result()
	return kinds, n
}

// starve makes f's process starved, as a Take that found nothing does:
// its next calls ask for leases ahead.
func starve(t *testing.T, f *Frontier) {
	t.Helper()
	f.starved.Store(true)
}

// oneHost starts crawl name, with HostWorkers 1, on n URLs of host.
func oneHost(t *testing.T, name, host string, n int) (*Frontier, []crawl.Request) {
	t.Helper()
	f := startFrontier(t, name, crawl.Policy{HostWorkers: 1, LeaseTerm: time.Minute})
	t.Cleanup(func() { f.Close() })
	var reqs []crawl.Request
	for i := range n {
		reqs = append(reqs, crawl.Request{URL: host + "/" + strconv.Itoa(i)})
	}
	if _, err := f.Push(context.Background(), reqs...); err != nil {
		t.Fatal(err)
	}
	return f, reqs
}

// twoTakesWait starts two Takes of f, until stop or the test's end, and
// returns once one leads (asks the server) and the other waits for it:
// the channel gets the leases they take.
func twoTakesWait(t *testing.T, f *Frontier) (got <-chan *crawl.Lease, stop func()) {
	t.Helper()
	leases := make(chan *crawl.Lease, 2)
	takeCtx, stop := context.WithCancel(context.Background())
	t.Cleanup(stop)
	for range 2 {
		go func() {
			if l, err := f.Take(takeCtx); err == nil {
				leases <- l
			}
		}()
	}
	for deadline := time.Now().Add(10 * time.Second); ; {
		f.tmu.Lock()
		w := len(f.waiters)
		f.tmu.Unlock()
		if w == 1 {
			return leases, stop
		}
		if time.Now().After(deadline) {
			t.Fatal("the second Take never waited")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestAhead: a process whose Takes wait on a host at HostWorkers leases
// the host's next Request ahead with each lease, and hands it to a Take
// waiting as soon as the lease before it is acked, before the Ack's call
// is made: on a server that answers nothing for a while (CLIENT PAUSE),
// the Take has its lease while the Ack still waits. The slot goes from the
// one to the other: the host never has more than HostWorkers leases out,
// and the process's Counts leave the leases ahead out.
func TestAhead(t *testing.T) {
	ctx := context.Background()
	const host, n = "https://h.example", 10
	f, reqs := oneHost(t, "ahead", host, n)
	l0, err := f.Take(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// A Take that finds the host at HostWorkers starves the process.
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if l, err := f.Take(short); err == nil {
		t.Fatalf("Take with the host at HostWorkers: got %s, want none", l.URL)
	}
	if !f.starved.Load() {
		t.Fatal("a Take that found nothing left its process not starved")
	}
	if _, err := f.Ack(ctx, l0, crawl.Outcome{}); err != nil {
		t.Fatal(err)
	}
	l1, err := f.Take(ctx)
	if err != nil {
		t.Fatal(err)
	}
	kinds, hn := serverLeases(t, f, host)
	if kinds["P"] != 1 || kinds["S"] != aheadDepth || hn != "1" {
		t.Fatalf("a starved process's Take on a host with HostWorkers 1: leases out on the server %v, host's n %s; want one lease and %d ahead, n 1", kinds, hn, aheadDepth)
	}
	// Another process sees them as leased, by this one.
	st, err := Inspect(ctx, f.rdb, "ahead")
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Holders) != 1 || st.Holders[0].Owner != f.owner || st.Holders[0].Leases != 1+aheadDepth || st.Leased != 1+aheadDepth {
		t.Fatalf("Inspect with a lease and %d ahead: Leased %d, Holders %+v; want all %d leased, by %s", aheadDepth, st.Leased, st.Holders, 1+aheadDepth, f.owner)
	}
	if c, err := f.Counts(ctx); err != nil || c != (crawl.Counts{Queued: n - 2, Leased: 1, Done: 1, Pages: 2}) {
		t.Fatalf("Counts with leases ahead held: %+v, %v; want Queued %d, Leased 1, Done 1, Pages 2 (a lease ahead is no caller's)", c, err, n-2)
	}

	// Two Takes wait, the one leading (asking the server) and one
	// waiting for it.
	got, stop := twoTakesWait(t, f)
	// The server answers no write for 2 s: the Ack waits that long.
	if err := f.rdb.Do(ctx, "CLIENT", "PAUSE", "2000", "WRITE").Err(); err != nil {
		t.Fatal(err)
	}
	acked := make(chan error, 1)
	go func() {
		_, err := f.Ack(ctx, l1, crawl.Outcome{})
		acked <- err
	}()
	select {
	case l := <-got:
		if l.URL != reqs[2].URL {
			t.Fatalf("the Take waiting got %s, want %s, the lease ahead of %s", l.URL, reqs[2].URL, l1.URL)
		}
	case err := <-acked:
		t.Fatalf("the Ack of %s returned (%v) before a Take waiting had the lease ahead: want it handed out at the Ack, not after its call", l1.URL, err)
	}
	// The server was still paused then: a write now waits for the pause's
	// end, most of the 2 s (one made after it is answered at once).
	began := time.Now()
	if err := f.rdb.Set(ctx, "probe", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if waited := time.Since(began); waited < 500*time.Millisecond {
		t.Fatalf("the Take waiting had its lease once the server answered again (a write then waited %v): want it handed out at the Ack, before its call", waited)
	}
	if err := <-acked; err != nil {
		t.Fatal(err)
	}
	kinds, hn = serverLeases(t, f, host)
	if kinds["P"] != 1 || hn != "1" {
		t.Fatalf("after the Ack that promoted its lease ahead: leases out on the server %v, host's n %s; want one lease (and a lease ahead of it at most), n 1", kinds, hn)
	}
	stop()
	select {
	case l := <-got:
		t.Fatalf("the other Take got %s while the host was at HostWorkers", l.URL)
	default:
	}
}

// TestAheadBack: a lease ahead that no Take waits for when its lease is
// acked goes back, first in its host's queue, as if never taken; so do
// those of a lease retried and of a host paused; a process that dies
// holding one has it back after the lease term, unpaid by the budget; and
// Close gives back those it holds. Nothing is left leased, and every URL
// is acked once, in order of admission.
func TestAheadBack(t *testing.T) {
	ctx := context.Background()
	const host, n = "https://h.example", 8
	f, reqs := oneHost(t, "ahead-back", host, n)
	var acked []string
	ack := func(f *Frontier, l *crawl.Lease) {
		t.Helper()
		if _, err := f.Ack(ctx, l, crawl.Outcome{}); err != nil {
			t.Fatal(err)
		}
		acked = append(acked, l.URL)
	}
	// take takes the next lease, and wants a lease ahead with it when
	// ahead (the process starved before).
	take := func(f *Frontier, ahead bool, why string) *crawl.Lease {
		t.Helper()
		if ahead {
			starve(t, f)
		}
		l, err := f.Take(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if kinds, _ := serverLeases(t, f, host); ahead && kinds["S"] == 0 {
			t.Fatalf("%s: leases out on the server %v, want leases ahead", why, kinds)
		}
		return l
	}
	wantCounts := func(why string, c crawl.Counts) {
		t.Helper()
		if kinds, _ := serverLeases(t, f, host); kinds["S"] != 0 {
			t.Errorf("%s: leases out on the server %v, want no lease ahead", why, kinds)
		}
		got, err := f.Counts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got != c {
			t.Fatalf("%s: Counts %+v, want %+v", why, got, c)
		}
	}
	ack(f, take(f, false, "a Take"))

	// An Ack with no Take waiting: the lease ahead goes back.
	ack(f, take(f, true, "a starved Take"))
	wantCounts("an Ack with no Take waiting", crawl.Counts{Queued: n - 2, Done: 2, Pages: 2})

	// A Retry: its lease ahead goes back, the URL to its retry time.
	l := take(f, true, "a starved Take")
	l.Tries++
	if err := f.Retry(ctx, l, time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	wantCounts("a Retry", crawl.Counts{Queued: n - 2, Done: 2, Pages: 3})

	// A Pause: the leases ahead of the host go back.
	l = take(f, true, "a starved Take")
	if err := f.Pause(ctx, host, time.Now()); err != nil {
		t.Fatal(err)
	}
	wantCounts("a Pause", crawl.Counts{Queued: n - 3, Leased: 1, Done: 2, Pages: 4})
	ack(f, l)

	// A process that dies holding a lease and its lease ahead: both come
	// back after the term, the lease ahead as if never taken.
	g := New(f.rdb, &Options{Name: "ahead-back"})
	if err := g.Start(ctx, crawl.Policy{HostWorkers: 1, LeaseTerm: 300 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	defer g.Close() // at the end: it has nothing then
	ack(g, take(g, false, "a Take"))
	dead := take(g, true, "the dying process's starved Take")
	// g dies: no Close, no more calls.
	time.Sleep(400 * time.Millisecond)
	back := take(f, true, "a starved Take after the dead process's term") // takes g's leases back first
	if back.URL != dead.URL || back.Tries != dead.Tries {
		t.Fatalf("after the dead process's term: took %s (tries %d), want its lease back first, %s (tries %d)", back.URL, back.Tries, dead.URL, dead.Tries)
	}
	// Pages: the dead lease's once, its lease ahead's not (it is this
	// process's lease ahead now, and counted as queued).
	if c, err := f.Counts(ctx); err != nil || c != (crawl.Counts{Queued: 3, Leased: 1, Done: 4, Pages: 6}) {
		t.Fatalf("after the dead process's term: Counts %+v, %v; want Queued 3, Leased 1, Done 4, Pages 6", c, err)
	}
	ack(f, back)

	// Close gives back the leases ahead it holds.
	take(f, true, "a starved Take before Close")
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	h := New(f.rdb, &Options{Name: "ahead-back"})
	defer h.Close()
	if err := h.Start(ctx, crawl.Policy{HostWorkers: 1, LeaseTerm: time.Minute}); err != nil {
		t.Fatal(err)
	}
	if kinds, _ := serverLeases(t, h, host); len(kinds) != 0 {
		t.Fatalf("after Close: leases out on the server %v, want none", kinds)
	}
	if c, err := h.Counts(ctx); err != nil || c != (crawl.Counts{Queued: 3, Done: 5, Pages: 7}) {
		t.Fatalf("after Close: Counts %+v, %v; want Queued 3, Done 5, Pages 7", c, err)
	}
	for range 2 {
		ack(h, take(h, false, "a Take after Close"))
	}
	var want []string
	for _, r := range reqs {
		if r.URL != reqs[2].URL { // retried in an hour
			want = append(want, r.URL)
		}
	}
	if strings.Join(acked, " ") != strings.Join(want, " ") {
		t.Fatalf("URLs acked, in order:\n\t%v\nwant each once, in order of admission:\n\t%v", acked, want)
	}
}

// TestAheadRenewed: a lease ahead whose chain goes from holder to holder,
// each quicker than the crawler extends (a third of the term) and none
// extending, is renewed by each promotion: it never outlives its term,
// so no URL is taken back and handed out twice, and no Ack finds its
// lease lost. Workers hold each lease for 30% of the term, on a host with
// HostWorkers 1, so a lease ahead made at the back of a chain of
// aheadDepth waits 4 holdings, past the term, before its promotion.
func TestAheadRenewed(t *testing.T) {
	ctx := context.Background()
	const (
		host    = "https://h.example"
		n       = 10
		term    = 3 * time.Second // a stall of up to 2 s still leaves a lease held its term
		hold    = 900 * time.Millisecond
		workers = 3
	)
	f := startFrontier(t, "ahead-renewed", crawl.Policy{HostWorkers: 1, LeaseTerm: term})
	t.Cleanup(func() { f.Close() })
	var reqs []crawl.Request
	for i := range n {
		reqs = append(reqs, crawl.Request{URL: host + "/" + strconv.Itoa(i)})
	}
	if _, err := f.Push(ctx, reqs...); err != nil {
		t.Fatal(err)
	}
	var (
		mu     sync.Mutex
		taken  = map[string]int{}
		errs   []error
		maxAhd int // leases ahead out at once, as seen
	)
	runCtx, stopRun := context.WithCancel(ctx)
	defer stopRun()
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				l, err := f.Take(runCtx)
				if err != nil {
					return
				}
				kinds, _ := serverLeases(t, f, host)
				mu.Lock()
				taken[l.URL]++
				maxAhd = max(maxAhd, kinds["S"])
				mu.Unlock()
				time.Sleep(hold) // no Extend: quicker than a third of the term
				if _, err := f.Ack(ctx, l, crawl.Outcome{}); err != nil {
					mu.Lock()
					errs = append(errs, fmt.Errorf("Ack of %s: %w", l.URL, err))
					mu.Unlock()
				}
			}
		})
	}
	jctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := f.Join(jctx); err != nil {
		t.Fatalf("Join: %v", err)
	}
	stopRun()
	wg.Wait()
	if maxAhd < 2 {
		t.Fatalf("at most %d leases ahead out at once: the test made no chain to renew", maxAhd)
	}
	for _, err := range errs {
		t.Error(err)
	}
	for _, r := range reqs {
		if taken[r.URL] != 1 {
			t.Errorf("%s taken %d times, want once", r.URL, taken[r.URL])
		}
	}
	if c, err := f.Counts(ctx); err != nil || c != (crawl.Counts{Done: n, Pages: n}) {
		t.Errorf("Counts %+v, %v; want Done %d, Pages %d", c, err, n, n)
	}
}

// TestAheadStale: a process stopped longer than the lease term (SIGSTOP, a
// paused VM) has had its leases taken back, those ahead with them, and
// another process may hold their Requests now. As it resumes, the Ack of
// the lease it was working on must not hand the lease ahead to a Take
// waiting: that Take would fetch a Request another process holds (a
// review saw a process fetch again, so, more URLs than its workers). The
// lease ahead goes back instead, and the Take waits for a lease of its
// own.
func TestAheadStale(t *testing.T) {
	ctx := context.Background()
	const host, n = "https://h.example", 10
	const term = 2 * time.Second
	s := redistest.Start(t)
	open := func() *Frontier {
		c := redis.NewClient(&redis.Options{Addr: s.Addr()})
		t.Cleanup(func() { c.Close() })
		f := New(c, &Options{Name: "stale"})
		t.Cleanup(func() { f.Close() })
		if err := f.Start(ctx, crawl.Policy{HostWorkers: 1, LeaseTerm: term}); err != nil {
			t.Fatal(err)
		}
		return f
	}
	f := open()
	var reqs []crawl.Request
	for i := range n {
		reqs = append(reqs, crawl.Request{URL: host + "/" + strconv.Itoa(i)})
	}
	if _, err := f.Push(ctx, reqs...); err != nil {
		t.Fatal(err)
	}
	l0, err := f.Take(ctx)
	if err != nil {
		t.Fatal(err)
	}
	starve(t, f)
	if _, err := f.Ack(ctx, l0, crawl.Outcome{}); err != nil {
		t.Fatal(err)
	}
	l1, err := f.Take(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if kinds, _ := serverLeases(t, f, host); kinds["S"] == 0 {
		t.Fatalf("leases out %v: want some ahead of %s", kinds, l1.URL)
	}
	// The process stops past the term; another takes its leases back
	// and holds the host's one slot.
	time.Sleep(term + 300*time.Millisecond)
	g := open()
	lg, err := g.Take(ctx)
	if err != nil {
		t.Fatal(err)
	}

	// It resumes: two Takes wait, one leading, one waiting for it.
	got, _ := twoTakesWait(t, f)
	f.Ack(ctx, l1, crawl.Outcome{}) // lost: taken back
	select {
	case l := <-got:
		t.Errorf("a Take of the resumed process got %s while %s holds the host's one slot (with %s); want it to wait", l.URL, g.owner, lg.URL)
	case <-time.After(time.Second):
	}
}

// TestAheadPausedElsewhere: a host paused by another process (a Pause
// holds back every process) while this one holds leases ahead of it: the
// AckTake whose call would promote the next for its caller has it given
// back instead, and hands out nothing during the pause; nothing is lost.
func TestAheadPausedElsewhere(t *testing.T) {
	ctx := context.Background()
	const host, n = "https://h.example", 10
	p := crawl.Policy{HostWorkers: 1, LeaseTerm: time.Minute}
	f, _ := oneHost(t, "pausedelsewhere", host, n)
	l := takeAheadOf(t, f, host)
	g := New(f.rdb, &Options{Name: "pausedelsewhere"})
	defer g.Close()
	if err := g.Start(ctx, p); err != nil {
		t.Fatal(err)
	}
	until := time.Now().Add(2 * time.Second)
	if err := g.Pause(ctx, host, until); err != nil {
		t.Fatal(err)
	}
	take, cancelTake := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancelTake()
	_, next, err := f.AckTake(ctx, take, l, crawl.Outcome{})
	if err != nil {
		t.Fatal(err)
	}
	if next != nil && time.Now().Before(until) {
		t.Fatalf("AckTake handed out %s during its host's Pause (by another process), %v before its end", next.URL, time.Until(until))
	}
	kinds, hn := serverLeases(t, f, host)
	if next == nil && (len(kinds) != 0 || hn != "0") {
		t.Fatalf("after the AckTake: leases out on the server %v, host's n %s; want none, n 0", kinds, hn)
	}
	if c, err := f.Counts(ctx); err != nil || c != (crawl.Counts{Queued: n - 1, Leased: 0, Done: 1, Pages: 1}) {
		t.Fatalf("Counts after the AckTake: %+v, %v; want Queued %d, Done 1, Pages 1: the leases ahead back in the queue", c, err, n-1)
	}
}
