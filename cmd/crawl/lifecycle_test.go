package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/asyncrawl/crawl/redisfrontier"
	"github.com/asyncrawl/crawl/redisfrontier/redistest"
	"github.com/redis/go-redis/v9"
)

// nameLine is the line a shared crawl begins with on stderr.
var nameLine = regexp.MustCompile(`(?m)^crawl: crawl (\S+) on (redis://\S+)$`)

// crawlName returns the crawl's name from the name line of stderr, or
// fails the test.
func crawlName(t *testing.T, rs *redistest.Server, stderr string) string {
	t.Helper()
	m := nameLine.FindStringSubmatch(stderr)
	if m == nil || m[2] != rs.URL() {
		t.Fatalf("stderr %q: want the line \"crawl: crawl NAME on %s\"", stderr, rs.URL())
	}
	return m[1]
}

// keysOf returns the keys of crawl name, as SCAN finds them.
func keysOf(t *testing.T, rdb *redis.Client, name string) []string {
	t.Helper()
	var keys []string
	iter := rdb.Scan(t.Context(), 0, "crawl:{"+name+"}:*", 100).Iterator()
	for iter.Next(t.Context()) {
		keys = append(keys, iter.Val())
	}
	if err := iter.Err(); err != nil {
		t.Fatal(err)
	}
	return keys
}

// requests returns how many requests the site has answered.
func (s *sharedSite) requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.fetches)
}

