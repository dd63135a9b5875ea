package crawl_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/asyncrawl/crawl"
	"github.com/asyncrawl/crawl/crawltest"
)

// The hostile-site suite: each trap of crawltest against a crawl of
// http://www.example.com/, and for each the guarantees that hold whatever a
// site does (see hostileCrawl).

// hostileStall is how long a hostile crawl may go without delivering a
// Result before it counts as one that would not end, and hostileDeadline
// bounds it whatever it delivers. Both are far above what any of them
// takes on an idle machine; a crawl still making progress on a loaded one
// (CI runs packages side by side) is given the time it needs, up to the
// deadline, so that failing means a crawl that would not end, not a slow
// machine.
const (
	hostileStall    = 20 * time.Second
	hostileDeadline = 2 * time.Minute
)

// hostileRoot is the root of every hostile crawl, served by the Site
// through its client.
const hostileRoot = "http://www.example.com/"

// hostileCrawl crawls root on site with opts and checks what every
// crawl must keep on a hostile site: Run returns on its own (see
// hostileStall); every URL the site was sent (robots.txt aside) has
// exactly one Result, and every Result with a response was sent;
// Stats.Done counts the Results; and no goroutine is left once the
// client's idle connections are closed. It returns the Stats and the Results by URL.
func hostileCrawl(t *testing.T, site *crawltest.Site, root string, opts ...crawl.Option) (*crawl.Stats, map[string]crawl.Result) {
	t.Helper()
	client := site.Client()
	leaks := checkNoLeak(t)
	ctx, cancel := context.WithTimeoutCause(context.Background(), hostileDeadline,
		fmt.Errorf("still running after %v", hostileDeadline))
	defer cancel()
	var got results
	c, err := crawl.New(append([]crawl.Option{crawl.WithHTTPClient(client), crawl.WithResultHook(got.hook)}, opts...)...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ctx, stalled := watchStall(ctx, &got, hostileStall)
	stats, err := c.Run(ctx, root)
	cut := context.Cause(ctx) // before stalled, which cancels ctx
	stalled()
	if cut != nil {
		t.Fatalf("Run: %v with %d Results delivered, want it to end on its own (err %v)", cut, got.len(), err)
	}
	if err != nil {
		t.Fatalf("Run: got %v, want nil", err)
	}
	// Site.Client keeps connections alive, as browsers do; their
	// goroutines are the client's, not the Run's.
	client.CloseIdleConnections()
	leaks()

	res := got.byURL(t)
	if stats.Done != len(got.all) {
		t.Errorf("Stats.Done = %d, want %d (Results delivered)", stats.Done, len(got.all))
	}
	sent := map[string]int{}
	for _, rq := range site.Requests() {
		if rq.URI == "/robots.txt" {
			continue
		}
		sent["http://"+rq.Host+rq.URI]++
	}
	// A URL sent whose fetch WithMaxDuration cut short goes back
	// unfinished: it has no Result and is counted in Todo.
	var missing []string
	for u := range sent {
		if _, ok := res[u]; !ok {
			missing = append(missing, u)
		}
	}
	if len(missing) > 0 && (stats.Budget != "max_duration" || len(missing) > stats.Todo) {
		t.Errorf("%d URLs sent have no Result (%v), Todo %d, Budget %q; want a Result for each, unless cut short by max_duration and in Todo",
			len(missing), missing, stats.Todo, stats.Budget)
	}
	for u, r := range res {
		if r.Status != 0 && sent[u] == 0 {
			t.Errorf("%s has a Result with status %d, but the site was never sent it", u, r.Status)
		}
	}
	return stats, res
}

// watchStall returns a context under ctx for a crawl, cancelled with a
// cause saying so once got has had no new Result for stall, and the
// function that stops the watch and waits for it: call it when Run has
// returned.
func watchStall(ctx context.Context, got *results, stall time.Duration) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(stall / 100)
		defer tick.Stop()
		n, since := got.len(), time.Now()
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-tick.C:
				if m := got.len(); m != n {
					n, since = m, now
				} else if now.Sub(since) >= stall {
					cancel(fmt.Errorf("no new Result for %v", stall))
					return
				}
			}
		}
	}()
	return ctx, func() {
		cancel(nil)
		<-done
	}
}

