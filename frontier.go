package crawl

import (
	"container/heap"
	"context"
	"math/rand/v2"
	"strings"
	"sync"
	"time"
)

// taskKind says what a task's URL is fetched for.
type taskKind uint8

const (
	kindPage    taskKind = iota // a page of the crawl
	kindSitemap                 // a sitemap file: its URLs are queued, not its links
	kindRobots                  // a host's robots.txt: no Result, not counted
)

// task is one unit of work: a URL to fetch, as in the chapter's queue of
// (url, max_redirect) pairs, with its depth and what its fetching has done
// so far.
type task struct {
	url       string // normalised; also the key the seen set dedupes on
	depth     int
	redirects int // redirects still allowed from here
	kind      taskKind
	tries     int       // attempts already made
	first     time.Time // when the first attempt started
	at        time.Time // a retry is not started before this
	// crossHost means a redirect chain led here from another host name,
	// or from https to http: the request hook's credentials are not sent.
	crossHost bool
	// err, set by the frontier, means the URL must not be fetched
	// (robots.txt); such a task holds no host slot.
	err error
}

// gate is what a host's robots.txt decided: which URLs may be fetched and
// the least delay between two request starts.
type gate struct {
	allow func(pathQuery string) error // nil allows everything
	delay time.Duration
}

// frontier is the seam between the crawl and where its URLs wait: the seen
// set, the queues and the per-host schedule together, so that "is it new?",
// "queue it" and "whose turn is it?" are one step. A Run owns one frontier.
// The in-memory one is below; a persistent or distributed (Redis) one
// implements the same methods.
//
// The accounting is the joinable queue's: push raises the count of
// unfinished tasks by the number of new tasks, done lowers it by one, and
// join returns when it is zero, or when the page budget is spent and no
// task taken is still unfinished. A worker pushes a page's links before it
// calls done for the page, so join cannot return while work is in flight.
// A task put back by retry stays unfinished. Robots tasks are outside the
// count: they are the frontier's own.
type frontier interface {
	// push queues each task whose URL has not been pushed before and
	// returns how many were new. The tasks must have distinct URLs.
	push(ctx context.Context, ts ...task) (int, error)
	// pop takes the next task whose host may be sent a request now,
	// blocking until there is one or ctx is done. A robots task comes
	// first for a host whose robots.txt is not known yet.
	pop(ctx context.Context) (task, error)
	// retry puts back a page task taken by pop, to be taken again at or
	// after t.at, or a robots task, to be fetched again then.
	retry(t task)
	// done marks a page task taken by pop as finished.
	done(t task) error
	// open ends a robots task taken by pop: the host's URLs are then
	// dispatched under g.
	open(t task, g gate)
	// pause holds back every request to the host of url until the time.
	pause(url string, until time.Time)
	// join blocks until every task pushed is done, or ctx is done.
	join(ctx context.Context) error
	// queued returns the number of tasks pushed and not finished, less
	// those in flight: what is left when the Run stops early.
	queued() int
	// inFlight returns the number of tasks taken by pop and not yet done
	// nor put back.
	inFlight() int
	// spent reports whether the page budget ended the crawl.
	spent() bool
}

// hostKey returns the part of a normalised URL that a host's politeness
// applies to: scheme, host and port ("https://example.com:8443").
func hostKey(u string) string {
	i := strings.Index(u, "://")
	if i < 0 {
		return u
	}
	if j := strings.IndexAny(u[i+3:], "/?"); j >= 0 {
		return u[:i+3+j]
	}
	return u
}

// gateState is how far a host's robots.txt has got.
type gateState uint8

const (
	gateOpen     gateState = iota // robots.txt known, or not obeyed
	gateRobots                    // robots.txt to be fetched first
	gateFetching                  // robots.txt being fetched: nothing else goes
)

// host is the schedule of one host: its queue, its requests in flight and
// the earliest time the next one may start.
type host struct {
	key      string
	tasks    []task // tasks[head:]: new tasks, in order
	head     int
	later    retryHeap // tasks put back to be retried, soonest first
	inflight int
	next     time.Time     // no request starts before this
	delay    time.Duration // between request starts
	gate     gateState
	allow    func(string) error
	// robotsTries counts the attempts at its robots.txt so far.
	robotsTries int
	inReady     bool
	heapIdx     int       // index in timers, -1 when not there
	wake        time.Time // key in timers
}

