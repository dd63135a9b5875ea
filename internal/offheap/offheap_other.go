//go:build !linux

package offheap

// Map maps no memory on this system: the heap's is used.
func Map(n int) ([]byte, bool) { return nil, false }

// Unmap is never called on this system.
func Unmap(b []byte) {}

// DropPages does nothing on this system: nothing is mapped.
func DropPages(b []byte) {}

// Within reports false: nothing is mapped on this system.
func Within(b, c []byte) bool { return false }

// bytesToSlots is never called on this system.
func bytesToSlots(b []byte) []uint64 { return nil }

// isFirstSlot reports false: no table is mapped on this system.
func isFirstSlot(b []byte, t []uint64) bool { return false }
