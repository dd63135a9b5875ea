package crawl

import (
	"context"
	"errors"
	"sync"
)

// Errors returned by the non-blocking Queue methods and by TaskDone.
var (
	// ErrQueueFull is returned by TryPut when a bounded queue holds maxsize items.
	ErrQueueFull = errors.New("crawl: queue full")
	// ErrQueueEmpty is returned by TryGet when the queue holds no item.
	ErrQueueEmpty = errors.New("crawl: queue empty")
	// ErrTaskDone is returned by TaskDone when it is called more times than
	// items were put.
	ErrTaskDone = errors.New("crawl: TaskDone called more times than Put")
)

// Queue is a joinable FIFO queue, the Go twin of Python's asyncio.Queue that
// drives the crawler of "500 Lines or Less".
//
// Every successful Put raises a count of unfinished tasks; every TaskDone
// lowers it; Join blocks until it is zero. A consumer calls TaskDone once it
// has finished with an item it got, after putting any follow-up items, so
// that Join returns exactly when no item is queued and none is being worked
// on. Join on a new, empty queue returns at once.
//
// Blocked Put and Get calls are served in FIFO order. A Queue is safe for
// concurrent use by multiple goroutines; the zero value is not usable, call
// NewQueue.
type Queue[T any] struct {
	mu         sync.Mutex
	items      []T // items[head:] are queued, oldest first
	head       int
	maxsize    int
	unfinished int
	getters    []*waiter[T]  // blocked Gets, oldest first; only while empty
	putters    []*waiter[T]  // blocked Puts, oldest first; only while full
	idle       chan struct{} // closed while unfinished == 0
}

// waiter is a blocked Get or Put. It is served under q.mu by the call that
// makes room for it: push hands a Get its item, pop adds a Put's item. Doing
// the transfer there, instead of waking the waiter to retry, is what keeps
// blocked calls in FIFO order: woken goroutines would race for q.mu.
type waiter[T any] struct {
	item T
	done chan struct{} // receives once the waiter is served
}

// NewQueue returns an empty queue that holds at most maxsize items; with
// maxsize <= 0 the queue is unbounded and Put never blocks.
func NewQueue[T any](maxsize int) *Queue[T] {
	idle := make(chan struct{})
	close(idle)
	return &Queue[T]{maxsize: maxsize, idle: idle}
}

// Len returns the number of items queued and not yet taken by Get.
func (q *Queue[T]) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items) - q.head
}

// Unfinished returns the number of items put and not yet marked done with
// TaskDone: those queued plus those taken and still being worked on.
func (q *Queue[T]) Unfinished() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.unfinished
}

// Put adds item at the tail of the queue, blocking while a bounded queue is
// full. It returns ctx.Err() if ctx is done before the item is added; the
// item is then not queued. If ctx is already done, Put adds nothing, even if
// there is room.
func (q *Queue[T]) Put(ctx context.Context, item T) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	q.mu.Lock()
	if !q.full() {
		q.push(item)
		q.mu.Unlock()
		return nil
	}
	w := &waiter[T]{item: item, done: make(chan struct{}, 1)}
	q.putters = append(q.putters, w)
	q.mu.Unlock()
	return q.park(ctx, &q.putters, w)
}

// TryPut adds item without blocking, like put_nowait: it returns ErrQueueFull
// if a bounded queue is full.
func (q *Queue[T]) TryPut(item T) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.full() {
		return ErrQueueFull
	}
	q.push(item)
	return nil
}

// Get removes and returns the item at the head of the queue, blocking while
// the queue is empty. If ctx is done when Get is called, or while it waits
// before an item is handed to it, Get returns ctx.Err() and takes no item,
// even if one is queued; an item a Put hands to it as ctx ends is
// returned, with a nil error, so that no item is lost.
func (q *Queue[T]) Get(ctx context.Context) (T, error) {
	var zero T
	if err := ctx.Err(); err != nil {
		return zero, err
	}
	q.mu.Lock()
	if q.head < len(q.items) {
		item := q.pop()
		q.mu.Unlock()
		return item, nil
	}
	w := &waiter[T]{done: make(chan struct{}, 1)}
	q.getters = append(q.getters, w)
	q.mu.Unlock()
	if err := q.park(ctx, &q.getters, w); err != nil {
		return zero, err
	}
	return w.item, nil
}

