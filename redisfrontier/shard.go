package redisfrontier

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/asyncrawl/crawl"
	"github.com/cespare/xxhash/v2"
	"github.com/redis/go-redis/v9"
)

// A crawl of several shards (Options.Shards) keeps its roots, scope and
// what is left of its page budget under its control keys,
// "crawl:{NAME}:", and each host's state under the keys of the host's
// shard, "crawl:{NAME:v}:", in the layout of a crawl of one shard
// restricted to the shard's hosts; docs/cluster.md tells every step.

// DefaultShards is the number of shards OpenCluster gives a crawl when
// Options.Shards is 0: with the 16,384 slots of a Redis Cluster spread
// over its masters, 256 hash tags give each of 3 masters close to a
// third of the hosts.
const DefaultShards = 256

// maxShards bounds Options.Shards: a Join reads every shard.
const maxShards = 4096

// probeWidth is the least number of shards a Take asks at once, those
// beyond its leases asked for none: the reply tells when each has work.
const probeWidth = 4

// shardPrefix returns the key prefix of shard v of crawl name.
func shardPrefix(name string, v int) string {
	return "crawl:{" + name + ":" + strconv.Itoa(v) + "}:"
}

// shardPattern returns the PSUBSCRIBE pattern of the channels of every
// shard of crawl name.
func shardPattern(name string) string {
	return "crawl:{" + globEscape(name) + ":*}:ev"
}

// shardOfChannel returns the shard whose channel ch is, or -1.
func (f *Frontier) shardOfChannel(ch string) int {
	f.mu.Lock()
	name, n := f.name, f.shards
	f.mu.Unlock()
	rest, ok := strings.CutPrefix(ch, "crawl:{"+name+":")
	if !ok {
		return -1
	}
	num, ok := strings.CutSuffix(rest, "}:ev")
	v, err := strconv.Atoi(num)
	if !ok || err != nil || v < 0 || v >= n {
		return -1
	}
	return v
}

// shardOf returns the shard of host key h in a crawl of n shards.
func shardOf(h string, n int) int {
	if n <= 1 {
		return 0
	}
	return int(xxhash.Sum64String(h) % uint64(n))
}

// sharded returns the crawl's number of shards if it has several, else 0.
func (f *Frontier) sharded() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.shards > 1 {
		return f.shards
	}
	return 0
}

// markDue records that shard v may have work now (v < 0: none).
func (f *Frontier) markDue(v int) {
	f.smu.Lock()
	defer f.smu.Unlock()
	if v >= 0 && v < len(f.due) {
		f.due[v] = 0
		f.hot[v] = true
	}
}

// markAllDue records that every shard may have work now.
func (f *Frontier) markAllDue() {
	f.smu.Lock()
	defer f.smu.Unlock()
	clear(f.due)
}

// leaseID returns the ID of lease id of shard v, as handed out: the shard,
// a slash, the shard's own ID.
func leaseID(v int, id string) string { return strconv.Itoa(v) + "/" + id }

// splitID returns the shard and the shard's own ID of a lease ID; ok is
// false if id is no lease of a crawl of n shards.
func splitID(id string, n int) (v int, own string, ok bool) {
	s, own, ok := strings.Cut(id, "/")
	if !ok {
		return 0, "", false
	}
	v, err := strconv.Atoi(s)
	if err != nil || v < 0 || v >= n {
		return 0, "", false
	}
	return v, own, true
}

// route returns the shard and own ID of lease id: in a crawl of one
// shard, -1 (the crawl's keys) and id; ok false if id is no lease of it.
func (f *Frontier) route(id string) (shard int, own string, ok bool) {
	n := f.sharded()
	if n == 0 {
		return -1, id, true
	}
	return splitID(id, n)
}

