package redisfrontier

import (
	"strconv"
	"strings"
	"time"

	"github.com/asyncrawl/crawl"
)

// Leases ahead. A host at Policy.HostWorkers has every slot held, and a
// slot that an Ack frees is leased again by the next script call at best:
// a round trip during which the host has a request fewer than it may. So
// a process whose Takes wait for work (starved: its last call that leased
// for them had fewer leases than Takes) asks, with each lease of a host
// that may start requests back to back (no page budget, no delay, not
// paused), for the host's next new Request too: a lease ahead, which holds
// no slot of the host. When the lease it follows is acked, the lease ahead
// is handed at once to a Take waiting (or kept for the AckTake's caller),
// and the Ack's call promotes it to the slot the acked lease leaves: the
// slot goes from one request to the next with no round trip between, and
// the host's leases out never exceed HostWorkers. A lease ahead that no
// Take waits for when its lease is acked goes back in that call, as if
// never taken; one whose lease is retried, released or taken back, or
// whose host is paused, goes back too.
//
// A lease ahead is leased on the server (in Counts.Leased and Inspect of
// the other processes, its term renewed with its lease's), but no caller
// holds it: this process's Counts leave it out (see Counts).

// The indexes, in a pendingAck's args, of what becomes of the lease ahead
// of its lease, and of the leases ahead asked for the one promoted (see
// ackScript).
const (
	aheadOp  = 6
	aheadTok = 7
)

// aheadDepth is how many leases ahead a lease may have: enough for the
// requests a slot runs, back to back, while its Ack's call is on its way.
const aheadDepth = 4

// chain is the leases ahead of one lease, in order, and their host; the
// lease it belongs to changes as each of its Acks hands the first out, to
// the lease that first becomes. f.amu guards it.
type chain struct {
	ls   []*crawl.Lease
	host string
	dead bool   // its lease ended otherwise: what comes for it goes back
	to   *chain // what comes for it goes there (see aheadFor)
	// slotless marks a lease handed to a Take whose promotion failed
	// (kind S on the server): it holds no slot of its host, so its end
	// frees none, and takes no lease ahead (see promoted). Such a chain
	// has no host and no leases.
	slotless bool
	// at is when the call that last set the term of its leases was
	// sent, on this process's clock: their term ends after at +
	// Policy.LeaseTerm on the server's (see fresh).
	at time.Time
}

// fresh reports whether c's leases are surely still this process's, with
// a margin: their term (Policy.LeaseTerm, 0 for none) set less than half
// of it ago. A process stopped longer than the term (a SIGSTOP, a VM
// paused, a long GC) finds them not fresh as it resumes: another process
// may have taken them back and started their Requests, so they are not
// handed to a Take (see handOff). The leases a worker holds are extended
// every third of the term, and theirs with them (see renewedAhead).
func (f *Frontier) fresh(c *chain) bool {
	term := time.Duration(f.term.Load())
	return term <= 0 || time.Since(c.at) < term/2
}

// renewedAhead records that the term of the leases ahead of lease id was
// set by a call sent at sent (an Extend of id).
func (f *Frontier) renewedAhead(id string, sent time.Time) {
	f.amu.Lock()
	defer f.amu.Unlock()
	if c := f.ahead[id]; c != nil && sent.After(c.at) {
		c.at = sent
	}
}

// end returns the chain that what comes for c goes to.
func (c *chain) end() *chain {
	for c.to != nil {
		c = c.to
	}
	return c
}

// ids returns the IDs of c's leases, comma separated.
func (c *chain) ids() string { return joinIDs(c.ls) }

// drop ends c: it marks it dead and appends the IDs of its leases to
// back, to give back.
func (c *chain) drop(back []string) []string {
	c.dead = true
	if len(c.ls) > 0 {
		back = append(back, c.ids())
	}
	c.ls = nil
	return back
}

// keepAhead takes the leases ahead out of leases, the Leases made of got
// by a call sent at sent, keeping each for the lease before it.
func (f *Frontier) keepAhead(got []leased, leases []*crawl.Lease, sent time.Time) []*crawl.Lease {
	if len(got) != len(leases) {
		return leases
	}
	has := false
	for _, g := range got {
		has = has || g.kind == 'S'
	}
	if !has {
		return leases
	}
	out := make([]*crawl.Lease, 0, len(leases))
	var stray []*crawl.Lease
	f.amu.Lock()
	var c *chain
	for i, l := range leases {
		switch {
		case got[i].kind != 'S':
			out = append(out, l)
			c = nil
		case len(out) > 0 && (got[i-1].kind == 'P' || c != nil):
			if c == nil {
				p := out[len(out)-1]
				c = &chain{host: crawl.HostKey(p.URL), at: sent}
				f.ahead[p.ID] = c
			}
			c.ls = append(c.ls, l)
		default:
			stray = append(stray, l) // follows no page: never handed out
		}
	}
	f.amu.Unlock()
	for _, l := range stray {
		f.release(l)
	}
	return out
}

