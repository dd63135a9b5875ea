// Package render renders a crawl's pages in headless Chromium, behind the
// crawler's own policy: it implements crawl.Renderer, for crawl.WithRenderer.
//
//	r := render.New(render.Options{Tabs: 4})
//	c, err := crawl.New(crawl.WithRenderer(r, crawl.RenderAll), crawl.WithRequisites(true))
//
// Each Run opens one browser, with a profile of its own (cookies and
// storage are the Run's, never shared with another), and a pool of tabs.
// A page is loaded in a tab with every request of the tab intercepted (the
// DevTools protocol's Fetch domain: the page's, its same-site frames' and
// its dedicated workers'): the document is served from the crawler's own
// response, and every other request is decided and sent by the crawler
// (crawl.RenderPage.Fetch). What the tab's interception does not see (a
// service worker's script, a shared worker's fetches, a frame of another
// site's requests, a preconnect, a WebSocket) fails at a proxy where
// nothing listens, unrecorded: the browser reaches no address by itself. Once the page's requests have been quiet for Options.Quiet
// (within Options.Timeout), the tab clicks, one at a time, up to
// Options.Clicks elements that have a click handler or look like a
// navigation control (in open shadow roots too; an element a click
// revealed first, else in document order; an element again only when a
// click changed its handlers), and then records, for each of the page's
// GET forms, the URL its submission with its default values goes to (also
// when Clicks is negative); it never submits a POST form, nor types into a
// field. A navigation that a script, a click
// or a form starts is recorded and stopped, so the page stays loaded;
// window.open is recorded and opens nothing; history.pushState and
// replaceState URLs are recorded. The DOM is then read.
//
// The browser is Debian's chromium (or the program at Options.Exec),
// started headless by chromedp. A browser that dies mid-Run (a crash, the
// OOM killer) is started anew, with a new profile, and the page it died
// under is rendered once more. It never outlives the Run: Close kills it
// and the processes it started, and on Linux it dies with the crawler.
// Its profile and temporary files are in a directory of its own under
// TMPDIR, removed once it has exited (unless the crawler itself is
// killed).
package render

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/asyncrawl/crawl"
	"github.com/asyncrawl/crawl/internal/urlstd"
)

// Bounds on what a page can make the renderer hold, whatever it does: the
// DOM read is cut after MaxDOM characters (UTF-16 code units, as
// JavaScript counts them), and past MaxLinks requests, history entries and
// navigations of one page the rest are not recorded (the crawler's own
// WithMaxLinksPerPage then applies to what is).
const (
	MaxDOM   = 8 << 20
	MaxLinks = 5000
)

// Defaults of Options.
const (
	DefaultTabs    = 4
	DefaultTimeout = 30 * time.Second
	DefaultQuiet   = 500 * time.Millisecond
	DefaultClicks  = 20
)

// Options configure a Renderer. The zero value renders with the defaults.
type Options struct {
	// Exec is the browser's program; empty looks for chromium,
	// chromium-browser, google-chrome and google-chrome-stable on PATH.
	Exec string
	// Tabs is how many pages are rendered at once; 0 means DefaultTabs.
	Tabs int
	// Timeout bounds the render of one page, from its load to the read
	// of its DOM, clicks included; 0 means DefaultTimeout. A page cut at
	// it gives what was found until then and an error. It also bounds a
	// browser's start: one that does not answer by then fails the Run at
	// its start.
	Timeout time.Duration
	// Quiet is how long the page's requests must have been quiet before
	// the clicks begin (half of it after each click), and, after the
	// load, the delay of a timer the page must also have fired first (so
	// that its own timers due before it run, however slow the machine
	// makes the page); 0 means DefaultQuiet.
	Quiet time.Duration
	// Clicks is the most elements clicked on a page; 0 means
	// DefaultClicks, negative none (the GET forms' URLs are recorded all
	// the same).
	Clicks int
}

// Renderer renders pages in headless Chromium. It implements crawl.Renderer
// and is safe for concurrent use: each Open starts a browser of its own.
type Renderer struct {
	opts Options
}

