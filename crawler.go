// Package crawl is an embeddable web crawler: from root URLs it fetches
// every page of a site, parses its links, queues the new ones in scope, and
// stops when the queue is empty and no work is in flight.
//
//	c, err := crawl.New(crawl.WithWorkers(16))
//	if err != nil { ... }
//	stats, err := c.Run(ctx, "https://example.com/")
//
// # Design
//
// The crawler is a Go re-creation of "A Web Crawler With asyncio
// Coroutines" by A. Jesse Jiryu Davis and Guido van Rossum (500 Lines or
// Less). Readers who know the chapter will find its design here, with its
// asyncio ideas mapped to Go:
//
//   - A coroutine is a goroutine. The chapter's max_tasks worker
//     coroutines are WithWorkers long-lived goroutines in an
//     x/sync/errgroup; there is never one goroutine per URL.
//   - asyncio.Queue is Queue: Put raises a count of unfinished tasks,
//     TaskDone lowers it, Join waits for zero. yield from q.get() is
//     q.Get(ctx), q.join() is q.Join(ctx). The crawl's own queue, the
//     frontier, keeps exactly this accounting over a queue per host, so
//     that it can also say whose turn it is (see Politeness); Queue is the
//     chapter's queue on its own, for programs that want one.
//   - crawl() waits on join, then cancels the workers: Run waits on the
//     frontier's Join, then cancels the workers' context and waits for
//     every goroutine to exit before it returns. Task.cancel is context
//     cancellation, here and for the caller: cancel the ctx given to Run
//     to stop a crawl.
//   - The event loop is the Go scheduler and net/http: a worker blocked on
//     the network parks its goroutine, and the others run.
//   - The queue holds (URL, redirects left) items, and redirects are
//     followed by the crawler, not the HTTP client: a redirect is recorded,
//     and its target is queued like a link with one redirect fewer, so two
//     URLs that redirect to one target fetch it once.
//   - FetchStatistic is Result, the report is Stats.
//
// What the chapter lacked is added: URLs are normalised before they are
// deduplicated; links come from an HTML tokenizer (one that gives
// x/net/html's tokens), not a regular expression; every attempt has a timeout and every body a size cap;
// retries back off and honour Retry-After; scope uses the public suffix
// list; and hooks, filters and link extractors let a program take part.
//
// # Politeness
//
// The chapter's crawler sends max_tasks requests at once to one host. Here
// the frontier schedules per host: at most WithHostWorkers requests in
// flight to a host, a randomised WithHostDelay between their starts,
// robots.txt obeyed (WithRobots, on by default, with its Crawl-delay capped
// at 30s and a floor: no two starts closer than it), and a 429 or 503 with Retry-After pausing the whole host. A URL
// waiting for its host never holds a worker: the workers take whatever URL
// of any host may go now, so a slow host does not slow the others (with
// WithRenderer, a worker may wait for the browser's requests to its URL's
// host: see WithRenderer). Budgets
// (WithMaxDepth, WithMaxPages, WithMaxDuration) end a crawl early and
// exactly.
//
// # Guarantees
//
// Every URL that enters the queue ends with exactly one Result, delivered to
// the result hook, unless the Run is cancelled or a budget ends it first, in
// which case the URLs still queued, those waiting to be retried and those
// whose fetch the cancellation cut short are counted in Stats.Todo, without
// a Result: they did not fail, and a later Run on the same frontier fetches
// them. Run always returns, and no goroutine it started outlives it (a
// Frontier given with WithFrontier keeps its own, which serve its
// connections and finish what its calls left, until its Close).
//
// # The frontier
//
// Where the URLs wait is a Frontier: the seen set, the queue and the
// per-host schedule behind one interface, in memory by default
// (MemoryFrontier), or given with WithFrontier. A worker leases a URL,
// fetches it, and acks the lease together with the links it found, so the
// joinable queue's count stays exact even when the frontier is shared by
// many processes; the package frontiertest checks that a Frontier keeps
// its contract.
//
// # Rendering
//
// The chapter's crawler reads links from the markup. A page whose links
// its scripts build needs a browser: WithRenderer loads the HTML pages
// (all, or those NeedsRender picks) through a Renderer, such as the nested
// module github.com/asyncrawl/crawl/render on headless Chromium, and adds
// what the browser met to the page's links. Every request the browser
// sends is decided and sent by the crawler (RenderPage.Fetch), under the
// same scope, robots.txt, host limits and private-network guard as its own
// (one the renderer cannot intercept fails unsent: see the render module).
package crawl

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asyncrawl/crawl/internal/extract"
	"github.com/asyncrawl/crawl/internal/robots"
	"github.com/asyncrawl/crawl/internal/urlstd"
	"golang.org/x/sync/errgroup"
)

// Crawler holds the configuration of a crawl. It is immutable once New
// returns it and holds no crawl state, so Run may be called many times,
// also concurrently, each Run with its own queue and seen set (unless
// WithFrontier gives them one Frontier to share). The zero Crawler crawls
// with the default options, as New() with none would.
type Crawler struct {
	cfg config
}

// New returns a Crawler configured by opts. It starts nothing. It returns an
// error naming every option with a bad value.
func New(opts ...Option) (*Crawler, error) {
	cfg := defaultConfig()
	for _, o := range opts {
		if o != nil {
			o.apply(&cfg)
		}
	}
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("crawl: %w", err)
	}
	return &Crawler{cfg: cfg}, nil
}

// task is what one attempt needs to know of its URL.
type task struct {
	url       string
	kind      RequestKind
	crossHost bool
	// resends, when not nil, counts the requests the transport sent
	// again by itself (see send).
	resends *resends
	// delay and floor are the host's (WithHostDelay, its Crawl-delay):
	// a second request of one attempt (a check's GET after a refused
	// HEAD) waits its turn as any request of the host does.
	delay, floor time.Duration
}

const (
	kindPage    = PageRequest
	kindSitemap = SitemapRequest
	kindRobots  = RobotsRequest
)

// run is the state of one Run.
type run struct {
	// takeFailing is set while a Take of the frontier fails, so that the
	// workers log the failure once (see work).
	takeFailing atomic.Bool
	// frontierErrs holds the messages of the frontier's errors ending a
	// lease that were logged, each once (see frontierError).
	frontierErrs sync.Map
	frontierErrN atomic.Int64 // of frontierErrs' messages
	// failure is the frontier's error that failed the Run (see endLease),
	// and stop cancels the Run for it.
	failure   atomic.Pointer[error]
	stop      func()
	cfg       *config
	scope     *scope
	front     Frontier
	acker     AckTaker // front, if it is one
	fetch     *fetcher
	tally     *tally
	rules     robotsCache
	debug     bool            // the logger wants debug records
	token     string          // the product token of the User-Agent, for robots.txt
	rootHosts map[string]bool // by HostKey: whose sitemaps are read
	held      []held          // by worker: its hold on its lease, when leases expire
	shared    bool            // front is a StatsStore: it counts the refusals acked
	render    *renderer       // WithRenderer's session; nil when nothing is rendered
	// endCtx is the context of the frontier calls that record what the
	// workers did: not done with the Run's, so that a Run that is
	// cancelled still acks or gives back its leases, but done endGrace
	// after it, so that a frontier that cannot be reached (a shared one
	// whose server is away) does not keep the Run from returning.
	endCtx context.Context
	gaveUp sync.Once // endCtx ended with leases not recorded: said once
}

