package crawl_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/asyncrawl/crawl"
	"github.com/asyncrawl/crawl/crawltest"
)

// anchors serves an HTML page linking to each of links, after pause.
func anchors(pause time.Duration, links ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if pause > 0 {
			time.Sleep(pause)
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		for _, l := range links {
			fmt.Fprintf(w, "<a href=%q>%s</a>\n", l, l)
		}
	}
}

// flatSite serves "/" linking to /p0 ... /p<n-1>, each page answering after
// pause.
func flatSite(n int, pause time.Duration) http.Handler {
	var links []string
	for i := range n {
		links = append(links, fmt.Sprintf("/p%d", i))
	}
	mux := http.NewServeMux()
	mux.Handle("/{$}", anchors(pause, links...))
	mux.Handle("/{p}", anchors(pause))
	return mux
}

// treeSite serves a tree without end: every page links to fanout children,
// "/" to "/0", "/1", ..., "/0" to "/0/0", ...
func treeSite(fanout int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		base := strings.TrimSuffix(r.URL.Path, "/")
		var links []string
		for i := range fanout {
			links = append(links, fmt.Sprintf("%s/%d", base, i))
		}
		anchors(0, links...)(w, r)
	})
}

// startTimes records when each request reached a handler.
type startTimes struct {
	mu    sync.Mutex
	times []time.Time
	paths []string
}

func (s *startTimes) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.times = append(s.times, time.Now())
		s.paths = append(s.paths, r.URL.Path)
		s.mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

func (s *startTimes) get() ([]time.Time, []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.times), slices.Clone(s.paths)
}

func TestHostWorkersLimit(t *testing.T) {
	s := newSite(t, flatSite(30, 20*time.Millisecond))
	stats, res, err := crawlSite(t, context.Background(), []string{s.URL},
		crawl.WithWorkers(20), crawl.WithHostWorkers(3))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if len(res) != 31 || stats.Failures != 0 {
		t.Errorf("got %d Results, %d failures, want 31, 0", len(res), stats.Failures)
	}
	if p := s.Peak(); p != 3 {
		t.Errorf("server's peak in flight: got %d, want 3 (WithHostWorkers(3), 20 workers, 30 slow pages)", p)
	}
}

// TestHostWorkersNoHeadOfLineBlocking crawls a slow host and a fast host at
// once: the workers the slow host cannot use serve the fast one, which
// finishes first.
func TestHostWorkersNoHeadOfLineBlocking(t *testing.T) {
	slow := newSite(t, flatSite(30, 30*time.Millisecond))
	fast := newSite(t, flatSite(30, 0))
	var mu sync.Mutex
	var order []string
	stats, _, err := crawlSite(t, context.Background(), []string{slow.URL, fast.URL},
		crawl.WithWorkers(20), crawl.WithHostWorkers(3),
		// crawlSite has the result hook; the page hook runs just before.
		crawl.WithPageHook(func(p *crawl.Page) {
			mu.Lock()
			order = append(order, p.URL.String())
			mu.Unlock()
		}))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if stats.Done != 62 {
		t.Fatalf("Done: got %d, want 62", stats.Done)
	}
	lastFast, firstSlowAfter := -1, -1
	for i, u := range order {
		if strings.HasPrefix(u, fast.URL) {
			lastFast = i
		}
	}
	slowAfter := 0
	for i, u := range order[lastFast+1:] {
		if strings.HasPrefix(u, slow.URL) {
			if firstSlowAfter < 0 {
				firstSlowAfter = lastFast + 1 + i
			}
			slowAfter++
		}
	}
	// 30 pages of 30ms through 3 slots take about 300ms; the fast host's
	// 31 pages take a few milliseconds with 17 workers free.
	if slowAfter < 20 {
		t.Errorf("%d slow-host Results came after the fast host's last, want at least 20 of 31: the fast host waited behind the slow one (order %v)", slowAfter, order)
	}
	if p := slow.Peak(); p > 3 {
		t.Errorf("slow host's peak in flight: got %d, want at most 3", p)
	}
}

