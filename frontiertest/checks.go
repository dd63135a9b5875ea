package frontiertest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/asyncrawl/crawl"
)

// checkDedupe checks that a URL is admitted once whatever the way it comes
// back: twice in one Push, in a later Push, while leased, after its ack, as
// a link of an Ack.
func checkDedupe(t *testing.T, f crawl.Frontier) {
	start(t, f, crawl.Policy{HostWorkers: 4})
	a1, a2, b1 := page(hostA+"/1"), page(hostA+"/2"), page(hostB+"/1")
	c1, c2 := page(hostC+"/1"), page(hostC+"/2")
	c1.Kind = crawl.SitemapRequest
	pushed := map[string]crawl.Request{a1.URL: a1, a2.URL: a2, b1.URL: b1, c1.URL: c1, c2.URL: c2}

	push(t, f, 2, "a1 twice in the call counts once", a1, a2, a1)
	push(t, f, 1, "a1 was pushed before, b1 is new", a1, b1)
	push(t, f, 0, "all three were pushed before", a2, b1, a1)
	wantCounts(t, f, "pushing a1, a2, b1", crawl.Counts{Queued: 3})

	leases := map[string]*crawl.Lease{}
	ids := map[string]bool{}
	takeAll := func(n int, why string) {
		t.Helper()
		for range n {
			l := take(t, f, why)
			if leases[l.URL] != nil {
				t.Fatalf("Take handed out %s twice; it was admitted once", desc(l))
			}
			if ids[l.ID] {
				t.Errorf("Take handed out %s with lease ID %q, already used: IDs must be unique", desc(l), l.ID)
			}
			ids[l.ID] = true
			want, ok := pushed[l.URL]
			switch {
			case !ok:
				t.Fatalf("Take handed out %s, never pushed", desc(l))
			case !sameRequest(l.Request, want):
				t.Errorf("Take: got Request %+v, want it as pushed, %+v", l.Request, want)
			}
			leases[l.URL] = l
		}
	}
	takeAll(3, "a1, a2 and b1 are queued")
	noTake(t, f, quiet, "the 3 URLs admitted are leased")
	wantCounts(t, f, "taking a1, a2, b1", crawl.Counts{Leased: 3, Pages: 3})

	res := &crawl.Result{URL: a1.URL, Status: 200}
	links := []crawl.Request{a1, a2, b1, c1, c1, c2}
	n := ack(t, f, leases[a1.URL], crawl.Outcome{Result: res, Links: links})
	if n != 2 {
		t.Errorf("Ack of a1 with links %s (a1 being acked, a2 and b1 leased): admitted %d, want 2 (c1, c2)", urls(links), n)
	}
	if res.NumNewURLs != 2 {
		t.Errorf("Ack of a1 admitting 2 of its links: Result.NumNewURLs = %d, want 2", res.NumNewURLs)
	}
	wantCounts(t, f, "acking a1 with links c1, c2 new", crawl.Counts{Queued: 2, Leased: 2, Done: 1, Pages: 3})
	push(t, f, 0, "a1 acked, a2 leased, c1 queued", a1, a2, c1)
	if n := ack(t, f, leases[a2.URL], crawl.Outcome{Links: []crawl.Request{a1, c2, b1}}); n != 0 {
		t.Errorf("Ack of a2 with links a1 (acked), c2 (queued), b1 (leased): admitted %d, want 0", n)
	}
	ack(t, f, leases[b1.URL], crawl.Outcome{})
	takeAll(2, "c1 and c2 are queued")
	ack(t, f, leases[c1.URL], crawl.Outcome{})
	ack(t, f, leases[c2.URL], crawl.Outcome{Links: []crawl.Request{c2, c1, b1, a2, a1}})
	push(t, f, 0, "every URL acked", a1, a2, b1, c1, c2)
	noTake(t, f, quiet, "every URL admitted was acked")
	wantCounts(t, f, "acking the 5 URLs", crawl.Counts{Done: 5, Pages: 5})
}

// checkJoin follows one crawl step by step, checking at each that Join
// blocks while anything is pending, and that Counts are right.
func checkJoin(t *testing.T, f crawl.Frontier) {
	start(t, f, crawl.Policy{HostWorkers: 2})
	startJoin(t, f).returns(t, "Start, nothing pushed")

	a1, a2, b1 := page(hostA+"/1"), page(hostA+"/2"), page(hostB+"/1")
	push(t, f, 1, "a1 is new", a1)
	j := startJoin(t, f)
	j.blocked(t, "pushing a1")
	wantCounts(t, f, "pushing a1", crawl.Counts{Queued: 1})

	l := take(t, f, "a1 is queued")
	j.blocked(t, "taking a1")
	wantCounts(t, f, "taking a1", crawl.Counts{Leased: 1, Pages: 1})

	l.Tries++
	retry(t, f, l, time.Now().Add(200*time.Millisecond))
	j.blocked(t, "putting a1 back to be retried in 200ms")
	wantCounts(t, f, "putting a1 back to be retried", crawl.Counts{Queued: 1, Pages: 1})

	l = take(t, f, "a1 is to be retried after 200ms")
	j.blocked(t, "taking a1 again")
	if n := ack(t, f, l, crawl.Outcome{Links: []crawl.Request{a2, b1}}); n != 2 {
		t.Errorf("Ack of a1 with links a2, b1: admitted %d, want 2", n)
	}
	j.blocked(t, "acking a1 with new links a2, b1")
	wantCounts(t, f, "acking a1 with links a2, b1", crawl.Counts{Queued: 2, Done: 1, Pages: 1})

	l1 := take(t, f, "a2 and b1 are queued")
	l2 := take(t, f, "a2 and b1 are queued")
	j.blocked(t, "taking a2 and b1")
	wantCounts(t, f, "taking a2 and b1", crawl.Counts{Leased: 2, Done: 1, Pages: 3})
	ack(t, f, l1, crawl.Outcome{})
	j.blocked(t, "acking "+l1.URL+", "+l2.URL+" still leased")
	wantCounts(t, f, "acking "+l1.URL, crawl.Counts{Leased: 1, Done: 2, Pages: 3})
	ack(t, f, l2, crawl.Outcome{})
	j.returns(t, "acking "+l2.URL+", the last lease")
	wantCounts(t, f, "acking every URL", crawl.Counts{Done: 3, Pages: 3})
	startJoin(t, f).returns(t, "acking every URL, then calling Join again")
}

// checkJoinContext checks that Join and Take return ctx.Err() when their
// ctx is done.
func checkJoinContext(t *testing.T, f crawl.Frontier) {
	start(t, f, crawl.Policy{HostWorkers: 1})
	push(t, f, 1, "a1 is new", page(hostA+"/1"))

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	var err error
	within(t, timeout, "Join with a cancelled ctx", func() { err = f.Join(ctx) })
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Join with a cancelled ctx, a1 pending: got %v, want context.Canceled", err)
	}
	_, err = call(t, 100*time.Millisecond, "Join with a deadline", func(ctx context.Context) (struct{}, error) {
		return struct{}{}, f.Join(ctx)
	})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Join with a 100ms deadline, a1 pending: got %v, want context.DeadlineExceeded", err)
	}

	l := take(t, f, "a1 is queued")
	noTake(t, f, quiet, "a1 is leased, nothing else queued")
	ctx, cancel = context.WithCancel(t.Context())
	errc := make(chan error, 1) // the Take goroutine never waits for the test
	go func() {
		_, err := f.Take(ctx)
		errc <- err
	}()
	time.Sleep(quiet) // most often, Take is blocked when ctx is cancelled
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Take blocked when its ctx was cancelled: got %v, want context.Canceled", err)
		}
	case <-time.After(timeout):
		t.Fatalf("Take blocked when its ctx was cancelled: still blocked after %v", timeout)
	}
	ack(t, f, l, crawl.Outcome{})
	wantCounts(t, f, "acking a1, the cancelled calls between", crawl.Counts{Done: 1, Pages: 1})
}

