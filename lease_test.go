package crawl_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/asyncrawl/crawl"
)

// spyFrontier wraps a MemoryFrontier to see and change what the crawler
// asks of its frontier.
type spyFrontier struct {
	crawl.Frontier
	mu       sync.Mutex
	extends  map[string]int // Extend calls by URL
	outcomes []crawl.Outcome
	policy   crawl.Policy
	// refuse, if it returns true for a lease, makes Extend answer
	// ErrLeaseLost without asking the frontier: as a shared frontier
	// does for a holder whose lease was taken back.
	refuse func(l *crawl.Lease) bool
	// takeErrs is how many Takes fail before the frontier answers.
	takeErrs atomic.Int64
	acks     atomic.Int64
}

func newSpy() *spyFrontier {
	return &spyFrontier{Frontier: crawl.NewMemoryFrontier(), extends: map[string]int{}}
}

func (s *spyFrontier) Start(ctx context.Context, p crawl.Policy) error {
	s.mu.Lock()
	s.policy = p
	s.mu.Unlock()
	return s.Frontier.Start(ctx, p)
}

func (s *spyFrontier) Take(ctx context.Context) (*crawl.Lease, error) {
	if s.takeErrs.Add(-1) >= 0 {
		return nil, errors.New("spy: server away")
	}
	return s.Frontier.Take(ctx)
}

func (s *spyFrontier) Extend(ctx context.Context, l *crawl.Lease) error {
	s.mu.Lock()
	s.extends[l.URL]++
	refuse := s.refuse != nil && s.refuse(l)
	s.mu.Unlock()
	if refuse {
		return crawl.ErrLeaseLost
	}
	return s.Frontier.Extend(ctx, l)
}

func (s *spyFrontier) Ack(ctx context.Context, l *crawl.Lease, o crawl.Outcome) (int, error) {
	s.acks.Add(1)
	s.mu.Lock()
	s.outcomes = append(s.outcomes, o)
	s.mu.Unlock()
	return s.Frontier.Ack(ctx, l, o)
}

// A worker renews the lease it holds while a slow response takes many
// lease terms: the URL is fetched once, and never handed to another
// worker.
func TestLeaseRenewedWhileFetching(t *testing.T) {
	s := newSite(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			time.Sleep(400 * time.Millisecond)
		}
		htmlPage(`<a href="/slow">slow</a>`)(w, r)
	}))
	spy := newSpy()
	const term = 60 * time.Millisecond
	_, m, err := crawlSite(t, context.Background(), []string{s.URL + "/"},
		crawl.WithFrontier(spy), crawl.WithLeaseTerm(term), crawl.WithWorkers(4), crawl.WithRobots(false))
	if err != nil {
		t.Fatal(err)
	}
	s.wantHits(t, "/slow", 1)
	if len(m) != 2 {
		t.Errorf("%d Results, want 2", len(m))
	}
	spy.mu.Lock()
	defer spy.mu.Unlock()
	if spy.policy.LeaseTerm != term {
		t.Errorf("Policy.LeaseTerm = %v, want %v", spy.policy.LeaseTerm, term)
	}
	// 400 ms at a renewal every 20 ms: some 20; at least 5 shows the
	// heartbeat at work without asking the machine for exact timing.
	if n := spy.extends[s.URL+"/slow"]; n < 5 {
		t.Errorf("%d renewals of /slow's lease over 400 ms with a %v term, want several", n, term)
	}
}