// errDuration is the cause of a Run's context ending at WithMaxDuration.
var errDuration = errors.New("crawl: max duration reached")

// ErrCrawlClosed is returned by Crawl.Add after Close, or once the crawl
// has ended.
var ErrCrawlClosed = errors.New("crawl: closed to new URLs")

// Run crawls from roots until no URL is left to fetch, or until ctx is done.
// A root is an absolute http or https URL; a bare host ("example.com",
// "example.com/docs") gets "http://" first; a path ("/docs", "./docs",
// "../docs") is an error wrapping ErrBadRoot. Roots are always fetched,
// unless robots.txt disallows them; their hosts set the scope. A root's userinfo is dropped, as it is
// from every URL the crawl finds (links, redirect targets, sitemap
// entries): credentials belong in WithRequestHook or WithHTTPClient. A
// root whose host is not a valid host name (it fails IDNA, or has an empty
// label, as "example.com.." does) is an error wrapping ErrBadRoot.
//
// Run returns the Stats of the crawl. The error is nil when the crawl ran to
// its end, whatever the pages returned, or when a budget (WithMaxPages,
// WithMaxDuration) ended it, as Stats.Budget says; it reports a bad root
// (before anything is fetched), or ctx.Err() when ctx was done first, in
// which case Run returns promptly with the Stats so far, or the frontier's
// error when it failed (closed under the Run, say; or an Ack or Retry that
// ends a lease failing 6 times over about 1.5 s, a lease it cannot end
// holding the crawl's end back), returned as promptly:
// the fetches in flight are cut short. A fetch cut short
// by the end of ctx (or by WithMaxDuration) is no failure: its URL goes
// back to the frontier unfinished, without a Result, and is counted in
// Stats.Todo; so does a page whose render, or whose custom link extractor
// (WithLinkExtractor, WithTypedLinkExtractor), returned an error once ctx
// was done (a WithLinkExtractor comes after the page hook, which saw the
// page then, and sees it again when a later Run fetches it). Run returns
// only after every goroutine it started has exited and every hook call
// has returned.
//
// Run is Start, then Close, then Wait.
func (c *Crawler) Run(ctx context.Context, roots ...string) (*Stats, error) {
	cr, end, err := c.start(ctx, roots, true)
	if err != nil {
		if ctx.Err() != nil && !errors.Is(err, ErrBadRoot) {
			// ctx done while the frontier started (or gave back the
			// Results of earlier Runs, or took the roots): the Stats
			// so far, nothing done, what is left not known.
			stats := &Stats{Todo: -1}
			stats.ensureMaps()
			return stats, ctx.Err()
		}
		return nil, err
	}
	cr.Close()
	// The crawl's end runs here, not in a goroutine of its own: Run
	// returns when the last goroutine it started has finished.
	end()
	return cr.Wait()
}

// Crawl is a crawl in progress, started by Start. Its methods are safe for
// concurrent use.
type Crawl struct {
	r        *run
	ctx      context.Context // the Run's context: Add uses it for the frontier
	closing  chan struct{}   // closed by Close
	added    chan struct{}   // an Add queued a URL (with a page budget)
	close    sync.Once
	finished chan struct{} // closed when the crawl has ended

	// The Adds under way, which the crawl's end waits for (see
	// settleAdds): an Add that began before Close or the end pushes its
	// URLs before the end is decided, so that each is crawled or counted
	// in Stats.Todo. ended refuses the Adds that come after.
	amu    sync.Mutex
	adding int
	ended  bool
	addsIn chan struct{} // closed when adding falls to 0 after ended
	stats  *Stats
	err    error
}

// Start starts a crawl from roots, as Run does, and returns at once; the
// crawl goes on in goroutines of its own. A program may add URLs to it
// with Add while it runs. It does not end when its queue runs dry: it ends
// once Close was called and nothing is left to fetch, or when ctx is done,
// or when a budget ends it. Wait waits for that end and returns what Run
// would. Start returns an error, and starts nothing, for a bad root or a
// frontier that refuses the crawl.
func (c *Crawler) Start(ctx context.Context, roots ...string) (*Crawl, error) {
	cr, _, err := c.start(ctx, roots, false)
	return cr, err
}

