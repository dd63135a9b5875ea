package redisfrontier

import (
	"context"
	"errors"
	"fmt"
	"math"
	mrand "math/rand/v2"
	"strconv"
	"strings"
	"sync"
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

// budgetChunk is the most pages of the budget a shard is granted at once.
const budgetChunk = 32

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

// callArgs returns the keys and arguments of a script call on shard (-1:
// the control keys): the common arguments (see scripts.go), then args.
func (f *Frontier) callArgs(shard int, seq, low uint64, args []any) ([]string, []any, error) {
	return f.callArgsOf(&call{shard: shard, seq: seq, low: low, args: args})
}

// callArgsOf is callArgs for c: a call on several shards has, as its own
// arguments, its sections (see many in scripts.go).
func (f *Frontier) callArgsOf(c *call) ([]string, []any, error) {
	shard, seq, low, args := c.shard, c.seq, c.low, c.args
	f.mu.Lock()
	if c.secs != nil && f.sprefix != nil {
		n := 1
		for _, sec := range c.secs {
			n += 2 + len(sec.args)
		}
		args = make([]any, 0, n)
		args = append(args, len(c.secs))
		for _, sec := range c.secs {
			args = append(args, f.sprefix[sec.shard], len(sec.args))
			args = append(args, sec.args...)
		}
	}
	var err error
	switch {
	case f.closed:
		err = crawl.ErrFrontierClosed
	case f.name == "":
		err = errors.New("redisfrontier: Start was not called")
	}
	prefix, keys, p, n := f.prefix, f.keys, f.policy, f.shards
	if shard >= 0 && n > 1 {
		prefix = f.sprefix[shard]
		keys = []string{prefix + "meta"}
	}
	f.mu.Unlock()
	if err != nil {
		return nil, nil, err
	}
	robots := "0"
	if p.Robots {
		robots = "1"
	}
	maxPages := max(0, p.MaxPages)
	if shard >= 0 && n > 1 && maxPages > 0 {
		maxPages = -1 // the shard's own part of the budget
	}
	all := append([]any{prefix, f.owner, seq, low,
		p.HostWorkers, p.HostDelay.Microseconds(), robots, maxPages, p.LeaseTerm.Microseconds()}, args...)
	return keys, all, nil
}

// call is one script call of several run together by evalMany.
type call struct {
	shard    int // -1: the control keys
	script   *redis.Script
	seq, low uint64
	args     []any
	reply    string
	full     bool       // sent with its source (EVAL), the node lacking it
	secs     []*section // a call on several shards of one node: its sections
}

// section is one shard's part of a call on several shards of one node
// (takeManyScript, ackManyScript, pushGroupsScript): the shard's own
// arguments, and its reply.
type section struct {
	shard int
	args  []any
	reply string
}

// errNonLocal is the error of a call on several shards one of which the
// node it went to does not serve (its slots moved): the call wrote
// nothing, and goes again split.
var errNonLocal = errors.New("redisfrontier: a shard of the call is not on its node")

// sectionCalls returns the calls of script that run secs, one a node (as
// the client knows the cluster's slots; one in all on a single server),
// each numbered for replay: the caller ends them with endCalls.
func (f *Frontier) sectionCalls(ctx context.Context, script *redis.Script, secs []*section) []*call {
	groups := map[string][]*section{}
	var order []string
	f.mu.Lock()
	prefixes := f.sprefix
	f.mu.Unlock()
	cc, _ := f.rdb.(*redis.ClusterClient)
	for _, sec := range secs {
		node := ""
		if cc != nil {
			c, err := cc.MasterForKey(ctx, prefixes[sec.shard]+"meta")
			if err != nil {
				node = "?" + strconv.Itoa(sec.shard) // a call of its own
			} else {
				node = c.Options().Addr
			}
		}
		if _, ok := groups[node]; !ok {
			order = append(order, node)
		}
		groups[node] = append(groups[node], sec)
	}
	calls := make([]*call, 0, len(order))
	for _, node := range order {
		g := groups[node]
		seq, low := f.beginOp()
		calls = append(calls, &call{shard: g[0].shard, script: script, seq: seq, low: low, secs: g})
	}
	return calls
}

// endCalls ends the replay numbers of calls.
func (f *Frontier) endCalls(calls []*call) {
	for _, c := range calls {
		f.endOp(c.seq)
	}
}

// runSections runs calls (from sectionCalls) together and sets the reply
// of each of their sections. A call that finds one of its shards on
// another node, having written nothing, goes again as one call a section.
func (f *Frontier) runSections(ctx context.Context, calls []*call) error {
	err := f.evalMany(ctx, calls)
	if errors.Is(err, errNonLocal) {
		script := calls[0].script
		var secs []*section
		for _, c := range calls {
			secs = append(secs, c.secs...)
		}
		calls = make([]*call, len(secs))
		for i, sec := range secs {
			seq, low := f.beginOp()
			defer f.endOp(seq)
			calls[i] = &call{shard: sec.shard, script: script, seq: seq, low: low, secs: []*section{sec}}
		}
		err = f.evalMany(ctx, calls)
	}
	if err != nil {
		return err
	}
	for _, c := range calls {
		r := fields{s: c.reply}
		for _, sec := range c.secs {
			sec.reply = r.next()
		}
		if r.err != nil {
			return r.err
		}
	}
	return nil
}

// evalMany runs calls in one pipeline (one round trip to each master of a
// cluster), trying again those that fail while the server is unreachable
// or not ready, as evalOn does, until ctx is done or the Frontier closed.
// It sets each call's reply, or returns the first error that is not
// transient.
func (f *Frontier) evalMany(ctx context.Context, calls []*call) error {
	pending := calls
	backoff := 10 * time.Millisecond
	for len(pending) > 0 {
		errs, perr := f.pipeline(ctx, pending)
		if perr != nil {
			return perr
		}
		var again []*call
		wait := false
		for i, c := range pending {
			err := errs[i]
			switch {
			case err == nil:
			case redis.HasErrorPrefix(err, "NOSCRIPT"):
				// A node that has not seen the script (a replica
				// promoted since, a server restarted): sent again at
				// once with its source, which the node then keeps.
				c.full = true
				again = append(again, c)
			case ctx.Err() != nil:
				return ctx.Err()
			case f.isClosed():
				return crawl.ErrFrontierClosed
			case isNoCrawl(err):
				return f.deleted()
			case c.secs != nil && strings.Contains(err.Error(), "non local key"):
				f.reload()
				return errNonLocal
			case transient(err):
				wait = true
				again = append(again, c)
				f.reload()
			default:
				return fmt.Errorf("redisfrontier: %w", err)
			}
		}
		pending = again
		if len(pending) > 0 && wait {
			if err := f.await(ctx, nil, backoff); err != nil {
				return err
			}
			backoff = min(2*backoff, maxBackoff)
		}
	}
	return nil
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
	if f.policyNow().MaxPages > 0 {
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
	fd, err := f.rdb.HGet(ctx, f.controlPrefix()+"meta", "fd").Int64()
	if err != nil && !errors.Is(err, redis.Nil) {
		return 0, fmt.Errorf("redisfrontier: %w", err)
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

// controlPrefix returns the prefix of the crawl's control keys.
func (f *Frontier) controlPrefix() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.prefix
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
	if time.Since(f.probed) >= idlePoll {
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
			args = append(args, strconv.FormatFloat(mrand.Float64(), 'f', 6, 64))
		}
		secs[i] = &section{shard: v, args: args}
	}
	calls := f.sectionCalls(ctx, takeManyScript, secs)
	if err := f.runSections(ctx, calls); err != nil {
		if ctx.Err() != nil {
			// As takeN: the calls may have leased; give back what
			// they took, sent again under their numbers.
			waitAtMost(rulesGrace, func() {
				defer f.endCalls(calls)
				uctx, cancel := context.WithTimeout(context.Background(), time.Minute)
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
		p := f.policyNow()
		if p.MaxPages > 0 && f.balanceDue() {
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
		waitAtMost(rulesGrace, func() {
			for _, id := range ids {
				f.release(&crawl.Lease{ID: id})
			}
		})
		return nil, err
	}
	if perr != nil {
		return giveBack(perr)
	}
	rctx, cancel := rulesCtx(ctx)
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

// policyNow returns the policy of the latest Start.
func (f *Frontier) policyNow() crawl.Policy {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.policy
}

// balanceDue reports whether a Take with nothing to take should balance
// the budget now: at most every 10 ms, as every idle Take would.
func (f *Frontier) balanceDue() bool {
	f.smu.Lock()
	defer f.smu.Unlock()
	if time.Since(f.balAt) < 10*time.Millisecond {
		return false
	}
	f.balAt = time.Now()
	return true
}

// shardState is what a Join and the budget's balance read of a shard.
type shardState struct {
	unf, fresh, pages, cg, cb, done, lseq int64
}

// budgetState is the control keys' budget hash: per shard the pages
// granted to it and given back by it, in all.
type budgetState struct {
	g, b []int64
	net  int64
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
	err := f.retryRead(ctx, func() error {
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

// rebalance reads the shards and balances the page budget among them.
func (f *Frontier) rebalance(ctx context.Context) (bool, error) {
	st, b, err := f.collect(ctx)
	if err != nil {
		return false, err
	}
	return f.balance(ctx, st, b)
}

// balance hands the page budget to the shards that have new Requests and
// no pages left to take them: first it completes the hand-overs a process
// left half done (a shard's give-back not yet taken back by the control
// keys, a grant not yet applied on its shard), then it grants each needy
// shard up to budgetChunk pages, no more than it has new Requests nor
// than its share of what is left, from what is not granted, and, if that
// is spent, takes back what the other shards hold and have not used, and
// grants again. The
// budget's pages leave the control keys before they reach a shard, and a
// shard before they reach the control keys: a process that dies between
// the two leaves them counted nowhere, until the next balance completes
// its hand-over from the totals both sides keep. It reports whether a
// shard got pages.
func (f *Frontier) balance(ctx context.Context, st []shardState, b budgetState) (bool, error) {
	p := f.policyNow()
	if p.MaxPages <= 0 {
		return false, nil
	}
	var calls []*call
	held := func(v int) int64 { return max(st[v].cg, b.g[v]) - st[v].cb }
	moved := false
	for v := range st {
		if st[v].cb > b.b[v] || st[v].cg > b.g[v] {
			calls = append(calls, &call{shard: -1, script: ctlSyncScript, args: []any{v, st[v].cg, st[v].cb}})
		}
		if b.g[v] > st[v].cg {
			calls = append(calls, &call{shard: v, script: shardGrantScript, args: []any{b.g[v]}})
			moved = true
		}
	}
	var needy []int
	var pages int64
	for v := range st {
		pages += st[v].pages
		if st[v].fresh > 0 && st[v].pages >= held(v) {
			needy = append(needy, v)
		}
	}
	if err := f.evalMany(ctx, calls); err != nil {
		return false, err
	}
	if len(needy) == 0 || pages >= int64(p.MaxPages) {
		return moved, nil
	}
	// The needy shards share what is left, each from a turn of its own,
	// so that none waits on another that cannot use its part now (its
	// host at its HostWorkers, or waiting for its robots.txt).
	f.smu.Lock()
	f.balTurn++
	turn := f.balTurn
	f.smu.Unlock()
	first := int(turn % uint64(len(needy)))
	needy = append(needy[first:], needy[:first]...)
	share := max(1, (int64(p.MaxPages)-pages+int64(len(needy))-1)/int64(len(needy)))
	grant := func() (bool, error) {
		calls := make([]*call, len(needy))
		for i, v := range needy {
			calls[i] = &call{shard: -1, script: ctlGrantScript, args: []any{v, max(st[v].cg, b.g[v]), min(budgetChunk, st[v].fresh, share)}}
		}
		if err := f.evalMany(ctx, calls); err != nil {
			return false, err
		}
		var apply []*call
		for i, v := range needy {
			g, err := strconv.ParseInt(calls[i].reply, 10, 64)
			if err != nil {
				return false, errCorrupt
			}
			if g > max(st[v].cg, b.g[v]) {
				apply = append(apply, &call{shard: v, script: shardGrantScript, args: []any{g}})
			}
		}
		return len(apply) > 0, f.evalMany(ctx, apply)
	}
	got, err := grant()
	if err != nil || got {
		return moved || got, err
	}
	// Nothing left to grant: take back what the other shards hold and
	// have not used (a shard whose hosts wait, for their delay or their
	// robots.txt, holds pages a Take could use now), then grant again.
	var spare []int
	for v := range st {
		if held(v) > st[v].pages {
			spare = append(spare, v)
		}
	}
	if len(spare) == 0 {
		return moved, nil
	}
	if err := f.giveBack(ctx, spare); err != nil {
		return false, err
	}
	got, err = grant()
	return moved || got, err
}

// giveBack has shards give back the parts of the budget they hold and do
// not use, and the control keys take them back.
func (f *Frontier) giveBack(ctx context.Context, shards []int) error {
	give := make([]*call, len(shards))
	for i, v := range shards {
		give[i] = &call{shard: v, script: shardGiveScript}
	}
	if err := f.evalMany(ctx, give); err != nil {
		return err
	}
	back := make([]*call, len(give))
	for i, c := range give {
		cg, cb, ok := strings.Cut(c.reply, " ")
		if !ok {
			return errCorrupt
		}
		back[i] = &call{shard: -1, script: ctlSyncScript, args: []any{c.shard, cg, cb}}
	}
	return f.evalMany(ctx, back)
}

// joinShards is Join in a crawl of several shards: it reads every shard
// twice, and returns when both reads find nothing leased, waiting to be
// retried or (unless the budget is spent) queued, and no shard changed
// between the two: so at a moment between them nothing was pending on any
// shard at once, and work never comes from nothing (a link of one shard's
// page is admitted on its own shard before the page's lease ends).
func (f *Frontier) joinShards(ctx context.Context) error {
	for {
		if _, _, _, _, err := f.state(); err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		p := f.policyNow()
		ev := f.events()
		st1, b, err := f.collect(ctx)
		if err != nil {
			return err
		}
		if quiet(st1) {
			st2, _, err := f.collect(ctx)
			if err != nil {
				return err
			}
			if quiet(st2) && equalStates(st1, st2) {
				var fresh, pages, done int64
				for _, s := range st2 {
					fresh += s.fresh
					pages += s.pages
					done += s.done
				}
				if fresh == 0 {
					return f.finishShards(ctx, done)
				}
				if p.MaxPages > 0 && pages >= int64(p.MaxPages) {
					return nil
				}
				if moved, err := f.balance(ctx, st2, b); err != nil {
					return err
				} else if moved {
					continue
				}
			}
		}
		if err := f.await(ctx, ev, idlePoll); err != nil {
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

// equalStates reports whether two reads of the shards found the same.
func equalStates(a, b []shardState) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// finishShards is finish for a crawl of several shards, done having done
// done in all.
func (f *Frontier) finishShards(ctx context.Context, done int64) error {
	ttl := f.opts.TTL.Microseconds()
	if f.opts.TTL < 0 {
		ttl = 0
	}
	reply, err := f.eval(ctx, finishScript, false, ttl, done)
	if err != nil {
		return err
	}
	return f.sweepAfter(ctx, reply)
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
	ctx := context.Background()
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
		args := []any{"-", len(is)}
		for _, i := range is {
			args = append(args, batch[i].args...)
			args = appendAdmissions(args, local[i])
		}
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
	err := f.retryRead(ctx, func() error {
		hm, hl = hm[:0], hl[:0]
		_, err := f.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, pre := range prefixes {
				hm = append(hm, p.HMGet(ctx, pre+"meta", "queued", "done", "pages"))
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
		c.Queued += int(num(v[0]))
		c.Done += int(num(v[1]))
		c.Pages += int(num(v[2]))
		c.Leased += int(hl[i].Val())
	}
	return c, nil
}

// reload has a cluster client read the cluster's slots anew (after a
// failover, a client dials the dead master until it does).
func (f *Frontier) reload() {
	if cc, ok := f.rdb.(*redis.ClusterClient); ok {
		cc.ReloadState(context.Background())
	}
}

// errFewReplicas is the error of a write fewer replicas acknowledged than
// Options.WaitReplicas asks: it is made again.
var errFewReplicas = errors.New("redisfrontier: fewer replicas than Options.WaitReplicas acknowledged a write")

// errMoved is the error of a write sent to a node that no longer serves
// its slot: the slots are read anew and it is sent again.
var errMoved = errors.New("redisfrontier: the slot moved")

// pipeline runs calls in one pipeline and returns each one's error,
// having set the replies; or an error of the Frontier (closed, not
// started). With Options.WaitReplicas, the calls go in one pipeline per
// master, on one connection, ended by a WAIT for the replicas, whose
// shortfall fails every call of the pipeline with errFewReplicas.
func (f *Frontier) pipeline(ctx context.Context, calls []*call) ([]error, error) {
	type prepared struct {
		keys []string
		args []any
	}
	prep := make([]prepared, len(calls))
	for i, c := range calls {
		keys, args, err := f.callArgsOf(c)
		if err != nil {
			return nil, err
		}
		prep[i] = prepared{keys, args}
	}
	errs := make([]error, len(calls))
	run := func(rdb redis.Cmdable, idx []int, wait bool) {
		cmds := make([]*redis.Cmd, len(idx))
		var w *redis.Cmd
		rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for j, i := range idx {
				if calls[i].full {
					cmds[j] = calls[i].script.Eval(ctx, p, prep[i].keys, prep[i].args...)
				} else {
					cmds[j] = calls[i].script.EvalSha(ctx, p, prep[i].keys, prep[i].args...)
				}
			}
			if wait {
				w = p.Do(ctx, "WAIT", f.opts.WaitReplicas, f.waitTimeout().Milliseconds())
			}
			return nil
		})
		short := false
		if w != nil {
			n, err := w.Int()
			short = err != nil || n < f.opts.WaitReplicas
		}
		for j, i := range idx {
			v, err := cmds[j].Text()
			switch {
			case err != nil && (redis.HasErrorPrefix(err, "MOVED") || redis.HasErrorPrefix(err, "ASK")):
				// A node asked directly, whose slots moved.
				errs[i] = errMoved
			case err != nil:
				errs[i] = err
			case short:
				errs[i] = errFewReplicas
			default:
				calls[i].reply = v
			}
		}
	}
	all := make([]int, len(calls))
	for i := range all {
		all[i] = i
	}
	if f.opts.WaitReplicas <= 0 {
		run(f.rdb, all, false)
		return errs, nil
	}
	cc, ok := f.rdb.(*redis.ClusterClient)
	if !ok {
		run(f.rdb, all, true)
		return errs, nil
	}
	nodes := map[*redis.Client][]int{}
	for i := range calls {
		node, err := cc.MasterForKey(ctx, prep[i].keys[0])
		if err != nil {
			errs[i] = err
			continue
		}
		nodes[node] = append(nodes[node], i)
	}
	var wg sync.WaitGroup
	for node, idx := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			run(node, idx, true)
		}()
	}
	wg.Wait()
	return errs, nil
}

// waitTimeout returns Options.WaitTimeout or its default.
func (f *Frontier) waitTimeout() time.Duration {
	if f.opts.WaitTimeout > 0 {
		return f.opts.WaitTimeout
	}
	return time.Second
}
