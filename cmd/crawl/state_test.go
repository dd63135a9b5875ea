package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/asyncrawl/crawl"
	"github.com/asyncrawl/crawl/boltfrontier"
)

// graphSite serves n pages, /p/0 to /p/(n-1), each linking to a few
// others so that every page is reached from /p/0, and counts the requests
// for each page.
type graphSite struct {
	*httptest.Server
	n     int
	mu    sync.Mutex
	hits  map[string]int
	total atomic.Int64
}

func newGraphSite(t *testing.T, n int, latency time.Duration) *graphSite {
	s := &graphSite{n: n, hits: map[string]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if j, ok := strings.CutPrefix(r.URL.Path, "/r/"); ok {
			http.Redirect(w, r, "/p/"+j, http.StatusMovedPermanently)
			return
		}
		i, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/p/"))
		if err != nil || !strings.HasPrefix(r.URL.Path, "/p/") || i < 0 || i >= n {
			http.NotFound(w, r)
			return
		}
		s.mu.Lock()
		s.hits[r.URL.Path]++
		first := s.hits[r.URL.Path] == 1
		s.mu.Unlock()
		s.total.Add(1)
		time.Sleep(latency)
		if i%97 == 5 && first {
			// Busy the first time: the URL waits to be retried.
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, graphLinks(i, n))
	}))
	t.Cleanup(s.Close)
	return s
}

// graphLinks returns the links of page i of n: three other pages and a
// redirect to a fourth.
func graphLinks(i, n int) string {
	var b strings.Builder
	for _, j := range []int{2*i + 1, 2*i + 2, (i*7 + 3) % n} {
		if j < n {
			fmt.Fprintf(&b, `<a href="/p/%d">%d</a> `, j, j)
		}
	}
	fmt.Fprintf(&b, `<a href="/r/%d">r</a>`, (i+1)%n)
	return b.String()
}