// memFrontier keeps the frontier in memory. Hosts that may be sent a
// request now wait in a ring, served in turn; hosts waiting for a delay, a
// pause or a retry's time wait in a heap ordered by that time; hosts at
// their limit of requests in flight wait in neither until one finishes. So
// a worker never waits for a busy host while another host has work, and a
// URL waiting for its time never holds a worker.
//
// Workers blocked in pop are served in FIFO order by direct hand-off, as
// Queue does; the first of them also keeps the heap's earliest time, so
// that no goroutine but the workers is needed.
type memFrontier struct {
	mu          sync.Mutex
	seen        map[string]struct{}
	hosts       map[string]*host
	ready       []*host // ready[readyHead:] may be sent a request now
	readyHead   int
	timers      timerHeap
	waiters     []*popper
	armed       time.Time // when the first waiter's timer fires; zero if none
	hostWorkers int
	hostDelay   time.Duration
	robots      bool
	maxPages    int
	pages       int           // new tasks taken, the budget's count
	unfinished  int           // pushed and not done
	fresh       int           // queued and never taken
	pending     int           // queued: fresh tasks and retries
	idle        chan struct{} // closed while join may return
	idleClosed  bool
}

// popper is a worker blocked in pop.
type popper struct {
	ch   chan task     // receives the task it is served
	wake chan struct{} // the first waiter's timer must be set anew
}

func newMemFrontier(cfg *config) *memFrontier {
	f := &memFrontier{
		seen:        make(map[string]struct{}),
		hosts:       make(map[string]*host),
		hostWorkers: cfg.hostWorkers,
		hostDelay:   cfg.hostDelay,
		robots:      cfg.robots,
		maxPages:    cfg.maxPages,
		idle:        make(chan struct{}),
	}
	close(f.idle)
	f.idleClosed = true
	return f
}

func (f *memFrontier) push(ctx context.Context, ts ...task) (int, error) {
	added := 0
	f.mu.Lock()
	defer f.mu.Unlock()
	now := time.Now() // after the lock: a delay counts from the real dispatch
	var h *host
	for _, t := range ts {
		if _, ok := f.seen[t.url]; ok {
			continue
		}
		f.seen[t.url] = struct{}{}
		if key := hostKey(t.url); h == nil || h.key != key {
			h = f.host(key)
		}
		h.add(t)
		f.pending++
		f.fresh++
		f.unfinished++
		added++
		f.settle(h, now)
	}
	f.update(now)
	return added, nil
}

// host returns the schedule of the host key, making it on first use.
func (f *memFrontier) host(key string) *host {
	h := f.hosts[key]
	if h == nil {
		h = &host{key: key, delay: f.hostDelay, heapIdx: -1}
		if f.robots {
			h.gate = gateRobots
		}
		f.hosts[key] = h
	}
	return h
}

func (f *memFrontier) pop(ctx context.Context) (task, error) {
	if err := ctx.Err(); err != nil {
		return task{}, err
	}
	f.mu.Lock()
	if len(f.waiters) == 0 {
		if t, ok := f.take(time.Now()); ok {
			f.mu.Unlock()
			return t, nil
		}
	}
	w := &popper{ch: make(chan task, 1), wake: make(chan struct{}, 1)}
	f.waiters = append(f.waiters, w)
	var tm *time.Timer
	defer func() {
		if tm != nil {
			tm.Stop()
		}
	}()
	for {
		// The first waiter sleeps until the earliest time in the heap,
		// when a delayed host becomes ready; the others until served.
		var fire <-chan time.Time
		if f.waiters[0] == w {
			// No timer when the heap is empty: a time recorded from
			// an earlier round would keep update from waking us.
			f.armed = time.Time{}
		}
		if f.waiters[0] == w && len(f.timers) > 0 {
			f.armed = f.timers[0].wake
			d := time.Until(f.armed)
			if tm == nil {
				tm = time.NewTimer(d)
			} else {
				tm.Reset(d)
			}
			fire = tm.C
		}
		f.mu.Unlock()
		select {
		case t := <-w.ch:
			return t, nil
		case <-w.wake:
		case <-fire:
		case <-ctx.Done():
			f.mu.Lock()
			if f.removeWaiter(w) {
				f.mu.Unlock()
				return task{}, ctx.Err()
			}
			f.mu.Unlock()
			// Served as ctx ended: the task is ours, as in Queue.Get.
			return <-w.ch, nil
		}
		f.mu.Lock()
		f.update(time.Now())
		select {
		case t := <-w.ch:
			f.mu.Unlock()
			return t, nil
		default:
		}
	}
}

// removeWaiter removes w from the waiters, reporting whether it was still
// there (not served).
func (f *memFrontier) removeWaiter(w *popper) bool {
	for i, x := range f.waiters {
		if x == w {
			f.waiters = append(f.waiters[:i], f.waiters[i+1:]...)
			if i == 0 {
				f.rearm()
			}
			return true
		}
	}
	return false
}