// checkConcurrent crawls a site of several hosts with 64 goroutines
// taking, retrying and acking at once.
func checkConcurrent(t *testing.T, f crawl.Frontier) {
	const (
		workers     = 64
		hostWorkers = 4
		fanout      = 3
		levels      = 3 // a root's descendants are at most this deep
	)
	hosts := []string{hostA, hostB, hostC, hostD}
	start(t, f, crawl.Policy{HostWorkers: hostWorkers})

	// The site: each URL's links depend on its URL only, so the set of
	// URLs the crawl must ack does not depend on the order it goes in.
	// Links go to other hosts too, and to URLs seen before.
	var roots []crawl.Request
	for _, h := range hosts {
		for i := range 4 {
			r := page(fmt.Sprintf("%s/r%d", h, i))
			r.Depth, r.Referrer = 0, ""
			roots = append(roots, r)
		}
	}
	links := func(u string) []crawl.Request {
		host := crawl.HostKey(u)
		path := u[len(host):]
		depth := strings.Count(path, "/") - 1
		out := []crawl.Request{roots[len(u)%len(roots)], page(u)}
		if depth >= levels {
			return out
		}
		hi := 0
		for i, h := range hosts {
			if h == host {
				hi = i
			}
		}
		for k := range fanout {
			c := page(fmt.Sprintf("%s%s/%d", hosts[(hi+k)%len(hosts)], path, k))
			c.Depth, c.Referrer = depth+1, u
			out = append(out, c)
		}
		return out
	}
	const slowPath = "/r0/0/1/2" // a leaf of each r0 root
	want := map[string]bool{}
	for next := roots; len(next) > 0; {
		var more []crawl.Request
		for _, r := range next {
			if !want[r.URL] {
				want[r.URL] = true
				more = append(more, links(r.URL)...)
			}
		}
		next = more
	}

	var (
		mu       sync.Mutex
		held     = map[string]bool{} // URLs leased and not yet given back
		perHost  = map[string]int{}
		ackCalls = map[string]int{} // Ack calls begun, by URL
		acks     int
		problems []string
	)
	problem := func(format string, args ...any) {
		// mu is held.
		if len(problems) < 10 {
			problems = append(problems, fmt.Sprintf(format, args...))
		}
	}
	takeCtx, stop := context.WithCancel(t.Context())
	defer stop()
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				l, err := f.Take(takeCtx)
				if err != nil {
					if takeCtx.Err() == nil {
						mu.Lock()
						problem("Take: got error %v, want a lease", err)
						mu.Unlock()
					}
					return
				}
				key := crawl.HostKey(l.URL)
				// Every fourth URL, by its length, is put back once.
				putBack := l.Tries == 0 && len(l.URL)%4 == 0
				mu.Lock()
				switch {
				case !want[l.URL]:
					problem("Take handed out %s, never admitted", desc(l))
				case held[l.URL]:
					problem("Take handed out %s while another lease of it was held", desc(l))
				case l.Tries > 1 || l.Tries == 1 && len(l.URL)%4 != 0:
					problem("Take handed out %s, put back at most once with Tries 1", desc(l))
				}
				held[l.URL] = true
				perHost[key]++
				if perHost[key] > hostWorkers {
					problem("%d leases of %s out at once, Policy.HostWorkers is %d", perHost[key], key, hostWorkers)
				}
				mu.Unlock()
				// As if fetching: a lease held a while lets a URL
				// handed out twice be seen held twice. A few leaves
				// are held long, so that the crawl's last Acks come
				// while they are out: a Join that forgets the leases
				// out returns then.
				hold := time.Duration(len(l.URL)%3) * time.Millisecond
				if strings.HasSuffix(l.URL, slowPath) {
					hold = 200 * time.Millisecond
				}
				time.Sleep(hold)

				mu.Lock()
				delete(held, l.URL)
				perHost[key]--
				if !putBack {
					ackCalls[l.URL]++
				}
				mu.Unlock()
				if putBack {
					l.Tries++
					if err := f.Retry(t.Context(), l, time.Time{}); err != nil {
						mu.Lock()
						problem("Retry of %s: got error %v, want nil", desc(l), err)
						mu.Unlock()
					}
					continue
				}
				_, err = f.Ack(t.Context(), l, crawl.Outcome{Links: links(l.URL)})
				mu.Lock()
				if err != nil {
					problem("Ack of %s: got error %v, want nil", desc(l), err)
				}
				acks++
				mu.Unlock()
			}
		})
	}
	defer func() {
		// On a failure below, the workers must still be gone before the
		// Frontier is closed; a failure here is no worse than a hang.
		stop()
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(timeout):
			t.Errorf("the workers' Takes after their ctx was cancelled: still blocked after %v", timeout)
		}
	}()

	push(t, f, len(roots), "16 new roots", roots...)
	_, err := call(t, crawlTimeout, "Join while 64 workers crawl", func(ctx context.Context) (struct{}, error) {
		return struct{}{}, f.Join(ctx)
	})
	mu.Lock()
	begun := 0
	for _, n := range ackCalls {
		begun += n
	}
	mu.Unlock()
	if err != nil {
		t.Fatalf("Join while 64 workers crawl %d URLs: got %v, want nil", len(want), err)
	}
	if begun < len(want) {
		t.Errorf("Join returned when %d Acks of the %d URLs had begun, want it to wait for all", begun, len(want))
	}
	stop()
	within(t, timeout, "the workers' Takes after their ctx was cancelled", wg.Wait)

	for _, p := range problems {
		t.Error(p)
	}
	for u := range want {
		if ackCalls[u] != 1 {
			t.Errorf("%s acked %d times, want once", u, ackCalls[u])
		}
	}
	if acks != len(want) {
		t.Errorf("%d Acks, want one per URL, %d", acks, len(want))
	}
	n := len(want)
	wantCounts(t, f, fmt.Sprintf("64 workers crawling %d URLs", n), crawl.Counts{Done: n, Pages: n})
}

// checkRetry checks that a Request put back comes back as it was put back,
// not before its time, and at once for a zero time.
func checkRetry(t *testing.T, f crawl.Frontier) {
	start(t, f, crawl.Policy{HostWorkers: 2})
	push(t, f, 1, "a1 is new", page(hostA+"/1"))
	j := startJoin(t, f)

	l := take(t, f, "a1 is queued")
	l.Tries = 1
	l.First = time.Now()
	l.Redirects--
	sent := l.Request
	at := time.Now().Add(300 * time.Millisecond)
	retry(t, f, l, at)
	j.blocked(t, "putting a1 back to be retried in 300ms")
	wantCounts(t, f, "putting a1 back to be retried", crawl.Counts{Queued: 1, Pages: 1})

	push(t, f, 1, "a2 is new", page(hostA+"/2"))
	for range 2 {
		l2, _, ended := timedTake(t, f, "a1 (to be retried in 300ms) and a2 are queued")
		if l2.URL != sent.URL {
			ack(t, f, l2, crawl.Outcome{})
			continue
		}
		if ended.Before(at) {
			t.Errorf("Retry(a1, now+300ms): Take handed it out %v before its time", at.Sub(ended))
		}
		if !sameRequest(l2.Request, sent) {
			t.Errorf("Retry of a1 as %+v: Take gave back %+v", sent, l2.Request)
		}
		if l2.ID == l.ID {
			t.Errorf("Take handed out a1 again with lease ID %q, already used: IDs must be unique", l.ID)
		}
		l = l2
	}
	if l.Tries != 1 {
		t.Fatalf("after Retry(a1, now+300ms), two Takes: a1 was not handed out again")
	}
	wantCounts(t, f, "taking a1 again, acking a2", crawl.Counts{Leased: 1, Done: 1, Pages: 2})

	l.Tries = 2
	sent = l.Request
	retry(t, f, l, time.Time{})
	wantCounts(t, f, "putting a1 back with a zero time", crawl.Counts{Queued: 1, Done: 1, Pages: 2})
	l2 := take(t, f, "a1 was put back with a zero time: at once")
	if !sameRequest(l2.Request, sent) {
		t.Errorf("Retry of a1 as %+v: Take gave back %+v", sent, l2.Request)
	}
	j.blocked(t, "taking a1 a third time")
	ack(t, f, l2, crawl.Outcome{})
	j.returns(t, "acking a1 after two retries")
	wantCounts(t, f, "acking a1 after two retries", crawl.Counts{Done: 2, Pages: 2})
}

