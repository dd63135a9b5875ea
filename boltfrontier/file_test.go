package boltfrontier

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/asyncrawl/crawl"
	bolt "go.etcd.io/bbolt"
)

// takeNow takes a lease that may be taken at once, or nil.
func takeNow(t *testing.T, f *Frontier) *crawl.Lease {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	l, err := f.Take(ctx)
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("take: %v", err)
	}
	return l
}

func mustTake(t *testing.T, f *Frontier, url string) *crawl.Lease {
	t.Helper()
	l := takeNow(t, f)
	if l == nil || l.URL != url {
		t.Fatalf("take: got %+v, want %s", l, url)
	}
	return l
}

func reqs(urls ...string) []crawl.Request {
	var rs []crawl.Request
	for _, u := range urls {
		rs = append(rs, crawl.Request{URL: u, Redirects: 5})
	}
	return rs
}

// TestReopen checks that Close and Open keep the seen set, the queue in
// order, leases (queued again), retries with their time and tries, host
// rules, counters and Results, and that a new Start may change the
// politeness.
func TestReopen(t *testing.T) {
	ctx := context.Background()
	f, path := open(t, &Options{NoSync: true})
	policy := crawl.Policy{HostWorkers: 4, Robots: true, Roots: []string{"http://a.test/1"}, Scope: "s"}
	if err := f.Start(ctx, policy); err != nil {
		t.Fatal(err)
	}
	if n, err := f.Push(ctx, reqs("http://a.test/1", "http://a.test/2", "http://a.test/3", "http://a.test/1")...); n != 3 || err != nil {
		t.Fatalf("push: got %d, %v; want 3 new", n, err)
	}
	rules := &crawl.HostRules{Robots: []byte("User-agent: *\nDisallow: /x\n"), Delay: 0}
	l := mustTake(t, f, "http://a.test/robots.txt")
	if _, err := f.Ack(ctx, l, crawl.Outcome{Rules: rules, Links: reqs("http://b.test/1")}); err != nil {
		t.Fatal(err)
	}
	out := map[string]*crawl.Lease{}
	for range 4 {
		if l := takeNow(t, f); l != nil {
			out[l.URL] = l
		}
	}
	l1, l2, l3, lb := out["http://a.test/1"], out["http://a.test/2"], out["http://a.test/3"], out["http://b.test/robots.txt"]
	if len(out) != 4 || l1 == nil || l2 == nil || l3 == nil || lb == nil {
		t.Fatalf("took %v, want a/1, a/2, a/3, b/robots.txt", out)
	}
	if !bytes.Equal(l1.Rules.Robots, rules.Robots) {
		t.Errorf("lease rules %q, want %q", l1.Rules.Robots, rules.Robots)
	}
	res := &crawl.Result{URL: l1.URL, Status: 200, Size: 42, Err: fmt.Errorf("x: %w", crawl.ErrBodyTooLarge)}
	if n, err := f.Ack(ctx, l1, crawl.Outcome{Result: res, Links: reqs("http://a.test/4", "http://a.test/2", "http://c.test/1")}); n != 2 || err != nil {
		t.Fatalf("ack: got %d, %v; want 2 new", n, err)
	}
	at := time.Now().Add(300 * time.Millisecond).Round(0)
	l2.Tries = 2
	l2.First = time.Unix(1700000000, 5)
	if err := f.Retry(ctx, l2, at); err != nil {
		t.Fatal(err)
	}
	lb.Tries = 1
	if err := f.Retry(ctx, lb, time.Time{}); err != nil {
		t.Fatal(err)
	}
	_ = l3 // leased when the file is closed
	want := crawl.Counts{Queued: 4, Leased: 1, Done: 1, Pages: 3}
	if c, _ := f.Counts(ctx); c != want {
		t.Errorf("counts before close %+v, want %+v", c, want)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}

	f, err := Open(path, &Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// l3 is queued again and no longer counted in pages: it is taken
	// anew. a/2 was retried: counted.
	want = crawl.Counts{Queued: 5, Done: 1, Pages: 2}
	if c, _ := f.Counts(ctx); c != want {
		t.Errorf("counts after reopen %+v, want %+v", c, want)
	}
	policy.HostWorkers = 1
	policy.HostDelay = time.Millisecond
	if err := f.Start(ctx, policy); err != nil {
		t.Fatal(err)
	}
	if n, _ := f.Push(ctx, reqs("http://a.test/1", "http://a.test/4", "http://c.test/1", "http://a.test/5")...); n != 1 {
		t.Errorf("push of seen URLs and a/5: got %d new, want 1", n)
	}
	var got []string
	seen := map[string]*crawl.Lease{}
	deadline := time.Now().Add(5 * time.Second)
	for len(got) < 9 && time.Now().Before(deadline) {
		l := takeNow(t, f)
		if l == nil {
			continue
		}
		got = append(got, l.URL)
		seen[l.URL] = l
		switch {
		case l.URL == "http://a.test/robots.txt":
			// Asked again in this Run: its rules are the last Run's.
			f.Ack(ctx, l, crawl.Outcome{Rules: rules})
		case l.Kind == crawl.RobotsRequest:
			f.Ack(ctx, l, crawl.Outcome{Rules: &crawl.HostRules{}})
		default:
			f.Ack(ctx, l, crawl.Outcome{Result: &crawl.Result{URL: l.URL}})
		}
	}
	// a's robots.txt again (a new Run), its URLs in order of admission,
	// then the retry at its time; b and c each robots.txt first (b's with
	// its tries), then their URL.
	var a []string
	for _, u := range got {
		if strings.HasPrefix(u, "http://a.test/") {
			a = append(a, u)
		}
	}
	if strings.Join(a, " ") != "http://a.test/robots.txt http://a.test/3 http://a.test/4 http://a.test/5 http://a.test/2" {
		t.Errorf("a's URLs taken in order %q, want robots.txt, 3 4 5 then the retry 2", a)
	}
	if l := seen["http://a.test/2"]; l == nil || l.Tries != 2 || !l.First.Equal(time.Unix(1700000000, 5)) || l.Redirects != 5 {
		t.Errorf("retried lease %+v, want Tries 2, First kept, Redirects 5", l)
	}
	if l := seen["http://a.test/3"]; l == nil || l.Rules == nil || !bytes.Equal(l.Rules.Robots, rules.Robots) {
		t.Errorf("a/3 lease after reopen without a's rules: %+v", l)
	}
	if l := seen["http://b.test/robots.txt"]; l == nil || l.Tries != 1 {
		t.Errorf("b's robots.txt lease %+v, want Tries 1", l)
	}
	if len(got) != 9 {
		t.Errorf("taken %q, want 9 (a robots.txt 3 4 5 2, b and c each robots.txt then 1)", got)
	}
	var results []crawl.Result
	if err := f.Results(ctx, func(r crawl.Result) bool { results = append(results, r); return true }); err != nil {
		t.Fatal(err)
	}
	if len(results) == 0 || results[0].URL != "http://a.test/1" || results[0].NumNewURLs != 2 || results[0].Size != 42 || !errors.Is(results[0].Err, crawl.ErrBodyTooLarge) {
		t.Errorf("first Result %+v, want a/1 with NumNewURLs 2, Size 42, ErrBodyTooLarge", results)
	}
}

// fileMaker makes a file that Open must refuse.
type fileMaker func(t *testing.T, path string)

func writeBytes(b []byte) fileMaker {
	return func(t *testing.T, path string) {
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// stateFile makes a state file holding n URLs.
func stateFile(t *testing.T, path string, n int) {
	t.Helper()
	f, err := Open(path, &Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	var rs []crawl.Request
	for i := range n {
		rs = append(rs, crawl.Request{URL: fmt.Sprintf("http://h%d.test/%d", i%50, i)})
	}
	if _, err := f.Push(context.Background(), rs...); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestOpenRefuses checks that Open refuses a file that is not a usable
// state file with an error naming it and wrapping ErrNotState, and leaves
// it byte for byte as it was.
func TestOpenRefuses(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	garbage := make([]byte, 64<<10)
	for i := range garbage {
		garbage[i] = byte(rng.Uint32())
	}
	cases := []struct {
		name string
		make fileMaker
	}{
		{"empty", writeBytes(nil)},
		{"text", writeBytes([]byte("hello, world\n"))},
		{"garbage", writeBytes(garbage)},
		{"foreign bbolt", func(t *testing.T, path string) {
			db, err := bolt.Open(path, 0o600, nil)
			if err != nil {
				t.Fatal(err)
			}
			db.Update(func(tx *bolt.Tx) error {
				b, _ := tx.CreateBucket([]byte("other"))
				return b.Put([]byte("k"), []byte("v"))
			})
			db.Close()
		}},
		{"other version", func(t *testing.T, path string) {
			stateFile(t, path, 10)
			db, err := bolt.Open(path, 0o600, nil)
			if err != nil {
				t.Fatal(err)
			}
			db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketMeta).Put(metaVersion, u64(formatVersion+1)) })
			db.Close()
		}},
		{"truncated", func(t *testing.T, path string) {
			stateFile(t, path, 3000)
			if err := os.Truncate(path, 5*4096); err != nil {
				t.Fatal(err)
			}
		}},
		{"truncated below two pages", func(t *testing.T, path string) {
			stateFile(t, path, 10)
			if err := os.Truncate(path, 5000); err != nil {
				t.Fatal(err)
			}
		}},
		{"meta pages overwritten", func(t *testing.T, path string) {
			stateFile(t, path, 100)
			b, _ := os.ReadFile(path)
			copy(b, garbage[:2*4096])
			os.WriteFile(path, b, 0o600)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "state.db")
			c.make(t, path)
			before, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			f, err := Open(path, &Options{LockTimeout: 100 * time.Millisecond})
			if err == nil {
				f.Close()
				t.Fatalf("Open(%s file) succeeded, want an error", c.name)
			}
			if !errors.Is(err, ErrNotState) || !strings.Contains(err.Error(), path) {
				t.Errorf("Open(%s file): got %v, want ErrNotState naming %s", c.name, err, path)
			}
			after, _ := os.ReadFile(path)
			if !bytes.Equal(before, after) {
				t.Errorf("Open(%s file) changed the file: %d bytes before, %d after", c.name, len(before), len(after))
			}
			matches, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "*"))
			if len(matches) != 1 {
				t.Errorf("files beside it: %q, want only the file", matches)
			}
		})
	}
}

