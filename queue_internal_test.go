package crawl

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// The tests in this file hold Queue to the semantics of Python's
// asyncio.Queue. They are in package crawl so that they can see how many
// Get and Put calls are parked (queueParked), which makes "start the
// waiters in order" exact instead of timed; Join keeps no waiter list, so
// the Join tests run in a synctest bubble, where synctest.Wait returns only
// once every goroutine is durably blocked.

// queueHangGuard bounds any wait in these tests: it catches a hang, it
// never decides a pass.
const queueHangGuard = 10 * time.Second

// queueResult is what a goroutine calling Get or Put reports.
type queueResult struct {
	v   int
	err error
}

// queueParked returns how many Get and Put calls are parked on q.
func queueParked[T any](q *Queue[T]) (getters, putters int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.getters), len(q.putters)
}

// queueAwaitParked waits until exactly getters Get calls and putters Put
// calls are parked on q.
func queueAwaitParked[T any](t *testing.T, q *Queue[T], getters, putters int) {
	t.Helper()
	deadline := time.Now().Add(queueHangGuard)
	for {
		g, p := queueParked(q)
		if g == getters && p == putters {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("parked: got %d getters, %d putters, want %d, %d", g, p, getters, putters)
		}
		runtime.Gosched()
	}
}

// queueRecv receives one result from ch, failing the test on a hang.
func queueRecv(t *testing.T, ch <-chan queueResult, what string) queueResult {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(queueHangGuard):
		t.Fatalf("%s: no result after %v", what, queueHangGuard)
		return queueResult{}
	}
}

// queueGo runs Get(ctx) on q in a goroutine and returns where its result
// arrives.
func queueGo(q *Queue[int], ctx context.Context) <-chan queueResult {
	ch := make(chan queueResult, 1)
	go func() {
		v, err := q.Get(ctx)
		ch <- queueResult{v, err}
	}()
	return ch
}

// queuePutGo runs Put(ctx, v) on q in a goroutine and returns where its
// result arrives.
func queuePutGo(q *Queue[int], ctx context.Context, v int) <-chan queueResult {
	ch := make(chan queueResult, 1)
	go func() {
		ch <- queueResult{v, q.Put(ctx, v)}
	}()
	return ch
}

// queueDoneCtx returns a context that is already done with want.
func queueDoneCtx(t *testing.T, want error) context.Context {
	t.Helper()
	switch want {
	case context.Canceled:
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		return ctx
	case context.DeadlineExceeded:
		ctx, cancel := context.WithDeadline(context.Background(), time.Unix(0, 0))
		t.Cleanup(cancel)
		return ctx
	}
	t.Fatalf("queueDoneCtx(%v): unknown error", want)
	return nil
}

// queueCheck asserts Len and Unfinished.
func queueCheck[T any](t *testing.T, q *Queue[T], wantLen, wantUnfinished int) {
	t.Helper()
	if got := q.Len(); got != wantLen {
		t.Errorf("Len() = %d, want %d", got, wantLen)
	}
	if got := q.Unfinished(); got != wantUnfinished {
		t.Errorf("Unfinished() = %d, want %d", got, wantUnfinished)
	}
}

// queueDrain takes every queued item with TryGet.
func queueDrain(q *Queue[int]) []int {
	var out []int
	for {
		v, err := q.TryGet()
		if err != nil {
			return out
		}
		out = append(out, v)
	}
}

