package frontiertest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/asyncrawl/crawl"
)

// The states of a URL in the model.
const (
	queued = iota
	leased
	finished
)

// Whether a queued URL is a first attempt (it counts a page when taken).
const (
	notFresh     = 0
	fresh        = 1
	freshUnknown = -1 // after a reopening: a backend may count it again or not
)

// mURL is what the model knows of an admitted URL.
type mURL struct {
	req    crawl.Request // as it must be handed out next, or as leased
	state  int
	fresh  int
	at     time.Time // not handed out before (a retry's time)
	holder *mLease
	// seq orders the host's new Requests: admitted before every URL of
	// a greater seq (the URLs admitted in one step of calls made at once
	// share one, their order unknown).
	seq int
	// handed says that it was handed out before: it is no longer new.
	handed bool
	// retry says that a Retry with a time put it back, and it was not
	// handed out since: it goes by that time among the host's retries.
	retry bool
}

// mLease is a lease the run holds.
type mLease struct {
	l         *crawl.Lease
	orig      crawl.Request // as handed out: a take-back hands this out again
	host      string
	robots    bool
	first     int       // fresh, notFresh or freshUnknown when taken
	safeUntil time.Time // not taken back before; zero: never
}

// mHost is what the model knows of a host.
type mHost struct {
	open        bool // its robots.txt acked
	regate      bool // open, and may ask for its robots.txt again (a Start since)
	rules       *crawl.HostRules
	robots      *mLease // its robots.txt lease held
	robotsAt    time.Time
	robotsTries int
	pauseSure   time.Time // paused until, surely
	pauseMaybe  time.Time // paused until, maybe (a Pause cut, or forgotten at a reopening)
	last        time.Time // the latest start of a request of the host
}

// model is the reference model of a Frontier under a run.
type model struct {
	p       crawl.Policy
	urls    map[string]*mURL
	hosts   map[string]*mHost
	held    []*mLease
	ended   []*crawl.Lease // leases ended: their holder's calls must get ErrLeaseLost
	done    int
	pagesLo int
	pagesHi int
	results map[string]int // URL → Results stored for it
	seq     int            // the seq of the next URL admitted
	batch   bool           // a step of calls made at once: its URLs share a seq
}

func newModel(p crawl.Policy) *model {
	return &model{p: p, urls: map[string]*mURL{}, hosts: map[string]*mHost{}, results: map[string]int{}}
}

func (m *model) host(key string) *mHost {
	h := m.hosts[key]
	if h == nil {
		h = &mHost{}
		m.hosts[key] = h
	}
	return h
}

// newCount returns how many distinct URLs of reqs were never admitted.
func (m *model) newCount(reqs []crawl.Request) int {
	seen := map[string]bool{}
	n := 0
	for _, r := range reqs {
		if m.urls[r.URL] == nil && !seen[r.URL] {
			n++
		}
		seen[r.URL] = true
	}
	return n
}

// admit admits what of reqs is new, the first of each URL.
func (m *model) admit(reqs []crawl.Request) {
	for _, r := range reqs {
		if m.urls[r.URL] == nil {
			m.urls[r.URL] = &mURL{req: r, state: queued, fresh: fresh, seq: m.seq}
			m.host(crawl.HostKey(r.URL))
			if !m.batch {
				m.seq++
			}
		}
	}
}

// expirable reports whether l may have been taken back by now.
func (m *model) expirable(l *mLease, now time.Time) bool {
	return !l.safeUntil.IsZero() && !now.Before(l.safeUntil)
}

// release drops l from the leases held and remembers it as ended.
func (m *model) release(l *mLease) {
	m.held = slices.DeleteFunc(m.held, func(x *mLease) bool { return x == l })
	m.ended = append(m.ended, l.l)
	if len(m.ended) > 16 {
		m.ended = m.ended[1:]
	}
	if l.robots {
		m.host(l.host).robots = nil
	} else {
		m.urls[l.l.URL].holder = nil
	}
}

// lose records that the Frontier took l back after its term: its Request
// is queued again as it was leased.
func (m *model) lose(l *mLease) {
	m.release(l)
	if l.robots {
		return
	}
	u := m.urls[l.l.URL]
	u.state, u.fresh, u.at, u.req, u.retry = queued, notFresh, time.Time{}, l.orig, false
}

// putBack records a Retry of l: req queued again at at.
func (m *model) putBack(l *mLease, req crawl.Request, at time.Time) {
	m.release(l)
	if l.robots {
		h := m.host(l.host)
		h.robotsAt, h.robotsTries = at, req.Tries
		return
	}
	u := m.urls[l.l.URL]
	u.state, u.fresh, u.at, u.req, u.retry = queued, notFresh, at, req, !at.IsZero()
}

// acked records a successful Ack of l with o.
func (m *model) acked(l *mLease, o crawl.Outcome) {
	m.release(l)
	if l.robots {
		h := m.host(l.host)
		h.open, h.rules = true, o.Rules
		if o.Rules != nil && o.Rules.Delay > 0 {
			h.last = time.Now()
		}
		return
	}
	u := m.urls[l.l.URL]
	u.state = finished
	m.done++
	if o.Unsent {
		switch l.first {
		case fresh:
			m.pagesLo--
			m.pagesHi--
		case freshUnknown:
			m.pagesLo--
		}
		m.pagesLo = max(m.pagesLo, 0)
	}
	if o.Result != nil {
		m.results[l.l.URL]++
	}
}

