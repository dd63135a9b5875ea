package frontiertest

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/asyncrawl/crawl"
)

// closeFrontier closes f, failing t on an error.
func closeFrontier(t *testing.T, f crawl.Frontier, step string) {
	t.Helper()
	var err error
	within(t, timeout, "Close", func() { err = f.Close() })
	if err != nil {
		t.Fatalf("Close after %s: got error %v, want nil", step, err)
	}
}

// openAt calls open for path, failing t on a nil Frontier.
func openAt(t *testing.T, open func(t *testing.T, path string) crawl.Frontier, path string) crawl.Frontier {
	t.Helper()
	f := open(t, path)
	if f == nil {
		t.Fatalf("open(%q) returned a nil Frontier", path)
	}
	return f
}

// checkReopen runs a crawl part of the way, closes the Frontier with a
// lease out, a retry waiting and a robots.txt unanswered, opens it anew
// and checks that the crawl goes on where it was.
func checkReopen(t *testing.T, open func(t *testing.T, path string) crawl.Frontier) {
	path := filepath.Join(t.TempDir(), "frontier")
	p := crawl.Policy{HostWorkers: 2, Robots: true, Roots: []string{hostA + "/", hostB + "/"}, Scope: "host"}
	a := func(n int) crawl.Request { return page(fmt.Sprintf("%s/%d", hostA, n)) }
	b := func(n int) crawl.Request { return page(fmt.Sprintf("%s/%d", hostB, n)) }
	want := map[string]crawl.Result{} // the Results acked

	// Before Close: a's robots.txt acked, a1 and a2 acked, a3 or a4 to
	// be retried, the other leased; b's robots.txt leased, b1 and b2
	// queued.
	f := openAt(t, open, path)
	rs, isStore := f.(crawl.ResultStore)
	start(t, f, p)
	push(t, f, 5, "5 new URLs", a(1), a(2), a(3), b(1), b(2))
	robots := map[string]*crawl.Lease{}
	for range 2 {
		l := take(t, f, "robots.txt of a and b go first")
		if !isRobots(l) {
			t.Fatalf("Policy.Robots, a1, a2, a3, b1, b2 pushed: Take got %s, want a RobotsRequest", desc(l))
		}
		robots[crawl.HostKey(l.URL)] = l
	}
	if robots[hostA] == nil || robots[hostB] == nil {
		t.Fatalf("Policy.Robots, URLs of a and b pushed: the first 2 Takes gave the robots.txt of %v, want those of a and b", robots)
	}
	rulesA := &crawl.HostRules{Robots: []byte("User-agent: *\nDisallow: /private\nCrawl-delay: 0.02\n"), Delay: 20 * time.Millisecond}
	ack(t, f, robots[hostA], crawl.Outcome{Rules: rulesA})

	for i := range 2 {
		l := take(t, f, "a1, a2, a3 are queued, a is open")
		r := sampleResult(l.URL)
		o := crawl.Outcome{Result: &r}
		if i == 0 {
			o.Links = []crawl.Request{a(4), b(1)}
		} else {
			r.Err = fmt.Errorf("%w: %s", crawl.ErrDisallowed, l.URL)
			r.Tries, r.Status, r.Size, r.ContentType, r.Encoding, r.Elapsed = 0, 0, 0, "", "", 0
			o.Unsent = true
		}
		if n := ack(t, f, l, o); i == 0 && n != 1 {
			t.Errorf("Ack of %s with links a4 (new), b1 (queued): admitted %d, want 1", l.URL, n)
		}
		want[l.URL] = r
	}
	retried := take(t, f, "two of a1, a2, a3, a4 are queued")
	kept := take(t, f, "one of a1, a2, a3, a4 is queued")
	retried.Tries = 1
	retried.First = time.Now().Add(-time.Second)
	at := time.Now().Add(800 * time.Millisecond)
	retry(t, f, retried, at)
	wantQLD(t, f, "the crawl before Close", 3, 2, 2)
	if isStore {
		checkStoredResults(t, rs, "acking 2 URLs with their Results, before Close", want)
	}
	closeFrontier(t, f, "a crawl with a lease out, a retry waiting and a robots.txt leased")

	// After: everything kept; the lease out at Close queued again.
	f = openAt(t, open, path)
	rs, _ = f.(crawl.ResultStore)
	start(t, f, p)
	wantQLD(t, f, "reopening (the lease out at Close queued again)", 4, 0, 2)
	push(t, f, 0, "every URL was admitted before Close", a(1), a(2), a(3), a(4), b(1), b(2))
	push(t, f, 1, "a5 is new", a(5))
	remaining := map[string]bool{kept.URL: true, retried.URL: true, a(5).URL: true, b(1).URL: true, b(2).URL: true}
	robotsA, robotsB := false, false
	rulesB := &crawl.HostRules{Robots: []byte("User-agent: *\nAllow: /\n")}
	for len(remaining) > 0 {
		l, _, ended := timedTake(t, f, fmt.Sprintf("after reopening, %d URLs to go", len(remaining)))
		host := crawl.HostKey(l.URL)
		switch {
		case isRobots(l) && host == hostB && !robotsB:
			robotsB = true
			ack(t, f, l, crawl.Outcome{Rules: rulesB})
			continue
		case isRobots(l) && host == hostA && !robotsA:
			// Asked again in the new Run (see Frontier.Start), once.
			robotsA = true
			ack(t, f, l, crawl.Outcome{Rules: rulesA})
			continue
		case isRobots(l):
			t.Fatalf("after reopening, Take gave %s: its host's robots.txt was acked already in this Run", desc(l))
		case !remaining[l.URL]:
			t.Fatalf("after reopening, Take gave %s, want one of %v", desc(l), remaining)
		case host == hostB && !robotsB:
			t.Errorf("after reopening, Take gave %s before the robots.txt of b, leased at Close and never acked", desc(l))
		}
		delete(remaining, l.URL)
		wantRules := map[string]*crawl.HostRules{hostA: rulesA, hostB: rulesB}[host]
		if !sameRules(l.Rules, wantRules) {
			t.Errorf("after reopening, Take of %s gave Rules %s, want %s as acked", l.URL, rulesString(l.Rules), rulesString(wantRules))
		}
		switch l.URL {
		case retried.URL:
			if ended.Before(at) {
				t.Errorf("Retry(%s, now+800ms), Close, reopening: Take handed it out %v before its time", l.URL, at.Sub(ended))
			}
			if !sameRequest(l.Request, retried.Request) {
				t.Errorf("Retry of %+v, Close, reopening: Take gave back %+v", retried.Request, l.Request)
			}
		case kept.URL:
			if !sameRequest(l.Request, kept.Request) {
				t.Errorf("%+v leased at Close, reopening: Take gave back %+v", kept.Request, l.Request)
			}
		}
		r := sampleResult(l.URL)
		sent := r
		ack(t, f, l, crawl.Outcome{Result: &sent})
		want[l.URL] = r
	}
	if !robotsB {
		t.Errorf("after reopening, b1 and b2 handed out without the robots.txt of b, leased at Close and never acked")
	}
	var err error
	within(t, timeout, "Join", func() { err = f.Join(t.Context()) })
	if err != nil {
		t.Fatalf("after reopening, every URL acked: Join got %v, want nil", err)
	}
	wantQLD(t, f, "reopening and acking every URL", 0, 0, 7)
	if isStore {
		checkStoredResults(t, rs, "Close, reopening, acking 5 more URLs", want)
	}
	closeFrontier(t, f, "acking every URL")

	// Once more, with nothing to do.
	f = openAt(t, open, path)
	rs, _ = f.(crawl.ResultStore)
	start(t, f, p)
	wantQLD(t, f, "reopening a finished crawl", 0, 0, 7)
	push(t, f, 0, "every URL was admitted before Close", a(1), a(4), a(5), b(2))
	noTake(t, f, quiet, "reopening a finished crawl")
	if isStore {
		checkStoredResults(t, rs, "reopening a finished crawl", want)
	}
	closeFrontier(t, f, "reopening a finished crawl")
}