// New returns a Renderer with opts, its zero fields set to the defaults.
// It starts nothing: each Run's Open starts a browser.
func New(opts Options) *Renderer {
	if opts.Tabs <= 0 {
		opts.Tabs = DefaultTabs
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Quiet <= 0 {
		opts.Quiet = DefaultQuiet
	}
	if opts.Clicks == 0 {
		opts.Clicks = DefaultClicks
	}
	return &Renderer{opts: opts}
}

// ErrNoBrowser is wrapped by Open's error when no browser program is found.
var ErrNoBrowser = errors.New("render: no chromium found")

// execPath returns the browser's program.
func (r *Renderer) execPath() (string, error) {
	if r.opts.Exec != "" {
		return r.opts.Exec, nil
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w on PATH (install Debian's chromium package, or set Options.Exec)", ErrNoBrowser)
}

// Open starts a headless browser for one Run and returns its session. ctx
// bounds the start only: the session lives until Close.
func (r *Renderer) Open(ctx context.Context) (crawl.RenderSession, error) {
	path, err := r.execPath()
	if err != nil {
		return nil, err
	}
	flags := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("mute-audio", true),
		// Every request is the crawler's to send (see the package doc).
		// What the interception does not see (a preconnect, a DNS
		// prefetch, a WebSocket) goes to a proxy that is not there and
		// names that resolve nowhere, loopback included: the browser
		// itself reaches no address.
		chromedp.Flag("proxy-server", "http://127.0.0.1:9"),
		chromedp.Flag("proxy-bypass-list", "<-loopback>"),
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND"),
		chromedp.Flag("dns-prefetch-disable", true),
		// WebRTC sends UDP (STUN, TURN, its media) to literal addresses
		// past the proxy and the resolver: only through the proxy, which
		// is not there.
		chromedp.Flag("force-webrtc-ip-handling-policy", "disable_non_proxied_udp"),
		chromedp.Flag("webrtc-ip-handling-policy", "disable_non_proxied_udp"),
	}
	if os.Geteuid() == 0 {
		// Chromium's sandbox refuses to run as root.
		flags = append(flags, chromedp.NoSandbox)
	}
	s := &session{r: r, path: path, flags: flags, slots: make(chan struct{}, r.opts.Tabs)}
	if s.b, err = s.start(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// session is one Run's browser and its tabs.
type session struct {
	r     *Renderer
	path  string
	flags []chromedp.ExecAllocatorOption
	slots chan struct{} // Tabs wide: pages in render

	mu     sync.Mutex
	b      *browser // the browser now; a new one after a crash
	closed bool
}

// browser is one browser process, with a profile of its own, and its idle
// tabs.
type browser struct {
	actx, bctx                 context.Context
	cancelAlloc, cancelBrowser context.CancelFunc
	tabs                       chan *tab
	// dir holds the browser's profile and is its TMPDIR: Chromium
	// leaves a directory of its own in TMPDIR (its single-instance
	// socket) when it is killed, as Close kills it, so the browser's
	// files are all under dir, removed once it has exited.
	dir string
}

// start starts a browser. ctx bounds the wait for it.
func (s *session) start(ctx context.Context) (*browser, error) {
	dir, err := os.MkdirTemp("", "crawlr")
	if err != nil {
		return nil, fmt.Errorf("render: start %s: a directory for its profile: %w", s.path, err)
	}
	// Chromium refuses to start when its socket's path is longer than a
	// Unix socket's (108 bytes): under a TMPDIR that deep, the directory
	// is made in /tmp.
	if !socketFits(dir) {
		if short, err := os.MkdirTemp("/tmp", "crawlr"); err == nil {
			os.Remove(dir)
			dir = short
		}
	}
	flags := append(s.flags[:len(s.flags):len(s.flags)], chromedp.UserDataDir(filepath.Join(dir, "profile")))
	if socketFits(dir) {
		flags = append(flags, chromedp.Env("TMPDIR="+dir))
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), flags...)
	bctx, cancelBrowser := chromedp.NewContext(actx)
	b := &browser{actx: actx, bctx: bctx, cancelAlloc: cancelAlloc, cancelBrowser: cancelBrowser,
		tabs: make(chan *tab, s.r.opts.Tabs), dir: dir}
	// The first call starts the browser; its context must not be one
	// that ends (it would stop the browser), so ctx only bounds the wait.
	started := make(chan error, 1)
	go func() { started <- chromedp.Do(bctx) }()
	// A program that starts and never answers (a browser stuck at its
	// start, a wrong Exec) must not hold the Run for good.
	limit := time.NewTimer(s.r.opts.Timeout)
	defer limit.Stop()
	select {
	case err = <-started:
	case <-ctx.Done():
		err = ctx.Err()
	case <-limit.C:
		err = fmt.Errorf("no answer within %v (Options.Timeout: the command's -render_timeout)", s.r.opts.Timeout)
	}
	if err != nil {
		b.stop()
		return nil, fmt.Errorf("render: start %s: %w", s.path, err)
	}
	return b, nil
}

// socketFits reports whether Chromium's socket fits a Unix socket's path
// (108 bytes, its end included) with dir as its TMPDIR.
func socketFits(dir string) bool {
	return len(dir)+len("/org.chromium.Chromium.XXXXXX/SingletonSocket") < 108
}

// stop stops the browser and every process it started, and removes its
// files.
func (b *browser) stop() {
	b.cancelBrowser()
	b.cancelAlloc()
	if a, ok := chromedp.FromContext(b.actx).Allocator.(*chromedp.ExecAllocator); ok {
		a.Wait()
	}
	os.RemoveAll(b.dir)
}

// browser returns the session's browser, started anew if the one before
// died (a crash, the system's OOM killer): the new one has a new profile.
func (s *session) browser(ctx context.Context) (*browser, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errors.New("render: session closed")
	}
	if s.b != nil && s.b.bctx.Err() == nil {
		return s.b, nil
	}
	// Dead, or killed for not answering: a new one.
	if s.b != nil {
		s.b.stop()
		s.b = nil
	}
	b, err := s.start(ctx)
	if err != nil {
		return nil, fmt.Errorf("render: the browser died, and a new one did not start: %w", err)
	}
	s.b = b
	return b, nil
}

// Close stops the browser and every process it started.
func (s *session) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.closed = true
		if s.b != nil {
			s.b.stop()
		}
	}
	return nil
}

