package main

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/asyncrawl/crawl/redisfrontier/redistest"
)

// The tests of -redis run several processes of the built command on one
// crawl, against a real redis-server (skipped when it is not installed,
// unless CI is set), and check at the site what it was sent.

// fetch is one request the shared site answered.
type fetch struct {
	path, agent string
	start, end  time.Time
	abandoned   bool // its client went away before the answer was sent
}

// sharedSite serves pages /p/0 to /p/(n-1), each linking to a few others so
// that all are reached from /p/0, every 50th also to /private/N, which its
// robots.txt disallows. It records every request: who sent it (the
// User-Agent names the process), when it began and ended, whether its
// client went away first, and how many requests for the site were in
// flight at once.
type sharedSite struct {
	*httptest.Server
	n       int
	latency time.Duration

	mu          sync.Mutex
	fetches     []fetch
	byPath      map[string][]int // indexes into fetches
	hostIn      int
	maxHostIn   int
	robots      int
	privateHits int

	// With holdFor set (holdAgents), requests past the first half of the
	// pages wait until holdFor distinct User-Agents have sent one, or
	// 20 s: a process slow to start (a loaded machine) still finds URLs
	// left to share, if the host's worker limit leaves it room.
	holdFor int
	agents  map[string]bool
	allIn   chan struct{}
}

// holdAgents makes the site hold the second half of the crawl until k
// processes have each sent a request (see holdFor).
func (s *sharedSite) holdAgents(k int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.holdFor, s.agents, s.allIn = k, map[string]bool{}, make(chan struct{})
}

