package redisfrontier

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/asyncrawl/crawl"
	"github.com/redis/go-redis/v9"
)

// The lifecycle of a shared crawl: it is made by the first Start under its
// name, found done by a Join (which records when, and sets its keys to
// expire Options.TTL later), read by Inspect without joining it, and
// deleted by Reset or by the expiry of its keys.

// Errors of a crawl's lifecycle; test for them with errors.Is.
var (
	// ErrNoCrawl means that Redis holds no crawl of that name (Inspect,
	// Reset).
	ErrNoCrawl = errors.New("no such crawl")
	// ErrCrawlDeleted means that the crawl a Frontier was started on was
	// deleted while it ran: reset, or its keys expired after it was done.
	// Every call but Start and Close then returns it, rather than make a
	// half crawl of the keys it would write; a new Start makes the crawl
	// anew.
	ErrCrawlDeleted = errors.New("the crawl was deleted (reset, or its keys expired after it was done)")
	// ErrLeased means that Reset refused a crawl with leases out or
	// processes on it: a process holds them, or held them and died (they
	// end with their term), or a process that started the crawl and has
	// not closed it waits (for a host's delay, say) holding none.
	ErrLeased = errors.New("leases are out")
	// ErrBadName means that a crawl's name holds a character it may not
	// (see CheckName).
	ErrBadName = errors.New("bad crawl name")
)

// CheckName returns an error wrapping ErrBadName, naming the problem, if
// name may not name a crawl: it is empty, or holds '{', '}' or ':' (a
// crawl's keys are "crawl:{NAME}:...", and its shards' "crawl:{NAME:N}:...":
// a name with those would share keys with another crawl's, or be reset
// with it), or a control character. Open, OpenCluster, Start, Inspect
// and Reset check the name they are given with it.
func CheckName(name string) error {
	if name == "" {
		return fmt.Errorf("redisfrontier: %w: empty", ErrBadName)
	}
	for _, c := range name {
		switch {
		case c == '{' || c == '}' || c == ':':
			return fmt.Errorf("redisfrontier: %w %q: it may not hold %q (the crawl's keys are \"crawl:{NAME}:...\", its shards' \"crawl:{NAME:N}:...\")", ErrBadName, name, c)
		case c < 0x20 || c == 0x7f:
			return fmt.Errorf("redisfrontier: %w %q: it may not hold a control character", ErrBadName, name)
		}
	}
	return nil
}

// isNoCrawl reports whether err is the guard's reply: the crawl's meta
// hash is gone.
func isNoCrawl(err error) bool {
	var rerr redis.Error
	return errors.As(err, &rerr) && strings.HasPrefix(rerr.Error(), "NOCRAWL")
}

// deleted returns ErrCrawlDeleted, with the crawl's name.
func (f *Frontier) deleted() error {
	return fmt.Errorf("redisfrontier: crawl %q: %w", f.Name(), ErrCrawlDeleted)
}

// WasDone reports whether the crawl was already done when the latest
// Start joined it (a Join had found nothing pending, and nothing was
// acked since), and when it was found done, on the Redis server's clock.
// A Run on a crawl that was done fetches nothing: its roots were seen.
func (f *Frontier) WasDone() (time.Time, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.wasDone, !f.wasDone.IsZero()
}

// finish records that the crawl is done (or, if budget, that its page
// budget is spent with nothing left but new Requests it holds back) and
// sets its keys to expire, as Options.TTL says, when this is a new finish
// or the sweep of one was not completed. A crawl of several shards passes
// the count done over its shards, which its control keys do not keep.
func (f *Frontier) finish(ctx context.Context, budget bool, done ...int64) error {
	ttl := f.opts.TTL.Microseconds()
	if f.opts.TTL < 0 {
		ttl = 0
	}
	args := []any{ttl, "", "0"}
	if len(done) > 0 {
		args[1] = done[0]
	}
	if budget {
		args[2] = "1"
	}
	reply, err := f.eval(ctx, finishScript, false, args...)
	if err != nil {
		return err
	}
	if reply != "no" {
		// Its keys may be set to expire, by this finish or an earlier
		// one (another process's TTL): see Push.
		f.expiring.Store(true)
	}
	return f.sweepAfter(ctx, reply)
}

