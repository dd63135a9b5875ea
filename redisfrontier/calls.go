package redisfrontier

// How a script call is made: its common arguments (see scripts.go), its
// tries while the server is unreachable or not ready, calls run together
// in one pipeline, a call on several shards of one node (its sections),
// and the wait for replicas of Options.WaitReplicas.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asyncrawl/crawl"
	"github.com/redis/go-redis/v9"
)

// maxBackoff caps the wait between two tries of a call while the server is
// unreachable.
const maxBackoff = 2 * time.Second

// eval runs script with the common arguments (see scripts.go) and args,
// trying again while the server is unreachable or not ready, until ctx is
// done or the Frontier is closed. A script that changes the crawl and whose
// second run would not do what the first did is run with replay, under
// one call number for all its tries.
func (f *Frontier) eval(ctx context.Context, script *redis.Script, replay bool, args ...any) (string, error) {
	seq, low := uint64(0), uint64(0)
	if replay {
		seq, low = f.beginOp()
		defer f.endOp(seq)
	}
	return f.evalAs(ctx, script, seq, low, args...)
}

// evalAs is eval as call number seq (0 for none), low the lowest number in
// flight.
func (f *Frontier) evalAs(ctx context.Context, script *redis.Script, seq, low uint64, args ...any) (string, error) {
	return f.evalOn(ctx, -1, script, seq, low, args...)
}

// evalOn is evalAs on shard (-1: the crawl's control keys, which are its
// keys in a crawl of one shard): evalMany with one call.
func (f *Frontier) evalOn(ctx context.Context, shard int, script *redis.Script, seq, low uint64, args ...any) (string, error) {
	c := &call{shard: shard, script: script, seq: seq, low: low, args: args}
	err := f.evalMany(ctx, []*call{c})
	return c.reply, err
}

// Transient reports whether a call that failed with err may succeed if
// tried again: the server was unreachable, or answered that it is not
// ready yet (loading its data after a restart, busy with a script, a
// failover or a disk error under way). A Frontier waits such errors out;
// any other reply of the server's (a password refused, a database it
// does not have) is returned.
func Transient(err error) bool {
	var rerr redis.Error
	if !errors.As(err, &rerr) {
		return true // the network, a closed connection, the pool
	}
	// MOVED and ASK reach here when go-redis's redirections ran out
	// (a failover under way): the slots are read anew, and the call made
	// again.
	for _, p := range []string{"LOADING", "BUSY", "TRYAGAIN", "CLUSTERDOWN", "MASTERDOWN", "READONLY", "NOREPLICAS", "MISCONF", "MOVED", "ASK"} {
		if strings.HasPrefix(err.Error(), p) {
			return true
		}
	}
	return false
}

// transient is Transient for f's client: MOVED and ASK are transient
// only to a cluster client, which follows them; a plain client (Open of
// one node of a Redis Cluster) never will, and waiting would be for good.
// So is a node's CLUSTERDOWN for a slot no node serves (a cluster not
// formed yet), which a plain client would wait out for good too.
func (f *Frontier) transient(err error) bool {
	if _, cluster := f.rdb.(*redis.ClusterClient); !cluster && isRedirect(err) {
		return false
	}
	return Transient(err)
}

// isRedirect reports whether err is a cluster node's MOVED or ASK, or its
// CLUSTERDOWN for a slot that no node serves: what only a cluster client
// can get past.
func isRedirect(err error) bool {
	return redis.HasErrorPrefix(err, "MOVED") || redis.HasErrorPrefix(err, "ASK") ||
		redis.HasErrorPrefix(err, "CLUSTERDOWN Hash slot not served")
}

// fatal wraps an error that ends a call, saying what a cluster node's
// redirection means to a client of one server, and a server that is no
// cluster's node to a cluster client.
func (f *Frontier) fatal(err error) error {
	if isRedirect(err) {
		return fmt.Errorf("redisfrontier: %w", nodeOfCluster(err))
	}
	if _, cluster := f.rdb.(*redis.ClusterClient); cluster && strings.Contains(err.Error(), "cluster support disabled") {
		return fmt.Errorf("redisfrontier: %s: not a Redis Cluster (%w): open a single server with Open (the command's -redis), not OpenCluster", f.serverName(), err)
	}
	return fmt.Errorf("redisfrontier: %w", err)
}