func queueEqual(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

var queueDoneErrs = []error{context.Canceled, context.DeadlineExceeded}

func TestQueueUnboundedNeverFull(t *testing.T) {
	for _, maxsize := range []int{0, -1} {
		t.Run(fmt.Sprintf("maxsize=%d", maxsize), func(t *testing.T) {
			q := NewQueue[int](maxsize)
			const n = 2000
			for i := range n {
				var err error
				if i%2 == 0 {
					err = q.TryPut(i)
				} else {
					err = q.Put(context.Background(), i)
				}
				if err != nil {
					t.Fatalf("put %d: got %v, want nil", i, err)
				}
			}
			queueCheck(t, q, n, n)
			for i := range n {
				v, err := q.TryGet()
				if err != nil || v != i {
					t.Fatalf("TryGet #%d: got %d, %v, want %d, nil", i, v, err, i)
				}
			}
			queueCheck(t, q, 0, n)
		})
	}
}

func TestQueueBoundedTryPutFull(t *testing.T) {
	for _, maxsize := range []int{1, 3} {
		t.Run(fmt.Sprintf("maxsize=%d", maxsize), func(t *testing.T) {
			q := NewQueue[int](maxsize)
			for i := range maxsize {
				if err := q.TryPut(i); err != nil {
					t.Fatalf("TryPut(%d): got %v, want nil", i, err)
				}
			}
			if err := q.TryPut(99); !errors.Is(err, ErrQueueFull) {
				t.Fatalf("TryPut on full queue: got %v, want ErrQueueFull", err)
			}
			// A refused put is not counted.
			queueCheck(t, q, maxsize, maxsize)
			if v, err := q.TryGet(); err != nil || v != 0 {
				t.Fatalf("TryGet: got %d, %v, want 0, nil", v, err)
			}
			if err := q.TryPut(100); err != nil {
				t.Fatalf("TryPut after a slot was freed: got %v, want nil", err)
			}
			if err := q.TryPut(101); !errors.Is(err, ErrQueueFull) {
				t.Fatalf("TryPut on full queue again: got %v, want ErrQueueFull", err)
			}
			want := []int{}
			for i := 1; i < maxsize; i++ {
				want = append(want, i)
			}
			want = append(want, 100)
			if got := queueDrain(q); !queueEqual(got, want) {
				t.Errorf("drained: got %v, want %v", got, want)
			}
		})
	}
}

// TestQueuePutDoneCtx: a Put with a done ctx returns ctx.Err() and adds
// nothing, whether or not there is room, like Get with a done ctx takes
// nothing.
func TestQueuePutDoneCtx(t *testing.T) {
	for _, maxsize := range []int{0, 2} {
		for _, fill := range []int{0, 1, 2} {
			if maxsize > 0 && fill > maxsize {
				continue
			}
			for _, want := range queueDoneErrs {
				name := fmt.Sprintf("maxsize=%d/fill=%d/%v", maxsize, fill, want)
				t.Run(name, func(t *testing.T) {
					q := NewQueue[int](maxsize)
					for i := range fill {
						if err := q.TryPut(i); err != nil {
							t.Fatalf("TryPut(%d): got %v, want nil", i, err)
						}
					}
					if err := q.Put(queueDoneCtx(t, want), 99); !errors.Is(err, want) {
						t.Fatalf("Put with done ctx: got %v, want %v", err, want)
					}
					queueCheck(t, q, fill, fill)
					if g, p := queueParked(q); g != 0 || p != 0 {
						t.Errorf("parked after Put: got %d getters, %d putters, want 0, 0", g, p)
					}
					for _, v := range queueDrain(q) {
						if v == 99 {
							t.Errorf("the item of a Put that returned %v was queued", want)
						}
					}
				})
			}
		}
	}
}

func TestQueuePutBlocksWhileFull(t *testing.T) {
	q := NewQueue[int](2)
	for i := range 2 {
		if err := q.Put(context.Background(), i); err != nil {
			t.Fatalf("Put(%d): got %v, want nil", i, err)
		}
	}
	put := queuePutGo(q, context.Background(), 2)
	queueAwaitParked(t, q, 0, 1)
	select {
	case r := <-put:
		t.Fatalf("Put on a full queue returned %v while the queue was full", r.err)
	default:
	}
	queueCheck(t, q, 2, 2)
	v, err := q.Get(context.Background())
	if err != nil || v != 0 {
		t.Fatalf("Get: got %d, %v, want 0, nil", v, err)
	}
	if r := queueRecv(t, put, "blocked Put"); r.err != nil {
		t.Fatalf("blocked Put after Get: got %v, want nil", r.err)
	}
	queueCheck(t, q, 2, 3)
	if got, want := queueDrain(q), []int{1, 2}; !queueEqual(got, want) {
		t.Errorf("drained: got %v, want %v", got, want)
	}
}

// TestQueuePutCtxWhileBlocked: a Put parked on a full queue returns
// ctx.Err() when ctx ends, and its item is not queued.
func TestQueuePutCtxWhileBlocked(t *testing.T) {
	for _, want := range queueDoneErrs {
		t.Run(want.Error(), func(t *testing.T) {
			q := NewQueue[int](1)
			if err := q.TryPut(0); err != nil {
				t.Fatalf("TryPut(0): got %v, want nil", err)
			}
			var ctx context.Context
			var cancel context.CancelFunc
			if want == context.Canceled {
				ctx, cancel = context.WithCancel(context.Background())
			} else {
				ctx, cancel = context.WithTimeout(context.Background(), 5*time.Millisecond)
			}
			defer cancel()
			put := queuePutGo(q, ctx, 99)
			if want == context.Canceled {
				queueAwaitParked(t, q, 0, 1)
				cancel()
			}
			if r := queueRecv(t, put, "blocked Put"); !errors.Is(r.err, want) {
				t.Fatalf("blocked Put: got %v, want %v", r.err, want)
			}
			queueCheck(t, q, 1, 1)
			if g, p := queueParked(q); g != 0 || p != 0 {
				t.Errorf("parked after Put gave up: got %d getters, %d putters, want 0, 0", g, p)
			}
			if got, want := queueDrain(q), []int{0}; !queueEqual(got, want) {
				t.Errorf("drained: got %v, want %v", got, want)
			}
		})
	}
}

func TestQueueGetBlocksWhileEmpty(t *testing.T) {
	q := NewQueue[int](0)
	get := queueGo(q, context.Background())
	queueAwaitParked(t, q, 1, 0)
	select {
	case r := <-get:
		t.Fatalf("Get on an empty queue returned %d, %v", r.v, r.err)
	default:
	}
	if err := q.Put(context.Background(), 7); err != nil {
		t.Fatalf("Put(7): got %v, want nil", err)
	}
	if r := queueRecv(t, get, "blocked Get"); r.err != nil || r.v != 7 {
		t.Fatalf("blocked Get: got %d, %v, want 7, nil", r.v, r.err)
	}
	queueCheck(t, q, 0, 1)
}

func TestQueueFIFO(t *testing.T) {
	for _, maxsize := range []int{0, 5, 64} {
		t.Run(fmt.Sprintf("maxsize=%d", maxsize), func(t *testing.T) {
			q := NewQueue[int](maxsize)
			ctx := context.Background()
			next, want := 0, 0
			// Put three, take two, over and over, so the queue wraps and
			// compacts its storage many times.
			for round := 0; round < 200; round++ {
				for range 3 {
					if maxsize > 0 && q.Len() == maxsize {
						break
					}
					var err error
					if next%2 == 0 {
						err = q.Put(ctx, next)
					} else {
						err = q.TryPut(next)
					}
					if err != nil {
						t.Fatalf("put %d: got %v, want nil", next, err)
					}
					next++
				}
				for range 2 {
					var v int
					var err error
					if want%2 == 0 {
						v, err = q.Get(ctx)
					} else {
						v, err = q.TryGet()
					}
					if err != nil || v != want {
						t.Fatalf("get: got %d, %v, want %d, nil", v, err, want)
					}
					want++
				}
			}
			for _, v := range queueDrain(q) {
				if v != want {
					t.Fatalf("drain: got %d, want %d", v, want)
				}
				want++
			}
			if want != next {
				t.Errorf("got %d items back, want %d", want, next)
			}
			queueCheck(t, q, 0, next)
		})
	}
}

func TestQueueTryGetEmpty(t *testing.T) {
	q := NewQueue[int](0)
	if v, err := q.TryGet(); !errors.Is(err, ErrQueueEmpty) || v != 0 {
		t.Fatalf("TryGet on a new queue: got %d, %v, want 0, ErrQueueEmpty", v, err)
	}
	if err := q.TryPut(1); err != nil {
		t.Fatalf("TryPut(1): got %v, want nil", err)
	}
	if v, err := q.TryGet(); err != nil || v != 1 {
		t.Fatalf("TryGet: got %d, %v, want 1, nil", v, err)
	}
	if v, err := q.TryGet(); !errors.Is(err, ErrQueueEmpty) || v != 0 {
		t.Fatalf("TryGet on a drained queue: got %d, %v, want 0, ErrQueueEmpty", v, err)
	}
	queueCheck(t, q, 0, 1)
}

// TestQueueGetDoneCtx: Get with a done ctx takes nothing, even with items
// queued.
func TestQueueGetDoneCtx(t *testing.T) {
	for _, want := range queueDoneErrs {
		for _, fill := range []int{0, 2} {
			t.Run(fmt.Sprintf("%v/fill=%d", want, fill), func(t *testing.T) {
				q := NewQueue[int](0)
				for i := range fill {
					if err := q.TryPut(10 + i); err != nil {
						t.Fatalf("TryPut: got %v, want nil", err)
					}
				}
				v, err := q.Get(queueDoneCtx(t, want))
				if !errors.Is(err, want) || v != 0 {
					t.Fatalf("Get with done ctx: got %d, %v, want 0, %v", v, err, want)
				}
				queueCheck(t, q, fill, fill)
				if fill > 0 {
					if v, err := q.TryGet(); err != nil || v != 10 {
						t.Errorf("TryGet after: got %d, %v, want 10, nil", v, err)
					}
				}
			})
		}
	}
}

// TestQueueGetCtxWhileBlocked: a Get parked on an empty queue returns
// ctx.Err() when ctx ends, and leaves no waiter behind to swallow the next
// item.
func TestQueueGetCtxWhileBlocked(t *testing.T) {
	for _, want := range queueDoneErrs {
		t.Run(want.Error(), func(t *testing.T) {
			q := NewQueue[int](0)
			var ctx context.Context
			var cancel context.CancelFunc
			if want == context.Canceled {
				ctx, cancel = context.WithCancel(context.Background())
			} else {
				ctx, cancel = context.WithTimeout(context.Background(), 5*time.Millisecond)
			}
			defer cancel()
			get := queueGo(q, ctx)
			if want == context.Canceled {
				queueAwaitParked(t, q, 1, 0)
				cancel()
			}
			if r := queueRecv(t, get, "blocked Get"); !errors.Is(r.err, want) || r.v != 0 {
				t.Fatalf("blocked Get: got %d, %v, want 0, %v", r.v, r.err, want)
			}
			queueAwaitParked(t, q, 0, 0)
			if err := q.TryPut(5); err != nil {
				t.Fatalf("TryPut(5): got %v, want nil", err)
			}
			queueCheck(t, q, 1, 1)
			if v, err := q.TryGet(); err != nil || v != 5 {
				t.Errorf("TryGet: got %d, %v, want 5, nil", v, err)
			}
		})
	}
}

// TestQueueUnfinished: every put raises Unfinished, TaskDone lowers it, and
// Len counts only what is still queued.
func TestQueueUnfinished(t *testing.T) {
	q := NewQueue[int](0)
	ctx := context.Background()
	steps := []struct {
		name            string
		do              func() error
		len, unfinished int
	}{
		{"Put", func() error { return q.Put(ctx, 1) }, 1, 1},
		{"TryPut", func() error { return q.TryPut(2) }, 2, 2},
		{"Put", func() error { return q.Put(ctx, 3) }, 3, 3},
		{"Get", func() error { _, err := q.Get(ctx); return err }, 2, 3},
		{"TryGet", func() error { _, err := q.TryGet(); return err }, 1, 3},
		{"TaskDone", q.TaskDone, 1, 2},
		{"TaskDone", q.TaskDone, 1, 1},
		// A TaskDone for an item still queued is allowed, as in asyncio.
		{"TaskDone", q.TaskDone, 1, 0},
		{"TryPut", func() error { return q.TryPut(4) }, 2, 1},
		{"Get", func() error { _, err := q.Get(ctx); return err }, 1, 1},
	}
	for i, s := range steps {
		if err := s.do(); err != nil {
			t.Fatalf("step %d %s: got %v, want nil", i, s.name, err)
		}
		if l, u := q.Len(), q.Unfinished(); l != s.len || u != s.unfinished {
			t.Fatalf("after step %d %s: got Len %d, Unfinished %d, want %d, %d", i, s.name, l, u, s.len, s.unfinished)
		}
	}
}

func TestQueueTaskDoneTooMany(t *testing.T) {
	q := NewQueue[int](0)
	if err := q.TaskDone(); !errors.Is(err, ErrTaskDone) {
		t.Fatalf("TaskDone on a new queue: got %v, want ErrTaskDone", err)
	}
	queueCheck(t, q, 0, 0)
	for i := range 2 {
		if err := q.TryPut(i); err != nil {
			t.Fatalf("TryPut: got %v, want nil", err)
		}
	}
	for i := range 2 {
		if err := q.TaskDone(); err != nil {
			t.Fatalf("TaskDone #%d: got %v, want nil", i, err)
		}
	}
	for range 3 {
		if err := q.TaskDone(); !errors.Is(err, ErrTaskDone) {
			t.Fatalf("extra TaskDone: got %v, want ErrTaskDone", err)
		}
		if u := q.Unfinished(); u != 0 {
			t.Fatalf("Unfinished after extra TaskDone: got %d, want 0", u)
		}
	}
	// The refused calls left no debt: one put makes the queue busy again.
	if err := q.TryPut(9); err != nil {
		t.Fatalf("TryPut: got %v, want nil", err)
	}
	queueCheck(t, q, 3, 1)
	if err := q.Join(queueDoneCtx(t, context.Canceled)); !errors.Is(err, context.Canceled) {
		t.Fatalf("Join on a busy queue with done ctx: got %v, want context.Canceled", err)
	}
	if err := q.TaskDone(); err != nil {
		t.Fatalf("TaskDone: got %v, want nil", err)
	}
	if err := q.Join(context.Background()); err != nil {
		t.Fatalf("Join after the last TaskDone: got %v, want nil", err)
	}
}

// TestQueueJoinIdle: Join on a queue with nothing unfinished returns nil at
// once, even with a done ctx, since the queue's answer is preferred.
func TestQueueJoinIdle(t *testing.T) {
	ctxs := map[string]func(*testing.T) context.Context{
		"background": func(*testing.T) context.Context { return context.Background() },
		"canceled":   func(t *testing.T) context.Context { return queueDoneCtx(t, context.Canceled) },
		"deadline":   func(t *testing.T) context.Context { return queueDoneCtx(t, context.DeadlineExceeded) },
	}
	for name, ctx := range ctxs {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				q := NewQueue[int](0)
				// Many tries, since Join's select picks at random between
				// ready cases.
				for range 100 {
					if err := q.Join(ctx(t)); err != nil {
						t.Fatalf("Join on a new queue: got %v, want nil", err)
					}
				}
				if err := q.TryPut(1); err != nil {
					t.Fatalf("TryPut: got %v, want nil", err)
				}
				if _, err := q.TryGet(); err != nil {
					t.Fatalf("TryGet: got %v, want nil", err)
				}
				if err := q.TaskDone(); err != nil {
					t.Fatalf("TaskDone: got %v, want nil", err)
				}
				for range 100 {
					if err := q.Join(ctx(t)); err != nil {
						t.Fatalf("Join on a queue gone idle: got %v, want nil", err)
					}
				}
			})
		})
	}
}