// startShards starts every shard of the crawl, after its control keys: it
// records the roots and scope on a shard made now, takes back this
// owner's leases and settles the hosts the budget held back. finAt is
// when the control keys say the crawl was found done (0: not); it returns
// it if the crawl is done as it was then, else 0.
func (f *Frontier) startShards(ctx context.Context, roots, scope string, bits uint, finAt int64) (int64, error) {
	n := f.sharded()
	f.smu.Lock()
	if len(f.due) != n {
		f.due = make([]int64, n)
		f.hot = make([]bool, n)
	}
	f.smu.Unlock()
	calls := make([]*call, n)
	for v := range calls {
		calls[v] = &call{shard: v, script: startScript, args: []any{roots, scope, bits, ""}}
	}
	if err := f.evalMany(ctx, calls); err != nil {
		return 0, err
	}
	for _, c := range calls {
		switch {
		case c.reply == "reset:":
			return 0, fmt.Errorf("redisfrontier: crawl %q: a Reset of it was cut short, its keys half deleted: Reset it again", f.Name())
		case strings.HasPrefix(c.reply, "other:"):
			return 0, fmt.Errorf("redisfrontier: crawl %q: a shard was started with other Roots or Scope: %w", f.Name(), errCorrupt)
		case !strings.HasPrefix(c.reply, "ok:") && !strings.HasPrefix(c.reply, "new:"):
			return 0, errCorrupt
		}
	}
	if _, _, p, _, _ := f.state(); p.MaxPages > 0 {
		// The budget may be another than the last Run's: the shards
		// give back what they hold, and each is granted a part of
		// this one when it needs it.
		all := make([]int, n)
		for v := range all {
			all[v] = v
		}
		if err := f.giveBack(ctx, all); err != nil {
			return 0, err
		}
	}
	if finAt == 0 {
		return 0, nil
	}
	st, _, err := f.collect(ctx)
	if err != nil {
		return 0, err
	}
	control, _, _, _, _ := f.state()
	var fd int64
	err = f.retryRead(ctx, control+"meta", func() error {
		var err error
		fd, err = f.rdb.HGet(ctx, control+"meta", "fd").Int64()
		return err
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return 0, err
	}
	var done int64
	for _, s := range st {
		if s.unf != 0 {
			return 0, nil
		}
		done += s.done
	}
	if done != fd {
		return 0, nil
	}
	return finAt, nil
}

// leased is a lease as a take script's reply gives it.
type leased struct {
	kind            byte
	id, extra, body string
}

// parseTake reads a take script's reply: the leases, and the
// microseconds until something may be taken (-1: nothing is timed).
func parseTake(reply string) ([]leased, int64, error) {
	r := fields{s: reply}
	k := int(r.int())
	got := make([]leased, 0, max(0, k))
	for range k {
		var l leased
		var err error
		l.kind, l.id, l.extra, l.body, err = leaseField(r.next())
		if r.err == nil && err != nil {
			r.err = err
		}
		if r.err != nil {
			break
		}
		got = append(got, l)
	}
	wait := r.int()
	return got, wait, r.err
}

// takeShards is takeN in a crawl of n shards: it asks the shards that may
// have work, in turn, for n leases in all, and at least probeWidth shards
// at once (those beyond n for none: their replies say when they have
// work).
func (f *Frontier) takeShards(ctx context.Context, n, shards int) ([]*crawl.Lease, time.Duration, error) {
	now := time.Now().UnixMicro()
	f.smu.Lock()
	if len(f.due) != shards {
		f.due = make([]int64, shards)
		f.hot = make([]bool, shards)
	}
	if time.Since(f.probed) >= f.idle {
		// The other processes' wake-ups may be lost while a server is
		// unreachable: ask every shard now and then.
		f.probed = time.Now()
		clear(f.due)
	}
	// The shards known to have work first, then those not known to have
	// none, each in turn from the cursor, so that the hosts of every
	// shard take turns.
	var cands, rest []int
	next := int64(math.MaxInt64)
	for i := range shards {
		v := (f.cursor + i) % shards
		switch {
		case f.due[v] > now:
			next = min(next, f.due[v])
		case f.hot[v]:
			cands = append(cands, v)
		default:
			rest = append(rest, v)
		}
	}
	cands = append(cands, rest...)
	k := min(len(cands), max(n, probeWidth))
	cands = cands[:k]
	if k > 0 {
		f.cursor = (cands[0] + 1) % shards
	}
	f.smu.Unlock()
	if k == 0 {
		if next == math.MaxInt64 {
			return nil, -1, nil
		}
		return nil, time.Duration(next-now) * time.Microsecond, nil
	}
	token := leaseToken()
	secs := make([]*section, k)
	for i, v := range cands {
		want := 0
		if i < n {
			// n leases, one a shard: the shards take turns.
			want = 1 + (n-1-i)/k
		}
		args := make([]any, 0, 2+want)
		args = append(args, want, token)
		for range want {
			args = append(args, randomArg())
		}
		secs[i] = &section{shard: v, args: args}
	}
	calls := f.sectionCalls(ctx, takeManyScript, secs)
	if err := f.runSections(ctx, calls); err != nil {
		if ctx.Err() != nil {
			// As takeN: the calls may have leased; give back what
			// they took, sent again under their numbers.
			f.graceWait(func() {
				defer f.endCalls(calls)
				uctx, cancel := f.bgCtx(time.Minute)
				defer cancel()
				if f.runSections(uctx, calls) != nil {
					return // they expire after their term, or go back at Close
				}
				for _, sec := range secs {
					got, _, _ := parseTake(sec.reply)
					for _, g := range got {
						f.release(&crawl.Lease{ID: leaseID(sec.shard, g.id)})
					}
				}
			})
		} else {
			f.endCalls(calls)
		}
		return nil, 0, err
	}
	f.endCalls(calls)
	if f.afterTakeScript != nil {
		f.afterTakeScript()
	}
	type got struct {
		shard int
		leased
	}
	var all []got
	var perr error
	after := time.Now().UnixMicro()
	f.smu.Lock()
	for _, c := range secs {
		ls, wait, err := parseTake(c.reply)
		if err != nil && perr == nil {
			perr = err
		}
		for _, l := range ls {
			all = append(all, got{c.shard, l})
		}
		want := c.args[0].(int)
		f.hot[c.shard] = false
		switch {
		case err != nil || len(ls) > 0 && len(ls) >= want:
			f.due[c.shard] = 0 // it may have more
			f.hot[c.shard] = err == nil
		case len(ls) > 0:
			f.due[c.shard] = after // it ran out: asked again next time
		case wait < 0:
			f.due[c.shard] = math.MaxInt64 // until it says it has work
		default:
			f.due[c.shard] = after + wait
			f.hot[c.shard] = wait == 0
		}
	}
	next = int64(math.MaxInt64)
	for _, d := range f.due {
		next = min(next, d)
	}
	f.smu.Unlock()
	ids := make([]string, len(all))
	ls := make([]leased, len(all))
	for i, g := range all {
		ids[i] = leaseID(g.shard, g.id)
		ls[i] = g.leased
	}
	leases, err := f.makeLeases(ctx, ls, ids, perr)
	if err != nil {
		return nil, 0, err
	}
	if len(leases) == 0 {
		if _, _, p, _, _ := f.state(); p.MaxPages > 0 && f.balanceDue() {
			// The shards with work may hold no part of the budget.
			if moved, err := f.rebalance(ctx); err != nil {
				return nil, 0, err
			} else if moved {
				return nil, 0, nil
			}
		}
	}
	switch {
	case len(leases) > 0 || next <= after:
		return leases, 0, nil
	case next == math.MaxInt64:
		return leases, -1, nil
	}
	return leases, time.Duration(next-after) * time.Microsecond, nil
}

// makeLeases makes the Leases of what a take script leased, got, handed
// out under ids, reading their hosts' rules. The script has leased: from
// here the call completes, whatever ctx, or gives the leases back (as if
// never taken) and returns the error, so that no lease is left out with no
// holder; perr, the reply's, is such an error. The rules are read with a
// ctx that ctx's end does not cut at once (see rulesCtx).
func (f *Frontier) makeLeases(ctx context.Context, got []leased, ids []string, perr error) ([]*crawl.Lease, error) {
	giveBack := func(err error) ([]*crawl.Lease, error) {
		f.graceWait(func() {
			for _, id := range ids {
				f.release(&crawl.Lease{ID: id})
			}
		})
		return nil, err
	}
	if perr != nil {
		return giveBack(perr)
	}
	rctx, cancel := f.rulesCtx(ctx)
	defer cancel()
	leases := make([]*crawl.Lease, 0, len(got))
	for i, g := range got {
		l := &crawl.Lease{ID: ids[i]}
		if g.kind == 'R' {
			tries, _ := strconv.Atoi(g.extra)
			l.Request = crawl.Request{URL: g.body + "/robots.txt", Kind: crawl.RobotsRequest, Tries: tries}
		} else {
			req, err := decodeRequest(g.body)
			if err != nil {
				return giveBack(err)
			}
			l.Request = req
			if g.extra != "" {
				if l.Rules, err = f.hostRules(rctx, crawl.HostKey(req.URL), g.extra); err != nil {
					return giveBack(err)
				}
			}
		}
		leases = append(leases, l)
	}
	return leases, nil
}

// shardState is what a Join and the budget's balance read of a shard.
type shardState struct {
	unf, fresh, pages, cg, cb, done, lseq int64
}

// collect reads every shard's counters and the budget, in one pipeline.
func (f *Frontier) collect(ctx context.Context) ([]shardState, budgetState, error) {
	n := f.sharded()
	f.mu.Lock()
	prefixes, control := f.sprefix, f.prefix
	f.mu.Unlock()
	var (
		hm []*redis.SliceCmd
		bh *redis.MapStringStringCmd
	)
	err := f.retryRead(ctx, "", func() error {
		hm = hm[:0]
		_, err := f.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for v := range n {
				hm = append(hm, p.HMGet(ctx, prefixes[v]+"meta", "unfinished", "fresh", "pages", "cg", "cb", "done", "lseq", "sb"))
			}
			bh = p.HGetAll(ctx, control+"budget")
			return nil
		})
		return err
	})
	if err != nil {
		return nil, budgetState{}, err
	}
	st := make([]shardState, n)
	for v := range st {
		x := hm[v].Val()
		if x[7] == nil {
			return nil, budgetState{}, f.deleted()
		}
		st[v] = shardState{unf: num(x[0]), fresh: num(x[1]), pages: num(x[2]), cg: num(x[3]),
			cb: num(x[4]), done: num(x[5]), lseq: num(x[6])}
	}
	b := budgetState{g: make([]int64, n), b: make([]int64, n)}
	for k, val := range bh.Val() {
		x, _ := strconv.ParseInt(val, 10, 64)
		if k == "net" {
			b.net = x
			continue
		}
		kind, vs, _ := strings.Cut(k, ":")
		v, err := strconv.Atoi(vs)
		if err != nil || v < 0 || v >= n {
			continue
		}
		switch kind {
		case "g":
			b.g[v] = x
		case "b":
			b.b[v] = x
		}
	}
	return st, b, nil
}