// TestOpenLocked checks that a file open elsewhere is refused with
// ErrLocked after LockTimeout, not waited for, and is opened once free.
func TestOpenLocked(t *testing.T) {
	f, path := open(t, nil)
	done := make(chan error, 1)
	go func() {
		g, err := Open(path, &Options{LockTimeout: 200 * time.Millisecond})
		if err == nil {
			g.Close()
		}
		done <- err
	}()
	start := time.Now()
	select {
	case err := <-done:
		if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "locked for more than 200ms") {
			t.Errorf("second Open: got %v, want ErrLocked naming %s, after 200ms", err, path)
		}
		if d := time.Since(start); d > 900*time.Millisecond {
			t.Errorf("second Open refused after %v, want its LockTimeout, 200ms", d)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("second Open of a locked file hangs")
	}
	f.Close()
	g, err := Open(path, nil)
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	g.Close()
}

// TestStartOtherCrawl checks that Start under other roots or scope than
// the file's crawl fails naming the file and what differs, and leaves the
// file as it was.
func TestStartOtherCrawl(t *testing.T) {
	ctx := context.Background()
	f, path := open(t, nil)
	p := crawl.Policy{HostWorkers: 1, Roots: []string{"http://a.test/"}, Scope: "depth=1"}
	if err := f.Start(ctx, p); err != nil {
		t.Fatal(err)
	}
	f.Push(ctx, reqs("http://a.test/")...)
	f.Close()
	before, _ := os.ReadFile(path)
	for _, c := range []struct {
		name string
		p    crawl.Policy
		want string
	}{
		{"roots", crawl.Policy{HostWorkers: 1, Roots: []string{"http://b.test/"}, Scope: "depth=1"}, "roots"},
		{"more roots", crawl.Policy{HostWorkers: 1, Roots: []string{"http://a.test/", "http://b.test/"}, Scope: "depth=1"}, "roots"},
		{"scope", crawl.Policy{HostWorkers: 1, Roots: []string{"http://a.test/"}, Scope: "depth=2"}, "scope"},
	} {
		f, err := Open(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		err = f.Start(ctx, c.p)
		if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Start with other %s: got %v, want an error naming %s and %s", c.name, err, path, c.want)
		}
		f.Close()
		if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
			t.Errorf("Start with other %s changed the file", c.name)
		}
	}
	f, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p.HostWorkers, p.MaxPages, p.HostDelay = 3, 10, time.Second
	if err := f.Start(ctx, p); err != nil {
		t.Errorf("Start with the same roots and scope, other politeness: %v", err)
	}
}