// TryGet removes and returns the item at the head of the queue without
// blocking, like get_nowait: it returns ErrQueueEmpty if there is none.
func (q *Queue[T]) TryGet() (T, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.head == len(q.items) {
		var zero T
		return zero, ErrQueueEmpty
	}
	return q.pop(), nil
}

// TaskDone marks one item put earlier as finished. When every item put has
// been marked, blocked Join calls return. Calling TaskDone more times than
// items were put returns ErrTaskDone and changes nothing.
func (q *Queue[T]) TaskDone() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.unfinished <= 0 {
		return ErrTaskDone
	}
	q.unfinished--
	if q.unfinished == 0 {
		close(q.idle)
	}
	return nil
}

// Join blocks until every item put has been marked done with TaskDone, or
// until ctx is done, when it returns ctx.Err().
func (q *Queue[T]) Join(ctx context.Context) error {
	q.mu.Lock()
	idle := q.idle
	q.mu.Unlock()
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		// Prefer the queue's answer when both are ready.
		select {
		case <-idle:
			return nil
		default:
			return ctx.Err()
		}
	}
}

func (q *Queue[T]) full() bool {
	return q.maxsize > 0 && len(q.items)-q.head >= q.maxsize
}

// push adds item, handing it to the oldest blocked Get if there is one (the
// queue is then empty), else appending it. q.mu must be held.
func (q *Queue[T]) push(item T) {
	if q.unfinished == 0 {
		q.idle = make(chan struct{})
	}
	q.unfinished++
	if len(q.getters) > 0 {
		w := shift(&q.getters)
		w.item = item
		w.done <- struct{}{}
		return
	}
	if q.head > 0 && len(q.items) == cap(q.items) {
		// Reuse the consumed front instead of growing the backing array.
		n := copy(q.items, q.items[q.head:])
		clear(q.items[n:])
		q.items = q.items[:n]
		q.head = 0
	}
	q.items = append(q.items, item)
}

// pop removes the head item and fills the freed slot with the item of the
// oldest blocked Put, if any. q.mu must be held and the queue must not be
// empty.
func (q *Queue[T]) pop() T {
	var zero T
	item := q.items[q.head]
	q.items[q.head] = zero // let the garbage collector have it
	q.head++
	if q.head == len(q.items) {
		q.items = q.items[:0]
		q.head = 0
	}
	if len(q.putters) > 0 {
		w := shift(&q.putters)
		q.push(w.item)
		w.item = zero
		w.done <- struct{}{}
	}
	return item
}

// park blocks until w, already on waiters, is served or ctx is done. It
// returns ctx.Err() only if w was still waiting, and then removes it. A
// waiter served at the moment ctx ended has had its turn and returns nil,
// rather than undo a transfer others may already depend on, as
// x/sync/semaphore does. park is called without q.mu held.
func (q *Queue[T]) park(ctx context.Context, waiters *[]*waiter[T], w *waiter[T]) error {
	select {
	case <-w.done:
		return nil
	case <-ctx.Done():
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if remove(waiters, w) {
		return ctx.Err()
	}
	return nil
}

// shift removes and returns the oldest waiter; there must be one.
func shift[T any](waiters *[]*waiter[T]) *waiter[T] {
	w := (*waiters)[0]
	(*waiters)[0] = nil
	*waiters = (*waiters)[1:]
	return w
}

// remove deletes w from waiters and reports whether it was there.
func remove[T any](waiters *[]*waiter[T], w *waiter[T]) bool {
	s := *waiters
	for i, x := range s {
		if x == w {
			copy(s[i:], s[i+1:])
			s[len(s)-1] = nil
			*waiters = s[:len(s)-1]
			return true
		}
	}
	return false
}
