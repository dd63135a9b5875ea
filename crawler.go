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
//     q.Get(ctx), q.join() is q.Join(ctx).
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
// # Guarantees
//
// Every URL that enters the queue ends with exactly one Result, delivered to
// the result hook, unless the Run is cancelled first, in which case the URLs
// still queued are counted in Stats.Todo. Run always returns, and no
// goroutine it started outlives it.
package crawl

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
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
	cfg    *config
	scope  *scope
	front  frontier
	client *http.Client
	tally  *tally
	debug  bool // the logger wants debug records
}

// Run crawls from roots until no URL is left to fetch, or until ctx is done.
// A root is an absolute http or https URL; a bare host ("example.com") gets
// "http://" first. Roots are always fetched; their hosts set the scope.
//
// Run returns the Stats of the crawl. The error is nil when the crawl ran to
// its end, whatever the pages returned; it reports a bad root (before
// anything is fetched), or ctx.Err() when ctx was done first, in which case
// Run returns promptly with the Stats so far. Run returns only after every
// goroutine it started has exited and every hook call has returned.
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
	client, owned := c.cfg.newClient()
	if owned {
		defer client.CloseIdleConnections()
	}
	r := &run{
		cfg:    &c.cfg,
		scope:  newScope(rootURLs, &c.cfg),
		front:  newMemFrontier(),
		client: client,
		tally:  newTally(c.cfg.workers),
		debug:  c.cfg.logger.Enabled(ctx, slog.LevelDebug),
	}
	for _, u := range rootURLs {
		if _, err := r.front.push(ctx, task{url: u.String(), redirects: c.cfg.maxRedirects}); err != nil {
			return nil, fmt.Errorf("crawl: queue root %s: %w", u, err)
		}
	}

	wctx, stopWorkers := context.WithCancel(ctx)
	defer stopWorkers()
	var g errgroup.Group
	for range c.cfg.workers {
		g.Go(func() error {
			r.work(ctx, wctx)
			return nil
		})
	}
	err := r.front.join(ctx)
	stopWorkers()
	g.Wait()

	stats := r.tally.snapshot()
	stats.Todo = r.front.queued()
	stats.Elapsed = time.Since(start)
	return stats, err
}

// worker is the reusable state of one worker goroutine.
type worker struct {
	buf   []byte              // response body
	links []*url.URL          // a page's links
	keys  map[string]struct{} // a page's distinct links
	batch []task              // a page's new tasks
}

// maxKeptBuf is the largest body buffer a worker keeps between pages; a
// larger one, from a rare large page, is left to the garbage collector.
const maxKeptBuf = 1 << 20

// work is the worker loop: take a URL, process it, mark it done, until
// wctx is cancelled. Fetches use ctx, the Run's context, so that the
// workers' own cancellation (the crawl is over) never cuts a fetch short.
func (r *run) work(ctx, wctx context.Context) {
	w := &worker{keys: make(map[string]struct{})}
	for {
		t, err := r.front.pop(wctx)
		if err != nil {
			return
		}
		r.process(ctx, w, t)
		if cap(w.buf) > maxKeptBuf {
			w.buf = nil
		}
		if err := r.front.done(); err != nil {
			// Only a bug in the frontier's accounting gets here.
			r.cfg.logger.Error("frontier", "err", err)
		}
	}
}

// process fetches one URL, follows what it found and delivers its Result.
func (r *run) process(ctx context.Context, w *worker, t task) {
	start := time.Now()
	res := Result{URL: t.url, Depth: t.depth}
	defer func() {
		if v := recover(); v != nil {
			res.Err = fmt.Errorf("%s: %w: %v", t.url, ErrPanic, v)
		}
		res.Elapsed = time.Since(start)
		r.deliver(&res)
	}()

	resp, err := r.fetch(ctx, w, t, &res)
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
	if isText(resp.contentType) {
		p.Body, p.Encoding = decode(resp.body, resp.contentType, resp.charset)
		res.Encoding = p.Encoding
	}
	if hook := r.cfg.pageHook; hook != nil {
		if err := protect("page hook", func() error { hook(p); return nil }); err != nil {
			res.Err = fmt.Errorf("%s: %w", t.url, err)
			return
		}
	}
	if resp.status < 200 || resp.status > 299 {
		return
	}
	if err := r.follow(ctx, w, t, p, &res); err != nil {
		res.Err = err
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
	// A target already seen is not queued again: two URLs redirecting to
	// one page fetch it once.
	if _, err := r.front.push(ctx, task{url: res.NextURL, depth: t.depth, redirects: t.redirects - 1}); err != nil {
		res.Err = fmt.Errorf("fetch %s: queue redirect: %w", t.url, err)
	}
}

// follow extracts the page's links and queues the new ones in scope.
func (r *run) follow(ctx context.Context, w *worker, t task, p *Page, res *Result) error {
	links, err := r.extract(ctx, w, p)
	if err != nil {
		return fmt.Errorf("%s: extract links: %w", t.url, err)
	}
	clear(w.keys)
	w.batch = w.batch[:0]
	for _, u := range links {
		if !u.IsAbs() {
			u = p.URL.ResolveReference(u)
		}
		normalize(u)
		if !r.scope.contains(u) {
			continue
		}
		key := u.String()
		if _, dup := w.keys[key]; dup {
			continue
		}
		w.keys[key] = struct{}{}
		if !r.scope.allows(key, u) {
			continue
		}
		w.batch = append(w.batch, task{url: key, depth: t.depth + 1, redirects: r.cfg.maxRedirects})
	}
	res.NumURLs = len(w.batch)
	n, err := r.front.push(ctx, w.batch...)
	res.NumNewURLs = n
	if err != nil {
		return fmt.Errorf("%s: queue links: %w", t.url, err)
	}
	return nil
}

// extract runs the link extractor, turning a panic into an error. The
// default extractor appends into the worker's reusable slice.
func (r *run) extract(ctx context.Context, w *worker, p *Page) (links []*url.URL, err error) {
	if r.cfg.extractor == nil {
		if !isHTML(p.ContentType) {
			return nil, nil
		}
		clear(w.links)
		w.links = appendLinks(w.links[:0], p.URL, p.Body)
		return w.links, nil
	}
	err = protect("link extractor", func() error {
		links, err = r.cfg.extractor(ctx, p)
		return err
	})
	return links, err
}

// deliver counts a Result and hands it to the result hook.
func (r *run) deliver(res *Result) {
	r.tally.add(res)
	if res.Err != nil {
		r.cfg.logger.Warn("fetch failed", "url", res.URL, "tries", res.Tries, "err", res.Err)
	} else if r.debug {
		// Guarded: building the record for every page would cost even
		// when the logger discards it.
		r.cfg.logger.Debug("fetched", "url", res.URL, "status", res.Status, "kind", res.Kind(), "size", res.Size)
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
