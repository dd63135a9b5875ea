//go:build linux

package offheap

import (
	"syscall"
	"unsafe"
)

// Map maps n bytes of zeroed memory from the system, outside the Go
// heap; false when the system refuses.
func Map(n int) ([]byte, bool) {
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	return b, err == nil
}

// Unmap gives back memory Map returned.
func Unmap(b []byte) { syscall.Munmap(b) }

// DropPages gives the pages of mapped memory back to the system, which
// maps them anew when they are written again.
func DropPages(b []byte) { syscall.Madvise(b, syscall.MADV_DONTNEED) }

// Within reports whether c lies in b.
func Within(b, c []byte) bool {
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	p := uintptr(unsafe.Pointer(unsafe.SliceData(c)))
	return lo <= p && p+uintptr(len(c)) <= lo+uintptr(len(b))
}

// bytesToSlots views mapped memory as fingerprint slots.
func bytesToSlots(b []byte) []uint64 {
	return unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/8)
}

// isFirstSlot reports whether t starts at the first byte of b.
func isFirstSlot(b []byte, t []uint64) bool {
	return unsafe.Pointer(unsafe.SliceData(b)) == unsafe.Pointer(unsafe.SliceData(t))
}