// waitFor waits until the site has answered at least n page requests.
func (s *graphSite) waitFor(t *testing.T, n int64) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for s.total.Load() < n {
		if time.Now().After(deadline) {
			t.Fatalf("the site answered %d requests in 30s, want %d", s.total.Load(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// A crawl kept in a -state file survives SIGKILL at random moments and a
// Ctrl-C: run again, the command goes on where it stopped, and in the end
// every page has exactly one Result, none is lost, and the report covers
// the whole crawl.
func TestStateSurvivesKill(t *testing.T) {
	const pages = 2000
	const workers = 8
	s := newGraphSite(t, pages, time.Millisecond)
	state := filepath.Join(t.TempDir(), "crawl.state")
	args := []string{"-state", state, "-workers", strconv.Itoa(workers), "-format", "jsonl", "-q", s.URL + "/p/0"}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	const kills = 3
	for k := range kills {
		cmd := crawlCmd(t, args...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		s.waitFor(t, s.total.Load()+int64(50+rng.IntN(300)))
		cmd.Process.Kill() // SIGKILL
		cmd.Wait()
		t.Logf("kill %d after %d requests in all", k+1, s.total.Load())
	}

	// Ctrl-C: the URLs in flight go back to Todo, none is a failure.
	cmd := crawlCmd(t, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s.waitFor(t, s.total.Load()+100)
	cmd.Process.Signal(syscall.SIGINT)
	r := wait(t, cmd, &stdout, &stderr, cmd.Wait())
	if r.code != 130 {
		t.Fatalf("after Ctrl-C: exit %d, want 130; stderr %q", r.code, r.stderr)
	}
	_, summary := parseJSONLines(t, r.stdout)
	if summary.Todo == 0 || summary.Fail != 0 || summary.Done+summary.Todo > 2*pages {
		t.Errorf("after Ctrl-C: done %d, todo %d, fail %d (%v); want URLs left in Todo, no failure, at most %d in all",
			summary.Done, summary.Todo, summary.Fail, summary.FailKinds, 2*pages)
	}

	// Run to the end.
	r = runCrawl(t, args...)
	if r.code != 0 {
		t.Fatalf("last run: exit %d, want 0; stderr %q", r.code, r.stderr)
	}
	_, summary = parseJSONLines(t, r.stdout)
	// Every page, and a redirect to each (/r/N for N in 0..pages-1).
	if summary.Done != 2*pages || summary.Todo != 0 || summary.HTML != pages || summary.Redirect != pages || summary.Fail != 0 {
		t.Errorf("last run: done %d, todo %d, html %d, redirect %d, fail %d; want %d, 0, %d, %d, 0 (the whole crawl)",
			summary.Done, summary.Todo, summary.HTML, summary.Redirect, summary.Fail, 2*pages, pages, pages)
	}
	s.mu.Lock()
	refetched := 0
	for i := range pages {
		n := s.hits[fmt.Sprintf("/p/%d", i)]
		if n == 0 {
			t.Errorf("/p/%d was never fetched", i)
		}
		if i%97 == 5 {
			n-- // its retry
		}
		refetched += max(n-1, 0)
	}
	s.mu.Unlock()
	// Each kill may cost the URLs in flight and the acks not yet
	// committed (boltfrontier: at most 3 batches of 256); the Ctrl-C, the
	// URLs in flight.
	if bound := kills*(workers+3*256) + workers; refetched > bound {
		t.Errorf("%d pages fetched again, want at most %d", refetched, bound)
	}
	t.Logf("%d requests for %d pages: %d fetched again after %d kills and a Ctrl-C", s.total.Load(), pages, refetched, kills)

	// Once more: nothing is fetched, and the text report lists every page.
	before := s.total.Load()
	r = runCrawl(t, "-state", state, "-workers", strconv.Itoa(workers), s.URL+"/p/0")
	if r.code != 0 {
		t.Fatalf("run after the end: exit %d; stderr %q", r.code, r.stderr)
	}
	if got := s.total.Load(); got != before {
		t.Errorf("a finished crawl run again sent %d requests, want 0", got-before)
	}
	urls, _, _, todo, done := splitReport(t, r.stdout)
	if len(urls) != 2*pages || done != strconv.Itoa(2*pages) || todo != "0" {
		t.Errorf("report of the finished crawl: %d lines, Done %s, Todo %s; want %d, %d, 0", len(urls), done, todo, 2*pages, 2*pages)
	}
	seen := map[string]bool{}
	for _, l := range urls {
		u := strings.Fields(l)[0]
		if seen[u] {
			t.Errorf("%s has two lines in the report", u)
		}
		seen[u] = true
	}
}

// A state file of another crawl, or not a state file at all, is refused
// with a message naming it, and left as it was.
func TestStateRefused(t *testing.T) {
	s := newGraphSite(t, 3, 0)
	dir := t.TempDir()
	state := filepath.Join(dir, "crawl.state")
	if r := runCrawl(t, "-state", state, "-q", s.URL+"/p/0"); r.code != 0 {
		t.Fatalf("first crawl: exit %d; stderr %q", r.code, r.stderr)
	}
	r := runCrawl(t, "-state", state, "-q", s.URL+"/p/1")
	if r.code != 1 || !strings.Contains(r.stderr, state) {
		t.Errorf("another root on the same state: exit %d, stderr %q; want 1 and a message naming %s", r.code, r.stderr, state)
	}
	// Nothing is written for a crawl refused: not the other crawl's
	// Results (it used to write them first), not to -o's file either.
	for _, args := range [][]string{
		{"-format", "jsonl", "-exclude", "/p/2"},
		{"-format", "jsonl", "-max_depth", "1"},
	} {
		r := runCrawl(t, append([]string{"-state", state, "-q"}, append(args, s.URL+"/p/0")...)...)
		if r.code != 1 || r.stdout != "" {
			t.Errorf("crawl %q on the state of another scope: exit %d, stdout %q; want 1 and nothing written", args, r.code, r.stdout)
		}
	}
	out := filepath.Join(dir, "out.jsonl")
	if err := os.WriteFile(out, []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := runCrawl(t, "-state", state, "-q", "-format", "jsonl", "-o", out, s.URL+"/p/1"); r.code != 1 {
		t.Errorf("another root with -o: exit %d, want 1", r.code)
	}
	if b, _ := os.ReadFile(out); string(b) != "mine\n" {
		t.Errorf("-o %s after a refused crawl holds %q, want it left as it was", out, b)
	}
}

// A reprint of the earlier runs' Results cut short by Ctrl-C is no error
// of -state (the command used to exit 1, "-state: context canceled", not
// 130): Start returns, and the Run that follows ends interrupted. Any
// other error of the reprint is -state's.
func TestStateReprintInterrupted(t *testing.T) {
	f, err := boltfrontier.Open(filepath.Join(t.TempDir(), "s.state"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ctx, cancel := context.WithCancel(context.Background())
	p := crawl.Policy{HostWorkers: 1, Roots: []string{"http://a.example/"}}
	cut := reprinting{f, func(ctx context.Context) error { cancel(); return ctx.Err() }}
	if err := cut.Start(ctx, p); err != nil {
		t.Errorf("Start with its reprint cut by Ctrl-C: %v, want nil", err)
	}
	broken := errors.New("disk gone")
	bad := reprinting{f, func(context.Context) error { return broken }}
	if err := bad.Start(context.Background(), p); !errors.Is(err, broken) || !strings.HasPrefix(err.Error(), "-state: ") {
		t.Errorf("Start with its reprint failing: %v, want -state: and the error", err)
	}
}

// Ctrl-C while the command waits for a -state another process holds (its
// lock waited for up to 2 s) stops it at once, exit 130 as after any
// Ctrl-C, not after the wait with exit 1.
func TestStateLockWaitInterrupted(t *testing.T) {
	state := filepath.Join(t.TempDir(), "s.state")
	held, err := boltfrontier.Open(state, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	s := newGraphSite(t, 10, 0)
	cmd := crawlCmd(t, "-q", "-state", state, s.URL+"/p/0")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	sent := time.Now()
	cmd.Process.Signal(syscall.SIGINT)
	r := wait(t, cmd, &stdout, &stderr, cmd.Wait())
	if took := time.Since(sent); r.code != 130 || took > time.Second {
		t.Errorf("Ctrl-C during the wait for the state's lock: exit %d after %v, stderr %q; want 130 at once", r.code, took.Round(time.Millisecond), r.stderr)
	}
	if n := s.total.Load(); n != 0 {
		t.Errorf("the site got %d requests, want none", n)
	}
}