// tab is a browser tab with the crawler's interception on.
type tab struct {
	ctx    context.Context
	cancel context.CancelFunc
	mu     sync.Mutex
	cur    *pageRun // the page in render, nil between pages
}

// hookScript runs in each document before its own scripts: it records the
// URLs put in the history, those window.open is asked for (opening
// nothing) and those the page navigates to (the Navigation API's
// navigate event, in the main frame: a POST form's as a reference), each
// sent at once to the crawler through the binding __crawlRecord, so that
// a page that replaces its document later loses none of them, and a
// navigation whose request comes after the page is read is not lost.
const hookScript = `(() => {
  const send = window.__crawlRecord;
  const rec = (kind, u) => {
    try { send(JSON.stringify([kind, new URL(String(u), location.href).href])); } catch (e) {}
  };
  for (const m of ["pushState", "replaceState"]) {
    const f = history[m];
    history[m] = function (state, title, u) {
      // Recorded once the browser took it: one it refuses (another
      // origin's URL) throws, and is in no history.
      const r = f.apply(this, arguments);
      if (u !== undefined && u !== null) rec("history", u);
      return r;
    };
  }
  window.open = function (u) { if (u !== undefined && u !== null && u !== "") rec("navigation", u); return null; };
  // A navigation of the page (location.assign, an href set, a form
  // submitted, a link followed), named when it starts: on a loaded
  // machine its request may come only after the page is read. A frame's
  // is named by its request.
  if (window.top === window && window.navigation && typeof navigation.addEventListener === "function") {
    navigation.addEventListener("navigate", (e) => {
      try {
        const d = e.destination;
        if (d.sameDocument || e.navigationType === "reload" || e.navigationType === "traverse") return;
        rec(e.formData ? "post" : "navigation", d.url);
      } catch (err) {}
    });
  }
})();`

