package redisfrontier_test

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"

	"github.com/asyncrawl/crawl"
	"github.com/asyncrawl/crawl/frontiertest"
	"github.com/asyncrawl/crawl/redisfrontier"
	"github.com/asyncrawl/crawl/redisfrontier/redistest"
)

// TestRandom runs frontiertest.Fuzz on the Frontier against a real
// redis-server, each run a crawl of its own name. A run closes the
// Frontier at random points, kills the server with SIGKILL, restarts it
// on its AOF, and opens the crawl anew with the same Owner, which takes
// back the leases it held; at others it drops the Frontier without Close
// and kills and restarts the server (a crash); at others it saves the
// server's AOF, and later restarts the server from that saved AOF, as a
// server restored from an older backup (or one that lost its last second
// of AOF) comes back.
func TestRandom(t *testing.T) {
	s := redistest.Start(t)
	frontiertest.Fuzz(t, func(t *testing.T, path string) crawl.Frontier {
		sum := sha256.Sum256([]byte(path))
		name := hex.EncodeToString(sum[:8])
		return open(t, s, &redisfrontier.Options{Name: name, Owner: name})
	}, serverFaults(s))
}

// serverFaults are the faults of Fuzz on the server s: a restart on its
// AOF, a crash (SIGKILL, then a restart), and a rollback to the AOF
// saved at a Save.
func serverFaults(s *redistest.Server) *frontiertest.FuzzOptions {
	return &frontiertest.FuzzOptions{
		Durable: true,
		Restart: func(t *testing.T, path string) { s.Restart() },
		Crash:   func(t *testing.T, f crawl.Frontier, path string) { s.Restart() },
		Save: func(t *testing.T, path string) {
			s.Kill()
			copyAOF(t, filepath.Join(s.Dir(), "appendonlydir"), path+".aof")
			s.Restart()
		},
		Rollback: func(t *testing.T, path string) {
			s.Kill()
			copyAOF(t, path+".aof", filepath.Join(s.Dir(), "appendonlydir"))
			s.Restart()
		},
	}
}

// copyAOF replaces the directory to with a copy of the directory from (a
// Redis AOF directory: files only).
func copyAOF(t *testing.T, from, to string) {
	t.Helper()
	entries, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(to); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(to, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
