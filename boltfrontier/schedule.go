package boltfrontier

import (
	"bytes"
	"container/heap"
	"container/list"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/asyncrawl/crawl"
	"github.com/asyncrawl/crawl/internal/sched"
	bolt "go.etcd.io/bbolt"
)

// The schedule is crawl.MemoryFrontier's: hosts that may be sent a request
// now wait in a ring, hosts waiting for a time in a heap, hosts at their
// limit of leases in neither; waiters in Take are served in FIFO order by
// direct hand-off. What differs is where a host's queue is: on disk, with
// at most Options.Prefetch of its next Requests in memory.

// entry is a Request queued or leased.
type entry struct {
	crawl.Request
	seq     uint64    // its number in the queue, for its key
	at      time.Time // not taken before this
	taken   bool      // taken before: not fresh, and counted in pages if it was
	retried bool      // its record is in the retry bucket, and counted in the stored pages
}

// leaseRec is a lease out.
type leaseRec struct {
	lease *crawl.Lease // the holder's: read only by the holder once handed out
	// id and req are the lease's ID and Request as leased, which an
	// expiry hands out again: the holder may be editing its Lease.
	id       string
	req      crawl.Request
	h        *host
	e        entry // the Request as it was queued; unused for robots.txt
	taken    bool  // the entry was taken before this lease
	expires  time.Time
	idx      int
	next     time.Time
	prevNext time.Time
}

type gateState uint8

const (
	gateOpen     gateState = iota // robots.txt known, or not obeyed
	gateRobots                    // robots.txt to be fetched first
	gateFetching                  // robots.txt being fetched: nothing else goes
)

// host is the schedule of one host. Its fresh Requests are buf, then
// spill more on disk only, all with a seq above lastSeq.
type host struct {
	key      string
	buf      []entry // the next fresh Requests, in order
	spill    int     // fresh Requests on disk and not in buf
	lastSeq  uint64  // the seq of the last Request put in buf
	later    retryHeap
	inflight int
	next     time.Time
	delay    time.Duration
	gate     gateState
	rules    *crawl.HostRules
	// paused is the latest time a Pause held the host back until, which
	// an Unsent ack's giving back of the delay does not undo.
	paused time.Time
	// opened means its robots.txt was acked, with rules or with none;
	// rulesAt is when the first URL went by them since, in this process,
	// for Policy.RobotsMaxAge (every Run asks for the robots.txt again
	// first).
	opened  bool
	rulesAt time.Time
	// robotsTries counts the attempts at its robots.txt so far.
	robotsTries int
	parked      *list.Element // in Frontier.parked; nil when not
	sched.Slot
}

// crawlDelay returns the Crawl-delay of h's robots.txt, 0 if none.
func (h *host) crawlDelay() time.Duration {
	if h.rules == nil {
		return 0
	}
	return h.rules.Delay
}

func (h *host) fresh() int { return len(h.buf) + h.spill }

type popper struct {
	ch   chan *crawl.Lease
	wake chan struct{}
}

// Start sets the policy of the Run about to begin. The first Start on a
// new state file records p.Roots and p.Scope; a later one under other
// Roots or Scope returns an error that says what differs, and changes
// nothing. Politeness and budget are taken from p each time. It is safe for
// concurrent use.
func (f *Frontier) Start(ctx context.Context, p crawl.Policy) error {
	if p.HostWorkers < 1 {
		return errors.New("boltfrontier: policy: HostWorkers must be at least 1")
	}
	f.mu.Lock()
	if err := f.usable(); err != nil {
		f.mu.Unlock()
		return err
	}
	var u unit
	if f.identity {
		if !slices.Equal(f.roots, p.Roots) {
			f.mu.Unlock()
			return fmt.Errorf("boltfrontier: %s: the crawl it holds was started with roots %q, not %q", f.path, f.roots, p.Roots)
		}
		if f.scope != p.Scope {
			f.mu.Unlock()
			return fmt.Errorf("boltfrontier: %s: the crawl it holds was started with scope %q, not %q", f.path, f.scope, p.Scope)
		}
	} else {
		f.identity = true
		f.roots, f.scope = append([]string{}, p.Roots...), p.Scope
		u.ops = append(u.ops,
			op{kind: opMeta, name: metaRoots, val: joinRoots(p.Roots)},
			op{kind: opMeta, name: metaScope, val: []byte(p.Scope)})
	}
	f.policy = p
	now := time.Now()
	for _, h := range f.hosts {
		h.delay = p.HostDelay
		if h.rules != nil {
			h.delay = max(h.delay, h.rules.Delay)
		}
		// Each Run asks for every host's robots.txt again, once, before
		// its next URL: no Run goes by rules (or a robots.txt found
		// unavailable) of an earlier one.
		if p.Robots && h.gate == gateOpen {
			h.gate = gateRobots
			if h.opened {
				h.robotsTries = 0 // a first try in this Run
			}
		}
		f.settle(h, now)
	}
	gen, _ := f.w.submit(u)
	f.update(now)
	f.mu.Unlock()
	return f.waitCommit(ctx, gen)
}