// newTab opens a tab and sets up its interception.
func (b *browser) newTab() (*tab, error) {
	ctx, cancel := chromedp.NewContext(b.bctx)
	t := &tab{ctx: ctx, cancel: cancel}
	err := chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*page.EventWindowOpen); ok {
			// A new window the page opens by a way the hook script does
			// not see (a link with a target, a frame's window.open):
			// recorded as window.open is; the window's own requests,
			// not intercepted, reach only the proxy that is not there.
			if pr := t.page(); pr != nil && e.URL != "" {
				pr.recordNow(crawl.Navigation, e.URL)
			}
			return
		}
		if _, ok := ev.(*page.EventJavascriptDialogOpening); ok {
			// An alert, confirm, prompt or beforeunload dialog holds
			// the page's scripts, and every read of it, until it is
			// answered: dismissed, as a user who closes it would.
			go chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
			return
		}
		if e, ok := ev.(*runtime.EventBindingCalled); ok && e.Name == "__crawlRecord" {
			var rec [2]string
			if pr := t.page(); pr != nil && json.Unmarshal([]byte(e.Payload), &rec) == nil {
				switch rec[0] {
				case "navigation":
					// window.open, or a navigation that starts: named
					// by what the renderer is doing.
					pr.recordNow(crawl.Navigation, rec[1])
				case "post":
					// Named as its request is (see handle).
					pr.recordNow(crawl.Reference, rec[1])
				default:
					pr.record(crawl.Navigation, rec[0], rec[1])
				}
			}
			return
		}
		e, ok := ev.(*fetch.EventRequestPaused)
		if !ok {
			return
		}
		t.mu.Lock()
		pr := t.cur
		if pr != nil {
			pr.handlers.Add(1)
		}
		t.mu.Unlock()
		if pr == nil {
			// No page in render: nothing may be fetched.
			go t.fail(ctx, e.RequestID, network.ErrorReasonBlockedByClient)
			return
		}
		go func() {
			defer pr.handlers.Done()
			pr.handle(t, e)
		}()
	})
	if err == nil {
		err = chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tt *chromedp.Target) error {
			if _, err := cdp.Call(ctx, tt, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{{URLPattern: "*"}}}); err != nil {
				return err
			}
			if _, err := cdp.Call(ctx, tt, page.Enable, page.EnableParams{}); err != nil {
				return err
			}
			if _, err := cdp.Call(ctx, tt, runtime.Enable, cdp.Empty{}); err != nil {
				return err
			}
			if _, err := cdp.Call(ctx, tt, runtime.AddBinding, runtime.AddBindingParams{Name: "__crawlRecord"}); err != nil {
				return err
			}
			_, err := cdp.Call(ctx, tt, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: hookScript})
			return err
		}))
	}
	if err != nil {
		cancel()
		return nil, err
	}
	return t, nil
}

func (t *tab) fail(ctx context.Context, id fetch.RequestID, why network.ErrorReason) {
	chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tt *chromedp.Target) error {
		_, err := cdp.Call(ctx, tt, fetch.FailRequest, fetch.FailRequestParams{RequestID: id, ErrorReason: why})
		return err
	}))
}

func (t *tab) fulfill(ctx context.Context, id fetch.RequestID, status int, h http.Header, body []byte) error {
	var headers []*fetch.HeaderEntry
	for k, vs := range h {
		switch http.CanonicalHeaderKey(k) {
		case "Content-Length", "Transfer-Encoding", "Connection":
			continue // of the crawler's exchange, not of this body
		}
		for _, v := range vs {
			headers = append(headers, &fetch.HeaderEntry{Name: k, Value: v})
		}
	}
	if body == nil {
		body = []byte{}
	}
	return chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tt *chromedp.Target) error {
		_, err := cdp.Call(ctx, tt, fetch.FulfillRequest, fetch.FulfillRequestParams{
			RequestID: id, ResponseCode: int64(status), ResponseHeaders: headers, Body: body})
		return err
	}))
}

// take returns an idle tab, or a new one opened within ctx: a browser
// busy with a page that ate it can leave the opening of a tab unanswered,
// and is then killed (the opening ends with it) before take returns.
func (s *session) take(ctx context.Context, b *browser) (*tab, error) {
	select {
	case t := <-b.tabs:
		return t, nil
	default:
	}
	type opened struct {
		t   *tab
		err error
	}
	ch := make(chan opened, 1)
	go func() {
		t, err := b.newTab()
		ch <- opened{t, err}
	}()
	select {
	case o := <-ch:
		return o.t, o.err
	case <-ctx.Done():
		s.kill(b)
		if o := <-ch; o.t != nil {
			o.t.cancel()
		}
		return nil, ctx.Err()
	}
}

// kill stops b, the session's browser, when it does not answer: the next
// page starts a new one.
func (s *session) kill(b *browser) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.b == b {
		s.b = nil
	}
	b.stop()
}

