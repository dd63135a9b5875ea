package crawl

import (
	"context"
	"sync"
)

// task is one unit of work: a URL to fetch, as in the chapter's queue of
// (url, max_redirect) pairs, with its depth.
type task struct {
	url       string // normalised; also the key the seen set dedupes on
	depth     int
	redirects int // redirects still allowed from here
}

// frontier is the seam between the crawl and where its URLs wait: the queue
// and the seen set together, so that "is it new?" and "queue it" are one
// step. A Run owns one frontier. The in-memory one is below; a persistent or
// distributed (Redis) one implements the same five methods.
//
// The accounting is the joinable queue's: push raises the count of
// unfinished tasks by the number of new tasks, done lowers it by one, and
// join returns when it is zero. A worker pushes a page's links before it
// calls done for the page, so join cannot return while work is in flight.
type frontier interface {
	// push queues each task whose URL has not been pushed before and
	// returns how many were new. The tasks must have distinct URLs.
	push(ctx context.Context, ts ...task) (int, error)
	// pop takes the next task, blocking until there is one or ctx is done.
	pop(ctx context.Context) (task, error)
	// done marks a task taken by pop as finished.
	done() error
	// join blocks until every task pushed is done, or ctx is done.
	join(ctx context.Context) error
	// queued returns the number of tasks pushed and not yet popped.
	queued() int
}

// memFrontier keeps the frontier in memory: a Queue and a set of URLs.
type memFrontier struct {
	mu   sync.Mutex
	seen map[string]struct{}
	q    *Queue[task]
}

func newMemFrontier() *memFrontier {
	return &memFrontier{seen: make(map[string]struct{}), q: NewQueue[task](0)}
}

func (f *memFrontier) push(ctx context.Context, ts ...task) (int, error) {
	added := 0
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, t := range ts {
		if _, ok := f.seen[t.url]; ok {
			continue
		}
		f.seen[t.url] = struct{}{}
		// Unbounded: a worker must never block putting work only workers
		// take out.
		if err := f.q.TryPut(t); err != nil {
			return added, err
		}
		added++
	}
	return added, nil
}

func (f *memFrontier) pop(ctx context.Context) (task, error) { return f.q.Get(ctx) }
func (f *memFrontier) done() error                           { return f.q.TaskDone() }
func (f *memFrontier) join(ctx context.Context) error        { return f.q.Join(ctx) }
func (f *memFrontier) queued() int                           { return f.q.Len() }