// joinRoots is the stored form of Policy.Roots: JSON, never empty, so
// that a crawl with no roots is told from a file never started.
func joinRoots(roots []string) []byte {
	b, _ := json.Marshal(roots)
	return b
}

func splitRoots(b []byte) ([]string, error) {
	var roots []string
	err := json.Unmarshal(b, &roots)
	return roots, err
}

// usable returns the error every call returns once the Frontier is closed
// or its file cannot be written. f.mu is held.
func (f *Frontier) usable() error {
	if f.closed {
		return crawl.ErrFrontierClosed
	}
	return f.w.failed()
}

// waitCommit waits for gen to be committed, or for ctx.
func (f *Frontier) waitCommit(ctx context.Context, gen uint64) error {
	if gen == 0 {
		return nil
	}
	err := f.w.wait(ctx.Done(), gen)
	if errors.Is(err, errWaitAbandoned) {
		// The change is made; it is committed later.
		return ctx.Err()
	}
	return err
}

// Push admits each Request whose URL was never admitted before and
// returns how many were new. It returns once they are committed, so that
// a URL pushed is never lost to a crash. If it cannot read a host's
// record from the file it returns that error and admits none of them. It
// is safe for concurrent use.
func (f *Frontier) Push(ctx context.Context, reqs ...crawl.Request) (int, error) {
	f.mu.Lock()
	if err := f.usable(); err != nil {
		f.mu.Unlock()
		return 0, err
	}
	now := time.Now()
	var u unit
	n, err := f.admit(now, reqs, &u)
	if err != nil {
		f.mu.Unlock()
		return 0, err
	}
	gen := f.submit(u)
	f.update(now)
	f.mu.Unlock()
	return n, f.waitCommit(ctx, gen)
}

// submit hands u to the writer. f.mu is held.
func (f *Frontier) submit(u unit) uint64 {
	if len(u.ops) == 0 {
		return 0
	}
	gen, behind := f.w.submit(u)
	if behind && f.behind < gen {
		f.behind = gen
	}
	return gen
}

// admit queues the Requests not seen before, adding their ops to u, and
// returns how many there were. It reads first what it needs of the file,
// so that when it returns an error (a damaged host record) it has changed
// nothing. f.mu is held.
func (f *Frontier) admit(now time.Time, reqs []crawl.Request, u *unit) (int, error) {
	if len(reqs) == 0 {
		return 0, nil
	}
	// The hosts not in memory of the URLs not seen, read from the file.
	var read map[string]*host
	var tx *bolt.Tx
	defer func() {
		if tx != nil {
			tx.Rollback()
		}
	}()
	for i := range reqs {
		key := crawl.HostKey(reqs[i].URL)
		if f.hosts[key] != nil || read[key] != nil || f.seen.Has(f.place(fingerprint(reqs[i].URL))) {
			continue
		}
		var err error
		if tx == nil {
			if tx, err = f.db.Begin(false); err != nil {
				return 0, fmt.Errorf("boltfrontier: read %s: %w", f.path, err)
			}
			read = make(map[string]*host)
		}
		if read[key], err = f.readHost(key, tx); err != nil {
			return 0, err
		}
	}
	// The seen set holds the URLs admitted, committed or not: those not
	// committed are lost to a crash with their queue entries, and the set
	// is read again from the file's log on Open.
	added := 0
	var h *host
	for i := range reqs {
		r := &reqs[i]
		fp := fingerprint(r.URL)
		if !f.seen.Add(f.place(fp)) {
			continue
		}
		key := crawl.HostKey(r.URL)
		if h == nil || h.key != key {
			h = f.hosts[key]
		}
		if h == nil {
			h = read[key]
			f.hosts[key] = h
		}
		f.seq++
		e := entry{Request: *r, seq: f.seq}
		if h.spill == 0 && len(h.buf) < f.opts.Prefetch {
			h.buf = append(h.buf, e)
			h.lastSeq = e.seq
		} else {
			h.spill++
		}
		u.ops = append(u.ops, op{kind: opAdmit, host: key, seq: e.seq, req: *r, fp: fp})
		f.pending++
		f.fresh++
		f.unfinished++
		added++
		f.settle(h, now)
	}
	return added, nil
}

