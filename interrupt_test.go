package crawl_test

// An interrupt loses nothing: a URL whose fetch the caller's cancellation
// (or WithMaxDuration) cut short goes back to the frontier unfinished,
// without a Result, and a later Run on the same frontier fetches it. And a
// running crawl takes new URLs.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/asyncrawl/crawl"
)

// A retry cut short by the cancellation is not a failure: no Result, and
// the URL is in Todo.
func TestInterruptRetryGoesBack(t *testing.T) {
	var tries atomic.Int64
	second := make(chan struct{})
	mux := http.NewServeMux()
	mux.Handle("/{$}", htmlPage(crawlerLinks("/flaky")))
	mux.HandleFunc("/flaky", func(w http.ResponseWriter, r *http.Request) {
		if tries.Add(1) == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		close(second)
		<-r.Context().Done()
	})
	s := newSite(t, mux)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-second:
			cancel()
		case <-time.After(20 * time.Second):
		}
	}()
	stats, res, err := crawlSite(t, ctx, []string{s.URL + "/"}, crawl.WithBackoff(0, 0))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: got %v, want context.Canceled", err)
	}
	if r, ok := res[s.URL+"/flaky"]; ok {
		t.Errorf("/flaky: got a Result %+v, want none (its second try was cut short by the cancellation)", r)
	}
	if stats.Todo != 1 || stats.Failures != 0 {
		t.Errorf("Todo %d, Failures %d; want 1, 0", stats.Todo, stats.Failures)
	}
}

// At WithMaxDuration, a URL waiting to be retried goes back unfinished.
func TestInterruptMaxDurationRetry(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("/{$}", htmlPage(crawlerLinks("/busy")))
	mux.HandleFunc("/busy", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "3600")
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	s := newSite(t, mux)
	stats, res, err := crawlSite(t, context.Background(), []string{s.URL + "/"}, crawl.WithMaxDuration(500*time.Millisecond))
	if err != nil {
		t.Fatalf("Run: got %v, want nil", err)
	}
	if r, ok := res[s.URL+"/busy"]; ok {
		t.Errorf("/busy: got a Result %+v, want none (it waits to be retried)", r)
	}
	if stats.Todo != 1 || stats.Budget != "max_duration" {
		t.Errorf("Todo %d, Budget %q; want 1, max_duration", stats.Todo, stats.Budget)
	}
}

// A Run cancelled part way leaves its frontier holding what is left, the
// URLs cut short included; a second Run on it finishes the crawl, and
// every page has exactly one Result across the two.
func TestInterruptResumeMemoryFrontier(t *testing.T) {
	const pages = 40
	mux := http.NewServeMux()
	var links []string
	for i := range pages {
		links = append(links, fmt.Sprintf("/p%d", i))
	}
	mux.Handle("/{$}", htmlPage(crawlerLinks(links...)))
	var served atomic.Int64
	gate := make(chan struct{})
	mux.HandleFunc("/{p}", func(w http.ResponseWriter, r *http.Request) {
		if served.Add(1) > 10 {
			select {
			case <-gate:
			case <-r.Context().Done():
				return
			}
		}
		htmlPage("leaf")(w, r)
	})
	s := newSite(t, mux)
	f := crawl.NewMemoryFrontier()
	var got results
	c, err := crawl.New(crawl.WithFrontier(f), crawl.WithWorkers(4), crawl.WithResultHook(got.hook))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for served.Load() < 14 {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	stats1, err := c.Run(ctx, s.URL+"/")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("first Run: got %v, want context.Canceled", err)
	}
	if stats1.Todo == 0 || stats1.Failures != 0 {
		t.Fatalf("first Run: Todo %d, Failures %d; want some left and no failure", stats1.Todo, stats1.Failures)
	}
	close(gate)
	stats2, err := c.Run(context.Background(), s.URL+"/")
	if err != nil {
		t.Fatalf("second Run: %v", err)
	}
	res := got.byURL(t)
	if len(res) != pages+1 || stats2.Todo != 0 {
		t.Errorf("got %d Results over two Runs, Todo %d at the end; want %d, 0", len(res), stats2.Todo, pages+1)
	}
	if stats1.Done+stats2.Done != pages+1 {
		t.Errorf("Done %d + %d, want %d", stats1.Done, stats2.Done, pages+1)
	}
}

