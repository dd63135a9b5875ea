package crawl

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/asyncrawl/crawl/internal/extract"
	"github.com/asyncrawl/crawl/internal/robots"
	"github.com/asyncrawl/crawl/internal/sched"
	"github.com/asyncrawl/crawl/internal/urlstd"
)

// A Renderer loads pages in a browser for the crawler, so that the links a
// page's scripts build are found (see WithRenderer). The crawler defines
// the seam and decides every request the browser makes; the package
// github.com/asyncrawl/crawl/render, a module of its own, implements it
// with headless Chromium.
type Renderer interface {
	// Open starts what one Run renders with (a browser and its tabs, with
	// cookies and storage of their own). The Run calls it once, before
	// its first page, and closes the session before it returns. ctx is
	// the Run's: a session must not outlive it.
	Open(ctx context.Context) (RenderSession, error)
}

// A RenderSession renders the pages of one Run. Render is called from
// several workers at once; Close once, after every Render has returned.
type RenderSession interface {
	// Render loads p in the browser, serving p's own response as the
	// document and every other request of the browser through p.Fetch,
	// and returns what the page showed once its scripts ran, within ctx.
	// An error with a non-nil Rendered means the page was cut short
	// (at its deadline, say) and Rendered holds what was found until
	// then.
	Render(ctx context.Context, p *RenderPage) (*Rendered, error)
	// Close ends the session: the browser is stopped, and nothing of it
	// outlives the call.
	Close() error
}

// RenderPage is a page the crawler asks a RenderSession to render.
type RenderPage struct {
	// URL is the page's URL, as the crawler requested it.
	URL *url.URL
	// Status, Header and Body are the crawler's response for the page,
	// Body decompressed but not decoded from its charset: the browser is
	// served the document from them, not sent to fetch it again. Body is
	// valid only during the call to Render.
	Status int
	Header http.Header
	Body   []byte
	// Fetch sends a request the browser makes, as the crawler decides:
	// an error wrapping ErrRenderRefused means the crawler's policy
	// refused it (the browser is to see it fail); any other error is the
	// fetch's. Safe for concurrent use during the call to Render.
	Fetch func(ctx context.Context, req *BrowserRequest) (*BrowserResponse, error)
}

// BrowserRequest is a request a browser makes while it renders a page.
type BrowserRequest struct {
	Method string // "GET", "HEAD"; the crawler refuses any other
	URL    string
	// Header is the browser's own, for a Fetch to judge the request by:
	// none of it is sent; the crawler sends its own headers and
	// User-Agent.
	Header http.Header
	// Role is what the request is to the page: Requisite for what the
	// page loads (scripts, stylesheets, images, fonts, fetch and
	// XMLHttpRequest, workers), Navigation for a frame's document.
	Role LinkRole
}

// BrowserResponse is the crawler's answer to a BrowserRequest.
type BrowserResponse struct {
	Status int
	// Header is the response's, with Content-Encoding and Content-Length
	// gone when Body was decompressed.
	Header http.Header
	Body   []byte
	// Truncated says that Body stops at WithMaxBodySize.
	Truncated bool
}

// Rendered is what a page showed in the browser.
type Rendered struct {
	// DOM is the document after its scripts ran, serialised as HTML.
	// The crawler extracts its links as it does a page's (Source "render
	// dom" for those the static page did not have), resolved against URL.
	DOM []byte
	// URL is the document's URL when DOM was read, as the browser
	// resolved the DOM's relative links against it: the page's, or the
	// last one a pushState or replaceState put in its place. "" means
	// the page's.
	URL string
	// Links are the URLs the browser met: each request it made (Source
	// "render request"), each URL the page put in its history by
	// pushState or replaceState ("render history"), each main-frame
	// navigation or window.open, named by what the renderer was doing
	// when it came ("render navigation" before its first click, "render
	// click" from then on), and the URL each GET form's submission with
	// its default values goes to ("render form"). URL is absolute and
	// Role as the browser used it; the crawler sets Page, and drops the
	// URLs the static page or the DOM already holds.
	Links []Link
}

// ErrRender is wrapped by the error of a Result whose page could not be
// rendered (a browser that failed, a page cut at its deadline): the links
// the static page and the partial render held are followed all the same.
// Run's own error wraps it when the Renderer cannot open its session (a
// browser that does not start).
var ErrRender = errors.New("render")

// ErrRenderRefused is wrapped by the error RenderPage.Fetch returns for a
// request of the browser that the crawler's policy refuses: a method other
// than GET or HEAD, a URL out of scope or excluded, a URL robots.txt
// disallows. A request to a blocked address fails with ErrBlockedAddress
// instead.
var ErrRenderRefused = errors.New("refused by the crawler")