// start is Start; with inline, it returns the crawl's end, which waits for
// it to end and sets what Wait returns, for the caller to run, rather than
// running it in a goroutine of its own.
func (c *Crawler) start(ctx context.Context, roots []string, inline bool) (*Crawl, func(), error) {
	start := time.Now()
	if c == nil {
		return nil, nil, errors.New("crawl: nil Crawler: make one with New")
	}
	cfg := &c.cfg
	if !cfg.valid {
		// The zero Crawler crawls with the defaults, as New() would.
		d := defaultConfig()
		if err := d.validate(); err != nil {
			return nil, nil, fmt.Errorf("crawl: %w", err)
		}
		cfg = &d
	}
	if len(roots) == 0 {
		return nil, nil, errors.New("crawl: no root URL")
	}
	var rootURLs []*url.URL
	for _, s := range roots {
		u, err := parseRoot(s)
		if err != nil {
			return nil, nil, fmt.Errorf("crawl: root %w", err)
		}
		rootURLs = append(rootURLs, u)
	}
	client, owned, err := cfg.newClient()
	if err != nil {
		return nil, nil, fmt.Errorf("crawl: %w", err)
	}
	rctx, cancelRun := context.WithCancel(ctx)
	if d := cfg.maxDuration; d > 0 {
		// Under rctx, so that one cancel ends both: a context left
		// uncancelled stays with its parent (a goroutine of its own
		// under a parent of another package's type).
		tctx, cancelTimer := context.WithTimeoutCause(rctx, d, errDuration)
		cancelParent := cancelRun
		rctx, cancelRun = tctx, func() { cancelTimer(); cancelParent() }
	}
	front := cfg.frontier
	if front == nil {
		front = NewMemoryFrontier()
	}
	r := &run{
		cfg:       cfg,
		scope:     newScope(rootURLs, cfg),
		front:     front,
		fetch:     newFetcher(cfg, client),
		tally:     newTally(cfg.workers),
		debug:     cfg.logger.Enabled(ctx, slog.LevelDebug),
		token:     robots.AgentToken(cfg.userAgent),
		rootHosts: map[string]bool{},
	}
	r.acker, _ = front.(AckTaker)
	r.stop = cancelRun
	base, endCancel := context.WithCancel(context.WithoutCancel(ctx))
	endCtx := &endContext{Context: base}
	stopEnd := context.AfterFunc(rctx, func() {
		d := time.Now().Add(endGrace)
		endCtx.deadline.Store(&d)
		time.AfterFunc(endGrace, endCancel)
	})
	r.endCtx = endCtx
	fail := func(err error) (*Crawl, func(), error) {
		stopEnd()
		endCancel()
		cancelRun()
		if owned {
			client.CloseIdleConnections()
		}
		return nil, nil, err
	}
	policy := Policy{
		HostWorkers:  cfg.hostWorkers,
		HostDelay:    cfg.hostDelay,
		LeaseTerm:    cfg.leaseTerm,
		Robots:       cfg.robots,
		RobotsMaxAge: cfg.robotsMaxAge,
		MaxPages:     cfg.maxPages,
		Scope:        cfg.scopeID(),
	}
	var first []Request
	for _, u := range rootURLs {
		wire, key := urlstd.Forms(u)
		policy.Roots = append(policy.Roots, key)
		first = append(first, Request{URL: key, Wire: wireField(wire, key), Redirects: cfg.maxRedirects})
		r.rootHosts[HostKey(key)] = true
	}
	if err := front.Start(rctx, policy); err != nil {
		return fail(fmt.Errorf("crawl: frontier: %w", err))
	}
	_, r.shared = front.(StatsStore) // it keeps the whole crawl's Stats itself
	if rs, ok := front.(ResultStore); ok && !r.shared {
		// A resumed crawl reports on the whole crawl.
		err := rs.Results(rctx, func(res Result) bool {
			r.tally.add(&res)
			return true
		})
		if err != nil {
			return fail(fmt.Errorf("crawl: frontier results: %w", err))
		}
	}
	if _, err := front.Push(rctx, first...); err != nil {
		return fail(fmt.Errorf("crawl: queue roots: %w", err))
	}
	if !cfg.robots && (cfg.sitemaps || cfg.speculative) {
		// With robots.txt obeyed, its Sitemap lines are read first (see
		// robots); without, it is read as a sitemap, for its Sitemap
		// lines and, with WithSpeculative, its paths.
		for _, key := range slices.Sorted(maps.Keys(r.rootHosts)) {
			if _, err := front.Push(rctx, r.sitemaps(key, nil)...); err != nil {
				return fail(fmt.Errorf("crawl: queue sitemaps: %w", err))
			}
		}
	}

	if err := r.openRenderer(rctx); err != nil && rctx.Err() == nil {
		return fail(fmt.Errorf("crawl: %w", err))
	}
	// A renderer whose start a budget (WithMaxDuration) or ctx cut is no
	// failure of the Run: it ends as any Run cut then does, with its Stats
	// (the roots counted in Todo), and nothing is fetched unrendered, as
	// every worker finds the Run over.
	cr := &Crawl{r: r, ctx: rctx, closing: make(chan struct{}), added: make(chan struct{}, 1), finished: make(chan struct{}), addsIn: make(chan struct{})}
	wctx, stopWorkers := context.WithCancel(rctx)
	var g errgroup.Group
	if cfg.leaseTerm > 0 {
		r.held = make([]held, cfg.workers)
		g.Go(func() error {
			r.heartbeat(wctx)
			return nil
		})
	}
	for i := range cfg.workers {
		g.Go(func() error {
			r.work(rctx, wctx, i)
			return nil
		})
	}
	if f := cfg.progress; f != nil {
		g.Go(func() error {
			r.report(wctx, start, f)
			return nil
		})
	}
	end := func() {
		defer close(cr.finished)
		defer cancelRun()
		defer endCancel()
		defer stopEnd()
		err := cr.await(rctx, front, cfg.maxPages)
		if f := r.failure.Load(); f != nil && ctx.Err() == nil {
			// A lease the frontier could not end (see endLease).
			err = *f
		}
		if err != nil && rctx.Err() == nil {
			// The frontier failed: nothing the fetches in flight find can
			// be kept. They are cut, not waited out to their timeout.
			cancelRun()
		}
		stopWorkers()
		g.Wait()
		r.closeRenderer()
		if owned {
			client.CloseIdleConnections()
		}
		stats := r.tally.snapshot()
		if ss, ok := front.(StatsStore); ok {
			// A shared crawl reports on the whole crawl, every
			// process's share of it.
			whole, err := ss.Stats(r.endCtx)
			if err == nil {
				whole.Workers = stats.Workers
				stats = whole.clone()
				stats.ensureMaps()
			} else {
				r.endError("stats", "the report counts this process's work, not the whole crawl's", err)
			}
		}
		counts, cerr := front.Counts(r.endCtx)
		if cerr == nil {
			stats.Todo = counts.Queued
		} else {
			// Not known: not 0, which would say nothing is left.
			stats.Todo = -1
			r.endError("counts", "the URLs left (Todo) are not known", cerr)
		}
		stats.Elapsed = time.Since(start)
		// The deadline may also come while the pages in flight finish
		// after the page budget was spent: the error is nil then too.
		overTime := err != nil && ctx.Err() == nil && errors.Is(context.Cause(rctx), errDuration)
		if overTime {
			err = nil
		}
		switch {
		case err == nil && cfg.maxPages > 0 && counts.Pages >= cfg.maxPages && stats.Todo > 0:
			// A crawl that simply had that many pages was not cut, and
			// one its caller cancelled was cancelled, whatever it had
			// spent.
			stats.Budget = "max_pages"
		case overTime:
			stats.Budget = "max_duration"
		}
		cr.stats, cr.err = stats, err
	}
	if inline {
		return cr, end, nil
	}
	go end()
	return cr, nil, nil
}

// ErrOutOfScope is wrapped by the error Crawl.Add returns for a URL it
// refuses because the crawl would not follow it: out of the scope of the
// roots, or excluded by WithExclude or a WithFilter.
var ErrOutOfScope = errors.New("out of scope")

// Add queues URLs found elsewhere into the running crawl, as if a root
// page linked to them: each is parsed as a root is, then normalised,
// checked against the scope, the exclude patterns and the filters, and
// deduplicated; it is fetched at depth 0. It returns how many were new: a
// URL already seen is no error. It adds every URL it can and returns an
// error for each one it refuses, joined with errors.Join, each naming its
// URL: one that is not an absolute http or https URL (a relative one, a
// path, another scheme) wraps ErrBadRoot; one out of scope, excluded or
// filtered out wraps ErrOutOfScope. After Close, or once the crawl has
// ended, Add adds nothing and returns ErrCrawlClosed.
func (cr *Crawl) Add(urls ...string) (int, error) {
	select {
	case <-cr.closing:
		return 0, ErrCrawlClosed
	case <-cr.finished:
		return 0, ErrCrawlClosed
	case <-cr.ctx.Done():
		// The crawl ends when its ctx is done (or a budget ends it),
		// before its end has run.
		return 0, ErrCrawlClosed
	default:
	}
	cr.amu.Lock()
	if cr.ended {
		cr.amu.Unlock()
		return 0, ErrCrawlClosed
	}
	cr.adding++
	cr.amu.Unlock()
	defer func() {
		cr.amu.Lock()
		if cr.adding--; cr.adding == 0 && cr.ended {
			close(cr.addsIn)
		}
		cr.amu.Unlock()
	}()
	r := cr.r
	var reqs []Request
	var errs []error
	for _, s := range urls {
		u, err := parseRoot(s)
		if err != nil {
			errs = append(errs, fmt.Errorf("crawl: add %w", err))
			continue
		}
		wire, key := urlstd.Forms(u)
		if !r.scope.contains(u) {
			errs = append(errs, fmt.Errorf("crawl: add %s: %w", wire, ErrOutOfScope))
			continue
		}
		ok, err := r.allows(key, u)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("crawl: add %s: %w", wire, err))
		case !ok:
			errs = append(errs, fmt.Errorf("crawl: add %s: excluded by a pattern or filter: %w", wire, ErrOutOfScope))
		default:
			reqs = append(reqs, Request{URL: key, Wire: wireField(wire, key), Redirects: r.cfg.maxRedirects})
		}
	}
	n, err := r.front.Push(cr.ctx, reqs...)
	if err != nil {
		errs = append(errs, fmt.Errorf("crawl: add: %w", err))
	}
	if n > 0 {
		select {
		case cr.added <- struct{}{}:
		default:
		}
	}
	return n, errors.Join(errs...)
}

