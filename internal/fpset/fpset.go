// Package fpset is a set of 64-bit fingerprints, the seen set of the
// frontiers: crawl.MemoryFrontier's and boltfrontier's. The caller hashes
// (each frontier has its own reasons for its hash); the set only stores.
package fpset

import "math/bits"

// Set holds 64-bit fingerprints in open-addressing tables (linear
// probing, the slot chosen by the fingerprint's bits), from 8/0.75 to
// 8/0.5 bytes per fingerprint as the tables fill. The fingerprints are
// split over Shards tables by their top bits, each grown by half on its
// own when three quarters full, so that a growth holds two copies of one
// table, not of the whole set.
//
// The fingerprints 0 and 1 are one to the set (0 marks an empty slot).
// The set places a fingerprint by its bits: fingerprints a third party
// can choose should be keyed or mixed with a secret first, or it can
// crowd one table. A Set is not safe for concurrent use.
type Set struct {
	tables Tables
	n      int
	shards *[Shards]shard
}

// Tables gives a Set its tables, so that a caller may keep them outside
// the Go heap. A nil Tables is the heap's.
type Tables interface {
	// Table returns n zeroed slots.
	Table(n int) []uint64
	// PutTable takes back a table Table returned, which the set no
	// longer uses.
	PutTable(t []uint64)
}

// shard is one table of a Set.
type shard struct {
	slots []uint64 // 0 is an empty slot; a fingerprint of 0 is stored as 1
	n     int
}

const (
	// Shards is how many tables a Set splits its fingerprints over.
	Shards        = 256 // a power of two
	minShardSlots = 16
)

// New returns an empty set whose tables come from t (nil: the heap).
func New(t Tables) Set {
	return Set{tables: t, shards: new([Shards]shard)}
}

// Len returns how many fingerprints s holds.
func (s *Set) Len() int { return s.n }

// Add records fp and reports whether it was new.
func (s *Set) Add(fp uint64) bool {
	if fp == 0 {
		fp = 1
	}
	sh := &s.shards[fp>>(64-bits.Len(Shards-1))]
	if (sh.n+1)*4 > len(sh.slots)*3 {
		s.grow(sh)
	}
	i := home(fp, len(sh.slots))
	for {
		switch sh.slots[i] {
		case 0:
			sh.slots[i] = fp
			sh.n++
			s.n++
			return true
		case fp:
			return false
		}
		if i++; i == len(sh.slots) {
			i = 0
		}
	}
}

// Has reports whether s holds fp.
func (s *Set) Has(fp uint64) bool {
	if fp == 0 {
		fp = 1
	}
	sh := &s.shards[fp>>(64-bits.Len(Shards-1))]
	if len(sh.slots) == 0 {
		return false
	}
	i := home(fp, len(sh.slots))
	for {
		switch sh.slots[i] {
		case 0:
			return false
		case fp:
			return true
		}
		if i++; i == len(sh.slots) {
			i = 0
		}
	}
}

// home returns the slot where probing for fp starts in a table of n
// slots: the bits of fp below those that chose the table, scaled to n, so
// that n need not be a power of two.
func home(fp uint64, n int) int {
	hi, _ := bits.Mul64(fp<<bits.Len(Shards-1), uint64(n))
	return int(hi)
}

// grow moves the fingerprints of sh to a table half as large again.
func (s *Set) grow(sh *shard) {
	old := sh.slots
	sh.slots = s.table(max(minShardSlots, len(old)+len(old)/2))
	for _, fp := range old {
		if fp == 0 {
			continue
		}
		i := home(fp, len(sh.slots))
		for sh.slots[i] != 0 {
			if i++; i == len(sh.slots) {
				i = 0
			}
		}
		sh.slots[i] = fp
	}
	if s.tables != nil {
		s.tables.PutTable(old)
	}
}

func (s *Set) table(n int) []uint64 {
	if s.tables == nil {
		return make([]uint64, n)
	}
	return s.tables.Table(n)
}
