package frontiertest

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/asyncrawl/crawl"
)

// memoryMutants are crawl.MemoryFrontiers wrapped to break one
// requirement of the contract each, with the subtests of Run that must
// fail for it: as bugs does for the reference Frontier, for the Frontier
// the crawler uses. TestSuiteFailsBrokenFrontiers runs them with bugs.
var memoryMutants = map[string]struct {
	open   func() crawl.Frontier
	checks []string
}{
	// Rules asked for again at half Policy.RobotsMaxAge.
	"memoryRobotsAgeShort": {func() crawl.Frontier { return robotsAgeShort{crawl.NewMemoryFrontier()} }, []string{"RobotsMaxAge"}},
	// Join waits for the robots.txt leases out too.
	"memoryJoinWaitsRobots": {func() crawl.Frontier { return newJoinWaitsRobots() }, []string{"JoinRobots"}},
	// A Push admits its Requests last first.
	"memoryPushReversed": {func() crawl.Frontier { return pushReversed{crawl.NewMemoryFrontier()} }, []string{"Order"}},
}

// robotsAgeShort keeps a host's rules for half of Policy.RobotsMaxAge.
type robotsAgeShort struct{ *crawl.MemoryFrontier }

func (f robotsAgeShort) Start(ctx context.Context, p crawl.Policy) error {
	p.RobotsMaxAge /= 2
	return f.MemoryFrontier.Start(ctx, p)
}

// pushReversed admits the Requests of each Push in the reverse order.
type pushReversed struct{ *crawl.MemoryFrontier }

func (f pushReversed) Push(ctx context.Context, reqs ...crawl.Request) (int, error) {
	reqs = slices.Clone(reqs)
	slices.Reverse(reqs)
	return f.MemoryFrontier.Push(ctx, reqs...)
}

// joinWaitsRobots counts the robots.txt leases it handed out and not yet
// ended as pending: its Join waits for them too.
type joinWaitsRobots struct {
	*crawl.MemoryFrontier
	mu     sync.Mutex
	robots map[string]bool // IDs of the robots.txt leases out
}

func newJoinWaitsRobots() *joinWaitsRobots {
	return &joinWaitsRobots{MemoryFrontier: crawl.NewMemoryFrontier(), robots: map[string]bool{}}
}

func (f *joinWaitsRobots) Take(ctx context.Context) (*crawl.Lease, error) {
	l, err := f.MemoryFrontier.Take(ctx)
	if err == nil && l.Kind == crawl.RobotsRequest {
		f.mu.Lock()
		f.robots[l.ID] = true
		f.mu.Unlock()
	}
	return l, err
}

// ended forgets l's lease if it was a robots.txt's.
func (f *joinWaitsRobots) ended(l *crawl.Lease) {
	f.mu.Lock()
	delete(f.robots, l.ID)
	f.mu.Unlock()
}

func (f *joinWaitsRobots) Ack(ctx context.Context, l *crawl.Lease, o crawl.Outcome) (int, error) {
	n, err := f.MemoryFrontier.Ack(ctx, l, o)
	f.ended(l)
	return n, err
}

func (f *joinWaitsRobots) Retry(ctx context.Context, l *crawl.Lease, at time.Time) error {
	err := f.MemoryFrontier.Retry(ctx, l, at)
	f.ended(l)
	return err
}

func (f *joinWaitsRobots) Join(ctx context.Context) error {
	if err := f.MemoryFrontier.Join(ctx); err != nil {
		return err
	}
	for {
		f.mu.Lock()
		n := len(f.robots)
		f.mu.Unlock()
		if n == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}