// Render loads p in a tab and returns what it showed (see the package doc).
func (s *session) Render(ctx context.Context, p *crawl.RenderPage) (*crawl.Rendered, error) {
	select {
	case s.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-s.slots }()
	rd, b, err := s.render(ctx, p)
	if err != nil && b != nil && ctx.Err() == nil {
		// A browser that died is seen gone a moment after the call
		// that failed with it.
		t := time.NewTimer(200 * time.Millisecond)
		select {
		case <-b.bctx.Done():
		case <-t.C:
		}
		t.Stop()
	}
	if err != nil && b != nil && b.bctx.Err() != nil && ctx.Err() == nil {
		// The browser died under the page: once more, in a new one.
		rd, _, err = s.render(ctx, p)
	}
	return rd, err
}

// render renders p in a tab of the session's browser, which it returns.
func (s *session) render(ctx context.Context, p *crawl.RenderPage) (*crawl.Rendered, *browser, error) {
	b, err := s.browser(ctx)
	if err != nil {
		return nil, nil, err
	}
	tctx, tcancel := context.WithTimeout(ctx, s.r.opts.Timeout)
	t, err := s.take(tctx, b)
	tcancel()
	if err != nil {
		return nil, b, fmt.Errorf("render: open a tab: %w", err)
	}
	pctx, cancel := context.WithTimeout(t.ctx, s.r.opts.Timeout)
	stop := context.AfterFunc(ctx, cancel)
	pr := &pageRun{p: p, ctx: pctx, main: string(chromedp.FromContext(t.ctx).Target.TargetID), quietFor: s.r.opts.Quiet,
		phase: "navigation", last: time.Now()}
	t.mu.Lock()
	t.cur = pr
	t.mu.Unlock()
	rd, err := pr.run(t, s.r.opts.Clicks)
	stop()
	cancel()
	// No request of the page outlives the call: the tab forgets the
	// page, so that no handler starts for it from now on (a handler's
	// Add, under t.mu, comes before the Wait), and the handlers end with
	// pctx.
	t.mu.Lock()
	t.cur = nil
	t.mu.Unlock()
	pr.handlers.Wait()
	healthy := err == nil
	if healthy {
		// The next page starts from an empty one, the timers of this one
		// gone with it.
		bctx, bcancel := context.WithTimeout(t.ctx, 5*time.Second)
		healthy = chromedp.Do(bctx, chromedp.Func(func(ctx context.Context, tt *chromedp.Target) error {
			_, err := cdp.Call(ctx, tt, page.Navigate, page.NavigateParams{URL: "about:blank"})
			return err
		})) == nil
		bcancel()
	}
	if healthy {
		b.tabs <- t
	} else {
		// A page cut at its deadline may still run (a loop in a
		// script): its tab is closed, a new one opened for the next.
		t.cancel()
	}
	return rd, b, err
}

// pageRun is one page in render in one tab.
type pageRun struct {
	p        *crawl.RenderPage
	ctx      context.Context
	main     string // the main frame's ID (the tab's target ID)
	quietFor time.Duration
	handlers sync.WaitGroup

	mu       sync.Mutex
	served   bool   // the document was served
	phase    string // what starts a main-frame navigation now: "navigation", "click"
	inflight int
	last     time.Time // when the last request started or ended
	links    []crawl.Link
}

// page returns the page in render in t, nil between pages.
func (t *tab) page() *pageRun {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.cur
}

// recordNow records raw as record does, its source what the renderer is
// doing now (its phase: before the first click, or a click).
func (pr *pageRun) recordNow(role crawl.LinkRole, raw string) {
	pr.mu.Lock()
	phase := pr.phase
	pr.mu.Unlock()
	pr.record(role, phase, raw)
}

// record keeps raw, a URL the browser met, as a link of role and Source
// "render "+source, up to MaxLinks; one not http or https is dropped.
func (pr *pageRun) record(role crawl.LinkRole, source, raw string) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "http" && u.Scheme != "https" {
		return
	}
	u.Fragment, u.RawFragment = "", ""
	pr.mu.Lock()
	if len(pr.links) < MaxLinks {
		pr.links = append(pr.links, crawl.Link{URL: u, Role: role, Source: "render " + source})
	}
	pr.mu.Unlock()
}

// setPhase says what starts the navigations from now on, and starts the
// next wait for quiet afresh: the requests of a click may start a moment
// after it.
func (pr *pageRun) setPhase(phase string) {
	pr.mu.Lock()
	pr.phase = phase
	pr.last = time.Now()
	pr.mu.Unlock()
}