// checkLeaseLost checks that a lease ended (by Ack or Retry) is lost to
// its holder: Ack, Retry and Extend of it return ErrLeaseLost and change
// nothing, except that Ack admits its links all the same.
func checkLeaseLost(t *testing.T, f crawl.Frontier) {
	start(t, f, crawl.Policy{HostWorkers: 2})
	push(t, f, 2, "a1, a2 are new", pages(hostA, "/1", "/2")...)
	l1 := take(t, f, "a1, a2 are queued")
	l2 := take(t, f, "a1, a2 are queued")
	ack(t, f, l1, crawl.Outcome{})

	lost := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, crawl.ErrLeaseLost) {
			t.Errorf("%s: got error %v, want ErrLeaseLost", what, err)
		}
	}
	n, err := call(t, timeout, "Ack", func(ctx context.Context) (int, error) { return f.Ack(ctx, l1, crawl.Outcome{}) })
	lost("Ack of "+desc(l1)+" after its Ack", err)
	if n != 0 {
		t.Errorf("Ack of an acked lease, no links: admitted %d, want 0", n)
	}
	lost("Retry of "+desc(l1)+" after its Ack", do(t, "Retry", func(ctx context.Context) error { return f.Retry(ctx, l1, time.Time{}) }))
	lost("Extend of "+desc(l1)+" after its Ack", do(t, "Extend", func(ctx context.Context) error { return f.Extend(ctx, l1) }))
	wantCounts(t, f, "acking one of two leases, then acking, retrying, extending it again",
		crawl.Counts{Leased: 1, Done: 1, Pages: 2})

	l2.Tries++
	retry(t, f, l2, time.Time{})
	l3 := take(t, f, l2.URL+" was put back")
	b1 := page(hostB + "/1")
	n, err = call(t, timeout, "Ack", func(ctx context.Context) (int, error) {
		return f.Ack(ctx, l2, crawl.Outcome{Links: []crawl.Request{b1}})
	})
	lost("Ack of "+desc(l2)+" after its Retry", err)
	if n != 1 {
		t.Errorf("Ack of a lease put back, with a new link b1: admitted %d, want 1 (a lost lease's links are admitted all the same)", n)
	}
	lost("Retry of "+desc(l2)+" after its Retry", do(t, "Retry", func(ctx context.Context) error { return f.Retry(ctx, l2, time.Time{}) }))
	lost("Extend of "+desc(l2)+" after its Retry", do(t, "Extend", func(ctx context.Context) error { return f.Extend(ctx, l2) }))
	wantCounts(t, f, "the old lease of a URL taken again acked with a link b1",
		crawl.Counts{Queued: 1, Leased: 1, Done: 1, Pages: 2})
	ack(t, f, l3, crawl.Outcome{})
	lb := take(t, f, "b1 was admitted by a lost lease's Ack")
	if lb.URL != b1.URL {
		t.Errorf("Take: got %s, want b1, the only URL queued", desc(lb))
	}
	ack(t, f, lb, crawl.Outcome{})
	wantCounts(t, f, "acking every URL", crawl.Counts{Done: 3, Pages: 3})
}

// checkHostWorkers checks that no host has more than Policy.HostWorkers
// leases out, and that a busy host does not keep others waiting.
func checkHostWorkers(t *testing.T, f crawl.Frontier) {
	start(t, f, crawl.Policy{HostWorkers: 2})
	var reqs []crawl.Request
	for _, h := range []string{hostA, hostB, hostC} {
		reqs = append(reqs, pages(h, "/1", "/2", "/3", "/4", "/5", "/6")...)
	}
	push(t, f, len(reqs), "18 new URLs", reqs...)
	out := map[string][]*crawl.Lease{}
	for i := range 6 {
		l := take(t, f, fmt.Sprintf("Take %d of 6: hosts a, b, c have 6 URLs queued each, Policy.HostWorkers is 2", i+1))
		k := crawl.HostKey(l.URL)
		out[k] = append(out[k], l)
		if len(out[k]) > 2 {
			t.Fatalf("Take %d: handed out %s, the 3rd lease of its host out, Policy.HostWorkers is 2", i+1, desc(l))
		}
	}
	noTake(t, f, quiet, "each host has 2 leases out, Policy.HostWorkers is 2")
	wantCounts(t, f, "taking 2 URLs of each of 3 hosts", crawl.Counts{Queued: 12, Leased: 6, Pages: 6})

	ack(t, f, out[hostB][0], crawl.Outcome{})
	out[hostB] = out[hostB][1:]
	l := take(t, f, "host b has a free slot")
	if k := crawl.HostKey(l.URL); k != hostB {
		t.Errorf("Take after acking one of b's 2 leases: got %s, want a URL of %s (hosts a, c have 2 leases out)", desc(l), hostB)
	}
	out[crawl.HostKey(l.URL)] = append(out[crawl.HostKey(l.URL)], l)
	noTake(t, f, quiet, "each host has 2 leases out again")
	// Slot by slot, the rest: a lease acked frees one slot of its host,
	// which the next Take fills with a URL of that host (the others are
	// full), and never more.
	queued := map[string]int{hostA: 4, hostB: 3, hostC: 4}
	hosts := []string{hostA, hostB, hostC}
	for i := range 11 {
		k := hosts[i%3]
		for queued[k] == 0 {
			k = hosts[(slices.Index(hosts, k)+1)%3]
		}
		ack(t, f, out[k][0], crawl.Outcome{})
		out[k] = out[k][1:]
		l := take(t, f, fmt.Sprintf("host %s has a free slot and %d URLs queued, the others none free", k, queued[k]))
		queued[k]--
		lk := crawl.HostKey(l.URL)
		out[lk] = append(out[lk], l)
		if lk != k || len(out[lk]) > 2 {
			t.Fatalf("Take %d after an ack of %s: handed out %s, a lease of a host with 2 out already, Policy.HostWorkers is 2", i+1, k, desc(l))
		}
	}
}

// checkLeaseIDs checks that a lease's ID is never one handed out before,
// across Starts too: an ID a holder kept from an earlier Run must not end
// another's lease.
func checkLeaseIDs(t *testing.T, f crawl.Frontier) {
	p := crawl.Policy{HostWorkers: 4}
	ids := map[string]string{}
	for run := range 3 {
		start(t, f, p)
		push(t, f, 2, "2 new URLs", page(fmt.Sprintf("%s/run%d-1", hostA, run)), page(fmt.Sprintf("%s/run%d-2", hostB, run)))
		for range 2 {
			l := take(t, f, "URLs of this Run are queued")
			if prev, dup := ids[l.ID]; dup {
				t.Fatalf("Start %d: Take handed out %s with the ID of %s, handed out before", run+1, desc(l), prev)
			}
			ids[l.ID] = l.URL
			ack(t, f, l, crawl.Outcome{})
		}
	}
}

// checkTurns checks that hosts take turns: a host with many URLs queued
// does not hold back another one's.
func checkTurns(t *testing.T, f crawl.Frontier) {
	start(t, f, crawl.Policy{HostWorkers: 10})
	push(t, f, 8, "8 URLs of a", pages(hostA, "/1", "/2", "/3", "/4", "/5", "/6", "/7", "/8")...)
	push(t, f, 1, "b1 is new", page(hostB+"/1"))
	l1 := take(t, f, "8 URLs of a and b1 are queued")
	l2 := take(t, f, "7 or 8 URLs of a and maybe b1 are queued")
	if crawl.HostKey(l1.URL) != hostB && crawl.HostKey(l2.URL) != hostB {
		t.Errorf("8 URLs of a pushed, then b1: the first 2 Takes gave %s and %s, want b1 among them (hosts take turns)", l1.URL, l2.URL)
	}
}