// clone returns a copy of m that holds no lease (as after a reopening).
func (m *model) clone() *model {
	c := *m
	c.urls = make(map[string]*mURL, len(m.urls))
	for k, u := range m.urls {
		v := *u
		v.holder = nil
		c.urls[k] = &v
	}
	c.hosts = make(map[string]*mHost, len(m.hosts))
	for k, h := range m.hosts {
		v := *h
		v.robots = nil
		c.hosts[k] = &v
	}
	c.held = nil
	c.ended = slices.Clone(m.ended)
	c.results = make(map[string]int, len(m.results))
	for k, n := range m.results {
		c.results[k] = n
	}
	return &c
}

// spent says whether the page budget is spent: yes, no, or unknown (sure
// false).
func (m *model) spent() (spent, sure bool) {
	switch {
	case m.p.MaxPages <= 0:
		return false, true
	case m.pagesLo >= m.p.MaxPages:
		return true, true
	case m.pagesHi < m.p.MaxPages:
		return false, true
	}
	return false, false
}

// heldOf counts the leases held of the host key.
func (m *model) heldOf(key string) int {
	n := 0
	for _, l := range m.held {
		if l.host == key {
			n++
		}
	}
	return n
}

// delay is the host's least time between two starts.
func (m *model) delay(h *mHost) time.Duration {
	d := m.p.HostDelay
	if h.rules != nil && h.rules.Delay > d {
		d = h.rules.Delay
	}
	return d
}

// eligible reports whether u may be handed out at t as far as its time and
// the budget go (sureOnly: only if surely so).
func (m *model) eligible(u *mURL, t time.Time, sureOnly bool) bool {
	if u.state != queued || t.Before(u.at) {
		return false
	}
	spent, sure := m.spent()
	if sureOnly {
		return u.fresh == notFresh || sure && !spent
	}
	return u.fresh != fresh || !(sure && spent)
}

// hasItem reports whether the host key has a URL eligible at t.
func (m *model) hasItem(key string, t time.Time, sureOnly bool) bool {
	for _, u := range m.urls {
		if crawl.HostKey(u.req.URL) == key && m.eligible(u, t, sureOnly) {
			return true
		}
	}
	return false
}

