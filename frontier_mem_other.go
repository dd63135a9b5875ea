//go:build !linux

package crawl

// mapMemory maps no memory on this system: the heap's is used.
func mapMemory(n int) ([]byte, bool) { return nil, false }

// unmapMemory is never called on this system.
func unmapMemory(b []byte) {}

// dropPages does nothing on this system: a chunk is the heap's.
func dropPages(b []byte) {}

// bytesToSlots is never called on this system.
func bytesToSlots(b []byte) []uint64 { return nil }

// isFirstSlot reports false: no table is mapped on this system.
func isFirstSlot(b []byte, t []uint64) bool { return false }

// within reports false: nothing is mapped on this system.
func within(b, c []byte) bool { return false }