// A shared crawl says its name on stderr at its start, -q or not; run
// again once done, it fetches nothing and says that the crawl was already
// done, and since when; its keys expire after -redis_ttl (every key has a
// TTL, at most the flag's), and the rerun does not extend them; -status
// reports it done, in lines and in JSON.
func TestRedisLifecycleDone(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	rdb := redis.NewClient(&redis.Options{Addr: rs.Addr()})
	defer rdb.Close()
	s := newSharedSite(t, 30, 0)
	args := []string{"-q", "-redis", rs.URL(), "-redis_ttl", "1h", s.URL + "/p/0"}
	r := runCrawl(t, args...)
	if r.code != 0 {
		t.Fatalf("crawl %q: exit %d, stderr %q", args, r.code, r.stderr)
	}
	name := crawlName(t, rs, r.stderr)
	if strings.Contains(r.stderr, "already done") {
		t.Errorf("stderr of the first run: %q, want no word of a crawl already done", r.stderr)
	}
	keys := keysOf(t, rdb, name)
	if len(keys) < 5 {
		t.Fatalf("keys of the crawl %s: %q, want its meta, stats, seen sets and host", name, keys)
	}
	ttls := map[string]time.Duration{}
	for _, k := range keys {
		d := rdb.PTTL(t.Context(), k).Val()
		ttls[k] = d
		if d <= 0 || d > time.Hour {
			t.Errorf("TTL of %s after the crawl with -redis_ttl 1h: %v, want in (0, 1h]", k, d)
		}
	}

	sent := s.requests()
	r = runCrawl(t, args...)
	if r.code != 0 {
		t.Fatalf("crawl %q again: exit %d, stderr %q", args, r.code, r.stderr)
	}
	if again := crawlName(t, rs, r.stderr); again != name {
		t.Errorf("the rerun's crawl is %s, want %s", again, name)
	}
	if !regexp.MustCompile(`crawl: fetched nothing: crawl ` + name + ` was already done, since \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC`).MatchString(r.stderr) {
		t.Errorf("stderr of the rerun: %q, want it to say that it fetched nothing, the crawl being already done, and since when", r.stderr)
	}
	if n := s.requests(); n != sent {
		t.Errorf("the rerun sent %d requests, want none", n-sent)
	}
	for _, k := range keys {
		if d := rdb.PTTL(t.Context(), k).Val(); d > ttls[k] {
			t.Errorf("TTL of %s after the rerun: %v, more than the %v it had", k, d, ttls[k])
		}
	}

	r = runCrawl(t, "-redis", rs.URL(), "-crawl", name, "-status")
	if r.code != 0 {
		t.Fatalf("-status: exit %d, stderr %q", r.code, r.stderr)
	}
	for _, want := range []string{"crawl:     " + name + " on " + rs.URL(), "state:     done", "queued:    0 (0 waiting to be retried)",
		"leased:    0", "done:      " + strconv.Itoa(s.results()), "finished:  ", "expires:   "} {
		if !strings.Contains(r.stdout, "\n"+want) && !strings.HasPrefix(r.stdout, want) {
			t.Errorf("-status of the crawl done: %q, want a line %q", r.stdout, want)
		}
	}
	r = runCrawl(t, "-redis", rs.URL(), "-crawl", name, "-status", "-format", "jsonl")
	var st statusJSON
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil || r.code != 0 {
		t.Fatalf("-status -format jsonl: exit %d, stdout %q (%v), stderr %q", r.code, r.stdout, err, r.stderr)
	}
	if st.Crawl != name || st.State != "done" || st.Done != s.results() || st.Leased != 0 || st.Pending != 0 || st.Finished == nil || st.Expires == nil {
		t.Errorf("-status -format jsonl: %+v, want crawl %s done, %d done, none leased, finished and expiring", st, name, s.results())
	}
	if d := time.Until(*st.Expires); d <= 0 || d > time.Hour {
		t.Errorf("-status says the keys expire in %v, want in (0, 1h]", d)
	}
	// The whole crawl's counters, as the report has them: every page
	// of the site an HTML page answered 200, or a failure (the site's
	// robots.txt disallows one).
	if st.Stats.HTML == 0 || st.Stats.HTML+st.Stats.Fail != s.results() || st.Stats.Status[200] != st.Stats.HTML || st.Stats.HTMLBytes == 0 {
		t.Errorf("-status -format jsonl: counters %+v, want %d results, html pages (status 200) or failures", st.Stats, s.results())
	}
	text := runCrawl(t, "-redis", rs.URL(), "-crawl", name, "-status").stdout
	for _, want := range []string{fmt.Sprintf("%10d html\n", st.Stats.HTML), fmt.Sprintf("%10d status_200\n", st.Stats.HTML)} {
		if !strings.Contains(text, want) {
			t.Errorf("-status of the crawl done: %q, want the counter line %q", text, want)
		}
	}
	// -o FILE: there, not on stdout.
	out := filepath.Join(t.TempDir(), "status.json")
	r = runCrawl(t, "-redis", rs.URL(), "-crawl", name, "-status", "-format", "jsonl", "-o", out)
	b, err := os.ReadFile(out)
	var st2 statusJSON
	if r.code != 0 || r.stdout != "" || err != nil || json.Unmarshal(b, &st2) != nil || st2.Crawl != name {
		t.Errorf("-status -o %s: exit %d, stdout %q, file %q (%v); want the status in the file, none on stdout", out, r.code, r.stdout, b, err)
	}
	if r := runCrawl(t, "-redis", rs.URL(), "-crawl", name, "-reset", "-o", out); r.code != 1 || !strings.Contains(r.stderr, "-reset writes no report") {
		t.Errorf("-reset -o FILE: exit %d, stderr %q; want 1, saying -reset writes none", r.code, r.stderr)
	}
}

