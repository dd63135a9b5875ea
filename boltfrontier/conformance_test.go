package boltfrontier_test

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/asyncrawl/crawl"
	"github.com/asyncrawl/crawl/boltfrontier"
	"github.com/asyncrawl/crawl/frontiertest"
)

// openAt opens the state file at path for the suite, closed when the test
// ends (a second Close's ErrFrontierClosed is expected).
func openAt(t *testing.T, path string) crawl.Frontier {
	t.Helper()
	f, err := boltfrontier.Open(path, &boltfrontier.Options{NoSync: true})
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

// TestConformance runs the frontiertest suite on a Frontier.
func TestConformance(t *testing.T) {
	frontiertest.Run(t, func(t *testing.T) crawl.Frontier {
		return openAt(t, filepath.Join(t.TempDir(), "state.db"))
	})
}

// TestConformanceDurable runs the suite's reopening checks.
func TestConformanceDurable(t *testing.T) {
	frontiertest.RunDurable(t, openAt)
}
