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
// The table is fixed in size: sets of cacheWays slots chosen by the
// fingerprint's low bits; a fingerprint that finds its set full takes the
// place of one of them (chosen by other bits of it). Slots are read and
// written atomically, without a lock; the lock orders a reset against the
// lookups and additions of the run before it.
type seenCache struct {
	mu    sync.RWMutex // Lock: reset; RLock: a lookup or an addition tied to run
	run   string       // the server run the fingerprints are from; "" before the first
	slots []atomic.Uint64
	mask  uint64 // sets - 1
}

// cacheWays is the number of slots of a set.
const cacheWays = 4

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
	return &seenCache{slots: make([]atomic.Uint64, sets*cacheWays), mask: uint64(sets - 1)}
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
				return
			}
		}
	}
	set[(h>>48)%cacheWays].Store(h)
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
	c.mu.RUnlock()
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
	for i := range c.slots {
		c.slots[i].Store(0)
	}
}

// bytes returns the memory the table takes.
func (c *seenCache) bytes() int { return 8 * len(c.slots) }