// RenderPolicy says which pages WithRenderer renders.
type RenderPolicy uint8

const (
	// RenderAll renders every page of HTML fetched with status 2xx (but
	// 204 and 205, an empty body, and a download: Content-Disposition
	// attachment, none of which a browser shows).
	RenderAll RenderPolicy = iota
	// RenderAuto renders a page of HTML only when NeedsRender says
	// its scripts build its content.
	RenderAuto
)

// WithRenderer sets a Renderer that loads pages the crawl fetches in a
// browser, and adds what the browser found to the page's typed links,
// followed by role as the static ones are. The pages are the
// PageRequests with a 2xx status and an HTML type whose typed links the
// crawler extracted (not with WithLinkExtractor, nor when a
// TypedLinkExtractor failed, nor for a body in a content coding the
// crawler cannot decode); policy says which of them.
//
// Every request the browser sends goes through the crawler (a Renderer
// fails unsent what it cannot intercept): only GET and
// HEAD; the URL in scope for its role (a requisite on another host only
// with WithRequisites); allowed by the exclude patterns, the filters and
// robots.txt; sent by the crawl's client (WithBlockPrivateNetworks,
// WithTransportWrapper, WithMaxBodySize and WithRequestTimeout apply; the
// trap limits and WithMaxPages do not); to a host at most WithHostWorkers
// at once, their starts spaced by the host's delay (each pause drawn from
// [d/2, 3d/2], never under its Crawl-delay, as the frontier's), counted together with the crawl's own
// requests to the host in this process. A worker may then wait for the
// browser's requests before it sends its own; with a delay, the frontier
// is told of each of the browser's requests (Frontier.Pause), so that the
// other processes of a shared crawl wait it too. The document itself is
// the crawler's response, not fetched again. A page that cannot be
// rendered keeps its static links and gets a Result error wrapping
// ErrRender. The default is none: nothing is rendered.
func WithRenderer(r Renderer, policy RenderPolicy) Option {
	return optionFunc(func(c *config) { c.renderer, c.renderPolicy = r, policy })
}

// NeedsRender reports whether the static page of HTML body looks built by
// its scripts, which RenderAuto renders. The page must have a script that
// runs (not one of data, such as JSON-LD, nor one inside a <template>) and
// no <meta http-equiv="refresh"> (a redirect, which a static parse
// follows), and one of: less than 256 bytes of text and fewer than 2
// links; an application's root element (id "root", "app", "__next",
// "__nuxt" or "___gatsby", or an app-root element) and no link; a
// <noscript> that mentions JavaScript, with less than 1 KiB of text; a
// framework's marker attribute (ng-app, ng-version, data-reactroot,
// data-v-app) with fewer than 5 links. A page of documentation, with its
// text and links in the markup, does not.
func NeedsRender(body []byte) bool {
	return extract.NeedsRender(body)
}

// renderer is a Run's rendering: its session and the gates of the hosts
// the browser requests.
type renderer struct {
	session RenderSession
	workers int // WithHostWorkers
	mu      sync.Mutex
	hosts   map[string]*browserHost // by HostKey
}

// browserHost is the politeness of one host towards the requests the
// crawl and the browser send it from this process, and its robots.txt
// rules as the browser's requests found them.
type browserHost struct {
	slots chan struct{} // WithHostWorkers wide
	mu    sync.Mutex    // held while a request waits for the delay
	next  time.Time     // the earliest start of the next request

	robotsMu sync.Mutex  // held while the robots.txt is fetched
	robots   *hostRobots // nil until known
}

func (rr *renderer) host(key string) *browserHost {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	h := rr.hosts[key]
	if h == nil {
		h = &browserHost{slots: make(chan struct{}, rr.workers)}
		rr.hosts[key] = h
	}
	return h
}

