package crawl

import (
	"container/heap"
	"container/list"
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/asyncrawl/crawl/internal/sched"
)

// MemoryFrontier is the Frontier that Run uses unless WithFrontier gives
// another: everything in memory, for one process. Hosts that may be sent a
// request now wait in a ring, served in turn; hosts waiting for a delay, a
// pause or a retry's time wait in a heap ordered by that time; hosts at
// their limit of leases out wait in neither until one ends, nor do hosts
// with only new requests while the page budget is spent, until an Unsent
// ack gives a page back (or Start a larger budget). So a worker never
// waits for a busy host while another host has work, and a URL waiting
// for its time never holds a worker. Taking the next URL costs
// the same with ten hosts as with ten thousand.
//
// Workers blocked in Take are served in FIFO order by direct hand-off, as
// Queue does; the first of them also keeps the earliest time in the heap
// (and the earliest lease expiry), so that no goroutine but the callers'
// is needed.
//
// Memory grows by about 30 to 50 bytes per URL seen while queued and 8 to
// 16 once taken: the seen set keeps a 64-bit fingerprint of each URL, not
// the URL (see seenSet for the chance that two URLs share one, about
// n²/2⁶⁵ among n), and a queued URL is kept encoded, without its host,
// front-coded against the URL queued before it on its host, its referrer
// shared with the requests around it; the Request is made again at Take.
// On Linux the large tables and queue chunks are mapped outside the Go
// heap, so that they do not raise the heap size at which the
// collector runs; they are given back at Close, or when the MemoryFrontier
// is collected.
//
// A MemoryFrontier keeps its state across Runs: a Run that was cancelled
// leaves its unfinished URLs queued, and a later Run given the same
// MemoryFrontier with WithFrontier goes on with them. It is safe for
// concurrent use.
type MemoryFrontier struct {
	mu       sync.Mutex
	policy   Policy
	closed   bool
	closedCh chan struct{}
	seen     seenSet
	mem      *offHeap // the seen set's tables, the queues' chunks
	hosts    map[string]*host
	sched    sched.Hosts[*host] // who may start a request now, and who later
	// parked are the hosts whose new requests only the page budget holds
	// back: a page an Unsent ack gives back to the budget brings them
	// back to the schedule.
	parked     list.List
	waiters    []*popper
	armed      time.Time // when the first waiter's timer fires; zero if none
	leases     map[string]*leaseRec
	expiries   expiryHeap // leases with a term, soonest expiry first
	seq        uint64     // the last lease ID
	pages      int        // requests but robots.txt taken for a first attempt, less those acked Unsent
	done       int        // requests but robots.txt acked
	unfinished int        // admitted and not acked
	fresh      int        // queued and never taken
	pending    int        // queued: fresh requests and retries
	idle       chan struct{}
	idleClosed bool
}

// entry is a Request in a host's queue.
type entry struct {
	Request
	at    time.Time // not taken before this
	taken bool      // taken before: not fresh, and counted in pages if it was
}

// leaseRec is a lease out, with the Lease its holder was given: one
// allocation for the two.
type leaseRec struct {
	lease Lease
	// req is the Request as it was leased: its holder may change the
	// Lease's fields (First) while the lease expires and is put back.
	req      Request
	h        *host
	taken    bool      // the entry was taken before this lease
	expires  time.Time // zero: no term
	idx      int       // in expiries, -1 when not there
	next     time.Time // the host's next start this lease set
	prevNext time.Time // and the one before it
}

// gateState is how far a host's robots.txt has got.
type gateState uint8

const (
	gateOpen     gateState = iota // robots.txt known, or not obeyed
	gateRobots                    // robots.txt to be fetched first
	gateFetching                  // robots.txt being fetched: nothing else goes
)

// host is the schedule of one host: its queue, its leases out and the
// earliest time the next one may start.
type host struct {
	key      string
	queue    reqQueue  // new requests, in order
	later    retryHeap // requests put back, soonest first
	inflight int
	next     time.Time     // no request starts before this
	delay    time.Duration // between request starts
	gate     gateState
	rules    *HostRules
	// paused is the latest time a Pause held the host back until, which
	// an Unsent ack's giving back of the delay does not undo.
	paused time.Time
	// opened means its robots.txt was acked, with rules or with none;
	// rulesAt is when the first URL went by them since, for
	// Policy.RobotsMaxAge (so that each fetch of it lets one go, whatever
	// the host's delay).
	opened  bool
	rulesAt time.Time
	// robotsTries counts the attempts at its robots.txt so far.
	robotsTries int
	parked      *list.Element // in MemoryFrontier.parked; nil when not
	sched.Slot
}

