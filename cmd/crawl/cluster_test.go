package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/asyncrawl/crawl/redisfrontier/redistest"
)

// The tests of -redis_cluster run processes of the built command on one
// crawl spread over a real Redis Cluster of 3 masters, each with a replica
// (skipped when redis-server is not installed, unless CI is set), on a
// site of many hosts served from one loopback server through -resolve, and
// check at the site what it was sent and in the cluster where the crawl's
// keys are.

// hostsSite serves hosts virtual hosts, h0.example to h(hosts-1).example,
// from one loopback server: the Host header decides which. Each host has
// pages /p/0 to /p/(pages-1); page k links to page k+1 of its own host and
// to two pages of other hosts, so that the links cross the crawl's shards.
// Its robots.txt allows everything. It counts the requests for each URL.
type hostsSite struct {
	*httptest.Server
	hosts, pages int
	latency      time.Duration

	mu    sync.Mutex
	count map[string]int // "http://HOST/PATH" → requests
	total int            // requests for pages
}

func newHostsSite(t *testing.T, hosts, pages int, latency time.Duration) *hostsSite {
	s := &hostsSite{hosts: hosts, pages: pages, latency: latency, count: map[string]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *hostsSite) serve(w http.ResponseWriter, r *http.Request) {
	u := "http://" + r.Host + r.URL.Path
	s.mu.Lock()
	s.count[u]++
	if r.URL.Path != "/robots.txt" {
		s.total++
	}
	s.mu.Unlock()
	select {
	case <-time.After(s.latency):
	case <-r.Context().Done():
		return
	}
	var i, k int
	if r.URL.Path == "/robots.txt" {
		fmt.Fprint(w, "User-agent: *\nDisallow:\n")
		return
	}
	if _, err := fmt.Sscanf(r.Host+" "+r.URL.Path, "h%d.example /p/%d", &i, &k); err != nil || i >= s.hosts || k >= s.pages {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if k+1 < s.pages {
		fmt.Fprintf(w, `<a href="/p/%d">next</a> `, k+1)
	}
	fmt.Fprintf(w, `<a href="http://h%d.example/p/%d">a</a> `, (i*7+k+1)%s.hosts, (k+3)%s.pages)
	fmt.Fprintf(w, `<a href="http://h%d.example/p/%d">b</a>`, (i+31*k+1)%s.hosts, k)
}

// roots returns each host's first page, the crawl's roots.
func (s *hostsSite) roots() []string {
	var roots []string
	for i := range s.hosts {
		roots = append(roots, fmt.Sprintf("http://h%d.example/p/0", i))
	}
	return roots
}

// urls returns every page's URL.
func (s *hostsSite) urls() []string {
	var urls []string
	for i := range s.hosts {
		for k := range s.pages {
			urls = append(urls, fmt.Sprintf("http://h%d.example/p/%d", i, k))
		}
	}
	return urls
}

// resolve returns the -resolve flag that sends every host to the server.
func (s *hostsSite) resolve() string { return "*.example:80:" + s.Listener.Addr().String() }

// pagesFetched returns how many distinct pages the site has been sent a
// request for.
func (s *hostsSite) pagesFetched() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for u := range s.count {
		if !strings.HasSuffix(u, "/robots.txt") {
			n++
		}
	}
	return n
}

// waitRequests waits until the site has been sent n requests for pages.
func (s *hostsSite) waitRequests(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		s.mu.Lock()
		got := s.total
		s.mu.Unlock()
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the site was sent %d requests for pages in 60s, want %d", got, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// fetchedTwice returns the URLs the site was sent more than one request
// for, with their counts; it fails the test for a page never requested.
func (s *hostsSite) fetchedTwice(t *testing.T) map[string]int {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	twice := map[string]int{}
	for _, u := range s.urls() {
		if s.count[u] == 0 {
			t.Errorf("%s never requested", u)
		}
	}
	for u, n := range s.count {
		if n > 1 {
			twice[u] = n
		}
	}
	return twice
}

// clusterRun is what the processes of a crawl on the cluster left: the
// Results of each URL, over every process's JSON lines, and each
// process's summary.
type clusterRun struct {
	results   map[string]int
	summaries []map[string]any
}

// finish waits for every process of ps to exit, checks that each exited 0
// with JSON lines ending in a summary of the whole crawl (the same in every
// process, but for the time each took), and returns what they wrote.
func finish(t *testing.T, ps []*proc) clusterRun {
	t.Helper()
	run := clusterRun{results: map[string]int{}}
	for _, p := range ps {
		select {
		case <-p.done:
		case <-time.After(120 * time.Second):
			t.Fatalf("%s still running after 120s; stderr %q", p.name, p.stderr.String())
		}
		if p.r.code != 0 {
			t.Errorf("%s: exit %d, want 0; stderr %q", p.name, p.r.code, p.r.stderr)
			continue
		}
		var summary map[string]any
		for l := range strings.Lines(p.r.stdout) {
			var rec map[string]any
			if err := json.Unmarshal([]byte(l), &rec); err != nil {
				t.Fatalf("%s: line %q: %v", p.name, l, err)
			}
			switch rec["type"] {
			case "result":
				run.results[rec["url"].(string)]++
			case "summary":
				delete(rec, "elapsed_ms")
				summary = rec
			}
		}
		if summary == nil {
			t.Errorf("%s: no summary line; stdout ends %q", p.name, p.r.stdout[max(0, len(p.r.stdout)-200):])
			continue
		}
		if len(run.summaries) > 0 && !maps.EqualFunc(summary, run.summaries[0], func(a, b any) bool { return fmt.Sprint(a) == fmt.Sprint(b) }) {
			t.Errorf("%s: summary %v, want the whole crawl's, as the first process's: %v", p.name, summary, run.summaries[0])
		}
		run.summaries = append(run.summaries, summary)
	}
	return run
}

// checkResults checks that every page of s has at least one Result and no
// other URL has any, and returns the pages with more than one.
func (run clusterRun) checkResults(t *testing.T, s *hostsSite) map[string]int {
	t.Helper()
	want := s.urls()
	for _, u := range want {
		if run.results[u] == 0 {
			t.Errorf("%s: no Result in the processes' JSON lines", u)
		}
	}
	more := map[string]int{}
	for u, n := range run.results {
		if !slices.Contains(want, u) {
			t.Errorf("%s: %d Results, for a URL not of the site", u, n)
		}
		if n > 1 {
			more[u] = n
		}
	}
	if len(run.summaries) > 0 {
		sum := run.summaries[0]
		if done, todo := fmt.Sprint(sum["done"]), fmt.Sprint(sum["todo"]); done != strconv.Itoa(len(want)) || todo != "0" {
			t.Errorf("summary done %s, todo %s; want %d and 0", done, todo, len(want))
		}
	}
	return more
}

// clusterArgs returns the flags of a crawl of s on cluster c named name.
func clusterArgs(c *redistest.Cluster, s *hostsSite, name string, more ...string) []string {
	args := []string{"-redis_cluster", strings.Join(c.Masters(), ","), "-crawl", name, "-resolve", s.resolve(), "-format", "jsonl", "-workers", "8"}
	return append(append(args, more...), s.roots()...)
}

// checkSpread checks that each master of c holds between 20% and 50% of
// the keys of crawl name.
func checkSpread(t *testing.T, c *redistest.Cluster, name string) {
	t.Helper()
	per := c.KeysPerMaster("crawl:{" + name + "*")
	total := 0
	for _, n := range per {
		total += n
	}
	for m, n := range per {
		if share := float64(n) / float64(max(total, 1)); share < 0.2 || share > 0.5 {
			t.Errorf("master %s holds %d of the crawl's %d keys (%.0f%%), want 20%% to 50%%: %v", m, n, total, 100*share, per)
		}
	}
	t.Logf("keys per master: %v", per)
}

// Three processes on one crawl of 300 hosts spread over a cluster of 3
// masters: each page is fetched once and has one Result over the three
// processes' JSON lines, every process prints the same whole-crawl
// counters, and each master holds 20% to 50% of the crawl's keys.
func TestClusterThreeProcesses(t *testing.T) {
	t.Parallel()
	c := redistest.StartCluster(t, 3, 1)
	s := newHostsSite(t, 300, 10, 0)
	ps := startProcsOn(t, s.pagesFetched, 3, 120*time.Second, clusterArgs(c, s, "three")...)
	run := finish(t, ps)
	if more := run.checkResults(t, s); len(more) > 0 {
		t.Errorf("%d URLs with more than one Result, want none: %v", len(more), more)
	}
	if twice := s.fetchedTwice(t); len(twice) > 0 {
		t.Errorf("%d URLs requested more than once, want none: %v", len(twice), twice)
	}
	for _, p := range ps {
		if !strings.Contains(p.r.stderr, "crawl: crawl three on cluster ") {
			t.Errorf("%s: stderr %q, want the name line", p.name, p.r.stderr)
		}
		if p.pagesAtExit != len(s.urls()) {
			t.Errorf("%s exited when %d pages of %d were requested: before the crawl was done", p.name, p.pagesAtExit, len(s.urls()))
		}
	}
	checkSpread(t, c, "three")
}

// A master of the cluster killed mid-crawl (the one with the crawl's
// control keys), its replica taking over, the node restarted as a
// replica: the processes wait out the failover and finish. With
// -redis_wait_replicas 1 every URL has one Result and is fetched once;
// without, every URL has at least one, and the test logs how many got two:
// what asynchronous replication lost.
func TestClusterFailover(t *testing.T) {
	t.Parallel()
	c := redistest.StartCluster(t, 3, 1)
	for _, tt := range []struct {
		name  string
		flags []string
	}{
		{"waited", []string{"-redis_wait_replicas", "1"}},
		{"async", []string{"-lease", "5s"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newHostsSite(t, 300, 10, 10*time.Millisecond)
			ps := startProcsOn(t, s.pagesFetched, 3, 120*time.Second, clusterArgs(c, s, tt.name, tt.flags...)...)
			s.waitRequests(t, len(s.urls())/3)
			victim := c.MasterOf("crawl:{" + tt.name + "}:meta")
			c.KillMaster(victim)
			promoted := c.WaitFailover(t, victim)
			// Back as a replica of the node that took over, so that
			// its writes can again reach a replica.
			c.Node(victim).Restart()
			c.WaitStable(t)
			s.mu.Lock()
			t.Logf("%s killed after %d requests; %s took over", victim, s.total, promoted)
			s.mu.Unlock()
			run := finish(t, ps)
			more := run.checkResults(t, s)
			twice := s.fetchedTwice(t)
			if tt.name == "async" {
				// Redis acknowledged writes the replica did not
				// have yet: Acks it lost put their URLs back, to
				// be fetched and reported again.
				t.Logf("without -redis_wait_replicas: %d URLs with two Results or more, %d requested twice or more: %v", len(more), len(twice), more)
				return
			}
			if len(more) > 0 {
				t.Errorf("%d URLs with more than one Result, want none: %v", len(more), more)
			}
			// Each page once: every lease, Ack and link admitted that a
			// process was told of was on the replica before (WAIT), so
			// the new master hands out no URL twice, and the leases the
			// processes held on the killed master are still theirs.
			if len(twice) > 0 {
				t.Errorf("%d URLs requested more than once, want none: %v", len(twice), twice)
			}
			// The outage logged once (or a few times, not once a
			// call), and its end: the replica answers for the master.
			down := 0
			for _, p := range ps {
				n := strings.Count(p.r.stderr, "Redis does not answer: waiting for it")
				down += n
				if again := strings.Count(p.r.stderr, "Redis answers again"); again != n || n > 2 {
					t.Errorf("%s: the cluster's outage logged %d times, its end %d times; want once or twice, each ended; stderr %q", p.name, n, again, p.r.stderr)
				}
			}
			if down == 0 {
				t.Errorf("no process logged that the cluster did not answer when %s was killed; stderr of the first %q", victim, ps[0].r.stderr)
			}
		})
	}
}

// Ctrl-C while a master of the cluster hangs (stopped: it takes
// connections and never answers; the one with the crawl's control keys):
// as with one server (TestRedisInterruptWhileDown), the process waits 5 s
// at most for it, says that its URLs are left to expire if a worker's
// lease was on that master (the Acks to the others are answered), and
// exits 130 at once after: within 5 s of the signal and a little more. A
// cluster's client ends a call cut by its ctx at its read timeout,
// seconds late, after which a Take gave its leases back with 5 s more of
// grace: the exit came 10 s after the signal.
func TestClusterInterruptWhileFrozen(t *testing.T) {
	t.Parallel()
	c := redistest.StartCluster(t, 3, 1)
	s := newHostsSite(t, 300, 10, 20*time.Millisecond)
	ps := startProcsOn(t, s.pagesFetched, 1, 120*time.Second, clusterArgs(c, s, "frozen", "-workers", "8")...)
	s.waitRequests(t, 100)
	victim := c.Node(c.MasterOf("crawl:{frozen}:meta"))
	victim.Freeze()
	defer victim.Thaw()
	signalled := time.Now()
	if err := ps[0].cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	r := ps[0].wait(t)
	exited := time.Now()
	if r.code != 130 || strings.Contains(r.stderr, "level=ERROR") {
		t.Fatalf("after SIGINT with a master stopped: exit %d, stderr %q; want 130 and no error", r.code, r.stderr)
	}
	// The Run's end waits 5 s at most for the frontier; then Close
	// gives a master that does not answer a quarter of a second.
	const slack = 2500 * time.Millisecond
	if d := exited.Sub(signalled); d > 5*time.Second+slack {
		t.Errorf("after SIGINT with a master stopped: exited %v after the signal, want at most 5s and %v; stderr, each write's time:\n%s\nsignalled %s, exited %s",
			d, slack, ps[0].stderr.dump(), signalled.Format("15:04:05.000"), exited.Format("15:04:05.000"))
	}
	if said, ok := ps[0].stderr.when("left to expire"); ok && exited.Sub(said) > slack {
		t.Errorf("after SIGINT with a master stopped: exited %v after it said the URLs were left to expire, want at once; stderr, each write's time:\n%s\nexited %s", exited.Sub(said), ps[0].stderr.dump(), exited.Format("15:04:05.000"))
	}
}

// The lifecycle of a crawl on a cluster, the seed nodes given one a flag:
// -status counts what the crawl did, in lines and in JSON; -reset deletes
// every key of the crawl on every master; the crawl run again once done
// fetches nothing and says that it was done.
func TestClusterLifecycle(t *testing.T) {
	t.Parallel()
	c := redistest.StartCluster(t, 3, 1)
	masters := c.Masters()
	nodes := []string{"-redis_cluster", masters[0], "-redis_cluster", masters[1] + "," + masters[2]}
	where := "cluster " + strings.Join(masters, ",")
	// crawlDone crawls s as crawl name to its end.
	crawlDone := func(t *testing.T, s *hostsSite, name string) []string {
		t.Helper()
		args := append(append(slices.Clone(nodes), "-crawl", name, "-resolve", s.resolve(), "-q"), s.roots()...)
		r := runCrawl(t, args...)
		if r.code != 0 {
			t.Fatalf("crawl %q: exit %d, stderr %q", args, r.code, r.stderr)
		}
		if want := "crawl: crawl " + name + " on " + where + "\n"; !strings.Contains(r.stderr, want) {
			t.Errorf("stderr %q, want the name line %q", r.stderr, want)
		}
		return args
	}

	t.Run("status-reset", func(t *testing.T) {
		s := newHostsSite(t, 30, 3, 0)
		crawlDone(t, s, "life")
		pages := len(s.urls())
		r := runCrawl(t, append(slices.Clone(nodes), "-crawl", "life", "-status")...)
		if r.code != 0 || !strings.Contains(r.stdout, "state:     done\n") || !strings.Contains(r.stdout, fmt.Sprintf("done:      %d\n", pages)) ||
			!strings.Contains(r.stdout, "crawl:     life on "+where+"\n") {
			t.Errorf("-status: exit %d, stdout %q, stderr %q; want the crawl life on %s done, %d done", r.code, r.stdout, r.stderr, where, pages)
		}
		r = runCrawl(t, append(slices.Clone(nodes), "-crawl", "life", "-status", "-format", "jsonl")...)
		var st statusJSON
		if err := json.Unmarshal([]byte(r.stdout), &st); err != nil || r.code != 0 {
			t.Fatalf("-status -format jsonl: exit %d, stdout %q (%v), stderr %q", r.code, r.stdout, err, r.stderr)
		}
		if st.Crawl != "life" || st.State != "done" || st.Done != pages || st.Pages != pages || st.Queued != 0 || st.Leased != 0 || st.Pending != 0 || len(st.Roots) != s.hosts {
			t.Errorf("-status -format jsonl: %+v, want crawl life done, %d done, %d pages, %d roots, nothing queued, leased or pending", st, pages, pages, s.hosts)
		}

		keys := c.KeysPerMaster("crawl:{life*")
		for m, n := range keys {
			if n == 0 {
				t.Errorf("master %s holds no key of the crawl before -reset, want some: %v", m, keys)
			}
		}
		r = runCrawl(t, append(slices.Clone(nodes), "-crawl", "life", "-reset")...)
		if r.code != 0 || !strings.Contains(r.stderr, "crawl life on "+where+" deleted") {
			t.Errorf("-reset: exit %d, stderr %q; want 0 and the crawl deleted", r.code, r.stderr)
		}
		for m, n := range c.KeysPerMaster("crawl:{life*") {
			if n != 0 {
				t.Errorf("after -reset, master %s holds %d keys of the crawl, want 0 (before: %v)", m, n, keys)
			}
		}
		r = runCrawl(t, append(slices.Clone(nodes), "-crawl", "life", "-status")...)
		if r.code != 1 || !strings.Contains(r.stderr, "no crawl life on "+where) {
			t.Errorf("-status after -reset: exit %d, stderr %q; want 1 and no such crawl", r.code, r.stderr)
		}
	})

	t.Run("rerun", func(t *testing.T) {
		s := newHostsSite(t, 10, 2, 0)
		args := crawlDone(t, s, "again")
		before := s.pagesFetched()
		r := runCrawl(t, args...)
		reset := "crawl -redis_cluster " + strings.Join(masters, ",") + " -crawl again -reset"
		if r.code != 0 || !strings.Contains(r.stderr, "crawl again was already done") || !strings.Contains(r.stderr, reset) {
			t.Errorf("the crawl run again: exit %d, stderr %q; want 0 and that it was already done, with %q", r.code, r.stderr, reset)
		}
		if after := s.pagesFetched(); after != before {
			t.Errorf("the crawl run again requested %d new pages, want none", after-before)
		}
	})
}

// The flags of -redis_cluster are checked before anything starts: with
// -redis, a bad address, with -state, and -redis_wait_replicas without a
// Redis, each with a message naming the flag, and nothing fetched.
func TestClusterFlags(t *testing.T) {
	s := newHostsSite(t, 1, 1, 0)
	root := "http://h0.example/p/0"
	res := []string{"-resolve", s.resolve()}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"-redis", "redis://127.0.0.1:1/0", "-redis_cluster", "127.0.0.1:1", root}, "-redis and -redis_cluster are exclusive"},
		{[]string{"-redis_cluster", "127.0.0.1:1", "-redis", "redis://127.0.0.1:1/0", "-crawl", "x", "-status"}, "-redis and -redis_cluster are exclusive"},
		{[]string{"-redis_cluster", "127.0.0.1", root}, `address "127.0.0.1": want HOST:PORT`},
		{[]string{"-redis_cluster", "127.0.0.1:1,:2", root}, `address ":2": want HOST:PORT`},
		{[]string{"-redis_cluster", "127.0.0.1:99999", root}, `address "127.0.0.1:99999"`},
		{[]string{"-redis_cluster", "127.0.0.1:1", "-state", "x.state", root}, "-redis_cluster and -state are exclusive"},
		{[]string{"-redis_cluster", "127.0.0.1:1", "-demo"}, "-redis_cluster cannot share -demo"},
		{[]string{"-redis_wait_replicas", "1", root}, "-redis_wait_replicas is"},
		{[]string{"-redis_cluster", "127.0.0.1:1", "-redis_wait_replicas", "-1", root}, "-redis_wait_replicas"},
		{[]string{"-redis_cluster", "127.0.0.1:1", "-redis_wait", "100ms", root}, "-redis_cluster 127.0.0.1:1: no node of the cluster answered"},
	} {
		r := runCrawl(t, append(slices.Clone(res), tt.args...)...)
		if r.code != 1 || !strings.Contains(r.stderr, tt.want) {
			t.Errorf("crawl %q: exit %d, stderr %q; want 1 and %q", tt.args, r.code, r.stderr, tt.want)
		}
	}
	if n := s.pagesFetched(); n != 0 {
		t.Errorf("%d pages requested, want none", n)
	}
}

// -redis_cluster on a Redis server not in cluster mode: exit 1 at once,
// saying so, rather than wait for -redis_wait.
func TestClusterNotCluster(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	start := time.Now()
	r := runCrawl(t, "-redis_cluster", rs.Addr(), "-redis_wait", "1h", "http://h0.example/")
	if r.code != 1 || !strings.Contains(r.stderr, "-redis_cluster "+rs.Addr()+": not a Redis Cluster") {
		t.Errorf("-redis_cluster on a server not in cluster mode: exit %d, stderr %q; want 1 and not a Redis Cluster", r.code, r.stderr)
	}
	t.Logf("refused in %v", time.Since(start))
}