// A running crawl takes new URLs from the program until Close, and they
// are scoped and deduped like links.
func TestStartAdd(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("/{$}", htmlPage(crawlerLinks("/a")))
	mux.HandleFunc("/{p}", htmlPage("leaf"))
	s := newSite(t, mux)
	defer checkNoLeak(t)()
	var got results
	rootDone := make(chan struct{})
	var once sync.Once
	c, err := crawl.New(crawl.WithWorkers(4), crawl.WithResultHook(func(r crawl.Result) {
		got.hook(r)
		once.Do(func() { close(rootDone) })
	}))
	if err != nil {
		t.Fatal(err)
	}
	cr, err := c.Start(crawlerCtx(t), s.URL+"/")
	if err != nil {
		t.Fatal(err)
	}
	<-rootDone
	// The crawl has fetched what it knew; it waits for more.
	var wg sync.WaitGroup
	var added atomic.Int64
	for g := range 8 {
		wg.Go(func() {
			for i := range 10 {
				n, err := cr.Add(fmt.Sprintf("%s/x%d", s.URL, i), s.URL+"/a", "http://elsewhere.example/z")
				if !errors.Is(err, crawl.ErrOutOfScope) || errors.Is(err, crawl.ErrBadRoot) {
					t.Errorf("goroutine %d: Add: got %v, want the other host's ErrOutOfScope only", g, err)
				}
				added.Add(int64(n))
			}
		})
	}
	wg.Wait()
	if _, err := cr.Add("mailto:x@y"); !errors.Is(err, crawl.ErrBadRoot) {
		t.Errorf("Add(mailto:...): got %v, want ErrBadRoot", err)
	}
	cr.Close()
	stats, err := cr.Wait()
	if err != nil {
		t.Fatalf("Wait: %v", err)
	}
	if _, err := cr.Add(s.URL + "/late"); !errors.Is(err, crawl.ErrCrawlClosed) {
		t.Errorf("Add after Close: got %v, want ErrCrawlClosed", err)
	}
	res := got.byURL(t)
	for i := range 10 {
		if _, ok := res[fmt.Sprintf("%s/x%d", s.URL, i)]; !ok {
			t.Errorf("/x%d added but got no Result", i)
		}
	}
	// /a may have come from the root's link first; either way once.
	if added.Load() < 10 || added.Load() > 11 || stats.Done != 12 || len(res) != 12 {
		t.Errorf("added %d, Done %d, Results %d; want 10 or 11, 12, 12", added.Load(), stats.Done, len(res))
	}
	s.wantHits(t, "/a", 1)
}