// settleAdds refuses every later Add and waits for those under way to
// return (ctx bounds the frontier calls they make): once it returns, no
// URL enters the crawl but through its workers.
func (cr *Crawl) settleAdds() {
	cr.amu.Lock()
	if !cr.ended {
		cr.ended = true
		if cr.adding == 0 {
			close(cr.addsIn)
		}
	}
	cr.amu.Unlock()
	<-cr.addsIn
}

// await waits for the crawl's end: Close, then nothing left to fetch; or
// ctx done; or, with a page budget, the budget spent (Join returns then
// with only new Requests left, which no Add can change), Close or not.
// Whatever the end, the Adds under way have pushed their URLs before it
// returns (see settleAdds).
func (cr *Crawl) await(ctx context.Context, front Frontier, maxPages int) error {
	// After Close no Add begins: those under way finish, then the Join
	// sees what they pushed.
	closed := func() error {
		cr.settleAdds()
		return front.Join(ctx)
	}
	err := cr.awaitEnd(ctx, front, maxPages, closed)
	cr.settleAdds()
	return err
}

func (cr *Crawl) awaitEnd(ctx context.Context, front Frontier, maxPages int, closed func() error) error {
	if maxPages <= 0 {
		select {
		case <-cr.closing:
			return closed()
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	for {
		select {
		case <-cr.closing: // as Run closes at once: no Join to cancel
			return closed()
		default:
		}
		jctx, stop := context.WithCancel(ctx)
		joined := make(chan error, 1)
		go func() { joined <- front.Join(jctx) }()
		select {
		case <-cr.closing:
			stop()
			<-joined
			return closed()
		case <-ctx.Done():
			stop()
			<-joined
			return ctx.Err()
		case err := <-joined:
			stop()
			if err != nil {
				return err
			}
		}
		// Nothing left to fetch now, or the budget spent.
		if c, err := front.Counts(ctx); err == nil && c.Pages >= maxPages {
			return nil
		}
		select {
		case <-cr.closing:
			return closed()
		case <-ctx.Done():
			return ctx.Err()
		case <-cr.added:
		}
	}
}

// ParseRoot returns the URL that root names, normalised, as Run and Add
// read it, or the error they would return for it, wrapping ErrBadRoot, so
// that a program can check the roots a user gave before it starts
// anything. It is safe for concurrent use.
func ParseRoot(root string) (string, error) {
	u, err := parseRoot(root)
	if err != nil {
		return "", fmt.Errorf("crawl: root %w", err)
	}
	return u.String(), nil
}

// Close tells the crawl that no URL will be added: it ends once nothing
// is left to fetch. Close may be called many times.
func (cr *Crawl) Close() {
	cr.close.Do(func() { close(cr.closing) })
}

// Wait waits for the crawl to end and returns its Stats and error, as Run
// does. It may be called many times, from many goroutines.
func (cr *Crawl) Wait() (*Stats, error) {
	<-cr.finished
	return cr.stats.clone(), cr.err
}

// report calls f with a Progress every interval until ctx is done.
func (r *run) report(ctx context.Context, start time.Time, f func(Progress)) {
	every(ctx, r.cfg.progressEvery, func() {
		p := Progress{Stats: *r.tally.snapshot()}
		if c, err := r.front.Counts(ctx); err == nil {
			p.Queued, p.InFlight = c.Queued, c.Leased
		}
		p.Elapsed = time.Since(start)
		if err := protect("progress hook", func() error { f(p); return nil }); err != nil {
			r.cfg.logger.Error("progress hook", "err", err)
		}
	})
}

// worker is the reusable state of one worker goroutine. Each of its
// buffers is kept between pages only up to a size, so that one large page
// or sitemap does not pin its memory for the rest of the Run.
type worker struct {
	buf   []byte              // response body
	sent  resends             // the requests of a fetch the transport sent again
	keys  map[string]struct{} // a page's distinct links
	batch []Request           // a page's new requests
	links []Link              // a page's typed links
	// refused counts the limits that kept the page's links (or its
	// redirect target) out of the queue, by refusal.
	refused [numRefusals]int
}

// maxKeptBuf is the largest body buffer a worker keeps between pages; a
// larger one, from a rare large page, is left to the garbage collector.
const maxKeptBuf = 1 << 20

// maxKeptRefs is the most link references, distinct links and new
// requests a worker keeps room for between pages, for the same reason.
const maxKeptRefs = 1 << 12

// trim lets go of the buffers grown past the kept sizes, and of the
// strings the kept ones hold.
func (w *worker) trim() {
	if cap(w.buf) > maxKeptBuf {
		w.buf = nil
	}
	if cap(w.links) > maxKeptRefs {
		w.links = nil
	} else {
		clear(w.links[:cap(w.links)])
		w.links = w.links[:0]
	}
	if cap(w.batch) > maxKeptRefs {
		w.batch = nil
	} else {
		clear(w.batch[:cap(w.batch)])
		w.batch = w.batch[:0]
	}
	if len(w.keys) > maxKeptRefs {
		w.keys = make(map[string]struct{}) // a map never shrinks
	} else {
		clear(w.keys)
	}
}

// work is the loop of worker i: take a lease, process it, until wctx is
// cancelled. Fetches use ctx, the Run's context, so that the workers' own
// cancellation (the crawl is over) never cuts a fetch short. A frontier
// that fails to hand out a lease (a shared one whose server is away) is
// asked again after a pause, which grows to maxTakePause.
func (r *run) work(ctx, wctx context.Context, i int) {
	w := &worker{keys: make(map[string]struct{})}
	defer r.unhold(i)
	pause := time.Duration(0)
	var next *Lease // the lease an AckTake returned
	for {
		l, err := next, error(nil)
		next = nil
		if l == nil {
			l, err = r.front.Take(wctx)
		}
		if err != nil {
			if wctx.Err() != nil || errors.Is(err, ErrFrontierClosed) {
				if wctx.Err() == nil {
					r.cfg.logger.Error("frontier", "err", err)
				}
				return
			}
			pause = min(max(2*pause, 10*time.Millisecond), maxTakePause)
			// Once a failure for all the workers, until a Take succeeds
			// again: a shared frontier's server away, or the crawl
			// deleted under it, is one event, not one a worker.
			if r.takeFailing.CompareAndSwap(false, true) {
				r.cfg.logger.Error("frontier", "err", err, "retry_in", pause)
			}
			select {
			case <-wctx.Done():
				return
			case <-time.After(pause):
			}
			continue
		}
		if pause != 0 {
			pause = 0
			r.takeFailing.Store(false)
		}
		if l.Kind == RobotsRequest {
			// Not a URL of the crawl: when the crawl is over (a budget
			// spent), a robots.txt still in flight is cut short.
			lctx, h := r.hold(wctx, i, l)
			r.robots(lctx, w, l, h)
			r.release(h)
		} else {
			lctx, h := r.hold(ctx, i, l)
			next = r.process(lctx, wctx, w, l, h)
			r.release(h)
		}
		w.trim()
	}
}

// maxTakePause is the longest a worker waits before it asks a failing
// frontier for a lease again.
const maxTakePause = 5 * time.Second

// every calls f every d until ctx is done.
func every(ctx context.Context, d time.Duration, f func()) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			f()
		}
	}
}

