package redisfrontier_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/asyncrawl/crawl"
	"github.com/asyncrawl/crawl/redisfrontier"
	"github.com/asyncrawl/crawl/redisfrontier/redistest"
	"github.com/redis/go-redis/v9"
)

// client returns a client of s of the test's own, closed when it ends.
func client(t *testing.T, s *redistest.Server) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: s.Addr()})
	t.Cleanup(func() { c.Close() })
	return c
}

// crawlKeys returns the keys of crawl name, its shards' included, as
// SCAN finds them.
func crawlKeys(t *testing.T, c *redis.Client, name string) []string {
	t.Helper()
	var keys []string
	for _, pattern := range []string{"crawl:{" + name + "}:*", "crawl:{" + name + ":*}:*"} {
		iter := c.Scan(t.Context(), 0, pattern, 100).Iterator()
		for iter.Next(t.Context()) {
			keys = append(keys, iter.Val())
		}
		if err := iter.Err(); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// dumpKeys returns the keys of crawl name with their values, as DUMP
// gives them.
func dumpKeys(t *testing.T, c *redis.Client, name string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, k := range crawlKeys(t, c, name) {
		v, err := c.Dump(t.Context(), k).Result()
		if err != nil {
			t.Fatal(err)
		}
		m[k] = v
	}
	return m
}

// ack acks l as a page fetched with status 200 and links.
func ack(t *testing.T, f *redisfrontier.Frontier, l *crawl.Lease, links ...crawl.Request) {
	t.Helper()
	if _, err := f.Ack(t.Context(), l, crawl.Outcome{Result: &crawl.Result{URL: l.URL, Status: 200}, Links: links}); err != nil {
		t.Fatalf("Ack %s: %v", l.URL, err)
	}
}

// crawlAll takes and acks every URL of f's crawl, then Joins it.
func crawlAll(t *testing.T, f *redisfrontier.Frontier) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for {
		c, err := f.Counts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if c.Queued == 0 && c.Leased == 0 {
			break
		}
		l, err := f.Take(ctx)
		if err != nil {
			t.Fatalf("Take: %v", err)
		}
		ack(t, f, l)
	}
	if err := f.Join(ctx); err != nil {
		t.Fatalf("Join: %v", err)
	}
}

// Inspect reads a crawl's state without joining it: a missing crawl is
// ErrNoCrawl; a running one has its counters, its retries and who holds
// its leases, until when; a done one is Done, with when it finished and
// when its keys expire.
func TestInspect(t *testing.T) {
	s := redistest.Start(t)
	c := client(t, s)
	if st, err := redisfrontier.Inspect(t.Context(), c, "none"); !errors.Is(err, redisfrontier.ErrNoCrawl) {
		t.Fatalf("Inspect of a crawl never started: got %+v, %v; want ErrNoCrawl", st, err)
	}

	const term = time.Minute
	p := crawl.Policy{HostWorkers: 4, LeaseTerm: term}
	f := open(t, s, &redisfrontier.Options{Name: "insp", Owner: "proc-a"})
	if err := f.Start(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	if n, err := f.Push(t.Context(), siteURL(0), siteURL(4), siteURL(8)); n != 3 || err != nil {
		t.Fatalf("Push: %d, %v; want 3, nil", n, err)
	}
	held, err := f.Take(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	retried, err := f.Take(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Retry(t.Context(), retried, time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	before := time.Now()
	st, err := redisfrontier.Inspect(t.Context(), c, "insp")
	if err != nil {
		t.Fatal(err)
	}
	if st.Done || st.Queued != 2 || st.Retrying != 1 || st.Leased != 1 || st.Acked != 0 || st.Pending != 3 || !st.Finished.IsZero() {
		t.Errorf("Inspect of a crawl of 3 URLs, 1 leased, 1 retrying: got %+v; want not Done, Queued 2, Retrying 1, Leased 1, Acked 0, Pending 3, no Finished", st)
	}
	if len(st.Holders) != 1 || st.Holders[0].Owner != "proc-a" || st.Holders[0].Leases != 1 {
		t.Errorf("Holders %+v, want proc-a with 1 lease", st.Holders)
	} else if u := st.Holders[0].Until; u.Before(before.Add(term-5*time.Second)) || u.After(before.Add(term+5*time.Second)) {
		t.Errorf("proc-a's lease until %v, want about %v (the term from now)", u, before.Add(term))
	}
	if len(st.Roots) != 0 || st.Name != "insp" {
		t.Errorf("Name %q, Roots %q; want insp and none", st.Name, st.Roots)
	}

	ack(t, f, held)
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	// The retry's time is an hour away: a process started anew takes it
	// only once Retry puts it back at once.
	g := open(t, s, &redisfrontier.Options{Name: "insp", TTL: time.Hour, Owner: "proc-b"})
	if err := g.Start(t.Context(), crawl.Policy{HostWorkers: 4}); err != nil {
		t.Fatal(err)
	}
	l, err := g.Take(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	ack(t, g, l)
	st, err = redisfrontier.Inspect(t.Context(), c, "insp")
	if err != nil {
		t.Fatal(err)
	}
	// g is on the crawl, holding no lease.
	if st.Done || st.Retrying != 1 || st.Leased != 0 || len(st.Holders) != 1 || st.Holders[0].Owner != "proc-b" || st.Holders[0].Leases != 0 {
		t.Errorf("Inspect with only a retry left, proc-b on the crawl: got %+v; want not Done, Retrying 1, no lease, proc-b a Holder of none", st)
	}
	// Ask for the retry now: Take hands it out only at its time, so
	// the test ends it through the server instead.
	if err := c.Del(t.Context(), "crawl:{insp}:r:https://h0.example").Err(); err != nil {
		t.Fatal(err)
	}
	c.HSet(t.Context(), "crawl:{insp}:meta", "unfinished", 0, "queued", 0)
	c.HDel(t.Context(), "crawl:{insp}:h:https://h0.example", "rn")
	c.ZRem(t.Context(), "crawl:{insp}:ready", "https://h0.example")
	joined := time.Now()
	if err := g.Join(t.Context()); err != nil {
		t.Fatal(err)
	}
	st, err = redisfrontier.Inspect(t.Context(), c, "insp")
	if err != nil {
		t.Fatal(err)
	}
	if !st.Done || st.Acked != 2 || st.Finished.IsZero() {
		t.Errorf("Inspect of a crawl done: got %+v; want Done, Acked 2, Finished set", st)
	}
	if d := st.Expires.Sub(joined); d < time.Hour-time.Minute || d > time.Hour+time.Minute {
		t.Errorf("a crawl done under TTL 1h expires %v after its Join, want about 1h", d)
	}
}

// A crawl done expires TTL after the Join that found it done: every key
// has a TTL, at most the Options' (and not long below it); a later
// process that joins it, finds it done as it was and is told so
// (WasDone), and moves neither its time nor its deadline. A negative TTL
// keeps the keys (but a process's replies, which have a week of their
// own).
func TestTTL(t *testing.T) {
	s := redistest.Start(t)
	c := client(t, s)
	p := crawl.Policy{HostWorkers: 2, LeaseTerm: time.Minute}
	for _, tt := range []struct {
		name string
		ttl  time.Duration
		want time.Duration // the keys' TTL: -1 for none
	}{
		{"day", 24 * time.Hour, 24 * time.Hour},
		{"default", 0, redisfrontier.DefaultTTL},
		{"kept", -1, -1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := open(t, s, &redisfrontier.Options{Name: tt.name, TTL: tt.ttl})
			if err := f.Start(t.Context(), p); err != nil {
				t.Fatal(err)
			}
			if _, err := f.Push(t.Context(), siteURL(0), siteURL(1), siteURL(2)); err != nil {
				t.Fatal(err)
			}
			if _, ok := f.WasDone(); ok {
				t.Errorf("WasDone of a crawl started now: true, want false")
			}
			crawlAll(t, f)
			keys := crawlKeys(t, c, tt.name)
			if len(keys) < 5 {
				t.Fatalf("keys of the crawl done: %q, want its meta, stats, seen sets and hosts", keys)
			}
			for _, k := range keys {
				d, err := c.PTTL(t.Context(), k).Result()
				if err != nil {
					t.Fatal(err)
				}
				switch {
				case tt.want < 0 && strings.Contains(k, ":ops:"):
					// A process's replies, which go a week after
					// its Start, or at its Close.
				case tt.want < 0 && d != -1:
					t.Errorf("TTL of %s: got %v, want none (-1)", k, d)
				case tt.want > 0 && (d <= tt.want-time.Minute || d > tt.want):
					t.Errorf("TTL of %s: got %v, want in (%v, %v]", k, d, tt.want-time.Minute, tt.want)
				}
			}
			fin, err := redisfrontier.Inspect(t.Context(), c, tt.name)
			if err != nil {
				t.Fatal(err)
			}
			deadline, _ := c.PExpireTime(t.Context(), "crawl:{"+tt.name+"}:meta").Result()
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}

			// A rerun: another process joins the crawl done, with a
			// longer TTL, and finds nothing to do.
			time.Sleep(5 * time.Millisecond)
			g := open(t, s, &redisfrontier.Options{Name: tt.name, TTL: 48 * time.Hour})
			if err := g.Start(t.Context(), p); err != nil {
				t.Fatal(err)
			}
			if at, ok := g.WasDone(); !ok || !at.Equal(fin.Finished) {
				t.Errorf("WasDone of a rerun: %v, %v; want true and %v, when it was found done", at, ok, fin.Finished)
			}
			if n, err := g.Push(t.Context(), siteURL(0)); n != 0 || err != nil {
				t.Errorf("Push of a root of the crawl done: %d, %v; want 0, nil", n, err)
			}
			if err := g.Join(t.Context()); err != nil {
				t.Fatal(err)
			}
			again, _ := c.PExpireTime(t.Context(), "crawl:{"+tt.name+"}:meta").Result()
			if again != deadline {
				t.Errorf("the meta hash's expiry after a rerun: %v, want %v as the first Join set it", again, deadline)
			}
			st, err := redisfrontier.Inspect(t.Context(), c, tt.name)
			if err != nil {
				t.Fatal(err)
			}
			if !st.Finished.Equal(fin.Finished) {
				t.Errorf("Finished after a rerun: %v, want %v", st.Finished, fin.Finished)
			}
			for _, k := range crawlKeys(t, c, tt.name) {
				if d, _ := c.PTTL(t.Context(), k).Result(); tt.want > 0 && d > tt.want {
					t.Errorf("TTL of %s after a rerun: %v, want at most %v", k, d, tt.want)
				}
			}
		})
	}
}

// The keys of a crawl expired (a TTL of 200ms, waited out): the process
// still on it gets ErrCrawlDeleted from its calls instead of making a half
// crawl, and a new Start makes the crawl anew.
func TestTTLExpired(t *testing.T) {
	s := redistest.Start(t)
	c := client(t, s)
	p := crawl.Policy{HostWorkers: 2}
	f := open(t, s, &redisfrontier.Options{Name: "short", TTL: 200 * time.Millisecond})
	if err := f.Start(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Push(t.Context(), siteURL(0)); err != nil {
		t.Fatal(err)
	}
	crawlAll(t, f)
	for len(crawlKeys(t, c, "short")) > 0 {
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := f.Push(t.Context(), siteURL(1)); !errors.Is(err, redisfrontier.ErrCrawlDeleted) {
		t.Errorf("Push on a crawl expired: got %v, want ErrCrawlDeleted", err)
	}
	if err := f.Join(t.Context()); !errors.Is(err, redisfrontier.ErrCrawlDeleted) {
		t.Errorf("Join on a crawl expired: got %v, want ErrCrawlDeleted", err)
	}
	if keys := crawlKeys(t, c, "short"); len(keys) != 0 {
		t.Errorf("keys after calls on a crawl expired: %q, want none", keys)
	}
	if err := f.Start(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	if n, err := f.Push(t.Context(), siteURL(0)); n != 1 || err != nil {
		t.Errorf("Push of a URL of the expired crawl, started anew: %d, %v; want 1, nil", n, err)
	}
}

// Reset refuses a crawl with a lease out, unless forced; forced, it
// deletes every key (SCAN finds none), the process that held the lease
// gets ErrCrawlDeleted from Take, Ack and Join (a Take blocked is woken),
// and Close; a second Reset finds no crawl.
func TestReset(t *testing.T) {
	s := redistest.Start(t)
	c := client(t, s)
	p := crawl.Policy{HostWorkers: 1, LeaseTerm: time.Minute}
	f := open(t, s, &redisfrontier.Options{Name: "rst"})
	if err := f.Start(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	other := open(t, s, &redisfrontier.Options{Name: "other"})
	if err := other.Start(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Push(t.Context(), siteURL(0)); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Push(t.Context(), siteURL(0), siteURL(4), siteURL(1)); err != nil {
		t.Fatal(err)
	}
	l, err := f.Take(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	keys := crawlKeys(t, c, "rst")
	if n, err := redisfrontier.Reset(t.Context(), c, "rst", false); !errors.Is(err, redisfrontier.ErrLeased) {
		t.Fatalf("Reset of a crawl with a lease out: %d, %v; want ErrLeased", n, err)
	}
	if got := crawlKeys(t, c, "rst"); len(got) != len(keys) {
		t.Errorf("keys after a Reset refused: %q, want %q", got, keys)
	}
	l2, err := f.Take(t.Context()) // another host's URL: h1
	if err != nil {
		t.Fatal(err)
	}
	blocked := make(chan error, 1)
	go func() {
		// h0 is at its HostWorkers: this Take waits.
		_, err := f.Take(t.Context())
		blocked <- err
	}()
	n, err := redisfrontier.Reset(t.Context(), c, "rst", true)
	if err != nil || n == 0 {
		t.Errorf("Reset forced: %d, %v; want the keys deleted, nil", n, err)
	}
	if got := crawlKeys(t, c, "rst"); len(got) != 0 {
		t.Errorf("keys after Reset: %q, want none", got)
	}
	select {
	case err := <-blocked:
		if !errors.Is(err, redisfrontier.ErrCrawlDeleted) {
			t.Errorf("Take blocked during a Reset: got %v, want ErrCrawlDeleted", err)
		}
	case <-time.After(10 * time.Second):
		t.Errorf("Take blocked during a Reset still blocked 10s later")
	}
	if _, err := f.Ack(t.Context(), l, crawl.Outcome{Result: &crawl.Result{URL: l.URL, Status: 200}, Links: []crawl.Request{siteURL(9)}}); !errors.Is(err, redisfrontier.ErrCrawlDeleted) {
		t.Errorf("Ack after Reset: got %v, want ErrCrawlDeleted", err)
	}
	if err := f.Retry(t.Context(), l2, time.Time{}); !errors.Is(err, redisfrontier.ErrCrawlDeleted) {
		t.Errorf("Retry after Reset: got %v, want ErrCrawlDeleted", err)
	}
	if err := f.Join(t.Context()); !errors.Is(err, redisfrontier.ErrCrawlDeleted) {
		t.Errorf("Join after Reset: got %v, want ErrCrawlDeleted", err)
	}
	if err := f.Close(); err != nil {
		t.Errorf("Close after Reset: %v, want nil", err)
	}
	if got := crawlKeys(t, c, "rst"); len(got) != 0 {
		t.Errorf("keys after the calls of a process on the crawl reset: %q, want none", got)
	}
	if got := crawlKeys(t, c, "other"); len(got) == 0 {
		t.Errorf("the other crawl's keys are gone after the Reset of rst")
	}
	if n, err := redisfrontier.Reset(t.Context(), c, "rst", false); !errors.Is(err, redisfrontier.ErrNoCrawl) {
		t.Errorf("Reset of a crawl reset: %d, %v; want ErrNoCrawl", n, err)
	}
	// A name with glob characters: SCAN's pattern matches it alone.
	g := open(t, s, &redisfrontier.Options{Name: "o*"})
	if err := g.Start(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	g.Close() // no process on it
	if _, err := redisfrontier.Reset(t.Context(), c, "o*", false); err != nil {
		t.Fatal(err)
	}
	if got := crawlKeys(t, c, "other"); len(got) == 0 {
		t.Errorf("the crawl other's keys are gone after the Reset of o*")
	}
}

// scanFails is a client hook that fails every SCAN (and SSCAN, with which
// a crawl's sweep reads its sets of hosts and owners): a Reset cut (its
// process killed, its context cancelled) after it deleted the meta hash
// and before it deleted the other keys.
type scanFails struct{}

var errScanCut = errors.New("SCAN cut")

func (scanFails) DialHook(next redis.DialHook) redis.DialHook { return next }

func (scanFails) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if cmd.Name() == "scan" || cmd.Name() == "sscan" {
			cmd.SetErr(errScanCut)
			return errScanCut
		}
		return next(ctx, cmd)
	}
}

func (scanFails) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// A Reset cut between the deletion of the meta hash and that of the other
// keys leaves the crawl marked half reset: a Start under its name is
// refused (it would make a crawl anew over the old seen set and queues,
// its roots taken as seen), Inspect says so, and a Reset run again,
// unforced though leases were out, deletes every key, after which a Start
// makes the crawl anew, its root admitted.
func TestResetCut(t *testing.T) {
	s := redistest.Start(t)
	c := client(t, s)
	p := crawl.Policy{HostWorkers: 1, LeaseTerm: time.Minute}
	f := open(t, s, &redisfrontier.Options{Name: "cut"})
	if err := f.Start(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Push(t.Context(), siteURL(0), siteURL(1)); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Take(t.Context()); err != nil {
		t.Fatal(err)
	}
	cut := client(t, s)
	cut.AddHook(scanFails{})
	if n, err := redisfrontier.Reset(t.Context(), cut, "cut", true); !errors.Is(err, errScanCut) {
		t.Fatalf("Reset cut at its SCAN: %d, %v; want %v", n, err, errScanCut)
	}
	if len(crawlKeys(t, c, "cut")) == 0 {
		t.Fatal("no key left by the Reset cut: the test cuts nothing")
	}
	// The process that holds a lease closes meanwhile, as a process of
	// a crawl reset does when it fails: it gives nothing back to the
	// keys left (on a Redis Cluster, those of the shards the Reset has
	// not reached yet), which would then outlive the Reset.
	before := dumpKeys(t, c, "cut")
	if err := f.Close(); err != nil {
		t.Errorf("Close of a process on a crawl half reset: %v, want nil", err)
	}
	if after := dumpKeys(t, c, "cut"); !maps.Equal(before, after) {
		t.Errorf("Close of a process on a crawl half reset changed its keys: %d before, %d after, or their values", len(before), len(after))
	}
	g := open(t, s, &redisfrontier.Options{Name: "cut"})
	if err := g.Start(t.Context(), p); err == nil {
		t.Errorf("Start on a crawl half reset: got nil, want an error")
	}
	if st, err := redisfrontier.Inspect(t.Context(), c, "cut"); err == nil {
		t.Errorf("Inspect of a crawl half reset: got %+v, want an error", st)
	}
	if n, err := redisfrontier.Reset(t.Context(), c, "cut", false); err != nil || n == 0 {
		t.Fatalf("Reset again: %d, %v; want the keys deleted, nil", n, err)
	}
	if got := crawlKeys(t, c, "cut"); len(got) != 0 {
		t.Errorf("keys after the Reset run again: %q, want none", got)
	}
	if n, err := redisfrontier.Reset(t.Context(), c, "cut", false); !errors.Is(err, redisfrontier.ErrNoCrawl) {
		t.Errorf("Reset of a crawl reset: %d, %v; want ErrNoCrawl", n, err)
	}
	h := open(t, s, &redisfrontier.Options{Name: "cut"})
	if err := h.Start(t.Context(), p); err != nil {
		t.Fatalf("Start after the Reset completed: %v", err)
	}
	if n, err := h.Push(t.Context(), siteURL(0)); n != 1 || err != nil {
		t.Errorf("Push of the root to the crawl made anew: %d, %v; want 1, nil", n, err)
	}

	// A Reset cut after it deleted every key but the mark: the mark is
	// the crawl, and the Reset run again deletes it and says so (it said
	// there was no crawl, ErrNoCrawl, having deleted the mark).
	if err := c.HSet(t.Context(), "crawl:{marked}:meta", "reset", "1").Err(); err != nil {
		t.Fatal(err)
	}
	if n, err := redisfrontier.Reset(t.Context(), c, "marked", false); err != nil || n != 1 {
		t.Errorf("Reset of a crawl of which only the mark is left: %d, %v; want 1, nil", n, err)
	}
	if got := crawlKeys(t, c, "marked"); len(got) != 0 {
		t.Errorf("keys after the Reset of the mark: %q, want none", got)
	}
}

// A Join that finds the crawl done and whose sweep (the TTL set on every
// key) is cut by its context leaves the keys as they were, the meta hash
// without expiry; the next process to join the crawl sweeps it, to the
// deadline of that first finish, not to one of its own.
func TestTTLSweepCut(t *testing.T) {
	s := redistest.Start(t)
	c := client(t, s)
	p := crawl.Policy{HostWorkers: 2, LeaseTerm: time.Minute}
	cut := client(t, s)
	cut.AddHook(scanFails{})
	f := redisfrontier.New(cut, &redisfrontier.Options{Name: "swc", TTL: time.Hour})
	t.Cleanup(func() { f.Close() })
	if err := f.Start(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Push(t.Context(), siteURL(0), siteURL(1)); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		l, err := f.Take(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		ack(t, f, l)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	if err := f.Join(ctx); err == nil {
		t.Fatal("Join whose sweep fails until its context ends: got nil, want an error")
	}
	if d, _ := c.PTTL(t.Context(), "crawl:{swc}:meta").Result(); d != -1 {
		t.Errorf("TTL of the meta hash after a sweep cut: %v, want none (-1): it goes last", d)
	}
	g := open(t, s, &redisfrontier.Options{Name: "swc", TTL: 48 * time.Hour})
	if err := g.Start(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	if err := g.Join(t.Context()); err != nil {
		t.Fatal(err)
	}
	keys := crawlKeys(t, c, "swc")
	if len(keys) < 4 {
		t.Fatalf("keys of the crawl done: %q, want its meta, stats, seen sets and hosts", keys)
	}
	for _, k := range keys {
		if d, _ := c.PTTL(t.Context(), k).Result(); d <= time.Hour-time.Minute || d > time.Hour {
			t.Errorf("TTL of %s after the sweep done again: got %v, want in (%v, %v], the first finish's", k, d, time.Hour-time.Minute, time.Hour)
		}
	}
}

// hmgetCounter is a go-redis hook that counts the reads of Join: the
// HMGETs sent alone, and the pipelines that start with one (a sharded
// crawl's Join reads every shard in one pipeline; the scripts' calls are
// EVALSHA).
type hmgetCounter struct{ n atomic.Int64 }

func (h *hmgetCounter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *hmgetCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if cmd.Name() == "hmget" {
			h.n.Add(1)
		}
		return next(ctx, cmd)
	}
}

func (h *hmgetCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if len(cmds) > 0 && cmds[0].Name() == "hmget" {
			h.n.Add(1) // a sharded Join's read of every shard
		}
		return next(ctx, cmds)
	}
}

// TestJoinAsksWhenOver: a Join waiting while workers take and ack 200
// URLs asks the server whether the crawl is over when it starts, when the
// Ack that ends the crawl says so, and once each second it waits (should
// that word be lost), not after every Ack: it returns when the crawl is
// done, having read the counters a few times.
func TestJoinAsksWhenOver(t *testing.T) {
	for _, shards := range []int{1, 8} {
		t.Run(fmt.Sprintf("shards=%d", shards), func(t *testing.T) { testJoinAsksWhenOver(t, shards) })
	}
}

func testJoinAsksWhenOver(t *testing.T, shards int) {
	s := redistest.Start(t)
	c := client(t, s)
	h := &hmgetCounter{}
	c.AddHook(h)
	f := redisfrontier.New(c, &redisfrontier.Options{Name: "joinwait", Shards: shards})
	defer f.Close()
	if err := f.Start(t.Context(), crawl.Policy{HostWorkers: 2}); err != nil {
		t.Fatal(err)
	}
	const n = 200
	var reqs []crawl.Request
	for i := range n {
		reqs = append(reqs, crawl.Request{URL: fmt.Sprintf("https://h%d.example/%d", i%10, i)})
	}
	if _, err := f.Push(t.Context(), reqs...); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	joined := make(chan error, 1)
	go func() { joined <- f.Join(t.Context()) }()
	var (
		wg    sync.WaitGroup
		acked atomic.Int64
	)
	for range 8 {
		wg.Go(func() {
			for acked.Load() < n {
				ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
				l, err := f.Take(ctx)
				cancel()
				if err != nil {
					continue // the last URLs: the others are leased
				}
				ack(t, f, l)
				acked.Add(1)
			}
		})
	}
	wg.Wait()
	select {
	case err := <-joined:
		if err != nil {
			t.Fatalf("Join: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Join did not return 10 s after the last Ack")
	}
	// One read at the start, one after the last Ack, one for each second
	// waited (idlePoll), and one for a "j" that an Ack said as the Join
	// read; a sharded crawl's Join reads twice each time, and each shard
	// says "j" when it has nothing pending.
	waited := time.Since(start)
	want := 3 + int64(waited/time.Second)
	if shards > 1 {
		want = 2 * (want + int64(shards))
	}
	t.Logf("reads %d, want at most %d", h.n.Load(), want)
	if got := h.n.Load(); got > want {
		t.Errorf("Join read the counters %d times over %v of a crawl of %d URLs, want at most %d", got, waited, n, want)
	}
}

// The leases of a process that stopped (no Close, no Extend) end with
// their term: Inspect counts them as Expired, and Reset, without force,
// no longer counts them as held, on one server and on 8 shards.
func TestResetLeasesEnded(t *testing.T) {
	s := redistest.Start(t)
	c := client(t, s)
	for _, shards := range []int{1, 8} {
		name := fmt.Sprintf("ended%d", shards)
		p := crawl.Policy{HostWorkers: 1, LeaseTerm: 300 * time.Millisecond}
		// The process's own client, closed under it as by its death.
		fc := client(t, s)
		f, err := redisfrontier.New(fc, &redisfrontier.Options{Name: name, Shards: shards}), error(nil)
		t.Cleanup(func() { f.Close() })
		if err = f.Start(t.Context(), p); err != nil {
			t.Fatal(err)
		}
		if _, err := f.Push(t.Context(), siteURL(0), siteURL(1)); err != nil {
			t.Fatal(err)
		}
		if _, err := f.Take(t.Context()); err != nil {
			t.Fatal(err)
		}
		// The process stops here: no Extend, no Close, and no call to
		// say it is on the crawl.
		fc.Close()
		if _, err := redisfrontier.Reset(t.Context(), c, name, false); !errors.Is(err, redisfrontier.ErrLeased) {
			t.Fatalf("%d shards: Reset in the lease's term: %v, want ErrLeased", shards, err)
		}
		time.Sleep(600 * time.Millisecond)
		st, err := redisfrontier.Inspect(t.Context(), c, name)
		if err != nil || st.Leased != 1 || st.Expired != 1 {
			t.Fatalf("%d shards: Inspect after the term: %+v, %v; want 1 leased, 1 expired", shards, st, err)
		}
		if n, err := redisfrontier.Reset(t.Context(), c, name, false); err != nil || n == 0 {
			t.Errorf("%d shards: Reset after the lease's term: %d, %v; want the keys deleted", shards, n, err)
		}
	}
}

// TestBadName: a crawl's name that would share keys with another crawl's
// (a hash tag's braces, the colon of a shard's tag) or hold a control
// character is refused before anything is written, by every function that
// takes one.
func TestBadName(t *testing.T) {
	for _, name := range []string{"a", "a b", "site-2026", "TestX/sub_test", "été", "a.b_c"} {
		if err := redisfrontier.CheckName(name); err != nil {
			t.Errorf("CheckName(%q) = %v, want nil", name, err)
		}
	}
	bad := []string{"", "a}:x", "{a", "a}", "a:1", "site:2026", "a\nb", "a\x7f"}
	for _, name := range bad {
		if err := redisfrontier.CheckName(name); !errors.Is(err, redisfrontier.ErrBadName) {
			t.Errorf("CheckName(%q) = %v, want ErrBadName", name, err)
		}
	}
	s := redistest.Start(t)
	c := client(t, s)
	ctx := t.Context()
	p := crawl.Policy{HostWorkers: 1}
	// A crawl "a", whose keys a crawl named "a}:x" ("crawl:{a}:x}:...")
	// would have shared its prefix with, and so been reset with.
	a := open(t, s, &redisfrontier.Options{Name: "a"})
	if err := a.Start(ctx, p); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Push(ctx, siteURL(0)); err != nil {
		t.Fatal(err)
	}
	keys := crawlKeys(t, c, "a")
	for _, name := range bad[1:] {
		if f, err := redisfrontier.Open(ctx, s.URL(), &redisfrontier.Options{Name: name}); !errors.Is(err, redisfrontier.ErrBadName) {
			if f != nil {
				f.Close()
			}
			t.Errorf("Open with Name %q: %v, want ErrBadName", name, err)
		}
		if f, err := redisfrontier.OpenCluster(ctx, []string{s.Addr()}, &redisfrontier.Options{Name: name}); !errors.Is(err, redisfrontier.ErrBadName) {
			if f != nil {
				f.Close()
			}
			t.Errorf("OpenCluster with Name %q: %v, want ErrBadName", name, err)
		}
		f := redisfrontier.New(c, &redisfrontier.Options{Name: name})
		if err := f.Start(ctx, p); !errors.Is(err, redisfrontier.ErrBadName) {
			t.Errorf("Start with Name %q: %v, want ErrBadName", name, err)
		}
		f.Close()
		if _, err := redisfrontier.Inspect(ctx, c, name); !errors.Is(err, redisfrontier.ErrBadName) {
			t.Errorf("Inspect(%q): %v, want ErrBadName", name, err)
		}
		if _, err := redisfrontier.Reset(ctx, c, name, true); !errors.Is(err, redisfrontier.ErrBadName) {
			t.Errorf("Reset(%q): %v, want ErrBadName", name, err)
		}
	}
	all, err := c.Keys(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != len(keys) {
		t.Errorf("keys after the refused names: %q, want crawl a's only, %q", all, keys)
	}
}

// TestCountsDeleted: the counters of a crawl deleted under its processes
// are not 0 but unknown: Counts and Stats return ErrCrawlDeleted, so that
// the crawler reports what its process did and Todo as not known.
func TestCountsDeleted(t *testing.T) {
	s := redistest.Start(t)
	c := client(t, s)
	ctx := t.Context()
	for _, shards := range []int{1, 8} {
		name := fmt.Sprintf("counts-deleted-%d", shards)
		f := open(t, s, &redisfrontier.Options{Name: name, Shards: shards})
		if err := f.Start(ctx, crawl.Policy{HostWorkers: 1}); err != nil {
			t.Fatal(err)
		}
		if _, err := f.Push(ctx, siteURL(0), siteURL(1)); err != nil {
			t.Fatal(err)
		}
		if got, err := f.Counts(ctx); err != nil || got.Queued != 2 {
			t.Fatalf("%d shards: Counts before the Reset: %+v, %v", shards, got, err)
		}
		if _, err := redisfrontier.Reset(ctx, c, name, true); err != nil {
			t.Fatal(err)
		}
		if got, err := f.Counts(ctx); !errors.Is(err, redisfrontier.ErrCrawlDeleted) {
			t.Errorf("%d shards: Counts after the Reset: %+v, %v; want ErrCrawlDeleted", shards, got, err)
		}
		if got, err := f.Stats(ctx); !errors.Is(err, redisfrontier.ErrCrawlDeleted) {
			t.Errorf("%d shards: Stats after the Reset: %+v, %v; want ErrCrawlDeleted", shards, got, err)
		}
	}
}

// TestResetProcessOn: a process on a crawl that holds no lease (its
// workers waiting out a host's delay) is a Holder of Inspect's, the crawl
// is not reset without force while it is on, and it is off once it has
// closed, or once its term has passed since it last said so (killed).
func TestResetProcessOn(t *testing.T) {
	s := redistest.Start(t)
	c := client(t, s)
	for _, shards := range []int{1, 8} {
		name := fmt.Sprintf("on%d", shards)
		p := crawl.Policy{HostWorkers: 1, LeaseTerm: 300 * time.Millisecond}
		fc := client(t, s)
		f := redisfrontier.New(fc, &redisfrontier.Options{Name: name, Shards: shards, Owner: "waiter"})
		t.Cleanup(func() { f.Close() })
		if err := f.Start(t.Context(), p); err != nil {
			t.Fatal(err)
		}
		if _, err := f.Push(t.Context(), siteURL(0)); err != nil {
			t.Fatal(err)
		}
		// Longer than its term: it says it is on every third of it.
		time.Sleep(500 * time.Millisecond)
		st, err := redisfrontier.Inspect(t.Context(), c, name)
		if err != nil {
			t.Fatal(err)
		}
		if len(st.Holders) != 1 || st.Holders[0].Owner != "waiter" || st.Holders[0].Leases != 0 || st.Leased != 0 {
			t.Fatalf("%d shards: Inspect of a crawl a process is on, holding no lease: %+v; want it a Holder of no lease", shards, st)
		}
		if _, err := redisfrontier.Reset(t.Context(), c, name, false); !errors.Is(err, redisfrontier.ErrLeased) || !strings.Contains(err.Error(), "1 process(es) on it") {
			t.Fatalf("%d shards: Reset of a crawl a process is on: %v; want ErrLeased, saying a process is on it", shards, err)
		}
		if shards == 1 {
			f.Close()
		} else {
			fc.Close() // killed: its presence ends with its term
			time.Sleep(400 * time.Millisecond)
		}
		st, err = redisfrontier.Inspect(t.Context(), c, name)
		if err != nil || len(st.Holders) != 0 {
			t.Fatalf("%d shards: Inspect once the process is gone: %+v, %v; want no Holder", shards, st, err)
		}
		if n, err := redisfrontier.Reset(t.Context(), c, name, false); err != nil || n == 0 {
			t.Errorf("%d shards: Reset once the process is gone: %d, %v; want the keys deleted", shards, n, err)
		}
	}
}

// TestPresenceKeepsExpiry: a process that says it is on a crawl never
// takes the expiry off the set of processes (a sweep setting the crawl's
// keys to expire sets the meta hash's last: a PERSIST between left the set
// kept for good, a killed process's member in it).
func TestPresenceKeepsExpiry(t *testing.T) {
	s := redistest.Start(t)
	c := client(t, s)
	p := crawl.Policy{HostWorkers: 1, LeaseTerm: time.Minute}
	f := open(t, s, &redisfrontier.Options{Name: "pres"})
	if err := f.Start(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	live := "crawl:{pres}:live"
	if err := c.PExpire(t.Context(), live, time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
	if err := f.Start(t.Context(), p); err != nil { // says it is on the crawl again
		t.Fatal(err)
	}
	if d := c.PTTL(t.Context(), live).Val(); d <= 0 {
		t.Errorf("TTL of %s after a process said it is on the crawl, the meta hash not expiring yet: %v, want the hour set before", live, d)
	}
}

// The sweep of a crawl's keys at its end costs what the crawl has, not
// what the database holds: a redis-server holding the keys of many other
// crawls (kept for their TTL) and other data made a SCAN of every key at
// each crawl's end (300,000 keys: half a second of the server's CPU, and
// of the command's exit, for a crawl of 10,000 URLs). A crawl of one
// shard names its keys itself (its hosts and owners in sets of its own),
// and every one of them is set to expire, or kept when the crawl has work
// again: those of hosts with retries, new Requests held back by the page
// budget, a host paused before any of its URLs was queued, and each
// process's replies. Inspect (the command's -status) reads the hosts'
// retries so too. The test sends no SCAN through the frontier's client;
// it checks the keys with a SCAN of its own.
func TestSweepReadsOwnKeys(t *testing.T) {
	s := redistest.Start(t)
	c := client(t, s)
	_, err := c.Pipelined(t.Context(), func(p redis.Pipeliner) error {
		for i := range 20000 {
			p.Set(t.Context(), fmt.Sprintf("other:%d", i), "x", 0)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	counted := client(t, s)
	var scans atomic.Int64
	counted.AddHook(scanCounter{&scans})
	const ttl = time.Hour
	f := redisfrontier.New(counted, &redisfrontier.Options{Name: "own", TTL: ttl})
	t.Cleanup(func() { f.Close() })
	p := crawl.Policy{HostWorkers: 4, LeaseTerm: time.Minute, MaxPages: 12}
	if err := f.Start(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	// A second process, so that two owners have replies.
	g := redisfrontier.New(counted, &redisfrontier.Options{Name: "own", TTL: ttl})
	t.Cleanup(func() { g.Close() })
	if err := g.Start(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	if err := f.Pause(t.Context(), "https://paused.example", time.Now().Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	var roots []crawl.Request
	for i := range 20 {
		roots = append(roots, crawl.Request{URL: fmt.Sprintf("https://h%d.example/%d", i%10, i)})
	}
	if _, err := f.Push(t.Context(), roots...); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	retried := false
	for taken := 0; taken < 12; {
		l, err := g.Take(ctx)
		if err != nil {
			t.Fatalf("Take %d: %v", taken, err)
		}
		if !retried {
			// Put back, then taken again: its host has had retries.
			retried = true
			if err := g.Retry(ctx, l, time.Now().Add(50*time.Millisecond)); err != nil {
				t.Fatal(err)
			}
			// -status reads the retries of the crawl's hosts alone too.
			st, err := redisfrontier.Inspect(ctx, counted, "own")
			if err != nil || st.Retrying != 1 {
				t.Errorf("Inspect with a retry waiting: Retrying %v, %v; want 1, nil", st, err)
			}
			continue
		}
		taken++
		link := crawl.Request{URL: fmt.Sprintf("https://n%d.example/", taken)}
		if _, err := g.Ack(ctx, l, crawl.Outcome{Result: &crawl.Result{URL: l.URL, Status: 200}, Links: []crawl.Request{link}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Join(ctx); err != nil {
		t.Fatal(err)
	}
	if n := scans.Load(); n != 0 {
		t.Errorf("SCANs of the database at the crawl's end: %d, want 0", n)
	}
	keys := crawlKeys(t, c, "own")
	var hosts, ops, queues int
	for _, k := range keys {
		switch {
		case strings.Contains(k, ":h:"):
			hosts++
		case strings.Contains(k, ":ops:"):
			ops++
		case strings.Contains(k, ":q:"):
			queues++
		}
		d, err := c.PTTL(t.Context(), k).Result()
		if err != nil {
			t.Fatal(err)
		}
		if d <= ttl-time.Minute || d > ttl {
			t.Errorf("TTL of %s after the crawl stopped: %v, want in (%v, %v]", k, d, ttl-time.Minute, ttl)
		}
	}
	if hosts < 11 || ops != 2 || queues == 0 {
		t.Errorf("keys of the crawl stopped: %d host hashes, %d owners' replies, %d queues held back; want at least 11, 2, 1 (%q)", hosts, ops, queues, keys)
	}

	// More budget: the crawl has work again, and every key is kept.
	p.MaxPages = 0
	h := redisfrontier.New(counted, &redisfrontier.Options{Name: "own", TTL: ttl})
	t.Cleanup(func() { h.Close() })
	if err := h.Start(ctx, p); err != nil {
		t.Fatal(err)
	}
	for _, k := range crawlKeys(t, c, "own") {
		if d, _ := c.PTTL(t.Context(), k).Result(); d != -1 && !strings.Contains(k, ":ops:") {
			t.Errorf("TTL of %s once the crawl has work again: %v, want none (-1)", k, d)
		}
	}
	if n := scans.Load(); n != 0 {
		t.Errorf("SCANs of the database by the crawl's revival: %d, want 0", n)
	}
}

// scanCounter is a client hook that counts the SCANs sent through it.
type scanCounter struct{ n *atomic.Int64 }

func (scanCounter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h scanCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if cmd.Name() == "scan" {
			h.n.Add(1)
		}
		return next(ctx, cmd)
	}
}

func (h scanCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, cmd := range cmds {
			if cmd.Name() == "scan" {
				h.n.Add(1)
			}
		}
		return next(ctx, cmds)
	}
}