func TestHostDelay(t *testing.T) {
	// A delay long beside the scheduling noise of a loaded machine: at
	// 50 ms (25 ms at least between two starts), a CI run beside other
	// jobs (load 6.5) saw two starts arrive 8.5 ms apart.
	const d = 150 * time.Millisecond
	var st startTimes
	s := newSite(t, st.wrap(flatSite(10, 0)))
	_, res, err := crawlSite(t, context.Background(), []string{s.URL},
		crawl.WithWorkers(8), crawl.WithHostWorkers(8), crawl.WithHostDelay(d))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if len(res) != 11 {
		t.Fatalf("got %d Results, want 11", len(res))
	}
	times, paths := st.get()
	if len(times) != 11 {
		t.Fatalf("server saw %d requests, want 11", len(times))
	}
	// Scheduling noise between dispatch and arrival: a loaded machine
	// (a browser test in another package) delays a goroutine by several
	// milliseconds, and by 17 ms under a load of 6.5; without the delay
	// the gaps are about 0.
	const slack = 25 * time.Millisecond
	for i := 1; i < len(times); i++ {
		if gap := times[i].Sub(times[i-1]); gap < d/2-slack {
			t.Errorf("requests %s and %s started %v apart, want at least %v (half the delay)", paths[i-1], paths[i], gap, d/2)
		}
	}
	if span := times[10].Sub(times[0]); span < 10*(d/2)-slack {
		t.Errorf("11 requests spanned %v, want at least 10 x %v", span, d/2)
	}
}

// TestRetryBackoffHoldsNoWorker has one worker and a URL that fails once
// with a long backoff (at least half a second): the other URLs are fetched
// while it waits.
func TestRetryBackoffHoldsNoWorker(t *testing.T) {
	var flaky atomic.Int32
	var st startTimes
	mux := http.NewServeMux()
	mux.Handle("/{$}", anchors(0, "/flaky", "/a", "/b", "/c"))
	mux.Handle("/flaky", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if flaky.Add(1) == 1 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		anchors(0)(w, r)
	}))
	mux.Handle("/{p}", anchors(0))
	s := newSite(t, st.wrap(mux))
	_, res, err := crawlSite(t, context.Background(), []string{s.URL},
		crawl.WithWorkers(1), crawl.WithBackoff(time.Second, time.Second))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if r := res[s.URL+"/flaky"]; r.Status != 200 || r.Tries != 2 || r.Err != nil {
		t.Errorf("/flaky: got status %d, %d tries, err %v; want 200, 2, nil", r.Status, r.Tries, r.Err)
	}
	_, paths := st.get()
	first := slices.Index(paths, "/flaky")
	if first < 0 {
		t.Fatalf("/flaky never requested: %v", paths)
	}
	// With the only worker free during the backoff, /a, /b and /c are all
	// fetched between the first and second attempts at /flaky.
	second := first + 1 + slices.Index(paths[first+1:], "/flaky")
	between := paths[first+1 : max(second, first+1)]
	for _, p := range []string{"/a", "/b", "/c"} {
		if !slices.Contains(between, p) {
			t.Errorf("%s not fetched during /flaky's backoff; requests in order: %v", p, paths)
		}
	}
}

// TestRetryAfterPausesHost: a 429 with Retry-After: 1 keeps every request
// off the host for a second, then the URL is retried and succeeds.
func TestRetryAfterPausesHost(t *testing.T) {
	var limited atomic.Int32
	var mu sync.Mutex
	var at429 time.Time
	var st startTimes
	mux := http.NewServeMux()
	mux.Handle("/{$}", anchors(0, "/a", "/b", "/c", "/d"))
	mux.Handle("/a", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if limited.Add(1) == 1 {
			mu.Lock()
			at429 = time.Now()
			mu.Unlock()
			w.Header().Set("Retry-After", "1")
			http.Error(w, "slow down", http.StatusTooManyRequests)
			return
		}
		anchors(0)(w, r)
	}))
	mux.Handle("/{p}", anchors(0))
	s := newSite(t, st.wrap(mux))
	_, res, err := crawlSite(t, context.Background(), []string{s.URL},
		crawl.WithWorkers(4), crawl.WithHostWorkers(1))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if r := res[s.URL+"/a"]; r.Status != 200 || r.Tries != 2 {
		t.Errorf("/a: got status %d after %d tries, want 200 after 2", r.Status, r.Tries)
	}
	if len(res) != 5 {
		t.Errorf("got %d Results, want 5", len(res))
	}
	times, paths := st.get()
	mu.Lock()
	defer mu.Unlock()
	after := 0
	for i, tm := range times {
		if !tm.After(at429) {
			continue
		}
		after++
		if gap := tm.Sub(at429); gap < 990*time.Millisecond {
			t.Errorf("%s reached the host %v after the 429, want at least 1s (Retry-After: 1)", paths[i], gap)
		}
	}
	if after == 0 {
		t.Errorf("no request after the 429; requests: %v", paths)
	}
}

