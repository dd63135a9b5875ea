package redisfrontier_test

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/asyncrawl/crawl"
	"github.com/asyncrawl/crawl/frontiertest"
	"github.com/asyncrawl/crawl/redisfrontier"
	"github.com/asyncrawl/crawl/redisfrontier/redistest"
)

// TestRandom runs frontiertest.Fuzz on the Frontier against a real
// redis-server, each run a crawl of its own name: the run closes the
// Frontier at random points, kills the server with SIGKILL, restarts it
// on its AOF, and opens the crawl anew with the same Owner, which takes
// back the leases it held.
func TestRandom(t *testing.T) {
	s := redistest.Start(t)
	frontiertest.Fuzz(t, func(t *testing.T, path string) crawl.Frontier {
		sum := sha256.Sum256([]byte(path))
		name := hex.EncodeToString(sum[:8])
		return open(t, s, &redisfrontier.Options{Name: name, Owner: name})
	}, &frontiertest.FuzzOptions{
		Durable: true,
		Restart: func(t *testing.T, path string) { s.Restart() },
	})
}