// A crawl stopped by its -max_pages is finished too: its keys expire
// after -redis_ttl. Run again with a larger -max_pages, it goes on (its
// keys kept while it runs: redisfrontier's TestTTLRevived), fetches the
// pages the budget held back, none twice, and once done its keys expire
// after -redis_ttl again.
func TestRedisLifecycleBudget(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	rdb := redis.NewClient(&redis.Options{Addr: rs.Addr()})
	defer rdb.Close()
	s := newSharedSite(t, 30, 0)
	args := []string{"-q", "-redis", rs.URL(), "-redis_ttl", "1h", "-crawl", "budget", "-max_pages", "5", s.URL + "/p/0"}
	r := runCrawl(t, args...)
	if r.code != 0 {
		t.Fatalf("crawl %q: exit %d, stderr %q", args, r.code, r.stderr)
	}
	first := s.requests()
	ttls := func(why string) {
		t.Helper()
		for _, k := range keysOf(t, rdb, "budget") {
			if d := rdb.PTTL(t.Context(), k).Val(); d <= 0 || d > time.Hour {
				t.Errorf("TTL of %s %s: %v, want in (0, 1h]", k, why, d)
			}
		}
	}
	ttls("after a crawl stopped by -max_pages 5 with -redis_ttl 1h")
	// No process on it, URLs left: waiting, not running.
	r = runCrawl(t, "-redis", rs.URL(), "-crawl", "budget", "-status")
	if r.code != 0 || !strings.Contains(r.stdout, "state:     waiting\n") {
		t.Errorf("-status of a crawl stopped by -max_pages: exit %d, stdout %q; want state waiting", r.code, r.stdout)
	}
	// Run again under the same budget with -redis_ttl 0: it fetches
	// nothing, does not keep the keys for good, and does not say it
	// does (it said so, the keys expiring all the same).
	r = runCrawl(t, "-redis", rs.URL(), "-redis_ttl", "0", "-crawl", "budget", "-max_pages", "5", s.URL+"/p/0")
	if r.code != 0 || s.requests() != first {
		t.Fatalf("rerun under the same -max_pages: exit %d, %d requests more, stderr %q; want 0 and none", r.code, s.requests()-first, r.stderr)
	}
	if strings.Contains(r.stderr, "for good") || !strings.Contains(r.stderr, "set to expire") {
		t.Errorf("stderr of a rerun with -redis_ttl 0 of a crawl stopped by -max_pages: %q; want it to say its keys are set to expire", r.stderr)
	}
	ttls("after a rerun with -redis_ttl 0 under the same -max_pages")

	args[len(args)-2] = "0" // -max_pages 0: no budget
	r = runCrawl(t, args...)
	if r.code != 0 {
		t.Fatalf("crawl %q: exit %d, stderr %q", args, r.code, r.stderr)
	}
	if strings.Contains(r.stderr, "already done") {
		t.Errorf("stderr of the rerun without a budget: %q, want no word of a crawl already done", r.stderr)
	}
	if n := s.requests(); n <= first {
		t.Errorf("the rerun without a budget sent %d requests, want the pages the budget held back", n-first)
	}
	for p, fs := range s.refetched() {
		if strings.HasPrefix(p, "/p/") {
			t.Errorf("%s fetched %d times over the two runs, want once", p, len(fs))
		}
	}
	s.checkComplete(t)
	ttls("after the rerun that finished it")
	r = runCrawl(t, "-redis", rs.URL(), "-crawl", "budget", "-status", "-format", "jsonl")
	var st statusJSON
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil || r.code != 0 {
		t.Fatalf("-status -format jsonl: exit %d, stdout %q (%v), stderr %q", r.code, r.stdout, err, r.stderr)
	}
	if st.State != "done" || st.Pending != 0 || st.Done != s.results() {
		t.Errorf("-status after the rerun: %+v, want done, nothing pending, %d done", st, s.results())
	}
}

// -redis_ttl 0 keeps the keys of a crawl done.
func TestRedisLifecycleKeep(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	rdb := redis.NewClient(&redis.Options{Addr: rs.Addr()})
	defer rdb.Close()
	s := newSharedSite(t, 10, 0)
	r := runCrawl(t, "-redis", rs.URL(), "-redis_ttl", "0", "-crawl", "kept", s.URL+"/p/0")
	if r.code != 0 {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "kept in Redis for good (-redis_ttl 0)") || strings.Contains(r.stderr, "until -redis_ttl") {
		t.Errorf("stderr of a crawl with -redis_ttl 0: %q, want it to say the keys are kept for good", r.stderr)
	}
	// Run again with another -redis_ttl: the crawl was done, its keys'
	// life is what the first run set, and the line says so.
	r = runCrawl(t, "-redis", rs.URL(), "-redis_ttl", "1h", "-crawl", "kept", s.URL+"/p/0")
	if r.code != 0 || !strings.Contains(r.stderr, "the crawl was done before this run") || strings.Contains(r.stderr, "until -redis_ttl") {
		t.Errorf("stderr of a rerun of a crawl done, kept for good: exit %d, %q; want it to say the crawl was done before", r.code, r.stderr)
	}
	keys := keysOf(t, rdb, "kept")
	if len(keys) == 0 {
		t.Fatalf("no key of the crawl kept")
	}
	for _, k := range keys {
		if d := rdb.PTTL(t.Context(), k).Val(); d != -1 {
			t.Errorf("TTL of %s after the crawl with -redis_ttl 0: %v, want none (-1)", k, d)
		}
	}
}