func (pr *pageRun) busy(d int) {
	pr.mu.Lock()
	pr.inflight += d
	pr.last = time.Now()
	pr.mu.Unlock()
}

// handle decides a paused request of the page's tab.
func (pr *pageRun) handle(t *tab, e *fetch.EventRequestPaused) {
	pr.busy(1)
	defer pr.busy(-1)
	req := e.Request
	doc := e.ResourceType == network.ResourceTypeDocument
	main := string(e.FrameID) == pr.main
	pr.mu.Lock()
	first := doc && main && !pr.served && sameDoc(req.URL, pr.p.URL)
	if first {
		pr.served = true
	}
	phase := pr.phase
	pr.mu.Unlock()
	ctx := pr.ctx
	switch {
	case first:
		h := pr.p.Header.Clone()
		h.Del("Content-Encoding") // Body is decompressed
		if err := t.fulfill(ctx, e.RequestID, pr.p.Status, h, pr.p.Body); err != nil {
			t.fail(ctx, e.RequestID, network.ErrorReasonFailed)
		}
		return
	case doc && main:
		// The page navigates away: recorded, and stopped, so that the
		// page stays for its reading.
		role := crawl.Navigation
		if req.Method != http.MethodGet {
			role = crawl.Reference
		}
		pr.record(role, phase, req.URL)
		t.fail(ctx, e.RequestID, network.ErrorReasonAborted)
		return
	}
	if req.Method == http.MethodOptions {
		if m := header(req.Headers, "Access-Control-Request-Method"); m == http.MethodGet || m == http.MethodHead {
			// A CORS preflight of a GET (one with a header of its own, an
			// Authorization or a JSON Content-Type): answered here, sent
			// to no one, so that the GET itself goes to the crawler as
			// any other; refused, the page's GET was never made.
			h := http.Header{}
			h.Set("Access-Control-Allow-Origin", cmp.Or(header(req.Headers, "Origin"), "*"))
			h.Set("Access-Control-Allow-Credentials", "true")
			h.Set("Access-Control-Allow-Methods", "GET, HEAD")
			if rh := header(req.Headers, "Access-Control-Request-Headers"); rh != "" {
				h.Set("Access-Control-Allow-Headers", rh)
			}
			h.Set("Vary", "Origin")
			if err := t.fulfill(ctx, e.RequestID, http.StatusNoContent, h, nil); err != nil {
				t.fail(ctx, e.RequestID, network.ErrorReasonFailed)
			}
			return
		}
	}
	role := crawl.Requisite
	switch e.ResourceType {
	case network.ResourceTypeDocument:
		role = crawl.Navigation // a frame's
	case network.ResourceTypePing, network.ResourceTypeCSPViolationReport:
		role = crawl.Reference
	}
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		role = crawl.Reference
	}
	pr.record(role, "request", req.URL)
	if role == crawl.Reference {
		// Named, not sent: the crawler sends no data of a page's.
		t.fail(ctx, e.RequestID, network.ErrorReasonBlockedByClient)
		return
	}
	h := http.Header{}
	for k, v := range req.Headers {
		if s, ok := v.(string); ok {
			h.Set(k, s)
		}
	}
	resp, err := pr.p.Fetch(ctx, &crawl.BrowserRequest{Method: req.Method, URL: req.URL, Header: h, Role: role})
	if err != nil {
		why := network.ErrorReasonFailed
		if errors.Is(err, crawl.ErrRenderRefused) || errors.Is(err, crawl.ErrBlockedAddress) {
			why = network.ErrorReasonBlockedByClient
		}
		t.fail(ctx, e.RequestID, why)
		return
	}
	if err := t.fulfill(ctx, e.RequestID, resp.Status, resp.Header, resp.Body); err != nil {
		t.fail(ctx, e.RequestID, network.ErrorReasonFailed)
	}
}

// header returns the value of the header name in a request's headers as
// the DevTools protocol gives them, whatever the case of its name.
func header(hs network.Headers, name string) string {
	for k, v := range hs {
		if s, ok := v.(string); ok && strings.EqualFold(k, name) {
			return s
		}
	}
	return ""
}