// Add says which URLs it refused and why, one error each, and adds the
// rest; a URL seen before is no error.
func TestStartAddRefusals(t *testing.T) {
	s := newSite(t, htmlPage("leaf"))
	defer checkNoLeak(t)()
	c, err := crawl.New(
		crawl.WithExclude(`/excluded$`),
		crawl.WithFilter(func(u *url.URL) bool { return u.Path != "/filtered" }),
	)
	if err != nil {
		t.Fatal(err)
	}
	cr, err := c.Start(crawlerCtx(t), s.URL+"/")
	if err != nil {
		t.Fatal(err)
	}
	defer cr.Wait()
	defer cr.Close()
	for _, tt := range []struct {
		urls             []string
		added            int
		badRoot, outside int // refusals wrapping ErrBadRoot, ErrOutOfScope
	}{
		{[]string{s.URL + "/new"}, 1, 0, 0},
		{[]string{s.URL + "/new"}, 0, 0, 0}, // a duplicate
		{[]string{"/relative/path"}, 0, 1, 0},
		{[]string{"./here", "../up", "mailto:x@y"}, 0, 3, 0},
		{[]string{"http://elsewhere.example/z"}, 0, 0, 1},
		{[]string{s.URL + "/excluded"}, 0, 0, 1},
		{[]string{s.URL + "/filtered"}, 0, 0, 1},
		{[]string{"/rel", s.URL + "/b", "http://elsewhere.example/", s.URL + "/c"}, 2, 1, 1},
	} {
		n, err := cr.Add(tt.urls...)
		var errs []error
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			errs = j.Unwrap()
		} else if err != nil {
			errs = []error{err}
		}
		var bad, out int
		for _, e := range errs {
			switch {
			case errors.Is(e, crawl.ErrBadRoot):
				bad++
			case errors.Is(e, crawl.ErrOutOfScope):
				out++
			default:
				t.Errorf("Add(%q): error %v wraps neither ErrBadRoot nor ErrOutOfScope", tt.urls, e)
			}
			if !strings.Contains(e.Error(), "add") || strings.Contains(e.Error(), "root") {
				t.Errorf("Add(%q): error %q, want one that says add, not root", tt.urls, e)
			}
		}
		if n != tt.added || bad != tt.badRoot || out != tt.outside {
			t.Errorf("Add(%q) = %d, %v; got %d added, %d ErrBadRoot, %d ErrOutOfScope; want %d, %d, %d",
				tt.urls, n, err, n, bad, out, tt.added, tt.badRoot, tt.outside)
		}
	}
	for _, u := range []string{"/relative/path", "./here", "../up", "http://elsewhere.example/z", s.URL + "/excluded"} {
		_, err := cr.Add(u)
		if name := strings.TrimPrefix(strings.TrimPrefix(u, "http://elsewhere.example"), s.URL); !strings.Contains(fmt.Sprint(err), name) {
			t.Errorf("Add(%q): error %v does not name it", u, err)
		}
	}
}

// A crawl started with a page budget ends when the budget is spent, Close
// or not, as Start says; and one that ran dry under its budget goes on
// with what Add gives it, until Close.
func TestStartBudgetEnds(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("/{$}", htmlPage(crawlerLinks("/a", "/b", "/c", "/d", "/e")))
	mux.HandleFunc("/{p}", htmlPage("leaf"))
	s := newSite(t, mux)
	defer checkNoLeak(t)()
	c, err := crawl.New(crawl.WithWorkers(2), crawl.WithMaxPages(2))
	if err != nil {
		t.Fatal(err)
	}
	cr, err := c.Start(crawlerCtx(t), s.URL+"/")
	if err != nil {
		t.Fatal(err)
	}
	ended := make(chan struct{})
	var stats *crawl.Stats
	go func() {
		stats, err = cr.Wait()
		close(ended)
	}()
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		cr.Close()
		<-ended
		t.Fatal("the crawl did not end within 10 s of its budget spent, without Close")
	}
	if err != nil || stats.Budget != "max_pages" || stats.Todo == 0 {
		t.Errorf("Wait: %+v, %v; want the max_pages budget, URLs left", stats, err)
	}
	if _, err := cr.Add(s.URL + "/late"); !errors.Is(err, crawl.ErrCrawlClosed) {
		t.Errorf("Add after the budget ended the crawl: %v, want ErrCrawlClosed", err)
	}

	// Under its budget and dry: it waits for Add, then for Close.
	c, err = crawl.New(crawl.WithWorkers(2), crawl.WithMaxPages(100))
	if err != nil {
		t.Fatal(err)
	}
	cr, err = c.Start(crawlerCtx(t), s.URL+"/a")
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // /a fetched: dry
	if n, err := cr.Add(s.URL + "/b"); n != 1 || err != nil {
		t.Fatalf("Add to a crawl dry under its budget: %d, %v; want 1, nil", n, err)
	}
	cr.Close()
	stats, err = cr.Wait()
	if err != nil || stats.Done != 2 || stats.Budget != "" {
		t.Errorf("Wait: %+v, %v; want 2 done, no budget", stats, err)
	}
}

