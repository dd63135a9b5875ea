package frontiertest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/asyncrawl/crawl"
)

// timeout bounds every call that should return: a Frontier that keeps a
// call blocked longer fails the check instead of hanging the test binary.
// It is far above what a correct Frontier needs on a loaded machine, so
// that it never decides a pass or a failure of a correct one.
const timeout = 10 * time.Second

// crawlTimeout bounds a Join that waits for a whole crawl of many calls
// (Concurrent's 640 URLs on a Redis Cluster took 1 to 2 s, 5.9 to 6.9 s
// with the machine's 2 cores loaded, and over 10 s in a CI run of every
// package at once): still under the default lease term (a minute), so
// that a lease left out until its term ends fails the check.
const crawlTimeout = 30 * time.Second

// grace is how much longer than its context's deadline a call may take
// before the suite gives up on it: a Frontier must return promptly with
// ctx.Err() when ctx is done.
const grace = 5 * time.Second

// quiet is how long the suite waits for something that must not happen
// (a Take that must not hand anything out, a Join that must not return).
// Waiting longer would catch more slow mistakes; the checks that matter
// are also made by counting.
const quiet = 150 * time.Millisecond

// within runs fn and fails t if fn has not returned after d, saying what
// was blocked. fn runs on another goroutine: it must not call t's FailNow
// methods, and it only sets variables the caller reads after within.
func within(t *testing.T, d time.Duration, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s: still blocked after %v", what, d)
	}
}

// call runs fn with a context that ends after d, failing t if fn does not
// return within d plus grace.
func call[T any](t *testing.T, d time.Duration, what string, fn func(ctx context.Context) (T, error)) (T, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), d)
	defer cancel()
	var (
		v   T
		err error
	)
	within(t, d+grace, what, func() { v, err = fn(ctx) })
	return v, err
}

// do is call for the methods that return only an error.
func do(t *testing.T, what string, fn func(ctx context.Context) error) error {
	t.Helper()
	_, err := call(t, timeout, what, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, fn(ctx)
	})
	return err
}

// start calls f.Start with p and fails t if it returns an error.
func start(t *testing.T, f crawl.Frontier, p crawl.Policy) {
	t.Helper()
	if err := do(t, "Start", func(ctx context.Context) error { return f.Start(ctx, p) }); err != nil {
		t.Fatalf("Start(%+v) on a fresh Frontier: got error %v, want nil", p, err)
	}
}

// push pushes reqs and fails t unless want of them were admitted.
func push(t *testing.T, f crawl.Frontier, want int, why string, reqs ...crawl.Request) {
	t.Helper()
	n, err := call(t, timeout, "Push", func(ctx context.Context) (int, error) { return f.Push(ctx, reqs...) })
	if err != nil {
		t.Fatalf("Push(%s): got error %v, want nil", urls(reqs), err)
	}
	if n != want {
		t.Fatalf("Push(%s) (%s): admitted %d, want %d", urls(reqs), why, n, want)
	}
}

// take takes a lease and fails t if none comes within the timeout.
func take(t *testing.T, f crawl.Frontier, why string) *crawl.Lease {
	t.Helper()
	l, err := call(t, timeout, "Take ("+why+")", func(ctx context.Context) (*crawl.Lease, error) { return f.Take(ctx) })
	if err != nil {
		t.Fatalf("Take (%s): got error %v, want a lease", why, err)
	}
	if l == nil {
		t.Fatalf("Take (%s): got a nil lease and a nil error", why)
	}
	return l
}

// timedTake is take, also returning when the call began and when it
// returned: the lease's request started between the two.
func timedTake(t *testing.T, f crawl.Frontier, why string) (l *crawl.Lease, began, ended time.Time) {
	t.Helper()
	began = time.Now()
	l = take(t, f, why)
	return l, began, time.Now()
}

// noTake fails t if a Take with a deadline d hands out a lease, or does
// not return the deadline's error. It returns the lease handed out, if any.
func noTake(t *testing.T, f crawl.Frontier, d time.Duration, why string) *crawl.Lease {
	t.Helper()
	l, err := call(t, d, "Take with a deadline", func(ctx context.Context) (*crawl.Lease, error) { return f.Take(ctx) })
	switch {
	case err == nil && l != nil:
		t.Errorf("Take: handed out %s, want nothing for %v: %s", desc(l), d, why)
	case err == nil:
		t.Errorf("Take with a %v deadline: got a nil lease and a nil error, want context.DeadlineExceeded", d)
	case !errors.Is(err, context.DeadlineExceeded):
		t.Errorf("Take with a %v deadline, nothing to hand out (%s): got error %v, want context.DeadlineExceeded", d, why, err)
	}
	return l
}

// ack acks l with o and fails t on an error.
func ack(t *testing.T, f crawl.Frontier, l *crawl.Lease, o crawl.Outcome) int {
	t.Helper()
	n, err := call(t, timeout, "Ack", func(ctx context.Context) (int, error) { return f.Ack(ctx, l, o) })
	if err != nil {
		t.Fatalf("Ack of %s: got error %v, want nil", desc(l), err)
	}
	return n
}