// sortedHosts returns the model's host keys, sorted, so that its answers
// do not depend on map order.
func (m *model) sortedHosts() []string {
	keys := make([]string, 0, len(m.hosts))
	for k := range m.hosts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// mustAvailable returns why a Take at now must hand something out at
// once, or "" if the model cannot be sure that it must.
func (m *model) mustAvailable(now time.Time) string {
	for _, key := range m.sortedHosts() {
		h := m.hosts[key]
		if m.heldOf(key) >= m.p.HostWorkers || now.Before(h.pauseMaybe.Add(slack)) {
			continue
		}
		if d := m.delay(h); d > 0 && now.Before(h.last.Add(d*3/2+slack)) {
			continue
		}
		t := now.Add(-slack)
		if !m.hasItem(key, t, true) {
			continue
		}
		if m.p.Robots && !h.open {
			if h.robots == nil && !t.Before(h.robotsAt) {
				return fmt.Sprintf("the robots.txt of %s, whose URLs wait for it", key)
			}
			continue
		}
		return fmt.Sprintf("a URL of %s, with %d of its HostWorkers leased", key, m.heldOf(key))
	}
	return ""
}

// mustNone reports whether a correct Frontier must hand nothing out to a
// Take, whenever it returns: times (a retry's, a pause's) are not
// considered here, since took checks them against when the Take returned.
func (m *model) mustNone() bool {
	for _, l := range m.held {
		if !l.safeUntil.IsZero() {
			return false
		}
	}
	t := time.Now().Add(24 * time.Hour)
	for _, key := range m.sortedHosts() {
		h := m.hosts[key]
		if m.heldOf(key) >= m.p.HostWorkers {
			continue
		}
		if m.p.Robots && !h.open && h.robots != nil {
			continue
		}
		if m.hasItem(key, t, false) {
			return false
		}
	}
	return true
}

// over says whether Join may return: yes or no, and whether the model is
// sure of it.
func (m *model) over() (over, sure bool) {
	pending, leasedPages, retries, unknown := 0, 0, 0, 0
	for _, u := range m.urls {
		if u.state == queued {
			pending++
			switch u.fresh {
			case notFresh:
				retries++
			case freshUnknown:
				unknown++
			}
		}
	}
	for _, l := range m.held {
		if !l.robots {
			pending++
			leasedPages++
		}
	}
	if pending == 0 {
		return true, true
	}
	spent, spentSure := m.spent()
	switch {
	case spentSure && !spent, leasedPages > 0, retries > 0:
		return false, true
	case !spentSure, unknown > 0:
		return false, false
	}
	return true, true
}

// counts returns the model's Counts and how far Queued and Leased may be
// off because leases may have been taken back.
func (m *model) counts(now time.Time) (c crawl.Counts, expPages, expRobots int) {
	for _, u := range m.urls {
		if u.state == queued {
			c.Queued++
		}
	}
	c.Leased = len(m.held)
	for _, l := range m.held {
		if m.expirable(l, now) {
			if l.robots {
				expRobots++
			} else {
				expPages++
			}
		}
	}
	c.Done = m.done
	return c, expPages, expRobots
}

// sameReq reports whether two Requests are equal, Wire included, times
// compared with Equal.
func sameReq(a, b crawl.Request) bool {
	return sameRequest(a, b) && a.Wire == b.Wire
}

// reqString describes a Request in failure messages.
func reqString(r crawl.Request) string {
	return fmt.Sprintf("{URL: %s, Wire: %q, Kind: %d, Depth: %d, Redirects: %d, CrossHost: %v, Tries: %d, First: %s, Referrer: %q}",
		r.URL, r.Wire, r.Kind, r.Depth, r.Redirects, r.CrossHost, r.Tries, r.First.Format(time.RFC3339Nano), r.Referrer)
}

// ---- the runner's operations ----

func (r *runner) push(op fuzzOp) {
	newN := r.m.newCount(op.reqs)
	ctx, cancel := ctxFor(op.cut, op.during, mustWithin)
	defer cancel()
	var n int
	err := r.within("Push", mustWithin+grace, func() (err error) { n, err = r.f.Push(ctx, op.reqs...); return err })
	switch {
	case err == nil:
		if n != newN {
			r.fail("Push(%s): admitted %d, want %d (the URLs never admitted)", reqList(op.reqs), n, newN)
		}
	case op.cut != cutNone && isCtxErr(err):
		// As if not made, or completed: pushing again tells which.
		var n2 int
		err2 := r.bounded("Push", func(ctx context.Context) (err error) { n2, err = r.f.Push(ctx, op.reqs...); return err })
		if err2 != nil {
			r.fail("Push again after a Push cut by its context (%v): got error %v, want nil", err, err2)
		}
		if n2 != newN && n2 != 0 {
			r.fail("Push(%s) cut by its context (%v), then again: admitted %d, want %d (the first made no change) or 0 (it completed): the cut call was split",
				reqList(op.reqs), err, n2, newN)
		}
	default:
		r.fail("Push(%s): got error %v, want nil", reqList(op.reqs), err)
	}
	r.m.admit(op.reqs)
}

func (r *runner) take(op fuzzOp) {
	now := time.Now()
	why := r.m.mustAvailable(now)
	d := shortWait
	if why != "" {
		d = mustWithin
	}
	none := r.m.mustNone()
	ctx, cancel := ctxFor(op.cut, op.during, d)
	defer cancel()
	var l *crawl.Lease
	err := r.within("Take", d+grace, func() (err error) { l, err = r.f.Take(ctx); return err })
	ended := time.Now()
	switch {
	case err == nil:
		if none {
			r.fail("Take handed out %s, want nothing: %s", desc(l), r.state())
		}
		r.took(l, now, ended)
	case isCtxErr(err):
		if why != "" && op.cut == cutNone {
			r.fail("Take still blocked after %v, want %s at once: %s", d, why, r.state())
		}
		r.cutTake(op)
	default:
		r.fail("Take: got error %v, want a lease or the context's error", err)
	}
}

// cutTake notes a Take cut by its ctx under a lease term: a Frontier may
// have leased a URL for it and, its reply lost with the ctx, give the
// lease back only once the term ends (Redis's, when the server is slow),
// as a lease taken back; which URL it was is not known. So no URL queued
// now is taken for new by the order check (see checkOrder): one of them
// may come back as a retry, after the host's later new ones.
func (r *runner) cutTake(op fuzzOp) {
	if op.cut == cutNone || r.m.p.LeaseTerm <= 0 {
		return
	}
	for _, v := range r.m.urls {
		if v.state == queued {
			v.handed = true
		}
	}
}

// took checks a lease Take handed out and records it.
func (r *runner) took(l *crawl.Lease, began, ended time.Time) {
	m := r.m
	if l == nil {
		r.fail("Take: got a nil lease and a nil error")
	}
	if r.ids[l.ID] {
		r.fail("Take handed out %s: its ID was handed out before in this run, want IDs unique among the leases given out", desc(l))
	}
	r.ids[l.ID] = true
	key := crawl.HostKey(l.URL)
	h := m.host(key)
	rec := &mLease{l: l, orig: l.Request, host: key, robots: l.Kind == crawl.RobotsRequest, first: notFresh}
	if m.p.LeaseTerm > 0 {
		rec.safeUntil = began.Add(m.p.LeaseTerm)
	}
	if rec.robots {
		wantTries := h.robotsTries
		if h.open {
			wantTries = 0 // asked again in a new Run: a first try
		}
		switch {
		case !m.p.Robots:
			r.fail("Take handed out %s, want no robots.txt: Policy.Robots is false", desc(l))
		case l.URL != key+"/robots.txt":
			r.fail("Take handed out %s, want the URL %s/robots.txt", desc(l), key)
		case h.open && !h.regate:
			r.fail("Take handed out %s, want none: the host's robots.txt was acked already, and no Start came since", desc(l))
		case h.robots != nil && !m.expirable(h.robots, ended):
			r.fail("Take handed out %s while %s holds it, want one holder at a time", desc(l), desc(h.robots.l))
		case ended.Add(slack).Before(h.robotsAt):
			r.fail("Take handed out %s %v before the time of its Retry", desc(l), h.robotsAt.Sub(ended))
		case wantTries >= 0 && l.Tries != wantTries:
			r.fail("Take handed out %s, want Tries %d as put back (0 asked again in a new Run)", desc(l), wantTries)
		}
		if h.robots != nil {
			m.lose(h.robots)
		}
		if h.open {
			// Asked again in this Run: the host's URLs wait for it, as
			// a new host's do.
			h.open, h.regate, h.robotsTries = false, false, 0
		}
		if spent, sure := m.spent(); spent && sure && !m.hasItem(key, ended.Add(time.Hour), true) && !m.hasItem(key, ended.Add(time.Hour), false) {
			r.fail("Take handed out %s while the page budget is spent, want only the robots.txt of a host with a retry", desc(l))
		}
		h.robots = rec
	} else {
		u := m.urls[l.URL]
		if u == nil {
			r.fail("Take handed out %s, a URL never admitted", desc(l))
		}
		if m.p.Robots && !h.open {
			r.fail("Take handed out %s before its host's robots.txt was acked", desc(l))
		}
		// A page first: the Frontier keeps the host's rules in this Run.
		h.regate = false
		switch u.state {
		case finished:
			r.fail("Take handed out %s, a URL acked already", desc(l))
		case leased:
			if !m.expirable(u.holder, ended) {
				r.fail("Take handed out %s while %s holds it, want one holder at a time", desc(l), desc(u.holder.l))
			}
			m.lose(u.holder)
		}
		if ended.Add(slack).Before(u.at) {
			r.fail("Take handed out %s %v before the time of its Retry", desc(l), u.at.Sub(ended))
		}
		r.checkOrder(l, u)
		if !sameReq(l.Request, u.req) {
			r.fail("Take handed out %s as\n\t%s, want it as pushed or put back:\n\t%s", desc(l), reqString(l.Request), reqString(u.req))
		}
		spent, sure := m.spent()
		switch u.fresh {
		case fresh:
			if spent && sure {
				r.fail("Take handed out %s, a first attempt, with %d of Policy.MaxPages %d taken: want only retries", desc(l), m.pagesLo, m.p.MaxPages)
			}
			m.pagesLo++
			m.pagesHi++
		case freshUnknown:
			m.pagesHi++
		}
		rec.first = u.fresh
		u.state, u.holder, u.fresh, u.handed, u.retry = leased, rec, notFresh, true, false
		if m.p.Robots {
			if !sameRules(l.Rules, h.rules) {
				r.fail("Take handed out %s with Rules %s, want %s as acked", desc(l), rulesString(l.Rules), rulesString(h.rules))
			}
		} else if l.Rules != nil {
			r.fail("Take handed out %s with Rules %s, want nil: Policy.Robots is false", desc(l), rulesString(l.Rules))
		}
	}
	if ended.Before(h.pauseSure) {
		r.fail("Take handed out %s %v before the end of its host's Pause", desc(l), h.pauseSure.Sub(ended))
	}
	n := 0
	for _, x := range m.held {
		if x.host == key && !m.expirable(x, ended) {
			n++
		}
	}
	if n >= m.p.HostWorkers {
		r.fail("Take handed out %s with %d leases of its host out, want at most Policy.HostWorkers %d", desc(l), n+1, m.p.HostWorkers)
	}
	h.last = ended
	m.held = append(m.held, rec)
}

// checkOrder checks the order of a host's Requests as Take hands u out
// with l: a new Request not before one of its host admitted earlier and
// never handed out; a retry not before one of its host whose time is
// earlier (by more than slack: a backend may keep times to the
// millisecond), which was due as well. URLs handed out by Takes made at
// once with l's are left out: which of them was first is not known.
func (r *runner) checkOrder(l *crawl.Lease, u *mURL) {
	key := crawl.HostKey(l.URL)
	var before *mURL
	for _, v := range r.m.urls {
		if v == u || v.state != queued || r.sameStep[v.req.URL] || crawl.HostKey(v.req.URL) != key {
			continue
		}
		switch {
		case !u.handed && !v.handed && v.seq < u.seq:
			if before == nil || v.seq < before.seq {
				before = v
			}
		case u.retry && v.retry && v.at.Add(slack).Before(u.at):
			if before == nil || v.at.Before(before.at) {
				before = v
			}
		}
	}
	switch {
	case before == nil:
	case !u.handed:
		r.fail("Take handed out %s, new, while %s, admitted before it, was never handed out: want a host's new Requests in the order they were admitted; %s",
			desc(l), before.req.URL, r.state())
	default:
		r.fail("Take handed out %s, put back to be retried %v from now, while %s, to be retried %v from now, waited: want a host's retries by their times; %s",
			desc(l), time.Until(u.at).Round(time.Millisecond), before.req.URL, time.Until(before.at).Round(time.Millisecond), r.state())
	}
}

// outcome builds the Outcome an op acks l with.
func (r *runner) outcome(op fuzzOp, l *mLease) crawl.Outcome {
	o := crawl.Outcome{Links: op.reqs}
	if l.robots {
		o.Rules = op.rules
		return o
	}
	o.Unsent = op.unsent
	if op.result {
		o.Result = &crawl.Result{URL: l.l.URL, Status: 200, Depth: l.l.Depth, NumURLs: len(op.reqs)}
	}
	if op.refuse {
		o.Refused = map[string]int{"url_length": 1}
	}
	return o
}

// ackResult checks an Ack's answer against the model and records it; it
// reports whether it is settled (false: cut by its context, unresolved).
func (r *runner) ackResult(l *mLease, o crawl.Outcome, newN, n int, err error, cut bool) bool {
	what := fmt.Sprintf("Ack of %s with %d links (%d new)", desc(l.l), len(o.Links), newN)
	switch {
	case err == nil:
		if n != newN {
			r.fail("%s: admitted %d, want %d", what, n, newN)
		}
		if o.Result != nil && o.Result.NumNewURLs != n {
			r.fail("%s: Result.NumNewURLs %d, want %d", what, o.Result.NumNewURLs, n)
		}
		r.m.admit(o.Links)
		r.m.acked(l, o)
	case errors.Is(err, crawl.ErrLeaseLost) && r.m.expirable(l, time.Now()):
		if n != newN {
			r.fail("%s, its lease lost: admitted %d, want %d (an Ack of a lost lease admits its links)", what, n, newN)
		}
		r.m.admit(o.Links)
		r.m.lose(l)
	case cut && isCtxErr(err):
		return false
	case errors.Is(err, crawl.ErrLeaseLost):
		r.fail("%s: got ErrLeaseLost, want nil: the lease is held%s", what, termNote(r.m, l))
	default:
		r.fail("%s: got error %v, want nil", what, err)
	}
	return true
}

// termNote says when a lease may be taken back, in failure messages.
func termNote(m *model, l *mLease) string {
	if l.safeUntil.IsZero() {
		return " and leases never expire"
	}
	return fmt.Sprintf(" and its term ends %v from now at the earliest", time.Until(l.safeUntil))
}

func (r *runner) ack(op fuzzOp, l *mLease) {
	if at, ok := r.f.(crawl.AckTaker); ok && op.next && op.cut == cutNone {
		r.ackTake(at, op, l)
		return
	}
	o := r.outcome(op, l)
	newN := r.m.newCount(o.Links)
	c := op.cut
	if r.m.p.LeaseTerm > 0 {
		c = cutNone // a lost lease and a cut call are told apart only without a term
	}
	ctx, cancel := ctxFor(c, op.during, mustWithin)
	defer cancel()
	var n int
	err := r.within("Ack", mustWithin+grace, func() (err error) { n, err = r.f.Ack(ctx, l.l, o); return err })
	if r.ackResult(l, o, newN, n, err, c != cutNone) {
		return
	}
	// Cut: as if not made, or completed; an Ack again tells which.
	o2 := r.outcome(op, l)
	var n2 int
	err2 := r.bounded("Ack", func(ctx context.Context) (err error) { n2, err = r.f.Ack(ctx, l.l, o2); return err })
	switch {
	case err2 == nil && n2 == newN:
		r.m.admit(o2.Links)
		r.m.acked(l, o2)
	case errors.Is(err2, crawl.ErrLeaseLost) && n2 == 0:
		r.m.admit(o.Links)
		r.m.acked(l, o)
	default:
		r.fail("Ack of %s cut by its context (%v), then again: got (%d, %v), want (%d, nil) (the first made no change) or (0, ErrLeaseLost) (it completed): the cut call was split",
			desc(l.l), err, n2, err2, newN)
	}
}

// ackTake acks l with AckTake: as Ack, then the lease it returns, if
// any, checked as Take's (AckTake may return none even when a Take would
// have one: the caller then calls Take).
func (r *runner) ackTake(at crawl.AckTaker, op fuzzOp, l *mLease) {
	o := r.outcome(op, l)
	newN := r.m.newCount(o.Links)
	began := time.Now()
	var (
		n    int
		next *crawl.Lease
	)
	err := r.within("AckTake", mustWithin+grace, func() (err error) {
		n, next, err = at.AckTake(context.Background(), context.Background(), l.l, o)
		return err
	})
	ended := time.Now()
	lost := err != nil
	if r.ackResult(l, o, newN, n, err, false) {
		if next != nil {
			if lost {
				r.fail("AckTake of %s returned %v and the lease %s, want no lease with an error", desc(l.l), err, desc(next))
			}
			if r.m.mustNone() {
				r.fail("AckTake handed out %s, want nothing: %s", desc(next), r.state())
			}
			r.took(next, began, ended)
		}
	}
}

func (r *runner) retry(op fuzzOp, l *mLease) {
	var at time.Time
	if op.after > 0 {
		at = time.Now().Add(op.after)
	}
	req := l.l.Request
	c := op.cut
	if r.m.p.LeaseTerm > 0 {
		c = cutNone
	}
	ctx, cancel := ctxFor(c, op.during, mustWithin)
	defer cancel()
	err := r.within("Retry", mustWithin+grace, func() error { return r.f.Retry(ctx, l.l, at) })
	r.retryResult(l, req, at, err, c != cutNone)
}

// retryResult checks a Retry's answer and records it.
func (r *runner) retryResult(l *mLease, req crawl.Request, at time.Time, err error, cut bool) {
	switch {
	case err == nil:
		r.m.putBack(l, req, at)
	case errors.Is(err, crawl.ErrLeaseLost) && r.m.expirable(l, time.Now()):
		r.m.lose(l)
	case cut && isCtxErr(err):
		err2 := r.bounded("Retry", func(ctx context.Context) error { return r.f.Retry(ctx, l.l, at) })
		switch {
		case err2 == nil, errors.Is(err2, crawl.ErrLeaseLost):
			r.m.putBack(l, req, at)
		default:
			r.fail("Retry of %s cut by its context (%v), then again: got %v, want nil or ErrLeaseLost", desc(l.l), err, err2)
		}
	case errors.Is(err, crawl.ErrLeaseLost):
		r.fail("Retry of %s: got ErrLeaseLost, want nil: the lease is held%s", desc(l.l), termNote(r.m, l))
	default:
		r.fail("Retry of %s: got error %v, want nil", desc(l.l), err)
	}
}

func (r *runner) extend(op fuzzOp, l *mLease) {
	began := time.Now()
	ctx, cancel := ctxFor(op.cut, op.during, mustWithin)
	defer cancel()
	err := r.within("Extend", mustWithin+grace, func() error { return r.f.Extend(ctx, l.l) })
	r.extendResult(l, began, err, op.cut != cutNone)
}

func (r *runner) extendResult(l *mLease, began time.Time, err error, cut bool) {
	switch {
	case err == nil:
		if r.m.p.LeaseTerm > 0 {
			l.safeUntil = began.Add(r.m.p.LeaseTerm)
		}
	case errors.Is(err, crawl.ErrLeaseLost) && r.m.expirable(l, time.Now()):
		r.m.lose(l)
	case cut && isCtxErr(err):
	case errors.Is(err, crawl.ErrLeaseLost):
		r.fail("Extend of %s: got ErrLeaseLost, want nil: the lease is held%s", desc(l.l), termNote(r.m, l))
	default:
		r.fail("Extend of %s: got error %v, want nil", desc(l.l), err)
	}
}

func (r *runner) pause(op fuzzOp) {
	until := time.Now().Add(op.after)
	ctx, cancel := ctxFor(op.cut, op.during, mustWithin)
	defer cancel()
	err := r.within("Pause", mustWithin+grace, func() error { return r.f.Pause(ctx, op.host, until) })
	r.pauseResult(op.host, until, err, op.cut != cutNone)
}

func (r *runner) pauseResult(host string, until time.Time, err error, cut bool) {
	h := r.m.host(host)
	switch {
	case err == nil:
		h.pauseSure = later(h.pauseSure, until)
	case cut && isCtxErr(err):
	default:
		r.fail("Pause(%s): got error %v, want nil", host, err)
	}
	h.pauseMaybe = later(h.pauseMaybe, until)
}

func (r *runner) join(op fuzzOp) {
	over, sure := r.m.over()
	d := shortWait
	if sure && over {
		d = mustWithin
	}
	ctx, cancel := ctxFor(op.cut, op.during, d)
	defer cancel()
	err := r.within("Join", d+grace, func() error { return r.f.Join(ctx) })
	switch {
	case err == nil:
		if sure && !over {
			r.fail("Join returned nil, want it to block: %s", r.state())
		}
	case isCtxErr(err):
		if sure && over && op.cut == cutNone {
			r.fail("Join still blocked after %v, want nil: nothing is left (%s)", d, r.state())
		}
	default:
		r.fail("Join: got error %v, want nil or the context's error", err)
	}
}

// stale calls Ack, Retry or Extend with a lease already ended.
func (r *runner) stale(op fuzzOp) {
	if len(r.m.ended) == 0 {
		return
	}
	l := r.m.ended[op.lease%len(r.m.ended)]
	var err error
	switch op.lease % 3 {
	case 0:
		newN := r.m.newCount(op.reqs)
		res := &crawl.Result{URL: l.URL, Status: 200}
		var n int
		err = r.bounded("Ack", func(ctx context.Context) (err error) {
			n, err = r.f.Ack(ctx, l, crawl.Outcome{Links: op.reqs, Result: res})
			return err
		})
		if errors.Is(err, crawl.ErrLeaseLost) && n != newN {
			r.fail("Ack of %s, a lease ended before: admitted %d, want %d (its links are admitted all the same)", desc(l), n, newN)
		}
		r.m.admit(op.reqs)
	case 1:
		err = r.bounded("Retry", func(ctx context.Context) error { return r.f.Retry(ctx, l, time.Time{}) })
	default:
		err = r.bounded("Extend", func(ctx context.Context) error { return r.f.Extend(ctx, l) })
	}
	if !errors.Is(err, crawl.ErrLeaseLost) {
		r.fail("%s of %s, a lease ended before: got %v, want ErrLeaseLost", []string{"Ack", "Retry", "Extend"}[op.lease%3], desc(l), err)
	}
}

// parallel runs op.sub on goroutines of their own, at once, then checks
// their answers in an order that is one they could have happened in.
func (r *runner) parallel(op fuzzOp) {
	type answer struct {
		op     fuzzOp
		l      *mLease
		o      crawl.Outcome
		newN   int
		req    crawl.Request
		at     time.Time
		began  time.Time
		ended  time.Time
		n      int
		lease  *crawl.Lease
		err    error
		orderK int
	}
	used := map[*mLease]bool{}
	urls := map[string]bool{}
	var as []*answer
	for _, s := range op.sub {
		a := &answer{op: s}
		switch s.kind {
		case opAck, opRetry, opExtend:
			a.l = r.lease(s.lease)
			if a.l == nil || used[a.l] {
				continue
			}
			used[a.l] = true
		}
		// One op per URL, so that which Request is admitted is known.
		var reqs []crawl.Request
		for _, q := range s.reqs {
			if !urls[q.URL] {
				reqs = append(reqs, q)
			}
		}
		for _, q := range s.reqs {
			urls[q.URL] = true
		}
		a.op.reqs = reqs
		switch s.kind {
		case opPush:
			if len(reqs) == 0 {
				continue
			}
			a.newN = r.m.newCount(reqs)
			a.orderK = 0
		case opAck:
			a.o = r.outcome(a.op, a.l)
			a.newN = r.m.newCount(a.o.Links)
			a.orderK = 1
		case opRetry:
			a.req = a.l.l.Request
			if s.after > 0 {
				a.at = time.Now().Add(s.after)
			}
			a.orderK = 1
		case opExtend:
			a.orderK = 1
		case opTake:
			a.orderK = 2
		case opPause:
			a.at = time.Now().Add(s.after)
			a.orderK = 3
		}
		as = append(as, a)
	}
	done := make(chan struct{})
	for _, a := range as {
		go func() {
			defer func() { done <- struct{}{} }()
			d := mustWithin
			if a.op.kind == opTake {
				d = 2 * shortWait
			}
			ctx, cancel := context.WithTimeout(context.Background(), d)
			defer cancel()
			a.began = time.Now()
			switch a.op.kind {
			case opPush:
				a.n, a.err = r.f.Push(ctx, a.op.reqs...)
			case opAck:
				a.n, a.err = r.f.Ack(ctx, a.l.l, a.o)
			case opRetry:
				a.err = r.f.Retry(ctx, a.l.l, a.at)
			case opExtend:
				a.err = r.f.Extend(ctx, a.l.l)
			case opTake:
				a.lease, a.err = r.f.Take(ctx)
			case opPause:
				a.err = r.f.Pause(ctx, a.op.host, a.at)
			}
			a.ended = time.Now()
		}()
	}
	timer := time.NewTimer(mustWithin + grace)
	defer timer.Stop()
	for range as {
		select {
		case <-done:
		case <-timer.C:
			r.fail("a call still blocked after %v, want every one to return", mustWithin+grace)
		}
	}
	// Takes in the order they returned (a lease taken back from
	// another after its term came later), but a robots.txt's before
	// the pages': a Take that returned later may have decided earlier,
	// and a robots.txt handed out while an Unsent ack of the same step
	// had given a page back, before another Take spent it, is right. A
	// robots.txt and a page never share a URL, nor, the robots.txt
	// going first and alone, a host.
	robotsTake := func(a *answer) bool {
		return a.orderK == 2 && a.err == nil && a.lease != nil && a.lease.Kind == crawl.RobotsRequest
	}
	sort.SliceStable(as, func(i, j int) bool {
		if as[i].orderK != as[j].orderK {
			return as[i].orderK < as[j].orderK
		}
		if ri, rj := robotsTake(as[i]), robotsTake(as[j]); ri != rj {
			return ri
		}
		return as[i].orderK == 2 && as[i].ended.Before(as[j].ended)
	})
	r.m.batch = true
	r.sameStep = map[string]bool{}
	for _, a := range as {
		if a.op.kind == opTake && a.err == nil && a.lease != nil {
			r.sameStep[a.lease.URL] = true
		}
	}
	defer func() {
		r.m.batch, r.sameStep = false, nil
		r.m.seq++
	}()
	for _, a := range as {
		switch a.op.kind {
		case opPush:
			if a.err != nil {
				r.fail("Push(%s) at once with others: got error %v, want nil", reqList(a.op.reqs), a.err)
			}
			if a.n != a.newN {
				r.fail("Push(%s) at once with others: admitted %d, want %d", reqList(a.op.reqs), a.n, a.newN)
			}
			r.m.admit(a.op.reqs)
		case opAck:
			r.ackResult(a.l, a.o, a.newN, a.n, a.err, false)
		case opRetry:
			r.retryResult(a.l, a.req, a.at, a.err, false)
		case opExtend:
			r.extendResult(a.l, a.began, a.err, false)
		case opTake:
			switch {
			case a.err == nil:
				r.took(a.lease, a.began, a.ended)
			case !isCtxErr(a.err):
				r.fail("Take at once with others: got error %v, want a lease or the context's error", a.err)
			}
		case opPause:
			r.pauseResult(a.op.host, a.at, a.err, false)
		}
	}
}

// started records a Start: each host whose robots.txt was acked may ask
// for it again before its next page (MemoryFrontier and boltfrontier do,
// once a Run), or keep its rules (a shared Frontier).
func (m *model) started() {
	if !m.p.Robots {
		return
	}
	for _, h := range m.hosts {
		if h.open {
			h.regate = true
		}
	}
}

// reopen closes the Frontier, calls between (if not nil), and opens it
// anew on its state.
func (r *runner) reopen(between func(t *testing.T, path string)) {
	if r.crash {
		r.opts.Crash(r.t, r.f, r.path)
	} else if err := r.within("Close", mustWithin+grace, r.f.Close); err != nil {
		r.fail("Close: got error %v, want nil", err)
	}
	if between != nil {
		between(r.t, r.path)
	}
	r.f = r.openFrontier()
	r.start()
	m := r.m
	for _, l := range slices.Clone(m.held) {
		m.release(l)
		if !l.robots {
			u := m.urls[l.l.URL]
			u.state, u.at, u.req, u.retry = queued, time.Time{}, l.orig, false
			u.fresh = freshUnknown
		}
	}
	for _, u := range m.urls {
		if u.state == queued && u.fresh == notFresh {
			u.fresh = freshUnknown
		}
	}
	m.pagesLo = 0
	for _, h := range m.hosts {
		// Pauses, and a robots.txt's time and tries to be retried,
		// need not be kept.
		h.pauseSure, h.robotsAt, h.robotsTries = time.Time{}, time.Time{}, -1
	}
}

// checkCounts compares the Frontier's Counts with the model's.
func (r *runner) checkCounts() {
	var c crawl.Counts
	err := r.bounded("Counts", func(ctx context.Context) (err error) { c, err = r.f.Counts(ctx); return err })
	if err != nil {
		r.fail("Counts: got error %v, want nil", err)
	}
	r.compareCounts(c)
}

func (r *runner) compareCounts(c crawl.Counts) {
	m := r.m
	want, expP, expR := m.counts(time.Now())
	bad := c.Queued < want.Queued || c.Queued > want.Queued+expP ||
		c.Leased > want.Leased || c.Leased < want.Leased-expP-expR ||
		c.Queued+c.Leased > want.Queued+want.Leased || c.Queued+c.Leased < want.Queued+want.Leased-expR ||
		c.Done != want.Done || c.Pages < m.pagesLo || c.Pages > m.pagesHi
	if bad {
		note := ""
		if expP+expR > 0 {
			note = fmt.Sprintf(" (%d leases may have been taken back: Queued and Leased may move by that much)", expP+expR)
		}
		pages := fmt.Sprint(m.pagesLo)
		if m.pagesHi != m.pagesLo {
			pages = fmt.Sprintf("%d to %d", m.pagesLo, m.pagesHi)
		}
		r.fail("Counts = %+v, want {Queued:%d Leased:%d Done:%d Pages:%s}%s; %s",
			c, want.Queued, want.Leased, want.Done, pages, note, r.state())
	}
	m.pagesLo, m.pagesHi = c.Pages, c.Pages
}

// drain takes and acks what is left until Join returns. It acks the
// pages' leases at once and, when leases never expire, keeps the
// robots.txt leases while Takes still hand something out, so that Join is
// tried with only robots.txt leases out: once the budget is spent it must
// not wait for them.
func (r *runner) drain() {
	for range 1000 {
		for _, l := range slices.Clone(r.m.held) {
			if !l.robots {
				r.ack(fuzzOp{kind: opAck}, l)
			}
		}
		r.checkCounts()
		if r.m.p.LeaseTerm > 0 {
			// A robots.txt kept may be taken back and handed out
			// again, over and over.
			for len(r.m.held) > 0 {
				r.ack(fuzzOp{kind: opAck}, r.m.held[0])
			}
		}
		robots := len(r.m.held) > 0
		over, sure := r.m.over()
		if over && sure {
			if !robots {
				break
			}
			r.join(fuzzOp{kind: opJoin})
		}
		// With a robots.txt out, its host's URLs wait for it: a Take
		// may have nothing to give.
		d := 4 * shortWait
		if sure && !robots {
			d = mustWithin
		}
		began := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), d)
		var l *crawl.Lease
		err := r.within("Take", d+grace, func() (err error) { l, err = r.f.Take(ctx); return err })
		cancel()
		if err != nil {
			if sure && !robots && isCtxErr(err) {
				r.fail("taking what is left: Take still blocked after %v, want a lease: %s", d, r.state())
			}
			if !isCtxErr(err) {
				r.fail("taking what is left: Take got error %v, want a lease", err)
			}
			if !robots {
				break
			}
			for len(r.m.held) > 0 {
				r.ack(fuzzOp{kind: opAck}, r.m.held[0])
			}
			continue
		}
		r.took(l, began, time.Now())
		if q, _, _ := r.m.counts(time.Now()); q.Queued == 0 {
			// Nothing queued, a lease out: Join must wait for it.
			r.join(fuzzOp{kind: opJoin})
		}
	}
	r.join(fuzzOp{kind: opJoin})
	r.checkCounts()
}