// TestAddRacingEnd: an Add whose checks are under way when Close is
// called, or when the page budget ends the crawl, pushes its URL before
// the end is decided: after Close, the URL is fetched and has its Result;
// after the budget, it is left in Stats.Todo. Neither is lost.
func TestAddRacingEnd(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/{p...}", htmlPage("leaf"))
	s := newSite(t, mux)
	for _, budget := range []bool{false, true} {
		t.Run(fmt.Sprintf("budget=%v", budget), func(t *testing.T) {
			defer checkNoLeak(t)()
			late := s.URL + fmt.Sprintf("/late-%v", budget)
			inFilter, release := make(chan struct{}), make(chan struct{})
			var results sync.Map
			opts := []crawl.Option{
				crawl.WithWorkers(2),
				crawl.WithResultHook(func(r crawl.Result) {
					n, _ := results.LoadOrStore(r.URL, new(atomic.Int64))
					n.(*atomic.Int64).Add(1)
				}),
				crawl.WithFilter(func(u *url.URL) bool {
					if u.String() == late {
						close(inFilter)
						<-release
					}
					return true
				}),
			}
			if budget {
				opts = append(opts, crawl.WithMaxPages(1))
			}
			c, err := crawl.New(opts...)
			if err != nil {
				t.Fatal(err)
			}
			cr, err := c.Start(crawlerCtx(t), s.URL+"/")
			if err != nil {
				t.Fatal(err)
			}
			type added struct {
				n   int
				err error
			}
			addDone := make(chan added, 1)
			go func() {
				n, err := cr.Add(late)
				addDone <- added{n, err}
			}()
			<-inFilter // the Add is under way
			if !budget {
				cr.Close()
			}
			// The end, by Close or by the budget (the root's page), is
			// decided while the Add checks its URL.
			time.AfterFunc(200*time.Millisecond, func() { close(release) })
			stats, err := cr.Wait()
			a := <-addDone
			if err != nil || a.err != nil || a.n != 1 {
				t.Fatalf("Wait: %v; Add: %d, %v; want nil, and 1 added", err, a.n, a.err)
			}
			got := int64(0)
			if n, ok := results.Load(late); ok {
				got = n.(*atomic.Int64).Load()
			}
			if budget {
				if got != 0 || stats.Todo != 1 || stats.Budget != "max_pages" {
					t.Errorf("budget spent as Add ran: %d Results of %s, Todo %d, budget %q; want none, Todo 1 (it), max_pages", got, late, stats.Todo, stats.Budget)
				}
				return
			}
			if got != 1 || stats.Done != 2 {
				t.Errorf("Close as Add ran: %d Results of %s, %d done; want 1, 2 (the root and it)", got, late, stats.Done)
			}
		})
	}
}

// ownCtx is a Context of the program's own type, not one of package
// context's, as tracing libraries make: a context made under it that is
// never cancelled keeps a goroutine waiting on it.
type ownCtx struct{ done chan struct{} }

func (c ownCtx) Deadline() (time.Time, bool) { return time.Time{}, false }
func (c ownCtx) Done() <-chan struct{}       { return c.done }
func (c ownCtx) Value(any) any               { return nil }
func (c ownCtx) Err() error {
	select {
	case <-c.done:
		return context.Canceled
	default:
		return nil
	}
}