func TestMaxDepth(t *testing.T) {
	s := newSite(t, treeSite(3))
	stats, res, err := crawlSite(t, context.Background(), []string{s.URL},
		crawl.WithWorkers(100), crawl.WithHostWorkers(100), crawl.WithMaxDepth(2))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	// 1 root, 3 pages at depth 1, 9 at depth 2.
	if got := s.Total(); got != 13 {
		t.Errorf("server saw %d requests, want 13 (depth 0 to 2 of a 3-way tree)", got)
	}
	if len(res) != 13 || stats.Todo != 0 || stats.Budget != "" {
		t.Errorf("got %d Results, Todo %d, Budget %q; want 13, 0, \"\"", len(res), stats.Todo, stats.Budget)
	}
	for u, r := range res {
		want := strings.Count(strings.TrimPrefix(u, s.URL), "/")
		if u == s.URL+"/" {
			want = 0
		}
		if r.Depth != want || r.Depth > 2 {
			t.Errorf("%s: Depth %d, want %d (at most 2)", u, r.Depth, want)
		}
		if r.Depth == 2 && (r.NumURLs != 0 || r.NumNewURLs != 0) {
			t.Errorf("%s at the depth limit: NumURLs %d NumNewURLs %d, want 0, 0 (refused as max_depth, not queued)", u, r.NumURLs, r.NumNewURLs)
		}
	}
}

func TestMaxPages(t *testing.T) {
	for _, workers := range []int{1, 7, 100} {
		t.Run(fmt.Sprint(workers, "workers"), func(t *testing.T) {
			s := newSite(t, treeSite(10))
			// The tree's paths repeat segments ("/1/1/1"): the budget,
			// not that trap limit, is what this test ends the crawl with.
			stats, res, err := crawlSite(t, context.Background(), []string{s.URL},
				crawl.WithWorkers(workers), crawl.WithHostWorkers(workers), crawl.WithMaxPages(50),
				crawl.WithMaxSegmentRepeats(0))
			if err != nil {
				t.Fatalf("Run: got %v, want nil (a budget ends a crawl normally)", err)
			}
			if got := s.Total(); got != 50 {
				t.Errorf("server saw %d requests, want exactly 50", got)
			}
			if len(res) != 50 || stats.Done != 50 {
				t.Errorf("got %d Results, Done %d; want 50", len(res), stats.Done)
			}
			if stats.Budget != "max_pages" {
				t.Errorf("Budget: got %q, want max_pages", stats.Budget)
			}
			// Every page fetched queued 10 links: 1 + 10*50 URLs seen, 50
			// of them fetched.
			if stats.Todo != 1+10*50-50 {
				t.Errorf("Todo: got %d, want %d", stats.Todo, 1+10*50-50)
			}
			var report strings.Builder
			stats.WriteReport(&report)
			if !strings.Contains(report.String(), "\nBudget: max_pages\nTodo: 451\n") {
				t.Errorf("report does not say which budget ended the Run:\n%s", report.String())
			}
		})
	}
}

// calendarSite is an endless calendar: each day links to the next.
func calendarSite() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		day, err := time.Parse("/2006/01/02", r.URL.Path)
		if err != nil {
			day = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		}
		anchors(time.Millisecond, day.AddDate(0, 0, 1).Format("/2006/01/02"), day.AddDate(0, 1, 0).Format("/2006/01/02"))(w, r)
	})
}

func TestMaxDuration(t *testing.T) {
	s := newSite(t, calendarSite())
	stats, res, err := crawlSite(t, context.Background(), []string{s.URL},
		crawl.WithWorkers(4), crawl.WithMaxDuration(time.Second))
	if err != nil {
		t.Fatalf("Run: got %v, want nil (a budget ends a crawl normally)", err)
	}
	if stats.Budget != "max_duration" {
		t.Errorf("Budget: got %q, want max_duration", stats.Budget)
	}
	// The requests in flight at the deadline go back to Todo: on a loaded
	// machine a second may see few Results, but never none.
	if len(res) < 3 || stats.Todo == 0 {
		t.Errorf("got %d Results and Todo %d, want many Results and URLs left (an endless site)", len(res), stats.Todo)
	}
	for u, r := range res {
		if r.Err != nil && !errors.Is(r.Err, context.DeadlineExceeded) {
			t.Errorf("%s: Err %v, want nil or a deadline", u, r.Err)
		}
	}
}