// A worker whose lease is taken back abandons the URL: its fetch is cut
// short, it neither acks nor delivers a Result, and the worker that gets
// the URL next does. The URL ends with exactly one Result.
func TestLeaseLostAbandonsURL(t *testing.T) {
	var first atomic.Bool
	cut := make(chan struct{})
	s := newSite(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" && first.CompareAndSwap(false, true) {
			select {
			case <-r.Context().Done():
				close(cut) // the abandoned fetch was cut short
			case <-time.After(10 * time.Second):
			}
			return
		}
		htmlPage(`<a href="/slow">slow</a>`)(w, r)
	}))
	spy := newSpy()
	var lostID string
	spy.refuse = func(l *crawl.Lease) bool {
		if l.URL != s.URL+"/slow" {
			return false
		}
		if lostID == "" {
			lostID = l.ID
		}
		return l.ID == lostID
	}
	var got results
	c, err := crawl.New(crawl.WithFrontier(spy), crawl.WithLeaseTerm(300*time.Millisecond),
		crawl.WithWorkers(2), crawl.WithRobots(false), crawl.WithResultHook(got.hook))
	if err != nil {
		t.Fatal(err)
	}
	done := checkNoLeak(t)
	stats, err := c.Run(context.Background(), s.URL+"/")
	done()
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-cut:
	default:
		t.Error("the fetch of the lost lease was not cut short")
	}
	s.wantHits(t, "/slow", 2)
	m := got.byURL(t)
	if r, ok := m[s.URL+"/slow"]; !ok || r.Status != 200 {
		t.Errorf("/slow: %+v, want one Result with status 200", r)
	}
	if stats.Done != 2 || spy.acks.Load() != 2 {
		t.Errorf("Done %d, acks %d; want 2 and 2 (the lost lease is not acked)", stats.Done, spy.acks.Load())
	}
}

// A frontier that fails to hand out a lease (a shared one whose server is
// away) is asked again: the workers wait, and the crawl completes. The
// failure is logged once, not once a worker and Take (a crawl deleted
// under 100 workers logged 90 to 100 lines in a few milliseconds).
func TestTakeErrorsRetried(t *testing.T) {
	s := newSite(t, htmlPage(`<a href="/a">a</a><a href="/b">b</a>`))
	spy := newSpy()
	spy.takeErrs.Store(40)
	var log safeBuffer
	stats, m, err := crawlSite(t, context.Background(), []string{s.URL + "/"},
		crawl.WithFrontier(spy), crawl.WithWorkers(8), crawl.WithRobots(false),
		crawl.WithLogger(slog.New(slog.NewTextHandler(&log, nil))))
	if err != nil {
		t.Fatal(err)
	}
	if len(m) != 3 || stats.Done != 3 {
		t.Errorf("%d Results, Done %d; want 3", len(m), stats.Done)
	}
	if n := strings.Count(log.String(), "msg=frontier"); n != 1 {
		t.Errorf("40 Takes failed in a row: logged %d times, want once:\n%s", n, log.String())
	}
}

// statsFrontier is a StatsStore: it counts what it acks, as a shared
// frontier counts every process's acks.
type statsFrontier struct {
	*spyFrontier
	mu    sync.Mutex
	whole crawl.Stats
}

func (f *statsFrontier) Ack(ctx context.Context, l *crawl.Lease, o crawl.Outcome) (int, error) {
	n, err := f.spyFrontier.Ack(ctx, l, o)
	if err == nil && o.Result != nil {
		f.mu.Lock()
		f.whole.Add(o.Result)
		for k, v := range o.Refused {
			if f.whole.Refused == nil {
				f.whole.Refused = map[string]int{}
			}
			f.whole.Refused[k] += v
		}
		f.mu.Unlock()
	}
	return n, err
}

func (f *statsFrontier) Stats(ctx context.Context) (crawl.Stats, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.whole
	s.Done += 1000 // another process's share
	s.HTML += 1000
	return s, nil
}