// sameDoc reports whether the request URL a is the page's URL b, fragment
// aside, and percent-escapes aside: Chromium escapes octets of a path the
// crawler sends as they are ("|" is "%7C" in its request for the page).
func sameDoc(a string, b *url.URL) bool {
	if i := strings.IndexByte(a, '#'); i >= 0 {
		a = a[:i]
	}
	c := *b
	c.Fragment, c.RawFragment = "", ""
	u := c.String()
	return a == u || string(urlstd.PercentDecode([]byte(a))) == string(urlstd.PercentDecode([]byte(u)))
}

// quiet waits until the page's requests have been quiet for d, or ctx
// ends.
func (pr *pageRun) quiet(d time.Duration) error {
	tick := time.NewTicker(d / 10)
	defer tick.Stop()
	for {
		pr.mu.Lock()
		done := pr.inflight == 0 && time.Since(pr.last) >= d
		pr.mu.Unlock()
		if done {
			return nil
		}
		select {
		case <-pr.ctx.Done():
			return pr.ctx.Err()
		case <-tick.C:
		}
	}
}

// settle waits for the page to be quiet after its load: no request for
// quietFor, and a timer of quietFor set in the page has fired, so that
// the page's own timers due before it (a request sent a moment after the
// load) have run, however much a loaded machine slows the page. If that
// timer fired late, it waits for quiet once more, afresh, for the
// requests they sent.
func (pr *pageRun) settle() error {
	start := time.Now()
	slept := make(chan error, 1)
	go func() {
		_, err := chromedp.Run(pr.ctx, chromedp.Evaluate[chromedp.Void](
			fmt.Sprintf("new Promise((r) => setTimeout(r, %d))", pr.quietFor.Milliseconds()), chromedp.EvalAwaitPromise))
		slept <- err
	}()
	err := pr.quiet(pr.quietFor)
	serr := <-slept
	if err != nil {
		return err
	}
	if serr != nil {
		return pr.ctx.Err() // nil: the network's quiet stands
	}
	if time.Since(start) > pr.quietFor*3/2 {
		pr.busy(0) // the wait starts afresh
		return pr.quiet(pr.quietFor / 2)
	}
	return nil
}

// elementsJS is a part of a script: it puts in all every element of the
// document, those of its open shadow roots too, in document order.
const elementsJS = `  const all = [];
  const walk = (root) => {
    for (const el of root.querySelectorAll("*")) {
      all.push(el);
      if (el.shadowRoot) walk(el.shadowRoot);
    }
  };
  walk(document);`

// clickScript clicks the page's next element to click, and reports
// whether there was one. The elements to click, in open shadow roots too,
// are those with a click handler (the onclick property or attribute, a
// click, mousedown, mouseup or pointerdown listener), buttons, and
// elements with a role of button or link; submit buttons of POST forms
// are left out. Each is clicked once, and again only if its handlers
// changed since (a click that sets the next click's handler). An element
// that appeared since the last click comes first (a step that a click
// revealed, before anything else can hide it); otherwise document order.
const clickScript = `(() => {
  const S = window.__crawlClicks || (window.__crawlClicks = {sig: new WeakMap(), seen: new WeakSet()});
` + elementsJS + `
  const sigOf = (el) => {
    let ls = {};
    try { ls = getEventListeners(el); } catch (e) {}
    let n = 0;
    for (const t of ["click", "mousedown", "mouseup", "pointerdown"]) n += (ls[t] || []).length;
    return [el.onclick ? String(el.onclick) : "", el.getAttribute("onclick") || "", n].join("|");
  };
  const todo = [];
  for (const el of all) {
    const sig = sigOf(el);
    const role = el.getAttribute("role");
    const control = el.tagName === "BUTTON" || el.tagName === "INPUT" && /^(button|submit|image)$/i.test(el.type) ||
      role === "button" || role === "link";
    if (!control && sig === "||0") continue;
    const form = el.form || el.closest("form");
    if (form && (form.method || "").toLowerCase() === "post") continue;
    if (S.sig.get(el) === sig) continue;
    todo.push(el);
  }
  const fresh = todo.filter((el) => !S.seen.has(el));
  for (const el of all) S.seen.add(el);
  const el = (fresh.length ? fresh : todo)[0];
  if (!el) return false;
  S.sig.set(el, sigOf(el));
  // The events of a real click, in its order, so that a pointerdown,
  // mousedown or mouseup listener runs too (el.click() fires click
  // alone).
  try {
    const r = el.getBoundingClientRect();
    const at = { bubbles: true, cancelable: true, composed: true, view: window, button: 0,
      clientX: r.left + r.width / 2, clientY: r.top + r.height / 2 };
    const P = window.PointerEvent || MouseEvent;
    el.dispatchEvent(new P("pointerdown", Object.assign({ pointerId: 1, isPrimary: true, pointerType: "mouse", buttons: 1 }, at)));
    el.dispatchEvent(new MouseEvent("mousedown", Object.assign({ buttons: 1 }, at)));
    el.dispatchEvent(new P("pointerup", Object.assign({ pointerId: 1, isPrimary: true, pointerType: "mouse" }, at)));
    el.dispatchEvent(new MouseEvent("mouseup", at));
  } catch (e) {}
  try { el.click(); } catch (e) {}
  return true;
})()`

