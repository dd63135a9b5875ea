package redisfrontier

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/asyncrawl/crawl"
	"github.com/asyncrawl/crawl/redisfrontier/redistest"
	"github.com/redis/go-redis/v9"
)

// beforeSwept runs fn once, just before the first sweptScript call made
// through the client it hooks: between a finish's sweep, which has set
// the crawl's keys to expire, and the call that records it.
type beforeSwept struct {
	once sync.Once
	fn   func()
}

func (h *beforeSwept) DialHook(next redis.DialHook) redis.DialHook { return next }

// swept reports whether cmd runs sweptScript.
func swept(cmd redis.Cmder) bool {
	args := cmd.Args()
	switch {
	case len(args) < 2:
		return false
	case cmd.Name() == "evalsha":
		return args[1] == sweptScript.Hash()
	case cmd.Name() == "eval":
		s, _ := args[1].(string)
		return strings.Contains(s, "return 'rv'")
	}
	return false
}

func (h *beforeSwept) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if swept(cmd) {
			h.once.Do(h.fn)
		}
		return next(ctx, cmd)
	}
}

func (h *beforeSwept) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, cmd := range cmds {
			if swept(cmd) {
				h.once.Do(h.fn)
			}
		}
		return next(ctx, cmds)
	}
}

// TestReviveDuringSweep: a process starts, with a larger page budget, on
// a crawl whose budget another process found spent and whose keys that
// process is setting to expire (its sweep done, not yet recorded). The
// new process keeps the crawl's keys, though the meta hash has no TTL
// yet, and the sweeping process, finding the crawl revived, records no
// expiry and keeps again the keys it set: while the new process crawls,
// no key of the crawl expires. Done, the crawl's keys expire again.
func TestReviveDuringSweep(t *testing.T) {
	ctx := context.Background()
	s := redistest.Start(t)
	const name = "revive-sweep"
	hook := &beforeSwept{}
	ca := redis.NewClient(&redis.Options{Addr: s.Addr()})
	t.Cleanup(func() { ca.Close() })
	ca.AddHook(hook)
	cb := redis.NewClient(&redis.Options{Addr: s.Addr()})
	t.Cleanup(func() { cb.Close() })
	a := New(ca, &Options{Name: name, TTL: time.Hour})
	t.Cleanup(func() { a.Close() })
	if err := a.Start(ctx, crawl.Policy{HostWorkers: 2, MaxPages: 2}); err != nil {
		t.Fatal(err)
	}
	var reqs []crawl.Request
	for i := range 5 {
		reqs = append(reqs, crawl.Request{URL: "https://h.example/" + strconv.Itoa(i)})
	}
	if _, err := a.Push(ctx, reqs...); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		l, err := a.Take(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.Ack(ctx, l, crawl.Outcome{}); err != nil {
			t.Fatal(err)
		}
	}
	b := New(cb, &Options{Name: name, TTL: time.Hour})
	t.Cleanup(func() { b.Close() })
	var (
		bErr  error
		fired bool
	)
	hook.fn = func() {
		fired = true
		bErr = b.Start(ctx, crawl.Policy{HostWorkers: 2})
	}
	if err := a.Join(ctx); err != nil {
		t.Fatal(err)
	}
	if bErr != nil {
		t.Fatal(bErr)
	}
	if !fired {
		t.Fatal("the Join that found the budget spent ran no sweep")
	}
	expiring := func() []string {
		var out []string
		for _, pattern := range []string{"crawl:{" + name + "}:*"} {
			iter := cb.Scan(ctx, 0, pattern, 100).Iterator()
			for iter.Next(ctx) {
				k := iter.Val()
				if d := cb.PTTL(ctx, k).Val(); d > 0 && !strings.Contains(k, ":ops:") {
					out = append(out, k)
				}
			}
		}
		return out
	}
	if ks := expiring(); len(ks) > 0 {
		t.Fatalf("keys set to expire while a process has work in the crawl: %q, want none", ks)
	}
	for range 3 {
		l, err := b.Take(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.Ack(ctx, l, crawl.Outcome{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Join(ctx); err != nil {
		t.Fatal(err)
	}
	if ks := expiring(); len(ks) < 4 {
		t.Errorf("keys set to expire once the crawl is done: %q, want every key", ks)
	}
	if c, err := b.Counts(ctx); err != nil || c != (crawl.Counts{Done: 5, Pages: 5}) {
		t.Errorf("Counts: %+v, %v; want Done 5, Pages 5", c, err)
	}
}

// openOn returns a Frontier of the crawl name (its keys' TTL an hour)
// on s, through a client of its own with hooks, both closed when the
// test ends.
func openOn(t *testing.T, s *redistest.Server, name string, hooks ...redis.Hook) *Frontier {
	c := redis.NewClient(&redis.Options{Addr: s.Addr()})
	for _, h := range hooks {
		c.AddHook(h)
	}
	f := New(c, &Options{Name: name, TTL: time.Hour})
	t.Cleanup(func() { f.Close(); c.Close() })
	return f
}

// stopByBudget pushes two URLs into f's crawl, started under MaxPages 1,
// acks the one its budget lets it take, and joins: the crawl is stopped,
// its keys set to expire, one URL held back.
func stopByBudget(t *testing.T, f *Frontier) {
	ctx := context.Background()
	if _, err := f.Push(ctx, crawl.Request{URL: "https://h.example/0"}, crawl.Request{URL: "https://h.example/1"}); err != nil {
		t.Fatal(err)
	}
	l, err := f.Take(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Ack(ctx, l, crawl.Outcome{}); err != nil {
		t.Fatal(err)
	}
	if err := f.Join(ctx); err != nil {
		t.Fatal(err)
	}
}

// scanCut fails every SCAN through the client it hooks.
type scanCut struct{}

func (scanCut) DialHook(next redis.DialHook) redis.DialHook { return next }

func (scanCut) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if cmd.Name() == "scan" || cmd.Name() == "sscan" {
			cmd.SetErr(context.DeadlineExceeded)
			return cmd.Err()
		}
		return next(ctx, cmd)
	}
}

func (scanCut) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// TestReviveCut: a revival cut short (its SCAN fails until its Start's
// ctx ends) leaves the crawl set to expire, meta hash included, and the
// next process's Start revives it whole: no key of the crawl expires
// while that process crawls.
func TestReviveCut(t *testing.T) {
	ctx := context.Background()
	s := redistest.Start(t)
	const name = "revive-cut"
	open := func(hooks ...redis.Hook) *Frontier { return openOn(t, s, name, hooks...) }
	a := open()
	if err := a.Start(ctx, crawl.Policy{HostWorkers: 2, MaxPages: 1}); err != nil {
		t.Fatal(err)
	}
	stopByBudget(t, a)
	cut := open(scanCut{})
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if err := cut.Start(short, crawl.Policy{HostWorkers: 2}); err == nil {
		t.Fatal("Start whose revival's SCAN fails until its ctx ends: nil, want an error")
	}
	if d := a.rdb.PTTL(ctx, "crawl:{"+name+"}:meta").Val(); d <= 0 {
		t.Errorf("the meta hash's TTL after a revival cut short: %v, want it still set (the meta hash is kept last)", d)
	}
	b := open()
	if err := b.Start(ctx, crawl.Policy{HostWorkers: 2}); err != nil {
		t.Fatal(err)
	}
	iter := a.rdb.Scan(ctx, 0, "crawl:{"+name+"}:*", 100).Iterator()
	for iter.Next(ctx) {
		k := iter.Val()
		if d := a.rdb.PTTL(ctx, k).Val(); d > 0 && !strings.Contains(k, ":ops:") {
			t.Errorf("TTL of %s once a process has work in the crawl again: %v, want none", k, d)
		}
	}
	if l, err := b.Take(ctx); err != nil || l.URL != "https://h.example/1" {
		t.Fatalf("Take: %v, %v; want the URL the budget held back", l, err)
	}
}

// TestReviveFinishedMeanwhile: a process revives a crawl another process
// stopped (its smaller page budget spent), and, while it keeps the keys,
// the crawl is found done: its last lease acked, and a Join's new finish
// sets every key to expire, the meta hash last. The revival, which kept
// keys that finish had set to expire, sets them to expire again: no key
// of a done crawl outlives its meta hash.
func TestReviveFinishedMeanwhile(t *testing.T) {
	ctx := context.Background()
	s := redistest.Start(t)
	const name = "revive-finished"
	open := func(p crawl.Policy) *Frontier {
		f := openOn(t, s, name)
		if err := f.Start(ctx, p); err != nil {
			t.Fatal(err)
		}
		return f
	}
	small := open(crawl.Policy{HostWorkers: 2, MaxPages: 1})
	large := open(crawl.Policy{HostWorkers: 2})
	stopByBudget(t, small)
	last, err := large.Take(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fired := false
	large.beforePersistAll = func() {
		fired = true
		if _, err := large.Ack(ctx, last, crawl.Outcome{}); err != nil {
			t.Error(err)
		}
		if err := small.Join(ctx); err != nil {
			t.Error(err)
		}
	}
	if err := large.revive(ctx); err != nil {
		t.Fatal(err)
	}
	if !fired {
		t.Fatal("the revival did not keep the keys: the crawl was not set to expire")
	}
	iter := large.rdb.Scan(ctx, 0, "crawl:{"+name+"}:*", 100).Iterator()
	n := 0
	for iter.Next(ctx) {
		k := iter.Val()
		n++
		if d := large.rdb.PTTL(ctx, k).Val(); d <= 0 || d > time.Hour {
			t.Errorf("TTL of %s once the crawl is done: %v, want in (0, 1h]", k, d)
		}
	}
	if n < 4 {
		t.Errorf("%d keys of the crawl, want at least 4", n)
	}
}

// TestUnparkBounded: a Take under a larger page budget that finds no host
// ready unparks the hosts a smaller one parked, but no more in one call
// than its passes may ask for: the call's work stays bounded however
// many are parked.
func TestUnparkBounded(t *testing.T) {
	ctx := context.Background()
	s := redistest.Start(t)
	const name, hosts = "unpark-bounded", 2000
	open := func(p crawl.Policy) *Frontier {
		f := openOn(t, s, name)
		if err := f.Start(ctx, p); err != nil {
			t.Fatal(err)
		}
		return f
	}
	small := open(crawl.Policy{HostWorkers: 2, MaxPages: 1})
	large := open(crawl.Policy{HostWorkers: 2})
	var reqs []crawl.Request
	for i := range hosts {
		reqs = append(reqs, crawl.Request{URL: "https://h" + strconv.Itoa(i) + ".example/"})
	}
	for len(reqs) > 0 {
		n := min(len(reqs), maxBatch)
		if _, err := small.Push(ctx, reqs[:n]...); err != nil {
			t.Fatal(err)
		}
		reqs = reqs[n:]
	}
	l, err := small.Take(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := small.Ack(ctx, l, crawl.Outcome{}); err != nil {
		t.Fatal(err)
	}
	// Takes under the spent budget park every host left.
	parked := "crawl:{" + name + "}:parked"
	for deadline := time.Now().Add(20 * time.Second); small.rdb.SCard(ctx, parked).Val() < hosts-1; {
		if time.Now().After(deadline) {
			t.Fatalf("hosts parked by Takes under a spent budget: %d, want %d", small.rdb.SCard(ctx, parked).Val(), hosts-1)
		}
		short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		if l, err := small.Take(short); err == nil {
			t.Fatalf("Take under a spent budget: %s, want none", l.URL)
		}
		cancel()
	}
	if _, err := large.Take(ctx); err != nil {
		t.Fatal(err)
	}
	bound := int64(8 * large.opts.MaxTake)
	if n := large.rdb.SCard(ctx, parked).Val(); n < hosts-1-bound {
		t.Errorf("hosts still parked after one Take under a larger budget: %d, want at least %d (at most %d unparked a call)", n, hosts-1-bound, bound)
	}
}