// A Run on a StatsStore reports the whole crawl's Stats, and acks each
// page with the refusals its links met.
func TestStatsStoreReportsWholeCrawl(t *testing.T) {
	s := newSite(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			htmlPage(`<a href="/d1">d1</a><a href="/`+strings.Repeat("x", 300)+`">long</a>`)(w, r)
		case "/d1":
			htmlPage(`<a href="/d2">d2</a><a href="/d3">d3</a>`)(w, r)
		default:
			http.NotFound(w, r)
		}
	}))
	f := &statsFrontier{spyFrontier: newSpy()}
	c, err := crawl.New(crawl.WithFrontier(f), crawl.WithRobots(false), crawl.WithMaxDepth(1),
		crawl.WithMaxURLLength(200), crawl.WithWorkers(3))
	if err != nil {
		t.Fatal(err)
	}
	stats, err := c.Run(context.Background(), s.URL+"/")
	if err != nil {
		t.Fatal(err)
	}
	if stats.Done != 1002 || stats.HTML != 1002 || stats.Workers != 3 {
		t.Errorf("Done %d HTML %d Workers %d; want the store's 1002, 1002 and the Run's 3", stats.Done, stats.HTML, stats.Workers)
	}
	want := map[string]int{"max_depth": 2, "url_length": 1}
	if fmt.Sprint(stats.Refused) != fmt.Sprint(want) {
		t.Errorf("Refused = %v, want %v", stats.Refused, want)
	}
	var acked map[string]int
	f.mu.Lock()
	for _, o := range f.outcomes {
		for k, v := range o.Refused {
			if acked == nil {
				acked = map[string]int{}
			}
			acked[k] += v
		}
	}
	f.mu.Unlock()
	if fmt.Sprint(acked) != fmt.Sprint(want) {
		t.Errorf("Outcome.Refused over the acks = %v, want %v", acked, want)
	}
}

func TestWithLeaseTermValidated(t *testing.T) {
	for _, d := range []time.Duration{-time.Second, time.Millisecond} {
		_, err := crawl.New(crawl.WithLeaseTerm(d))
		if err == nil || !strings.Contains(err.Error(), "WithLeaseTerm") {
			t.Errorf("WithLeaseTerm(%v): err %v, want one naming the option", d, err)
		}
	}
	if _, err := crawl.New(crawl.WithLeaseTerm(0)); err != nil {
		t.Errorf("WithLeaseTerm(0): %v", err)
	}
}

// awayFrontier is a frontier whose server went away: its calls that end
// leases wait until their context is done.
type awayFrontier struct {
	*spyFrontier
	away chan struct{} // closed when the server goes away
}

func (f *awayFrontier) wait(ctx context.Context) error {
	select {
	case <-f.away:
		<-ctx.Done()
		return ctx.Err()
	default:
		return nil
	}
}

func (f *awayFrontier) Ack(ctx context.Context, l *crawl.Lease, o crawl.Outcome) (int, error) {
	if err := f.wait(ctx); err != nil {
		return 0, err
	}
	return f.spyFrontier.Ack(ctx, l, o)
}

func (f *awayFrontier) Retry(ctx context.Context, l *crawl.Lease, at time.Time) error {
	if err := f.wait(ctx); err != nil {
		return err
	}
	return f.spyFrontier.Retry(ctx, l, at)
}

func (f *awayFrontier) Counts(ctx context.Context) (crawl.Counts, error) {
	if err := f.wait(ctx); err != nil {
		return crawl.Counts{}, err
	}
	return f.spyFrontier.Counts(ctx)
}

// Stats makes awayFrontier a StatsStore, whose whole crawl's Stats the
// Run's end asks for.
func (f *awayFrontier) Stats(ctx context.Context) (crawl.Stats, error) {
	if err := f.wait(ctx); err != nil {
		return crawl.Stats{}, err
	}
	return crawl.Stats{}, nil
}

// A Run that is cancelled while its frontier cannot be reached returns
// all the same, a few seconds later: it does not wait for the server to
// come back to give its leases back. It says so once, a warning, and
// what its report does not know: no error, for the user stopped it.
func TestCancelledRunReturnsWithFrontierAway(t *testing.T) {
	f := &awayFrontier{spyFrontier: newSpy(), away: make(chan struct{})}
	var logged safeBuffer
	logger := slog.New(slog.NewTextHandler(&logged, nil))
	started := make(chan struct{}, 16)
	s := newSite(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		started <- struct{}{}
		time.Sleep(200 * time.Millisecond)
		htmlPage(`<a href="/a">a</a><a href="/b">b</a>`)(w, r)
	}))
	c, err := crawl.New(crawl.WithFrontier(f), crawl.WithRobots(false), crawl.WithWorkers(2), crawl.WithLogger(logger))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-started
		close(f.away) // the server goes away while the root is fetched
		cancel()
	}()
	done := make(chan error, 1)
	var stats *crawl.Stats
	go func() {
		var err error
		stats, err = c.Run(ctx, s.URL+"/")
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Run: %v, want context.Canceled", err)
		}
		// What is left is not known: not 0, which would say nothing is.
		if stats == nil || stats.Todo != -1 {
			t.Errorf("Stats %+v, want Todo -1 (not known)", stats)
		}
		var b strings.Builder
		stats.WriteReport(&b)
		if !strings.Contains(b.String(), "Todo: unknown") {
			t.Errorf("report:\n%s\nwant a line Todo: unknown", b.String())
		}
		log := logged.String()
		if strings.Contains(log, "level=ERROR") || strings.Count(log, "left to expire") != 1 ||
			!strings.Contains(log, "not the whole crawl's") || !strings.Contains(log, "(Todo) are not known") {
			t.Errorf("log:\n%s\nwant no error; one warning that the URLs are left to expire, and what the report does not know", log)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return within 30 s of being cancelled with its frontier away")
	}
}