// -status of a crawl running names who holds its leases; -reset refuses
// it, naming them, and leaves its keys; -reset -force deletes every key,
// and the process on the crawl exits 1, saying that the crawl was
// deleted, without making its keys again. -status and -reset of a crawl
// that is not there exit 1 and say so.
func TestRedisLifecycleReset(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	rdb := redis.NewClient(&redis.Options{Addr: rs.Addr()})
	defer rdb.Close()
	for _, args := range [][]string{
		{"-redis", rs.URL(), "-crawl", "none", "-status"},
		{"-redis", rs.URL(), "-crawl", "none", "-reset"},
	} {
		if r := runCrawl(t, args...); r.code != 1 || !strings.Contains(r.stderr, "no crawl none on "+rs.URL()) {
			t.Errorf("crawl %q: exit %d, stderr %q; want 1 and no crawl none", args, r.code, r.stderr)
		}
	}

	s := newSharedSite(t, 200, 300*time.Millisecond)
	ps := startProcs(t, s, 1, "-q", "-redis", rs.URL(), "-crawl", "busy", "-workers", "2", s.URL+"/p/0")
	s.waitSent(t, ps[0].name, 3)
	r := runCrawl(t, "-redis", rs.URL(), "-crawl", "busy", "-status", "-format", "jsonl")
	var st statusJSON
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil || r.code != 0 {
		t.Fatalf("-status -format jsonl: exit %d, stdout %q (%v), stderr %q", r.code, r.stdout, err, r.stderr)
	}
	if st.State != "running" || st.Leased == 0 || len(st.Holders) != 1 || st.Holders[0].Leases != st.Leased || st.Holders[0].Until == nil {
		t.Errorf("-status of a crawl running: %+v, want running, its leases held by one process until a time", st)
	}
	r = runCrawl(t, "-redis", rs.URL(), "-crawl", "busy", "-status")
	if r.code != 0 || !strings.Contains(r.stdout, "state:     running") || !strings.Contains(r.stdout, "holder:    ") {
		t.Errorf("-status of a crawl running: exit %d, stdout %q; want running and a holder line", r.code, r.stdout)
	}

	r = runCrawl(t, "-redis", rs.URL(), "-crawl", "busy", "-reset")
	if r.code != 1 || !strings.Contains(r.stderr, "is running") || !strings.Contains(r.stderr, "-force") {
		t.Errorf("-reset of a crawl running: exit %d, stderr %q; want 1, running, and -force named", r.code, r.stderr)
	}
	if len(keysOf(t, rdb, "busy")) == 0 {
		t.Fatalf("-reset refused, and the crawl's keys are gone")
	}
	r = runCrawl(t, "-redis", rs.URL(), "-crawl", "busy", "-reset", "-force")
	if r.code != 0 || !strings.Contains(r.stderr, "crawl busy on "+rs.URL()+" deleted") {
		t.Errorf("-reset -force: exit %d, stderr %q; want 0 and deleted", r.code, r.stderr)
	}
	p := ps[0].wait(t)
	if p.code != 1 || !strings.Contains(p.stderr, "was deleted") {
		t.Errorf("the process on a crawl reset: exit %d, stderr %q; want 1 and the crawl deleted", p.code, p.stderr)
	}
	if keys := keysOf(t, rdb, "busy"); len(keys) != 0 {
		t.Errorf("keys after -reset -force and the process's exit: %q, want none", keys)
	}
}

