package redisfrontier_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/asyncrawl/crawl"
	"github.com/asyncrawl/crawl/frontiertest"
	"github.com/asyncrawl/crawl/redisfrontier"
	"github.com/asyncrawl/crawl/redisfrontier/redistest"
	"github.com/redis/go-redis/v9"
)

// openCluster returns a Frontier of the crawl opts names on cluster c,
// closed when the test ends.
func openCluster(t *testing.T, c *redistest.Cluster, opts *redisfrontier.Options) *redisfrontier.Frontier {
	t.Helper()
	f, err := redisfrontier.OpenCluster(context.Background(), c.Addrs(), opts)
	return closedAtEnd(t, f, err)
}

// TestClusterConformance runs the frontiertest suite against a crawl of
// DefaultShards shards on a real Redis Cluster of 3 masters, each with a
// replica.
func TestClusterConformance(t *testing.T) {
	c := redistest.StartCluster(t, 3, 1)
	frontiertest.Run(t, func(t *testing.T) crawl.Frontier {
		return openCluster(t, c, &redisfrontier.Options{Name: t.Name()})
	})
}

// TestClusterRandom runs frontiertest.Fuzz against a crawl of 64 shards
// on a real Redis Cluster of 3 masters, each with a replica: a run closes
// the Frontier at random points and opens it anew with the same Owner, or
// drops it without Close (a crash of the process).
func TestClusterRandom(t *testing.T) {
	c := redistest.StartCluster(t, 3, 1)
	frontiertest.Fuzz(t, func(t *testing.T, path string) crawl.Frontier {
		sum := sha256.Sum256([]byte(path))
		name := hex.EncodeToString(sum[:8])
		return openCluster(t, c, &redisfrontier.Options{Name: name, Owner: name, Shards: 64})
	}, &frontiertest.FuzzOptions{
		Durable: true,
		Crash:   func(t *testing.T, f crawl.Frontier, path string) {},
	})
}

// TestClusterFailover runs frontiertest.Fuzz against a crawl of 64 shards
// on a real Redis Cluster whose writes wait for a replica
// (Options.WaitReplicas 1): at the reopenings of a run, a master is killed
// with SIGKILL, its replica takes over, and the killed node comes back as
// the new master's replica; at others the Frontier is dropped without
// Close as well. Every call that returned must be kept: a failover loses
// nothing.
func TestClusterFailover(t *testing.T) {
	c := redistest.StartCluster(t, 3, 1)
	var mu sync.Mutex
	kills := 0
	failover := func(t *testing.T) {
		mu.Lock()
		defer mu.Unlock()
		masters := c.Masters()
		addr := masters[kills%len(masters)]
		kills++
		c.KillMaster(addr)
		c.WaitFailover(t, addr)
		c.Node(addr).Restart()
		c.WaitStable(t)
	}
	frontiertest.Fuzz(t, func(t *testing.T, path string) crawl.Frontier {
		sum := sha256.Sum256([]byte(path))
		name := hex.EncodeToString(sum[:8])
		return openCluster(t, c, &redisfrontier.Options{Name: name, Owner: name, Shards: 64, WaitReplicas: 1})
	}, &frontiertest.FuzzOptions{
		Seeds:   4,
		Durable: true,
		Restart: func(t *testing.T, path string) { failover(t) },
		Crash:   func(t *testing.T, f crawl.Frontier, path string) { failover(t) },
	})
	t.Logf("%d masters killed", kills)
}

