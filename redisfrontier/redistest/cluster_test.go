package redistest_test

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/asyncrawl/crawl/redisfrontier/redistest"
	"github.com/redis/go-redis/v9"
)

// TestCluster starts a cluster of 3 masters with a replica each, writes 300
// keys of distinct hash tags to the masters MasterOf names (each then WAITs
// for its replica), reads them back through go-redis's ClusterClient,
// checks KeysPerMaster against MasterOf, kills the master of one key and
// checks that its replica takes over and that every key is read back.
func TestCluster(t *testing.T) {
	ctx := context.Background()
	begin := time.Now()
	c := redistest.StartCluster(t, 3, 1)
	t.Logf("cluster of 3 masters and 3 replicas started in %v", time.Since(begin))

	addrs := c.Addrs()
	if len(addrs) != 6 {
		t.Fatalf("Addrs() = %v: got %d nodes, want 6", addrs, len(addrs))
	}
	masters := c.Masters()
	if got, want := sorted(masters), sorted(addrs[:3]); !slices.Equal(got, want) {
		t.Fatalf("Masters() = %v, want the first 3 of Addrs() %v", got, want)
	}

	// The defaults StartCluster documents.
	for _, addr := range addrs {
		got, err := nodeClient(t, addr).ConfigGet(ctx, "cluster-*").Result()
		if err != nil || got["cluster-node-timeout"] != "1000" || got["cluster-replica-validity-factor"] != "0" {
			t.Fatalf("CONFIG GET cluster-* on %s: got node timeout %q, replica validity factor %q, %v; want 1000, 0",
				addr, got["cluster-node-timeout"], got["cluster-replica-validity-factor"], err)
		}
	}

	const n = 300
	keys := make([]string, n)
	byMaster := map[string][]string{}
	for i := range keys {
		keys[i] = fmt.Sprintf("{h%d}:k", i)
		m := c.MasterOf(keys[i])
		byMaster[m] = append(byMaster[m], keys[i])
	}

	// Written on one connection to each master, MasterOf's: a node that
	// does not serve a key's slot answers MOVED, an error.
	for m, ks := range byMaster {
		if !slices.Contains(masters, m) {
			t.Fatalf("MasterOf(%s) = %s, not one of Masters() %v", ks[0], m, masters)
		}
		conn := nodeClient(t, m).Conn()
		for _, k := range ks {
			if err := conn.Set(ctx, k, "v"+k, 0).Err(); err != nil {
				t.Fatalf("SET %s on %s, its MasterOf: %v", k, m, err)
			}
		}
		// WAIT counts the replicas that have every write of this
		// connection.
		got, err := conn.Wait(ctx, 1, time.Second).Result()
		if err != nil || got != 1 {
			t.Fatalf("WAIT 1 1000 on %s: got %d, %v, want 1 replica", m, got, err)
		}
		conn.Close()
	}

	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs})
	defer func() { cc.Close() }()
	readAll := func(when string) {
		t.Helper()
		for _, k := range keys {
			got, err := cc.Get(ctx, k).Result()
			if err != nil || got != "v"+k {
				t.Fatalf("%s: GET %s through ClusterClient: got %q, %v, want %q", when, k, got, err, "v"+k)
			}
		}
	}
	readAll("before the kill")

	counts := c.KeysPerMaster("{h*}:k")
	total := 0
	for _, m := range masters {
		if got, want := counts[m], len(byMaster[m]); got != want {
			t.Errorf("KeysPerMaster()[%s] = %d, want %d, the keys MasterOf gives it", m, got, want)
		}
		if got := counts[m]; got < n/5 || got > n/2 {
			t.Errorf("KeysPerMaster()[%s] = %d of %d keys, want 20%%..50%%", m, got, n)
		}
		total += counts[m]
	}
	if total != n {
		t.Errorf("KeysPerMaster() = %v: got %d keys in all, want %d", counts, total, n)
	}

	victim := c.MasterOf(keys[0])
	begin = time.Now()
	c.KillMaster(victim)
	promoted := c.WaitFailover(t, victim)
	t.Logf("failover of %s to %s took %v", victim, promoted, time.Since(begin))

	if promoted == victim || !slices.Contains(addrs[3:], promoted) {
		t.Errorf("WaitFailover(%s) = %s, want one of the replicas %v", victim, promoted, addrs[3:])
	}
	after := c.Masters()
	if len(after) != 3 || !slices.Contains(after, promoted) || slices.Contains(after, victim) {
		t.Errorf("Masters() after the failover = %v, want 3 with %s, without %s", after, promoted, victim)
	}
	if got := c.MasterOf(keys[0]); got != promoted {
		t.Errorf("MasterOf(%s) after the failover = %s, want %s", keys[0], got, promoted)
	}
	// A ClusterClient reloads its map of slots on a MOVED reply, or every
	// ClusterStateReloadInterval (60 s by default), but not when a master
	// refuses connections: one made before the failover may go on dialling
	// the dead master. A new one, seeded with every node, dead or not, as
	// a configuration would be, finds the live map.
	cc.Close()
	cc = redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs})
	readAll("after the failover")
	total = 0
	for _, v := range c.KeysPerMaster("{h*}:k") {
		total += v
	}
	if total != n {
		t.Errorf("KeysPerMaster() after the failover: got %d keys in all, want %d", total, n)
	}

	// The old master, restarted, rejoins as a replica of the node that
	// took over from it.
	c.Node(victim).Restart()
	c.WaitStable(t)
	info, err := nodeClient(t, victim).Info(ctx, "replication").Result()
	_, port, _ := net.SplitHostPort(promoted)
	if err != nil || !strings.Contains(info, "role:slave") || !strings.Contains(info, "master_port:"+port+"\r\n") {
		t.Errorf("INFO replication on %s, restarted: got %q, %v, want a replica of %s", victim, info, err, promoted)
	}
	if got := c.Masters(); !slices.Equal(sorted(got), sorted(after)) {
		t.Errorf("Masters() after the restart of %s = %v, want %v", victim, got, after)
	}
}