// TestMaxDurationNoLeak: Run under WithMaxDuration leaves no goroutine
// behind, whatever the type of its ctx.
func TestMaxDurationNoLeak(t *testing.T) {
	s := newSite(t, htmlPage("leaf"))
	ctx := ownCtx{done: make(chan struct{})}
	defer close(ctx.done)
	c, err := crawl.New(crawl.WithMaxDuration(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	check := checkNoLeak(t)
	for range 5 {
		if _, err := c.Run(ctx, s.URL+"/"); err != nil {
			t.Fatal(err)
		}
	}
	check()
}

// TestInterruptExtractorGoesBack: a custom link extractor (untyped or
// typed) that returns an error because the Run's ctx ended, by the
// caller's cancel or WithMaxDuration, cuts the page short as a fetch would
// be: no Result, the URL in Todo, and a later Run on the same frontier
// reads its links, so that the resumed crawl finds the whole site.
func TestInterruptExtractorGoesBack(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("/{$}", htmlPage(crawlerLinks("/a", "/b")))
	mux.Handle("/a", htmlPage(crawlerLinks("/a1", "/a2")))
	mux.HandleFunc("/{p}", htmlPage("leaf"))
	s := newSite(t, mux)
	var block atomic.Bool
	entered := make(chan struct{}, 1)
	wait := func(ctx context.Context, p *crawl.Page) error {
		if block.Load() && p.URL.Path == "/" {
			select {
			case entered <- struct{}{}:
			default:
			}
			<-ctx.Done()
			return ctx.Err()
		}
		return nil
	}
	untyped := crawl.WithLinkExtractor(func(ctx context.Context, p *crawl.Page) ([]*url.URL, error) {
		if err := wait(ctx, p); err != nil {
			return nil, err
		}
		return crawl.ExtractLinks(ctx, p)
	})
	typed := crawl.WithTypedLinkExtractor(func(ctx context.Context, p *crawl.Page) ([]crawl.Link, error) {
		if err := wait(ctx, p); err != nil {
			return nil, err
		}
		return crawl.ExtractTypedLinks(ctx, p)
	})
	for _, tc := range []struct {
		name     string
		ext      crawl.Option
		deadline bool // WithMaxDuration, not the caller's cancel
	}{
		{"untyped", untyped, false},
		{"typed", typed, false},
		{"typed,max_duration", typed, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			block.Store(true)
			front := crawl.NewMemoryFrontier()
			var mu sync.Mutex
			results := map[string]int{}
			hook := crawl.WithResultHook(func(r crawl.Result) {
				mu.Lock()
				defer mu.Unlock()
				results[r.URL]++
				if r.Err != nil {
					t.Errorf("%s: Result with error %v, want none or a clean one", r.URL, r.Err)
				}
			})
			opts := []crawl.Option{crawl.WithFrontier(front), hook, tc.ext}
			ctx, cancel := context.WithCancel(crawlerCtx(t))
			defer cancel()
			if tc.deadline {
				opts = append(opts, crawl.WithMaxDuration(300*time.Millisecond))
			} else {
				go func() { <-entered; cancel() }()
			}
			c, err := crawl.New(opts...)
			if err != nil {
				t.Fatal(err)
			}
			stats, err := c.Run(ctx, s.URL+"/")
			if tc.deadline && (err != nil || stats.Budget != "max_duration") || !tc.deadline && !errors.Is(err, context.Canceled) {
				t.Fatalf("first Run: %v, budget %q", err, stats.Budget)
			}
			if stats.Done != 0 || stats.Todo != 1 {
				t.Errorf("first Run: %d done, Todo %d; want 0, 1 (the root, back unfinished)", stats.Done, stats.Todo)
			}
			block.Store(false)
			c, err = crawl.New(crawl.WithFrontier(front), hook, tc.ext)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Run(crawlerCtx(t), s.URL+"/"); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			for _, p := range []string{"/", "/a", "/b", "/a1", "/a2"} {
				if n := results[s.URL+p]; n != 1 {
					t.Errorf("%s: %d Results over both Runs, want 1", p, n)
				}
			}
		})
	}
}

// A Run whose frontier fails (closed under it) returns with the frontier's
// error at once: the fetches in flight are cut, not waited out to their
// timeout.
func TestInterruptFrontierFails(t *testing.T) {
	arrived := make(chan struct{})
	var once sync.Once
	mux := http.NewServeMux()
	mux.Handle("/{$}", htmlPage(crawlerLinks("/hang")))
	mux.HandleFunc("/hang", func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() { close(arrived) })
		<-r.Context().Done()
	})
	s := newSite(t, mux)
	f := crawl.NewMemoryFrontier()
	c, err := crawl.New(crawl.WithFrontier(f), crawl.WithRobots(false), crawl.WithRequestTimeout(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		select {
		case <-arrived:
			f.Close()
		case <-time.After(20 * time.Second):
		}
	}()
	start := time.Now()
	_, err = c.Run(crawlerCtx(t), s.URL+"/")
	if !errors.Is(err, crawl.ErrFrontierClosed) {
		t.Errorf("Run with its frontier closed under it: %v, want ErrFrontierClosed", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Run returned %v after its frontier failed, want at once (its fetch in flight cut)", d)
	}
}