// joinShards is Join in a crawl of several shards: it reads every shard
// twice, and returns when both reads find nothing leased, waiting to be
// retried or (unless the budget is spent) queued, and no shard changed
// between the two: so at a moment between them nothing was pending on any
// shard at once, and work never comes from nothing (a link of one shard's
// page is admitted on its own shard before the page's lease ends).
func (f *Frontier) joinShards(ctx context.Context) error {
	for {
		_, _, p, _, err := f.state()
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		// Read again when a shard says the crawl may be over ("j", as
		// in Join), or after idlePoll: each read asks every shard.
		ev := f.joinEvents()
		st1, b, err := f.collect(ctx)
		if err != nil {
			return err
		}
		spent := false // this process's budget, with nothing leased
		if quiet(st1) {
			st2, _, err := f.collect(ctx)
			if err != nil {
				return err
			}
			var fresh, pages, done int64
			for _, s := range st2 {
				fresh += s.fresh
				pages += s.pages
				done += s.done
			}
			spent = quiet(st2) && p.MaxPages > 0 && pages >= int64(p.MaxPages)
			if quiet(st2) && slices.Equal(st1, st2) {
				if fresh == 0 {
					return f.finish(ctx, false, done)
				}
				if p.MaxPages > 0 && pages >= int64(p.MaxPages) {
					return f.finish(ctx, true, done)
				}
				if moved, err := f.balance(ctx, st2, b); err != nil {
					return err
				} else if moved {
					continue
				}
			}
		}
		// Work is left for this process (see Join), unless its budget
		// is spent and the counters only moved between the reads.
		if !spent {
			if err := f.keepIfExpiring(ctx); err != nil {
				return err
			}
		}
		if err := f.await(ctx, ev, f.idle); err != nil {
			return err
		}
	}
}

