package crawl

import (
	"runtime"

	"github.com/asyncrawl/crawl/internal/offheap"
)

// offHeap holds a MemoryFrontier's large pointer-free memory, its seen
// set's tables and its queues' full-size chunks, outside the Go heap on
// Linux (see package offheap). Elsewhere, and for small tables and
// chunks, the memory is the heap's.
//
// Chunks read to their end go to a free list and are used again, their
// pages given back to the system past the first keptChunks; tables are
// given back at once when the seen set outgrows them. Everything is
// given back when the frontier is closed, or when it is collected without
// a Close. An offHeap is not safe for concurrent use: the frontier's lock
// guards it.
type offHeap struct {
	maps   [][]byte // every mapping held for chunks, by its first byte
	slab   []byte   // the rest of the last mapping made for chunks
	free   [][]byte // chunks of maxChunk bytes, to use again
	tables offheap.Tables
}

// slabSize is the size of a mapping that chunks are cut from.
const slabSize = 1 << 20

// keptChunks is how many free chunks keep their pages.
const keptChunks = 256

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
		s, ok := offheap.Map(slabSize)
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
			if offheap.Within(s, c[:maxChunk]) {
				offheap.DropPages(c[:maxChunk])
				break
			}
		}
	}
	m.free = append(m.free, c)
}

// release gives back every mapping; nothing of m may be used after.
func (m *offHeap) release() {
	for _, s := range m.maps {
		offheap.Unmap(s)
	}
	m.maps, m.slab, m.free = nil, nil, nil
	m.tables.Release()
}