// The flags of the lifecycle are checked: each needs -redis (and -status
// and -reset -crawl), takes no root, and -force needs -reset.
func TestRedisLifecycleFlags(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"-status", "-crawl", "x"}, "give -redis URL"},
		{[]string{"-reset", "-redis", "redis://127.0.0.1:1/0"}, "-reset needs -crawl NAME"},
		{[]string{"-status", "-redis", "redis://127.0.0.1:1/0", "-crawl", "x", "http://a.example/"}, "-status takes no root URL"},
		{[]string{"-status", "-reset", "-redis", "redis://127.0.0.1:1/0", "-crawl", "x"}, "exclusive"},
		{[]string{"-force", "-redis", "redis://127.0.0.1:1/0", "-crawl", "x"}, "-force forces -reset"},
		{[]string{"-redis_ttl", "1h", "http://a.example/"}, "-redis_ttl is"},
		{[]string{"-redis", "redis://127.0.0.1:1/0", "-redis_ttl", "-1s", "http://a.example/"}, "-redis_ttl"},
	} {
		r := runCrawl(t, tt.args...)
		if r.code != 1 || !strings.Contains(r.stderr, tt.want) {
			t.Errorf("crawl %q: exit %d, stderr %q; want 1 and %q", tt.args, r.code, r.stderr, tt.want)
		}
	}
}

// A process whose crawl refuses it (other roots under the crawl's name)
// still says, at its start, which crawl it was on: the name to give
// -status or -reset.
func TestRedisNameLineRefused(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	s := newSharedSite(t, 3, 0)
	if r := runCrawl(t, "-q", "-redis", rs.URL(), "-crawl", "named", s.URL+"/p/0"); r.code != 0 {
		t.Fatalf("first crawl: exit %d, stderr %q", r.code, r.stderr)
	}
	r := runCrawl(t, "-q", "-redis", rs.URL(), "-crawl", "named", s.URL+"/p/1")
	want := "crawl: crawl named on " + rs.URL() + "\n"
	if r.code != 1 || !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, "was started with Roots") {
		t.Errorf("crawl of other roots under -crawl named: exit %d, stderr %q; want 1, %q and the roots refused", r.code, r.stderr, want)
	}
}

// -status with Redis down for -redis_wait says so in one line: the
// client's complaints, one each failed dial, only with -v.
func TestRedisStatusDownQuiet(t *testing.T) {
	t.Parallel()
	addr := deadAddr(t)
	for _, what := range []string{"-status", "-reset"} {
		r := runCrawl(t, "-redis", "redis://"+addr+"/0", "-crawl", "x", what, "-redis_wait", "2s")
		lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
		if r.code != 1 || len(lines) != 1 || !strings.Contains(lines[0], "did not answer in 2s") {
			t.Errorf("crawl %s, nothing listening for 2s: exit %d, stderr %q; want 1 and one line", what, r.code, r.stderr)
		}
	}
}

// A holder whose leases' term has ended (its process stopped, or was cut
// off) is said so, not "in -8s".
func TestHolderTextEnded(t *testing.T) {
	h := redisfrontier.Holder{Owner: "o", Leases: 2, Until: time.Now().Add(-8 * time.Second)}
	if got := holderText(h); !strings.Contains(got, "o holds 2 leases until ") || !strings.Contains(got, "(ended 8s ago") {
		t.Errorf("holderText of leases ended 8s ago: %q", got)
	}
	h.Until = time.Now().Add(time.Minute + 500*time.Millisecond)
	if got := holderText(h); !strings.Contains(got, "(in 1m0s)") {
		t.Errorf("holderText of leases ending in a minute: %q", got)
	}
}