// queueJoinGo runs Join(ctx) on q in a goroutine and returns where its
// result arrives.
func queueJoinGo(q *Queue[int], ctx context.Context) <-chan error {
	ch := make(chan error, 1)
	go func() { ch <- q.Join(ctx) }()
	return ch
}

// TestQueueJoinBlocks: Join waits for the last TaskDone, not for the queue
// to be empty.
func TestQueueJoinBlocks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := NewQueue[int](0)
		ctx := context.Background()
		for i := range 2 {
			if err := q.Put(ctx, i); err != nil {
				t.Fatalf("Put: got %v, want nil", err)
			}
		}
		join := queueJoinGo(q, ctx)
		steps := []func() error{
			func() error { _, err := q.Get(ctx); return err },
			func() error { _, err := q.Get(ctx); return err }, // empty now, both taken
			q.TaskDone, // one still not done
		}
		for i, step := range steps {
			if err := step(); err != nil {
				t.Fatalf("step %d: got %v, want nil", i, err)
			}
			synctest.Wait()
			select {
			case err := <-join:
				t.Fatalf("Join returned %v after step %d with Unfinished = %d", err, i, q.Unfinished())
			default:
			}
		}
		if err := q.TaskDone(); err != nil {
			t.Fatalf("last TaskDone: got %v, want nil", err)
		}
		synctest.Wait()
		select {
		case err := <-join:
			if err != nil {
				t.Fatalf("Join after the last TaskDone: got %v, want nil", err)
			}
		default:
			t.Fatal("Join still blocked after the last TaskDone")
		}
	})
}