// sweepAfter does what finishScript's reply asks: sets the expiry of the
// crawl's keys, then runs sweptScript.
func (f *Frontier) sweepAfter(ctx context.Context, reply string) error {
	rest, ok := strings.CutPrefix(reply, "sweep:")
	if !ok {
		return nil
	}
	dl, fd, _ := strings.Cut(rest, ":")
	at, err := strconv.ParseInt(dl, 10, 64)
	if err != nil {
		return errCorrupt
	}
	name := f.Name()
	if err := f.retryRead(ctx, "", func() error { return sweep(ctx, f.rdb, name, f.owner, at) }); err != nil {
		return err
	}
	reply, err = f.eval(ctx, sweptScript, false, dl, fd)
	if err != nil || reply != "rv" {
		return err
	}
	// Another process revived the keys while this one set them to
	// expire: those it set after the revival kept them are kept again.
	f.expiring.Store(false)
	return f.persistAll(ctx)
}

// reviveIfWork keeps the keys of a crawl set to expire (done, or its page
// budget spent) if it has work again for a process under p: Requests
// leased, waiting to be retried, or new ones its budget no longer holds
// back (a run with a larger Policy.MaxPages). The crawl's keys then stay
// until it ends anew (see Options.TTL).
func (f *Frontier) reviveIfWork(ctx context.Context, p crawl.Policy) error {
	f.mu.Lock()
	meta := f.prefix + "meta"
	f.mu.Unlock()
	var (
		pttl *redis.DurationCmd
		hm   *redis.SliceCmd // and, on a crawl of one shard, its counters
	)
	if err := f.retryRead(ctx, meta, func() error {
		_, err := f.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			pttl = p.PTTL(ctx, meta)
			hm = p.HMGet(ctx, meta, "dl", "rv", "unfinished", "fresh", "pages")
			return nil
		})
		return err
	}); err != nil {
		return err
	}
	v := hm.Val()
	if !setToExpire(pttl.Val(), v[0], v[1]) {
		return nil
	}
	f.expiring.Store(true)
	unf, fresh, pages := num(v[2]), num(v[3]), num(v[4])
	if f.sharded() > 0 {
		st, _, err := f.collect(ctx)
		if err != nil {
			return err
		}
		unf, fresh, pages = 0, 0, 0
		for _, s := range st {
			unf, fresh, pages = unf+s.unf, fresh+s.fresh, pages+s.pages
		}
	}
	if unf == 0 || budgetSpent(p, unf, fresh, pages) {
		return nil
	}
	return f.revive(ctx)
}

// setToExpire reports whether a crawl's keys are set to expire, or about
// to be, from its meta hash's TTL and fields dl and rv: its meta hash has
// a TTL, or a finish found the crawl done (or its budget spent) and its
// sweep may be under way, with no revival since.
func setToExpire(pttl time.Duration, dl, rv any) bool {
	return pttl > 0 || num(dl) > 0 && rv == nil
}

// keepIfExpiring revives the crawl (see revive) if its keys are set to
// expire, or about to be. A Join that finds work left for its process
// calls it: another process, under a smaller page budget
// (Policy.MaxPages), may have found the crawl over and set its keys to
// expire while this one still crawls.
func (f *Frontier) keepIfExpiring(ctx context.Context) error {
	f.mu.Lock()
	meta := f.prefix + "meta"
	f.mu.Unlock()
	var (
		pttl *redis.DurationCmd
		hm   *redis.SliceCmd
	)
	if err := f.retryRead(ctx, meta, func() error {
		_, err := f.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			pttl = p.PTTL(ctx, meta)
			hm = p.HMGet(ctx, meta, "dl", "rv")
			return nil
		})
		return err
	}); err != nil {
		return err
	}
	if v := hm.Val(); setToExpire(pttl.Val(), v[0], v[1]) {
		return f.revive(ctx)
	}
	return nil
}

// revive keeps every key of a crawl set to expire: it marks the meta hash
// (reviveScript), keeps the other keys, found by ownKeys, but the records of
// the other processes' replies (ops:<owner>), which keep their own
// expiry (this process's go a week after now, as after its Start), then
// the meta hash (persistedScript), or, if a finish came meanwhile,
// sweeps again for it. Cut short, it leaves the meta hash to
// expire, and f.expiring set: its next Push, or the next process's
// Start, does it again.
func (f *Frontier) revive(ctx context.Context) error {
	reply, err := f.eval(ctx, reviveScript, false)
	if err != nil {
		return err
	}
	if reply == "1" {
		if f.beforePersistAll != nil {
			f.beforePersistAll()
		}
		if err := f.persistAll(ctx); err != nil {
			return err
		}
		reply, err := f.eval(ctx, persistedScript, false)
		if err != nil {
			return err
		}
		if reply != "" {
			// A finish came since, and this process may have kept keys
			// its sweep set to expire: they expire with the others.
			return f.sweepAfter(ctx, reply)
		}
	}
	f.expiring.Store(false)
	return nil
}