// aheadFor removes and returns, as l ends by an Ack, the lease ahead to
// promote to its slot, and the chain the promoted lease is to have: the
// first of l's own, and the rest; or, if l has none, one of its host's
// that another lease has, and a chain of its own. The server leases ahead
// only for a host at HostWorkers; a lease that ends with none leaves the
// host room, and a Take must not wait for a Request held ahead then: the
// Request goes into the slot. f.amu is held.
func (f *Frontier) aheadFor(l *crawl.Lease) (*crawl.Lease, *chain) {
	if c := f.ahead[l.ID]; c != nil {
		delete(f.ahead, l.ID)
		if c.slotless {
			return nil, nil // what it would promote would take a slot more
		}
		if len(c.ls) > 0 {
			s := c.ls[0]
			c.ls = c.ls[1:]
			return s, c
		}
		// The leases ahead on their way for it go to another lease of
		// its host, or back.
		c.dead = true
		for _, o := range f.ahead {
			if o.host == c.host {
				c.dead, c.to = false, o
				break
			}
		}
	}
	if len(f.ahead) == 0 || l.URL == "" || l.Kind == crawl.RobotsRequest {
		return nil, nil
	}
	host := crawl.HostKey(l.URL)
	for _, c := range f.ahead {
		if c.host == host && len(c.ls) > 0 {
			s := c.ls[len(c.ls)-1]
			c.ls = c.ls[:len(c.ls)-1]
			return s, &chain{host: host, at: c.at}
		}
	}
	return nil, nil
}

// handOff decides, as the lease that a acks ends, what becomes of s, the
// lease ahead aheadFor gave with c: handed to a Take waiting, which has c
// from now on, or kept for a's AckTake caller,
// it is promoted by a's call; else, or if their term may have ended (see
// fresh), a's call gives it back, and c's leases with it. f.amu is held;
// a is not sent yet.
func (f *Frontier) handOff(a *pendingAck, s *crawl.Lease, c *chain) {
	var w taker
	stale := !f.fresh(c)
	if !f.isClosing() && !stale {
		f.tmu.Lock()
		// A waiter a call has reserved may be served too: that call
		// gives back what it brings for no one.
		if n := len(f.waiters); n > 0 {
			w = f.waiters[n-1]
			f.waiters = f.waiters[:n-1]
		}
		f.tmu.Unlock()
	}
	switch {
	case w != nil:
		a.chain = c
		f.ahead[s.ID] = c
		a.args[aheadOp] = promoteOp("+", s, c)
		w <- s // size 1: never blocks
	case a.take != nil && a.take.Err() == nil && !f.isClosing() && !stale:
		// Handed out after the call, which gives it back instead if its
		// host was paused meanwhile (by this process or another).
		a.ahead, a.aheadTo, a.take, a.chain = s, a.take, nil, c
		a.args[aheadOp] = promoteOp("?", s, c)
	default:
		c.dead = true
		ids := s.ID
		if len(c.ls) > 0 {
			ids += "," + c.ids()
		}
		c.ls = nil
		a.args[aheadOp] = "-" + ids
	}
}

// promoteOp returns the ack entry's op that promotes s, c's leases
// behind it: renewed with it, so that a chain handed from holder to holder
// quicker than the crawler extends (see Frontier.Extend) does not outlive
// its term. how is "+" for a lease ahead handed out already, "?" for one
// handed out after the call, which the server gives back instead if its
// host may not start it then (see ackScript).
func promoteOp(how string, s *crawl.Lease, c *chain) string {
	if len(c.ls) == 0 {
		return how + s.ID
	}
	return how + s.ID + "," + c.ids()
}

// opPromotes returns what of ack op the server promotes (its ID, then
// its chain's), and whether the op promotes at all (see promoteOp).
func opPromotes(op string) (string, bool) {
	if strings.HasPrefix(op, "+") || strings.HasPrefix(op, "?") {
		return op[1:], true
	}
	return "", false
}

// takeAhead removes and returns the leases ahead to give back as l ends
// otherwise than by an Ack: its own, or, if it has none, one of its
// host's, which another lease has (see aheadFor). A slotless lease has
// none to give, and keeps its mark until its call succeeds (endAhead): a
// call that fails leaves it slotless still.
func (f *Frontier) takeAhead(l *crawl.Lease) []*crawl.Lease {
	f.amu.Lock()
	defer f.amu.Unlock()
	if c := f.ahead[l.ID]; c != nil {
		if c.slotless {
			return nil // it frees no slot (see aheadFor)
		}
		delete(f.ahead, l.ID)
		c.dead = true
		ls := c.ls
		c.ls = nil
		if len(ls) > 0 {
			return ls
		}
	}
	if s, _ := f.aheadFor(&crawl.Lease{Request: l.Request}); s != nil {
		return []*crawl.Lease{s}
	}
	return nil
}

