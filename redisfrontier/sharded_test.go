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

// TestShardedConformance runs the frontiertest suite against a crawl of 8
// shards on one redis-server: the steps that cross shards (links admitted
// on their own shard, the budget handed out in parts, Join over every
// shard) are the same on one server as on a cluster.
func TestShardedConformance(t *testing.T) {
	s := redistest.Start(t)
	frontiertest.Run(t, func(t *testing.T) crawl.Frontier {
		return open(t, s, &redisfrontier.Options{Name: t.Name(), Shards: 8})
	})
}

// TestShardedRandom runs frontiertest.Fuzz against a crawl of 8 shards on
// one redis-server, with its restarts, crashes and rollbacks (the server
// restarted from an older AOF) as TestRandom has them: a rollback takes
// every shard and the control keys back together, as a master's failover
// takes back its shards.
func TestShardedRandom(t *testing.T) {
	s := redistest.Start(t)
	frontiertest.Fuzz(t, func(t *testing.T, path string) crawl.Frontier {
		sum := sha256.Sum256([]byte(path))
		name := hex.EncodeToString(sum[:8])
		return open(t, s, &redisfrontier.Options{Name: name, Owner: name, Shards: 8})
	}, serverFaults(s))
}