// quiet reports whether no shard has a lease out or a retry waiting.
func quiet(st []shardState) bool {
	for _, s := range st {
		if s.unf != s.fresh {
			return false
		}
	}
	return true
}

// pushShards is Push in a crawl of n shards: each shard admits the
// Requests of its hosts, in calls of at most maxBatch, run together. A
// Push cut by ctx is completed (within rulesGrace) rather than left made
// on some masters and not on others.
func (f *Frontier) pushShards(ctx context.Context, reqs []crawl.Request, bits uint, n int) (int, error) {
	by := make(map[int][]admission)
	for _, a := range admissions(reqs, bits) {
		v := shardOf(a.host, n)
		by[v] = append(by[v], a)
	}
	var calls []*call
	for v, as := range by {
		for len(as) > 0 {
			k := min(len(as), maxBatch)
			seq, low := f.beginOp()
			defer f.endOp(seq)
			calls = append(calls, &call{shard: v, script: pushScript, seq: seq, low: low,
				args: appendAdmissions([]any{"-"}, as[:k])})
			as = as[k:]
		}
	}
	if err := f.evalMany(ctx, calls); err != nil {
		if ctx.Err() == nil {
			return 0, err
		}
		// Cut by ctx, the calls to some masters may have been made and
		// others not: a Push is made whole or not at all, so those
		// made are completed by the others (sent again, a call made
		// replays its reply), given rulesGrace.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), rulesGrace)
		defer cancel()
		if f.evalMany(cctx, calls) == nil {
			f.notify()
		}
		return 0, ctx.Err()
	}
	total := 0
	for _, c := range calls {
		r := fields{s: c.reply}
		r.next()
		k := r.int()
		if r.err != nil {
			return total, r.err
		}
		total += int(k)
		if k > 0 {
			f.markDue(c.shard) // before the shard's event comes back
		}
	}
	if total > 0 {
		f.notify()
	}
	return total, nil
}

