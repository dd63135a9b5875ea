package crawl

import (
	"hash/maphash"
	"math/bits"
)

// seenSet is the MemoryFrontier's seen set: a 64-bit fingerprint of each
// URL, not the URL, in open-addressing tables (linear probing, the slot
// chosen by the fingerprint's bits), from 8/0.75 to 8/0.5 bytes per URL as
// the tables fill. The fingerprints are split over seenShards tables by
// their top bits, each grown by half on its own when three quarters full,
// so that a growth holds two copies of one table, not of the whole set.
//
// Two URLs with one fingerprint are one URL to the set: the second is
// taken for seen and never crawled. Among n URLs that happens with a
// probability of about n²/2⁶⁵: 3·10⁻⁸ for a million URLs, 3·10⁻⁶ for ten
// million, 3·10⁻⁴ for a hundred million. The seed is drawn anew for each
// set, so that a collision is not the same in two crawls and a site
// cannot plan one. A seenSet is not safe for concurrent use.
type seenSet struct {
	seed   maphash.Seed
	mem    *offHeap
	n      int
	shards *[seenShards]seenShard
}

// seenShard is one table of a seenSet.
type seenShard struct {
	slots []uint64 // 0 is an empty slot; a fingerprint of 0 is stored as 1
	n     int
}

const (
	seenShards    = 256 // a power of two
	minShardSlots = 16
)

// newSeenSet returns an empty set whose large tables come from mem.
func newSeenSet(mem *offHeap) seenSet {
	return seenSet{seed: maphash.MakeSeed(), mem: mem, shards: new([seenShards]seenShard)}
}

// add records s and reports whether it was new.
func (s *seenSet) add(str string) bool {
	fp := maphash.String(s.seed, str)
	if fp == 0 {
		fp = 1
	}
	sh := &s.shards[fp>>(64-bits.Len(seenShards-1))]
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

// home returns the slot where probing for fp starts in a table of n
// slots: the bits of fp below those that chose the table, scaled to n, so
// that n need not be a power of two.
func home(fp uint64, n int) int {
	hi, _ := bits.Mul64(fp<<bits.Len(seenShards-1), uint64(n))
	return int(hi)
}

// grow moves the fingerprints of sh to a table half as large again.
func (s *seenSet) grow(sh *seenShard) {
	old := sh.slots
	sh.slots = s.mem.table(max(minShardSlots, len(old)+len(old)/2))
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
	s.mem.putTable(old)
}