// crawlDelay returns the Crawl-delay of h's robots.txt, 0 if none.
func (h *host) crawlDelay() time.Duration {
	if h.rules == nil {
		return 0
	}
	return h.rules.Delay
}

// popper is a worker blocked in Take.
type popper struct {
	ch   chan *Lease   // receives the lease it is served
	wake chan struct{} // the first waiter's timer must be set anew
}

// NewMemoryFrontier returns an empty MemoryFrontier.
func NewMemoryFrontier() *MemoryFrontier {
	f := &MemoryFrontier{
		closedCh: make(chan struct{}),
		hosts:    make(map[string]*host),
		leases:   make(map[string]*leaseRec),
		idle:     make(chan struct{}),
		policy:   Policy{HostWorkers: DefaultHostWorkers},
	}
	close(f.idle)
	f.idleClosed = true
	f.mem = newOffHeap(f)
	f.seen = newSeenSet(f.mem)
	return f
}

// Start sets the policy of the Run about to begin. Hosts already known
// keep their place in the schedule; with Policy.Robots, each asks for its
// robots.txt again before its next URL, once in the Run, so that no Run
// goes by rules (or a robots.txt found unavailable) of an earlier one.
func (f *MemoryFrontier) Start(ctx context.Context, p Policy) error {
	if p.HostWorkers < 1 {
		return errors.New("crawl: frontier policy: HostWorkers must be at least 1")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return ErrFrontierClosed
	}
	f.policy = p
	now := time.Now()
	for _, h := range f.hosts {
		h.delay = p.HostDelay
		if h.rules != nil {
			h.delay = max(h.delay, h.rules.Delay)
		}
		if p.Robots && h.gate == gateOpen {
			h.gate = gateRobots
			if h.opened {
				h.robotsTries = 0 // a first try in this Run
			}
		}
		f.settle(h, now)
	}
	f.update(now)
	return nil
}

func (f *MemoryFrontier) Push(ctx context.Context, reqs ...Request) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return 0, ErrFrontierClosed
	}
	now := time.Now() // after the lock: a delay counts from the real dispatch
	n := f.admit(now, reqs)
	f.update(now)
	return n, nil
}

// admit queues the requests not seen before and returns how many there
// were. f.mu is held.
func (f *MemoryFrontier) admit(now time.Time, reqs []Request) int {
	added := 0
	var h *host
	for _, r := range reqs {
		if !f.seen.add(r.URL) {
			continue
		}
		if key := HostKey(r.URL); h == nil || h.key != key {
			h = f.host(key)
		}
		h.queue.push(f.mem, h.key, r)
		f.pending++
		f.fresh++
		f.unfinished++
		added++
		f.settle(h, now)
	}
	return added
}

// host returns the schedule of the host key, making it on first use.
func (f *MemoryFrontier) host(key string) *host {
	h := f.hosts[key]
	if h == nil {
		h = &host{key: key, delay: f.policy.HostDelay}
		if f.policy.Robots {
			h.gate = gateRobots
		}
		f.hosts[key] = h
	}
	return h
}

func (f *MemoryFrontier) Take(ctx context.Context) (*Lease, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return nil, ErrFrontierClosed
	}
	if len(f.waiters) == 0 {
		now := time.Now()
		f.expire(now)
		if l, ok := f.take(now); ok {
			f.mu.Unlock()
			return l, nil
		}
	}
	w := &popper{ch: make(chan *Lease, 1), wake: make(chan struct{}, 1)}
	f.waiters = append(f.waiters, w)
	var tm *time.Timer
	defer func() {
		if tm != nil {
			tm.Stop()
		}
	}()
	for {
		// The first waiter sleeps until the earliest time in the heap
		// (a delayed host becomes ready, a lease expires); the others
		// until served.
		var fire <-chan time.Time
		if f.waiters[0] == w {
			// No timer when nothing is timed: a time recorded from an
			// earlier round would keep update from waking us.
			f.armed = time.Time{}
			if at, ok := f.nextWake(); ok {
				f.armed = at
				d := time.Until(at)
				if tm == nil {
					tm = time.NewTimer(d)
				} else {
					tm.Reset(d)
				}
				fire = tm.C
			}
		}
		f.mu.Unlock()
		select {
		case l := <-w.ch:
			return l, nil
		case <-w.wake:
		case <-fire:
		case <-f.closedCh:
		case <-ctx.Done():
		}
		f.mu.Lock()
		select {
		case l := <-w.ch:
			f.mu.Unlock()
			return l, nil
		default:
		}
		if f.closed || ctx.Err() != nil {
			f.removeWaiter(w)
			f.mu.Unlock()
			if f.closedErr() {
				return nil, ErrFrontierClosed
			}
			return nil, ctx.Err()
		}
		f.update(time.Now())
		select {
		case l := <-w.ch:
			f.mu.Unlock()
			return l, nil
		default:
		}
	}
}