// endAhead forgets the slotless mark of l (see takeAhead), its lease
// ended by a Retry or a release.
func (f *Frontier) endAhead(l *crawl.Lease) {
	f.amu.Lock()
	if c := f.ahead[l.ID]; c != nil && c.slotless {
		delete(f.ahead, l.ID)
	}
	f.amu.Unlock()
}

// putAhead keeps ls, as takeAhead returned them, for l again: a call that
// would have given them back failed.
func (f *Frontier) putAhead(l *crawl.Lease, ls []*crawl.Lease) {
	if len(ls) == 0 {
		return
	}
	f.amu.Lock()
	f.ahead[l.ID] = &chain{ls: ls, host: crawl.HostKey(l.URL)}
	f.amu.Unlock()
}

// joinIDs returns the IDs of ls, comma separated, as the scripts read a
// list of leases ahead.
func joinIDs(ls []*crawl.Lease) string {
	var b strings.Builder
	for i, l := range ls {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(l.ID)
	}
	return b.String()
}

// aheadIDs returns the IDs of the leases ahead of lease id, comma
// separated.
func (f *Frontier) aheadIDs(id string) string {
	f.amu.Lock()
	defer f.amu.Unlock()
	if c := f.ahead[id]; c != nil {
		return c.ids()
	}
	return ""
}

// aheadWanted returns how many leases ahead the promotion that a's call
// makes asks for, with the call's token: as many as its chain lacks, if
// the process is starved (see Frontier.starved). f.amu is held.
func (f *Frontier) aheadWanted(a *pendingAck, tok string) string {
	if a.chain == nil || a.chain.end().dead {
		return ""
	}
	k := aheadDepth - len(a.chain.end().ls)
	if k <= 0 {
		return ""
	}
	return strconv.Itoa(k) + "." + tok
}

// promoted reads the reply's field of the leases ahead that the acks of
// batch promoted, out (err: the call's), and settles each: the one kept
// for an AckTake's caller is its next lease, or goes back if the caller
// no longer waits for it; the leases ahead made for a promoted one go to
// its chain, or back if the chain's lease has ended.
func (f *Frontier) promoted(batch []*pendingAck, out string, err error, sent time.Time) {
	r := fields{s: out}
	var back []string
	closing := f.isClosing()
	for _, a := range batch {
		op, _ := a.args[aheadOp].(string)
		id, ok := opPromotes(op)
		if !ok {
			continue
		}
		id, _, _ = strings.Cut(id, ",") // the rest: its chain, renewed
		field := ""
		if err == nil {
			field = r.next()
		}
		done := err == nil && r.err == nil && strings.HasPrefix(field, "1")
		var made []*crawl.Lease
		if done && len(field) > 1 {
			var got []leased
			var ids []string
			for fr := (fields{s: field[1:]}); fr.err == nil && fr.s != ""; {
				kind, nid, extra, body, perr := leaseField(fr.next())
				if fr.err != nil || perr != nil || kind != 'S' {
					break
				}
				got = append(got, leased{kind: kind, id: nid, extra: extra, body: body})
				ids = append(ids, nid)
			}
			if ls, lerr := f.makeLeases(f.life, got, ids, nil); lerr == nil {
				made = ls
			}
		}
		f.amu.Lock()
		c := a.chain
		if c != nil {
			c = c.end()
			if done && sent.After(c.at) {
				c.at = sent // its leases renewed with the one promoted
			}
		}
		if a.ahead != nil {
			// Kept for the AckTake's caller.
			if done && a.aheadTo != nil && a.aheadTo.Err() == nil && !closing && a.err == nil {
				a.next = a.ahead
				f.ahead[id] = c
			} else {
				c.dead = true
				if done || err != nil {
					// Promoted, or, the call failed, maybe not:
					// either way no one holds it.
					back = append(back, a.ahead.ID)
				}
				c.ls = append(c.ls, made...)
				made = nil
				back = c.drop(back)
			}
		}
		if err != nil && a.ahead == nil && c != nil && !c.dead {
			// Handed to a Take, its promotion failed: it holds no
			// slot, and no lease ahead may take one behind it (nor
			// those a Retry of it that failed kept for it).
			back = c.drop(back)
			if o := f.ahead[id]; o != nil && o != a.chain {
				back = o.drop(back)
			}
			f.ahead[id] = &chain{dead: true, slotless: true}
		}
		if len(made) > 0 {
			if c == nil || c.dead || closing {
				for _, l := range made {
					back = append(back, l.ID)
				}
			} else {
				c.ls = append(c.ls, made...)
			}
		}
		f.amu.Unlock()
	}
	if len(back) > 0 {
		f.giveAhead(strings.Join(back, ","))
	}
}

// giveAhead releases the leases ahead of ids (comma separated), as if never
// taken.
func (f *Frontier) giveAhead(ids string) {
	ctx, cancel := f.bgCtx(time.Minute)
	defer cancel()
	seq, low := f.beginOp()
	defer f.endOp(seq)
	f.evalOn(ctx, -1, retryScript, seq, low, "", 0, "", 0, "1", ids) // lost: they expire
}