// checkOrder checks the order in which a host's Requests are handed out:
// new ones in the order they were admitted (by one Push, by several, by an
// Ack's Links; a URL pushed again keeps its place), whatever other hosts'
// URLs and a retry of the host go between; retries due at once, by their
// times. How retries and new Requests interleave is not checked: the
// contract does not say.
func checkOrder(t *testing.T, f crawl.Frontier) {
	start(t, f, crawl.Policy{HostWorkers: 3})
	a := pages(hostA, "/1", "/2", "/3", "/4", "/5", "/6", "/7")
	b := pages(hostB, "/1", "/2", "/3")
	push(t, f, 4, "a1, b1, a2, a3 are new", a[0], b[0], a[1], a[2])
	push(t, f, 2, "a2 pushed again, a4 and b2 new", a[1], a[3], b[1])
	push(t, f, 1, "a1 pushed again, a5 new", a[0], a[4])
	first := map[string][]string{} // each host's URLs, in the order first handed out
	seen := map[string]bool{}
	retried := false
	for acked := 0; acked < len(a)+len(b); {
		if len(seen) > len(a)+len(b) {
			t.Fatalf("Take handed out %d URLs, want %d", len(seen), len(a)+len(b))
		}
		l := take(t, f, "URLs of a and b queued")
		k := crawl.HostKey(l.URL)
		if !seen[l.URL] {
			seen[l.URL] = true
			first[k] = append(first[k], l.URL)
		}
		switch {
		case l.URL == a[0].URL && !retried:
			retried = true
			l.Tries++
			retry(t, f, l, time.Time{})
		case l.URL == a[1].URL:
			links := []crawl.Request{a[5], b[2], a[0], a[6]}
			if n := ack(t, f, l, crawl.Outcome{Links: links}); n != 3 {
				t.Fatalf("Ack of a2 with links %s: admitted %d, want 3 (a6, b3, a7)", urls(links), n)
			}
			acked++
		default:
			ack(t, f, l, crawl.Outcome{})
			acked++
		}
	}
	for k, reqs := range map[string][]crawl.Request{hostA: a, hostB: b} {
		want := strings.Split(urls(reqs), ", ")
		if !slices.Equal(first[k], want) {
			t.Errorf("host %s: new Requests handed out in the order %v, want %v, the order they were admitted", k, first[k], want)
		}
	}

	// Retries: put back in an order that is neither their times' nor its
	// reverse, all due when taken.
	c := pages(hostC, "/1", "/2", "/3")
	push(t, f, 3, "c1, c2, c3 are new", c...)
	leases := map[string]*crawl.Lease{}
	for range 3 {
		l := take(t, f, "c1, c2, c3 queued, Policy.HostWorkers 3")
		leases[l.URL] = l
	}
	now := time.Now()
	at := map[string]time.Time{
		c[0].URL: now.Add(600 * time.Millisecond),
		c[1].URL: now.Add(400 * time.Millisecond),
		c[2].URL: now.Add(200 * time.Millisecond),
	}
	for _, r := range []crawl.Request{c[1], c[0], c[2]} {
		l := leases[r.URL]
		if l == nil {
			t.Fatalf("c1, c2, c3 queued, Policy.HostWorkers 3: 3 Takes gave %v, want the three", slices.Collect(maps.Keys(leases)))
		}
		l.Tries++
		retry(t, f, l, at[r.URL])
	}
	time.Sleep(time.Until(now.Add(800 * time.Millisecond)))
	var got []string
	for range 3 {
		l := take(t, f, "c1, c2, c3 to be retried, their times passed")
		got = append(got, l.URL)
		ack(t, f, l, crawl.Outcome{})
	}
	if want := []string{c[2].URL, c[1].URL, c[0].URL}; !slices.Equal(got, want) {
		t.Errorf("c2, c1, c3 put back to be retried at now+400ms, +600ms, +200ms, taken once all were due: handed out in the order %v, want %v, by their times", got, want)
	}
}

// span is when a Take began and when it returned: the request it handed
// out started between the two.
type span struct{ began, ended time.Time }

// checkSpacing fails t if two of the starts, in order, may have been
// closer than least: the later Take returned less than least after the
// earlier one began.
func checkSpacing(t *testing.T, what string, starts []span, least time.Duration) {
	t.Helper()
	for i := 1; i < len(starts); i++ {
		if gap := starts[i].ended.Sub(starts[i-1].began); gap < least {
			t.Errorf("%s: request %d started at most %v after request %d, want at least %v",
				what, i+1, gap, i, least)
		}
	}
}

// checkHostDelay checks that the starts of one host's requests are at
// least half of Policy.HostDelay apart.
func checkHostDelay(t *testing.T, f crawl.Frontier) {
	// Many gaps, short ones: a delay kept but now and then is caught.
	const d = 60 * time.Millisecond
	start(t, f, crawl.Policy{HostWorkers: 4, HostDelay: d})
	var reqs []crawl.Request
	for _, h := range []string{hostA, hostB, hostC} {
		for i := range 10 {
			reqs = append(reqs, page(fmt.Sprintf("%s/%d", h, i)))
		}
	}
	push(t, f, len(reqs), "30 new URLs", reqs...)
	starts := map[string][]span{}
	for range len(reqs) {
		l, began, ended := timedTake(t, f, "URLs of a, b and c are queued")
		k := crawl.HostKey(l.URL)
		starts[k] = append(starts[k], span{began, ended})
		ack(t, f, l, crawl.Outcome{})
	}
	for k, s := range starts {
		checkSpacing(t, fmt.Sprintf("Policy.HostDelay %v, host %s", d, k), s, d/2)
	}
}

// checkPause checks that Pause holds a host back until its time, and not
// the other hosts.
func checkPause(t *testing.T, f crawl.Frontier) {
	start(t, f, crawl.Policy{HostWorkers: 2})
	push(t, f, 2, "a1, b1 are new", page(hostA+"/1"), page(hostB+"/1"))
	until := time.Now().Add(500 * time.Millisecond)
	if err := do(t, "Pause", func(ctx context.Context) error { return f.Pause(ctx, hostA, until) }); err != nil {
		t.Fatalf("Pause(%s, now+500ms): got error %v, want nil", hostA, err)
	}
	push(t, f, 1, "a2 is new", page(hostA+"/2"))
	for range 3 {
		l, _, ended := timedTake(t, f, "a1, a2 (paused for 500ms) and b1 are queued")
		if crawl.HostKey(l.URL) == hostA && ended.Before(until) {
			t.Errorf("Pause(%s, now+500ms): Take handed out %s %v before the pause's end", hostA, desc(l), until.Sub(ended))
		}
	}
}

// checkRobotsNilRules checks that a host whose robots.txt was acked with
// nil Rules (no rules: every URL allowed) stays open: its robots.txt is
// not handed out again in the Run, and a new Start under Policy.Robots
// that reuses the Frontier asks for it at most once more.
func checkRobotsNilRules(t *testing.T, f crawl.Frontier) {
	p := crawl.Policy{HostWorkers: 2, Robots: true}
	start(t, f, p)
	push(t, f, 2, "a1, a2 are new", page(hostA+"/1"), page(hostA+"/2"))
	l := take(t, f, "a1 queued, its host new")
	if !isRobots(l) {
		t.Fatalf("Take: got %s, want %s/robots.txt first", desc(l), hostA)
	}
	ack(t, f, l, crawl.Outcome{})
	l = take(t, f, "a1, a2 queued, their robots.txt acked with nil Rules")
	if isRobots(l) {
		t.Fatalf("Take: got %s, want a1: its robots.txt was acked already", desc(l))
	}
	ack(t, f, l, crawl.Outcome{})
	start(t, f, p)
	l = take(t, f, "a2 queued, its robots.txt acked with nil Rules in the Run before")
	if isRobots(l) {
		// Asked again in the new Run, once.
		ack(t, f, l, crawl.Outcome{})
		l = take(t, f, "a2 queued, its robots.txt acked with nil Rules in this Run")
	}
	if isRobots(l) {
		t.Errorf("Take after a new Start: got %s twice, want a2: its robots.txt was acked already in this Run", desc(l))
	}
}

// checkPauseUnsent checks that a Pause made while a lease of its host is
// out still holds the host back when that lease is acked Unsent, which
// gives back the delay its Take charged, not the pause.
func checkPauseUnsent(t *testing.T, f crawl.Frontier) {
	start(t, f, crawl.Policy{HostWorkers: 1, HostDelay: 20 * time.Second})
	push(t, f, 2, "a1, a2 are new", page(hostA+"/1"), page(hostA+"/2"))
	l := take(t, f, "a1 is queued")
	until := time.Now().Add(500 * time.Millisecond)
	if err := do(t, "Pause", func(ctx context.Context) error { return f.Pause(ctx, hostA, until) }); err != nil {
		t.Fatalf("Pause(%s, now+500ms): got error %v, want nil", hostA, err)
	}
	ack(t, f, l, crawl.Outcome{Unsent: true})
	l, _, ended := timedTake(t, f, "a2 is queued, its host paused for 500ms")
	if ended.Before(until) {
		t.Errorf("Pause(%s, now+500ms), then an Unsent ack of the lease out: Take handed out %s %v before the pause's end", hostA, desc(l), until.Sub(ended))
	}
}