// closedErr reports whether the frontier is closed.
func (f *MemoryFrontier) closedErr() bool {
	select {
	case <-f.closedCh:
		return true
	default:
		return false
	}
}

// nextWake returns the earliest time something timed happens: a host in
// the heap may start, or a lease expires. f.mu is held.
func (f *MemoryFrontier) nextWake() (time.Time, bool) {
	at, ok := f.sched.Wake()
	if len(f.expiries) > 0 && (!ok || f.expiries[0].expires.Before(at)) {
		at, ok = f.expiries[0].expires, true
	}
	return at, ok
}

// removeWaiter removes w from the waiters if it is still there.
func (f *MemoryFrontier) removeWaiter(w *popper) {
	for i, x := range f.waiters {
		if x == w {
			f.waiters = append(f.waiters[:i], f.waiters[i+1:]...)
			if i == 0 {
				f.rearm()
			}
			return
		}
	}
}

// out returns the record of the lease l if it is out, nil if not: it
// ended, or was taken back and its ID given to no other. f.mu is held.
func (f *MemoryFrontier) out(l *Lease) *leaseRec {
	if l == nil {
		return nil
	}
	rec := f.leases[l.ID]
	if rec == nil || &rec.lease != l && rec.req.URL != l.URL {
		return nil
	}
	return rec
}

// end removes the lease l from the leases out, returning its record, or
// nil if it is not out. f.mu is held.
func (f *MemoryFrontier) end(l *Lease) *leaseRec {
	rec := f.out(l)
	if rec == nil {
		return nil
	}
	delete(f.leases, l.ID)
	if rec.idx >= 0 {
		heap.Remove(&f.expiries, rec.idx)
	}
	rec.h.inflight--
	return rec
}

func (f *MemoryFrontier) Ack(ctx context.Context, l *Lease, o Outcome) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return 0, ErrFrontierClosed
	}
	now := time.Now()
	rec := f.end(l)
	admitted := f.admit(now, o.Links)
	if o.Result != nil {
		o.Result.NumNewURLs = admitted
	}
	if rec == nil {
		f.update(now)
		return admitted, ErrLeaseLost
	}
	h := rec.h
	if l.Kind == RobotsRequest {
		h.gate = gateOpen
		h.rules, h.opened, h.rulesAt = o.Rules, true, time.Time{}
		if o.Rules != nil && o.Rules.Delay > h.delay {
			h.delay = o.Rules.Delay
			if n := now.Add(sched.Pause(h.delay, o.Rules.Delay)); n.After(h.next) {
				h.next = n
			}
		}
	} else {
		f.unfinished--
		f.done++
		if o.Unsent {
			if !rec.taken {
				f.pages--
				f.unpark(now)
			}
			if h.next.Equal(rec.next) {
				h.next = rec.prevNext
				if h.paused.After(h.next) {
					h.next = h.paused
				}
			}
		}
	}
	f.settle(h, now)
	f.update(now)
	return admitted, nil
}

func (f *MemoryFrontier) Retry(ctx context.Context, l *Lease, at time.Time) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return ErrFrontierClosed
	}
	now := time.Now()
	rec := f.end(l)
	if rec == nil {
		return ErrLeaseLost
	}
	f.putBack(rec, l.Request, at, now)
	f.update(now)
	return nil
}

// putBack queues a leased request again, to be taken at or after at.
// f.mu is held and the lease has ended.
func (f *MemoryFrontier) putBack(rec *leaseRec, r Request, at, now time.Time) {
	h := rec.h
	if r.Kind == RobotsRequest {
		h.gate = gateRobots
		h.robotsTries = r.Tries
		if at.After(h.next) {
			h.next = at
		}
	} else {
		heap.Push(&h.later, entry{Request: r, at: at, taken: true})
		f.pending++
	}
	f.settle(h, now)
}

func (f *MemoryFrontier) Extend(ctx context.Context, l *Lease) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return ErrFrontierClosed
	}
	rec := f.out(l)
	if rec == nil {
		return ErrLeaseLost
	}
	if rec.idx >= 0 {
		rec.expires = time.Now().Add(f.policy.LeaseTerm)
		heap.Fix(&f.expiries, rec.idx)
	}
	return nil
}

