package crawl

import "runtime"

// offHeap holds a MemoryFrontier's large pointer-free memory, its seen
// set's tables and its queues' full-size chunks, outside the Go heap on
// Linux (mapped from the operating system): the collector
// neither scans it nor counts it in the heap that sets its pace, so a
// frontier of 300 MB does not let the crawl's garbage grow by as much
// again before a collection. Elsewhere, and for small tables and chunks,
// the memory is the heap's.
//
// Chunks read to their end go to a free list and are used again, their
// pages given back to the system past the first keptChunks; tables are
// given back at once when the seen set outgrows them. Everything is
// given back when the frontier is closed, or when it is collected without
// a Close. An offHeap is not safe for concurrent use: the frontier's lock
// guards it.
type offHeap struct {
	maps [][]byte // every mapping held, by its first byte
	slab []byte   // the rest of the last mapping made for chunks
	free [][]byte // chunks of maxChunk bytes, to use again
}

// slabSize is the size of a mapping that chunks are cut from.
const slabSize = 1 << 20

// keptChunks is how many free chunks keep their pages.
const keptChunks = 256

// bigTable is the least size of a table that is mapped, not allocated.
const bigTable = 8 << 10

// newOffHeap returns the offHeap of f, which gives its memory back when f
// is collected.
func newOffHeap(f *MemoryFrontier) *offHeap {
	m := &offHeap{}
	runtime.AddCleanup(f, (*offHeap).release, m)
	return m
}

// chunk returns an empty chunk of maxChunk bytes.
func (m *offHeap) chunk() []byte {
	if n := len(m.free); n > 0 {
		c := m.free[n-1]
		m.free[n-1] = nil
		m.free = m.free[:n-1]
		return c[:0]
	}
	if len(m.slab) < maxChunk {
		s, ok := mapMemory(slabSize)
		if !ok {
			return make([]byte, 0, maxChunk)
		}
		m.maps = append(m.maps, s)
		m.slab = s
	}
	c := m.slab[:0:maxChunk]
	m.slab = m.slab[maxChunk:]
	return c
}

// putChunk takes back a chunk that chunk returned.
func (m *offHeap) putChunk(c []byte) {
	if cap(c) != maxChunk {
		return
	}
	if len(m.free) >= keptChunks {
		// Only a mapped chunk: a chunk of the heap may share its pages.
		for _, s := range m.maps {
			if within(s, c[:maxChunk]) {
				dropPages(c[:maxChunk])
				break
			}
		}
	}
	m.free = append(m.free, c)
}

// Table returns n zeroed fingerprint slots, for the seen set.
func (m *offHeap) Table(n int) []uint64 {
	if n*8 >= bigTable {
		if s, ok := mapMemory(n * 8); ok {
			m.maps = append(m.maps, s)
			return bytesToSlots(s)
		}
	}
	return make([]uint64, n)
}

// PutTable gives back a table that Table returned.
func (m *offHeap) PutTable(t []uint64) {
	if len(t) == 0 {
		return
	}
	for i, s := range m.maps {
		if isFirstSlot(s, t) {
			unmapMemory(s)
			m.maps[i] = m.maps[len(m.maps)-1]
			m.maps[len(m.maps)-1] = nil
			m.maps = m.maps[:len(m.maps)-1]
			return
		}
	}
}

// release gives back every mapping; nothing of m may be used after.
func (m *offHeap) release() {
	for _, s := range m.maps {
		unmapMemory(s)
	}
	m.maps, m.slab, m.free = nil, nil, nil
}
