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
// deduplicated; links come from the x/net/html tokenizer, not a regular
// expression; every attempt has a timeout and every body a size cap;
// retries back off and honour Retry-After; scope uses the public suffix
// list; and hooks, filters and link extractors let a program take part.
//
// # Politeness
//
// The chapter's crawler sends max_tasks requests at once to one host. Here
// the frontier schedules per host: at most WithHostWorkers requests in
// flight to a host, a randomised WithHostDelay between their starts,
// robots.txt obeyed (WithRobots, on by default, with its Crawl-delay capped
// at 30s), and a 429 or 503 with Retry-After pausing the whole host. A URL
// waiting for its host never holds a worker: the workers take whatever URL
// of any host may go now, so a slow host does not slow the others. Budgets
// (WithMaxDepth, WithMaxPages, WithMaxDuration) end a crawl early and
// exactly.
//
// # Guarantees
//
// Every URL that enters the queue ends with exactly one Result, delivered to
// the result hook, unless the Run is cancelled or a budget ends it first, in
// which case the URLs still queued are counted in Stats.Todo. Run always
// returns, and no goroutine it started outlives it.
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
	"time"

	"golang.org/x/sync/errgroup"
)

// Crawler holds the configuration of a crawl. It is immutable once New
// returns it and holds no crawl state, so Run may be called many times,
// also concurrently, each Run with its own queue and seen set.
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

// run is the state of one Run.
type run struct {
	cfg       *config
	scope     *scope
	front     frontier
	client    *http.Client
	tally     *tally
	debug     bool            // the logger wants debug records
	token     string          // the product token of the User-Agent, for robots.txt
	rootHosts map[string]bool // by hostKey: whose sitemaps are read
}

// errDuration is the cause of a Run's context ending at WithMaxDuration.
var errDuration = errors.New("crawl: max duration reached")

// Run crawls from roots until no URL is left to fetch, or until ctx is done.
// A root is an absolute http or https URL; a bare host ("example.com") gets
// "http://" first. Roots are always fetched, unless robots.txt disallows
// them; their hosts set the scope.
//
// Run returns the Stats of the crawl. The error is nil when the crawl ran to
// its end, whatever the pages returned, or when a budget (WithMaxPages,
// WithMaxDuration) ended it, as Stats.Budget says; it reports a bad root
// (before anything is fetched), or ctx.Err() when ctx was done first, in
// which case Run returns promptly with the Stats so far. Run returns only
// after every goroutine it started has exited and every hook call has
// returned.
func (c *Crawler) Run(ctx context.Context, roots ...string) (*Stats, error) {
	start := time.Now()
	if len(roots) == 0 {
		return nil, errors.New("crawl: no root URL")
	}
	var rootURLs []*url.URL
	for _, s := range roots {
		u, err := parseRoot(s)
		if err != nil {
			return nil, err
		}
		rootURLs = append(rootURLs, u)
	}
	client, owned, err := c.cfg.newClient()
	if err != nil {
		return nil, fmt.Errorf("crawl: %w", err)
	}
	if owned {
		defer client.CloseIdleConnections()
	}
	rctx := ctx
	if d := c.cfg.maxDuration; d > 0 {
		var cancel context.CancelFunc
		rctx, cancel = context.WithTimeoutCause(ctx, d, errDuration)
		defer cancel()
	}
	r := &run{
		cfg:       &c.cfg,
		scope:     newScope(rootURLs, &c.cfg),
		front:     newMemFrontier(&c.cfg),
		client:    client,
		tally:     newTally(c.cfg.workers),
		debug:     c.cfg.logger.Enabled(ctx, slog.LevelDebug),
		token:     productToken(c.cfg.userAgent),
		rootHosts: map[string]bool{},
	}
	var first []task
	for _, u := range rootURLs {
		first = append(first, task{url: u.String(), redirects: c.cfg.maxRedirects})
		r.rootHosts[hostKey(u.String())] = true
	}
	if _, err := r.front.push(rctx, first...); err != nil {
		return nil, fmt.Errorf("crawl: queue roots: %w", err)
	}
	if c.cfg.sitemaps && !c.cfg.robots {
		// With robots.txt, its Sitemap lines are read first; see robots.
		for _, key := range slices.Sorted(maps.Keys(r.rootHosts)) {
			r.pushSitemaps(rctx, key, nil)
		}
	}

	wctx, stopWorkers := context.WithCancel(rctx)
	defer stopWorkers()
	var g errgroup.Group
	for range c.cfg.workers {
		g.Go(func() error {
			r.work(rctx, wctx)
			return nil
		})
	}
	if f := c.cfg.progress; f != nil {
		g.Go(func() error {
			r.report(wctx, start, f)
			return nil
		})
	}
	err = r.front.join(rctx)
	stopWorkers()
	g.Wait()

	stats := r.tally.snapshot()
	stats.Todo = r.front.queued()
	stats.Elapsed = time.Since(start)
	// The deadline may also come while the pages in flight finish after
	// the page budget was spent: the error is nil then too.
	overTime := err != nil && ctx.Err() == nil && errors.Is(context.Cause(rctx), errDuration)
	if overTime {
		err = nil
	}
	switch {
	case r.front.spent():
		stats.Budget = "max_pages"
	case overTime:
		stats.Budget = "max_duration"
	}
	return stats, err
}

