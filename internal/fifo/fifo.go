// Package fifo is a first-in first-out list of values, the frontiers'
// queues: a host's queued Requests and referrers (crawl.MemoryFrontier)
// and the hosts that take turns (internal/sched).
package fifo

// List is a first-in first-out list of values, in a slice whose read part
// is let go as it is read. Its zero value is an empty list. It is not
// safe for concurrent use.
type List[T any] struct {
	items []T // items[head:] unread
	head  int
}

// Len returns the number of values in the list.
func (l *List[T]) Len() int { return len(l.items) - l.head }

// Push adds v at the end of the list.
func (l *List[T]) Push(v T) {
	if l.head >= 64 && l.head*2 >= len(l.items) {
		// A list that is never empty must not grow with every value
		// read.
		n := copy(l.items, l.items[l.head:])
		clear(l.items[n:])
		l.items, l.head = l.items[:n], 0
	}
	l.items = append(l.items, v)
}

// Pop removes and returns the first value; the list must not be empty.
func (l *List[T]) Pop() T {
	var zero T
	v := l.items[l.head]
	l.items[l.head] = zero
	l.head++
	if l.head == len(l.items) {
		l.items, l.head = l.items[:0], 0
		if cap(l.items) > 64 {
			l.items = nil // a drained large list gives its memory back
		}
	}
	return v
}