// serverName names the server (or, for a cluster, the seed nodes) of f's
// client, for an error.
func (f *Frontier) serverName() string {
	switch c := f.rdb.(type) {
	case *redis.ClusterClient:
		return "the Redis Cluster at " + strings.Join(c.Options().Addrs, ",")
	case *redis.Client:
		return "Redis at " + c.Options().Addr
	}
	return "Redis"
}

// nodeOfCluster wraps err, a cluster node's redirection, saying what it
// means to a client of one server.
func nodeOfCluster(err error) error {
	return fmt.Errorf("the server is a node of a Redis Cluster, which keeps the crawl's keys on another, or on none before the cluster is formed (%w): open the cluster (OpenCluster; the command's -redis_cluster), not one node", err)
}

// callArgs returns the keys and arguments of call c on its shard (-1: the
// control keys): the common arguments (see scripts.go), then c's own, or,
// for a call on several shards, its sections (see many in scripts.go).
func (f *Frontier) callArgs(c *call) ([]string, []any, error) {
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
		// With the rules' most age (µs), if any: "1:86400000000".
		robots = "1"
		if p.RobotsMaxAge > 0 {
			robots = "1:" + strconv.FormatInt(p.RobotsMaxAge.Microseconds(), 10)
		}
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
	// The last transient error, which a ctx that ends while the calls
	// wait it out is returned with: what kept them from the server.
	var waited error
	ended := func(err error) error {
		if waited == nil || err == crawl.ErrFrontierClosed {
			return err
		}
		return fmt.Errorf("redisfrontier: %s did not answer (%v): %w", f.serverName(), waited, err)
	}
	// The calls wait for the server from here until they are done,
	// through every attempt; a reply starts the wait anew (see
	// answering).
	w := f.waiting()
	defer f.waited(w)
	// The node of each call, in a cluster (see nodeOf); nil on one
	// server, whose node is "".
	var node map[*call]string
	if _, ok := f.rdb.(*redis.ClusterClient); ok {
		node = make(map[*call]string, len(calls))
		for _, c := range calls {
			node[c] = f.nodeOf(ctx, f.callKey(c))
		}
	}
	for len(pending) > 0 {
		sent := time.Now()
		errs, perr := f.pipelineCut(ctx, pending, node)
		if perr != nil {
			return perr
		}
		took := time.Since(sent)
		for _, err := range errs {
			var rerr redis.Error
			if err == nil || errors.As(err, &rerr) || err == errMoved || err == errFewReplicas {
				f.heard(w) // a reply, if an error: the server answers
				break
			}
		}
		var again []*call
		wait := false
		for i, c := range pending {
			err := errs[i]
			f.noteReach(ctx, node[c], err, took)
			switch {
			case err == nil:
			case redis.HasErrorPrefix(err, "NOSCRIPT"):
				// A node that has not seen the script (a replica
				// promoted since, a server restarted): sent again at
				// once with its source, which the node then keeps.
				c.full = true
				again = append(again, c)
			case ctx.Err() != nil:
				return ended(ctx.Err())
			case f.isClosed():
				return crawl.ErrFrontierClosed
			case isNoCrawl(err):
				return f.deleted()
			case c.secs != nil && strings.Contains(err.Error(), "non local key"):
				f.reload()
				return errNonLocal
			case f.transient(err):
				wait = true
				waited = err
				again = append(again, c)
				f.reload()
			default:
				return f.fatal(err)
			}
		}
		pending = again
		if len(pending) > 0 && wait {
			if err := f.await(ctx, nil, backoff); err != nil {
				return ended(err)
			}
			backoff = min(2*backoff, maxBackoff)
		}
	}
	return nil
}