// report calls f with a Progress every interval until ctx is done.
func (r *run) report(ctx context.Context, start time.Time, f func(Progress)) {
	t := time.NewTicker(r.cfg.progressEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		p := Progress{Stats: *r.tally.snapshot(), Queued: r.front.queued(), InFlight: r.front.inFlight()}
		p.Elapsed = time.Since(start)
		if err := protect("progress hook", func() error { f(p); return nil }); err != nil {
			r.cfg.logger.Error("progress hook", "err", err)
		}
	}
}

// worker is the reusable state of one worker goroutine.
type worker struct {
	buf   []byte              // response body
	page  pageLinks           // a page's links, as the default extractor found them
	keys  map[string]struct{} // a page's distinct links
	batch []task              // a page's new tasks
}

// maxKeptBuf is the largest body buffer a worker keeps between pages; a
// larger one, from a rare large page, is left to the garbage collector.
const maxKeptBuf = 1 << 20

// maxKeptRefs is the most link references a worker keeps room for between
// pages, for the same reason.
const maxKeptRefs = 1 << 14

// work is the worker loop: take a task, process it, until wctx is
// cancelled. Fetches use ctx, the Run's context, so that the workers' own
// cancellation (the crawl is over) never cuts a fetch short.
func (r *run) work(ctx, wctx context.Context) {
	w := &worker{keys: make(map[string]struct{})}
	for {
		t, err := r.front.pop(wctx)
		if err != nil {
			return
		}
		if t.kind == kindRobots {
			// Not a URL of the crawl: when the crawl is over (a budget
			// spent), a robots.txt still in flight is cut short.
			r.robots(wctx, w, t)
		} else {
			r.process(ctx, w, t)
		}
		if cap(w.buf) > maxKeptBuf {
			w.buf = nil
		}
		if cap(w.page.refs) > maxKeptRefs {
			w.page.refs = nil
		}
	}
}