// TestCancelDuringBackoff: a URL waiting for its retry when the Run is
// cancelled gets no Result and is counted in Todo.
func TestCancelDuringBackoff(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("/{$}", anchors(0, "/busy"))
	mux.Handle("/busy", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "busy", http.StatusServiceUnavailable)
	}))
	s := newSite(t, mux)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stats, res, err := crawlSite(t, ctx, []string{s.URL},
		crawl.WithBackoff(time.Hour, time.Hour),
		crawl.WithPageHook(func(p *crawl.Page) {
			if p.URL.Path == "/" {
				// Cancel once /busy is surely waiting: the server
				// answered it.
				go func() {
					for s.Hits("/busy") == 0 {
						time.Sleep(time.Millisecond)
					}
					time.Sleep(20 * time.Millisecond)
					cancel()
				}()
			}
		}))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: got %v, want context.Canceled", err)
	}
	if _, ok := res[s.URL+"/busy"]; ok || stats.Todo != 1 {
		t.Errorf("/busy has a Result: %v, Todo %d; want no Result and Todo 1", ok, stats.Todo)
	}
}

func TestNofollow(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("/{$}", htmlPage(`<a href="/a">a</a> <a rel="nofollow" href="/b">b</a> <a rel="external NoFollow" href="/c">c</a> <a href="/meta">m</a>`))
	mux.Handle("/meta", htmlPage(`<head><meta name="Robots" content="noindex, nofollow"></head><a href="/d">d</a>`))
	mux.Handle("/{p}", htmlPage(`<p>leaf</p>`))
	for _, tt := range []struct {
		robots bool
		want   []string
	}{
		{true, []string{"/", "/a", "/meta"}},
		{false, []string{"/", "/a", "/b", "/c", "/d", "/meta"}},
	} {
		t.Run(fmt.Sprint("robots=", tt.robots), func(t *testing.T) {
			s := newSite(t, mux)
			var mu sync.Mutex
			noindex := map[string]bool{}
			_, _, err := crawlSite(t, context.Background(), []string{s.URL},
				crawl.WithRobots(tt.robots),
				crawl.WithPageHook(func(p *crawl.Page) {
					mu.Lock()
					noindex[p.URL.Path] = p.NoIndex
					mu.Unlock()
				}))
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if got := s.Requested(); !slices.Equal(got, tt.want) {
				t.Errorf("requested %v, want %v", got, tt.want)
			}
			if noindex["/meta"] != tt.robots || noindex["/"] {
				t.Errorf("Page.NoIndex: /meta %v, / %v; want %v, false", noindex["/meta"], noindex["/"], tt.robots)
			}
		})
	}
}

func TestXRobotsTag(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("/{$}", anchors(0, "/mine", "/other"))
	mux.Handle("/mine", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Add("X-Robots-Tag", "asyncrawl: nofollow")
		anchors(0, "/x")(w, r)
	}))
	mux.Handle("/other", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Add("X-Robots-Tag", "otherbot: nofollow, noindex")
		anchors(0, "/y")(w, r)
	}))
	mux.Handle("/{p}", anchors(0))
	s := newSite(t, mux)
	if _, _, err := crawlSite(t, context.Background(), []string{s.URL}); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if got, want := s.Requested(), []string{"/", "/mine", "/other", "/y"}; !slices.Equal(got, want) {
		t.Errorf("requested %v, want %v (X-Robots-Tag for asyncrawl obeyed, for otherbot not)", got, want)
	}
}

