package boltfrontier_test

import (
	"testing"

	"github.com/asyncrawl/crawl/frontiertest"
)

// TestRandom runs frontiertest.Fuzz on the Frontier, closing it at random
// points of each run and opening the file anew.
func TestRandom(t *testing.T) {
	frontiertest.Fuzz(t, openAt, &frontiertest.FuzzOptions{Durable: true})
}