// TestQueueJoinCtx: Join on a busy queue returns ctx.Err() when ctx ends.
func TestQueueJoinCtx(t *testing.T) {
	cases := []struct {
		name string
		ctx  func() (context.Context, context.CancelFunc)
		want error
	}{
		{"already canceled", func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx, cancel
		}, context.Canceled},
		{"canceled while waiting", func() (context.Context, context.CancelFunc) {
			return context.WithCancel(context.Background())
		}, context.Canceled},
		{"deadline", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), time.Second)
		}, context.DeadlineExceeded},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				q := NewQueue[int](0)
				if err := q.TryPut(1); err != nil {
					t.Fatalf("TryPut: got %v, want nil", err)
				}
				ctx, cancel := c.ctx()
				defer cancel()
				join := queueJoinGo(q, ctx)
				synctest.Wait()
				if c.want == context.Canceled {
					cancel()
				}
				if err := <-join; !errors.Is(err, c.want) {
					t.Fatalf("Join: got %v, want %v", err, c.want)
				}
				queueCheck(t, q, 1, 1)
			})
		})
	}
}

func TestQueueJoinMany(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := NewQueue[int](0)
		if err := q.TryPut(1); err != nil {
			t.Fatalf("TryPut: got %v, want nil", err)
		}
		const n = 64
		joins := make([]<-chan error, n)
		for i := range joins {
			joins[i] = queueJoinGo(q, context.Background())
		}
		synctest.Wait()
		for i, join := range joins {
			select {
			case err := <-join:
				t.Fatalf("Join #%d returned %v with one task unfinished", i, err)
			default:
			}
		}
		if _, err := q.TryGet(); err != nil {
			t.Fatalf("TryGet: got %v, want nil", err)
		}
		if err := q.TaskDone(); err != nil {
			t.Fatalf("TaskDone: got %v, want nil", err)
		}
		for i, join := range joins {
			if err := <-join; err != nil {
				t.Errorf("Join #%d: got %v, want nil", i, err)
			}
		}
	})
}

// TestQueueJoinCycles: the queue goes idle, busy, idle again many times, and
// Join follows it each time.
func TestQueueJoinCycles(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := NewQueue[int](2)
		ctx := context.Background()
		for cycle := range 50 {
			if err := q.Join(queueDoneCtx(t, context.Canceled)); err != nil {
				t.Fatalf("cycle %d: Join on idle queue: got %v, want nil", cycle, err)
			}
			items := 1 + cycle%3
			for i := range items {
				if err := q.Put(ctx, i); err != nil {
					t.Fatalf("cycle %d: Put: got %v, want nil", cycle, err)
				}
				if i == 0 {
					// An item taken off a bounded queue frees its slot
					// but not its task.
					if _, err := q.Get(ctx); err != nil {
						t.Fatalf("cycle %d: Get: got %v, want nil", cycle, err)
					}
				}
			}
			if err := q.Join(queueDoneCtx(t, context.Canceled)); !errors.Is(err, context.Canceled) {
				t.Fatalf("cycle %d: Join on busy queue with done ctx: got %v, want context.Canceled", cycle, err)
			}
			join1, join2 := queueJoinGo(q, ctx), queueJoinGo(q, ctx)
			queueDrain(q)
			for i := range items {
				synctest.Wait()
				select {
				case <-join1:
					t.Fatalf("cycle %d: Join returned with %d tasks unfinished", cycle, items-i)
				case <-join2:
					t.Fatalf("cycle %d: Join returned with %d tasks unfinished", cycle, items-i)
				default:
				}
				if err := q.TaskDone(); err != nil {
					t.Fatalf("cycle %d: TaskDone: got %v, want nil", cycle, err)
				}
			}
			if err1, err2 := <-join1, <-join2; err1 != nil || err2 != nil {
				t.Fatalf("cycle %d: Join after the last TaskDone: got %v, %v, want nil, nil", cycle, err1, err2)
			}
			queueCheck(t, q, 0, 0)
		}
	})
}