// flushShards sends a batch of Acks in a crawl of n shards: first the
// links of other shards than their lease's, each admitted on its own
// shard; then, on each lease's shard, the acks with the links of that
// shard. A link is so counted on its shard before its page's lease ends:
// a process that dies between the two leaves the lease to expire and the
// page to be fetched again, its links seen already.
func (f *Frontier) flushShards(batch []*pendingAck, n int) {
	ctx := f.life
	local := make([][]admission, len(batch))
	foreign := make([]int, len(batch))
	type group struct {
		ack   int
		links []admission
	}
	groups := map[int][]group{}
	for i, a := range batch {
		other := map[int][]admission{}
		for _, l := range a.links {
			if v := shardOf(l.host, n); v == a.shard {
				local[i] = append(local[i], l)
			} else {
				other[v] = append(other[v], l)
			}
		}
		for v, ls := range other {
			groups[v] = append(groups[v], group{i, ls})
		}
	}
	finish := func(err error) {
		for _, a := range batch {
			a.err = err
			close(a.done)
		}
	}
	var pushes []*section
	var pushed [][]group
	for v, gs := range groups {
		args := []any{"-", len(gs)}
		for _, g := range gs {
			args = appendAdmissions(args, g.links)
		}
		pushes = append(pushes, &section{shard: v, args: args})
		pushed = append(pushed, gs)
	}
	if len(pushes) > 0 {
		calls := f.sectionCalls(ctx, pushGroupsScript, pushes)
		err := f.runSections(ctx, calls)
		f.endCalls(calls)
		if err != nil {
			finish(err)
			return
		}
	}
	for i, c := range pushes {
		counts := strings.Fields(c.reply)
		if len(counts) != len(pushed[i]) {
			finish(errCorrupt)
			return
		}
		for j, g := range pushed[i] {
			k, err := strconv.Atoi(counts[j])
			if err != nil {
				finish(errCorrupt)
				return
			}
			foreign[g.ack] += k
			if k > 0 {
				f.markDue(c.shard)
			}
		}
	}
	if f.afterForward != nil {
		f.afterForward()
	}
	byShard := map[int][]int{}
	for i, a := range batch {
		if a.shard >= 0 {
			byShard[a.shard] = append(byShard[a.shard], i)
		}
	}
	var acks []*section
	var acked [][]int
	for v, is := range byShard {
		these := make([]*pendingAck, len(is))
		for j, i := range is {
			these[j] = batch[i]
		}
		args := appendAcks([]any{"-"}, these, func(j int) []admission { return local[is[j]] })
		acks = append(acks, &section{shard: v, args: args})
		acked = append(acked, is)
	}
	if len(acks) > 0 {
		calls := f.sectionCalls(ctx, ackManyScript, acks)
		err := f.runSections(ctx, calls)
		f.endCalls(calls)
		if err != nil {
			finish(err)
			return
		}
	}
	for i, c := range acks {
		toks := strings.Fields(c.reply)
		if len(toks) != len(acked[i]) {
			finish(errCorrupt)
			return
		}
		for j, k := range acked[i] {
			tok := toks[j]
			a := batch[k]
			if len(tok) < 2 {
				finish(errCorrupt)
				return
			}
			a.owned = tok[0] == '1'
			m, err := strconv.Atoi(tok[1:])
			if err != nil {
				finish(errCorrupt)
				return
			}
			a.admitted = m
		}
	}
	for i, a := range batch {
		a.admitted += foreign[i]
		close(a.done)
	}
}

