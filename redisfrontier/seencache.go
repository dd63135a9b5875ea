package redisfrontier

import (
	"sync"
	"sync/atomic"
)

// seenCache is a process's own memory of fingerprints the crawl's seen set
// holds: those it sent to a script that admits (after the call, each is in
// the seen set, whether the call admitted it or found it there). A URL once
// seen stays seen, so a link whose fingerprint is here is dropped without
// asking the server.
//
// Seen stays seen only while the server keeps what it was told: a
// redis-server that restarts (or a replica that takes over) may have lost
// the last writes, and with them URLs this cache holds. So the cache is
// tied to the server run its fingerprints were learned from (its run_id):
// a script checks that it runs on that run before it trusts what the cache
// dropped, and answers "stale" otherwise; the cache then starts afresh.
//
// The table is sets of cacheWays slots chosen by the fingerprint's low
// bits; a fingerprint that finds its set full takes the place of one of
// them (chosen by other bits of it). It starts at cacheStart slots (or its
// most, if less) and doubles each time an eighth of its slots are filled (so that sets
// seldom overflow), up to
// its most: a lookup in a table of the crawl's size stays in the
// processor's caches, where one in a table of 8 MiB misses them (it cost
// the crawl on one fast host a tenth of its CPU). Slots are read and
// written atomically, without a lock; the lock orders a reset, or a
// doubling, against the lookups and additions of the table before it.
type seenCache struct {
	mu    sync.RWMutex // Lock: reset, grow; RLock: a lookup or an addition tied to run
	run   string       // the server run the fingerprints are from; "" before the first
	slots []atomic.Uint64
	mask  uint64       // sets - 1
	max   int          // the most slots
	used  atomic.Int64 // the slots filled
}

// cacheWays is the number of slots of a set.
const cacheWays = 4

// cacheStart is the number of slots a table starts with (128 KiB).
const cacheStart = 1 << 14

// newSeenCache returns a cache of at least n fingerprints (8 bytes each),
// a power of two; nil for n <= 0.
func newSeenCache(n int) *seenCache {
	if n <= 0 {
		return nil
	}
	sets := 1
	for sets*cacheWays < n {
		sets *= 2
	}
	c := &seenCache{max: sets * cacheWays}
	c.alloc(min(c.max, cacheStart))
	return c
}

// alloc makes the table n slots, empty. The caller holds c.mu.Lock (or
// c is not shared yet).
func (c *seenCache) alloc(n int) {
	c.slots = make([]atomic.Uint64, n)
	c.mask = uint64(n/cacheWays - 1)
	c.used.Store(0)
}

// has reports whether fingerprint h is in the table. The caller holds
// c.mu.RLock, so that the answer is from the run it read.
func (c *seenCache) has(h uint64) bool {
	if h == 0 {
		return false // 0 marks an empty slot: never cached
	}
	set := c.slots[(h&c.mask)*cacheWays:][:cacheWays]
	for i := range set {
		if set[i].Load() == h {
			return true
		}
	}
	return false
}

// addLocked puts fingerprint h in the table. The caller holds c.mu.RLock.
func (c *seenCache) addLocked(h uint64) {
	if h == 0 {
		return
	}
	set := c.slots[(h&c.mask)*cacheWays:][:cacheWays]
	for i := range set {
		switch set[i].Load() {
		case h:
			return
		case 0:
			if set[i].CompareAndSwap(0, h) {
				c.used.Add(1)
				return
			}
		}
	}
	set[(h>>48)%cacheWays].Store(h)
}

// full reports whether an eighth of the table is filled and it may
// double. The
// caller holds c.mu.RLock.
func (c *seenCache) full() bool {
	return len(c.slots) < c.max && 8*c.used.Load() >= int64(len(c.slots))
}

// grow doubles the table, with what it holds, if it is still an eighth filled
// (another addition may have doubled it already).
func (c *seenCache) grow() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.full() {
		return
	}
	old := c.slots
	c.alloc(2 * len(old))
	for i := range old {
		c.addLocked(old[i].Load())
	}
}

// add puts the fingerprints hs, learned from a script that ran on the
// server run run, in the table; a table of another run starts afresh
// first (the server is on run now: what the table learned before may be
// lost).
func (c *seenCache) add(run string, hs []uint64) {
	if run == "" {
		return
	}
	c.mu.RLock()
	for c.run != run {
		c.mu.RUnlock()
		c.reset(run)
		c.mu.RLock()
	}
	for _, h := range hs {
		c.addLocked(h)
	}
	grow := c.full()
	c.mu.RUnlock()
	if grow {
		c.grow()
	}
}

// reset empties the table and ties it to the server run run, unless it is
// already: a script found that the server is no longer on the run the
// table was learned from.
func (c *seenCache) reset(run string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.run == run {
		return
	}
	c.run = run
	c.alloc(min(c.max, cacheStart))
}

// bytes returns the memory the table takes.
func (c *seenCache) bytes() int { return 8 * len(c.slots) }