// checkUnsent checks that an Unsent ack does not charge the host's delay:
// a host with a 10s delay gives out URL after URL acked Unsent.
func checkUnsent(t *testing.T, f crawl.Frontier) {
	const d = 10 * time.Second
	start(t, f, crawl.Policy{HostWorkers: 1, HostDelay: d})
	push(t, f, 5, "5 new URLs of a", pages(hostA, "/1", "/2", "/3", "/4", "/5")...)
	for i := range 5 {
		// A delay charged holds the host back at least d/2.
		l, err := call(t, d/2-time.Second, "Take", func(ctx context.Context) (*crawl.Lease, error) { return f.Take(ctx) })
		if err != nil {
			t.Fatalf("Policy.HostDelay %v, %d URLs of a taken and acked Unsent: Take got %v, want the next URL at once (no request was sent, so no delay is due)",
				d, i, err)
		}
		ack(t, f, l, crawl.Outcome{Unsent: true})
	}
	wantCounts(t, f, "taking 5 URLs, each acked Unsent", crawl.Counts{Done: 5, Pages: 0})
}

// isRobots reports whether l is the RobotsRequest of its host.
func isRobots(l *crawl.Lease) bool {
	return l.Kind == crawl.RobotsRequest && l.URL == crawl.HostKey(l.URL)+"/robots.txt"
}

// checkRobots checks that under Policy.Robots each host's robots.txt goes
// first and alone, that its rules come with the host's leases, and that it
// is not pending.
func checkRobots(t *testing.T, f crawl.Frontier) {
	start(t, f, crawl.Policy{HostWorkers: 2, Robots: true})
	push(t, f, 3, "a1, a2, b1 are new", page(hostA+"/1"), page(hostA+"/2"), page(hostB+"/1"))
	robots := map[string]*crawl.Lease{}
	for range 2 {
		l := take(t, f, "robots.txt of a and b go first")
		if !isRobots(l) {
			t.Fatalf("Policy.Robots, a1, a2, b1 pushed: Take got %s, want the RobotsRequest %s/robots.txt of a new host", desc(l), crawl.HostKey(l.URL))
		}
		robots[crawl.HostKey(l.URL)] = l
	}
	if robots[hostA] == nil || robots[hostB] == nil {
		t.Fatalf("Policy.Robots, a1, a2, b1 pushed: the first 2 Takes gave the robots.txt of %v, want those of a and b", robots)
	}
	noTake(t, f, quiet, "the robots.txt of a and b are out: none of their other URLs goes before it is acked")
	// A robots.txt is not admitted, so not queued; its lease is a lease.
	if c := counts(t, f); c.Queued != 3 || c.Leased != 2 || c.Pages != 0 {
		t.Errorf("a1, a2, b1 pushed, the robots.txt of a and b taken: Counts = %+v, want Queued 3, Leased 2, Pages 0", c)
	}

	j := startJoin(t, f)
	rulesA := &crawl.HostRules{Robots: []byte("User-agent: *\nDisallow: /private\n")}
	if n := ack(t, f, robots[hostA], crawl.Outcome{Rules: rulesA}); n != 0 {
		t.Errorf("Ack of a robots.txt, no links: admitted %d, want 0", n)
	}
	j.blocked(t, "acking the robots.txt of a (a1, a2, b1 pending)")
	if c := counts(t, f); c.Queued != 3 || c.Leased != 1 {
		t.Errorf("acking the robots.txt of a: Counts = %+v, want Queued 3, Leased 1", c)
	}

	rb := robots[hostB]
	rb.Tries = 1
	at := time.Now().Add(300 * time.Millisecond)
	retry(t, f, rb, at)
	got := map[string]bool{}
	var pagesA []*crawl.Lease
	for range 3 {
		l, _, ended := timedTake(t, f, "a1 and a2 open, robots.txt of b put back for 300ms")
		switch {
		case l.URL == rb.URL:
			if !isRobots(l) {
				t.Errorf("Retry of robots.txt of b: Take gave back %s, want a RobotsRequest", desc(l))
			}
			if ended.Before(at) {
				t.Errorf("Retry of robots.txt of b at now+300ms: handed out again %v before its time", at.Sub(ended))
			}
			if l.Tries != 1 {
				t.Errorf("Retry of robots.txt of b with Tries 1: Take gave back %s", desc(l))
			}
			rb = l
		case crawl.HostKey(l.URL) == hostA && l.Kind == crawl.PageRequest:
			if !sameRules(l.Rules, rulesA) {
				t.Errorf("robots.txt of a acked with Rules %s: Take of %s gave Rules %s", rulesString(rulesA), l.URL, rulesString(l.Rules))
			}
			pagesA = append(pagesA, l)
		default:
			t.Fatalf("a1, a2 open, b1 waiting for the robots.txt of b: Take got %s", desc(l))
		}
		got[l.URL] = true
	}
	if len(got) != 3 {
		t.Fatalf("a1, a2 open, b1 waiting for the robots.txt of b: 3 Takes gave %v, want a1, a2 and robots.txt of b", got)
	}
	for _, l := range pagesA {
		ack(t, f, l, crawl.Outcome{Links: []crawl.Request{page(hostA + "/3")}})
	}
	rulesB := &crawl.HostRules{Denied: "robots.txt: 503 Service Unavailable after 3 tries"}
	ack(t, f, rb, crawl.Outcome{Rules: rulesB})
	for range 2 {
		l := take(t, f, "a3 and b1 are queued, their hosts open")
		if isRobots(l) {
			t.Fatalf("Take gave %s again, after its host's robots.txt was acked", desc(l))
		}
		want := map[string]*crawl.HostRules{hostA: rulesA, hostB: rulesB}[crawl.HostKey(l.URL)]
		if !sameRules(l.Rules, want) {
			t.Errorf("robots.txt of %s acked with Rules %s: Take of %s gave Rules %s", crawl.HostKey(l.URL), rulesString(want), l.URL, rulesString(l.Rules))
		}
		j.blocked(t, "taking "+l.URL)
		ack(t, f, l, crawl.Outcome{})
	}
	j.returns(t, "acking every page: robots.txt requests are never pending")
	if c := counts(t, f); c.Queued != 0 || c.Leased != 0 || c.Pages != 4 {
		t.Errorf("acking a1, a2, a3, b1 and two robots.txt: Counts = %+v, want Queued 0, Leased 0, Pages 4", c)
	}
}