// countShards is Counts in a crawl of several shards: the sums of the
// shards' counters, read in one pipeline (not at one instant: a URL may
// move between two shards' counts while they are read).
func (f *Frontier) countShards(ctx context.Context) (crawl.Counts, error) {
	f.mu.Lock()
	prefixes := f.sprefix
	f.mu.Unlock()
	var (
		hm []*redis.SliceCmd
		hl []*redis.IntCmd
	)
	err := f.retryRead(ctx, "", func() error {
		hm, hl = hm[:0], hl[:0]
		_, err := f.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, pre := range prefixes {
				hm = append(hm, p.HMGet(ctx, pre+"meta", "queued", "done", "pages", "sb"))
				hl = append(hl, p.HLen(ctx, pre+"leases"))
			}
			return nil
		})
		return err
	})
	if err != nil {
		return crawl.Counts{}, err
	}
	var c crawl.Counts
	for i := range hm {
		v := hm[i].Val()
		if v[3] == nil {
			// Every crawl's meta hash has sb: gone, the crawl was
			// deleted (reset, or its keys expired), not empty.
			return crawl.Counts{}, f.deleted()
		}
		c.Queued += int(num(v[0]))
		c.Done += int(num(v[1]))
		c.Pages += int(num(v[2]))
		c.Leased += int(hl[i].Val())
	}
	return c, nil
}