// persistAll keeps every key of the crawl but its meta hash (see revive).
func (f *Frontier) persistAll(ctx context.Context) error {
	name := f.Name()
	meta := keyPrefix(name) + "meta"
	mine := ":ops:" + f.owner
	return f.retryRead(ctx, "", func() error {
		return ownKeys(ctx, f.rdb, name, "", func(keys []string) error {
			_, err := f.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
				for _, k := range keys {
					switch {
					case k == meta:
					case strings.HasSuffix(k, mine):
						p.PExpire(ctx, k, opsLife)
					case strings.Contains(k, ":ops:"):
					default:
						p.Persist(ctx, k)
					}
				}
				return nil
			})
			return err
		})
	})
}

// opsLife is how long the records of a process's replies stay after its
// Start (startScript's 604800000 ms).
const opsLife = 7 * 24 * time.Hour

// sweep sets every key of the crawl under prefix but its meta hash to
// expire at deadline (µs on the server's clock), or, for 0, to stay: all
// but the records of the processes' replies (ops:<owner>), which keep
// their expiry, owner's (the caller's) a week from now. It finds them
// with ownKeys and sets them in pipelines of a batch. Doing it twice does
// what doing it once does.
func sweep(ctx context.Context, rdb redis.UniversalClient, name, owner string, deadline int64) error {
	meta := keyPrefix(name) + "meta"
	mine := ":ops:" + owner
	return ownKeys(ctx, rdb, name, "", func(keys []string) error {
		_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, k := range keys {
				switch {
				case k == meta:
				case deadline > 0:
					p.PExpireAt(ctx, k, time.UnixMicro(deadline))
				// Kept: the records of the processes' replies are not
				// (see persistAll).
				case strings.HasSuffix(k, mine):
					p.PExpire(ctx, k, opsLife)
				case strings.Contains(k, ":ops:"):
				default:
					p.Persist(ctx, k)
				}
			}
			return nil
		})
		return err
	})
}

// scanBatch is the COUNT of each SCAN: how many keys the server looks at
// a call.
const scanBatch = 1000