// noteReach records whether node (see nodeOf) answered a call that ended
// with err after waiting for it: nil or a reply, it did; any other error
// (the network, a connection refused) says it may not answer (see
// answering), but for a call whose ctx has ended and that failed on ctx
// or on a timeout, which its ctx's end may have caused: that says nothing
// of the node, unless the call had waited silenceLimit with no reply. A
// reply of allNodes is one of every node; a call of allNodes with none
// marks allNodes mute until such a reply.
func (f *Frontier) noteReach(ctx context.Context, node string, err error, waited time.Duration) {
	var nerr net.Error
	if err != nil && ctx.Err() != nil && waited < silenceLimit && (errors.Is(err, context.Canceled) ||
		errors.Is(err, context.DeadlineExceeded) || errors.As(err, &nerr) && nerr.Timeout()) {
		return
	}
	var rerr redis.Error
	f.wmu.Lock()
	defer f.wmu.Unlock()
	switch {
	case err != nil && !errors.As(err, &rerr):
		f.mute[node] = time.Now()
	case node == allNodes:
		clear(f.mute)
	default:
		delete(f.mute, node)
	}
}

// muteMemory is how long a node whose call had no reply is taken not to
// answer when no call has been made to it since: far longer than from a
// Run's last calls to its Frontier's Close; shorter than a process's
// life after a failover, whose master, dead, is asked nothing more.
const muteMemory = 10 * time.Second

// allNodes is the node (see nodeOf) of a call that asks every master of a
// cluster, or every shard of a crawl.
const allNodes = "*"

// nodeOf returns the node that holds key, as noteReach and answering
// name it: its address in a cluster (the master the client takes it to
// be on), "" on one server, where allNodes is "" too; key "" is
// allNodes.
func (f *Frontier) nodeOf(ctx context.Context, key string) string {
	cc, ok := f.rdb.(*redis.ClusterClient)
	switch {
	case !ok:
		return ""
	case key == "":
		return allNodes
	}
	node, err := cc.MasterForKey(ctx, key)
	if err != nil {
		return allNodes // not known: it may be any
	}
	return node.Options().Addr
}

// callKey returns the key of c's node: its shard's (the crawl's control
// keys' for shard -1).
func (f *Frontier) callKey(c *call) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if c.shard >= 0 && f.shards > 1 {
		return f.sprefix[c.shard] + "meta"
	}
	return f.prefix + "meta"
}

// silenceLimit is how long the server may keep this process's calls
// waiting with no reply before it is taken not to answer (see answering):
// far longer than a loaded server takes, shorter than the grace a Close
// or a cut-short Ack would give it.
const silenceLimit = 2 * time.Second

// answering reports whether the server may answer a call within a grace:
// no node's last call, in the last muteMemory, had no reply (see
// noteReach; in a cluster, by master), and no call in flight has waited
// silenceLimit with no reply, counted over all its attempts (go-redis and
// the Frontier each try a call again): a server that hangs (stopped, or
// cut off without a reset) whose calls have not timed out yet. In a
// cluster, one master that hangs is enough, whatever the others answer
// meanwhile: the work a grace waits for needs them all.
func (f *Frontier) answering() bool {
	f.wmu.Lock()
	defer f.wmu.Unlock()
	for _, at := range f.mute {
		if time.Since(at) < muteMemory {
			return false
		}
	}
	for _, at := range f.waits {
		if time.Since(time.Unix(0, at)) >= silenceLimit {
			return false
		}
	}
	return true
}

// waiting records calls sent to the server, waiting for their replies
// until waited is called with the number it returns.
func (f *Frontier) waiting() uint64 {
	f.wmu.Lock()
	defer f.wmu.Unlock()
	f.waitN++
	f.waits[f.waitN] = time.Now().UnixNano()
	return f.waitN
}

// heard records a reply to the calls of waiting's number n: they wait
// anew from now.
func (f *Frontier) heard(n uint64) {
	f.wmu.Lock()
	if _, ok := f.waits[n]; ok {
		f.waits[n] = time.Now().UnixNano()
	}
	f.wmu.Unlock()
}

