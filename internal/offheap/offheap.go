// Package offheap maps pointer-free memory outside the Go heap on Linux
// (elsewhere, the heap's is used): the collector neither scans it nor
// counts it in the heap that sets its pace, so a frontier of 300 MB does
// not let the crawl's garbage grow by as much again before a collection.
// The frontiers keep their seen sets' tables there (Tables), and
// crawl.MemoryFrontier its queues' chunks (Map).
package offheap

// Tables gives a seen set its tables (it is an fpset.Tables): those of
// bigTable bytes or more mapped, smaller ones the heap's. A table is
// given back as soon as the set outgrows it, and every table at Release.
// Tables is not safe for concurrent use: the frontier's lock guards it.
type Tables struct {
	maps [][]byte // every table mapped and not given back
}

// bigTable is the least size of a table that is mapped, not allocated.
const bigTable = 8 << 10

// Table returns n zeroed fingerprint slots.
func (m *Tables) Table(n int) []uint64 {
	if n*8 >= bigTable {
		if s, ok := Map(n * 8); ok {
			m.maps = append(m.maps, s)
			return bytesToSlots(s)
		}
	}
	return make([]uint64, n)
}

// PutTable gives back a table that Table returned.
func (m *Tables) PutTable(t []uint64) {
	if len(t) == 0 {
		return
	}
	for i, s := range m.maps {
		if isFirstSlot(s, t) {
			Unmap(s)
			m.maps[i] = m.maps[len(m.maps)-1]
			m.maps[len(m.maps)-1] = nil
			m.maps = m.maps[:len(m.maps)-1]
			return
		}
	}
}

// Release gives back every table mapped; no table of m may be used
// after.
func (m *Tables) Release() {
	for _, s := range m.maps {
		Unmap(s)
	}
	m.maps = nil
}