func TestProgress(t *testing.T) {
	s := newSite(t, flatSite(10, 30*time.Millisecond))
	var mu sync.Mutex
	var snaps []crawl.Progress
	var returned atomic.Bool
	stats, _, err := crawlSite(t, context.Background(), []string{s.URL},
		crawl.WithWorkers(2), crawl.WithProgress(5*time.Millisecond, func(p crawl.Progress) {
			if returned.Load() {
				t.Errorf("progress reported after Run returned")
			}
			mu.Lock()
			snaps = append(snaps, p)
			mu.Unlock()
		}))
	returned.Store(true)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(snaps) < 5 {
		t.Fatalf("%d progress reports in a crawl of about 180ms every 5ms, want at least 5", len(snaps))
	}
	busy := false
	for i, p := range snaps {
		if p.InFlight > 2 || p.InFlight < 0 || p.Queued < 0 {
			t.Errorf("report %d: InFlight %d, Queued %d; want 0..2 (2 workers), >= 0", i, p.InFlight, p.Queued)
		}
		if n := p.Done + p.Queued + p.InFlight; n > 11 {
			t.Errorf("report %d: Done %d + Queued %d + InFlight %d = %d, more than the site's 11 URLs", i, p.Done, p.Queued, p.InFlight, n)
		}
		if i > 0 && (p.Done < snaps[i-1].Done || p.Elapsed < snaps[i-1].Elapsed) {
			t.Errorf("report %d went backwards: Done %d after %d", i, p.Done, snaps[i-1].Done)
		}
		if p.InFlight == 2 && p.Queued > 0 {
			busy = true
		}
	}
	if !busy {
		t.Errorf("no report saw 2 URLs in flight and more queued: %+v", snaps)
	}
	if last := snaps[len(snaps)-1]; last.Done > stats.Done {
		t.Errorf("last report Done %d, more than the final %d", last.Done, stats.Done)
	}
	if _, err := crawl.New(crawl.WithProgress(0, func(crawl.Progress) {})); err == nil || !strings.Contains(err.Error(), "WithProgress") {
		t.Errorf("New(WithProgress(0, f)): got %v, want an error naming WithProgress", err)
	}
}

// TestBothBudgets checks that a Run ended by WithMaxDuration after
// WithMaxPages was spent returns a nil error: a budget ended it, not the
// caller's context.
func TestBothBudgets(t *testing.T) {
	s := newSite(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The one page the budget allows is still in flight at the
		// deadline.
		<-r.Context().Done()
	}))
	stats, _, err := crawlSite(t, context.Background(), []string{s.URL},
		crawl.WithRobots(false), crawl.WithSitemaps(false), crawl.WithMaxTries(1),
		crawl.WithMaxPages(1), crawl.WithMaxDuration(100*time.Millisecond))
	if err != nil {
		t.Errorf("Run: got error %v, want nil (a budget ended the crawl)", err)
	}
	if stats == nil || stats.Budget == "" {
		t.Errorf("Stats: got %+v, want a Budget", stats)
	}
}

// A crawl of many hosts uses its connections again: hosts take turns in
// runs (internal/sched), so a host's next request finds the connection
// its last one left idle, where strict rotation over hundreds of hosts
// dialed anew for nearly every request.
func TestManyHostsReuseConnections(t *testing.T) {
	const hosts, perHost = 300, 10
	site := crawltest.Start(t)
	site.Handle("/p/", hostsPage(hosts, perHost))
	site.Handle("/robots.txt", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "User-agent: *\nAllow: /\n")
	}))
	var dials atomic.Int64
	roots := make([]string, hosts)
	for h := range roots {
		roots[h] = fmt.Sprintf("http://h%d.test/p/0", h)
	}
	c, err := crawl.New(crawl.WithWorkers(8), crawl.WithHostWorkers(1),
		crawl.WithTransportWrapper(func(rt http.RoundTripper) http.RoundTripper {
			t := rt.(*http.Transport)
			t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
				dials.Add(1)
				return site.DialContext(ctx, network, addr)
			}
			return t
		}))
	if err != nil {
		t.Fatal(err)
	}
	stats, err := c.Run(context.Background(), roots...)
	if err != nil {
		t.Fatal(err)
	}
	if stats.HTML != hosts*perHost || stats.Failures != 0 {
		t.Fatalf("got %d pages, %d failures; want %d pages, none failed", stats.HTML, stats.Failures, hosts*perHost)
	}
	// A host needs one connection (HostWorkers 1) if its requests follow
	// each other; one for each of its 11 requests (robots.txt first) in
	// strict rotation over 300 hosts with 32 idle connections kept.
	t.Logf("%d dials", dials.Load())
	if n := dials.Load(); n > 2*hosts {
		t.Errorf("%d requests to %d hosts dialed %d connections, want at most %d (connections used again)", hosts*(perHost+1), hosts, n, 2*hosts)
	}
}