func (f *memFrontier) retry(t task) {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := time.Now()
	h := f.host(hostKey(t.url))
	h.inflight--
	if t.kind == kindRobots {
		h.gate = gateRobots
		h.robotsTries = t.tries
		if t.at.After(h.next) {
			h.next = t.at
		}
	} else {
		heap.Push(&h.later, t)
		f.pending++
	}
	f.settle(h, now)
	f.update(now)
}

func (f *memFrontier) done(t task) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := time.Now()
	if f.unfinished <= 0 {
		return ErrTaskDone
	}
	f.unfinished--
	h := f.host(hostKey(t.url))
	if t.err == nil {
		h.inflight--
	}
	f.settle(h, now)
	f.update(now)
	return nil
}

func (f *memFrontier) open(t task, g gate) {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := time.Now()
	h := f.host(hostKey(t.url))
	h.inflight--
	h.gate = gateOpen
	h.allow = g.allow
	if g.delay > h.delay {
		h.delay = g.delay
		if n := now.Add(jitter(h.delay)); n.After(h.next) {
			h.next = n
		}
	}
	f.settle(h, now)
	f.update(now)
}

func (f *memFrontier) pause(url string, until time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := time.Now()
	h := f.host(hostKey(url))
	if until.After(h.next) {
		h.next = until
	}
	f.settle(h, now)
	f.update(now)
}

func (f *memFrontier) join(ctx context.Context) error {
	f.mu.Lock()
	idle := f.idle
	f.mu.Unlock()
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (f *memFrontier) queued() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.pending
}

func (f *memFrontier) inFlight() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.unfinished - f.pending
}

func (f *memFrontier) spent() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.spentLocked()
}

// spentLocked reports whether the page budget is spent. f.mu is held.
func (f *memFrontier) spentLocked() bool {
	return f.maxPages > 0 && f.pages >= f.maxPages
}

// update brings the schedule up to now after a change: it moves hosts whose
// time has come to the ring, serves the waiters what it can, wakes the
// first waiter if its timer is wrong, and opens join when the crawl is over.
func (f *memFrontier) update(now time.Time) {
	for len(f.timers) > 0 && !f.timers[0].wake.After(now) {
		h := heap.Pop(&f.timers).(*host)
		f.setReady(h)
	}
	served := false
	for len(f.waiters) > 0 {
		t, ok := f.take(now)
		if !ok {
			break
		}
		w := f.waiters[0]
		f.waiters[0] = nil
		f.waiters = f.waiters[1:]
		w.ch <- t
		served = true
	}
	if served || len(f.timers) > 0 && (f.armed.IsZero() || f.timers[0].wake.Before(f.armed)) {
		f.rearm()
	}
	over := f.unfinished == 0 || f.spentLocked() && f.unfinished == f.fresh
	switch {
	case over && !f.idleClosed:
		close(f.idle)
		f.idleClosed = true
	case !over && f.idleClosed:
		f.idle = make(chan struct{})
		f.idleClosed = false
	}
}

// rearm tells the first waiter, if any, to set its timer anew.
func (f *memFrontier) rearm() {
	f.armed = time.Time{}
	if len(f.waiters) > 0 {
		select {
		case f.waiters[0].wake <- struct{}{}:
		default:
		}
	}
}

// take returns a task that may be started now, if any host has one.
func (f *memFrontier) take(now time.Time) (task, bool) {
	for f.readyHead < len(f.ready) {
		h := f.ready[f.readyHead]
		f.ready[f.readyHead] = nil
		f.readyHead++
		h.inReady = false
		t, ok := f.takeFrom(h, now)
		// Back at the end of the ring, or to the heap, or to neither:
		// hosts take turns.
		f.settle(h, now)
		if ok {
			return t, true
		}
	}
	f.ready = f.ready[:0]
	f.readyHead = 0
	return task{}, false
}

// takeFrom takes the task h would start now, if any.
func (f *memFrontier) takeFrom(h *host, now time.Time) (task, bool) {
	wake, ok := f.wakeTime(h)
	if !ok || wake.After(now) {
		return task{}, false
	}
	if h.gate == gateRobots {
		h.gate = gateFetching
		f.started(h, now)
		return task{url: h.key + "/robots.txt", kind: kindRobots, tries: h.robotsTries}, true
	}
	// A retry whose time has come goes first.
	var t task
	switch {
	case len(h.later) > 0 && !h.later[0].at.After(now):
		t = heap.Pop(&h.later).(task)
	case h.head < len(h.tasks) && !f.spentLocked():
		t = h.tasks[h.head]
		h.tasks[h.head] = task{}
		h.head++
		if h.head == len(h.tasks) {
			if cap(h.tasks) > maxKeptTasks {
				h.tasks = nil // a drained large queue gives its memory back
			}
			h.tasks, h.head = h.tasks[:0], 0
		}
	default:
		return task{}, false
	}
	f.pending--
	if t.tries == 0 {
		f.fresh--
	}
	if h.allow != nil {
		if err := h.allow(t.url[len(h.key):]); err != nil {
			t.err = err
			return t, true
		}
	}
	if t.tries == 0 {
		f.pages++
	}
	f.started(h, now)
	return t, true
}

