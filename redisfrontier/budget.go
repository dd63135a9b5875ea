package redisfrontier

// The page budget of a crawl of several shards: each shard takes pages
// only against its own part of Policy.MaxPages, granted from the control
// keys and given back to them (docs/cluster.md, "The page budget").

import (
	"context"
	"strconv"
	"strings"
	"time"
)

// budgetChunk is the most pages of the budget a shard is granted at once.
const budgetChunk = 32

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

// budgetState is the control keys' budget hash: per shard the pages
// granted to it and given back by it, in all.
type budgetState struct {
	g, b []int64
	net  int64
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
	_, _, p, _, _ := f.state()
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
	f.granted(calls)
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
		if err := f.evalMany(ctx, apply); err != nil {
			return false, err
		}
		f.granted(apply)
		return len(apply) > 0, nil
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

// granted marks due the shards that calls granted pages (shardGrantScript),
// whose hosts the budget held back may be ready now: a Take asks them
// without waiting for their event.
func (f *Frontier) granted(calls []*call) {
	for _, c := range calls {
		if c.script == shardGrantScript {
			f.markDue(c.shard)
		}
	}
}
