package redisfrontier

import (
	"bytes"
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/asyncrawl/crawl"
	"github.com/asyncrawl/crawl/redisfrontier/redistest"
	"github.com/redis/go-redis/v9"
)

// gate is a Dialer that holds new connections back while it is shut.
type gate struct {
	mu   sync.Mutex
	shut chan struct{} // nil: open
}

func (g *gate) close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.shut == nil {
		g.shut = make(chan struct{})
	}
}

func (g *gate) open() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.shut != nil {
		close(g.shut)
		g.shut = nil
	}
}

func (g *gate) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	g.mu.Lock()
	shut := g.shut
	g.mu.Unlock()
	if shut != nil {
		select {
		case <-shut:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	var d net.Dialer
	return d.DialContext(ctx, network, addr)
}

// TestResubscribeAsksEveryShard: a process whose subscription to the
// crawl's events was lost (its connection closed: a server restarted, a
// replica promoted, a network cut) misses the events of that time. Once
// go-redis has subscribed again, its waiting Take must ask every shard at
// once, not only after its idle poll, which the test sets to a minute: the
// other process pushed work, and said so, while it was not listening.
func TestResubscribeAsksEveryShard(t *testing.T) {
	for _, shards := range []int{1, 64} {
		t.Run(map[int]string{1: "shards=1", 64: "shards=64"}[shards], func(t *testing.T) {
			ctx := context.Background()
			var g gate
			var calls atomic.Int64
			s, a, b := pusherAndWaiter(t, shards, &redis.Options{Dialer: g.dial, ClientName: "waiter"}, func() { calls.Add(1) })

			took := make(chan error, 1)
			go func() {
				l, err := b.Take(ctx)
				if err == nil && l.URL != "https://a.example/x" {
					t.Errorf("Take: got %s, want https://a.example/x", l.URL)
				}
				took <- err
			}()
			// Once its calls have stopped, the Take waits: it has asked
			// every shard, and found nothing.
			for last := int64(-1); ; {
				time.Sleep(300 * time.Millisecond)
				n := calls.Load()
				if n > 0 && n == last {
					break
				}
				last = n
			}

			g.close()
			killClient(t, s.Addr(), "waiter", "pubsub")
			if _, err := a.Push(ctx, crawl.Request{URL: "https://a.example/x"}); err != nil {
				t.Fatal(err)
			}
			time.Sleep(200 * time.Millisecond) // the event, said to nobody of b's
			g.open()
			tookWithin(t, took, "the waiting Take found nothing within 10s of its subscription made again; want it to ask every shard then (its idle poll is a minute)")
		})
	}
}

// lateSubscribe is a connection whose SUBSCRIBE and PSUBSCRIBE reach the
// server late, as on a loaded machine: written in the background, after
// a delay.
type lateSubscribe struct {
	net.Conn
	delay time.Duration
}

func (c lateSubscribe) Write(b []byte) (int, error) {
	if !bytes.Contains(bytes.ToLower(b), []byte("subscribe")) {
		return c.Conn.Write(b)
	}
	late := bytes.Clone(b)
	go func() {
		time.Sleep(c.delay)
		c.Conn.Write(late)
	}()
	return len(b), nil
}

// TestStartSubscribed: once Start has returned, the process hears every
// event of the crawl, however late its subscription reaches the server: a
// Take that waits wakes when another process pushes work, not after its
// idle poll (a minute here).
func TestStartSubscribed(t *testing.T) {
	for _, shards := range []int{1, 64} {
		t.Run(map[int]string{1: "shards=1", 64: "shards=64"}[shards], func(t *testing.T) {
			_, a, b := pusherAndWaiter(t, shards, &redis.Options{Dialer: lateDial}, nil)
			tookWithin(t, pushToWaiting(t, a, b), "a Take waiting since Start returned missed another process's push for 10s; want Start to return subscribed")
		})
	}
}

// lateDial dials a connection whose subscriptions reach the server half
// a second late (see lateSubscribe).
func lateDial(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return lateSubscribe{c, 500 * time.Millisecond}, nil
}

// pushToWaiting starts a Take of b, and once it has asked the server and
// waits, pushes a URL with a; the channel gets the Take's error.
func pushToWaiting(t *testing.T, a, b *Frontier) <-chan error {
	t.Helper()
	ctx := context.Background()
	asked := make(chan struct{})
	var once sync.Once
	b.afterTakeScript = func() { once.Do(func() { close(asked) }) }
	took := make(chan error, 1)
	go func() {
		_, err := b.Take(ctx)
		took <- err
	}()
	<-asked
	time.Sleep(50 * time.Millisecond) // the Take waits
	if _, err := a.Push(ctx, crawl.Request{URL: "https://a.example/x"}); err != nil {
		t.Fatal(err)
	}
	return took
}

// tookWithin waits up to 10s for the error of a Take from took, and fails
// the test with late if none came.
func tookWithin(t *testing.T, took <-chan error, late string) {
	t.Helper()
	select {
	case err := <-took:
		if err != nil {
			t.Fatalf("Take: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal(late)
	}
}

// TestStartSubscribeCut: a Start whose ctx ends while it waits for its
// subscription to be active returns ctx's error, subscribed to nothing;
// the next Start subscribes, and its process hears the other's events.
func TestStartSubscribeCut(t *testing.T) {
	ctx := context.Background()
	s := redistest.Start(t)
	cb := redis.NewClient(&redis.Options{Addr: s.Addr(), Dialer: lateDial})
	ca := redis.NewClient(&redis.Options{Addr: s.Addr()})
	p := crawl.Policy{HostWorkers: 1, Roots: []string{"https://a.example/"}}
	a := New(ca, &Options{Name: "cut"})
	b := New(cb, &Options{Name: "cut"})
	t.Cleanup(func() {
		a.Close()
		b.Close()
		ca.Close()
		cb.Close()
	})
	b.idle = time.Minute
	if err := a.Start(ctx, p); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if err := b.Start(short, p); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Start whose ctx ends before its subscription is active: %v, want context.DeadlineExceeded", err)
	}
	if b.started || b.pubsub != nil {
		t.Fatalf("after a Start cut: started %v, subscription %v; want neither", b.started, b.pubsub)
	}
	if err := b.Start(ctx, p); err != nil {
		t.Fatal(err)
	}
	tookWithin(t, pushToWaiting(t, a, b), "after a Start cut, then one whole, a waiting Take missed another process's push for 10s")
}

// pusherAndWaiter starts a redis-server and two Frontiers of one crawl of
// shards shards on it, both started: a, and b, whose client has bopts
// (Addr aside), whose idle poll is a minute, and whose take calls call
// afterTake. They are closed when the test ends.
func pusherAndWaiter(t *testing.T, shards int, bopts *redis.Options, afterTake func()) (s *redistest.Server, a, b *Frontier) {
	t.Helper()
	s = redistest.Start(t)
	bopts.Addr = s.Addr()
	cb := redis.NewClient(bopts)
	ca := redis.NewClient(&redis.Options{Addr: s.Addr()})
	p := crawl.Policy{HostWorkers: 1, Roots: []string{"https://a.example/"}}
	a = New(ca, &Options{Name: "events", Shards: shards})
	b = New(cb, &Options{Name: "events", Shards: shards})
	t.Cleanup(func() {
		a.Close()
		b.Close()
		ca.Close()
		cb.Close()
	})
	b.idle = time.Minute
	b.afterTakeScript = afterTake
	for _, f := range []*Frontier{a, b} {
		if err := f.Start(context.Background(), p); err != nil {
			t.Fatal(err)
		}
	}
	return s, a, b
}

// killClient closes the connections of type typ (CLIENT LIST's) of the
// clients named name on the redis-server at addr, and fails the test if
// there are none.
func killClient(t *testing.T, addr, name, typ string) {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	ctx := context.Background()
	list, err := c.Do(ctx, "CLIENT", "LIST", "TYPE", typ).Text()
	if err != nil {
		t.Fatal(err)
	}
	killed := 0
	for _, line := range strings.Split(list, "\n") {
		if !strings.Contains(" "+line+" ", " name="+name+" ") {
			continue
		}
		for _, kv := range strings.Fields(line) {
			if id, ok := strings.CutPrefix(kv, "id="); ok {
				if err := c.Do(ctx, "CLIENT", "KILL", "ID", id).Err(); err != nil {
					t.Fatal(err)
				}
				killed++
			}
		}
	}
	if killed == 0 {
		t.Fatalf("no %s connection of a client named %q: %q", typ, name, list)
	}
}