// waited records that the calls of waiting's number n are done.
func (f *Frontier) waited(n uint64) {
	f.wmu.Lock()
	delete(f.waits, n)
	f.wmu.Unlock()
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
		keys, args, err := f.callArgs(c)
		if err != nil {
			return nil, err
		}
		prep[i] = prepared{keys, args}
	}
	errs := make([]error, len(calls))
	// A plain client's MOVED is for good (see transient).
	_, cluster := f.rdb.(*redis.ClusterClient)
	run := func(rdb redis.Cmdable, idx []int, wait bool) {
		cmds := make([]*redis.Cmd, len(idx))
		var w *redis.Cmd
		_, perr := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
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
			if cmds[j].Err() == nil && err != nil && perr != nil {
				// The command was never sent (a connection whose
				// setup failed: a SELECT of a database the server
				// does not have, an AUTH refused): the pipeline's
				// error is its own, not a reply of no type.
				err = perr
			}
			switch {
			case err != nil && isRedirect(err) && cluster:
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

// pipelineCut is pipeline, but returns when ctx ends, each call failed
// with ctx's error, even if the client holds the calls: a cluster's
// client ignores ctx on a call in flight, which a master that hangs holds
// until the client's ReadTimeout (3 s), so that a Run's end waited
// seconds for a worker's Ack, and then for each call left. The calls go
// on in a goroutine of the Frontier's (see cutCall), and what they hear,
// node by node, is noted when they end (see noteReach). A plain client
// (ClientOptions) ends a call at its ctx's deadline itself.
func (f *Frontier) pipelineCut(ctx context.Context, calls []*call, node map[*call]string) ([]error, error) {
	if !f.cuts(ctx) {
		return f.pipeline(ctx, calls)
	}
	// Copies, which the goroutine may write after its caller returned.
	own := make([]*call, len(calls))
	for i, c := range calls {
		cp := *c
		own[i] = &cp
	}
	var errs []error
	cut, err := f.cutCall(ctx, func() error {
		var err error
		errs, err = f.pipeline(ctx, own)
		return err
	}, func(err error, took time.Duration) {
		if err != nil {
			return // never sent (see pipeline): nothing heard
		}
		for i, c := range calls {
			f.noteReach(ctx, node[c], errs[i], took)
		}
	})
	if cut {
		cutErrs := make([]error, len(calls))
		for i := range cutErrs {
			cutErrs[i] = err
		}
		return cutErrs, nil
	}
	for i, c := range calls {
		c.reply, c.full = own[i].reply, own[i].full
	}
	return errs, err
}

// cutCall runs call and returns its error, as it is on a client of one
// server; on a cluster's, it returns ctx.Err() and cut when ctx ends
// first, the call going on in a goroutine of the Frontier's (bgGo), and
// then given to heard with how long it took. Either way the call counts
// as waiting for the server until it ends (see answering). What call
// writes its caller must not read once cut.
func (f *Frontier) cutCall(ctx context.Context, call func() error, heard func(err error, took time.Duration)) (cut bool, err error) {
	w := f.waiting()
	if !f.cuts(ctx) {
		defer f.waited(w)
		return false, call()
	}
	done := make(chan error, 1)
	var gone atomic.Bool // its caller returned
	f.bgGo(func() {
		defer f.waited(w)
		sent := time.Now()
		err := call()
		done <- err
		if gone.Load() {
			heard(err, time.Since(sent))
		}
	})
	select {
	case err := <-done:
		return false, err
	case <-ctx.Done():
		gone.Store(true)
		select {
		case err := <-done:
			return false, err
		default:
			return true, ctx.Err()
		}
	}
}

// callOn runs call, a call to node (see nodeOf), through cutCall, and
// notes what it heard (see noteReach): at once, or, when the call is cut
// short, once it ends. A redis.Nil reply is a reply.
func (f *Frontier) callOn(ctx context.Context, node string, call func() error) error {
	heard := func(err error, took time.Duration) {
		if errors.Is(err, redis.Nil) {
			err = nil
		}
		f.noteReach(ctx, node, err, took)
	}
	sent := time.Now()
	cut, err := f.cutCall(ctx, call, heard)
	if !cut {
		heard(err, time.Since(sent))
	}
	return err
}

// cuts reports whether cutCall cuts a call under ctx short: on a
// cluster's client, under a ctx that can end.
func (f *Frontier) cuts(ctx context.Context) bool {
	_, cluster := f.rdb.(*redis.ClusterClient)
	return cluster && ctx.Done() != nil
}

// waitTimeout returns Options.WaitTimeout or its default.
func (f *Frontier) waitTimeout() time.Duration {
	if f.opts.WaitTimeout > 0 {
		return f.opts.WaitTimeout
	}
	return time.Second
}