// TestResultsStop checks that Results stops when yield returns false and
// when ctx is done, and that yield may call the Frontier.
func TestResultsStop(t *testing.T) {
	ctx := context.Background()
	f, _ := open(t, &Options{NoSync: true})
	defer f.Close()
	f.Start(ctx, crawl.Policy{HostWorkers: 1000})
	var rs []crawl.Request
	for i := range 600 {
		rs = append(rs, crawl.Request{URL: fmt.Sprintf("http://a.test/%d", i)})
	}
	f.Push(ctx, rs...)
	for range 600 {
		l := takeNow(t, f)
		f.Ack(ctx, l, crawl.Outcome{Result: &crawl.Result{URL: l.URL}})
	}
	n := 0
	f.Results(ctx, func(crawl.Result) bool { n++; f.Counts(ctx); return n < 300 })
	if n != 300 {
		t.Errorf("yield called %d times after it returned false at 300", n)
	}
	n = 0
	f.Results(ctx, func(crawl.Result) bool { n++; return true })
	if n != 600 {
		t.Errorf("%d Results, want 600", n)
	}
	cctx, cancel := context.WithCancel(ctx)
	n = 0
	err := f.Results(cctx, func(crawl.Result) bool { n++; cancel(); return true })
	if !errors.Is(err, context.Canceled) || n >= 600 {
		t.Errorf("Results with ctx cancelled: %d yielded, err %v; want Canceled early", n, err)
	}
}