// readHost makes the schedule of a host not in memory, with what the
// file says of it (its rules, from an earlier run), without adding it to
// f.hosts. f.mu is held.
func (f *Frontier) readHost(key string, tx *bolt.Tx) (*host, error) {
	h := &host{key: key, delay: f.policy.HostDelay}
	b, err := get(tx.Bucket(bucketHosts), bucketHosts, []byte(key))
	if err != nil {
		return nil, fmt.Errorf("boltfrontier: %s: %w", f.path, err)
	}
	if b != nil {
		rec, err := decodeHost(b)
		if err != nil {
			return nil, fmt.Errorf("boltfrontier: %s: host %s: %w", f.path, key, err)
		}
		h.rules, h.robotsTries, h.opened = rec.rules, rec.robotsTries, rec.opened
		if h.rules != nil {
			h.delay = max(h.delay, h.rules.Delay)
		}
	}
	// A host read now was not in memory at the Run's Start: its rules,
	// if any, are an earlier Run's, asked for again (see Start).
	if f.policy.Robots {
		h.gate = gateRobots
		if h.opened {
			h.robotsTries = 0 // a first try in this Run
		}
	}
	return h, nil
}

// host returns the schedule of the host key, making it on first use.
// f.mu is held.
func (f *Frontier) host(key string) (*host, error) {
	if h := f.hosts[key]; h != nil {
		return h, nil
	}
	var h *host
	err := f.db.View(func(tx *bolt.Tx) error {
		var err error
		h, err = f.readHost(key, tx)
		return err
	})
	if err != nil {
		return nil, err
	}
	f.hosts[key] = h
	return h, nil
}

// refill reads the next fresh Requests of h from the file into its empty
// buffer. f.mu is held.
func (f *Frontier) refill(h *host) error {
	for attempt := 0; ; attempt++ {
		committed := f.w.committed.Load()
		err := f.db.View(func(tx *bolt.Tx) error {
			c := tx.Bucket(bucketQueue).Cursor()
			prefix := queueKey(h.key, 0)[:len(h.key)+1]
			for k, v := c.Seek(queueKey(h.key, h.lastSeq+1)); k != nil && bytes.HasPrefix(k, prefix) && len(h.buf) < f.opts.Prefetch; k, v = c.Next() {
				_, seq, ok := splitQueueKey(k)
				v, err := unseal(bucketQueue, k, v)
				if err != nil {
					return fmt.Errorf("boltfrontier: %s: %w", f.path, err)
				}
				r, _, err := decodeRequest(v)
				if !ok || err != nil {
					return fmt.Errorf("boltfrontier: %s: queue record %q: %w", f.path, k, errRecord)
				}
				h.buf = append(h.buf, entry{Request: r, seq: seq})
				h.lastSeq = seq
			}
			return nil
		})
		if err != nil {
			return err
		}
		if len(h.buf) > 0 {
			h.spill -= min(len(h.buf), h.spill)
			return nil
		}
		if attempt > 0 || committed >= f.w.gen() {
			// Not on file although counted: the file and memory
			// disagree; the Requests are not there to be taken.
			f.fresh -= h.spill
			f.pending -= h.spill
			f.unfinished -= h.spill
			h.spill = 0
			return fmt.Errorf("boltfrontier: %s: host %s: queued Requests missing", f.path, h.key)
		}
		// The host's next Requests are not committed yet: commit them
		// (the writer never needs f.mu, and no transaction is open).
		if err := f.w.wait(nil, f.w.gen()); err != nil {
			return err
		}
	}
}