// closeAndCheck checks the Results kept, closes the Frontier and checks
// that every method then returns ErrFrontierClosed.
func (r *runner) closeAndCheck() {
	if rs, ok := r.f.(crawl.ResultStore); ok {
		got := map[string]int{}
		err := r.bounded("Results", func(ctx context.Context) error {
			return rs.Results(ctx, func(res crawl.Result) bool { got[res.URL]++; return true })
		})
		if err != nil {
			r.fail("Results: got error %v, want nil", err)
		}
		for u, n := range r.m.results {
			if got[u] != n {
				r.fail("Results gave %d Results of %s, want %d: it was acked with one", got[u], u, n)
			}
		}
		for u, n := range got {
			if r.m.results[u] == 0 {
				r.fail("Results gave %d Results of %s, want none: no Ack of it with a Result succeeded", n, u)
			}
		}
	}
	if err := r.within("Close", mustWithin+grace, r.f.Close); err != nil {
		r.fail("Close: got error %v, want nil", err)
	}
	ctx := context.Background()
	l := &crawl.Lease{Request: page(hostA + "/p0"), ID: "x"}
	calls := map[string]func() error{
		"Push":   func() error { _, err := r.f.Push(ctx, page(hostA+"/closed")); return err },
		"Take":   func() error { _, err := r.f.Take(ctx); return err },
		"Ack":    func() error { _, err := r.f.Ack(ctx, l, crawl.Outcome{}); return err },
		"Retry":  func() error { return r.f.Retry(ctx, l, time.Time{}) },
		"Extend": func() error { return r.f.Extend(ctx, l) },
		"Join":   func() error { return r.f.Join(ctx) },
		"Counts": func() error { _, err := r.f.Counts(ctx); return err },
		"Close":  r.f.Close,
	}
	names := make([]string, 0, len(calls))
	for n := range calls {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if err := r.within(n, mustWithin+grace, calls[n]); !errors.Is(err, crawl.ErrFrontierClosed) {
			r.fail("%s after Close: got %v, want ErrFrontierClosed", n, err)
		}
	}
}

