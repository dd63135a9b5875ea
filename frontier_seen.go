package crawl

import (
	"hash/maphash"
	"math/bits"
)

// seenSet is the MemoryFrontier's seen set: a 64-bit fingerprint of each
// URL, not the URL, in an open-addressing table (linear probing, the slot
// chosen by the fingerprint's high bits), from 8/0.75 to 8/0.5 bytes per
// URL as the table fills, and 8 more for a moment while it grows by half.
//
// Two URLs with one fingerprint are one URL to the set: the second is
// taken for seen and never crawled. Among n URLs that happens with a
// probability of about n²/2⁶⁵: 3·10⁻⁸ for a million URLs, 3·10⁻⁶ for ten
// million, 3·10⁻⁴ for a hundred million. The seed is drawn anew for each
// set, so that a collision is not the same in two crawls and a site
// cannot plan one. A seenSet is not safe for concurrent use.
type seenSet struct {
	seed  maphash.Seed
	slots []uint64 // 0 is an empty slot; a fingerprint of 0 is stored as 1
	n     int
}

// minSeenSlots is the size of a new set's table.
const minSeenSlots = 64

// add records s and reports whether it was new.
func (s *seenSet) add(str string) bool {
	if s.slots == nil {
		s.seed = maphash.MakeSeed()
		s.slots = make([]uint64, minSeenSlots)
	}
	fp := maphash.String(s.seed, str)
	if fp == 0 {
		fp = 1
	}
	if (s.n+1)*4 > len(s.slots)*3 {
		s.grow()
	}
	i := s.home(fp, len(s.slots))
	for {
		switch s.slots[i] {
		case 0:
			s.slots[i] = fp
			s.n++
			return true
		case fp:
			return false
		}
		if i++; i == len(s.slots) {
			i = 0
		}
	}
}

// home returns the slot where probing for fp starts in a table of n slots:
// the high bits of fp scaled to n, so that n need not be a power of two.
func (s *seenSet) home(fp uint64, n int) int {
	hi, _ := bits.Mul64(fp, uint64(n))
	return int(hi)
}

// grow moves the fingerprints to a table half as large again.
func (s *seenSet) grow() {
	old := s.slots
	s.slots = make([]uint64, len(old)+len(old)/2)
	for _, fp := range old {
		if fp == 0 {
			continue
		}
		i := s.home(fp, len(s.slots))
		for s.slots[i] != 0 {
			if i++; i == len(s.slots) {
				i = 0
			}
		}
		s.slots[i] = fp
	}
}