// expire takes back the leases whose term is over. f.mu is held.
func (f *MemoryFrontier) expire(now time.Time) {
	for len(f.expiries) > 0 && !f.expiries[0].expires.After(now) {
		rec := heap.Pop(&f.expiries).(*leaseRec)
		delete(f.leases, rec.lease.ID)
		rec.h.inflight--
		f.putBack(rec, rec.req, time.Time{}, now)
	}
}

func (f *MemoryFrontier) Pause(ctx context.Context, hostKey string, until time.Time) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return ErrFrontierClosed
	}
	now := time.Now()
	h := f.host(hostKey)
	if until.After(h.next) {
		h.next = until
	}
	if until.After(h.paused) {
		h.paused = until
	}
	f.settle(h, now)
	f.update(now)
	return nil
}

func (f *MemoryFrontier) Join(ctx context.Context) error {
	f.mu.Lock()
	idle, closed := f.idle, f.closed
	f.mu.Unlock()
	if closed {
		return ErrFrontierClosed
	}
	select {
	case <-idle:
		return nil
	case <-f.closedCh:
		return ErrFrontierClosed
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (f *MemoryFrontier) Counts(ctx context.Context) (Counts, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return Counts{}, ErrFrontierClosed
	}
	return Counts{Queued: f.pending, Leased: len(f.leases), Done: f.done, Pages: f.pages}, nil
}

// Close ends the frontier: blocked Takes return ErrFrontierClosed, and so
// does every later call.
func (f *MemoryFrontier) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return ErrFrontierClosed
	}
	f.closed = true
	close(f.closedCh)
	// No method reads the queues or the seen set once closed.
	f.mem.release()
	return nil
}

// spent reports whether the page budget is spent. f.mu is held.
func (f *MemoryFrontier) spent() bool {
	return f.policy.MaxPages > 0 && f.pages >= f.policy.MaxPages
}