// verdict is how an attempt at a leased URL ends.
type verdict uint8

const (
	finished   verdict = iota // ack, with the Result and the new links
	unsent                    // ack without a request sent (disallowed)
	retryLater                // put back to be tried again at a time
	giveBack                  // put back unfinished: the Run was cancelled
)

// process makes one attempt at a leased URL. It puts the lease back to be
// retried later, or acks it with what it found, and delivers its Result.
// With a Frontier that is an AckTaker, it returns the worker's next lease
// if the ack brought one (wctx ends the workers).
func (r *run) process(ctx, wctx context.Context, w *worker, l *Lease, h *held) (next *Lease) {
	if l.First.IsZero() {
		l.First = time.Now()
	}
	res := Result{URL: wireURL(&l.Request), Referrer: l.Referrer, Depth: l.Depth, Tries: l.Tries,
		probe: l.Kind == SitemapRequest && l.Referrer == "", check: l.Kind == CheckRequest}
	v, at := r.try(ctx, w, l, &res)
	if r.lost(h) {
		return nil
	}
	// The frontier is told even when the Run's ctx is done: the lease
	// must end, so that a durable frontier keeps the outcome.
	fctx := r.endCtx
	var err error
	switch v {
	case retryLater:
		l.Tries = res.Tries
		err = r.endLease(fctx, l.URL, func() error { return r.front.Retry(fctx, l, at) })
	case giveBack:
		err = r.endLease(fctx, l.URL, func() error { return r.front.Retry(fctx, l, time.Time{}) })
	default:
		res.Elapsed = time.Since(l.First)
		o := Outcome{Result: &res, Links: w.batch, Unsent: v == unsent}
		if r.shared && w.refused != ([numRefusals]int{}) {
			// Only a StatsStore counts them.
			o.Refused = make(map[string]int)
			for reason, n := range w.refused {
				if n > 0 {
					o.Refused[refusalNames[reason]] = n
				}
			}
		}
		first := true
		err = r.endLease(fctx, l.URL, func() (err error) {
			if r.acker != nil && first {
				first = false
				_, next, err = r.acker.AckTake(fctx, wctx, l, o)
			} else {
				_, err = r.front.Ack(fctx, l, o)
			}
			return err
		})
		if err == nil {
			r.tally.refuse(&w.refused)
			r.deliver(&res)
		}
	}
	if err != nil {
		// A lease lost is some other worker's now, with its Result.
		r.frontierError(l.URL, err)
	}
	return next
}

// try makes the attempt; a panic in it (a bug, since user code is
// called through protect) becomes the Result's error.
func (r *run) try(ctx context.Context, w *worker, l *Lease, res *Result) (v verdict, at time.Time) {
	defer func() {
		if p := recover(); p != nil {
			res.Err = fmt.Errorf("%s: %w: %v", res.URL, ErrPanic, p)
			w.batch = w.batch[:0]
			v = finished
		}
	}()
	w.batch = w.batch[:0]
	w.refused = [numRefusals]int{}
	if err := r.rules.check(r, l); err != nil {
		res.Err = fmt.Errorf("fetch %s: %w", res.URL, err)
		return unsent, time.Time{}
	}
	limit := r.cfg.maxBodySize
	if l.Kind == SitemapRequest {
		limit = MaxSitemapBytes // attempt cuts the body there, not fails it
	}
	release := func() {}
	if r.render != nil {
		var err error
		if release, err = r.fetching(ctx, l); err != nil {
			return giveBack, time.Time{} // the Run is ending
		}
	}
	res.Tries++
	w.sent.n = 0
	t := task{url: wireURL(&l.Request), kind: l.Kind, crossHost: l.CrossHost, resends: &w.sent}
	t.delay, t.floor = r.pauseOf(l.Rules.crawlDelay())
	resp, err := r.fetch.attempt(ctx, &w.buf, t, limit)
	// A request the transport sent again reached the server again: a try.
	res.Tries += w.sent.n
	release()
	r.overload(ctx, l, resp)
	if wait, ok := r.fetch.retryable(resp, err, res.Tries); ok {
		r.cfg.logger.Info("retry", "url", l.URL, "try", res.Tries, "wait", wait, "status", statusOf(resp), "err", err)
		return retryLater, time.Now().Add(wait)
	}
	if err != nil && ctx.Err() != nil {
		// Cut short by the end of the Run: no failure of the site's.
		res.Tries--
		return giveBack, time.Time{}
	}
	if resp != nil {
		res.Status = resp.status
		res.ContentType = resp.contentType
		res.Size = len(resp.body)
		res.Truncated = resp.truncated
		if resp.truncated && int64(res.Size) > limit {
			// A sitemap's body keeps the octet past its limit (see
			// attempt); the Result says the cap, as documented.
			res.Size = int(limit)
		}
	}
	if err != nil {
		res.Err = err
		return finished, time.Time{}
	}
	if isRedirect(resp.status) {
		r.redirect(l, resp, res, w)
		return finished, time.Time{}
	}
	if cut := r.read(ctx, w, l, resp, res); cut {
		// A render or an extractor cut short by the end of the Run, as a
		// fetch would be.
		res.Tries--
		return giveBack, time.Time{}
	}
	return finished, time.Time{}
}