// checkOtherRootsOrScope checks that Start refuses to resume a crawl
// started under other Roots or Scope, and leaves the state as it was.
func checkOtherRootsOrScope(t *testing.T, open func(t *testing.T, path string) crawl.Frontier) {
	path := filepath.Join(t.TempDir(), "frontier")
	p := crawl.Policy{HostWorkers: 1, Roots: []string{hostA + "/"}, Scope: "host"}
	f := openAt(t, open, path)
	start(t, f, p)
	push(t, f, 2, "a1, a2 are new", pages(hostA, "/1", "/2")...)
	ack(t, f, take(t, f, "a1, a2 are queued"), crawl.Outcome{})
	closeFrontier(t, f, "a crawl of a1 and a2, one acked")

	f = openAt(t, open, path)
	roots := p
	roots.Roots = []string{hostA + "/", hostB + "/"}
	scope := p
	scope.Scope = "domain"
	for _, other := range []crawl.Policy{roots, scope} {
		err := do(t, "Start", func(ctx context.Context) error { return f.Start(ctx, other) })
		if err == nil {
			t.Errorf("Start with Roots %q, Scope %q on the state of a crawl with Roots %q, Scope %q: got nil, want an error",
				other.Roots, other.Scope, p.Roots, p.Scope)
		}
	}
	start(t, f, p)
	wantQLD(t, f, "two Starts refused, then one with the crawl's Roots and Scope", 1, 0, 1)
	push(t, f, 0, "a1 and a2 were admitted", pages(hostA, "/1", "/2")...)
	closeFrontier(t, f, "resuming a crawl")
}