// A robots.txt redirect is one more request to its host: the host's next
// request, the first page, waits its delay after the last redirect's
// target was requested, not only after the robots.txt itself.
func TestRobotsRedirectHostDelay(t *testing.T) {
	const d = 200 * time.Millisecond
	site := crawltest.Start(t)
	site.Redirect("/robots.txt", http.StatusFound, "/robots1.txt")
	site.Redirect("/robots1.txt", http.StatusFound, "/robots2.txt")
	site.Body("/robots2.txt", "text/plain", "User-agent: *\nAllow: /\n")
	site.Page("/", "/a")
	site.Page("/a")
	c, err := crawl.New(crawl.WithHTTPClient(site.Client()), crawl.WithHostDelay(d))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Run(context.Background(), "http://www.example.com/"); err != nil {
		t.Fatal(err)
	}
	reqs := site.Requests()
	var order []string
	for _, r := range reqs {
		order = append(order, r.URI)
	}
	if got, want := strings.Join(order, " "), "/robots.txt /robots1.txt /robots2.txt / /a"; got != want {
		t.Fatalf("requests %q, want %q", got, want)
	}
	// The frontier spaces the starts of the requests; the server sees
	// them arrive, each a little after its start (a loaded machine's
	// scheduling, a new connection): 20 ms of that is allowed.
	const slack = 20 * time.Millisecond
	for i := 1; i < len(reqs); i++ {
		if gap := reqs[i].Time.Sub(reqs[i-1].Time); gap < d/2-slack {
			t.Errorf("%s went %v after %s, want at least %v (WithHostDelay(%v): never under d/2, less %v of the arrival's own delay)",
				reqs[i].URI, gap, reqs[i-1].URI, d/2-slack, d, slack)
		}
	}
}

// A Run cancelled by its caller after the page budget was spent, while the
// pages in flight finish, was cancelled: its error is the context's, and
// Stats.Budget is empty, as its doc says.
func TestBudgetSpentThenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	site := crawltest.Start(t)
	site.Page("/", "/a", "/b", "/c")
	site.Handle("/a", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cancel() // the budget of 2 is spent: / and /a
		<-r.Context().Done()
	}))
	c, err := crawl.New(crawl.WithHTTPClient(site.Client()), crawl.WithWorkers(1),
		crawl.WithRobots(false), crawl.WithMaxPages(2))
	if err != nil {
		t.Fatal(err)
	}
	stats, err := c.Run(ctx, "http://www.example.com/")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: got %v, want context.Canceled", err)
	}
	if stats.Budget != "" || stats.Todo != 3 {
		t.Errorf("Budget %q, Todo %d; want \"\" (cancelled) and 3 (/a given back, /b and /c never taken)", stats.Budget, stats.Todo)
	}
}

// WithMaxPages counts every request but robots.txt: requisites and
// external checks spend it as pages do, and a URL robots.txt disallows
// does not.
func TestMaxPagesCountsEveryKind(t *testing.T) {
	site := crawltest.Start(t)
	site.Robots("User-agent: *\nDisallow: /private\n")
	site.Body("/", "text/html", `<a href="/private">p</a><img src="/i.png"><a href="http://other.test/x">x</a><a href="/a">a</a><a href="/b">b</a>`)
	site.Body("/i.png", "image/png", "png")
	site.Page("/a")
	site.Page("/b")
	site.Host("other.test").Page("/x")
	for _, max := range []int{1, 2, 3, 4, 5} {
		c, err := crawl.New(crawl.WithHTTPClient(site.Client()), crawl.WithWorkers(1),
			crawl.WithRequisites(true), crawl.WithCheckExternal(true), crawl.WithMaxPages(max))
		if err != nil {
			t.Fatal(err)
		}
		site.Reset()
		stats, err := c.Run(context.Background(), "http://www.example.com/")
		if err != nil {
			t.Fatal(err)
		}
		// /, /i.png, http://other.test/x, /a, /b: five requests.
		want, budget := min(max, 5), "max_pages"
		if max >= 5 {
			budget = ""
		}
		if got := site.TotalExceptRobots(); got != want || stats.Budget != budget {
			t.Errorf("WithMaxPages(%d): %d requests but robots.txt, Budget %q; want %d, %q", max, got, stats.Budget, want, budget)
		}
	}
}