// update brings the schedule up to now after a change: it takes back the
// leases whose term is over, moves hosts whose time has come to the ring,
// serves the waiters what it can, wakes the first waiter if its timer is
// wrong, and opens Join when the crawl is over. f.mu is held.
func (f *MemoryFrontier) update(now time.Time) {
	f.expire(now)
	f.sched.Due(now)
	served := false
	for len(f.waiters) > 0 {
		l, ok := f.take(now)
		if !ok {
			break
		}
		w := f.waiters[0]
		f.waiters[0] = nil
		f.waiters = f.waiters[1:]
		w.ch <- l
		served = true
	}
	if at, ok := f.nextWake(); served || ok && (f.armed.IsZero() || at.Before(f.armed)) {
		f.rearm()
	}
	over := f.unfinished == 0 || f.spent() && f.unfinished == f.fresh
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
func (f *MemoryFrontier) rearm() {
	f.armed = time.Time{}
	if len(f.waiters) > 0 {
		select {
		case f.waiters[0].wake <- struct{}{}:
		default:
		}
	}
}

// take leases a request that may be started now, if any host has one.
func (f *MemoryFrontier) take(now time.Time) (*Lease, bool) {
	for {
		h, ok := f.sched.Next()
		if !ok {
			return nil, false
		}
		l, ok := f.takeFrom(h, now)
		// Back among the active hosts or at the end of the ring (hosts
		// take turns in runs: internal/sched), to the heap, or to neither.
		f.settle(h, now)
		if ok {
			return l, true
		}
	}
}

// takeFrom leases the request h would start now, if any.
func (f *MemoryFrontier) takeFrom(h *host, now time.Time) (*Lease, bool) {
	if h.gate == gateOpen && f.policy.Robots && h.opened && sched.RulesDue(f.policy.RobotsMaxAge, h.rulesAt, now) {
		// Its rules are too old: its robots.txt goes first again.
		h.gate = gateRobots
		h.robotsTries = 0
	}
	wake, ok, _ := f.wakeTime(h)
	if !ok || wake.After(now) {
		return nil, false
	}
	if h.gate == gateRobots {
		h.gate = gateFetching
		l := Lease{Request: Request{URL: h.key + "/robots.txt", Kind: RobotsRequest, Tries: h.robotsTries}}
		return f.lease(h, l, true, now), true
	}
	// A retry whose time has come goes first.
	var e entry
	switch {
	case len(h.later) > 0 && !h.later[0].at.After(now):
		e = heap.Pop(&h.later).(entry)
		if len(h.later) == 0 && cap(h.later) > maxKeptTasks {
			h.later = nil
		}
	case h.queue.len() > 0 && !f.spent():
		e = entry{Request: h.queue.pop(f.mem, h.key)}
	default:
		return nil, false
	}
	f.pending--
	if !e.taken {
		f.fresh--
		f.pages++
	}
	if h.rulesAt.IsZero() {
		h.rulesAt = now
	}
	l := Lease{Request: e.Request, Rules: h.rules}
	return f.lease(h, l, e.taken, now), true
}

// lease records l as out, starting a request to h now, and returns the
// record's Lease, the holder's.
func (f *MemoryFrontier) lease(h *host, l Lease, taken bool, now time.Time) *Lease {
	f.seq++
	l.ID = strconv.FormatUint(f.seq, 10)
	rec := &leaseRec{lease: l, req: l.Request, h: h, taken: taken, idx: -1, prevNext: h.next}
	h.inflight++
	if h.delay > 0 {
		h.next = now.Add(sched.Pause(h.delay, h.crawlDelay()))
	}
	rec.next = h.next
	if f.policy.LeaseTerm > 0 {
		rec.expires = now.Add(f.policy.LeaseTerm)
		heap.Push(&f.expiries, rec)
	}
	f.leases[l.ID] = rec
	return &rec.lease
}

// wakeTime returns when h may start its next request, and false when it
// has nothing it may start whatever the time, as sched.Want.Wake decides.
func (f *MemoryFrontier) wakeTime(h *host) (wake time.Time, ok, held bool) {
	w := sched.Want{
		Next:    h.next,
		Blocked: h.gate == gateFetching || h.inflight >= max(f.policy.HostWorkers, 1),
		Robots:  h.gate == gateRobots,
		Queued:  h.queue.len() > 0,
		Spent:   f.spent(),
	}
	if len(h.later) > 0 {
		w.Retry, w.HasRetry = h.later[0].at, true
	}
	return w.Wake()
}

// unpark brings the hosts the page budget held back back to the schedule
// once it is no longer spent (an Unsent ack gave a page back), so that
// every host that may start a request is in it. Those it cannot serve
// before the budget is spent again are parked again as the schedule
// meets them. f.mu is held.
func (f *MemoryFrontier) unpark(now time.Time) {
	if f.spent() {
		return
	}
	for e := f.parked.Front(); e != nil; e = f.parked.Front() {
		f.settle(e.Value.(*host), now) // which takes it off the list
	}
}

// settle puts h where it belongs after a change: in the ring if it may
// start a request now, in the heap if later, else nowhere.
func (f *MemoryFrontier) settle(h *host, now time.Time) {
	wake, ok, held := f.wakeTime(h)
	switch {
	case held && h.parked == nil:
		h.parked = f.parked.PushBack(h)
	case !held && h.parked != nil:
		f.parked.Remove(h.parked)
		h.parked = nil
	}
	f.sched.Settle(h, wake, ok, now)
}

// maxKeptTasks is the largest queue a host keeps room for once drained.
const maxKeptTasks = 64

// retryHeap orders a host's retries by the time they may start.
type retryHeap []entry

func (rh retryHeap) Len() int           { return len(rh) }
func (rh retryHeap) Less(i, j int) bool { return rh[i].at.Before(rh[j].at) }
func (rh retryHeap) Swap(i, j int)      { rh[i], rh[j] = rh[j], rh[i] }
func (rh *retryHeap) Push(x any)        { *rh = append(*rh, x.(entry)) }
func (rh *retryHeap) Pop() any {
	old := *rh
	e := old[len(old)-1]
	old[len(old)-1] = entry{}
	*rh = old[:len(old)-1]
	return e
}

// expiryHeap orders leases by the time their term ends.
type expiryHeap []*leaseRec

func (eh expiryHeap) Len() int           { return len(eh) }
func (eh expiryHeap) Less(i, j int) bool { return eh[i].expires.Before(eh[j].expires) }
func (eh expiryHeap) Swap(i, j int) {
	eh[i], eh[j] = eh[j], eh[i]
	eh[i].idx = i
	eh[j].idx = j
}
func (eh *expiryHeap) Push(x any) {
	r := x.(*leaseRec)
	r.idx = len(*eh)
	*eh = append(*eh, r)
}
func (eh *expiryHeap) Pop() any {
	old := *eh
	r := old[len(old)-1]
	old[len(old)-1] = nil
	r.idx = -1
	*eh = old[:len(old)-1]
	return r
}