// process makes one attempt at a task. It puts the task back to be retried
// later, or follows what it found, delivers its Result and marks it done.
func (r *run) process(ctx context.Context, w *worker, t task) {
	if t.first.IsZero() {
		t.first = time.Now()
	}
	res := Result{URL: t.url, Depth: t.depth, Tries: t.tries}
	retried := false
	defer func() {
		if v := recover(); v != nil {
			res.Err = fmt.Errorf("%s: %w: %v", t.url, ErrPanic, v)
		} else if retried {
			return
		}
		res.Elapsed = time.Since(t.first)
		r.deliver(&res)
		if err := r.front.done(t); err != nil {
			// Only a bug in the frontier's accounting gets here.
			r.cfg.logger.Error("frontier", "err", err)
		}
	}()
	if t.err != nil {
		res.Err = fmt.Errorf("fetch %s: %w", t.url, t.err)
		return
	}

	limit := r.cfg.maxBodySize
	if t.kind == kindSitemap {
		limit = MaxSitemapBytes // attempt cuts the body there, not fails it
	}
	res.Tries++
	resp, err := r.attempt(ctx, w, t, limit)
	r.overload(t, resp)
	if wait, ok := r.retryable(ctx, resp, err, res.Tries); ok {
		r.cfg.logger.Info("retry", "url", t.url, "try", res.Tries, "wait", wait, "status", statusOf(resp), "err", err)
		t.tries = res.Tries
		t.at = time.Now().Add(wait)
		r.front.retry(t)
		retried = true
		return
	}
	if resp != nil {
		res.Status = resp.status
		res.ContentType = resp.contentType
		res.Size = len(resp.body)
	}
	if err != nil {
		res.Err = err
		return
	}
	if isRedirect(resp.status) {
		r.redirect(ctx, t, resp, &res)
		return
	}

	p := &Page{
		URL:         resp.url,
		Depth:       t.depth,
		Status:      resp.status,
		Header:      resp.header,
		ContentType: resp.contentType,
		Body:        resp.body,
	}
	if isText(resp.contentType) && t.kind == kindPage && !resp.encoded {
		p.Body, p.Encoding = decode(resp.body, resp.contentType, resp.charset)
		res.Encoding = p.Encoding
	}
	ok := resp.status >= 200 && resp.status <= 299
	var n int                   // the page's links
	var link func(int) *url.URL // link i of n, or nil
	if ok && t.kind == kindPage && r.cfg.extractor == nil && isHTML(p.ContentType) && !resp.encoded {
		// The default extractor reads the robots meta tags in the same
		// pass, before the page hook, which sees them. It leaves the
		// links as written, to be resolved as follow takes them.
		w.page.scan(p.URL, p.Body, r.cfg.robots)
		n, link = len(w.page.refs), w.page.link
		if r.cfg.robots {
			p.NoIndex, p.NoFollow = w.page.meta.noindex, w.page.meta.nofollow
		}
	} else if r.cfg.robots && isHTML(p.ContentType) && !resp.encoded {
		meta := pageMeta(p.Body)
		p.NoIndex, p.NoFollow = meta.noindex, meta.nofollow
	}
	if r.cfg.robots {
		h := headerRobots(resp.header, r.token)
		p.NoIndex = p.NoIndex || h.noindex
		p.NoFollow = p.NoFollow || h.nofollow
	}
	if hook := r.cfg.pageHook; hook != nil {
		if err := protect("page hook", func() error { hook(p); return nil }); err != nil {
			res.Err = fmt.Errorf("%s: %w", t.url, err)
			return
		}
	}
	if !ok {
		return
	}
	if t.kind == kindSitemap {
		if err := r.sitemap(ctx, w, t, p, &res); err != nil {
			res.Err = err
		}
		return
	}
	if link == nil && r.cfg.extractor != nil {
		links, err := r.extract(ctx, p)
		if err != nil {
			res.Err = fmt.Errorf("%s: extract links: %w", t.url, err)
			return
		}
		n, link = len(links), urlsAt(links)
	}
	if p.NoFollow && r.cfg.robots || n == 0 {
		return
	}
	if err := r.follow(ctx, w, t, p.URL, n, link, kindPage, t.depth+1, &res); err != nil {
		res.Err = err
	}
}

// overload pauses the whole host of t when a 429 or 503 response says,
// with Retry-After, when to come back.
func (r *run) overload(t task, resp *response) {
	if resp == nil || resp.status != http.StatusTooManyRequests && resp.status != http.StatusServiceUnavailable {
		return
	}
	now := time.Now()
	if d, ok := retryAfter(resp.header.Get("Retry-After"), now); ok && d > 0 {
		r.front.pause(t.url, now.Add(min(d, r.cfg.maxRetryAfter)))
	}
}