// A crawl whose leases are all past their term (its processes were
// killed) is waiting, not running: no process is on it.
func TestStatusStateLeasesEnded(t *testing.T) {
	for _, tt := range []struct {
		st   redisfrontier.Status
		want string
	}{
		{redisfrontier.Status{Leased: 3, Expired: 3, Pending: 5}, "waiting"},
		{redisfrontier.Status{Leased: 3, Expired: 2, Pending: 5}, "running"},
		{redisfrontier.Status{Pending: 5}, "waiting"},
		{redisfrontier.Status{Pending: 5, Holders: []redisfrontier.Holder{{Owner: "a"}}}, "running"},
		{redisfrontier.Status{Leased: 1, Expired: 1, Pending: 5, Holders: []redisfrontier.Holder{{Owner: "a", Leases: 1}}}, "waiting"},
		{redisfrontier.Status{Done: true}, "done"},
	} {
		if got := statusState(&tt.st); got != tt.want {
			t.Errorf("statusState(%+v) = %s, want %s", tt.st, got, tt.want)
		}
	}
}

// A process on a crawl that holds no lease most of the time, waiting out
// -host_delay between its requests: -status says the crawl is running,
// the process on it, and -reset without -force refuses it. (Both used to
// take it for a crawl no process was on, and -reset deleted it under the
// process.)
func TestRedisLifecycleHostDelay(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	s := newSharedSite(t, 20, 0)
	ps := startProcs(t, s, 1, "-q", "-redis", rs.URL(), "-crawl", "slow", "-host_delay", "3s", s.URL+"/p/0")
	s.waitSent(t, ps[0].name, 1)
	time.Sleep(500 * time.Millisecond) // the first page acked: no lease out until the next
	r := runCrawl(t, "-redis", rs.URL(), "-crawl", "slow", "-status", "-format", "jsonl")
	var st statusJSON
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil || r.code != 0 {
		t.Fatalf("-status -format jsonl: exit %d, stdout %q (%v), stderr %q", r.code, r.stdout, err, r.stderr)
	}
	if st.State != "running" || len(st.Holders) != 1 {
		t.Errorf("-status of a crawl whose process waits out its host's delay: %+v, want running, the process a holder", st)
	}
	r = runCrawl(t, "-redis", rs.URL(), "-crawl", "slow", "-reset")
	if r.code != 1 || !strings.Contains(r.stderr, "is running") || !strings.Contains(r.stderr, "holding no lease now") {
		t.Errorf("-reset of a crawl whose process waits out its host's delay: exit %d, stderr %q; want 1, running, the process named", r.code, r.stderr)
	}
	ps[0].cmd.Process.Signal(os.Interrupt)
	ps[0].wait(t)
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"6c46bcd83b76":             "6c46bcd83b76",
		"my crawl":                 "'my crawl'",
		"it's":                     `'it'\''s'`,
		"redis://h:6379/0":         "redis://h:6379/0",
		"redis://h:6379/0?x=1&y=2": "'redis://h:6379/0?x=1&y=2'",
		"":                         "''",
	} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

// Ctrl-C of -reset (or -status) once Redis has answered, its call cut by
// the cancellation, exits as an interrupted crawl does, 130, saying that
// the Reset may be cut short; it exited 1 with "context canceled".
func TestRedisResetInterrupted(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	rdb := redis.NewClient(&redis.Options{Addr: rs.Addr()})
	defer rdb.Close()
	if err := rdb.HSet(t.Context(), "crawl:{cut}:meta", "reset", "1").Err(); err != nil {
		t.Fatal(err)
	}
	cfg := &config{crawlName: "cut", redis: rs.URL(), reset: true}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	var stderr strings.Builder
	fail := func(format string, a ...any) int {
		fmt.Fprintf(&stderr, format, a...)
		return 1
	}
	if code := resetCrawl(ctx, cfg, rdb, rs.URL(), &stderr, fail); code != 130 || !strings.Contains(stderr.String(), "-reset again finishes it") {
		t.Errorf("-reset interrupted: exit %d, stderr %q; want 130 and how to finish it", code, stderr.String())
	}
	if n := rdb.Exists(t.Context(), "crawl:{cut}:meta").Val(); n != 1 {
		t.Errorf("-reset interrupted before its call: the mark deleted, want it left for the next -reset")
	}
}