// checkRobotsMaxAge checks that a host's robots.txt is asked for again
// once its rules are Policy.RobotsMaxAge old, counted from the first URL
// that went by them: not before (a Take some way short of the age gets a
// URL of the host), and by the first Take once the age has gone by; that
// it goes alone then; and that the host's URLs carry the rules it was
// acked with each time.
//
// The age starts when the first URL's lease is made, which is after the
// robots.txt's Ack began and before the first URL's Take returned: a
// robots.txt handed out again before the first of those plus the age is
// early, and one not handed out by a Take that began after the second
// plus the age (and a margin) is late, whatever the machine's load. A
// Take that should come short of the age but returns after it (the
// machine stalled) checks nothing.
func checkRobotsMaxAge(t *testing.T, f crawl.Frontier) {
	const (
		age = time.Second
		// margin is how far short of the age the Take that must not
		// hand out the robots.txt begins, and how far past it the
		// one that must does: a frontier whose age is shorter by
		// more than margin fails.
		margin = 300 * time.Millisecond
	)
	start(t, f, crawl.Policy{HostWorkers: 2, Robots: true, RobotsMaxAge: age})
	push(t, f, 5, "a1 to a5 are new", pages(hostA, "/1", "/2", "/3", "/4", "/5")...)
	l := take(t, f, "a1 queued, its host new")
	if !isRobots(l) {
		t.Fatalf("Take: got %s, want %s/robots.txt first", desc(l), hostA)
	}
	rules1 := &crawl.HostRules{Robots: []byte("User-agent: *\nDisallow: /one\n")}
	acking := time.Now()
	ack(t, f, l, crawl.Outcome{Rules: rules1})
	l, _, firstEnded := timedTake(t, f, "a1 to a5 queued, their robots.txt acked just now")
	if isRobots(l) {
		t.Fatalf("Policy.RobotsMaxAge %v: Take gave %s again %v after its Ack began, no URL gone by its rules yet (the age counts from the first)",
			age, desc(l), time.Since(acking).Round(time.Millisecond))
	}
	if !sameRules(l.Rules, rules1) {
		t.Errorf("robots.txt acked with Rules %s: Take of %s gave Rules %s", rulesString(rules1), l.URL, rulesString(l.Rules))
	}
	ack(t, f, l, crawl.Outcome{})

	// Short of the age: the rules still hold.
	time.Sleep(time.Until(acking.Add(age - margin)))
	l, _, ended := timedTake(t, f, "a2 to a5 queued, their host's rules younger than Policy.RobotsMaxAge")
	young := ended.Before(acking.Add(age))
	queued := 3 // a3 to a5, or a2 to a5 if the machine stalled
	switch {
	case isRobots(l) && young:
		t.Fatalf("Policy.RobotsMaxAge %v: Take gave %s again at most %v after the first URL went by its rules, want it only once they are %v old",
			age, desc(l), ended.Sub(acking).Round(time.Millisecond), age)
	case isRobots(l):
		queued = 4
		t.Logf("the machine stalled: a Take begun %v short of Policy.RobotsMaxAge returned after it; the age's lower bound is not checked", margin)
	default:
		if !sameRules(l.Rules, rules1) {
			t.Errorf("robots.txt acked with Rules %s: Take of %s gave Rules %s", rulesString(rules1), l.URL, rulesString(l.Rules))
		}
		ack(t, f, l, crawl.Outcome{})
		// Past the age: the next Take is the robots.txt.
		time.Sleep(time.Until(firstEnded.Add(age + margin)))
		l = take(t, f, "a3 to a5 queued, their host's rules older than Policy.RobotsMaxAge")
		if !isRobots(l) {
			t.Fatalf("Policy.RobotsMaxAge %v, the first URL gone by the rules at least %v ago: Take got %s, want %s/robots.txt again first",
				age, time.Since(firstEnded).Round(time.Millisecond), desc(l), hostA)
		}
	}
	noTake(t, f, quiet, "the host's robots.txt is out again: none of its other URLs goes before it is acked")
	if c := counts(t, f); c.Queued != queued || c.Leased != 1 {
		t.Errorf("%d URLs of a queued, the robots.txt out again: Counts = %+v, want Queued %d, Leased 1", queued, c, queued)
	}
	rules2 := &crawl.HostRules{Robots: []byte("User-agent: *\nDisallow: /two\n")}
	ack(t, f, l, crawl.Outcome{Rules: rules2})
	// The age counts from the first URL that goes by the rules, so that
	// a host whose delay is longer than it gets a URL each time.
	time.Sleep(age + age/10)
	for range 2 {
		l = take(t, f, "URLs of a queued, their robots.txt acked anew, no URL gone by it yet")
		if isRobots(l) {
			t.Fatalf("Take gave %s again, just after it was acked anew", desc(l))
		}
		if !sameRules(l.Rules, rules2) {
			t.Errorf("robots.txt acked anew with Rules %s: Take of %s gave Rules %s", rulesString(rules2), l.URL, rulesString(l.Rules))
		}
		ack(t, f, l, crawl.Outcome{})
	}
}

// checkJoinRobots checks Join while a robots.txt lease is out: the
// Requests of its host waiting behind it are pending, so Join does not
// return while it is out, nor once it is acked and they are still
// queued; but the lease itself is never pending, so Join does not wait
// for it once the page budget is spent and nothing else is out.
func checkJoinRobots(t *testing.T, f crawl.Frontier) {
	start(t, f, crawl.Policy{HostWorkers: 2, Robots: true, MaxPages: 1})
	a1, b1 := page(hostA+"/1"), page(hostB+"/1")
	push(t, f, 1, "a1 is new", a1)
	ra := take(t, f, "a1 queued, its host new")
	if !isRobots(ra) || crawl.HostKey(ra.URL) != hostA {
		t.Fatalf("Policy.Robots, a1 pushed: Take got %s, want %s/robots.txt", desc(ra), hostA)
	}
	const d = 2 * quiet
	_, err := call(t, d, "Join with a deadline", func(ctx context.Context) (struct{}, error) {
		return struct{}{}, f.Join(ctx)
	})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Join with a %v deadline, the robots.txt of a the only lease out, a1 waiting for it: got %v, want context.DeadlineExceeded (a1 is pending)", d, err)
	}
	j := startJoin(t, f)
	j.blocked(t, "taking the robots.txt of a, a1 waiting for it")

	push(t, f, 1, "b1 is new", b1)
	rb := take(t, f, "b1 queued, its host new; a1 waiting for the robots.txt of a")
	if !isRobots(rb) || crawl.HostKey(rb.URL) != hostB {
		t.Fatalf("Policy.Robots, the robots.txt of a out, b1 pushed: Take got %s, want %s/robots.txt", desc(rb), hostB)
	}
	ack(t, f, ra, crawl.Outcome{})
	j.blocked(t, "acking the robots.txt of a, a1 and b1 queued, the robots.txt of b out")
	l := take(t, f, "a1 queued, its host open, Policy.MaxPages 1")
	if l.URL != a1.URL {
		t.Fatalf("Take: got %s, want a1: the robots.txt of b is out, and a's was acked", desc(l))
	}
	j.blocked(t, "taking a1, the one page of Policy.MaxPages 1")
	ack(t, f, l, crawl.Outcome{})
	// What is left is b1, never taken, and the robots.txt of b, which is
	// not pending: Join's rule for a spent budget holds.
	j.returns(t, "acking a1: Policy.MaxPages 1 spent, no lease out but the robots.txt of b, b1 never taken")
	wantCounts(t, f, "acking a1, the robots.txt of b out", crawl.Counts{Queued: 1, Leased: 1, Done: 1, Pages: 1})
	ack(t, f, rb, crawl.Outcome{})
	noTake(t, f, quiet, "Policy.MaxPages 1 spent, b1 a first attempt")
	startJoin(t, f).returns(t, "acking the robots.txt of b, Policy.MaxPages 1 spent")
	wantCounts(t, f, "acking the robots.txt of b", crawl.Counts{Queued: 1, Done: 1, Pages: 1})
}

// checkRobotsDelay checks that the Delay of a host's rules spaces the
// starts of its requests, none closer than it: a Crawl-delay is a floor,
// which the jitter of Policy.HostDelay's pauses does not go under.
func checkRobotsDelay(t *testing.T, f crawl.Frontier) {
	const d = 200 * time.Millisecond
	start(t, f, crawl.Policy{HostWorkers: 4, Robots: true})
	push(t, f, 3, "3 new URLs of c", pages(hostC, "/1", "/2", "/3")...)
	l, began, ended := timedTake(t, f, "c is new")
	if !isRobots(l) {
		t.Fatalf("Policy.Robots, 3 URLs of c pushed: Take got %s, want %s/robots.txt", desc(l), hostC)
	}
	starts := []span{{began, ended}}
	rules := &crawl.HostRules{Robots: []byte("User-agent: *\nCrawl-delay: 0.2\n"), Delay: d}
	ack(t, f, l, crawl.Outcome{Rules: rules})
	for range 3 {
		l, began, ended := timedTake(t, f, "c is open with a Crawl-delay")
		starts = append(starts, span{began, ended})
		if !sameRules(l.Rules, rules) {
			t.Errorf("robots.txt of c acked with Rules %s: Take of %s gave Rules %s", rulesString(rules), l.URL, rulesString(l.Rules))
		}
		ack(t, f, l, crawl.Outcome{})
	}
	checkSpacing(t, fmt.Sprintf("HostRules.Delay %v, robots.txt then 3 pages of %s", d, hostC), starts, d)
}