// slowStart is a Renderer whose browser takes until ctx ends to start.
type slowStart struct{}

func (slowStart) Open(ctx context.Context) (crawl.RenderSession, error) {
	<-ctx.Done()
	return nil, fmt.Errorf("start: %w", ctx.Err())
}

// A budget (WithMaxDuration) or a cancel that ends a Run while its renderer
// starts is no failure: Run returns its Stats, the budget named and the
// roots left in Todo, as for a Run cut at any other moment, and nothing is
// fetched. Before, Run failed with the start's error (the command exited 1
// with no report where -max_duration was shorter than the browser's start).
func TestRenderStartCut(t *testing.T) {
	s := newSite(t, htmlPage(`<a href="/a">a</a>`))
	c, err := crawl.New(crawl.WithRenderer(slowStart{}, crawl.RenderAll), crawl.WithRobots(false),
		crawl.WithMaxDuration(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	stats, err := c.Run(context.Background(), s.URL+"/")
	if err != nil || stats == nil || stats.Budget != "max_duration" || stats.Todo != 1 || stats.Done != 0 {
		t.Errorf("a budget ending the Run as its renderer starts: %+v, %v; want the Stats, Budget max_duration, Todo 1, no error", stats, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	c, err = crawl.New(crawl.WithRenderer(slowStart{}, crawl.RenderAll), crawl.WithRobots(false))
	if err != nil {
		t.Fatal(err)
	}
	stats, err = c.Run(ctx, s.URL+"/")
	if !errors.Is(err, context.DeadlineExceeded) || stats == nil || stats.Todo != 1 {
		t.Errorf("ctx ending the Run as its renderer starts: %+v, %v; want the Stats so far, Todo 1, and ctx's error", stats, err)
	}
}

// countingRenderer renders nothing and counts the pages given it.
type countingRenderer struct {
	mu    *sync.Mutex
	pages *[]string
}

func (c countingRenderer) Open(context.Context) (crawl.RenderSession, error) { return c, nil }
func (c countingRenderer) Close() error                                      { return nil }
func (c countingRenderer) Render(_ context.Context, p *crawl.RenderPage) (*crawl.Rendered, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	*c.pages = append(*c.pages, p.URL.Path)
	return &crawl.Rendered{}, nil
}

// Under RenderAll, a 2xx HTML response a browser shows no document of
// (204, 205, an empty body, a download) is not rendered: Chromium aborts
// such a load, which failed the page (fail_render) where a crawl without
// rendering took it as it was.
func TestRenderSkipsNoDocument(t *testing.T) {
	mux := http.NewServeMux()
	page := func(code int, disposition, body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			if disposition != "" {
				w.Header().Set("Content-Disposition", disposition)
			}
			w.WriteHeader(code)
			fmt.Fprint(w, body)
		}
	}
	mux.Handle("/", page(200, "", `<a href="/204">a</a><a href="/205">b</a><a href="/empty">c</a><a href="/download">d</a><a href="/inline">e</a>`))
	mux.Handle("/204", page(204, "", ""))
	mux.Handle("/205", page(205, "", ""))
	mux.Handle("/empty", page(200, "", ""))
	mux.Handle("/download", page(200, `Attachment; filename="a.html"`, "<p>saved, not shown</p>"))
	mux.Handle("/inline", page(200, `inline`, "<p>shown</p>"))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	var mu sync.Mutex
	var rendered []string
	var fails []string
	c, err := crawl.New(crawl.WithRenderer(countingRenderer{&mu, &rendered}, crawl.RenderAll), crawl.WithRobots(false),
		crawl.WithResultHook(func(r crawl.Result) {
			if r.Err != nil {
				mu.Lock()
				fails = append(fails, r.URL)
				mu.Unlock()
			}
		}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Run(context.Background(), srv.URL+"/"); err != nil {
		t.Fatal(err)
	}
	slices.Sort(rendered)
	if !slices.Equal(rendered, []string{"/", "/inline"}) || len(fails) > 0 {
		t.Errorf("rendered %q, failed %q; want / and /inline rendered, none failed", rendered, fails)
	}
}

// deadlineOnly is a Frontier whose Retry, once the Run is over, heeds its
// context's deadline and not its cancel, as go-redis does (its reads take
// their socket deadline from the context, else their ReadTimeout).
type deadlineOnly struct {
	*spyFrontier
}

func (f deadlineOnly) Retry(ctx context.Context, l *crawl.Lease, at time.Time) error {
	d, ok := ctx.Deadline()
	if !ok {
		d = time.Now().Add(30 * time.Second)
	}
	time.Sleep(time.Until(d))
	return context.DeadlineExceeded
}

// A Run cancelled gives back its leases within endGrace (5 s) of its end,
// also through a frontier client that heeds only a context's deadline:
// the context of those last calls has one from the Run's end on. Before,
// it was only cancelled then, and a Ctrl-C of the command with
// redis-server stopped took 10 s, go-redis waiting its read timeout.
func TestEndCallsHaveADeadline(t *testing.T) {
	started := make(chan struct{}, 1)
	s := newSite(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case started <- struct{}{}:
		default:
		}
		<-r.Context().Done()
	}))
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-started
		cancel()
	}()
	c, err := crawl.New(crawl.WithFrontier(deadlineOnly{newSpy()}), crawl.WithRobots(false))
	if err != nil {
		t.Fatal(err)
	}
	begun := time.Now()
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.Run(ctx, s.URL+"/")
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("Run did not return within 20 s of its cancel: the last frontier call had no deadline")
	}
	if took := time.Since(begun); took < 4*time.Second {
		t.Errorf("Run returned after %v, before the frontier's call could have ended (5 s)", took)
	}
}