// Open of one node of a Redis Cluster (a plain client: the command's
// -redis), for a crawl whose keys another node serves: the node answers
// MOVED, which only a cluster client follows, so Start fails at once with
// an error that says to open the cluster, rather than wait for good.
func TestOneNodeOfACluster(t *testing.T) {
	c := redistest.StartCluster(t, 3, 0)
	node := c.Masters()[0]
	name := ""
	for i := range 100 {
		n := "elsewhere" + string(rune('a'+i%26)) + string(rune('a'+i/26))
		if c.MasterOf("crawl:{"+n+"}:meta") != node {
			name = n
			break
		}
	}
	if name == "" {
		t.Fatal("no crawl name whose keys another master serves")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	f, err := redisfrontier.Open(ctx, "redis://"+node+"/0", &redisfrontier.Options{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	err = f.Start(ctx, crawl.Policy{HostWorkers: 1, Roots: []string{"http://a.example/"}})
	if err == nil || ctx.Err() != nil || !strings.Contains(err.Error(), "node of a Redis Cluster") {
		t.Fatalf("Start on one node, the crawl's keys on another: %v (ctx %v); want at once an error saying to open the cluster", err, ctx.Err())
	}
	// Inspect and Reset (the command's -status and -reset) say the same.
	one := redis.NewClient(&redis.Options{Addr: node})
	defer one.Close()
	if _, err := redisfrontier.Inspect(ctx, one, name); err == nil || !strings.Contains(err.Error(), "node of a Redis Cluster") {
		t.Errorf("Inspect on one node, the crawl's keys on another: %v; want an error saying to open the cluster", err)
	}
	if _, err := redisfrontier.Reset(ctx, one, name, false); err == nil || !strings.Contains(err.Error(), "node of a Redis Cluster") {
		t.Errorf("Reset on one node, the crawl's keys on another: %v; want an error saying to open the cluster", err)
	}
}

// Open of a node of a Redis Cluster not formed yet (cluster-enabled, no
// slot assigned): it answers every script with CLUSTERDOWN Hash slot not
// served, which a plain client would wait out for good (the command's
// -redis waited past -redis_wait, ten minutes and more); Start fails at
// once, saying to open the cluster.
func TestOneNodeOfAClusterNotFormed(t *testing.T) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("no redis-server")
		}
		t.Skip("no redis-server")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	_, port, _ := net.SplitHostPort(addr)
	dir := t.TempDir()
	cmd := exec.Command(bin, "--port", port, "--bind", "127.0.0.1", "--dir", dir, "--save", "",
		"--appendonly", "no", "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	one := redis.NewClient(&redis.Options{Addr: addr})
	defer one.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for one.Ping(ctx).Err() != nil {
		if ctx.Err() != nil {
			t.Fatal("redis-server did not answer")
		}
		time.Sleep(20 * time.Millisecond)
	}
	f, err := redisfrontier.Open(ctx, "redis://"+addr+"/0", &redisfrontier.Options{Name: "unformed"})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	err = f.Start(ctx, crawl.Policy{HostWorkers: 1, Roots: []string{"http://a.example/"}})
	if err == nil || ctx.Err() != nil || !strings.Contains(err.Error(), "node of a Redis Cluster") {
		t.Fatalf("Start on a node of a cluster not formed: %v (ctx %v); want at once an error saying to open the cluster", err, ctx.Err())
	}
}

// OpenCluster of addresses where no cluster answers: Start waits, as
// documented, and once its ctx ends says what kept it from the cluster;
// OpenCluster of a server that is no cluster's node says so at once.
func TestClusterUnreachableSays(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := l.Addr().String()
	l.Close() // nothing listens there now
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	f, err := redisfrontier.OpenCluster(ctx, []string{dead}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	err = f.Start(ctx, crawl.Policy{HostWorkers: 1, Roots: []string{"http://a.example/"}})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), dead) || !strings.Contains(err.Error(), "did not answer") || !strings.Contains(err.Error(), "refused") {
		t.Errorf("Start on a cluster address where nothing listens: %v; want context.DeadlineExceeded, saying that %s did not answer and why", err, dead)
	}

	s := redistest.Start(t)
	ctx, cancel = context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	f, err = redisfrontier.OpenCluster(ctx, []string{s.Addr()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	err = f.Start(ctx, crawl.Policy{HostWorkers: 1, Roots: []string{"http://a.example/"}})
	if err == nil || ctx.Err() != nil || !strings.Contains(err.Error(), "not a Redis Cluster") || !strings.Contains(err.Error(), s.Addr()) {
		t.Errorf("OpenCluster of a server with no cluster support: %v (ctx %v); want at once an error naming it, saying it is not a Redis Cluster", err, ctx.Err())
	}
}

// frozenLeased starts crawl name on a cluster of 3 masters, leases a URL
// of it, and stops every master until the test's end (freezeMasters).
func frozenLeased(t *testing.T, name string) (*redisfrontier.Frontier, *crawl.Lease) {
	t.Helper()
	c := redistest.StartCluster(t, 3, 0)
	f := openCluster(t, c, &redisfrontier.Options{Name: name})
	l := startLeased(t, f, crawl.Policy{HostWorkers: 1, LeaseTerm: time.Minute})
	freezeMasters(t, c)
	return f, l
}

// freezeMasters stops every master of c (they take connections and never
// answer) until the test's end.
func freezeMasters(t *testing.T, c *redistest.Cluster) {
	t.Helper()
	for _, m := range c.Masters() {
		c.Node(m).Freeze()
		t.Cleanup(c.Node(m).Thaw)
	}
}

// A call to a cluster whose masters hang (stopped: they take connections
// and never answer) returns when its ctx is cancelled, not when the
// client's ReadTimeout ends it: a cluster's client ignores ctx on a call
// in flight, so that a Run's end waited 3 s for each worker's call, and
// then for each call of its report (TestClusterInterruptWhileFrozen of
// the command failed so, now and then).
func TestClusterCallCutByCtx(t *testing.T) {
	f, l := frozenLeased(t, "cut")
	// A Take cut short waits for its call to give back the leases it
	// made (see Take) while the server may answer: until its call has
	// waited 2 s with no reply, 1.7 s past the cancel.
	for _, tt := range []struct {
		name string
		call func(ctx context.Context) error
		late time.Duration
	}{
		{"Take", func(ctx context.Context) error { _, err := f.Take(ctx); return err }, 2200 * time.Millisecond},
		{"Extend", func(ctx context.Context) error { return f.Extend(ctx, l) }, 500 * time.Millisecond},
		{"Counts", func(ctx context.Context) error { _, err := f.Counts(ctx); return err }, 500 * time.Millisecond},
		{"Stats", func(ctx context.Context) error { _, err := f.Stats(ctx); return err }, 500 * time.Millisecond},
	} {
		ctx, cancel := context.WithCancel(t.Context())
		cancelled := time.Now().Add(300 * time.Millisecond)
		time.AfterFunc(time.Until(cancelled), cancel)
		err := tt.call(ctx)
		if late := time.Since(cancelled); !errors.Is(err, context.Canceled) || late > tt.late {
			t.Errorf("%s with every master stopped, its ctx cancelled: returned %v after the cancel with %v; want context.Canceled within %v", tt.name, late.Round(time.Millisecond), err, tt.late)
		}
		cancel()
	}
}

// An Ack with links cut short while every master hangs leaves its calls to
// the Frontier: the links asked of the seen set first (on a crawl of
// several shards, which has no seen cache), then its script. Each counts
// as waiting for the server: Close takes the server for one that does not
// answer once a call has waited 2 s with no reply, and returns soon after.
// The seen set's call was not counted: Close gave a server that hangs its
// whole grace, 5 s, while the cluster's client held that call.
func TestClusterCloseAfterAckCut(t *testing.T) {
	f, l := frozenLeased(t, "ackcut")
	frozen := time.Now()
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	o := crawl.Outcome{Links: []crawl.Request{siteURL(2), siteURL(3)}, Result: &crawl.Result{URL: l.URL, Status: 200}}
	if _, err := f.Ack(ctx, l, o); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Ack with every master stopped: %v, want context.DeadlineExceeded", err)
	}
	f.Close()
	// 2 s for the call to go unanswered, a quarter of a second for
	// Close's script, up to a quarter for the calls left.
	if d := time.Since(frozen); d > 3500*time.Millisecond {
		t.Errorf("Close after an Ack with links cut short, every master stopped: returned %v after the masters stopped, want within 3.5s", d.Round(time.Millisecond))
	}
}

// The presence heartbeat (each third of the lease term) with a call in
// flight when every master hangs: Close stops the heartbeat and waits for
// it, which returns at once, the call going on in the Frontier's own
// goroutine (see cutCall), counted as waiting for the server: Close takes
// the server for one that does not answer once it has waited 2 s. Before,
// Close waited for the heartbeat until the cluster's client gave up its
// call, then gave the server its whole grace, 5 s.
func TestClusterClosePresenceCut(t *testing.T) {
	c := redistest.StartCluster(t, 3, 0)
	f := openCluster(t, c, &redisfrontier.Options{Name: "presence"})
	if err := f.Start(t.Context(), crawl.Policy{HostWorkers: 1, LeaseTerm: 300 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	freezeMasters(t, c)
	frozen := time.Now()
	time.Sleep(250 * time.Millisecond) // a heartbeat, each 100 ms, waits
	f.Close()
	if d := time.Since(frozen); d > 3500*time.Millisecond {
		t.Errorf("Close with every master stopped under a heartbeat: returned %v after the masters stopped, want within 3.5s", d.Round(time.Millisecond))
	}
}

// The end of a crawl of several shards on a Redis Cluster sets its keys to
// expire from the slots of its hash tags (CLUSTER GETKEYSINSLOT), not a
// SCAN of every key of every master, which other data there (20,000 keys
// here) would make the slower; every key of the crawl gets the deadline,
// and Inspect reads the retries so too.
func TestClusterSweepReadsSlots(t *testing.T) {
	c := redistest.StartCluster(t, 3, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs()})
	defer cc.Close()
	_, err := cc.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i := range 20000 {
			p.Set(ctx, fmt.Sprintf("other:%d", i), "x", 0)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	const ttl = time.Hour
	f := openCluster(t, c, &redisfrontier.Options{Name: "slots", Shards: 16, TTL: ttl})
	if err := f.Start(ctx, crawl.Policy{HostWorkers: 2, LeaseTerm: time.Minute}); err != nil {
		t.Fatal(err)
	}
	var reqs []crawl.Request
	for i := range 40 {
		reqs = append(reqs, crawl.Request{URL: fmt.Sprintf("https://h%d.example/%d", i%20, i)})
	}
	if _, err := f.Push(ctx, reqs...); err != nil {
		t.Fatal(err)
	}
	for _, m := range c.Masters() {
		n := redis.NewClient(&redis.Options{Addr: m})
		n.ConfigResetStat(ctx)
		n.Close()
	}
	retried := false
	for done := 0; done < len(reqs); {
		l, err := f.Take(ctx)
		if err != nil {
			t.Fatalf("Take: %v", err)
		}
		if !retried {
			retried = true
			if err := f.Retry(ctx, l, time.Now().Add(100*time.Millisecond)); err != nil {
				t.Fatal(err)
			}
			if st, err := redisfrontier.Inspect(ctx, cc, "slots"); err != nil || st.Retrying != 1 {
				t.Errorf("Inspect with a retry waiting: %+v, %v; want 1 retrying", st, err)
			}
			continue
		}
		if _, err := f.Ack(ctx, l, crawl.Outcome{Result: &crawl.Result{URL: l.URL, Status: 200}}); err != nil {
			t.Fatal(err)
		}
		done++
	}
	if err := f.Join(ctx); err != nil {
		t.Fatal(err)
	}
	keys := 0
	for _, m := range c.Masters() {
		n := redis.NewClient(&redis.Options{Addr: m})
		info, err := n.Info(ctx, "commandstats").Result()
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(info, "cmdstat_scan:") {
			t.Errorf("master %s served SCANs: %s", m, info[strings.Index(info, "cmdstat_scan:"):][:40])
		}
		iter := n.Scan(ctx, 0, "crawl:{slots*", 1000).Iterator()
		for iter.Next(ctx) {
			keys++
			if d := n.PTTL(ctx, iter.Val()).Val(); d <= ttl-time.Minute || d > ttl {
				t.Errorf("TTL of %s: %v, want in (%v, %v]", iter.Val(), d, ttl-time.Minute, ttl)
			}
		}
		n.Close()
	}
	if keys < 20 {
		t.Errorf("%d keys of the crawl done, want its shards' meta, hosts and seen sets", keys)
	}
}