// state describes the model in failure messages.
func (r *runner) state() string {
	m := r.m
	var q, l []string
	for _, u := range m.urls {
		if u.state == queued {
			s := u.req.URL
			switch u.fresh {
			case notFresh:
				s += " (retry"
				if !u.at.IsZero() {
					s += fmt.Sprintf(" at %+v", time.Until(u.at).Round(time.Millisecond))
				}
				s += ")"
			case freshUnknown:
				s += " (retry or new)"
			}
			q = append(q, s)
		}
	}
	for _, x := range m.held {
		l = append(l, x.l.URL)
	}
	sort.Strings(q)
	sort.Strings(l)
	var hs []string
	for _, k := range m.sortedHosts() {
		h := m.hosts[k]
		s := k
		if m.p.Robots {
			switch {
			case h.open:
				s += " open"
			case h.robots != nil:
				s += " robots.txt leased"
			default:
				s += " robots.txt not yet taken"
			}
		}
		hs = append(hs, s)
	}
	return fmt.Sprintf("the model has queued [%s], leased [%s], %d done, %d to %d pages of MaxPages %d; hosts [%s]",
		strings.Join(q, ", "), strings.Join(l, ", "), m.done, m.pagesLo, m.pagesHi, m.p.MaxPages, strings.Join(hs, ", "))
}

// later returns the later of a and b.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