// ackFails is a Frontier whose Acks all fail with one error.
type ackFails struct{ *spyFrontier }

func (f ackFails) Ack(context.Context, *crawl.Lease, crawl.Outcome) (int, error) {
	return 0, errors.New("the crawl was deleted")
}

// One error of the frontier, the same for every lease a worker ends, is
// logged once: a crawl deleted under 100 workers logged a line a lease.
func TestFrontierErrorLoggedOnce(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("/p/", htmlPage("leaf"))
	s := newSite(t, mux)
	var log safeBuffer
	c, err := crawl.New(crawl.WithFrontier(ackFails{newSpy()}), crawl.WithRobots(false), crawl.WithWorkers(8),
		crawl.WithLogger(slog.New(slog.NewTextHandler(&log, nil))))
	if err != nil {
		t.Fatal(err)
	}
	var roots []string
	for i := range 20 {
		roots = append(roots, fmt.Sprintf("%s/p/%d", s.URL, i))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	c.Run(ctx, roots...)
	if n := strings.Count(log.String(), "msg=frontier url="); n != 1 {
		t.Errorf("the same frontier error for every lease: logged %d times, want once:\n%s", n, log.String())
	}
}

// ackFailsN is a Frontier whose Acks fail with err while fails > 0.
type ackFailsN struct {
	*spyFrontier
	fails *atomic.Int64
}

func (f ackFailsN) Ack(ctx context.Context, l *crawl.Lease, o crawl.Outcome) (int, error) {
	if f.fails.Add(-1) >= 0 {
		return 0, errors.New("disk full")
	}
	return f.spyFrontier.Ack(ctx, l, o)
}

// A frontier that fails to end a lease (its Ack or Retry returns an error
// that is not ErrLeaseLost: a full disk) is asked again: a lease never
// ended held Join back for good under a lease term of 0, the Run hung and
// its URL had neither a Result nor a place in Todo. A failure that lasts
// fails the Run with the frontier's error, promptly.
func TestAckErrorRetried(t *testing.T) {
	s := newSite(t, htmlPage(`<a href="/a">a</a><a href="/b">b</a>`))
	for _, tc := range []struct {
		name  string
		fails int64
	}{{"once", 1}, {"for good", 1 << 30}} {
		t.Run(tc.name, func(t *testing.T) {
			var fails atomic.Int64
			fails.Store(tc.fails)
			var log safeBuffer
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			stats, res, err := crawlSite(t, ctx, []string{s.URL + "/"}, crawl.WithFrontier(ackFailsN{newSpy(), &fails}),
				crawl.WithLeaseTerm(0), crawl.WithRobots(false), crawl.WithLogger(slog.New(slog.NewTextHandler(&log, nil))))
			if ctx.Err() != nil {
				t.Fatalf("Run did not return within 30 s: %v", ctx.Err())
			}
			if tc.fails == 1 {
				if err != nil || len(res) != 3 || stats.Done != 3 {
					t.Errorf("one Ack failed: %d Results, %v, err %v; want 3 and no error", len(res), stats, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), "disk full") {
				t.Errorf("every Ack failing: Run returned %v, want the frontier's error", err)
			}
		})
	}
}

// startBlocks is a Frontier whose Start waits for ctx.
type startBlocks struct{ *spyFrontier }

func (startBlocks) Start(ctx context.Context, p crawl.Policy) error {
	<-ctx.Done()
	return ctx.Err()
}

// ctx done while the frontier starts: Run returns the Stats so far (none
// done, what is left not known) and ctx's error, not nil Stats and the
// frontier's wrapped error; and a Crawl's Add once its ctx is done
// returns ErrCrawlClosed, as its doc says of a crawl that has ended.
func TestCutBeforeTheCrawl(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	c, err := crawl.New(crawl.WithFrontier(startBlocks{newSpy()}), crawl.WithRobots(false))
	if err != nil {
		t.Fatal(err)
	}
	stats, err := c.Run(ctx, "http://a.example/")
	if !errors.Is(err, context.DeadlineExceeded) || err != ctx.Err() || stats == nil || stats.Todo != -1 || stats.Done != 0 {
		t.Errorf("ctx done while the frontier started: %+v, %v; want Stats (Todo -1) and ctx's error", stats, err)
	}

	s := newSite(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	ctx2, cancel2 := context.WithCancel(context.Background())
	c, err = crawl.New(crawl.WithRobots(false))
	if err != nil {
		t.Fatal(err)
	}
	cr, err := c.Start(ctx2, s.URL+"/")
	if err != nil {
		t.Fatal(err)
	}
	cancel2()
	if n, err := cr.Add(s.URL + "/more"); n != 0 || !errors.Is(err, crawl.ErrCrawlClosed) {
		t.Errorf("Add once the crawl's ctx is done: %d, %v; want 0, ErrCrawlClosed", n, err)
	}
	cr.Close()
	cr.Wait()
}

// A robots.txt whose request hook panicked: the host's URLs are not
// fetched, their FailKind "robots_unavailable" as RobotsUnavailableError
// says (it was "panic", the hook's).
func TestRobotsHookPanicKind(t *testing.T) {
	s := newSite(t, htmlPage("a page"))
	_, res, err := crawlSite(t, crawlerCtx(t), []string{s.URL + "/"}, crawl.WithMaxTries(1),
		crawl.WithRequestHook(func(r *http.Request) error {
			if r.URL.Path == "/robots.txt" {
				panic("the hook's bug")
			}
			return nil
		}))
	if err != nil {
		t.Fatal(err)
	}
	r := res[s.URL+"/"]
	if !errors.Is(r.Err, crawl.ErrRobotsUnavailable) || crawl.FailKind(r.Err) != "robots_unavailable" {
		t.Errorf("the root of a host whose robots.txt's hook panicked: Err %v, kind %q; want ErrRobotsUnavailable, robots_unavailable", r.Err, crawl.FailKind(r.Err))
	}
}
