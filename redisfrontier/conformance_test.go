package redisfrontier_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"sync"
	"testing"

	"github.com/asyncrawl/crawl"
	"github.com/asyncrawl/crawl/frontiertest"
	"github.com/asyncrawl/crawl/redisfrontier"
	"github.com/asyncrawl/crawl/redisfrontier/redistest"
)

// open returns a Frontier of the crawl name on the server s, closed when
// the test ends (a second Close's ErrFrontierClosed is expected).
func open(t *testing.T, s *redistest.Server, opts *redisfrontier.Options) *redisfrontier.Frontier {
	t.Helper()
	f, err := redisfrontier.Open(context.Background(), s.URL(), opts)
	return closedAtEnd(t, f, err)
}

// closedAtEnd returns f, closed when the test ends (a second Close's
// ErrFrontierClosed is expected), or fails t with err, its opening's.
func closedAtEnd(t *testing.T, f *redisfrontier.Frontier, err error) *redisfrontier.Frontier {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := f.Close(); err != nil && !errors.Is(err, crawl.ErrFrontierClosed) {
			t.Error(err)
		}
	})
	return f
}

// TestConformance runs the frontiertest suite against a real
// redis-server, each check on a crawl of its own name.
func TestConformance(t *testing.T) {
	s := redistest.Start(t)
	frontiertest.Run(t, func(t *testing.T) crawl.Frontier {
		return open(t, s, &redisfrontier.Options{Name: t.Name()})
	})
}

// TestConformanceDurable runs the suite's reopening checks: path names a
// crawl, and each opening after the first finds redis-server killed with
// SIGKILL and restarted on its AOF, so that what the crawl kept is what
// the server wrote.
func TestConformanceDurable(t *testing.T) {
	s := redistest.Start(t)
	var (
		mu     sync.Mutex
		opened = map[string]bool{}
	)
	frontiertest.RunDurable(t, func(t *testing.T, path string) crawl.Frontier {
		mu.Lock()
		again := opened[path]
		opened[path] = true
		mu.Unlock()
		if again {
			s.Restart()
		}
		sum := sha256.Sum256([]byte(path))
		return open(t, s, &redisfrontier.Options{Name: hex.EncodeToString(sum[:8])})
	})
}