// TestStartNoRoots checks that a crawl started with no roots is recorded
// as such: a later Start with roots is refused.
func TestStartNoRoots(t *testing.T) {
	ctx := context.Background()
	f, path := open(t, nil)
	if err := f.Start(ctx, crawl.Policy{HostWorkers: 1}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	f, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Start(ctx, crawl.Policy{HostWorkers: 1, Roots: []string{"http://a.test/"}}); err == nil {
		t.Errorf("Start with roots of a crawl started without: got nil, want an error")
	}
}

// A queue record that cannot be read (one whose checksum holds but which
// does not decode: Open refuses one whose checksum fails) stops the
// Frontier with an error naming it: Take returns it at once, as every
// later call does, rather than ask for the host again and again with the
// Frontier's lock held (which hung Take, Ack and Extend for good).
func TestDamagedQueueRecord(t *testing.T) {
	ctx := context.Background()
	f, path := open(t, &Options{NoSync: true})
	policy := crawl.Policy{HostWorkers: 4, Roots: []string{"http://a.test/1"}}
	if err := f.Start(ctx, policy); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Push(ctx, reqs("http://a.test/1", "http://a.test/2", "http://a.test/3")...); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketQueue).Cursor()
		k, _ := c.First()
		return tx.Bucket(bucketQueue).Put(bytes.Clone(k), seal(k, []byte{0xff, 0x01}))
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	f, err = Open(path, &Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Start(ctx, policy); err != nil {
		t.Fatal(err)
	}
	tctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for i := range 2 {
		l, err := f.Take(tctx)
		if err == nil || errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), path) {
			t.Fatalf("take %d: %+v, %v; want at once an error naming the file", i, l, err)
		}
	}
	if _, err := f.Counts(ctx); err == nil {
		t.Error("Counts after the damaged record: no error")
	}
}