// TestClusterOptions starts a cluster of 4 masters without replicas with a
// node timeout of 2 s, and checks that every node has it, and that 4
// masters serve the slots.
func TestClusterOptions(t *testing.T) {
	ctx := context.Background()
	c := redistest.StartCluster(t, 4, 0, redistest.WithNodeTimeout(2*time.Second))
	addrs := c.Addrs()
	if len(addrs) != 4 {
		t.Fatalf("Addrs() = %v: got %d nodes, want 4", addrs, len(addrs))
	}
	if got, want := sorted(c.Masters()), sorted(addrs); !slices.Equal(got, want) {
		t.Errorf("Masters() = %v, want every node %v", got, want)
	}
	for _, addr := range addrs {
		got, err := nodeClient(t, addr).ConfigGet(ctx, "cluster-node-timeout").Result()
		if err != nil || got["cluster-node-timeout"] != "2000" {
			t.Errorf("CONFIG GET cluster-node-timeout on %s: got %q, %v, want 2000", addr, got["cluster-node-timeout"], err)
		}
	}
}

// nodeClient returns a client of the one node at addr, closed when t ends.
func nodeClient(t *testing.T, addr string) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { c.Close() })
	return c
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// BenchmarkCluster measures how long StartCluster takes to start a cluster
// of 3 masters with a replica each (start-s/op), and a replica to take over
// from a killed master at the default node timeout of 1 s (failover-s/op):
// what each test of the cluster frontier spends before it starts, and on a
// failover.
func BenchmarkCluster(b *testing.B) {
	var start, failover time.Duration
	for b.Loop() {
		t0 := time.Now()
		c := redistest.StartCluster(b, 3, 1)
		start += time.Since(t0)
		victim := c.Masters()[0]
		t0 = time.Now()
		c.KillMaster(victim)
		c.WaitFailover(b, victim)
		failover += time.Since(t0)
		for _, addr := range c.Addrs() {
			c.Node(addr).Kill() // now rather than when b ends
		}
	}
	b.ReportMetric(start.Seconds()/float64(b.N), "start-s/op")
	b.ReportMetric(failover.Seconds()/float64(b.N), "failover-s/op")
}