// read makes the Page of a response that is not a redirect, shows it to
// the page hook and follows its links. cut reports a render or a custom
// link extractor that the end of the Run cut short: the page is then left
// unread, for its URL to go back unfinished.
func (r *run) read(ctx context.Context, w *worker, l *Lease, resp *response, res *Result) (cut bool) {
	// The page hook and a link extractor get their own copy of the URL,
	// and of the document base: what they do to them does not change
	// what links resolve against. The three are one allocation.
	base := resp.url
	pg := &struct {
		Page
		url, base url.URL
	}{url: *base}
	p := &pg.Page
	*p = Page{
		URL:         &pg.url,
		Depth:       l.Depth,
		Status:      resp.status,
		Header:      resp.header,
		ContentType: resp.contentType,
		Body:        resp.body,
		Truncated:   resp.truncated,
		obeyRobots:  r.cfg.directives,
	}
	if isText(resp.contentType) && l.Kind != SitemapRequest && !resp.encoded {
		p.Body, p.Encoding = decode(resp.body, resp.contentType, resp.charset)
		res.Encoding = p.Encoding
	}
	ok := resp.status >= 200 && resp.status <= 299
	typed := false       // an extractor found the typed links
	unread := 0          // and left so many more unresolved
	var extractErr error // the custom typed extractor's
	if ok && r.cfg.extractor == nil && !resp.encoded &&
		(l.Kind == PageRequest || l.Kind == ResourceRequest &&
			(p.ContentType == "text/css" || r.cfg.speculative && extract.IsJavaScript(p.ContentType))) {
		// The default extractor reads the robots meta tags in the same
		// pass, before the page hook, which sees them.
		var meta extract.Meta
		var docBase *url.URL
		if r.cfg.typedExtractor == nil {
			// A page of a million links costs a URL each only for the
			// first few times the per-page cap; the rest are refused
			// unread.
			w.links, meta, docBase, unread = scanLinksMax(w.links[:0], base, resp.header, p.Body, p.ContentType, 4*r.cfg.maxLinksPerPage, r.cfg.speculative, p.Encoding)
		} else {
			docBase = base
			if isHTML(p.ContentType) {
				meta, docBase = scanHead(base, p.Body, p.Encoding)
			}
		}
		pg.base = *docBase
		p.Base = &pg.base
		if r.cfg.directives && l.Kind == PageRequest {
			p.NoIndex, p.NoFollow = meta.NoIndex, meta.NoFollow
		}
		if r.cfg.typedExtractor != nil {
			w.links, extractErr = r.extractTyped(ctx, p, w.links[:0])
			if extractErr != nil && ctx.Err() != nil {
				// Cut short by the end of the Run, as a fetch would
				// be: the URL goes back unfinished, and no hook sees
				// the page.
				return true
			}
		}
		typed = true
		p.Links = w.links
	} else if isHTML(p.ContentType) && !resp.encoded && (r.cfg.directives || l.Kind == PageRequest) {
		// A custom extractor's page: its robots meta tags, and the
		// document base its relative links resolve against, in one pass.
		meta, docBase := scanHead(base, p.Body, p.Encoding)
		if r.cfg.directives {
			p.NoIndex, p.NoFollow = meta.NoIndex, meta.NoFollow
		}
		if l.Kind == PageRequest {
			base = docBase
		}
	}
	if p.Base == nil {
		pg.base = *base
		p.Base = &pg.base
	}
	if r.cfg.directives {
		h := headerRobots(resp.header, r.token)
		p.NoIndex = p.NoIndex || h.NoIndex
		p.NoFollow = p.NoFollow || h.NoFollow
	}
	// A page its scripts build is rendered: what the browser found joins
	// the static links.
	var renderErr error
	if typed && extractErr == nil && r.renders(l, p) {
		w.links, p.DOM, renderErr = r.renderPage(ctx, l, resp, p, w.links)
		p.Links = w.links
		if renderErr != nil && ctx.Err() != nil {
			// Cut short by the end of the Run: the URL goes back
			// unfinished, and no hook sees the page.
			return true
		}
	}
	// The typed links are weighed before the page hook, which sees what
	// became of each (Link.Fate).
	var followErr error
	if typed && extractErr == nil {
		followErr = r.followTyped(w, l, w.links, unread, p.NoFollow && r.cfg.directives, res)
	}
	var hookErr error
	for _, hook := range r.cfg.pageHooks {
		if err := protect("page hook", func() error { hook(p); return nil }); err != nil && hookErr == nil {
			hookErr = err
		}
	}
	if hookErr != nil {
		// Its links are not followed.
		w.batch, w.refused, res.NumURLs = w.batch[:0], [numRefusals]int{}, 0
		res.Err = fmt.Errorf("%s: %w", res.URL, hookErr)
		return
	}
	if !ok {
		return
	}
	if l.Kind == SitemapRequest {
		if resp.encoded {
			res.Err = fmt.Errorf("sitemap %s: in a content coding the crawler cannot decode (%s)", res.URL, resp.header.Get("Content-Encoding"))
			return
		}
		if err := r.sitemap(w, l, base, p.Body, res); err != nil {
			res.Err = err
		}
		return
	}
	if typed {
		switch {
		case extractErr != nil:
			res.Err = fmt.Errorf("%s: extract links: %w", res.URL, extractErr)
		case followErr != nil:
			res.Err = followErr
		case renderErr != nil:
			res.Err = renderErr
		}
		return
	}
	if l.Kind != PageRequest || r.cfg.extractor == nil {
		return // a resource's links are not followed
	}
	links, err := r.extract(ctx, p)
	if err != nil {
		if ctx.Err() != nil {
			// Cut short by the end of the Run: the URL goes back
			// unfinished (the page hook, which comes first, saw it).
			return true
		}
		res.Err = fmt.Errorf("%s: extract links: %w", res.URL, err)
		return
	}
	if p.NoFollow && r.cfg.directives || len(links) == 0 {
		return
	}
	if err := r.follow(w, l, base, links, PageRequest, l.Depth+1, res); err != nil {
		res.Err = err
	}
	return false
}

// overload pauses the whole host of l when a 429 or 503 response says,
// with Retry-After, when to come back.
func (r *run) overload(ctx context.Context, l *Lease, resp *response) {
	if resp == nil || resp.status != http.StatusTooManyRequests && resp.status != http.StatusServiceUnavailable {
		return
	}
	now := time.Now()
	if d, ok := retryAfter(resp.header.Get("Retry-After"), now); ok && d > 0 {
		if err := r.front.Pause(r.endCtx, HostKey(l.URL), now.Add(min(d, r.cfg.maxRetryAfter))); err != nil {
			r.cfg.logger.Error("frontier", "url", l.URL, "err", err)
		}
	}
}

// redirect records a redirect response in res and adds its target to the
// worker's batch of new requests.
func (r *run) redirect(l *Lease, resp *response, res *Result, w *worker) {
	next, err := resp.location()
	if err != nil {
		res.Err = fmt.Errorf("fetch %s: status %d: %w", res.URL, resp.status, err)
		return
	}
	wire, key := urlstd.Forms(next)
	res.NextURL = wire
	if l.Redirects <= 0 {
		res.Err = fmt.Errorf("fetch %s: redirect to %s: %w", res.URL, res.NextURL, ErrTooManyRedirects)
		return
	}
	kind := l.Kind
	// A requisite is fetched on any host (see WithRequisites), and so is
	// where it redirects: a CDN's asset moved to its versioned name. (A
	// reference, also a resource, then may leave scope too: fetched, it
	// leads only to its own requisites.)
	anyHost := kind == ResourceRequest && r.cfg.requisites && urlstd.IsHTTP(next)
	if !anyHost && !r.scope.contains(next) {
		if !r.cfg.checkExternal || !urlstd.IsHTTP(next) {
			return
		}
		kind = CheckRequest // the redirect leaves scope: checked only
	}
	if ok, err := r.allows(key, next); err != nil || !ok {
		if err != nil {
			res.Err = fmt.Errorf("fetch %s: redirect to %s: %w", res.URL, res.NextURL, err)
		}
		return
	}
	if why := r.scope.trap(key, next); why != refuseNone {
		w.refused[why]++
		return
	}
	// A target already seen is not queued again: two URLs redirecting to
	// one page fetch it once.
	cross := l.CrossHost || !strings.EqualFold(next.Hostname(), resp.url.Hostname()) ||
		resp.url.Scheme == "https" && next.Scheme == "http"
	w.batch = append(w.batch, Request{URL: key, Wire: wireField(wire, key), Depth: l.Depth, Redirects: l.Redirects - 1,
		Kind: kind, CrossHost: cross, Referrer: wireURL(&l.Request)})
	res.NumURLs = 1 // the target is the redirect's one link
}