func newSharedSite(t *testing.T, n int, latency time.Duration) *sharedSite {
	s := &sharedSite{n: n, latency: latency, byPath: map[string][]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *sharedSite) serve(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	s.mu.Lock()
	i := len(s.fetches)
	s.fetches = append(s.fetches, fetch{path: path, agent: r.UserAgent(), start: time.Now()})
	s.byPath[path] = append(s.byPath[path], i)
	s.hostIn++
	s.maxHostIn = max(s.maxHostIn, s.hostIn)
	switch {
	case path == "/robots.txt":
		s.robots++
	case strings.HasPrefix(path, "/private/"):
		s.privateHits++
	}
	var hold chan struct{}
	if s.holdFor > 0 {
		if !s.agents[r.UserAgent()] {
			s.agents[r.UserAgent()] = true
			if len(s.agents) == s.holdFor {
				close(s.allIn)
			}
		}
		if len(s.agents) < s.holdFor && len(s.fetches) > s.n/2 {
			hold = s.allIn
		}
	}
	s.mu.Unlock()
	if hold != nil {
		select {
		case <-hold:
		case <-time.After(20 * time.Second):
		case <-r.Context().Done():
		}
	}
	abandoned := false
	defer func() {
		s.mu.Lock()
		s.fetches[i].end = time.Now()
		s.fetches[i].abandoned = abandoned
		s.hostIn--
		s.mu.Unlock()
	}()
	select {
	case <-time.After(s.latency):
	case <-r.Context().Done():
		// A process killed, or cutting its fetches short on Ctrl-C
		// or a lease lost: no fetch of the URL's any more.
		abandoned = true
		return
	}
	if path == "/robots.txt" {
		fmt.Fprint(w, "User-agent: *\nDisallow: /private/\n")
		return
	}
	p, ok := strings.CutPrefix(path, "/p/")
	k, err := strconv.Atoi(p)
	if !ok || err != nil || k < 0 || k >= s.n {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	for _, j := range []int{2*k + 1, 2*k + 2, (k*7 + 3) % s.n} {
		if j < s.n {
			fmt.Fprintf(w, `<a href="/p/%d">%d</a> `, j, j)
		}
	}
	if k%50 == 0 {
		fmt.Fprintf(w, `<a href="/private/%d">private</a>`, k)
	}
}

// results is the number of Results the whole crawl has: a page each, and
// a failure (disallowed by robots.txt) for each private link.
func (s *sharedSite) results() int { return s.n + (s.n+49)/50 }

// pagesFetched returns how many distinct pages the site has answered.
func (s *sharedSite) pagesFetched() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for p, f := range s.byPath {
		if strings.HasPrefix(p, "/p/") && len(f) > 0 {
			n++
		}
	}
	return n
}

// sentBy returns how many requests the process named agent has sent.
func (s *sharedSite) sentBy(agent string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, f := range s.fetches {
		if f.agent == agent {
			n++
		}
	}
	return n
}

// waitSent waits until the process named agent (any, if "") has sent at
// least n requests.
func (s *sharedSite) waitSent(t *testing.T, agent string, n int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		s.mu.Lock()
		got := len(s.fetches)
		s.mu.Unlock()
		if agent != "" {
			got = s.sentBy(agent)
		}
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%q sent %d requests in 20s, want %d", agent, got, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// firstToSend waits until one of ps has sent n requests and moves it to
// ps[0], for the test to stop it mid-crawl: which process gets the first
// leases is the scheduler's business, and one may finish its share of a
// small crawl before another has sent n.
func (s *sharedSite) firstToSend(t *testing.T, ps []*proc, n int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		for i, p := range ps {
			if s.sentBy(p.name) >= n {
				ps[0], ps[i] = ps[i], ps[0]
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no process sent %d requests in 20s", n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// refetched returns the pages requested more than once, each with its
// requests in order.
func (s *sharedSite) refetched() map[string][]fetch {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string][]fetch{}
	for p, idx := range s.byPath {
		if len(idx) > 1 {
			for _, i := range idx {
				out[p] = append(out[p], s.fetches[i])
			}
		}
	}
	return out
}

// checkComplete checks that every page was fetched, nothing robots.txt
// disallows was, and no page had two requests in flight at once.
func (s *sharedSite) checkComplete(t *testing.T) {
	t.Helper()
	if got := s.pagesFetched(); got != s.n {
		t.Errorf("%d pages of %d fetched", got, s.n)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.privateHits != 0 {
		t.Errorf("%d requests for /private/ pages, which robots.txt disallows; want 0", s.privateHits)
	}
	// Two fetches of one page at once, neither abandoned by its client:
	// two processes held the page's lease at once.
	for p, idx := range s.byPath {
		for j, a := range idx {
			for _, b := range idx[j+1:] {
				fa, fb := s.fetches[a], s.fetches[b]
				if fa.abandoned || fb.abandoned {
					continue
				}
				if fb.start.Before(fa.end) && fa.start.Before(fb.end) {
					t.Errorf("%s fetched by %s and %s at once: %v and %v", p, fa.agent, fb.agent, fa, fb)
				}
			}
		}
	}
}

// proc is one process of the command on a shared crawl.
type proc struct {
	name        string // its User-Agent
	cmd         *exec.Cmd
	stdout      bytes.Buffer
	stderr      timedBuffer
	done        chan struct{} // closed when it has exited
	r           ran
	pagesAtExit int // the pages the site had answered when it exited
}

// timedBuffer is a process's stderr that knows when each part came.
type timedBuffer struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	ends []int       // the buffer's length after each Write
	at   []time.Time // and when it was
}

func (b *timedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n, err := b.buf.Write(p)
	b.ends = append(b.ends, b.buf.Len())
	b.at = append(b.at, time.Now())
	return n, err
}

func (b *timedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// when returns when s was first written whole, if it was.
func (b *timedBuffer) when(s string) (time.Time, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	i := strings.Index(b.buf.String(), s)
	if i < 0 {
		return time.Time{}, false
	}
	for k, end := range b.ends {
		if end >= i+len(s) {
			return b.at[k], true
		}
	}
	return time.Time{}, false
}

// dump returns each write with its time, for a test's message.
func (b *timedBuffer) dump() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var sb strings.Builder
	s := b.buf.String()
	prev := 0
	for k, end := range b.ends {
		fmt.Fprintf(&sb, "[%s] %q\n", b.at[k].Format("15:04:05.000"), s[prev:end])
		prev = end
	}
	return sb.String()
}

// startProcs starts k processes of the command with args, each with the
// User-Agent "crawltest-I" so that the site knows who sent what.
func startProcs(t *testing.T, s *sharedSite, k int, args ...string) []*proc {
	t.Helper()
	return startProcsOn(t, s.pagesFetched, k, 30*time.Second, args...)
}

// startProcsOn is startProcs on any site: pagesFetched says how many
// pages it has answered, and each process is killed after limit.
func startProcsOn(t *testing.T, pagesFetched func() int, k int, limit time.Duration, args ...string) []*proc {
	t.Helper()
	var ps []*proc
	for i := range k {
		p := &proc{name: fmt.Sprintf("crawltest-%d", i), done: make(chan struct{})}
		p.cmd = crawlCmdFor(t, limit, append([]string{"-user_agent", p.name}, args...)...)
		p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
		if err := p.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() {
			err := p.cmd.Wait()
			p.pagesAtExit = pagesFetched()
			var exit *exec.ExitError
			code := p.cmd.ProcessState.ExitCode()
			if err != nil && !errors.As(err, &exit) {
				code = -1
			}
			p.r = ran{stdout: p.stdout.String(), stderr: p.stderr.String(), code: code}
			close(p.done)
		}()
		ps = append(ps, p)
	}
	t.Cleanup(func() {
		for _, p := range ps {
			p.cmd.Process.Kill()
			<-p.done
		}
	})
	return ps
}

// wait waits for p to exit.
func (p *proc) wait(t *testing.T) ran {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(40 * time.Second):
		t.Fatalf("%s still running after 40s", p.name)
	}
	return p.r
}

// checkFinished checks that every process in ps exited 0, only once every
// page had been fetched, with the report of the whole crawl: the same
// counters, Done the crawl's Results, Todo 0; and that together their URL
// lines list each of the crawl's URLs once.
func checkFinished(t *testing.T, s *sharedSite, ps []*proc) {
	t.Helper()
	var first map[string]string
	lines := map[string][]string{} // URL: the processes that report it
	for _, p := range ps {
		r := p.wait(t)
		if r.code != 0 {
			t.Errorf("%s: exit %d, want 0; stderr %q", p.name, r.code, r.stderr)
			continue
		}
		if p.pagesAtExit != s.n {
			t.Errorf("%s exited when %d pages of %d were fetched: before the crawl was done", p.name, p.pagesAtExit, s.n)
		}
		urls, _, counters, todo, done := splitReport(t, r.stdout)
		if done != strconv.Itoa(s.results()) || todo != "0" {
			t.Errorf("%s: report Done %s, Todo %s; want the whole crawl's, %d and 0", p.name, done, todo, s.results())
		}
		if first == nil {
			first = counters
		} else if !maps.Equal(counters, first) {
			t.Errorf("%s: counters %v, want the same as the first process's, %v", p.name, counters, first)
		}
		for _, l := range urls {
			u := strings.Fields(l)[0]
			lines[u] = append(lines[u], p.name)
		}
	}
	again := s.refetched()
	for u, by := range lines {
		// A page is reported twice only if it was fetched twice:
		// after a rollback of Redis (see TestRedisRestartAndKill).
		if len(by) > 1 && len(again[strings.TrimPrefix(u, s.URL)]) < 2 {
			t.Errorf("%s is reported by %q, and was fetched once", u, by)
		}
	}
	if first != nil && first["html"] != strconv.Itoa(s.n) {
		t.Errorf("counters %v: want %d html", first, s.n)
	}
	s.mu.Lock()
	t.Logf("%d requests; counters %v", len(s.fetches), first)
	s.mu.Unlock()
}

// Three processes on one crawl: each page is fetched once, robots.txt
// once, every process exits 0 only when the crawl is done, and each
// reports the whole crawl.
func TestRedisThreeProcesses(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	s := newSharedSite(t, 300, 2*time.Millisecond)
	s.holdAgents(3)
	// Room at the host for all 12 workers: two processes' requests held
	// must leave the third a lease to take.
	ps := startProcs(t, s, 3, "-redis", rs.URL(), "-workers", "4", "-host_workers", "12", s.URL+"/p/0")
	checkFinished(t, s, ps)
	s.checkComplete(t)
	if re := s.refetched(); len(re) > 0 {
		t.Errorf("%d paths fetched more than once, want none: %v", len(re), slices.Collect(maps.Keys(re)))
	}
	if s.robots != 1 {
		t.Errorf("robots.txt fetched %d times, want once for the whole crawl", s.robots)
	}
	for _, p := range ps {
		if s.sentBy(p.name) == 0 {
			t.Errorf("%s sent no request: the crawl was not shared", p.name)
		}
	}
}

// checkRefetched checks that the pages fetched more than once number at
// most bound, and that each was fetched by the process named by.
func checkRefetched(t *testing.T, s *sharedSite, by string, bound int) map[string][]fetch {
	t.Helper()
	re := s.refetched()
	for p, fs := range re {
		if !slices.ContainsFunc(fs, func(f fetch) bool { return f.agent == by }) {
			t.Errorf("%s fetched %d times, never by %s: %v", p, len(fs), by, fs)
		}
	}
	if len(re) > bound {
		t.Errorf("%d pages fetched more than once, want at most %d (the workers of %s)", len(re), bound, by)
	}
	return re
}

// A process killed with SIGKILL mid-crawl: the others finish the crawl;
// only the pages it held are fetched again, by the others, once its
// leases expired (not before, and within the term and a poll).
func TestRedisKillProcess(t *testing.T) {
	t.Parallel()
	const workers, lease = 4, 2 * time.Second
	rs := redistest.Start(t)
	s := newSharedSite(t, 300, 5*time.Millisecond)
	ps := startProcs(t, s, 3, "-redis", rs.URL(), "-workers", strconv.Itoa(workers), "-lease", lease.String(), s.URL+"/p/0")
	s.firstToSend(t, ps, 30)
	ps[0].cmd.Process.Kill() // SIGKILL
	killed := time.Now()
	<-ps[0].done
	checkFinished(t, s, ps[1:])
	s.checkComplete(t)
	re := checkRefetched(t, s, ps[0].name, workers)
	for p, fs := range re {
		if fs[0].agent != ps[0].name {
			t.Errorf("%s first fetched by %s, not by the process killed", p, fs[0].agent)
		}
		// The lease was renewed at the latest a third of a term before
		// the kill, so it expired no earlier than 2/3 of a term after.
		again := fs[1].start.Sub(killed)
		if again < lease/2 || again > lease+10*time.Second {
			t.Errorf("%s fetched again %v after the kill, want within [%v, %v]", p, again, lease/2, lease+10*time.Second)
		}
	}
	t.Logf("%d pages fetched again: %v", len(re), slices.Collect(maps.Keys(re)))
}

// The check of issue 14 in one test: three processes on one crawl, Redis
// killed with SIGKILL mid-crawl and restarted on its AOF, then one process
// killed with SIGKILL: the processes wait for Redis and go on, the crawl
// completes, and the two left exit 0 with the whole crawl's report.
func TestRedisRestartAndKill(t *testing.T) {
	t.Parallel()
	const workers, lease = 4, 3 * time.Second
	rs := redistest.Start(t)
	s := newSharedSite(t, 400, 5*time.Millisecond)
	ps := startProcs(t, s, 3, "-redis", rs.URL(), "-workers", strconv.Itoa(workers), "-lease", lease.String(), s.URL+"/p/0")
	s.waitSent(t, "", 80)
	rs.Kill()
	down := time.Now()
	time.Sleep(time.Second) // the processes cannot reach Redis: they wait
	for _, p := range ps {
		select {
		case <-p.done:
			t.Fatalf("%s exited while Redis was down: exit %d, stderr %q", p.name, p.r.code, p.r.stderr)
		default:
		}
	}
	rs.Restart()
	s.mu.Lock()
	before := len(s.fetches)
	s.mu.Unlock()
	s.waitSent(t, "", before+80)
	ps[2].cmd.Process.Kill()
	<-ps[2].done
	checkFinished(t, s, ps[:2])
	s.checkComplete(t)

	// Pages fetched again: those the killed process held, and those whose
	// acks Redis lost. A SIGKILL of redis-server loses no write it has
	// made; but with appendfsync everysec it postpones its writes (for up
	// to 2s) while the previous fsync is still under way, as it is on a
	// busy disk, and the acks it answered meanwhile are lost. Redis comes
	// back as it was a moment before (its AOF is a prefix of what it did),
	// and their pages are fetched again.
	const postpone = 2 * time.Second
	lostAcks := 0
	s.mu.Lock()
	for _, f := range s.fetches {
		if !f.end.IsZero() && f.end.Before(down) && f.end.After(down.Add(-postpone-lease/3)) {
			lostAcks++
		}
	}
	s.mu.Unlock()
	re := s.refetched()
	rolledBack := 0
	for p, fs := range re {
		if fs[0].agent != ps[2].name {
			if !fs[0].start.Before(down) {
				t.Errorf("%s fetched %d times: first by %s after Redis was restarted, not by the process killed: %v", p, len(fs), fs[0].agent, fs)
			}
			rolledBack++
		}
	}
	t.Logf("%d pages fetched again because Redis lost their acks, of %d acked in the %v before its kill", rolledBack, lostAcks, postpone+lease/3)
	if bound := workers + lostAcks; len(re) > bound {
		t.Errorf("%d pages fetched more than once, want at most %d: the workers of the process killed and the %d pages acked in the %v before Redis was killed", len(re), bound, lostAcks, postpone+lease/3)
	}
	if log, err := os.ReadFile(filepath.Join(rs.Dir(), "redis.log")); err == nil {
		for _, l := range strings.Split(string(log), "\n") {
			if strings.Contains(l, "fsync") {
				t.Logf("redis.log: %s", l)
			}
		}
	}
	t.Logf("%d pages fetched again: %v", len(re), slices.Collect(maps.Keys(re)))
}

// A process stopped (SIGSTOP) for longer than the lease term, then
// continued: the others took its leases, its late acks are refused (it
// logs the leases lost), no page is fetched by two at once, and every
// process exits 0 with the whole crawl's report.
func TestRedisStoppedProcess(t *testing.T) {
	t.Parallel()
	const workers, lease = 4, time.Second
	rs := redistest.Start(t)
	s := newSharedSite(t, 200, 20*time.Millisecond)
	ps := startProcs(t, s, 2, "-redis", rs.URL(), "-workers", strconv.Itoa(workers), "-lease", lease.String(), s.URL+"/p/0")
	s.firstToSend(t, ps, 20)
	pid := ps[0].cmd.Process.Pid
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * lease)
	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	checkFinished(t, s, ps)
	s.checkComplete(t)
	re := checkRefetched(t, s, ps[0].name, workers)
	if !strings.Contains(ps[0].r.stderr, "lease lost") {
		t.Errorf("the process stopped for %v logged no lease lost; stderr %q", 3*lease, ps[0].r.stderr)
	}
	t.Logf("%d pages fetched again: %v", len(re), slices.Collect(maps.Keys(re)))
}

// -host_workers and -host_delay hold across processes, as the site
// measures them: one request at a time, starts at least half the delay
// apart; robots.txt is fetched once for the crawl.
func TestRedisPoliteness(t *testing.T) {
	t.Parallel()
	const delay = 400 * time.Millisecond
	// The frontier spaces the Takes, on the Redis server's clock; a
	// request reaches the site a Redis round trip and the process's
	// scheduling later. On a loaded machine, the race-enabled command
	// lags by up to tens of milliseconds (25ms seen with 2 cores and
	// 3 busy loops; 49ms at a load of 15; 108ms once, in .ci/run's
	// parallel tests beside two fuzzing processes), which shrinks the gap
	// the site sees by as much. A delay not kept makes gaps of a few ms.
	const slack = 150 * time.Millisecond
	rs := redistest.Start(t)
	s := newSharedSite(t, 20, time.Millisecond)
	ps := startProcs(t, s, 3, "-redis", rs.URL(), "-workers", "2", "-host_workers", "1", "-host_delay", delay.String(), s.URL+"/p/0")
	checkFinished(t, s, ps)
	s.checkComplete(t)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.maxHostIn != 1 {
		t.Errorf("at most %d requests at once to the site, want 1", s.maxHostIn)
	}
	if s.robots != 1 {
		t.Errorf("robots.txt fetched %d times, want once for the whole crawl", s.robots)
	}
	fs := slices.Clone(s.fetches)
	slices.SortFunc(fs, func(a, b fetch) int { return a.start.Compare(b.start) })
	gap := time.Hour
	for i := 1; i < len(fs); i++ {
		g := fs[i].start.Sub(fs[i-1].start)
		gap = min(gap, g)
		if g < delay/2-slack {
			t.Errorf("%s (from %s) and %s (from %s) began %v apart, want at least %v (half the delay) less %v",
				fs[i-1].path, fs[i-1].agent, fs[i].path, fs[i].agent, g, delay/2, slack)
		}
	}
	if span, want := fs[len(fs)-1].start.Sub(fs[0].start), time.Duration(len(fs)-1)*delay/2-slack; span < want {
		t.Errorf("%d requests spanned %v, want at least %v", len(fs), span, want)
	}
	senders := map[string]bool{}
	for _, f := range s.fetches {
		senders[f.agent] = true
	}
	t.Logf("%d requests from %d processes, at least %v apart", len(fs), len(senders), gap)
}

// -max_pages is the whole crawl's budget, not each process's: three
// processes fetch 40 pages between them, each once, every process exits 0
// when the budget is spent and nothing is in flight, and each reports
// the whole crawl, the budget named.
func TestRedisMaxPages(t *testing.T) {
	t.Parallel()
	const budget = 40
	rs := redistest.Start(t)
	s := newSharedSite(t, 300, 2*time.Millisecond)
	ps := startProcs(t, s, 3, "-redis", rs.URL(), "-workers", "4", "-max_pages", strconv.Itoa(budget), s.URL+"/p/0")
	var first map[string]string
	for _, p := range ps {
		r := p.wait(t)
		if r.code != 0 {
			t.Errorf("%s: exit %d, want 0; stderr %q", p.name, r.code, r.stderr)
			continue
		}
		if !strings.Contains(r.stderr, "stopped by -max_pages") {
			t.Errorf("%s: stderr %q, want the budget named", p.name, r.stderr)
		}
		_, _, counters, todo, _ := splitReport(t, r.stdout)
		if first == nil {
			first = counters
		} else if !maps.Equal(counters, first) {
			t.Errorf("%s: counters %v, want the whole crawl's, as the first process's: %v", p.name, counters, first)
		}
		if n, err := strconv.Atoi(todo); err != nil || n == 0 {
			t.Errorf("%s: Todo %q, want the URLs left queued by the budget", p.name, todo)
		}
	}
	if first != nil && first["html"] != strconv.Itoa(budget) {
		t.Errorf("counters %v: want %d html, the budget", first, budget)
	}
	if n := s.pagesFetched(); n != budget {
		t.Errorf("the site answered %d distinct pages, want %d: -max_pages %d over all processes", n, budget, budget)
	}
	if re := s.refetched(); len(re) > 0 {
		t.Errorf("%d paths fetched more than once, want none: %v", len(re), slices.Collect(maps.Keys(re)))
	}
}

// Ctrl-C on one process: it gives its leases back and exits 130 with the
// report of what was done; the other finishes the crawl at once, not a
// lease term (the default, a minute) later.
func TestRedisInterrupt(t *testing.T) {
	t.Parallel()
	const workers = 4
	rs := redistest.Start(t)
	s := newSharedSite(t, 200, 20*time.Millisecond)
	ps := startProcs(t, s, 2, "-redis", rs.URL(), "-workers", strconv.Itoa(workers), s.URL+"/p/0")
	s.firstToSend(t, ps, 20)
	if err := ps[0].cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	r := ps[0].wait(t)
	stopped := time.Now()
	if r.code != 130 || !strings.Contains(r.stderr, "interrupted") {
		t.Errorf("%s after SIGINT: exit %d, stderr %q; want 130 and interrupted", ps[0].name, r.code, r.stderr)
	}
	if _, _, _, todo, _ := splitReport(t, r.stdout); todo == "" || todo == "0" {
		t.Errorf("%s after SIGINT: Todo %q, want the URLs left in the whole crawl", ps[0].name, todo)
	}
	checkFinished(t, s, ps[1:])
	s.checkComplete(t)
	if took := time.Since(stopped); took > 20*time.Second {
		t.Errorf("the crawl took %v after the Ctrl-C: the leases were not given back", took)
	}
	re := checkRefetched(t, s, ps[0].name, workers)
	t.Logf("%d pages fetched again: %v", len(re), slices.Collect(maps.Keys(re)))
}

// Ctrl-C while Redis is down: the process cannot give its URLs back; it
// waits 5 s for Redis, then leaves them to expire and exits 130. Down is
// killed (connections refused) or frozen (SIGSTOP: connections accepted,
// never answered), whose calls took the client's 3 s read timeout each,
// whatever their ctx, so that the exit came after 10 s.
func TestRedisInterruptWhileDown(t *testing.T) {
	t.Parallel()
	for _, frozen := range []bool{false, true} {
		t.Run(map[bool]string{false: "killed", true: "frozen"}[frozen], func(t *testing.T) {
			t.Parallel()
			rs := redistest.Start(t)
			s := newSharedSite(t, 200, 20*time.Millisecond)
			ps := startProcs(t, s, 1, "-redis", rs.URL(), "-workers", "4", s.URL+"/p/0")
			s.waitSent(t, ps[0].name, 20)
			if frozen {
				rs.Freeze()
				defer rs.Thaw()
			} else {
				rs.Kill()
			}
			if err := ps[0].cmd.Process.Signal(syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			r := ps[0].wait(t)
			exited := time.Now()
			if r.code != 130 || !strings.Contains(r.stderr, "left to expire") {
				t.Fatalf("after SIGINT with Redis down: exit %d, stderr %q; want 130 and the URLs left to expire", r.code, r.stderr)
			}
			// The user stopped it: what the report cannot know is a
			// warning, not an error.
			if strings.Contains(r.stderr, "level=ERROR") || !strings.Contains(r.stderr, "(Todo) are not known") {
				t.Errorf("after SIGINT with Redis down: stderr %q; want no error, and a warning that Todo is not known", r.stderr)
			}
			// Once it has said so, it does not wait for Redis again
			// (its Close waited 5 s more for a frozen one): the exit
			// comes at once, with a margin for a loaded machine.
			said, _ := ps[0].stderr.when("left to expire")
			if d := exited.Sub(said); d > 2500*time.Millisecond {
				t.Errorf("after SIGINT with Redis down: exited %v after it said the URLs were left to expire, want at once; stderr, each write's time:\n%s\nexited %s", d, ps[0].stderr.dump(), exited.Format("15:04:05.000"))
			}
		})
	}
}

// The flags of a shared crawl are checked before anything starts: a bad
// -redis URL, -redis with -state or -demo, -crawl or -lease without
// -redis, each with a message naming the flag, and nothing fetched.
func TestRedisFlags(t *testing.T) {
	s := newSharedSite(t, 3, 0)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"-redis", "localhost:6379", s.URL}, "-redis localhost:6379"},
		{[]string{"-redis", "redis://127.0.0.1:6379/x", s.URL}, "-redis redis://127.0.0.1:6379/x"},
		{[]string{"-redis", "redis://127.0.0.1:1/0", "-state", filepath.Join(t.TempDir(), "s"), s.URL}, "-redis and -state"},
		{[]string{"-redis", "redis://127.0.0.1:1/0", "-demo"}, "-redis cannot share -demo"},
		{[]string{"-crawl", "x", s.URL}, "-crawl names"},
		{[]string{"-lease", "2s", s.URL}, "-lease is"},
		{[]string{"-redis", "redis://127.0.0.1:1/0", "-lease", "0s", s.URL}, "-lease"},
	} {
		r := runCrawl(t, tt.args...)
		if r.code != 1 || !strings.Contains(r.stderr, tt.want) {
			t.Errorf("crawl %q: exit %d, stderr %q; want 1 and %q", tt.args, r.code, r.stderr, tt.want)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.fetches) != 0 {
		t.Errorf("%d requests sent, want none", len(s.fetches))
	}
}

// lockedBuf is a bytes.Buffer a command writes while the test reads it.
type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuf) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuf) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// With -q and -redis_wait_replicas on a server with no replica, Start
// waits for good on a Redis that answers (its WAITs get 0 replicas): the
// crawl's derived name is said all the same, once Redis has answered, not
// only when Start returns. Before, -q printed nothing while it waited, and
// a Ctrl-C then printed no name to give -status.
func TestNameLineWhileWaitingReplicas(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	cmd := crawlCmd(t, "-q", "-redis", rs.URL(), "-redis_wait_replicas", "1", "http://site.example/")
	var stderr lockedBuf
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	said := false
	for end := time.Now().Add(15 * time.Second); time.Now().Before(end) && !said; time.Sleep(50 * time.Millisecond) {
		said = strings.HasPrefix(stderr.String(), "crawl: crawl ")
	}
	cmd.Process.Signal(syscall.SIGINT)
	cmd.Wait()
	if !said {
		t.Errorf("stderr %q while Start waited for a replica; want the name line first", stderr.String())
	}
}