// Take leases a Request that may be fetched now, blocking until there is
// one, ctx is done or the Frontier is closed. While the budget of
// Policy.MaxPages is spent, only retries and Requests taken back from
// expired leases are handed out, with the robots.txt of a host that has
// such a Request and no rules yet. It writes nothing to the file. It is
// safe for concurrent use.
func (f *Frontier) Take(ctx context.Context) (*crawl.Lease, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f.mu.Lock()
	if err := f.usable(); err != nil {
		f.mu.Unlock()
		return nil, err
	}
	if len(f.waiters) == 0 {
		now := time.Now()
		f.expire(now)
		if l, ok := f.take(now); ok {
			f.mu.Unlock()
			return l, nil
		}
	}
	w := &popper{ch: make(chan *crawl.Lease, 1), wake: make(chan struct{}, 1)}
	f.waiters = append(f.waiters, w)
	var tm *time.Timer
	defer func() {
		if tm != nil {
			tm.Stop()
		}
	}()
	for {
		var fire <-chan time.Time
		if f.waiters[0] == w {
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
		case <-f.w.broken:
		case <-ctx.Done():
		}
		f.mu.Lock()
		select {
		case l := <-w.ch:
			f.mu.Unlock()
			return l, nil
		default:
		}
		if err := f.usable(); err != nil || ctx.Err() != nil {
			f.removeWaiter(w)
			f.mu.Unlock()
			if err != nil {
				return nil, err
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

func (f *Frontier) nextWake() (time.Time, bool) {
	at, ok := f.sched.Wake()
	if len(f.expiries) > 0 && (!ok || f.expiries[0].expires.Before(at)) {
		at, ok = f.expiries[0].expires, true
	}
	return at, ok
}

func (f *Frontier) removeWaiter(w *popper) {
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

// end removes the lease l from the leases out, returning its record, or
// nil if it is not out. f.mu is held.
func (f *Frontier) end(l *crawl.Lease) *leaseRec {
	if l == nil {
		return nil
	}
	rec := f.leases[l.ID]
	if rec == nil || rec.lease != l && rec.req.URL != l.URL {
		return nil
	}
	delete(f.leases, l.ID)
	if rec.idx >= 0 {
		heap.Remove(&f.expiries, rec.idx)
	}
	rec.h.inflight--
	return rec
}

// Ack ends a lease with o: o.Links are admitted, the Request is finished
// and o.Result stored, all in one transaction. It returns before the
// commit (unless Options.SyncAck), with the Frontier's state already
// changed; see the package doc for what a crash costs. If it cannot read
// a host's record from the file it returns that error and changes
// nothing: the lease is still out, to be acked or retried again. It is
// safe for concurrent use.
func (f *Frontier) Ack(ctx context.Context, l *crawl.Lease, o crawl.Outcome) (int, error) {
	f.mu.Lock()
	if err := f.usable(); err != nil {
		f.mu.Unlock()
		return 0, err
	}
	now := time.Now()
	var u unit
	// admit changes nothing when it fails: the lease is then still out.
	admitted, err := f.admit(now, o.Links, &u)
	if err != nil {
		f.mu.Unlock()
		return 0, err
	}
	if o.Result != nil {
		o.Result.NumNewURLs = admitted
	}
	rec := f.end(l)
	if rec == nil {
		gen := f.submit(u)
		f.update(now)
		f.mu.Unlock()
		f.waitBehind(ctx, gen)
		return admitted, crawl.ErrLeaseLost
	}
	h := rec.h
	if l.Kind == crawl.RobotsRequest {
		h.gate = gateOpen
		h.rules, h.opened, h.rulesAt = o.Rules, true, time.Time{}
		if o.Rules != nil && o.Rules.Delay > h.delay {
			h.delay = o.Rules.Delay
			if n := now.Add(sched.Pause(h.delay, o.Rules.Delay)); n.After(h.next) {
				h.next = n
			}
		}
		u.ops = append(u.ops, op{kind: opHost, host: h.key, val: encodeHost(hostRecord{rules: o.Rules, robotsTries: h.robotsTries, opened: true})})
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
		a := op{kind: opAck, host: h.key, seq: rec.e.seq, inRetry: rec.e.retried,
			page: !rec.e.retried && (!o.Unsent || rec.taken)}
		if o.Result != nil {
			res := *o.Result
			a.result = &res
		}
		u.ops = append(u.ops, a)
	}
	// The unit goes to the writer before update may read the host's
	// queue back from the file.
	gen := f.submit(u)
	f.settle(h, now)
	f.update(now)
	f.mu.Unlock()
	if f.opts.SyncAck {
		return admitted, f.waitCommit(ctx, gen)
	}
	f.waitBehind(ctx, gen)
	return admitted, nil
}

// waitBehind waits for gen to be committed if the writer was behind when
// it was submitted: what is not committed is bounded.
func (f *Frontier) waitBehind(ctx context.Context, gen uint64) {
	f.mu.Lock()
	behind := gen != 0 && f.behind >= gen
	f.mu.Unlock()
	if behind {
		f.w.wait(ctx.Done(), gen)
	}
}

// Retry ends a lease by putting its Request back, as l.Request is now, to
// be taken no earlier than at. It returns before the commit. It is safe
// for concurrent use.
func (f *Frontier) Retry(ctx context.Context, l *crawl.Lease, at time.Time) error {
	f.mu.Lock()
	if err := f.usable(); err != nil {
		f.mu.Unlock()
		return err
	}
	now := time.Now()
	rec := f.end(l)
	if rec == nil {
		f.mu.Unlock()
		return crawl.ErrLeaseLost
	}
	var u unit
	h := rec.h
	if l.Kind == crawl.RobotsRequest {
		u.ops = append(u.ops, op{kind: opHost, host: h.key, val: encodeHost(hostRecord{rules: h.rules, robotsTries: l.Tries, opened: h.opened})})
	} else {
		u.ops = append(u.ops, op{kind: opRetry, host: h.key, seq: rec.e.seq, inRetry: rec.e.retried,
			page: !rec.e.retried, req: l.Request, at: at})
		rec.e.retried = true
	}
	gen := f.submit(u)
	f.putBack(rec, l.Request, at, now)
	f.update(now)
	f.mu.Unlock()
	f.waitBehind(ctx, gen)
	return nil
}

// putBack queues a leased request again, to be taken at or after at.
// f.mu is held and the lease has ended.
func (f *Frontier) putBack(rec *leaseRec, r crawl.Request, at, now time.Time) {
	h := rec.h
	if r.Kind == crawl.RobotsRequest {
		h.gate = gateRobots
		h.robotsTries = r.Tries
		if at.After(h.next) {
			h.next = at
		}
	} else {
		e := rec.e
		e.Request, e.at, e.taken = r, at, true
		heap.Push(&h.later, e)
		f.pending++
	}
	f.settle(h, now)
}

// Extend renews a lease for another Policy.LeaseTerm; it returns
// crawl.ErrLeaseLost when the lease was taken back. Leases live in memory
// only. It is safe for concurrent use.
func (f *Frontier) Extend(ctx context.Context, l *crawl.Lease) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.usable(); err != nil {
		return err
	}
	rec := f.leases[l.ID]
	if rec == nil || rec.lease != l && rec.req.URL != l.URL {
		return crawl.ErrLeaseLost
	}
	if rec.idx >= 0 {
		rec.expires = time.Now().Add(f.policy.LeaseTerm)
		heap.Fix(&f.expiries, rec.idx)
	}
	return nil
}

// expire takes back the leases whose term is over, to be handed out
// again as they were leased; their records stay where they are on file.
// f.mu is held.
func (f *Frontier) expire(now time.Time) {
	for len(f.expiries) > 0 && !f.expiries[0].expires.After(now) {
		rec := heap.Pop(&f.expiries).(*leaseRec)
		delete(f.leases, rec.id)
		rec.h.inflight--
		f.putBack(rec, rec.req, time.Time{}, now)
	}
}

// Pause holds back every request to the host until the given time. A
// pause lives in memory only: a reopened Frontier has none. It is safe for
// concurrent use.
func (f *Frontier) Pause(ctx context.Context, hostKey string, until time.Time) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.usable(); err != nil {
		return err
	}
	now := time.Now()
	h, err := f.host(hostKey)
	if err != nil {
		return err
	}
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

// Join blocks until nothing is pending, or the budget of
// Policy.MaxPages (Requests of every kind but RobotsRequest) is spent and
// no lease but a RobotsRequest's is out and no Request waits to be
// retried, or ctx is done. It is safe for concurrent use.
func (f *Frontier) Join(ctx context.Context) error {
	f.mu.Lock()
	idle, err := f.idle, f.usable()
	f.mu.Unlock()
	if err != nil {
		return err
	}
	select {
	case <-idle:
		return nil
	case <-f.closedCh:
		return crawl.ErrFrontierClosed
	case <-f.w.broken:
		return f.w.failed()
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Counts returns a snapshot of the counters, Done and Pages over the
// whole crawl. It is safe for concurrent use.
func (f *Frontier) Counts(ctx context.Context) (crawl.Counts, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.usable(); err != nil {
		return crawl.Counts{}, err
	}
	return crawl.Counts{Queued: f.pending, Leased: len(f.leases), Done: f.done, Pages: f.pages}, nil
}

func (f *Frontier) spent() bool {
	return f.policy.MaxPages > 0 && f.pages >= f.policy.MaxPages
}

// update brings the schedule up to now after a change. f.mu is held.
func (f *Frontier) update(now time.Time) {
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

func (f *Frontier) rearm() {
	f.armed = time.Time{}
	if len(f.waiters) > 0 {
		select {
		case f.waiters[0].wake <- struct{}{}:
		default:
		}
	}
}

// take leases a request that may be started now, if any host has one.
func (f *Frontier) take(now time.Time) (*crawl.Lease, bool) {
	for {
		h, ok := f.sched.Next()
		if !ok {
			return nil, false
		}
		l, ok := f.takeFrom(h, now)
		f.settle(h, now)
		if ok {
			return l, true
		}
		if f.w.failed() != nil {
			return nil, false
		}
	}
}

// takeFrom leases the request h would start now, if any.
func (f *Frontier) takeFrom(h *host, now time.Time) (*crawl.Lease, bool) {
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
		l := &crawl.Lease{Request: crawl.Request{URL: h.key + "/robots.txt", Kind: crawl.RobotsRequest, Tries: h.robotsTries}}
		return f.lease(h, l, entry{}, true, now), true
	}
	var e entry
	switch {
	case len(h.later) > 0 && !h.later[0].at.After(now):
		e = heap.Pop(&h.later).(entry)
		if len(h.later) == 0 && cap(h.later) > maxKept {
			h.later = nil
		}
	case h.fresh() > 0 && !f.spent():
		if len(h.buf) == 0 {
			if err := f.refill(h); err != nil || len(h.buf) == 0 {
				// A record that cannot be read (a damaged file), or
				// one missing, or a failed write: the Frontier stops
				// with the error, every later call's, rather than ask
				// for the host again and again.
				if err != nil {
					f.w.stop(err)
				}
				return nil, false
			}
		}
		e = h.buf[0]
		h.buf[0] = entry{}
		h.buf = h.buf[1:]
		if len(h.buf) == 0 {
			h.buf = nil
		}
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
	l := &crawl.Lease{Request: e.Request, Rules: h.rules}
	return f.lease(h, l, e, e.taken, now), true
}

// lease records l as out, starting a request to h now.
func (f *Frontier) lease(h *host, l *crawl.Lease, e entry, taken bool, now time.Time) *crawl.Lease {
	f.leaseSeq++
	l.ID = f.leasePrefix + strconv.FormatUint(f.leaseSeq, 10)
	rec := &leaseRec{lease: l, id: l.ID, req: l.Request, h: h, e: e, taken: taken, idx: -1, prevNext: h.next}
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
	return l
}

// wakeTime returns when h may start its next request, and whether it has
// one, as sched.Want.Wake decides.
func (f *Frontier) wakeTime(h *host) (wake time.Time, ok, held bool) {
	w := sched.Want{
		Next:    h.next,
		Blocked: h.gate == gateFetching || h.inflight >= max(f.policy.HostWorkers, 1),
		Robots:  h.gate == gateRobots,
		Queued:  h.fresh() > 0,
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
func (f *Frontier) unpark(now time.Time) {
	if f.spent() {
		return
	}
	for e := f.parked.Front(); e != nil; e = f.parked.Front() {
		f.settle(e.Value.(*host), now) // which takes it off the list
	}
}

// settle puts h in the schedule where its wake time says.
func (f *Frontier) settle(h *host, now time.Time) {
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

// maxKept is the largest retry heap a host keeps room for once drained.
const maxKept = 64

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