// allowsLink applies the LinkFilters to a typed link. A filter that panics
// gives an error wrapping ErrPanic.
func (r *run) allowsLink(l *Link) (ok bool, err error) {
	err = protect("link filter", func() error {
		ok = true
		for _, f := range r.cfg.linkFilters {
			if !f(l) {
				ok = false
				break
			}
		}
		return nil
	})
	return ok, err
}

// allows applies the exclude patterns and the filters to a link or
// redirect target in scope. A filter that panics gives an error wrapping
// ErrPanic.
func (r *run) allows(key string, u *url.URL) (ok bool, err error) {
	if len(r.cfg.filters) == 0 {
		return r.scope.allows(key, u), nil
	}
	err = protect("filter", func() error {
		ok = r.scope.allows(key, u)
		return nil
	})
	return ok, err
}

// follow adds the new links in scope of the page base, which l fetched,
// to the worker's batch as requests of kind at depth, and counts them in
// res. Past WithMaxDepth, links are refused, not queued. The trap
// limits apply to the links queued: the links of a page past its first
// WithMaxLinksPerPage distinct ones in scope are left unread (a sitemap's
// are not: it has its own limit), and a link too long or with a segment
// repeated too often is dropped; the refusals are counted in the tally,
// once for the page.
//
// A link the extractor returned is resolved in place, to the URL
// Standard's serialisation that is sent (see Link.URL): the crawler owns
// it, and a program that kept it sees the URL that was queued.
func (r *run) follow(w *worker, l *Lease, base *url.URL, links []*url.URL, kind RequestKind, depth int, res *Result) error {
	// Relative links resolve against base as the URL Standard has it; a
	// base it refuses leaves them out.
	std, err := urlstd.FromURL(base)
	if err != nil {
		return nil
	}
	clear(w.keys)
	lg := r.newLinkGate(w, l, res)
	deep := r.cfg.maxDepth > 0 && depth > r.cfg.maxDepth
	if l.Kind != PageRequest {
		lg.maxLinks = 0
	}
	for i, u := range links {
		if u == nil {
			continue
		}
		v, err := urlstd.Parse(urlstd.RefString(u), &std)
		if err != nil {
			continue
		}
		v.SetURL(u)
		wire := v.String()
		_, stop, err := lg.add(u, wire, urlstd.WireKey(wire), kind, depth, true, deep)
		if err != nil {
			return err
		}
		if stop {
			lg.refused[refuseLinksPerPage] = len(links) - i
			break
		}
	}
	lg.done()
	return nil
}

// followTyped adds to the worker's batch what the typed links of a page or
// a resource, fetched by l, lead to: the navigation links of a page within
// scope, one deeper (unless nofollow, from the page's robots directives);
// with WithRequisites, the requisites, on any host, at the page's depth;
// with WithReferences, the references in scope, at the page's depth. A
// resource (a requisite or reference fetched) leads only to its own
// requisites: those a stylesheet imports and, with WithSpeculative, those
// a script names.
func (r *run) followTyped(w *worker, l *Lease, links []Link, unread int, nofollow bool, res *Result) error {
	clear(w.keys)
	lg := r.newLinkGate(w, l, res)
	deep := r.cfg.maxDepth > 0 && l.Depth+1 > r.cfg.maxDepth
	// The navigation links first: a URL the page names as a page and as a
	// requisite or a reference (a form's action and a link to it, an
	// <object data> and an <a href>) is followed as a page, whichever the
	// document names first (the first took it, and a page taken as a
	// resource had its links left unfollowed).
passes:
	for pass := range 2 {
		for i := range links {
			lk := &links[i]
			if (lk.Role == Navigation) != (pass == 0) {
				continue
			}
			lk.Fate = LinkNotFollowed
			kind, depth, scoped, past := ResourceRequest, l.Depth, true, false
			switch lk.Role {
			case Navigation:
				if l.Kind != PageRequest {
					continue
				}
				if nofollow || r.cfg.directives && hasRel(lk.Rel, "nofollow") {
					lk.Fate = LinkNofollow
					continue
				}
				kind, depth, past = PageRequest, l.Depth+1, deep
			case Requisite:
				if !r.cfg.requisites {
					continue
				}
				scoped = false
			case Reference:
				if !r.cfg.references || l.Kind != PageRequest {
					continue
				}
				if nofollow {
					// URLs the page names, as its links are: not
					// followed either. Its requisites are, as a browser
					// fetches them to show it.
					lk.Fate = LinkNofollow
					continue
				}
			default:
				continue
			}
			if len(r.cfg.linkFilters) > 0 {
				ok, err := r.allowsLink(lk)
				if err != nil {
					lg.drop()
					return fmt.Errorf("%s: %w", res.URL, err)
				}
				if !ok {
					lk.Fate = LinkExcluded
					continue
				}
			}
			// The extractor's URLs are in the URL Standard's form, as sent:
			// their String needs no parse to be made.
			wire := urlstd.String(lk.URL)
			key := urlstd.WireKey(wire)
			fate, stop, err := lg.add(lk.URL, wire, key, kind, depth, scoped, past)
			lk.Fate = fate
			if err != nil {
				return err
			}
			if stop {
				lg.refused[refuseLinksPerPage] = r.overCap(l, links, pass, i)
				break passes
			}
		}
	}
	lg.refused[refuseLinksPerPage] += unread
	lg.done()
	return nil
}

// overCap marks the links of a page that the per-page cap stopped at link
// i of pass (see followTyped) over the cap, and counts them: those of the
// pass from i on and, in the first pass, those of the second it would have
// taken up (the others were never to be followed).
func (r *run) overCap(l *Lease, links []Link, pass, i int) int {
	n := 0
	for j := range links {
		lk := &links[j]
		switch {
		case (lk.Role == Navigation) == (pass == 0):
			if j >= i {
				n++
				if j > i {
					lk.Fate = LinkOverCap
				}
			}
		case pass == 1:
		case lk.Role == Requisite && r.cfg.requisites,
			lk.Role == Reference && r.cfg.references && l.Kind == PageRequest:
			n++
			lk.Fate = LinkOverCap
		default:
			lk.Fate = LinkNotFollowed
		}
	}
	return n
}

