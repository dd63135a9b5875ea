package redisfrontier

import (
	"context"
	"testing"

	"github.com/asyncrawl/crawl"
	"github.com/asyncrawl/crawl/redisfrontier/redistest"
	"github.com/redis/go-redis/v9"
)

// startFrontier starts a redis-server of the test's own and a Frontier
// named name on it, started with p. The client is closed when the test
// ends; the Frontier is the caller's to close.
func startFrontier(t *testing.T, name string, p crawl.Policy) *Frontier {
	t.Helper()
	s := redistest.Start(t)
	c := redis.NewClient(&redis.Options{Addr: s.Addr()})
	t.Cleanup(func() { c.Close() })
	f := New(c, &Options{Name: name})
	if err := f.Start(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	return f
}