// wantRefused fails the test unless stats counts exactly want refusals for
// each reason, and none for the others.
func wantRefused(t *testing.T, stats *crawl.Stats, want map[string]int) {
	t.Helper()
	for _, reason := range []string{"url_length", "links_per_page", "segment_repeats"} {
		if got := stats.Refused[reason]; got != want[reason] {
			t.Errorf("Stats.Refused[%q]: got %d, want %d (all: %v)", reason, got, want[reason], stats.Refused)
		}
	}
}

func TestHostileCalendar(t *testing.T) {
	tests := []struct {
		name   string
		opt    crawl.Option
		budget string
	}{
		{"max pages", crawl.WithMaxPages(150), "max_pages"},
		{"max duration", crawl.WithMaxDuration(300 * time.Millisecond), "max_duration"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			site := crawltest.Start(t)
			site.Page("/", "/calendar/")
			site.Handle("/calendar/", crawltest.Calendar())
			stats, res := hostileCrawl(t, site, hostileRoot, tt.opt, crawl.WithWorkers(4), crawl.WithHostWorkers(4))
			if stats.Budget != tt.budget {
				t.Errorf("Budget: got %q, want %q", stats.Budget, tt.budget)
			}
			if tt.budget == "max_pages" && (len(res) != 150 || stats.Todo == 0) {
				t.Errorf("got %d Results, Todo %d; want 150 (WithMaxPages) and days still queued", len(res), stats.Todo)
			}
			// A calendar's URLs are short and never repeat a segment:
			// only a budget ends it.
			wantRefused(t, stats, nil)
		})
	}
}

func TestHostileRepeater(t *testing.T) {
	site := crawltest.Start(t)
	site.Page("/", "/a/")
	site.Handle("/a/", crawltest.Repeater())
	stats, res := hostileCrawl(t, site, hostileRoot)
	// "/a/a/" links to "/a/a/a/", which holds "a" three times.
	want := []string{hostileRoot, hostileRoot + "a/", hostileRoot + "a/a/"}
	if got := slices.Sorted(maps.Keys(res)); !slices.Equal(got, want) {
		t.Errorf("Results: got %v, want %v", got, want)
	}
	wantRefused(t, stats, map[string]int{"segment_repeats": 1})
	var buf bytes.Buffer
	if err := stats.WriteReport(&buf); err != nil {
		t.Fatalf("WriteReport: %v", err)
	}
	if !strings.Contains(buf.String(), " 1 refused_segment_repeats\n") {
		t.Errorf("report lacks the refusal counter, want a line \"1 refused_segment_repeats\":\n%s", buf.String())
	}
}

func TestHostileURLLength(t *testing.T) {
	// A repeater whose segment is 100 bytes long grows the URL by 101
	// bytes a page; with the segment rule off, the length limit ends it.
	seg := strings.Repeat("s", 100)
	site := crawltest.Start(t)
	site.Page("/", "/"+seg+"/")
	site.Handle("/"+seg+"/", crawltest.Repeater())
	stats, res := hostileCrawl(t, site, hostileRoot, crawl.WithMaxSegmentRepeats(0))
	// The root, then one page for each number of segments that fits.
	pages := 1
	for u := hostileRoot + seg + "/"; len(u) <= crawl.DefaultMaxURLLength; u += seg + "/" {
		pages++
	}
	if len(res) != pages {
		t.Errorf("got %d Results, want %d (the root and every URL up to %d bytes)", len(res), pages, crawl.DefaultMaxURLLength)
	}
	for u := range res {
		if len(u) > crawl.DefaultMaxURLLength {
			t.Errorf("fetched a URL of %d bytes, want at most %d", len(u), crawl.DefaultMaxURLLength)
		}
	}
	wantRefused(t, stats, map[string]int{"url_length": 1})
}