// linkGate is where the links of one page pass scope, dedupe, the per-page
// cap, the exclude patterns and filters, and the trap limits, on their way
// to the worker's batch.
type linkGate struct {
	r        *run
	w        *worker
	l        *Lease
	res      *Result
	start    int // the page's first request in w.batch
	counted  int // res.NumURLs before the page's links
	maxLinks int
	refused  [numRefusals]int
}

func (r *run) newLinkGate(w *worker, l *Lease, res *Result) linkGate {
	return linkGate{r: r, w: w, l: l, res: res, start: len(w.batch), counted: res.NumURLs, maxLinks: r.cfg.maxLinksPerPage}
}

// drop takes the page's links back out of the worker's batch, and out of
// the Result's count, when an error ends the page.
func (g *linkGate) drop() {
	g.w.batch = g.w.batch[:g.start]
	g.res.NumURLs = g.counted
}

// add considers u, of the forms wire and key (see urlstd.Forms), as a request
// of kind at depth, deduped on key: out of scope
// (when scoped), a duplicate, excluded or filtered out, it is dropped;
// past the depth limit it is refused; else the trap limits may refuse it.
// Only a link that goes to the batch counts in the Result's NumURLs. It returns what became of u; stop reports that the
// per-page cap is reached: the page's links from this one on are left
// unread.
func (g *linkGate) add(u *url.URL, wire, key string, kind RequestKind, depth int, scoped, past bool) (fate LinkFate, stop bool, err error) {
	if scoped && !g.r.scope.contains(u) {
		if !g.r.cfg.checkExternal || kind != PageRequest || !urlstd.IsHTTP(u) {
			return LinkOutOfScope, false, nil
		}
		// Not followed, but checked: its status only.
		kind, scoped, past = CheckRequest, false, false
	}
	if !scoped && !urlstd.IsHTTP(u) {
		return LinkOutOfScope, false, nil
	}
	if _, dup := g.w.keys[key]; dup {
		return LinkDuplicate, false, nil
	}
	if g.maxLinks > 0 && len(g.w.keys) == g.maxLinks {
		return LinkOverCap, true, nil
	}
	g.w.keys[key] = struct{}{}
	ok, err := g.r.allows(key, u)
	if err != nil {
		g.drop()
		return LinkExcluded, false, fmt.Errorf("%s: %w", g.res.URL, err)
	}
	if !ok {
		return LinkExcluded, false, nil
	}
	if past {
		g.refused[refuseDepth]++
		return LinkTooDeep, false, nil
	}
	if why := g.r.scope.trap(key, u); why != refuseNone {
		g.refused[why]++
		return refusalFate[why], false, nil
	}
	g.res.NumURLs++
	g.w.batch = append(g.w.batch, Request{URL: key, Wire: wireField(wire, key), Depth: depth, Redirects: g.r.cfg.maxRedirects,
		Kind: kind, Referrer: wireURL(&g.l.Request)})
	if kind == CheckRequest {
		return LinkChecked, false, nil
	}
	return LinkFollowed, false, nil
}

// done adds the page's refusals to the worker's, which are counted when
// the page is acked.
func (g *linkGate) done() {
	for reason, n := range g.refused {
		g.w.refused[reason] += n
	}
}

// hasRel reports whether a Link's Rel, lower-case words separated by one
// space, holds tok.
func hasRel(rel, tok string) bool {
	for rel != "" {
		var w string
		w, rel, _ = strings.Cut(rel, " ")
		if w == tok {
			return true
		}
	}
	return false
}

// extractTyped runs a custom typed link extractor, turning a panic into an
// error, and appends its links to buf, each resolved against p.Base and
// normalised, as the default extractor's are; a link that does not
// resolve to an http(s) URL is left out.
func (r *run) extractTyped(ctx context.Context, p *Page, buf []Link) ([]Link, error) {
	var links []Link
	err := protect("link extractor", func() (err error) {
		links, err = r.cfg.typedExtractor(ctx, p)
		return err
	})
	page := urlstd.String(p.URL)
	for _, lk := range links {
		if lk.URL == nil {
			continue
		}
		u, rerr := urlstd.Resolve(p.Base, urlstd.String(lk.URL))
		if rerr != nil || !urlstd.IsHTTP(u) {
			continue
		}
		*lk.URL = *u
		if lk.Page == "" {
			lk.Page = page
		}
		lk.Fate = LinkNotFollowed
		buf = append(buf, lk)
	}
	return buf, err
}

// extract runs a custom link extractor, turning a panic into an error.
func (r *run) extract(ctx context.Context, p *Page) (links []*url.URL, err error) {
	err = protect("link extractor", func() error {
		links, err = r.cfg.extractor(ctx, p)
		return err
	})
	return links, err
}

// deliver counts a Result and hands it to the result hook.
func (r *run) deliver(res *Result) {
	r.tally.add(res)
	switch {
	case res.Err == nil:
		if r.debug {
			// Guarded: building the record for every page would cost
			// even when the logger discards it.
			r.cfg.logger.Debug("fetched", "url", res.URL, "status", res.Status, "kind", res.Kind(), "size", res.Size)
		}
	case res.Tries == 0 && errors.Is(res.Err, ErrRobotsUnavailable):
		// Not requested: an unavailable robots.txt was logged at warn
		// once for its host.
		r.cfg.logger.Info("not fetched: robots.txt unavailable", "url", res.URL, "err", res.Err)
	case res.Tries == 0 && errors.Is(res.Err, ErrDisallowed):
		// Obeying robots.txt is no failure.
		r.cfg.logger.Info("disallowed", "url", res.URL, "err", res.Err)
	default:
		r.cfg.logger.Warn("fetch failed", "url", res.URL, "tries", res.Tries, "err", res.Err)
	}
	for _, hook := range r.cfg.resultHooks {
		if err := protect("result hook", func() error { hook(*res); return nil }); err != nil {
			r.cfg.logger.Error("result hook", "url", res.URL, "err", err)
		}
	}
}

// protect is the one place where the crawler calls the program's code
// (filters, link extractors, hooks, and through the logger wrapper, its
// log handler): it calls f, turning a panic into an error that wraps
// ErrPanic.
func protect(what string, f func() error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("%w in %s: %v", ErrPanic, what, v)
		}
	}()
	return f()
}

// safeHandler passes records to the program's log handler, turning a
// panic in it into a record dropped: a logger is user code
// too, and a panic in it must not end the crawl.
type safeHandler struct{ h slog.Handler }

func (s safeHandler) Enabled(ctx context.Context, l slog.Level) (on bool) {
	if err := protect("log handler", func() error { on = s.h.Enabled(ctx, l); return nil }); err != nil {
		return false
	}
	return on
}

func (s safeHandler) Handle(ctx context.Context, r slog.Record) error {
	return protect("log handler", func() error { return s.h.Handle(ctx, r) })
}

func (s safeHandler) WithAttrs(as []slog.Attr) slog.Handler {
	h := s.h
	protect("log handler", func() error { h = s.h.WithAttrs(as); return nil })
	return safeHandler{h}
}

func (s safeHandler) WithGroup(name string) slog.Handler {
	h := s.h
	protect("log handler", func() error { h = s.h.WithGroup(name); return nil })
	return safeHandler{h}
}