// enter makes a request to the host one of its requests in flight: it
// takes one of the host's slots (release gives it back) and, with a delay
// d, waits until d (jittered) after the start of the one before, and
// returns when the next may start. It returns ctx's error if ctx ends
// first, holding nothing.
func (h *browserHost) enter(ctx context.Context, d, floor time.Duration) (release func(), next time.Time, err error) {
	select {
	case h.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, time.Time{}, ctx.Err()
	}
	release = func() { <-h.slots }
	if d <= 0 {
		return release, time.Time{}, nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := sleepUntil(ctx, h.next); err != nil {
		release()
		return nil, time.Time{}, err
	}
	h.next = time.Now().Add(sched.Pause(d, floor))
	return release, h.next, nil
}

// renders reports whether the page of l, fetched as resp, is rendered.
// A response a browser shows no document of is not: 204 and 205 (no
// content), an empty body, and one sent as a download (Content-Disposition:
// attachment); Chromium aborts their load, which would fail the page.
func (r *run) renders(l *Lease, p *Page) bool {
	if r.render == nil || l.Kind != PageRequest || !isHTML(p.ContentType) || p.Status < 200 || p.Status > 299 ||
		p.Status == http.StatusNoContent || p.Status == http.StatusResetContent || len(p.Body) == 0 ||
		attachment(p.Header.Get("Content-Disposition")) {
		return false
	}
	return r.cfg.renderPolicy == RenderAll || NeedsRender(p.Body)
}

// attachment reports whether a Content-Disposition value makes the body a
// download: its type is "attachment" (RFC 6266), in any case.
func attachment(cd string) bool {
	typ, _, _ := strings.Cut(cd, ";")
	return strings.EqualFold(strings.TrimSpace(typ), "attachment")
}

// renderPage renders the page of l and adds to links what the browser
// found that links does not hold. The error wraps ErrRender.
func (r *run) renderPage(ctx context.Context, l *Lease, resp *response, p *Page, links []Link) ([]Link, []byte, error) {
	rp := &RenderPage{
		URL:    resp.url,
		Status: resp.status,
		Header: resp.header,
		Body:   resp.body,
		Fetch: func(ctx context.Context, req *BrowserRequest) (*BrowserResponse, error) {
			return r.browserFetch(ctx, l, req)
		},
	}
	var rd *Rendered
	err := protect("renderer", func() (err error) {
		rd, err = r.render.session.Render(ctx, rp)
		return err
	})
	if err != nil {
		err = fmt.Errorf("%s: %w: %w", wireURL(&l.Request), ErrRender, err)
	}
	if rd == nil {
		return links, nil, err
	}
	have := make(map[string]bool, len(links))
	for i := range links {
		have[urlstd.String(links[i].URL)] = true
	}
	page := wireURL(&l.Request)
	add := func(lk Link) {
		if lk.URL == nil || !urlstd.IsHTTP(lk.URL) {
			return
		}
		// In the form the crawler sends, as the extractor's are.
		v, perr := urlstd.Resolve(nil, lk.URL.String())
		if perr != nil {
			return
		}
		s := urlstd.String(v)
		if have[s] {
			return
		}
		have[s] = true
		lk.URL, lk.Page, lk.Fate = v, page, 0
		links = append(links, lk)
	}
	if len(rd.DOM) > 0 {
		// Against the document's URL as the browser had it: a pushState
		// moves it, and the relative links with it.
		docURL := resp.url
		if rd.URL != "" {
			if u, err := urlstd.Resolve(nil, rd.URL); err == nil && urlstd.IsHTTP(u) {
				docURL = u
			}
		}
		dom, _, _, _ := scanLinksMax(nil, docURL, nil, rd.DOM, "text/html", 4*r.cfg.maxLinksPerPage, false, p.Encoding)
		for _, lk := range dom {
			lk.Source = "render dom"
			add(lk)
		}
	}
	for _, lk := range rd.Links {
		if !strings.HasPrefix(lk.Source, "render ") {
			lk.Source = "render " + lk.Source
		}
		add(lk)
	}
	return links, rd.DOM, err
}

// browserFetch decides and sends a request the browser makes while it
// renders the page of l (see WithRenderer).
func (r *run) browserFetch(ctx context.Context, l *Lease, req *BrowserRequest) (*BrowserResponse, error) {
	refuse := func(why string) (*BrowserResponse, error) {
		return nil, fmt.Errorf("browser request %s %s: %w: %s", req.Method, req.URL, ErrRenderRefused, why)
	}
	method := req.Method
	if method == "" {
		method = http.MethodGet
	}
	if method != http.MethodGet && method != http.MethodHead {
		return refuse("method " + method)
	}
	v, err := urlstd.Resolve(nil, req.URL)
	if err != nil {
		return refuse("not an http or https URL")
	}
	wire, key := urlstd.Forms(v)
	role := req.Role
	if role != Requisite && role != Navigation {
		role = Requisite
	}
	if (role == Navigation || !r.cfg.requisites) && !r.scope.contains(v) {
		return refuse("out of scope")
	}
	if ok, err := r.allows(key, v); err != nil || !ok {
		return refuse("excluded")
	}
	if len(r.cfg.linkFilters) > 0 {
		lk := Link{URL: v, Role: role, Source: "render request", Page: wireURL(&l.Request)}
		if ok, err := r.allowsLink(&lk); err != nil || !ok {
			return refuse("excluded by a link filter")
		}
	}
	hkey := HostKey(key)
	h := r.render.host(hkey)
	d, floor := r.pauseOf(0)
	if r.cfg.robots {
		rules, err := r.browserRobots(ctx, h, hkey, key)
		if err != nil {
			return nil, err
		}
		d, floor = r.pauseOf(rules.CrawlDelay())
	}
	// The host's politeness, with the crawl's own requests (see fetching).
	release, next, err := h.enter(ctx, d, floor)
	if err != nil {
		return nil, err
	}
	defer release()
	if !next.IsZero() {
		// The crawl's next request to the host waits for the delay too,
		// in the other processes of a shared frontier.
		if err := r.front.Pause(ctx, hkey, next); err != nil && ctx.Err() == nil {
			r.cfg.logger.Error("frontier", "err", err, "url", key)
		}
	}
	var buf []byte
	resp, err := r.fetch.send(ctx, &buf, task{url: wire, kind: ResourceRequest}, r.cfg.maxBodySize, method)
	if err != nil {
		return nil, err
	}
	return &BrowserResponse{Status: resp.status, Header: resp.header, Body: resp.body, Truncated: resp.truncated}, nil
}

// pauseOf returns the pause between two starts of a host's requests and
// its floor, for a host of Crawl-delay cd: the larger of WithHostDelay and
// cd, never under cd (see sched.Pause).
func (r *run) pauseOf(cd time.Duration) (d, floor time.Duration) {
	return max(r.cfg.hostDelay, cd), cd
}

// fetching makes the crawl's own request to l's host, about to be sent,
// one of the host's requests that the browser's count with (see enter):
// release gives its slot back once the response is read.
func (r *run) fetching(ctx context.Context, l *Lease) (release func(), err error) {
	d, floor := r.pauseOf(l.Rules.crawlDelay())
	release, _, err = r.render.host(HostKey(l.URL)).enter(ctx, d, floor)
	return release, err
}

// browserRobots checks key, a URL of the host hkey, against the host's
// robots.txt: the rules the crawl already holds, or else the robots.txt
// fetched for the browser's requests, once, unless the fetch was cut by
// ctx (the next request asks again). It returns the rules (nil: none).
func (r *run) browserRobots(ctx context.Context, h *browserHost, hkey, key string) (*robots.Rules, error) {
	h.robotsMu.Lock()
	if h.robots == nil {
		if v, ok := r.rules.m.Load(hkey); ok {
			h.robots = v.(*hostRobots)
		} else {
			var buf []byte
			body, _, err := r.fetch.robots(ctx, &buf, hkey+"/robots.txt")
			switch {
			case err != nil && ctx.Err() != nil:
				h.robotsMu.Unlock()
				return nil, err
			case err != nil:
				h.robots = &hostRobots{deny: &RobotsUnavailableError{URL: hkey + "/robots.txt", Err: err}}
			case body != nil:
				h.robots = &hostRobots{rules: robots.Parse(body, r.cfg.userAgent, MaxCrawlDelay)}
			default:
				h.robots = &hostRobots{}
			}
			// The robots.txt was a request to the host: the next waits
			// its turn after it, under the delay it may have set.
			if d, floor := r.pauseOf(h.robots.rules.CrawlDelay()); d > 0 {
				h.mu.Lock()
				if n := time.Now().Add(sched.Pause(d, floor)); n.After(h.next) {
					h.next = n
				}
				h.mu.Unlock()
			}
		}
	}
	hr := h.robots
	h.robotsMu.Unlock()
	if hr.deny != nil {
		return nil, fmt.Errorf("browser request %s: %w: %w", key, ErrRenderRefused, hr.deny)
	}
	if !hr.rules.Allowed(key[len(hkey):]) {
		return nil, fmt.Errorf("browser request %s: %w: %w", key, ErrRenderRefused, ErrDisallowed)
	}
	return hr.rules, nil
}

// openRenderer opens the Run's render session, if it renders.
func (r *run) openRenderer(ctx context.Context) error {
	if r.cfg.renderer == nil {
		return nil
	}
	var s RenderSession
	err := protect("renderer", func() (err error) {
		s, err = r.cfg.renderer.Open(ctx)
		return err
	})
	if err != nil {
		return fmt.Errorf("%w: open: %w", ErrRender, err)
	}
	if s == nil {
		return fmt.Errorf("%w: open: no session", ErrRender)
	}
	r.render = &renderer{session: s, workers: r.cfg.hostWorkers, hosts: map[string]*browserHost{}}
	return nil
}

// closeRenderer closes the Run's render session, if it has one.
func (r *run) closeRenderer() {
	if r.render == nil {
		return
	}
	if err := protect("renderer", r.render.session.Close); err != nil {
		r.cfg.logger.Error("renderer close", "err", err)
	}
}