// checkPageBudget checks that no more than Policy.MaxPages first attempts
// are handed out, that retries still are, and that Join returns once the
// budget is spent and acked.
func checkPageBudget(t *testing.T, f crawl.Frontier) {
	start(t, f, crawl.Policy{HostWorkers: 4, MaxPages: 3})
	push(t, f, 6, "6 new URLs", append(pages(hostA, "/1", "/2", "/3"), pages(hostB, "/1", "/2", "/3")...)...)
	var out []*crawl.Lease
	for range 3 {
		out = append(out, take(t, f, "6 URLs queued, Policy.MaxPages is 3"))
	}
	noTake(t, f, quiet, "3 first attempts taken, Policy.MaxPages is 3")
	wantCounts(t, f, "taking 3 of 6 URLs, Policy.MaxPages 3", crawl.Counts{Queued: 3, Leased: 3, Pages: 3})
	j := startJoin(t, f)
	j.blocked(t, "taking the 3 pages of the budget")

	l := out[0]
	l.Tries++
	retry(t, f, l, time.Time{})
	l2 := take(t, f, "a retry goes out while the page budget is spent")
	if l2.URL != l.URL {
		t.Fatalf("budget spent, %s put back: Take gave %s, want the retry", l.URL, desc(l2))
	}
	wantCounts(t, f, "putting back and taking again one of the budget's 3 pages", crawl.Counts{Queued: 3, Leased: 3, Pages: 3})
	ack(t, f, l2, crawl.Outcome{})
	ack(t, f, out[1], crawl.Outcome{})
	j.blocked(t, "acking 2 of the budget's 3 pages")

	l = out[2]
	l.Tries++
	at := time.Now().Add(200 * time.Millisecond)
	retry(t, f, l, at)
	j.blocked(t, "putting back the budget's last page to be retried in 200ms")
	l, _, ended := timedTake(t, f, "the retry of the budget's last page, in 200ms")
	if ended.Before(at) {
		t.Errorf("Retry(%s, now+200ms): Take handed it out %v before its time", l.URL, at.Sub(ended))
	}
	ack(t, f, l, crawl.Outcome{})
	j.returns(t, "acking the budget's 3 pages, 3 URLs still queued")
	wantCounts(t, f, "acking the budget's 3 pages", crawl.Counts{Queued: 3, Done: 3, Pages: 3})
	noTake(t, f, quiet, "the page budget is spent")
}

// checkPageBudgetUnsent checks that Unsent acks do not count towards the
// page budget.
func checkPageBudgetUnsent(t *testing.T, f crawl.Frontier) {
	start(t, f, crawl.Policy{HostWorkers: 4, MaxPages: 2})
	push(t, f, 4, "4 new URLs", pages(hostA, "/1", "/2", "/3", "/4")...)
	l1 := take(t, f, "4 URLs queued, Policy.MaxPages is 2")
	take(t, f, "3 URLs queued, 1 of Policy.MaxPages 2 taken")
	ack(t, f, l1, crawl.Outcome{Unsent: true})
	take(t, f, "an Unsent page does not count towards Policy.MaxPages")
	noTake(t, f, quiet, "2 pages taken and sent, Policy.MaxPages is 2")
	wantCounts(t, f, "taking 3 pages, one acked Unsent, Policy.MaxPages 2", crawl.Counts{Queued: 1, Leased: 2, Done: 1, Pages: 2})
}

// checkPageBudgetPassedOver checks that a host passed over while the page
// budget was spent is served again once an Unsent ack gives a page back.
func checkPageBudgetPassedOver(t *testing.T, f crawl.Frontier) {
	start(t, f, crawl.Policy{HostWorkers: 1, MaxPages: 1})
	push(t, f, 2, "a1, b1 are new", page(hostA+"/1"), page(hostB+"/1"))
	l := take(t, f, "a1 and b1 queued, Policy.MaxPages is 1")
	noTake(t, f, quiet, "1 page taken, Policy.MaxPages is 1")
	ack(t, f, l, crawl.Outcome{Unsent: true})
	l2 := take(t, f, "the page acked Unsent gave its page back, and the other host's page is queued")
	if crawl.HostKey(l2.URL) == crawl.HostKey(l.URL) {
		t.Errorf("took %s, then %s; want the other host's page", desc(l), desc(l2))
	}
	wantCounts(t, f, "one page acked Unsent, the other taken, Policy.MaxPages 1", crawl.Counts{Queued: 0, Leased: 1, Done: 1, Pages: 1})
}

// checkLeaseExpiry checks that a lease not extended is taken back after
// Policy.LeaseTerm and handed out again, and that its old holder has lost
// it.
func checkLeaseExpiry(t *testing.T, f crawl.Frontier) {
	const term = 300 * time.Millisecond
	start(t, f, crawl.Policy{HostWorkers: 1, LeaseTerm: term})
	push(t, f, 1, "a1 is new", page(hostA+"/1"))
	l1, began, _ := timedTake(t, f, "a1 is queued")
	l2, _, ended := timedTake(t, f, "a1's lease is not extended: it is handed out again after its term")
	if l2.URL != l1.URL || l2.Kind != l1.Kind {
		t.Fatalf("Take: got %s, want a1 again, taken back after the term of its lease", desc(l2))
	}
	if gap := ended.Sub(began); gap < term {
		t.Errorf("Policy.LeaseTerm %v: a1 handed out again at most %v after it was first taken", term, gap)
	}
	if l2.ID == l1.ID {
		t.Errorf("a1 handed out again with lease ID %q, already used: IDs must be unique", l1.ID)
	}
	if !sameRequest(l2.Request, l1.Request) {
		t.Errorf("a1 taken back and handed out again: got Request %+v, want %+v", l2.Request, l1.Request)
	}
	wantQLD(t, f, "a1's lease taken back and handed out again", 0, 1, 0)

	lost := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, crawl.ErrLeaseLost) {
			t.Errorf("%s of a1's first lease, taken back and handed out again: got error %v, want ErrLeaseLost", what, err)
		}
	}
	lost("Extend", do(t, "Extend", func(ctx context.Context) error { return f.Extend(ctx, l1) }))
	lost("Retry", do(t, "Retry", func(ctx context.Context) error { return f.Retry(ctx, l1, time.Time{}) }))
	n, err := call(t, timeout, "Ack", func(ctx context.Context) (int, error) {
		return f.Ack(ctx, l1, crawl.Outcome{Links: []crawl.Request{page(hostA + "/2")}})
	})
	lost("Ack", err)
	if n != 1 {
		t.Errorf("Ack of a lost lease with a new link a2: admitted %d, want 1 (a lost lease's links are admitted all the same)", n)
	}
	wantQLD(t, f, "the old holder of a1 acking it with a link a2", 1, 1, 0)
	if err := do(t, "Extend", func(ctx context.Context) error { return f.Extend(ctx, l2) }); err != nil {
		t.Errorf("Extend of a1's second lease: got error %v, want nil", err)
	}
	ack(t, f, l2, crawl.Outcome{})
	wantQLD(t, f, "acking a1's second lease", 1, 0, 1)
	ack(t, f, take(t, f, "a2 is queued"), crawl.Outcome{})
	wantQLD(t, f, "acking a1 and a2", 0, 0, 2)
}

// wantQLD fails t unless f's Counts has those Queued, Leased and Done,
// whatever its Pages.
func wantQLD(t *testing.T, f crawl.Frontier, step string, queued, leased, done int) {
	t.Helper()
	if c := counts(t, f); c.Queued != queued || c.Leased != leased || c.Done != done {
		t.Fatalf("after %s: Counts = %+v, want Queued %d, Leased %d, Done %d", step, c, queued, leased, done)
	}
}

// checkLeaseExtend checks that a lease extended every third of its term is
// not taken back. Each Take waits a third of the term for nothing; an
// Extend follows. On a machine stalled for longer than the term the lease
// may really expire: only what cannot happen then fails.
func checkLeaseExtend(t *testing.T, f crawl.Frontier) {
	const term = 300 * time.Millisecond
	start(t, f, crawl.Policy{HostWorkers: 1, LeaseTerm: term})
	push(t, f, 1, "a1 is new", page(hostA+"/1"))
	l, renewed, _ := timedTake(t, f, "a1 is queued")
	for end := time.Now().Add(4 * term); time.Now().Before(end); {
		l2, err := call(t, term/3, "Take", func(ctx context.Context) (*crawl.Lease, error) { return f.Take(ctx) })
		if err == nil {
			if at := time.Now(); at.Before(renewed.Add(term)) {
				t.Fatalf("a1's lease extended every %v, LeaseTerm %v: Take handed it out again (%s) %v after the last renewal began",
					term/3, term, desc(l2), at.Sub(renewed))
			}
			t.Logf("a1's lease expired: the machine stalled for longer than its term; nothing more to check")
			return
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Take with a %v deadline, nothing to hand out: got error %v, want context.DeadlineExceeded", term/3, err)
		}
		began := time.Now()
		err = do(t, "Extend", func(ctx context.Context) error { return f.Extend(ctx, l) })
		switch {
		case errors.Is(err, crawl.ErrLeaseLost) && time.Now().Before(renewed.Add(term)):
			t.Fatalf("Extend of a1's lease, extended every %v, LeaseTerm %v: got ErrLeaseLost %v after the last renewal began",
				term/3, term, time.Since(renewed))
		case errors.Is(err, crawl.ErrLeaseLost):
			t.Logf("a1's lease expired: the machine stalled for longer than its term; nothing more to check")
			return
		case err != nil:
			t.Fatalf("Extend of a1's lease: got error %v, want nil", err)
		}
		renewed = began
	}
	ack(t, f, l, crawl.Outcome{})
	wantQLD(t, f, "acking a1, its lease extended every third of its term", 0, 0, 1)
}