// retry puts l back to be taken at at, failing t on an error.
func retry(t *testing.T, f crawl.Frontier, l *crawl.Lease, at time.Time) {
	t.Helper()
	if err := do(t, "Retry", func(ctx context.Context) error { return f.Retry(ctx, l, at) }); err != nil {
		t.Fatalf("Retry of %s: got error %v, want nil", desc(l), err)
	}
}

// counts returns f's Counts, failing t on an error.
func counts(t *testing.T, f crawl.Frontier) crawl.Counts {
	t.Helper()
	c, err := call(t, timeout, "Counts", func(ctx context.Context) (crawl.Counts, error) { return f.Counts(ctx) })
	if err != nil {
		t.Fatalf("Counts: got error %v, want nil", err)
	}
	return c
}

// wantCounts fails t unless f's Counts are want after step.
func wantCounts(t *testing.T, f crawl.Frontier, step string, want crawl.Counts) {
	t.Helper()
	if got := counts(t, f); got != want {
		t.Fatalf("after %s: Counts = %+v, want %+v", step, got, want)
	}
}

// joiner is a Join running on its own goroutine, so that a check can see
// at each step whether it has returned.
type joiner struct {
	// err receives Join's error; it has room for it so that the Join
	// goroutine never outlives the test for want of a receiver.
	err chan error
}

// startJoin calls f.Join on another goroutine; the call ends with the test.
func startJoin(t *testing.T, f crawl.Frontier) *joiner {
	t.Helper()
	j := &joiner{err: make(chan error, 1)}
	ctx := t.Context()
	go func() { j.err <- f.Join(ctx) }()
	return j
}

// blocked fails t if Join has returned; step says what was done before.
func (j *joiner) blocked(t *testing.T, step string) {
	t.Helper()
	select {
	case err := <-j.err:
		t.Fatalf("after %s: Join returned %v, want it to block while something is pending", step, err)
	case <-time.After(quiet):
	}
}

// returns fails t unless Join returns nil within the timeout.
func (j *joiner) returns(t *testing.T, step string) {
	t.Helper()
	select {
	case err := <-j.err:
		if err != nil {
			t.Fatalf("after %s: Join returned %v, want nil", step, err)
		}
	case <-time.After(timeout):
		t.Fatalf("after %s: Join still blocked after %v, want it to return: nothing is pending", step, timeout)
	}
}

// Hosts the checks use: HostKey of their URLs. One has a port, which is
// part of the key.
const (
	hostA = "https://a.example"
	hostB = "https://b.example:8443"
	hostC = "http://c.example"
	hostD = "https://d.example"
)

// page returns a page Request for the URL, with every field set so that
// the suite can see whether a Frontier gives them all back.
func page(url string) crawl.Request {
	return crawl.Request{
		URL:       url,
		Kind:      crawl.PageRequest,
		Depth:     1,
		Redirects: 10,
		Referrer:  crawl.HostKey(url) + "/",
	}
}

// pages returns page(host+path) for each path.
func pages(host string, paths ...string) []crawl.Request {
	reqs := make([]crawl.Request, len(paths))
	for i, p := range paths {
		reqs[i] = page(host + p)
	}
	return reqs
}

// sameRequest reports whether two Requests are equal, times compared with
// Equal (a durable Frontier need not keep a monotonic reading or a
// location).
func sameRequest(a, b crawl.Request) bool {
	return a.URL == b.URL && a.Kind == b.Kind && a.Depth == b.Depth &&
		a.Redirects == b.Redirects && a.CrossHost == b.CrossHost &&
		a.Tries == b.Tries && a.First.Equal(b.First) && a.Referrer == b.Referrer
}

// sameRules reports whether two HostRules are equal.
func sameRules(a, b *crawl.HostRules) bool {
	if a == nil || b == nil {
		return a == b
	}
	// A body is compared by its bytes: a durable Frontier may give back
	// an empty one as nil, which means the same (every URL allowed).
	return string(a.Robots) == string(b.Robots) && a.Denied == b.Denied && a.Delay == b.Delay
}

// desc describes a lease in failure messages.
func desc(l *crawl.Lease) string {
	if l == nil {
		return "<nil lease>"
	}
	kind := map[crawl.RequestKind]string{
		crawl.PageRequest: "page", crawl.SitemapRequest: "sitemap", crawl.RobotsRequest: "robots.txt",
	}[l.Kind]
	if kind == "" {
		kind = fmt.Sprintf("kind %d", l.Kind)
	}
	return fmt.Sprintf("%s %s (lease %q, tries %d)", kind, l.URL, l.ID, l.Tries)
}

// rulesString describes HostRules in failure messages.
func rulesString(r *crawl.HostRules) string {
	if r == nil {
		return "<nil>"
	}
	return fmt.Sprintf("{Robots: %q, Denied: %q, Delay: %v}", r.Robots, r.Denied, r.Delay)
}

// urls lists the URLs of reqs in failure messages.
func urls(reqs []crawl.Request) string {
	s := ""
	for i, r := range reqs {
		if i > 0 {
			s += ", "
		}
		s += r.URL
	}
	return s
}