func TestHostileRedirects(t *testing.T) {
	tests := []struct {
		name    string
		mount   func(site *crawltest.Site) // declares the trap under /r/
		results int                        // Results, the root's included
		fails   map[string]int             // Stats.FailKinds
		refused map[string]int
	}{{
		name:    "loop of 3",
		mount:   func(s *crawltest.Site) { s.Handle("/r/", crawltest.RedirectLoop(http.StatusFound, 3)) },
		results: 1 + 4, // "/r/", then "/r/0" to "/r/2", whose target was seen
	}, {
		name:    "loop to itself",
		mount:   func(s *crawltest.Site) { s.Handle("/r/", crawltest.RedirectLoop(http.StatusMovedPermanently, 1)) },
		results: 1 + 2, // "/r/", "/r/0"
	}, {
		name:    "endless chain",
		mount:   func(s *crawltest.Site) { s.Handle("/r/", crawltest.RedirectChain(http.StatusFound)) },
		results: 1 + 1 + crawl.DefaultMaxRedirects, // the last one has no redirect left
		fails:   map[string]int{"too_many_redirects": 1},
	}, {
		name:    "no Location",
		mount:   func(s *crawltest.Site) { s.Redirect("/r/", http.StatusFound, "") },
		results: 1 + 1,
		fails:   map[string]int{"no_location": 1},
	}, {
		name:    "bad Location",
		mount:   func(s *crawltest.Site) { s.Redirect("/r/", http.StatusFound, crawltest.BadLocation) },
		results: 1 + 1,
		fails:   map[string]int{"no_location": 1},
	}, {
		name:    "to a repeating path",
		mount:   func(s *crawltest.Site) { s.Redirect("/r/", http.StatusFound, "/x/r/x/r/x/") },
		results: 1 + 1,
		refused: map[string]int{"segment_repeats": 1},
	}, {
		name: "to a long URL",
		mount: func(s *crawltest.Site) {
			s.Redirect("/r/", http.StatusFound, "/"+strings.Repeat("long", crawl.DefaultMaxURLLength/4))
		},
		results: 1 + 1,
		refused: map[string]int{"url_length": 1},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			site := crawltest.Start(t)
			site.Page("/", "/r/")
			tt.mount(site)
			stats, res := hostileCrawl(t, site, hostileRoot)
			if len(res) != tt.results {
				t.Errorf("got %d Results, want %d: %v", len(res), tt.results, slices.Sorted(maps.Keys(res)))
			}
			for kind, n := range tt.fails {
				if got := stats.FailKinds[kind]; got != n {
					t.Errorf("FailKinds[%q]: got %d, want %d (all: %v)", kind, got, n, stats.FailKinds)
				}
			}
			want := 0
			for _, n := range tt.fails {
				want += n
			}
			if stats.Failures != want {
				t.Errorf("Failures: got %d, want %d", stats.Failures, want)
			}
			for u, r := range res {
				if errors.Is(r.Err, crawl.ErrNoLocation) && r.NextURL != "" {
					t.Errorf("%s: NextURL %q with ErrNoLocation, want none", u, r.NextURL)
				}
			}
			wantRefused(t, stats, tt.refused)
		})
	}
}

