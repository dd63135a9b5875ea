package redisfrontier

import (
	"context"
	"testing"
	"time"

	"github.com/asyncrawl/crawl"
	"github.com/asyncrawl/crawl/redisfrontier/redistest"
)

// TestWaitReplicas shows what Options.WaitReplicas promises, on a real
// Redis Cluster: with the replica of a host's master frozen (SIGSTOP), a
// Push of the host's URL is done on the master but does not return, as no
// replica has it, and returns once the replica has it; without
// WaitReplicas the same Push returns while the replica is frozen, so a
// failover then would lose it.
func TestWaitReplicas(t *testing.T) {
	c := redistest.StartCluster(t, 3, 1)
	ctx := context.Background()
	open := func(name string, wait int) *Frontier {
		f, err := OpenCluster(ctx, c.Addrs(), &Options{Name: name, Shards: 8, WaitReplicas: wait, WaitTimeout: 100 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		if err := f.Start(ctx, crawl.Policy{HostWorkers: 1}); err != nil {
			t.Fatal(err)
		}
		return f
	}
	for _, wait := range []int{1, 0} {
		name := "wait" + string(rune('0'+wait))
		f := open(name, wait)
		const url = "https://a.example/1"
		key := shardPrefix(name, shardOf(crawl.HostKey(url), 8)) + "meta"
		master := c.MasterOf(key)
		replicas := c.ReplicasOf(master)
		if len(replicas) != 1 {
			t.Fatalf("master %s has replicas %v, want 1", master, replicas)
		}
		replica := c.Node(replicas[0])
		replica.Freeze()
		type pushed struct {
			n   int
			err error
		}
		done := make(chan pushed, 1)
		go func() {
			n, err := f.Push(ctx, crawl.Request{URL: url})
			done <- pushed{n, err}
		}()
		var got pushed
		if wait == 1 {
			select {
			case got = <-done:
				replica.Thaw()
				t.Fatalf("WaitReplicas 1, the replica frozen: Push returned (%d, %v), want it to wait for the replica", got.n, got.err)
			case <-time.After(time.Second):
			}
			queued := queuedOn(t, c, master, key)
			if queued != 1 {
				replica.Thaw()
				t.Fatalf("WaitReplicas 1, the replica frozen: the master has %d queued, want the Push made on it (1)", queued)
			}
			replica.Thaw()
			got = <-done
		} else {
			select {
			case got = <-done:
			case <-time.After(30 * time.Second):
				replica.Thaw()
				t.Fatal("WaitReplicas 0, the replica frozen: Push did not return in 30s, want it not to wait")
			}
			replica.Thaw()
		}
		if got.err != nil || got.n != 1 {
			t.Errorf("WaitReplicas %d: Push = (%d, %v), want (1, nil): the write made once, whatever its tries", wait, got.n, got.err)
		}
		cnt, err := f.Counts(ctx)
		if err != nil || cnt.Queued != 1 {
			t.Errorf("WaitReplicas %d: Counts = %+v, %v; want 1 queued", wait, cnt, err)
		}
	}
}

// queuedOn reads the queued counter of the shard meta hash key on the
// node at addr, asked directly.
func queuedOn(t *testing.T, c *redistest.Cluster, addr, key string) int {
	t.Helper()
	f, err := OpenCluster(context.Background(), []string{addr}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n, err := f.rdb.HGet(context.Background(), key, "queued").Int()
	if err != nil {
		t.Fatalf("HGET %s queued: %v", key, err)
	}
	return n
}

// TestAckCutBetweenShards cuts an Ack of a crawl of several shards between
// its two writes: the page's links of another shard admitted there, its
// lease not yet ended on its own. The process is gone (its Ack never
// ends); another takes the page again once its lease term is over and
// acks it with the same links: each link is admitted once, the page is
// counted done once, and Join returns.
func TestAckCutBetweenShards(t *testing.T) {
	s := redistest.Start(t)
	ctx := context.Background()
	const shards = 8
	// Hosts a and b of two shards.
	a := "https://a.example"
	b := ""
	for i := range 100 {
		h := "https://h" + string(rune('a'+i%26)) + string(rune('a'+i/26)) + ".example"
		if shardOf(h, shards) != shardOf(a, shards) {
			b = h
			break
		}
	}
	p := crawl.Policy{HostWorkers: 1, LeaseTerm: 300 * time.Millisecond}
	open := func(owner string) *Frontier {
		f, err := Open(ctx, s.URL(), &Options{Name: "cut", Owner: owner, Shards: shards})
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Start(ctx, p); err != nil {
			t.Fatal(err)
		}
		return f
	}
	f1 := open("one")
	stuck := make(chan struct{})
	f1.afterForward = func() { <-stuck }
	t.Cleanup(func() {
		close(stuck)
		f1.Close()
	})
	if n, err := f1.Push(ctx, crawl.Request{URL: a + "/"}); n != 1 || err != nil {
		t.Fatalf("Push = %d, %v", n, err)
	}
	l, err := f1.Take(ctx)
	if err != nil {
		t.Fatal(err)
	}
	links := []crawl.Request{{URL: a + "/next"}, {URL: b + "/other"}}
	go f1.Ack(ctx, l, crawl.Outcome{Links: links, Result: &crawl.Result{URL: l.URL, Status: 200}})

	f2 := open("two")
	defer f2.Close()
	// The other shard's link is queued before the lease ends: b's page
	// is taken while a's page is still leased to the process gone.
	tctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	first, err := f2.Take(tctx)
	if err != nil {
		t.Fatalf("Take after the cut: %v", err)
	}
	if first.URL != b+"/other" {
		t.Fatalf("Take after the cut gave %s, want %s/other (admitted on its shard before the cut)", first.URL, b)
	}
	if n, err := f2.Ack(ctx, first, crawl.Outcome{Result: &crawl.Result{URL: first.URL, Status: 200}}); n != 0 || err != nil {
		t.Fatalf("Ack(%s) = %d, %v", first.URL, n, err)
	}
	again, err := f2.Take(tctx)
	if err != nil || again.URL != a+"/" {
		t.Fatalf("Take = %v, %v; want %s/ again, its lease expired", again, err, a)
	}
	n, err := f2.Ack(ctx, again, crawl.Outcome{Links: links, Result: &crawl.Result{URL: again.URL, Status: 200}})
	if n != 1 || err != nil {
		t.Fatalf("Ack of %s/ again = %d, %v; want 1 new link (%s/next; %s/other was admitted before the cut)", a, n, err, a, b)
	}
	last, err := f2.Take(tctx)
	if err != nil || last.URL != a+"/next" {
		t.Fatalf("Take = %v, %v; want %s/next", last, err, a)
	}
	if _, err := f2.Ack(ctx, last, crawl.Outcome{Result: &crawl.Result{URL: last.URL, Status: 200}}); err != nil {
		t.Fatal(err)
	}
	if err := f2.Join(tctx); err != nil {
		t.Fatalf("Join: %v", err)
	}
	c, err := f2.Counts(ctx)
	if err != nil || c != (crawl.Counts{Done: 3, Pages: 3}) {
		t.Errorf("Counts = %+v, %v; want 3 done, 3 pages, nothing queued or leased", c, err)
	}
	st, err := f2.Stats(ctx)
	if err != nil || st.Done != 3 {
		t.Errorf("Stats.Done = %d, %v; want 3: the page of the cut Ack counted once", st.Done, err)
	}
}