// started counts a request to h starting now.
func (f *memFrontier) started(h *host, now time.Time) {
	h.inflight++
	if h.delay > 0 {
		h.next = now.Add(jitter(h.delay))
	}
}

// jitter returns a pause drawn uniformly from [d/2, 3d/2].
func jitter(d time.Duration) time.Duration {
	return d/2 + rand.N(d+1)
}

// wakeTime returns when h may start its next request, and false when it
// has nothing it may start (no work, all its slots in use, or its
// robots.txt in flight) whatever the time.
func (f *memFrontier) wakeTime(h *host) (time.Time, bool) {
	if h.gate == gateFetching || h.inflight >= f.hostWorkers {
		return time.Time{}, false
	}
	queued := h.head < len(h.tasks)
	if h.gate == gateRobots {
		return h.next, !f.spentLocked() && (queued || len(h.later) > 0)
	}
	if queued && !f.spentLocked() {
		return h.next, true
	}
	if len(h.later) == 0 {
		return time.Time{}, false
	}
	return maxTime(h.next, h.later[0].at), true
}

// maxTime returns the later of two times.
func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// settle puts h where it belongs after a change: in the ring if it may
// start a request now, in the heap if later, else nowhere.
func (f *memFrontier) settle(h *host, now time.Time) {
	if h.inReady {
		return // take checks it again when its turn comes
	}
	wake, ok := f.wakeTime(h)
	switch {
	case !ok:
		if h.heapIdx >= 0 {
			heap.Remove(&f.timers, h.heapIdx)
		}
	case !wake.After(now):
		if h.heapIdx >= 0 {
			heap.Remove(&f.timers, h.heapIdx)
		}
		f.setReady(h)
	case h.heapIdx >= 0:
		h.wake = wake
		heap.Fix(&f.timers, h.heapIdx)
	default:
		h.wake = wake
		heap.Push(&f.timers, h)
	}
}

func (f *memFrontier) setReady(h *host) {
	h.inReady = true
	if f.readyHead >= 64 && f.readyHead*2 >= len(f.ready) {
		// Taken hosts are forgotten, so that a ring that is never empty
		// does not grow with every turn.
		n := copy(f.ready, f.ready[f.readyHead:])
		clear(f.ready[n:])
		f.ready, f.readyHead = f.ready[:n], 0
	}
	f.ready = append(f.ready, h)
}

// add queues t after the host's other tasks.
func (h *host) add(t task) {
	if h.head >= 64 && h.head*2 >= len(h.tasks) {
		// As for the ring: a queue that is never empty must not grow
		// with every task taken.
		n := copy(h.tasks, h.tasks[h.head:])
		clear(h.tasks[n:])
		h.tasks, h.head = h.tasks[:n], 0
	}
	h.tasks = append(h.tasks, t)
}

// maxKeptTasks is the largest queue a host keeps room for once drained.
const maxKeptTasks = 1 << 10

// retryHeap orders a host's retries by the time they may start.
type retryHeap []task

func (rh retryHeap) Len() int           { return len(rh) }
func (rh retryHeap) Less(i, j int) bool { return rh[i].at.Before(rh[j].at) }
func (rh retryHeap) Swap(i, j int)      { rh[i], rh[j] = rh[j], rh[i] }
func (rh *retryHeap) Push(x any)        { *rh = append(*rh, x.(task)) }
func (rh *retryHeap) Pop() any {
	old := *rh
	t := old[len(old)-1]
	old[len(old)-1] = task{}
	*rh = old[:len(old)-1]
	return t
}

// timerHeap orders hosts by the time they may next start a request.
type timerHeap []*host

func (th timerHeap) Len() int           { return len(th) }
func (th timerHeap) Less(i, j int) bool { return th[i].wake.Before(th[j].wake) }
func (th timerHeap) Swap(i, j int) {
	th[i], th[j] = th[j], th[i]
	th[i].heapIdx = i
	th[j].heapIdx = j
}
func (th *timerHeap) Push(x any) {
	h := x.(*host)
	h.heapIdx = len(*th)
	*th = append(*th, h)
}
func (th *timerHeap) Pop() any {
	old := *th
	h := old[len(old)-1]
	old[len(old)-1] = nil
	h.heapIdx = -1
	*th = old[:len(old)-1]
	return h
}
