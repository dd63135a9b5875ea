package frontiertest

import (
	"testing"

	"github.com/asyncrawl/crawl"
)

func TestMemoryFrontier(t *testing.T) {
	Run(t, func(t *testing.T) crawl.Frontier {
		f := crawl.NewMemoryFrontier()
		t.Cleanup(func() { f.Close() }) // ErrFrontierClosed if the test closed it
		return f
	})
}