// run loads the page, waits for it to be quiet, clicks, submits its GET
// forms, and reads what it shows.
func (pr *pageRun) run(t *tab, clicks int) (*crawl.Rendered, error) {
	ctx := pr.ctx
	err := chromedp.Do(ctx, chromedp.Navigate(pr.p.URL.String()))
	if err == nil {
		err = pr.settle()
	}
	for i := 0; i < clicks && err == nil; i++ {
		pr.setPhase("click")
		var more bool
		more, err = chromedp.Run(ctx, chromedp.Evaluate[bool](clickScript, chromedp.EvalWithCommandLineAPI, chromedp.EvalIgnoreExceptions))
		if err != nil && ctx.Err() == nil {
			// A click that started a navigation (stopped since) can
			// leave the page busy for a moment: once more, after it.
			if err = pr.quiet(pr.quietFor / 2); err == nil {
				more, err = chromedp.Run(ctx, chromedp.Evaluate[bool](clickScript, chromedp.EvalWithCommandLineAPI, chromedp.EvalIgnoreExceptions))
			}
		}
		if err != nil || !more {
			break
		}
		err = pr.quiet(pr.quietFor / 2)
	}
	if err == nil {
		// The URL each GET form would navigate to with its default
		// values, as the HTML standard builds it (its action, the query
		// replaced by its form data), recorded without navigating: one
		// submission in flight would cancel the next.
		_, err = chromedp.Run(ctx, chromedp.Evaluate[chromedp.Void](`(() => {
  for (const f of Array.from(document.forms)) {
    if (f.method !== "get") continue;
    try {
      const u = new URL(f.action, location.href);
      u.search = new URLSearchParams(new FormData(f)).toString();
      window.__crawlRecord(JSON.stringify(["form", u.href]));
    } catch (e) {}
  }
})()`, chromedp.EvalIgnoreExceptions))
	}
	// What the page shows, read even when it was cut short, within a
	// moment of its own.
	rctx := ctx
	if ctx.Err() != nil {
		var cancel context.CancelFunc
		rctx, cancel = context.WithTimeout(t.ctx, time.Second)
		defer cancel()
	}
	rd := &crawl.Rendered{}
	// The DOM, the document's URL its relative links resolve against
	// (a pushState moves it), and the links in open shadow roots, which
	// outerHTML leaves out (as the browser resolved them).
	read, derr := chromedp.Run(rctx, chromedp.Evaluate[[]any](fmt.Sprintf(`(() => {
  const hrefs = [];
  try {
`+elementsJS+`
    for (const el of all) {
      if (el.getRootNode() !== document && el.matches("a[href], area[href]")) hrefs.push(el.href);
    }
  } catch (e) {}
  const dom = document.documentElement ? document.documentElement.outerHTML.slice(0, %d) : "";
  return [dom, location.href, hrefs.slice(0, %d)];
})()`, MaxDOM, MaxLinks)))
	if derr == nil && len(read) == 3 {
		dom, _ := read[0].(string)
		rd.DOM = []byte(dom)
		rd.URL, _ = read[1].(string)
		if hrefs, ok := read[2].([]any); ok {
			for _, h := range hrefs {
				if s, ok := h.(string); ok {
					pr.record(crawl.Navigation, "dom", s)
				}
			}
		}
	} else if err == nil {
		err = derr
		if err == nil {
			err = errors.New("the DOM read gave no answer")
		}
	}
	pr.mu.Lock()
	rd.Links = pr.links
	pr.mu.Unlock()
	if err != nil {
		return rd, fmt.Errorf("render %s: %w", pr.p.URL, err)
	}
	return rd, nil
}