// TestQueueGettersFIFO: parked Get calls are served in the order they
// parked.
func TestQueueGettersFIFO(t *testing.T) {
	q := NewQueue[int](0)
	const n = 6
	gets := make([]<-chan queueResult, n)
	for i := range gets {
		gets[i] = queueGo(q, context.Background())
		queueAwaitParked(t, q, i+1, 0)
	}
	for i := range n {
		if err := q.TryPut(i); err != nil {
			t.Fatalf("TryPut(%d): got %v, want nil", i, err)
		}
	}
	for i, get := range gets {
		if r := queueRecv(t, get, fmt.Sprintf("Get #%d", i)); r.err != nil || r.v != i {
			t.Errorf("Get #%d: got %d, %v, want %d, nil", i, r.v, r.err, i)
		}
	}
	queueCheck(t, q, 0, n)
}

// TestQueuePuttersFIFO: Put calls parked on a full queue add their items in
// the order they parked, also when several slots free up at once.
func TestQueuePuttersFIFO(t *testing.T) {
	for _, maxsize := range []int{1, 4} {
		t.Run(fmt.Sprintf("maxsize=%d", maxsize), func(t *testing.T) {
			q := NewQueue[int](maxsize)
			for i := range maxsize {
				if err := q.TryPut(-maxsize + i); err != nil {
					t.Fatalf("TryPut: got %v, want nil", err)
				}
			}
			const n = 8
			puts := make([]<-chan queueResult, n)
			for i := range puts {
				puts[i] = queuePutGo(q, context.Background(), i)
				queueAwaitParked(t, q, 0, i+1)
			}
			// Free maxsize slots in a row, before any woken Put can run.
			for want := -maxsize; want < 0; want++ {
				if v, err := q.TryGet(); err != nil || v != want {
					t.Fatalf("TryGet: got %d, %v, want %d, nil", v, err, want)
				}
			}
			for want := range n {
				v, err := q.Get(context.Background())
				if err != nil || v != want {
					t.Fatalf("Get: got %d, %v, want %d, nil", v, err, want)
				}
			}
			for i, put := range puts {
				if r := queueRecv(t, put, fmt.Sprintf("Put #%d", i)); r.err != nil {
					t.Errorf("Put #%d: got %v, want nil", i, r.err)
				}
			}
			queueCheck(t, q, 0, n+maxsize)
		})
	}
}

// TestQueueCancelledGetterKeepsNoItem: of two parked Gets, the first is
// cancelled; the one item put afterwards goes to the second.
func TestQueueCancelledGetterKeepsNoItem(t *testing.T) {
	q := NewQueue[int](0)
	ctx1, cancel1 := context.WithCancel(context.Background())
	defer cancel1()
	get1 := queueGo(q, ctx1)
	queueAwaitParked(t, q, 1, 0)
	get2 := queueGo(q, context.Background())
	queueAwaitParked(t, q, 2, 0)
	cancel1()
	if r := queueRecv(t, get1, "cancelled Get"); !errors.Is(r.err, context.Canceled) {
		t.Fatalf("cancelled Get: got %d, %v, want context.Canceled", r.v, r.err)
	}
	queueAwaitParked(t, q, 1, 0)
	if err := q.TryPut(42); err != nil {
		t.Fatalf("TryPut: got %v, want nil", err)
	}
	if r := queueRecv(t, get2, "second Get"); r.err != nil || r.v != 42 {
		t.Fatalf("second Get: got %d, %v, want 42, nil", r.v, r.err)
	}
	queueCheck(t, q, 0, 1)
}

// TestQueueCancelledPutterKeepsNoSlot: of two Puts parked on a full queue,
// the first is cancelled; the slot freed afterwards goes to the second.
func TestQueueCancelledPutterKeepsNoSlot(t *testing.T) {
	q := NewQueue[int](1)
	if err := q.TryPut(0); err != nil {
		t.Fatalf("TryPut: got %v, want nil", err)
	}
	ctx1, cancel1 := context.WithCancel(context.Background())
	defer cancel1()
	put1 := queuePutGo(q, ctx1, 1)
	queueAwaitParked(t, q, 0, 1)
	put2 := queuePutGo(q, context.Background(), 2)
	queueAwaitParked(t, q, 0, 2)
	cancel1()
	if r := queueRecv(t, put1, "cancelled Put"); !errors.Is(r.err, context.Canceled) {
		t.Fatalf("cancelled Put: got %v, want context.Canceled", r.err)
	}
	queueAwaitParked(t, q, 0, 1)
	if v, err := q.TryGet(); err != nil || v != 0 {
		t.Fatalf("TryGet: got %d, %v, want 0, nil", v, err)
	}
	if r := queueRecv(t, put2, "second Put"); r.err != nil {
		t.Fatalf("second Put: got %v, want nil", r.err)
	}
	queueCheck(t, q, 1, 2)
	if v, err := q.TryGet(); err != nil || v != 2 {
		t.Fatalf("TryGet: got %d, %v, want 2, nil", v, err)
	}
}

// queueRaceOrders are the ways TestQueueServeAndCancelAtOnce lines up
// serving the first waiter with cancelling it.
var queueRaceOrders = []string{"serve then cancel", "cancel then serve", "concurrent"}

// queueRace serves the first parked waiter with serve and cancels it with
// cancel, in the given order.
func queueRace[T any](q *Queue[T], order string, serve func(), cancel context.CancelFunc) {
	switch order {
	case "serve then cancel":
		q.mu.Lock()
		serve()
		cancel()
		q.mu.Unlock()
	case "cancel then serve":
		q.mu.Lock()
		cancel() // the waiter wakes on ctx and then waits for q.mu
		serve()
		q.mu.Unlock()
	default:
		go cancel()
		q.mu.Lock()
		serve()
		q.mu.Unlock()
	}
}