// One byte changed in any record of the file (a URL's digit, a counter, a
// Result), which bbolt's pages do not checksum: Open refuses the file with
// an error naming the record, and leaves it byte for byte as it was.
func TestDamagedRecordRefused(t *testing.T) {
	ctx := context.Background()
	f, path := open(t, &Options{NoSync: true})
	policy := crawl.Policy{HostWorkers: 4, Roots: []string{"http://a.test/1"}}
	if err := f.Start(ctx, policy); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Push(ctx, reqs("http://a.test/1", "http://a.test/2", "http://a.test/3")...); err != nil {
		t.Fatal(err)
	}
	l := mustTake(t, f, "http://a.test/1")
	if _, err := f.Ack(ctx, l, crawl.Outcome{Result: &crawl.Result{URL: l.URL, Status: 200}}); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Every record of every bucket: flip one bit of its value in place.
	type rec struct{ bucket, key []byte }
	var recs []rec
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	db.View(func(tx *bolt.Tx) error {
		for _, b := range allBuckets {
			tx.Bucket(b).ForEach(func(k, v []byte) error {
				if !unsealed(b, k) {
					recs = append(recs, rec{b, bytes.Clone(k)})
				}
				return nil
			})
		}
		return nil
	})
	db.Close()
	if len(recs) < 8 {
		t.Fatalf("%d records, want the file's every kind", len(recs))
	}
	for _, r := range recs {
		if err := os.WriteFile(path, good, 0o600); err != nil {
			t.Fatal(err)
		}
		db, err := bolt.Open(path, 0o600, nil)
		if err != nil {
			t.Fatal(err)
		}
		err = db.Update(func(tx *bolt.Tx) error {
			b := tx.Bucket(r.bucket)
			v := bytes.Clone(b.Get(r.key))
			v[0] ^= 0x04
			return b.Put(r.key, v)
		})
		db.Close()
		if err != nil {
			t.Fatal(err)
		}
		before, _ := os.ReadFile(path)
		f, err := Open(path, &Options{NoSync: true})
		if err == nil {
			f.Close()
			t.Errorf("%s %q damaged: Open accepted the file", r.bucket, r.key)
			continue
		}
		if !errors.Is(err, ErrNotState) || !strings.Contains(err.Error(), "damaged record") || !strings.Contains(err.Error(), string(r.bucket)) {
			t.Errorf("%s %q damaged: Open: %v; want ErrNotState naming the damaged record", r.bucket, r.key, err)
		}
		if after, _ := os.ReadFile(path); !bytes.Equal(after, before) {
			t.Errorf("%s %q damaged: Open changed the file it refused", r.bucket, r.key)
		}
	}
}

// TestCreateRaceLocked: an Open that finds the file made by another
// meanwhile, and locked, waits its LockTimeout and says so (it said
// "locked for more than 0s", having waited a second).
func TestCreateRaceLocked(t *testing.T) {
	f, path := open(t, nil)
	defer f.Close()
	start := time.Now()
	err := create(path, 1500*time.Millisecond)
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "locked for more than 1.5s") {
		t.Errorf("create of a file made and locked meanwhile: %v, want ErrLocked after 1.5s", err)
	}
	if d := time.Since(start); d < 1400*time.Millisecond {
		t.Errorf("create gave up after %v, want its lock timeout, 1.5s", d)
	}
}

// TestCreateRemovesOldTemporaries: the temporary files that creates cut
// short by a crash left beside the path are removed by the next create,
// once a minute old; a newer one (another create under way) is left.
func TestCreateRemovesOldTemporaries(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s[1].state")
	old := filepath.Join(dir, ".s[1].state.new-0123456789ab")
	young := filepath.Join(dir, ".s[1].state.new-ba9876543210")
	other := filepath.Join(dir, ".t.state.new-0123456789ab")
	for _, p := range []string{old, young, other} {
		if err := os.WriteFile(p, []byte("cut short"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	then := time.Now().Add(-2 * time.Minute)
	for _, p := range []string{old, other} {
		if err := os.Chtimes(p, then, then); err != nil {
			t.Fatal(err)
		}
	}
	f, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	for p, want := range map[string]bool{old: false, young: true, other: true} {
		if _, err := os.Stat(p); (err == nil) != want {
			t.Errorf("%s there: %v, want %v", filepath.Base(p), err == nil, want)
		}
	}
}
