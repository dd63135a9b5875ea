package crawl

import (
	"hash/maphash"

	"github.com/asyncrawl/crawl/internal/fpset"
)

// seenSet is the MemoryFrontier's seen set: a 64-bit fingerprint of each
// URL, not the URL, in an fpset.Set (8/0.75 to 8/0.5 bytes per URL), its
// large tables mapped outside the Go heap by the frontier's offHeap.
//
// Two URLs with one fingerprint are one URL to the set: the second is
// taken for seen and never crawled. Among n URLs that happens with a
// probability of about n²/2⁶⁵: 3·10⁻⁸ for a million URLs, 3·10⁻⁶ for ten
// million, 3·10⁻⁴ for a hundred million. The seed is drawn anew for each
// set, so that a collision is not the same in two crawls and a site
// cannot plan one, nor crowd one of the set's tables. A seenSet is not
// safe for concurrent use.
type seenSet struct {
	seed maphash.Seed
	fps  fpset.Set
}

// newSeenSet returns an empty set whose large tables come from mem.
func newSeenSet(mem *offHeap) seenSet {
	return seenSet{seed: maphash.MakeSeed(), fps: fpset.New(&mem.tables)}
}

// add records s and reports whether it was new.
func (s *seenSet) add(str string) bool {
	return s.fps.Add(maphash.String(s.seed, str))
}