// TestQueueServeAndCancelAtOnce: the first of two parked Gets is handed an
// item and cancelled at about the same moment. Whatever it returns, the
// item must reach exactly one Get: the first if it returns nil, else the
// second. The same for two Puts and one freed slot.
func TestQueueServeAndCancelAtOnce(t *testing.T) {
	for _, order := range queueRaceOrders {
		t.Run("getters/"+order, func(t *testing.T) {
			took, gaveUp := 0, 0
			for round := range 100 {
				q := NewQueue[int](0)
				ctx1, cancel1 := context.WithCancel(context.Background())
				get1 := queueGo(q, ctx1)
				queueAwaitParked(t, q, 1, 0)
				get2 := queueGo(q, context.Background())
				queueAwaitParked(t, q, 2, 0)
				queueRace(q, order, func() { q.push(round) }, cancel1)
				r1 := queueRecv(t, get1, "first Get")
				puts := 1
				switch {
				case r1.err == nil:
					took++
					if r1.v != round {
						t.Fatalf("first Get: got %d, want %d", r1.v, round)
					}
					queueAwaitParked(t, q, 1, 0) // get2 still waits
					puts++
					if err := q.TryPut(-1); err != nil {
						t.Fatalf("TryPut: got %v, want nil", err)
					}
					if r2 := queueRecv(t, get2, "second Get"); r2.err != nil || r2.v != -1 {
						t.Fatalf("second Get: got %d, %v, want -1, nil", r2.v, r2.err)
					}
				case errors.Is(r1.err, context.Canceled):
					gaveUp++
					if r2 := queueRecv(t, get2, "second Get"); r2.err != nil || r2.v != round {
						t.Fatalf("second Get after the first gave up: got %d, %v, want %d, nil", r2.v, r2.err, round)
					}
				default:
					t.Fatalf("first Get: got %v, want nil or context.Canceled", r1.err)
				}
				cancel1()
				queueCheck(t, q, 0, puts)
				if g, p := queueParked(q); g != 0 || p != 0 {
					t.Fatalf("after round %d: got %d getters, %d putters parked, want 0, 0", round, g, p)
				}
			}
			t.Logf("first Get took the item %d times, gave up %d times", took, gaveUp)
		})
	}
	for _, order := range queueRaceOrders {
		t.Run("putters/"+order, func(t *testing.T) {
			took, gaveUp := 0, 0
			for round := range 100 {
				q := NewQueue[int](1)
				if err := q.TryPut(0); err != nil {
					t.Fatalf("TryPut: got %v, want nil", err)
				}
				ctx1, cancel1 := context.WithCancel(context.Background())
				put1 := queuePutGo(q, ctx1, 1)
				queueAwaitParked(t, q, 0, 1)
				put2 := queuePutGo(q, context.Background(), 2)
				queueAwaitParked(t, q, 0, 2)
				var got0 int
				queueRace(q, order, func() { got0 = q.pop() }, cancel1)
				if got0 != 0 {
					t.Fatalf("pop: got %d, want 0", got0)
				}
				r1 := queueRecv(t, put1, "first Put")
				var want []int
				switch {
				case r1.err == nil:
					took++
					want = []int{1, 2}
				case errors.Is(r1.err, context.Canceled):
					gaveUp++
					want = []int{2}
				default:
					t.Fatalf("first Put: got %v, want nil or context.Canceled", r1.err)
				}
				for _, w := range want {
					if v, err := q.Get(context.Background()); err != nil || v != w {
						t.Fatalf("Get: got %d, %v, want %d, nil", v, err, w)
					}
				}
				if r2 := queueRecv(t, put2, "second Put"); r2.err != nil {
					t.Fatalf("second Put: got %v, want nil", r2.err)
				}
				cancel1()
				queueCheck(t, q, 0, 1+len(want))
				if g, p := queueParked(q); g != 0 || p != 0 {
					t.Fatalf("after round %d: got %d getters, %d putters parked, want 0, 0", round, g, p)
				}
			}
			t.Logf("first Put took the slot %d times, gave up %d times", took, gaveUp)
		})
	}
}

// queueStressItem is a unit of work in the stress tests: id is unique,
// depth says how many generations of follow-up items it still spawns.
type queueStressItem struct {
	id, depth int
}

// TestQueueStressCrawler runs the crawler's pattern under -race: producers
// put roots while consumers take items, put follow-ups, then call TaskDone.
// Join must return exactly when every item is processed, each exactly once.
func TestQueueStressCrawler(t *testing.T) {
	const (
		producers   = 4
		perProducer = 25
		consumers   = 8
		fanout      = 3
		depth       = 3 // each root spawns 1+3+9+27 = 40 items
		perRoot     = 1 + fanout + fanout*fanout + fanout*fanout*fanout
		total       = producers * perProducer * perRoot
	)
	// Unbounded, as in crawler.go: a consumer must never block putting
	// follow-ups only consumers take out.
	q := NewQueue[queueStressItem](0)
	guard, stopGuard := context.WithTimeout(context.Background(), queueHangGuard)
	defer stopGuard()
	work, stopWork := context.WithCancel(guard)
	defer stopWork()

	var nextID atomic.Int64
	seen := make([]atomic.Int32, total+1)
	var processed atomic.Int64
	consumerErrs := make(chan error, consumers)
	var cwg sync.WaitGroup
	for c := range consumers {
		cwg.Go(func() {
			for {
				it, err := q.Get(work)
				if err != nil {
					if !errors.Is(err, context.Canceled) {
						consumerErrs <- fmt.Errorf("consumer %d: Get: %w", c, err)
					}
					return
				}
				if it.depth > 0 {
					for k := range fanout {
						child := queueStressItem{int(nextID.Add(1)), it.depth - 1}
						var err error
						if k%2 == 0 {
							err = q.Put(work, child)
						} else {
							err = q.TryPut(child)
						}
						if err != nil {
							consumerErrs <- fmt.Errorf("consumer %d: put: %w", c, err)
							return
						}
					}
				}
				if it.id <= 0 || it.id > total {
					consumerErrs <- fmt.Errorf("consumer %d: got id %d, want 1..%d", c, it.id, total)
					return
				}
				seen[it.id].Add(1)
				processed.Add(1)
				if err := q.TaskDone(); err != nil {
					consumerErrs <- fmt.Errorf("consumer %d: TaskDone: %w", c, err)
					return
				}
			}
		})
	}
	var pwg sync.WaitGroup
	for range producers {
		pwg.Go(func() {
			for range perProducer {
				root := queueStressItem{int(nextID.Add(1)), depth}
				if err := q.Put(work, root); err != nil {
					t.Errorf("producer: Put: got %v, want nil", err)
					return
				}
			}
		})
	}
	pwg.Wait()
	// Several Joins at once, as several callers might.
	joinErrs := make(chan error, 4)
	for range 4 {
		go func() { joinErrs <- q.Join(guard) }()
	}
	for range 4 {
		if err := <-joinErrs; err != nil {
			t.Fatalf("Join: got %v, want nil", err)
		}
		// Join returned: nothing may be queued or in progress.
		if l, u, p := q.Len(), q.Unfinished(), processed.Load(); l != 0 || u != 0 || p != total {
			t.Fatalf("on Join: got Len %d, Unfinished %d, processed %d, want 0, 0, %d", l, u, p, total)
		}
	}
	stopWork()
	cwg.Wait()
	close(consumerErrs)
	for err := range consumerErrs {
		t.Error(err)
	}
	if n := nextID.Load(); n != total {
		t.Errorf("items put: got %d, want %d", n, total)
	}
	for id := 1; id <= total; id++ {
		if n := seen[id].Load(); n != 1 {
			t.Errorf("item %d received %d times, want 1", id, n)
		}
	}
	if err := q.TaskDone(); !errors.Is(err, ErrTaskDone) {
		t.Errorf("TaskDone after Join: got %v, want ErrTaskDone", err)
	}
}

