package frontiertest

import (
	"testing"

	"github.com/asyncrawl/crawl"
)

// TestRandomMemory runs Fuzz on crawl.MemoryFrontier.
func TestRandomMemory(t *testing.T) {
	Fuzz(t, func(t *testing.T, path string) crawl.Frontier {
		f := crawl.NewMemoryFrontier()
		t.Cleanup(func() { f.Close() }) // ErrFrontierClosed if the run closed it
		return f
	}, nil)
}

// TestRandomReference runs Fuzz on the reference Frontier, durable: the
// model accepts a Frontier written to be plainly correct.
func TestRandomReference(t *testing.T) {
	Fuzz(t, func(t *testing.T, path string) crawl.Frontier { return openRefT(t, path, "") }, &FuzzOptions{Durable: true})
}