// ownKeys calls fn with each batch of the keys of crawl name but its meta
// hash, as sweep and persistAll need them. A crawl of several shards on a
// Redis Cluster is read from its slots (slotKeys). A crawl of one shard made by
// this version (its meta hash's format 2) names every key it may have in
// its own sets, hosts and owners (see startScript and queueAll), so its
// keys are the fixed ones, the seen set's buckets (all the names its bits
// allow; some may not exist), the queue, retries and hash of each host of
// hosts and the replies of each owner of owners: what it costs depends on
// the crawl alone, where a SCAN reads every key of the database (a
// redis-server that keeps the keys of many crawls done, for their TTL,
// made each crawl's end the slower). Any other crawl (of several shards
// on one server, or made by an earlier version) is read with SCAN
// (scanKeys).
// With sub "r:", it gives the hosts' retries only (for Inspect).
func ownKeys(ctx context.Context, rdb redis.UniversalClient, name, sub string, fn func([]string) error) error {
	prefix := keyPrefix(name)
	v, err := rdb.HMGet(ctx, prefix+"meta", "format", "sb", "shards").Result()
	if err != nil {
		return err
	}
	if cc, ok := rdb.(*redis.ClusterClient); ok && num(v[2]) > 1 {
		if done, err := slotKeys(ctx, cc, name, sub, int(num(v[2])), fn); done || err != nil {
			return err
		}
	}
	bits, berr := strconv.Atoi(fmt.Sprint(v[1]))
	if v[0] != "2" || num(v[2]) > 1 || berr != nil || bits < 0 || bits > 30 {
		return scanKeys(ctx, rdb, name, sub, fn)
	}
	if sub == "r:" {
		return setMembers(ctx, rdb, prefix+"hosts", func(hs []string) error {
			for i, h := range hs {
				hs[i] = prefix + "r:" + h
			}
			return fn(hs)
		})
	}
	batch := make([]string, 0, scanBatch)
	add := func(ks ...string) error {
		batch = append(batch, ks...)
		if len(batch) < scanBatch {
			return nil
		}
		err := fn(batch)
		batch = batch[:0]
		return err
	}
	for _, k := range []string{"ready", "parked", "leases", "exp", "stats", "live", "hosts", "owners"} {
		if err := add(prefix + k); err != nil {
			return err
		}
	}
	err = setMembers(ctx, rdb, prefix+"hosts", func(hs []string) error {
		for _, h := range hs {
			if err := add(prefix+"q:"+h, prefix+"r:"+h, prefix+"h:"+h); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	err = setMembers(ctx, rdb, prefix+"owners", func(owners []string) error {
		for _, o := range owners {
			if err := add(prefix + "ops:" + o); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for b := range 1 << bits {
		if err := add(prefix + "s:" + strconv.Itoa(b)); err != nil {
			return err
		}
	}
	if len(batch) > 0 {
		return fn(batch)
	}
	return nil
}

// maxSlotKeys is the most keys slotKeys reads of one slot at once.
const maxSlotKeys = 100000

// slotKeys calls fn with each batch of the keys of a crawl of shards
// shards on a Redis Cluster whose name goes on with sub after the prefix
// of its control keys or of a shard, read from the slot of each hash tag
// (CLUSTER GETKEYSINSLOT on the master that serves it): the slots of the
// crawl, not every key of every master. It reports false, having called
// fn for none, if a slot holds more than maxSlotKeys keys (the caller
// SCANs then).
func slotKeys(ctx context.Context, cc *redis.ClusterClient, name, sub string, shards int, fn func([]string) error) (bool, error) {
	type slot struct {
		node   *redis.Client
		prefix string
		slot   int64
		n      int64
	}
	slots := make([]slot, 0, shards+1)
	for v := -1; v < shards; v++ {
		prefix := keyPrefix(name)
		if v >= 0 {
			prefix = shardPrefix(name, v)
		}
		node, err := cc.MasterForKey(ctx, prefix+"meta")
		if err != nil {
			return false, err
		}
		sl, err := node.ClusterKeySlot(ctx, prefix+"meta").Result()
		if err != nil {
			return false, err
		}
		n, err := node.ClusterCountKeysInSlot(ctx, int(sl)).Result()
		if err != nil {
			return false, err
		}
		if n > maxSlotKeys {
			return false, nil
		}
		slots = append(slots, slot{node, prefix, sl, n})
	}
	for _, sl := range slots {
		if sl.n == 0 {
			continue
		}
		keys, err := sl.node.ClusterGetKeysInSlot(ctx, int(sl.slot), int(sl.n)).Result()
		if err != nil {
			return false, err
		}
		// Other crawls' tags may share the slot.
		keys = slices.DeleteFunc(keys, func(k string) bool { return !strings.HasPrefix(k, sl.prefix+sub) })
		for len(keys) > 0 {
			n := min(len(keys), scanBatch)
			if err := fn(keys[:n]); err != nil {
				return false, err
			}
			keys = keys[n:]
		}
	}
	return true, nil
}

// setMembers calls fn with each batch of the members of set key, read with
// SSCAN.
func setMembers(ctx context.Context, rdb redis.UniversalClient, key string, fn func([]string) error) error {
	var cursor uint64
	for {
		ms, next, err := rdb.SScan(ctx, key, cursor, "", scanBatch).Result()
		if err != nil {
			return err
		}
		if len(ms) > 0 {
			if err := fn(ms); err != nil {
				return err
			}
		}
		if next == 0 {
			return nil
		}
		cursor = next
	}
}

// scanKeys calls fn with each batch of the keys of crawl name that SCAN
// finds whose name goes on with sub after the crawl's prefix (its control
// keys' and, in a crawl of several shards, each shard's): on each master
// of a Redis Cluster, fn called from one goroutine per master.
func scanKeys(ctx context.Context, rdb redis.UniversalClient, name, sub string, fn func([]string) error) error {
	one := keyPrefix(name) + sub
	pattern := globEscape("crawl:{"+name) + "*" + globEscape(sub) + "*"
	scan := func(ctx context.Context, c redis.UniversalClient) error {
		var cursor uint64
		for {
			keys, next, err := c.Scan(ctx, cursor, pattern, scanBatch).Result()
			if err != nil {
				return err
			}
			keys = slices.DeleteFunc(keys, func(k string) bool {
				return !strings.HasPrefix(k, one) && !isShardKey(k, name, sub)
			})
			if len(keys) > 0 {
				if err := fn(keys); err != nil {
					return err
				}
			}
			if next == 0 {
				return nil
			}
			cursor = next
		}
	}
	if cc, ok := rdb.(*redis.ClusterClient); ok {
		return cc.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error { return scan(ctx, c) })
	}
	return scan(ctx, rdb)
}

// isShardKey reports whether k is a key of a shard of crawl name, its name
// going on with sub after the shard's prefix.
func isShardKey(k, name, sub string) bool {
	rest, ok := strings.CutPrefix(k, "crawl:{"+name+":")
	if !ok {
		return false
	}
	i := strings.Index(rest, "}:")
	if i <= 0 {
		return false
	}
	for _, c := range rest[:i] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return strings.HasPrefix(rest[i+2:], sub)
}

// byTag groups keys by their hash tag, so that a command on several keys
// stays within one slot of a Redis Cluster.
func byTag(keys []string) [][]string {
	idx := map[string]int{}
	var out [][]string
	for _, k := range keys {
		tag := k
		if i := strings.IndexByte(k, '{'); i >= 0 {
			if j := strings.IndexByte(k[i+1:], '}'); j > 0 {
				tag = k[i+1 : i+1+j]
			}
		}
		n, ok := idx[tag]
		if !ok {
			n = len(out)
			idx[tag] = n
			out = append(out, nil)
		}
		out[n] = append(out[n], k)
	}
	return out
}

// globEscape escapes the characters of s that a SCAN pattern reads as
// glob syntax.
func globEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]\^`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// oneNode says what a cluster node's redirection means to a client of one
// server (see nodeOfCluster): MOVED or ASK, or, in the read-only
// transactions of Inspect, EXECABORT for the command's MOVED. Else it
// returns err.
func oneNode(err error) error {
	if isRedirect(err) || redis.HasErrorPrefix(err, "EXECABORT") {
		return nodeOfCluster(err)
	}
	return err
}

// keyPrefix returns the prefix of the keys of crawl name.
func keyPrefix(name string) string { return "crawl:{" + name + "}:" }

// Status is a crawl's state as Redis holds it, over every process, as
// Inspect reads it.
type Status struct {
	// Name is the crawl's name; its keys are under "crawl:{Name}:" (and,
	// for a crawl of several shards, "crawl:{Name:N}:").
	Name string
	// Roots and Scope are what the crawl was started with.
	Roots []string
	Scope string
	// Done reports whether nothing is pending in the crawl: nothing
	// queued, leased or waiting to be retried. A crawl that is not done
	// is running if a lease's term has not ended (Leased is more than
	// Expired) or a Holder holds no lease (a process on it, waiting out
	// a host's delay, say), and else waits for a process (its processes
	// stopped, as after a page budget spent, or were killed).
	Done bool
	// Queued counts the Requests admitted and not taken, Retrying
	// among them; Leased the leases out (robots.txt included, and the
	// leases a process holds ahead: see the package's Speed); Acked
	// the Requests acked (crawl.Counts.Done); Pages what
	// Policy.MaxPages counts; Pending the Requests admitted and not
	// acked.
	Queued, Retrying, Leased, Acked, Pages, Pending int
	// Expired counts the leases among Leased whose term has ended, on
	// the Redis server's clock: their process stopped (kill -9, a
	// machine lost) or was cut off, and the next Take of any process
	// takes them back. Reset does not count them as held.
	Expired int
	// Finished is when a Join found the crawl done (or its page budget
	// spent, with nothing left but new Requests: see Options.TTL), on
	// the Redis server's clock; zero if none has. A crawl given new URLs since is
	// not Done, and keeps its Finished until it is done again.
	Finished time.Time
	// Expires is when the crawl's keys expire; zero if they do not.
	Expires time.Time
	// Stats are the whole crawl's counters, as Frontier.Stats gives
	// them to its processes (Elapsed, Workers, Todo and Budget left zero).
	Stats crawl.Stats
	// Holders are the processes on the crawl, in order of Owner (see
	// Options.Owner): those holding leases (their terms ended or not),
	// and those that started it and have not closed it, holding none
	// now (waiting out a host's delay, say). A Frontier says it is on
	// the crawl every third of its Policy.LeaseTerm (a minute without
	// one) until its Close; a process killed drops out once that term
	// has passed since it last said so.
	Holders []Holder
}

// Holder is a process on a crawl.
type Holder struct {
	// Owner is the holder's Options.Owner: by default its host name,
	// process ID and a random number.
	Owner string
	// Leases is how many leases it holds.
	Leases int
	// Until is when the last of its leases ends unless it extends it
	// (Policy.LeaseTerm), or, for one holding no lease, when it is no
	// longer on the crawl unless it says so again, as the local clock
	// reads it; zero when its leases have no term.
	Until time.Time
}

// leaseHead reads the owner out of a lease record (see mkrec in
// scripts.go).
var leaseHead = regexp.MustCompile(`^[PRS][01][01] \S+ \S+ (\d+) (\d+) `)

// skipScore is the score of the member the scripts keep in ready and exp
// (SKIP, at FAR): no lease's term.
const skipScore = 9e15

// Inspect reads the state of crawl name on client, without joining it: it
// starts nothing and changes nothing. It returns ErrNoCrawl if Redis holds
// no such crawl. It reads the leases and the retries of every host (of
// every shard of a sharded crawl): a few round trips, the retries of each
// host the crawl names in its set hosts (for a crawl of several shards on
// a Redis Cluster, those of the slots of its hash tags; for one of several
// shards on one server or made by an earlier version, a SCAN of the keys
// of the database). It is safe for concurrent use.
func Inspect(ctx context.Context, client redis.UniversalClient, name string) (*Status, error) {
	if err := CheckName(name); err != nil {
		return nil, err
	}
	prefix := keyPrefix(name)
	var (
		meta   *redis.MapStringStringCmd
		leases *redis.MapStringStringCmd
		exp    *redis.ZSliceCmd
		live   *redis.ZSliceCmd
		stats  *redis.MapStringStringCmd
		clock  *redis.TimeCmd
		pttl   *redis.DurationCmd
	)
	_, err := client.TxPipelined(ctx, func(p redis.Pipeliner) error {
		meta = p.HGetAll(ctx, prefix+"meta")
		leases = p.HGetAll(ctx, prefix+"leases")
		exp = p.ZRangeWithScores(ctx, prefix+"exp", 0, -1)
		live = p.ZRangeWithScores(ctx, prefix+"live", 0, -1)
		stats = p.HGetAll(ctx, prefix+"stats")
		pttl = p.PTTL(ctx, prefix+"meta")
		clock = p.Time(ctx)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("redisfrontier: inspect crawl %q: %w", name, oneNode(err))
	}
	local := time.Now()
	m := meta.Val()
	if len(m) == 0 {
		return nil, fmt.Errorf("redisfrontier: crawl %q: %w", name, ErrNoCrawl)
	}
	if m["reset"] != "" {
		return nil, fmt.Errorf("redisfrontier: crawl %q: a Reset of it was cut short, its keys half deleted: Reset it again", name)
	}
	n := func(k string) int { v, _ := strconv.Atoi(m[k]); return v }
	s := &Status{Name: name, Scope: m["scope"], Queued: n("queued"), Acked: n("done"), Pages: n("pages"), Pending: n("unfinished")}
	json.Unmarshal([]byte(m["roots"]), &s.Roots)
	recs, ends := leases.Val(), exp.Val()
	statVals := []map[string]string{stats.Val()}
	if shards, _ := strconv.Atoi(m["shards"]); shards > 1 && shards <= maxShards {
		// A crawl of several shards: its counters and leases are the
		// shards'.
		var (
			sm []*redis.SliceCmd
			ss []*redis.MapStringStringCmd
			sl []*redis.MapStringStringCmd
			se []*redis.ZSliceCmd
		)
		_, err := client.Pipelined(ctx, func(p redis.Pipeliner) error {
			for v := range shards {
				pre := shardPrefix(name, v)
				sm = append(sm, p.HMGet(ctx, pre+"meta", "queued", "done", "pages", "unfinished"))
				sl = append(sl, p.HGetAll(ctx, pre+"leases"))
				ss = append(ss, p.HGetAll(ctx, pre+"stats"))
				se = append(se, p.ZRangeWithScores(ctx, pre+"exp", 0, -1))
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("redisfrontier: inspect crawl %q: %w", name, oneNode(err))
		}
		recs = map[string]string{}
		statVals = statVals[:0]
		for v := range shards {
			statVals = append(statVals, ss[v].Val())
			x := sm[v].Val()
			s.Queued += int(num(x[0]))
			s.Acked += int(num(x[1]))
			s.Pages += int(num(x[2]))
			s.Pending += int(num(x[3]))
			for id, rec := range sl[v].Val() {
				recs[leaseID(v, id)] = rec
			}
			for _, z := range se[v].Val() {
				z.Member = leaseID(v, z.Member.(string))
				ends = append(ends, z)
			}
		}
	}
	s.Stats = statsOf(statVals)
	s.Done = s.Pending == 0
	if fin, _ := strconv.ParseInt(m["fin"], 10, 64); fin > 0 {
		s.Finished = time.UnixMicro(fin)
	}
	if d := pttl.Val(); d > 0 {
		s.Expires = local.Add(d)
	}
	// The leases' terms, on the server's clock, read on the local one.
	serverNow := clock.Val().UnixMicro()
	until := map[string]time.Time{}
	ended := map[string]bool{}
	for _, z := range ends {
		if z.Score >= skipScore {
			continue // not a lease: the member that keeps exp a skiplist
		}
		until[z.Member.(string)] = local.Add(time.Duration(int64(z.Score)-serverNow) * time.Microsecond)
		ended[z.Member.(string)] = int64(z.Score) <= serverNow
	}
	holders := map[string]*Holder{}
	for id, rec := range recs {
		s.Leased++
		if ended[id] {
			s.Expired++
		}
		owner := "?" // a record an earlier version wrote
		if h := leaseHead.FindStringSubmatchIndex(rec); h != nil {
			ol, _ := strconv.Atoi(rec[h[2]:h[3]])
			if h[1]+ol <= len(rec) {
				owner = rec[h[1] : h[1]+ol]
			}
		}
		hd := holders[owner]
		if hd == nil {
			hd = &Holder{Owner: owner}
			holders[owner] = hd
		}
		hd.Leases++
		if end, ok := until[id]; ok && end.After(hd.Until) {
			hd.Until = end
		}
	}
	// The processes on the crawl holding no lease, in their term.
	for _, z := range live.Val() {
		owner := z.Member.(string)
		if int64(z.Score) <= serverNow || holders[owner] != nil {
			continue
		}
		holders[owner] = &Holder{Owner: owner, Until: local.Add(time.Duration(int64(z.Score)-serverNow) * time.Microsecond)}
	}
	for _, h := range holders {
		s.Holders = append(s.Holders, *h)
	}
	sort.Slice(s.Holders, func(i, j int) bool { return s.Holders[i].Owner < s.Holders[j].Owner })
	// The retries: each host's sorted set r:<host>.
	err = ownKeys(ctx, client, name, "r:", func(keys []string) error {
		cmds := make([]*redis.IntCmd, len(keys))
		_, err := client.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i, k := range keys {
				cmds[i] = p.ZCard(ctx, k)
			}
			return nil
		})
		for _, c := range cmds {
			s.Retrying += int(c.Val())
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("redisfrontier: inspect crawl %q: %w", name, oneNode(err))
	}
	return s, nil
}

// Reset deletes crawl name from client: every key under "crawl:{name}:"
// and, for a crawl of several shards, under each shard's
// "crawl:{name:N}:", found with SCAN (never KEYS, which blocks the
// server; on each master of a Redis Cluster) and deleted in batches
// (UNLINK). It refuses a crawl with leases out whose term has not
// ended (on the server's clock: a lease whose process stopped holds
// nothing once its term is over), or with a process on it (one that
// started it and has not closed, heard from within its lease term, or a
// minute without one: see Status.Holders), returning an error that wraps
// ErrLeased, unless force is set; it returns ErrNoCrawl if
// there is no key to delete. It returns how many keys it deleted.
//
// Reset first replaces the crawl's meta hash with a mark, in one step with
// the check of the leases, so that from then on every call of a process
// still on the crawl (Take, Ack, Join, ...) returns ErrCrawlDeleted
// instead of making a half crawl of the keys it would write, and Start
// and Inspect return an error; then it deletes the other keys; then the
// mark. A Reset cut short between the two (its process killed, ctx
// cancelled) leaves the mark: Start refuses the crawl, rather than make it
// anew over the seen set and queues left, until a Reset, forced or not,
// is run again. It wakes the processes waiting on the crawl, so that they
// find out at once. A crawl started again once Reset has returned is a
// new crawl.
func Reset(ctx context.Context, client redis.UniversalClient, name string, force bool) (int, error) {
	if err := CheckName(name); err != nil {
		return 0, err
	}
	prefix := keyPrefix(name)
	forced, noLeases := "0", "0"
	if force {
		forced = "1"
	}
	shards, err := client.HGet(ctx, prefix+"meta", "shards").Int()
	if err != nil && !errors.Is(err, redis.Nil) {
		return 0, fmt.Errorf("redisfrontier: reset crawl %q: %w", name, oneNode(err))
	}
	if shards > maxShards {
		return 0, errCorrupt
	}
	if shards > 1 {
		// The leases are the shards': the control keys' script checks
		// none. A lease taken between this check and the mark ends with
		// its process's next call, which finds the crawl deleted.
		n, err := shardLeases(ctx, client, name, shards)
		if err != nil {
			return 0, fmt.Errorf("redisfrontier: reset crawl %q: %w", name, oneNode(err))
		}
		cut, _ := client.HExists(ctx, prefix+"meta", "reset").Result()
		if n > 0 && !force && !cut {
			return 0, fmt.Errorf("redisfrontier: crawl %q: %d %w", name, n, ErrLeased)
		}
		noLeases = "1"
	}
	v, err := resetScript.Run(ctx, client, []string{prefix + "meta", prefix + "leases", prefix + "exp", prefix + "live"}, forced, noLeases).Int64Slice()
	if err != nil {
		return 0, fmt.Errorf("redisfrontier: reset crawl %q: %w", name, oneNode(err))
	}
	if len(v) != 2 && len(v) != 3 {
		return 0, errCorrupt
	}
	if v[0] == 0 {
		if v[1] == 0 {
			return 0, fmt.Errorf("redisfrontier: crawl %q: %d process(es) on it, holding no lease now (waiting out a host's delay, say): %w", name, v[2], ErrLeased)
		}
		return 0, fmt.Errorf("redisfrontier: crawl %q: %d %w", name, v[1], ErrLeased)
	}
	deleted := int(v[1])
	// A Reset cut short left its mark: counted with the keys deleted,
	// for it is what is left of the crawl (alone, all of it).
	marked := v[0] == 1 && len(v) == 3 && v[2] == 1
	meta := prefix + "meta"
	if shards > 1 {
		// The shards' meta hashes first: every script of a process still
		// on a shard fails from then on, rather than write keys the
		// SCAN below has passed.
		var dels []*redis.IntCmd
		_, err := client.Pipelined(ctx, func(p redis.Pipeliner) error {
			for v := range shards {
				dels = append(dels, p.Del(ctx, shardPrefix(name, v)+"meta"))
			}
			return nil
		})
		if err != nil {
			return 0, fmt.Errorf("redisfrontier: reset crawl %q: %w", name, oneNode(err))
		}
		for _, d := range dels {
			deleted += int(d.Val())
		}
	}
	var dmu sync.Mutex
	err = scanKeys(ctx, client, name, "", func(keys []string) error {
		// The mark goes last.
		keys = slices.DeleteFunc(keys, func(k string) bool { return k == meta })
		for _, g := range byTag(keys) {
			n, err := client.Unlink(ctx, g...).Result()
			dmu.Lock()
			deleted += int(n)
			dmu.Unlock()
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		var n int64
		n, err = client.Del(ctx, meta).Result()
		if marked {
			deleted += int(n)
		}
	}
	// The processes waiting on the crawl ask again now, and find it gone.
	client.Publish(ctx, prefix+"ev", "j")
	for v := range shards {
		client.Publish(ctx, shardPrefix(name, v)+"ev", "j")
	}
	if err != nil {
		return deleted, fmt.Errorf("redisfrontier: reset crawl %q: %w", name, oneNode(err))
	}
	if deleted == 0 {
		return 0, fmt.Errorf("redisfrontier: crawl %q: %w", name, ErrNoCrawl)
	}
	return deleted, nil
}

// shardLeases counts the leases out on the shards of crawl name whose
// term has not ended, each on its master's clock.
func shardLeases(ctx context.Context, client redis.UniversalClient, name string, shards int) (int, error) {
	var cmds []*redis.Cmd
	_, err := client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for v := range shards {
			sp := shardPrefix(name, v)
			cmds = append(cmds, liveLeasesScript.Eval(ctx, p, []string{sp + "leases", sp + "exp"}))
		}
		return nil
	})
	n := 0
	for _, c := range cmds {
		v, _ := c.Int()
		n += v
	}
	return n, err
}

// liveLeasesScript counts the leases of KEYS[1] whose term, in the sorted
// set KEYS[2], has not ended (or that have none).
var liveLeasesScript = redis.NewScript(`
local t = redis.call('TIME')
return redis.call('HLEN', KEYS[1]) - redis.call('ZCOUNT', KEYS[2], '-inf', t[1] * 1000000 + t[2])
`)