// TestQueueStressCancel hammers a small bounded queue with Put and Get calls
// that give up at random moments and retry. A call that gave up must have
// had no effect, so every item arrives exactly once.
func TestQueueStressCancel(t *testing.T) {
	const (
		producers   = 8
		perProducer = 300
		consumers   = 8
		total       = producers * perProducer
	)
	q := NewQueue[int](4)
	guard, stopGuard := context.WithTimeout(context.Background(), queueHangGuard)
	defer stopGuard()
	work, stopWork := context.WithCancel(guard)
	defer stopWork()
	// shortCtx gives up after a random few microseconds, or is cancelled
	// outright, or never gives up.
	shortCtx := func() (context.Context, context.CancelFunc) {
		switch rand.IntN(4) {
		case 0:
			return context.WithCancel(work)
		case 1:
			ctx, cancel := context.WithCancel(work)
			go func() {
				time.Sleep(time.Duration(rand.IntN(20)) * time.Microsecond)
				cancel()
			}()
			return ctx, cancel
		default:
			return context.WithTimeout(work, time.Duration(rand.IntN(50))*time.Microsecond)
		}
	}

	seen := make([]atomic.Int32, total)
	var gaveUpGet, gaveUpPut atomic.Int64
	var cwg sync.WaitGroup
	for range consumers {
		cwg.Go(func() {
			for work.Err() == nil {
				ctx, cancel := shortCtx()
				v, err := q.Get(ctx)
				cancel()
				if err != nil {
					if !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
						t.Errorf("Get: got %v, want a context error", err)
						return
					}
					gaveUpGet.Add(1)
					continue
				}
				seen[v].Add(1)
				if err := q.TaskDone(); err != nil {
					t.Errorf("TaskDone: got %v, want nil", err)
					return
				}
			}
		})
	}
	var pwg sync.WaitGroup
	for p := range producers {
		pwg.Go(func() {
			for i := range perProducer {
				v := p*perProducer + i
				for {
					ctx, cancel := shortCtx()
					err := q.Put(ctx, v)
					cancel()
					if err == nil {
						break
					}
					if guard.Err() != nil {
						t.Errorf("producer %d: gave up: %v", p, err)
						return
					}
					gaveUpPut.Add(1)
				}
			}
		})
	}
	pwg.Wait()
	if err := q.Join(guard); err != nil {
		t.Fatalf("Join: got %v, want nil", err)
	}
	stopWork()
	cwg.Wait()
	queueCheck(t, q, 0, 0)
	if g, p := queueParked(q); g != 0 || p != 0 {
		t.Errorf("parked at the end: got %d getters, %d putters, want 0, 0", g, p)
	}
	for v := range total {
		if n := seen[v].Load(); n != 1 {
			t.Errorf("item %d received %d times, want 1", v, n)
		}
	}
	t.Logf("gave up: %d Gets, %d Puts", gaveUpGet.Load(), gaveUpPut.Load())
}