func TestHostileManyLinks(t *testing.T) {
	const links = 100_000
	site := crawltest.Start(t)
	site.Handle("/", crawltest.ManyLinks(links, "/p/%d"))
	site.Page("/p/")

	peak := sampleHeap(t)
	stats, res := hostileCrawl(t, site, hostileRoot, crawl.WithWorkers(16), crawl.WithHostWorkers(16))
	grew := peak()

	if r := res[hostileRoot]; r.NumURLs != crawl.DefaultMaxLinksPerPage || r.NumNewURLs != crawl.DefaultMaxLinksPerPage {
		t.Errorf("root: got NumURLs %d, NumNewURLs %d, want %d each", r.NumURLs, r.NumNewURLs, crawl.DefaultMaxLinksPerPage)
	}
	if want := 1 + crawl.DefaultMaxLinksPerPage; len(res) != want {
		t.Errorf("got %d Results, want %d (the root and the first %d links)", len(res), want, crawl.DefaultMaxLinksPerPage)
	}
	// The page's links in document order: the first ones are followed.
	for _, i := range []int{0, crawl.DefaultMaxLinksPerPage - 1} {
		if u := fmt.Sprintf("%sp/%d", hostileRoot, i); res[u].Status != http.StatusOK {
			t.Errorf("%s: got status %d, want 200 (among the first links)", u, res[u].Status)
		}
	}
	if n := site.Count(fmt.Sprintf("/p/%d", crawl.DefaultMaxLinksPerPage)); n != 0 {
		t.Errorf("link %d was fetched %d times, want never (past the limit)", crawl.DefaultMaxLinksPerPage, n)
	}
	wantRefused(t, stats, map[string]int{"links_per_page": links - crawl.DefaultMaxLinksPerPage})

	// The page is 2.6 MB and its links, as URLs, some 20 MB; the 5,000
	// pages queued and fetched after it hold little. The bound is
	// generous, to catch a leak or a copy per link, not to measure.
	const bound = 64 << 20
	if grew > bound {
		t.Errorf("heap in use grew by %d MiB during the crawl, want at most %d MiB", grew>>20, bound>>20)
	}
	t.Logf("heap in use grew by at most %.1f MiB", float64(grew)/(1<<20))
}

// sampleHeap samples the heap in use every few milliseconds, from a
// collection done now, until the returned function is called; that returns
// the largest growth seen.
func sampleHeap(t *testing.T) func() uint64 {
	t.Helper()
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse
	var peak uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	})
	return func() uint64 {
		close(stop)
		wg.Wait()
		if peak < base {
			return 0
		}
		return peak - base
	}
}

func TestMaxLinksPerPage(t *testing.T) {
	site := crawltest.Start(t)
	// Duplicates and links out of scope do not count towards the limit;
	// the links after the third distinct one in scope are left unread.
	site.Page("/", "/a", "/a#top", "http://other.example/x", "/b", "/a", "/c", "/d", "/e", "/a")
	site.Page("/a")
	site.Page("/b")
	site.Page("/c")
	site.Page("/d")
	tests := []struct {
		limit int
		want  []string
		left  int
	}{
		{3, []string{"a", "b", "c"}, 3}, // "/d", "/e", "/a"
		{1, []string{"a"}, 6},           // "/b" onwards
		{0, []string{"a", "b", "c", "d", "e"}, 0},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.limit), func(t *testing.T) {
			site.Reset()
			stats, res := hostileCrawl(t, site, hostileRoot, crawl.WithMaxLinksPerPage(tt.limit))
			want := []string{hostileRoot}
			for _, p := range tt.want {
				want = append(want, hostileRoot+p)
			}
			if got := slices.Sorted(maps.Keys(res)); !slices.Equal(got, want) {
				t.Errorf("WithMaxLinksPerPage(%d): got Results %v, want %v", tt.limit, got, want)
			}
			refused := map[string]int{}
			if tt.left > 0 {
				refused["links_per_page"] = tt.left
			}
			wantRefused(t, stats, refused)
		})
	}
}

func TestTrapLimitsSpareRoots(t *testing.T) {
	// Roots are always fetched: the limits apply to what a site links to
	// and redirects to, not to what the program asked for.
	site := crawltest.Start(t)
	site.Handle("/a/a/a/", crawltest.Repeater())
	root := hostileRoot + "a/a/a/"
	stats, res := hostileCrawl(t, site, root, crawl.WithMaxURLLength(len(root)-1))
	if got, want := slices.Sorted(maps.Keys(res)), []string{root}; !slices.Equal(got, want) {
		t.Errorf("got Results %v, want %v", got, want)
	}
	// Its link, "/a/a/a/a/", is both too long and too repetitive; length
	// is checked first.
	wantRefused(t, stats, map[string]int{"url_length": 1})
}