// redirect records a redirect response in res and queues its target.
func (r *run) redirect(ctx context.Context, t task, resp *response, res *Result) {
	next, err := resp.location()
	if err != nil {
		res.Err = fmt.Errorf("fetch %s: status %d: %w", t.url, resp.status, err)
		return
	}
	normalize(next)
	res.NextURL = next.String()
	if t.redirects <= 0 {
		res.Err = fmt.Errorf("fetch %s: redirect to %s: %w", t.url, res.NextURL, ErrTooManyRedirects)
		return
	}
	if !r.scope.contains(next) || !r.scope.allows(res.NextURL, next) {
		return
	}
	if why := r.scope.trap(res.NextURL, next); why != refuseNone {
		var n [numRefusals]int
		n[why] = 1
		r.tally.refuse(&n)
		return
	}
	// A target already seen is not queued again: two URLs redirecting to
	// one page fetch it once.
	cross := t.crossHost || !strings.EqualFold(next.Hostname(), resp.url.Hostname()) ||
		resp.url.Scheme == "https" && next.Scheme == "http"
	if _, err := r.front.push(ctx, task{url: res.NextURL, depth: t.depth, redirects: t.redirects - 1, kind: t.kind, crossHost: cross}); err != nil {
		res.Err = fmt.Errorf("fetch %s: queue redirect: %w", t.url, err)
	}
}

// follow queues the new links in scope of the page base, which t fetched,
// as tasks of kind at depth, and counts them in res. Past WithMaxDepth,
// links are counted but not queued. The trap limits apply to the links
// queued: the links of a page past its first WithMaxLinksPerPage distinct
// ones in scope are left unread (a sitemap's are not: it has its own
// limit), and a link too long or with a segment repeated too often is
// dropped; the refusals are counted in the tally, once for the page.
func (r *run) follow(ctx context.Context, w *worker, t task, base *url.URL, n int, link func(int) *url.URL, kind taskKind, depth int, res *Result) error {
	clear(w.keys)
	w.batch = w.batch[:0]
	deep := r.cfg.maxDepth > 0 && depth > r.cfg.maxDepth
	maxLinks := r.cfg.maxLinksPerPage
	if t.kind != kindPage {
		maxLinks = 0
	}
	var refused [numRefusals]int
	for i := range n {
		u := link(i)
		if u == nil {
			continue
		}
		if !u.IsAbs() {
			u = base.ResolveReference(u)
		}
		normalize(u)
		if !r.scope.contains(u) {
			continue
		}
		key := u.String()
		if _, dup := w.keys[key]; dup {
			continue
		}
		if maxLinks > 0 && len(w.keys) == maxLinks {
			refused[refuseLinksPerPage] = n - i
			break
		}
		w.keys[key] = struct{}{}
		if !r.scope.allows(key, u) {
			continue
		}
		if !deep {
			if why := r.scope.trap(key, u); why != refuseNone {
				refused[why]++
				continue
			}
		}
		w.batch = append(w.batch, task{url: key, depth: depth, redirects: r.cfg.maxRedirects, kind: kind})
	}
	res.NumURLs += len(w.batch)
	if deep {
		// Nothing is queued, so no limit bit.
		return nil
	}
	if refused != ([numRefusals]int{}) {
		r.tally.refuse(&refused)
	}
	n, err := r.front.push(ctx, w.batch...)
	res.NumNewURLs += n
	if err != nil {
		return fmt.Errorf("%s: queue links: %w", t.url, err)
	}
	return nil
}

// urlsAt returns the function that gives us[i], a link source for follow.
func urlsAt(us []*url.URL) func(int) *url.URL {
	return func(i int) *url.URL { return us[i] }
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
	case res.Tries == 0 && errors.Is(res.Err, ErrDisallowed):
		// Obeying robots.txt is no failure; an unreachable robots.txt
		// was logged at warn once for its host.
		r.cfg.logger.Info("disallowed", "url", res.URL, "err", res.Err)
	default:
		r.cfg.logger.Warn("fetch failed", "url", res.URL, "tries", res.Tries, "err", res.Err)
	}
	if hook := r.cfg.resultHook; hook != nil {
		if err := protect("result hook", func() error { hook(*res); return nil }); err != nil {
			r.cfg.logger.Error("result hook", "url", res.URL, "err", err)
		}
	}
}

// protect calls f, turning a panic into an error that wraps ErrPanic.
func protect(what string, f func() error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("%w in %s: %v", ErrPanic, what, v)
		}
	}()
	return f()
}