// FuzzQueue runs a sequence of non-blocking operations, read from the fuzz
// input, against a queue and a plain slice model of it.
//
// data[0] picks maxsize (-1 to 4; <= 0 is unbounded). Each later byte is an
// operation: the low 3 bits say which, the next bit which done ctx to use.
//
// Join is also checked blocking: each Join operation with tasks unfinished
// leaves a Join with a live ctx waiting in a goroutine, which must return
// nil exactly when the unfinished count reaches zero: not before, and
// without fail then.
func FuzzQueue(f *testing.F) {
	f.Add([]byte{0})
	f.Add([]byte{3, 0, 0, 0, 0, 3, 3, 6, 6, 6, 6, 7})
	f.Add([]byte{2, 0, 1, 1, 2, 10, 4, 5, 13, 6, 7, 6, 15, 6})
	f.Add([]byte{1, 6, 7, 0, 0, 1, 9, 2, 3, 3, 4, 12, 6, 7, 6})
	f.Add([]byte{5, 0, 0, 0, 0, 0, 0, 3, 0, 3, 0, 3, 1, 1, 4, 4, 4, 4, 4, 4, 6, 6, 6, 6, 6, 6, 6, 6, 7})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		maxsize := int(data[0]%6) - 1
		q := NewQueue[int](maxsize)
		var model []int
		unfinished := 0
		next := 0
		full := func() bool { return maxsize > 0 && len(model) >= maxsize }
		bg := context.Background()
		// The blocked Joins, each reporting on its channel; cancelled at
		// the end, so that none outlives the input.
		joinCtx, cancelJoins := context.WithCancel(bg)
		var joiners []chan error
		defer func() {
			cancelJoins()
			for _, ch := range joiners {
				if err := <-ch; !errors.Is(err, context.Canceled) && !t.Failed() {
					t.Errorf("Join blocked with %d unfinished, then cancelled: got %v, want context.Canceled", unfinished, err)
				}
			}
		}()
		for i, b := range data[1:] {
			doneErr := queueDoneErrs[(b>>3)&1]
			done := queueDoneCtx(t, doneErr)
			var what string
			switch b & 7 {
			case 0: // TryPut
				what = "TryPut"
				err := q.TryPut(next)
				if full() {
					if !errors.Is(err, ErrQueueFull) {
						t.Fatalf("op %d TryPut on full queue: got %v, want ErrQueueFull", i, err)
					}
				} else {
					if err != nil {
						t.Fatalf("op %d TryPut: got %v, want nil", i, err)
					}
					model = append(model, next)
					unfinished++
				}
				next++
			case 1: // Put that cannot block: live ctx only if there is room
				what = "Put"
				if full() {
					if err := q.Put(done, next); !errors.Is(err, doneErr) {
						t.Fatalf("op %d Put on full queue with done ctx: got %v, want %v", i, err, doneErr)
					}
				} else {
					if err := q.Put(bg, next); err != nil {
						t.Fatalf("op %d Put: got %v, want nil", i, err)
					}
					model = append(model, next)
					unfinished++
				}
				next++
			case 2: // Put with a done ctx never adds
				what = "Put(done)"
				if err := q.Put(done, next); !errors.Is(err, doneErr) {
					t.Fatalf("op %d Put with done ctx: got %v, want %v", i, err, doneErr)
				}
				next++
			case 3: // TryGet
				what = "TryGet"
				v, err := q.TryGet()
				if len(model) == 0 {
					if !errors.Is(err, ErrQueueEmpty) {
						t.Fatalf("op %d TryGet on empty queue: got %d, %v, want ErrQueueEmpty", i, v, err)
					}
				} else {
					if err != nil || v != model[0] {
						t.Fatalf("op %d TryGet: got %d, %v, want %d, nil", i, v, err, model[0])
					}
					model = model[1:]
				}
			case 4: // Get that cannot block: live ctx only if there is an item
				what = "Get"
				if len(model) == 0 {
					if _, err := q.Get(done); !errors.Is(err, doneErr) {
						t.Fatalf("op %d Get on empty queue with done ctx: got %v, want %v", i, err, doneErr)
					}
				} else {
					v, err := q.Get(bg)
					if err != nil || v != model[0] {
						t.Fatalf("op %d Get: got %d, %v, want %d, nil", i, v, err, model[0])
					}
					model = model[1:]
				}
			case 5: // Get with a done ctx never takes
				what = "Get(done)"
				if _, err := q.Get(done); !errors.Is(err, doneErr) {
					t.Fatalf("op %d Get with done ctx: got %v, want %v", i, err, doneErr)
				}
			case 6: // TaskDone
				what = "TaskDone"
				err := q.TaskDone()
				if unfinished == 0 {
					if !errors.Is(err, ErrTaskDone) {
						t.Fatalf("op %d TaskDone with nothing unfinished: got %v, want ErrTaskDone", i, err)
					}
				} else {
					if err != nil {
						t.Fatalf("op %d TaskDone: got %v, want nil", i, err)
					}
					unfinished--
				}
			case 7: // Join with a done ctx: nil exactly when idle
				what = "Join(done)"
				err := q.Join(done)
				if unfinished == 0 {
					if err != nil {
						t.Fatalf("op %d Join on idle queue: got %v, want nil", i, err)
					}
				} else if !errors.Is(err, doneErr) {
					t.Fatalf("op %d Join with %d unfinished: got %v, want %v", i, unfinished, err, doneErr)
				}
				if unfinished > 0 {
					ch := make(chan error, 1)
					go func() { ch <- q.Join(joinCtx) }()
					joiners = append(joiners, ch)
				}
			}
			// A channel is taken off joiners before it is read, so that
			// the deferred drain never waits on one read already.
			if unfinished == 0 {
				for len(joiners) > 0 {
					ch := joiners[0]
					joiners = joiners[1:]
					select {
					case err := <-ch:
						if err != nil {
							t.Fatalf("after op %d %s: blocked Join returned %v at zero unfinished, want nil", i, what, err)
						}
					case <-time.After(queueHangGuard / 4):
						// Under the fuzzer's own 10s limit on an input,
						// so that a hang is reported as one.
						t.Fatalf("after op %d %s: blocked Join still blocked at zero unfinished", i, what)
					}
				}
			}
			for j, ch := range joiners {
				select {
				case err := <-ch:
					joiners = slices.Delete(joiners, j, j+1)
					t.Fatalf("after op %d %s: blocked Join returned %v with %d unfinished, want it still blocked", i, what, err, unfinished)
				default:
				}
			}
			if l, u := q.Len(), q.Unfinished(); l != len(model) || u != unfinished {
				t.Fatalf("after op %d %s: got Len %d, Unfinished %d, want %d, %d", i, what, l, u, len(model), unfinished)
			}
			if u := q.Unfinished(); u < 0 {
				t.Fatalf("after op %d %s: Unfinished = %d, want >= 0", i, what, u)
			}
			if g, p := queueParked(q); g != 0 || p != 0 {
				t.Fatalf("after op %d %s: got %d getters, %d putters parked, want 0, 0", i, what, g, p)
			}
		}
		if got := queueDrain(q); !queueEqual(got, model) {
			t.Fatalf("drained: got %v, want %v", got, model)
		}
	})
}

// BenchmarkQueue measures one Put, Get and TaskDone per op.
func BenchmarkQueue(b *testing.B) {
	for _, maxsize := range []int{0, 1, 64} {
		b.Run(fmt.Sprintf("maxsize=%d", maxsize), func(b *testing.B) {
			q := NewQueue[int](maxsize)
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if err := q.Put(ctx, 1); err != nil {
					b.Fatal(err)
				}
				if _, err := q.Get(ctx); err != nil {
					b.Fatal(err)
				}
				if err := q.TaskDone(); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("maxsize=%d/parallel", maxsize), func(b *testing.B) {
			// Each goroutine puts before it gets, so Gets never outnumber
			// Puts and a bounded queue never holds more than one item per
			// goroutine: nothing can block for good.
			q := NewQueue[int](maxsize)
			ctx := context.Background()
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := q.Put(ctx, 1); err != nil {
						b.Error(err)
						return
					}
					if _, err := q.Get(ctx); err != nil {
						b.Error(err)
						return
					}
					if err := q.TaskDone(); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