// checkClose checks that Close ends the calls blocked in the Frontier, a
// Take and a Join (the blocking calls the contract names), and that every
// method returns ErrFrontierClosed after Close.
func checkClose(t *testing.T, f crawl.Frontier) {
	p := crawl.Policy{HostWorkers: 1}
	start(t, f, p)
	push(t, f, 1, "a1 is new", page(hostA+"/1"))
	l := take(t, f, "a1 is queued")
	// With a1 leased, nothing is queued (Take blocks) and a1 is pending
	// (Join blocks). The goroutines never wait for the test.
	takec, joinc := make(chan error, 1), make(chan error, 1)
	go func() {
		_, err := f.Take(t.Context())
		takec <- err
	}()
	go func() { joinc <- f.Join(t.Context()) }()
	time.Sleep(quiet) // most often, both are blocked when Close is called
	select {
	case err := <-joinc:
		t.Fatalf("Join with a1 leased: returned %v before Close, want it blocked", err)
	default:
	}
	var err error
	within(t, timeout, "Close", func() { err = f.Close() })
	if err != nil {
		t.Errorf("Close: got error %v, want nil", err)
	}
	// Both are given one timeout, counted from Close.
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	expired := false
	for _, c := range []struct {
		name string
		errc chan error
	}{{"Take", takec}, {"Join (a1 leased)", joinc}} {
		var (
			err     error
			blocked bool
		)
		if expired {
			select {
			case err = <-c.errc:
			default:
				blocked = true
			}
		} else {
			select {
			case err = <-c.errc:
			case <-deadline.C:
				expired, blocked = true, true
			}
		}
		switch {
		case blocked:
			t.Errorf("%s blocked when Close was called: still blocked %v after Close, want ErrFrontierClosed", c.name, timeout)
		case !errors.Is(err, crawl.ErrFrontierClosed):
			t.Errorf("%s blocked when Close was called: got %v, want ErrFrontierClosed", c.name, err)
		}
	}

	methods := []struct {
		name string
		call func(ctx context.Context) error
	}{
		{"Start", func(ctx context.Context) error { return f.Start(ctx, p) }},
		{"Push", func(ctx context.Context) error { _, err := f.Push(ctx, page(hostA+"/2")); return err }},
		{"Take", func(ctx context.Context) error { _, err := f.Take(ctx); return err }},
		{"Ack", func(ctx context.Context) error { _, err := f.Ack(ctx, l, crawl.Outcome{}); return err }},
		{"Retry", func(ctx context.Context) error { return f.Retry(ctx, l, time.Time{}) }},
		{"Extend", func(ctx context.Context) error { return f.Extend(ctx, l) }},
		{"Pause", func(ctx context.Context) error { return f.Pause(ctx, hostA, time.Now().Add(time.Second)) }},
		{"Join", f.Join},
		{"Counts", func(ctx context.Context) error { _, err := f.Counts(ctx); return err }},
	}
	if rs, ok := f.(crawl.ResultStore); ok {
		methods = append(methods, struct {
			name string
			call func(ctx context.Context) error
		}{"Results", func(ctx context.Context) error {
			return rs.Results(ctx, func(crawl.Result) bool { return true })
		}})
	}
	for _, m := range methods {
		if err := do(t, m.name+" after Close", m.call); !errors.Is(err, crawl.ErrFrontierClosed) {
			t.Errorf("%s after Close: got error %v, want ErrFrontierClosed", m.name, err)
		}
	}
}

// checkResults checks that a ResultStore gives back every Result acked,
// with Result.NumNewURLs set by Ack.
func checkResults(t *testing.T, f crawl.Frontier) {
	rs, ok := f.(crawl.ResultStore)
	if !ok {
		t.Skip("not a crawl.ResultStore")
	}
	start(t, f, crawl.Policy{HostWorkers: 2})
	push(t, f, 2, "a1, a2 are new", pages(hostA, "/1", "/2")...)
	want := map[string]crawl.Result{}
	for range 2 {
		l := take(t, f, "a1, a2 are queued")
		r := sampleResult(l.URL)
		var links []crawl.Request
		if l.URL == hostA+"/1" {
			links = pages(hostA, "/2", "/3")
			r.NumURLs = 2
		} else {
			r.Err = fmt.Errorf("fetch %s: %w", l.URL, crawl.ErrBodyTooLarge)
		}
		sent := r
		r.NumNewURLs = ack(t, f, l, crawl.Outcome{Result: &sent, Links: links})
		if l.URL == hostA+"/1" && r.NumNewURLs != 1 {
			t.Errorf("Ack of a1 with links a2 (seen), a3 (new): admitted %d, want 1", r.NumNewURLs)
		}
		want[l.URL] = r
	}
	l := take(t, f, "a3 is queued")
	r := sampleResult(l.URL)
	r.Status, r.ContentType = 404, "text/plain"
	sent := r
	ack(t, f, l, crawl.Outcome{Result: &sent})
	want[l.URL] = r
	checkStoredResults(t, rs, "acking 3 URLs with their Results", want)

	calls := 0
	err := do(t, "Results", func(ctx context.Context) error {
		return rs.Results(ctx, func(crawl.Result) bool { calls++; return false })
	})
	if err != nil || calls != 1 {
		t.Errorf("Results with a yield that returns false: %d calls, error %v; want 1 call, nil", calls, err)
	}
}

// sampleResult returns a Result for u with every field but Err set.
func sampleResult(u string) crawl.Result {
	return crawl.Result{
		URL: u, Status: 200, Size: 1234, ContentType: "text/html", Encoding: "utf-8",
		Depth: 1, Tries: 1, Elapsed: 15 * time.Millisecond,
	}
}

// checkStoredResults fails t unless rs gives back the Results in want,
// keyed by URL, and no other.
func checkStoredResults(t *testing.T, rs crawl.ResultStore, step string, want map[string]crawl.Result) {
	t.Helper()
	got := map[string]crawl.Result{}
	err := do(t, "Results", func(ctx context.Context) error {
		return rs.Results(ctx, func(r crawl.Result) bool {
			if _, dup := got[r.URL]; dup {
				t.Errorf("after %s: Results gave %s twice", step, r.URL)
			}
			got[r.URL] = r
			return true
		})
	})
	if err != nil {
		t.Fatalf("after %s: Results: got error %v, want nil", step, err)
	}
	for u, w := range want {
		g, ok := got[u]
		if !ok {
			t.Errorf("after %s: Results did not give the Result of %s", step, u)
			continue
		}
		if d := resultDiff(g, w); d != "" {
			t.Errorf("after %s: Results gave for %s %s", step, u, d)
		}
	}
	for u := range got {
		if _, ok := want[u]; !ok {
			t.Errorf("after %s: Results gave a Result for %s, never acked with one", step, u)
		}
	}
}

// resultDiff describes how got differs from want, or returns "". An error
// is compared by its text, its kind (crawl.FailKind) and the sentinel
// errors it matches.
func resultDiff(got, want crawl.Result) string {
	ge, we := got.Err, want.Err
	got.Err, want.Err = nil, nil
	if got != want {
		return fmt.Sprintf("%+v, want %+v", got, want)
	}
	switch {
	case (ge == nil) != (we == nil):
		return fmt.Sprintf("Err %v, want %v", ge, we)
	case ge == nil:
		return ""
	case ge.Error() != we.Error() || crawl.FailKind(ge) != crawl.FailKind(we):
		return fmt.Sprintf("Err %q (kind %s), want %q (kind %s)", ge, crawl.FailKind(ge), we, crawl.FailKind(we))
	}
	for _, s := range []error{crawl.ErrDisallowed, crawl.ErrBodyTooLarge, context.DeadlineExceeded} {
		if errors.Is(ge, s) != errors.Is(we, s) {
			return fmt.Sprintf("Err %q: errors.Is(err, %v) = %v, want %v", ge, s, errors.Is(ge, s), errors.Is(we, s))
		}
	}
	return ""
}
