package crawl

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/asyncrawl/crawl/internal/extract"
	"github.com/asyncrawl/crawl/internal/sched"
	"github.com/asyncrawl/crawl/internal/sitemap"
	"github.com/asyncrawl/crawl/internal/urlstd"
	"github.com/asyncrawl/crawl/internal/webenc"
	"golang.org/x/net/html"
	"golang.org/x/net/html/charset"
)

// Errors that a Result's Err may wrap; test for them with errors.Is.
var (
	// ErrBodyTooLarge means a response body was larger than WithMaxBodySize.
	ErrBodyTooLarge = errors.New("response body too large")
	// ErrTooManyRedirects means a redirect chain was longer than
	// WithMaxRedirects allows.
	ErrTooManyRedirects = errors.New("too many redirects")
	// ErrNoLocation means a redirect response had no usable Location header.
	ErrNoLocation = errors.New("redirect without Location")
	// ErrPanic means a hook or link extractor panicked; the panic was
	// recovered and the crawl went on.
	ErrPanic = errors.New("panic")
	// ErrDisallowed means robots.txt does not allow the URL to be fetched,
	// or could not be read; the URL was not fetched.
	ErrDisallowed = errors.New("disallowed by robots.txt")
)

// Page is a response as the page hook and the link extractor see it.
// Body is valid only during the call it is passed to.
type Page struct {
	URL    *url.URL // the URL as requested (see Link.URL)
	Depth  int      // 0 for roots, one more per link followed
	Status int
	Header http.Header
	// ContentType is the media type of the Content-Type header, lower
	// case and without parameters ("text/html"); empty when none was sent,
	// but "text/html" for a page sent with none whose body a browser takes
	// for HTML (the WHATWG MIME Sniffing Standard: it starts, after white
	// space, with "<!DOCTYPE HTML", "<html", "<head", "<a ", "<!--", ...),
	// which is read for links as a browser renders it.
	ContentType string
	// Encoding is the canonical name of the character encoding the body
	// was decoded from ("utf-8", "windows-1252"); empty for types that are
	// not text, and for a body left in a content coding. The query of a
	// link is encoded in it, as a browser encodes it (ExtractLinks,
	// ExtractTypedLinks and the crawl's own extraction alike).
	Encoding string
	// obeyRobots is set when the crawler obeys robots.txt, so that
	// ExtractLinks leaves out what the default extractor does.
	obeyRobots bool
	// Body is the response body, decompressed from gzip or deflate, and
	// for text types decoded to UTF-8; an XML declaration at its start
	// that named another encoding then names UTF-8, so that encoding/xml
	// reads Body as it is. A body in a content coding the crawler cannot
	// decode (br, zstd) is passed on exactly as sent, with its
	// Content-Encoding in Header, and the crawler does not parse it: it
	// is not decoded to UTF-8, its links are not followed and its robots
	// meta tags are not read (a custom LinkExtractor still gets it; see
	// WithMaxBodySize). The crawler reuses its buffer after the call
	// returns: copy it to keep it.
	Body []byte
	// Truncated says that Body stops at WithMaxBodySize where the
	// response went on: for a body nobody parses, which is no failure.
	Truncated bool
	// Links are the typed links the default extractor found on the page
	// (for a page of HTML, XHTML, SVG, XML or CSS, and in its headers), in
	// document order with duplicates, before scope and the robots
	// directives apply, then, when WithRenderer rendered the page, the
	// new links the browser found (Source "render ...", see Rendered);
	// nil when a custom LinkExtractor is set. Like
	// Body, the slice is valid only during the call.
	Links []Link
	// NoIndex and NoFollow report what the page's <meta name="robots">
	// tags and X-Robots-Tag headers say ("noindex", "nofollow", "none");
	// they are read only when WithRobots is on. With NoFollow, none of the
	// page's links is followed.
	NoIndex, NoFollow bool
	// DOM is the document after its scripts ran, serialised as HTML,
	// when WithRenderer rendered the page; nil otherwise. Like Body, it
	// is valid only during the call.
	DOM []byte
	// Base is the document base URL, which the page's relative links
	// resolve against: for an HTML page, its first <base href> resolved
	// against URL (as the HTML standard has it, when that gives an
	// http(s) URL); else a copy of URL. The crawler sets it; what a hook
	// does to it changes nothing for the crawl.
	Base *url.URL
}

// Resolve resolves ref, a URL reference as written in the page, against
// p.Base (p.URL when Base is nil) as the WHATWG URL Standard's parser
// does, as a browser would, and returns it in the form the crawler sends:
// the Standard's serialisation, without userinfo and fragment (see
// Link.URL for its String); in a page of a legacy encoding
// (p.Encoding), the query of ref is encoded in it, as the crawler's links
// are (docs/urls.md). It fails for a
// reference that does not parse and for one that is not an http(s) URL
// ("mailto:", "javascript:"). It is safe for concurrent use if nothing
// changes p.Base or p.URL meanwhile.
func (p *Page) Resolve(ref string) (*url.URL, error) {
	base := p.Base
	if base == nil {
		base = p.URL
	}
	in := ref
	if q := queryEncoder(p.Encoding); q != nil {
		in = q(ref) // its query in the page's encoding, as a link's
	}
	u, err := urlstd.Resolve(base, in)
	if err != nil {
		return nil, fmt.Errorf("resolve %q: %w", ref, err)
	}
	return u, nil
}

// response is the outcome of the last attempt at a URL.
type response struct {
	url         *url.URL // &target, or a URL of the caller's
	target      url.URL
	status      int
	header      http.Header
	contentType string // media type, lower case
	charset     string // the Content-Type's charset label, as sent
	body        []byte // valid until the worker's next fetch
	// encoded says that body is in a content coding the crawler cannot
	// decode (br, zstd): it is passed on as sent and not parsed.
	encoded bool
	// truncated says that body stops at the limit, where the response
	// went on; skipped that it was not read at all (WithSkipUnparsed).
	truncated, skipped bool
}

// newClient returns the client a Run uses and whether the Run owns its
// transport (and so closes its idle connections when it ends). The crawler
// follows redirects itself, so the client must hand every redirect back.
// With WithBlockPrivateNetworks, a caller's transport is cloned to guard its
// dialers, and the clone is the Run's own.
func (c *config) newClient() (*http.Client, bool, error) {
	stop := func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	if c.client != nil {
		cl := *c.client
		cl.CheckRedirect = stop
		owned := false
		if c.blockPrivate {
			t, err := guardTransport(cl.Transport)
			if err != nil {
				return nil, false, fmt.Errorf("WithBlockPrivateNetworks: %w", err)
			}
			cl.Transport, owned = t, true
		}
		var inner http.RoundTripper // the Run's own clone, if any
		if owned {
			inner = cl.Transport
		}
		if c.wrapTransport != nil {
			// A wrapper (a WARC recorder) may clone the transport: its
			// connections are then the Run's own.
			cl.Transport, owned = c.wrapTransport(cl.Transport), true
		}
		cl.Transport = locationGuard{rt: cl.Transport, inner: inner}
		return &cl, owned, nil
	}
	dialer := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	dial := dialer.DialContext
	if c.blockPrivate {
		dialer.Control = controlAddr
		dial = guardDial(dial)
	}
	// http.DefaultTransport's settings, less its proxy from the environment
	// (a library reads no environment: pass a client for a proxy), and with
	// an idle connection kept for every worker, all of them possibly on one
	// host, instead of 2 per host, and at most four per worker in all.
	t := &http.Transport{
		DialContext:         dial,
		ForceAttemptHTTP2:   true,
		MaxIdleConnsPerHost: c.workers,
		// And a bound over all hosts: a broad crawl of 10,000 hosts
		// would otherwise keep a connection open to each.
		MaxIdleConns:           4 * c.workers,
		IdleConnTimeout:        90 * time.Second,
		TLSHandshakeTimeout:    10 * time.Second,
		ExpectContinueTimeout:  time.Second,
		MaxResponseHeaderBytes: maxHeaderBytes,
	}
	var rt http.RoundTripper = t
	if c.wrapTransport != nil {
		rt = c.wrapTransport(t)
	}
	return &http.Client{Transport: locationGuard{rt: rt, inner: t}, CheckRedirect: stop}, true, nil
}

// ctxBody is a response body closed, once, by the first of its Close and
// the end of ctx (see send); a read that fails once ctx has ended fails
// with ctx's error.
type ctxBody struct {
	rc   io.ReadCloser
	ctx  context.Context
	once sync.Once
	err  error // of the first Close
}

func (b *ctxBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if err != nil && err != io.EOF && b.ctx.Err() != nil {
		err = b.ctx.Err()
	}
	return n, err
}

func (b *ctxBody) Close() error {
	b.once.Do(func() { b.err = b.rc.Close() })
	return b.err
}

// maxHeaderBytes caps the response headers the default transport reads.
const maxHeaderBytes = 1 << 20

// badLocationHeader carries a redirect's Location that does not parse.
const badLocationHeader = "X-Crawl-Bad-Location"

// locationGuard moves a redirect's unparseable Location header aside.
// http.Client parses Location before it asks CheckRedirect and fails the
// whole request on a bad one, which would look like a network error and be
// retried; moved aside, the response reaches the crawler, which records it
// as an ErrNoLocation Result.
type locationGuard struct {
	rt    http.RoundTripper
	inner http.RoundTripper // under a WithTransportWrapper wrapper, or rt
}

func (g locationGuard) RoundTrip(req *http.Request) (*http.Response, error) {
	rt := g.rt
	if rt == nil {
		rt = http.DefaultTransport
	}
	resp, err := rt.RoundTrip(req)
	if err != nil || !isRedirect(resp.StatusCode) {
		return resp, err
	}
	if loc := resp.Header.Get("Location"); loc != "" {
		if _, perr := req.URL.Parse(loc); perr != nil {
			resp.Header.Del("Location")
			resp.Header.Set(badLocationHeader, loc)
		}
	}
	return resp, nil
}

// location returns the target of a redirect response, resolved against
// the URL requested as the URL Standard resolves it, in the form that is
// sent (see urlstd.Resolve); a target that is not http(s) is resolved by
// url.URL.Parse, to be reported and not followed. A Location the guard
// moved aside, one net/url cannot parse, is resolved too, and followed as
// a browser would: "/a%zz" is requested as "/a%zz". A missing Location,
// or one that fails to parse, gives an error wrapping ErrNoLocation.
func (resp *response) location() (*url.URL, error) {
	loc := resp.header.Get("Location")
	if loc == "" {
		loc = resp.header.Get(badLocationHeader)
	}
	if loc == "" {
		return nil, ErrNoLocation
	}
	// A header holds bytes: one not of UTF-8 is sent percent-encoded as
	// it came ("?\xFF" as "?%FF"), as browsers do, not as U+FFFD.
	next, err := urlstd.Resolve(resp.url, urlstd.EscapeIllFormed(loc))
	if errors.Is(err, urlstd.ErrNotHTTP) {
		next, err = resp.url.Parse(loc)
	}
	if err != nil {
		return nil, fmt.Errorf("Location %q: %w: %v", loc, ErrNoLocation, err)
	}
	return next, nil
}

// CloseIdleConnections closes the idle connections of the transport under
// the guard, so that http.Client.CloseIdleConnections reaches it.
func (g locationGuard) CloseIdleConnections() {
	for _, rt := range []http.RoundTripper{g.rt, g.inner} {
		if c, ok := rt.(interface{ CloseIdleConnections() }); ok {
			c.CloseIdleConnections()
		}
	}
}

func statusOf(resp *response) int {
	if resp == nil {
		return 0
	}
	return resp.status
}

// fetcher makes the attempts at a Run's URLs: it sends one request, reads
// its response within the body limits, and decides whether an outcome is
// worth another try, and when. It is built from the few options it needs,
// and is safe for concurrent use.
type fetcher struct {
	client *http.Client
	// direct is the client's transport when the client is the crawler's
	// own, which adds nothing to it but costs: it has no cookie jar and
	// no timeout, and hands every redirect back (for which it builds the
	// next hop's request all the same), yet copies each request's
	// headers.
	direct        http.RoundTripper
	userAgent     string
	requestHook   func(*http.Request) error
	timeout       time.Duration // per attempt
	maxTries      int
	backoffBase   time.Duration
	maxBackoff    time.Duration
	maxRetryAfter time.Duration
	hostDelay     time.Duration // before following a robots.txt redirect
	// parsesAll says that a custom extractor reads every page, whatever
	// its type; else only the types the default extractor reads are
	// parsed (see extract.Parsed), spec saying whether scripts are.
	parsesAll, spec bool
	skipUnparsed    bool // WithSkipUnparsed
}

func newFetcher(cfg *config, client *http.Client) *fetcher {
	var direct http.RoundTripper
	if cfg.client == nil && cfg.wrapTransport == nil {
		direct = client.Transport
	}
	return &fetcher{
		client:        client,
		direct:        direct,
		userAgent:     cfg.userAgent,
		requestHook:   cfg.requestHook,
		timeout:       cfg.requestTimeout,
		maxTries:      cfg.maxTries,
		backoffBase:   cfg.backoff,
		maxBackoff:    cfg.maxBackoff,
		maxRetryAfter: cfg.maxRetryAfter,
		hostDelay:     cfg.hostDelay,
		parsesAll:     cfg.extractor != nil || cfg.typedExtractor != nil,
		spec:          cfg.speculative,
		skipUnparsed:  cfg.skipUnparsed,
	}
}

// unparsed reports whether nobody reads a page of media type mt for links:
// it is not one the default extractor reads, and no custom extractor is
// set.
func (f *fetcher) unparsed(mt string) bool {
	return !f.parsesAll && !extract.Parsed(mt, f.spec)
}

// retryable decides whether the outcome of attempt number try is worth
// another, and how long to wait before it.
func (f *fetcher) retryable(resp *response, err error, try int) (time.Duration, bool) {
	if try >= f.maxTries {
		return 0, false
	}
	if err != nil {
		// A status that is retried is, whatever its body: one over the
		// cap, which the status says is no page anyway.
		if resp != nil && retriedStatus(resp.status) && errors.Is(err, ErrBodyTooLarge) {
			return f.retryWait(resp.header, try), true
		}
		var ne *netError
		if !errors.As(err, &ne) || ne.permanent {
			return 0, false
		}
		return f.backoff(try), true
	}
	if !retriedStatus(resp.status) {
		return 0, false
	}
	return f.retryWait(resp.header, try), true
}

// retriedStatus reports whether a response of this status is retried.
func retriedStatus(status int) bool {
	switch status {
	case http.StatusRequestTimeout, http.StatusTooManyRequests, http.StatusInternalServerError,
		http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// retryWait returns the pause after failed attempt number try: what the
// response's Retry-After header asks (seconds or a date), capped, or else
// the backoff. header may be nil.
func (f *fetcher) retryWait(header http.Header, try int) time.Duration {
	if d, ok := retryAfter(header.Get("Retry-After"), time.Now()); ok {
		return min(d, f.maxRetryAfter)
	}
	return f.backoff(try)
}

// backoff returns the pause after failed attempt number try: exponential
// from the base, capped, with equal jitter.
func (f *fetcher) backoff(try int) time.Duration {
	d := f.backoffBase
	for i := 1; i < try && d < f.maxBackoff; i++ {
		d *= 2
	}
	d = min(d, f.maxBackoff)
	if d <= 0 {
		return 0
	}
	return d/2 + rand.N(d/2+1)
}

// retryAfter parses a Retry-After value, delay-seconds or an HTTP date.
func retryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	secs, err := strconv.ParseInt(v, 10, 64)
	if errors.Is(err, strconv.ErrRange) && strings.Trim(v, "0123456789") == "" {
		// Delta-seconds past int64 (RFC 9110: 1*DIGIT): as long as it
		// gets, which the caller caps.
		secs, err = math.MaxInt64, nil
	}
	if err == nil {
		if secs < 0 {
			return 0, false
		}
		return time.Duration(min(secs, int64(1<<62/time.Second))) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

// netError marks an error of the network or the server's connection, the
// kind of failure worth retrying unless it is permanent.
type netError struct {
	err       error
	permanent bool // a retry would fail the same way; see isPermanent
}

func (e *netError) Error() string { return e.err.Error() }
func (e *netError) Unwrap() error { return e.err }

// attempt sends one request for t and reads its response, bounded by the
// per-attempt timeout, its body by limit. The body of a robots.txt is read
// up to the limit and cut there; that of a sitemap too, but with one byte
// more, which tells the sitemap parser that the file was larger. The body
// is read into *buf.
func (f *fetcher) attempt(ctx context.Context, buf *[]byte, t task, limit int64) (*response, error) {
	if t.kind != CheckRequest {
		return f.send(ctx, buf, t, limit, http.MethodGet)
	}
	// A link checked for its status: its headers are enough, where the
	// server answers HEAD.
	resp, err := f.send(ctx, buf, t, limit, http.MethodHead)
	if err == nil && (resp.status == http.StatusMethodNotAllowed || resp.status == http.StatusNotImplemented) {
		// The GET is a request of its own to the host: after the
		// host's delay, and counted in Result.Tries once written.
		if t.delay > 0 {
			if err := sleepUntil(ctx, time.Now().Add(sched.Pause(t.delay, t.floor))); err != nil {
				return nil, err
			}
		}
		resp, err = f.send(ctx, buf, t, limit, http.MethodGet)
		if rs := t.resends; rs != nil && (err == nil || rs.wrote.Load() > 0) {
			rs.n++
		}
	}
	return resp, err
}

// sleepUntil waits until t, or until ctx ends.
func sleepUntil(ctx context.Context, t time.Time) error {
	wait := time.Until(t)
	if wait <= 0 {
		return nil
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// resends counts the requests a worker's fetch had net/http send again by
// itself, and stops a second resend: net/http sends a GET again each time
// it fails on a kept-alive connection before any answer, as long as its
// pool has such connections, where a browser sends it again once. The
// trace is made once a worker, not once a request.
type resends struct {
	n       int // in all, since the caller zeroed it
	wrote   atomic.Int32
	conns   atomic.Int32
	stopped atomic.Bool        // the request was cancelled at its third connection
	stop    context.CancelFunc // the request's, set by start
	trace   *httptrace.ClientTrace
}

// errResentTwice is the error of a request that failed on a connection
// before any answer, twice: sent once, then again on a new connection.
var errResentTwice = errors.New("the server closed the connection before answering, twice (the request was sent again once, on another connection)")

// start returns ctx, the request's, traced, and cancelled by cancel at
// its third connection. (The request's own cancel, not one of a context
// of its own: a context a request costs three allocations.)
func (r *resends) start(ctx context.Context, cancel context.CancelFunc) context.Context {
	if r.trace == nil {
		r.trace = &httptrace.ClientTrace{
			GetConn: func(string) {
				if r.conns.Add(1) > 2 {
					r.stopped.Store(true)
					r.stop()
				}
			},
			WroteRequest: func(i httptrace.WroteRequestInfo) {
				if i.Err == nil {
					r.wrote.Add(1)
				}
			},
		}
	}
	r.wrote.Store(0)
	r.conns.Store(0)
	r.stopped.Store(false)
	r.stop = cancel
	return httptrace.WithClientTrace(ctx, r.trace)
}

// end counts the request's writes beyond its first, and returns err, or
// errResentTwice if that is what stopped the request.
func (r *resends) end(err error) error {
	if n := int(r.wrote.Load()); n > 1 {
		r.n += n - 1
	}
	if err != nil && r.stopped.Load() {
		err = errResentTwice
	}
	return err
}

// send makes one request for t with method and reads its response, as
// attempt says.
func (f *fetcher) send(ctx context.Context, buf *[]byte, t task, limit int64, method string) (got *response, err error) {
	actx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	rs := t.resends
	if rs != nil {
		// net/http sends a GET again on a new connection when a
		// kept-alive one fails before any answer (as browsers do, once):
		// the server may have had the first, so it counts as a try
		// (Result.Tries, WithMaxTries).
		actx = rs.start(actx, cancel)
	}
	req, u, err := urlstd.NewRequest(actx, method, t.url)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", t.url, err)
	}
	// The URL the response is of, for links and redirects to resolve
	// against: the crawler's own, whatever a request hook does to req.URL.
	out := &response{target: *u}
	out.url = &out.target
	req.Header.Set("User-Agent", f.userAgent)
	if hook := f.requestHook; hook != nil {
		if err := protect("request hook", func() error { return hook(req) }); err != nil {
			return nil, fmt.Errorf("fetch %s: request hook: %w", t.url, err)
		}
	}
	if t.crossHost {
		// The hook set its credentials for the host where the redirect
		// chain started, which this one is not.
		req.Header.Del("Authorization")
		req.Header.Del("Cookie")
		req.Header.Del("Proxy-Authorization")
	}
	resp, err := f.do(req, method)
	if rs != nil {
		err = rs.end(err)
	}
	if err != nil {
		return nil, f.attemptErr(ctx, t, err)
	}
	if resp.StatusCode == http.StatusSwitchingProtocols {
		// The crawler asks no upgrade: a 101 is a final answer with no
		// body (net/http gives the connection itself as its body, and
		// no longer watches ctx: a server that then says nothing held
		// the Run past every deadline).
		resp.Body.Close()
		resp.Body = http.NoBody
	}
	// A transport of the caller's (WithHTTPClient, WithTransportWrapper)
	// that ignores ctx has its body closed at the attempt's end all the
	// same, its read then failing as the attempt's ctx says. The
	// crawler's own net/http transport watches ctx itself (but for the
	// 101 above): its bodies are not wrapped, at no cost a page.
	stopClose := func() bool { return false }
	if f.direct == nil {
		guarded := &ctxBody{rc: resp.Body, ctx: actx}
		stopClose = context.AfterFunc(actx, func() { guarded.Close() })
		resp.Body = guarded
	}
	defer func() {
		// A body whose Close fails fails the attempt, as a read would
		// have: a recording transport (warc.Writer's) says so of an
		// exchange whose records it could not write, whose URL must not
		// count as done.
		stopClose()
		if cerr := resp.Body.Close(); cerr != nil && err == nil {
			got, err = f.bodyErr(ctx, t, out, cerr)
		}
	}()
	out.status, out.header = resp.StatusCode, resp.Header
	if isRedirect(resp.StatusCode) {
		// The body of a redirect is of no use, but reading a little of it
		// lets the connection be reused.
		io.CopyN(io.Discard, resp.Body, 4<<10)
		return out, nil
	}
	out.contentType, out.charset = mediaType(resp.Header.Get("Content-Type"))
	if t.kind == kindRobots && (resp.StatusCode < 200 || resp.StatusCode > 299) {
		// Only its status counts; as for a redirect, reading a little
		// of the body lets the connection be reused.
		io.CopyN(io.Discard, resp.Body, 4<<10)
		return out, nil
	}
	unparsed := f.unparsed(out.contentType)
	// A page with no Content-Type may be HTML: read, and sniffed below.
	untyped := t.kind == kindPage && len(resp.Header.Values("Content-Type")) == 0
	if f.skipUnparsed && unparsed && !untyped && (t.kind == kindPage || t.kind == ResourceRequest) {
		// Its status and headers are all the crawl wants of it.
		out.skipped = true
		return out, nil
	}
	// A page over the limit is an error, if the crawl reads it for
	// links. robots.txt (RFC 9309: the first 500 KiB) and a sitemap
	// (sitemaps.org: 50 MB) are read up to their limit and the rest is
	// ignored; so are the bodies nobody parses, requisites and checks.
	cut := t.kind != kindPage || unparsed
	if resp.ContentLength > limit && !cut {
		return out, fmt.Errorf("fetch %s: Content-Length %d over the %d byte limit: %w",
			t.url, resp.ContentLength, limit, ErrBodyTooLarge)
	}
	body := io.Reader(resp.Body)
	if !resp.Uncompressed {
		// The transport decodes gzip only when it asked for it itself;
		// a request hook that set Accept-Encoding, or a server that
		// ignored it, leaves the decoding to us.
		var decoded bool
		if body, decoded, out.encoded, err = decodeBody(body, resp.Header.Values("Content-Encoding")); err != nil {
			return f.bodyErr(ctx, t, out, err)
		}
		if decoded {
			// As the transport does: the header describes the body given.
			resp.Header.Del("Content-Encoding")
			resp.Header.Del("Content-Length")
		}
	}
	*buf, err = readBody((*buf)[:0], body, limit)
	if errors.Is(err, ErrBodyTooLarge) && cut {
		out.body, out.truncated = (*buf)[:limit], true
		if t.kind == kindSitemap {
			// The byte past the limit stays: by it sitemap.Parse knows
			// that the file went on, and says so with
			// ErrSitemapTooLarge after what it read up to the limit.
			out.body = *buf
		}
		return out, nil
	}
	if errors.Is(err, ErrBodyTooLarge) {
		out.body = *buf // Result.Size tells how far the read went
		return out, fmt.Errorf("fetch %s: body over the %d byte limit: %w", t.url, limit, err)
	}
	if err != nil {
		return f.bodyErr(ctx, t, out, err)
	}
	out.body = *buf
	if untyped && !out.encoded && strings.HasPrefix(http.DetectContentType(out.body), "text/html") {
		// No Content-Type at all: a body a browser takes for HTML (the
		// WHATWG MIME Sniffing Standard, as http.DetectContentType
		// reads it: "<!DOCTYPE HTML", "<html", "<a ", ... first) is
		// read as HTML, as a browser renders it.
		out.contentType = "text/html"
	}
	return out, nil
}

// do sends req, made with method, through the client, or straight
// through its transport (see fetcher.direct) where the request hook left
// the client nothing to do: no user and password in the URL to send as
// basic authentication, the method as it was. An error is then wrapped as
// the client wraps it.
func (f *fetcher) do(req *http.Request, method string) (*http.Response, error) {
	if f.direct == nil || req.URL == nil || req.URL.User != nil || req.Method != method ||
		req.Header == nil || req.RequestURI != "" {
		return f.client.Do(req)
	}
	resp, err := f.direct.RoundTrip(req)
	if err != nil {
		op := "Get"
		if method == http.MethodHead {
			op = "Head"
		}
		return nil, &url.Error{Op: op, URL: urlstd.String(req.URL), Err: err}
	}
	return resp, nil
}

// attemptErr wraps an error of the transport or the body. It is worth a
// retry unless the crawl itself was cancelled, the address is blocked, the
// host name does not exist, the server's certificate does not verify or
// the body could not be decoded: those would fail again.
func (f *fetcher) attemptErr(ctx context.Context, t task, err error) error {
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("fetch %s: %w", t.url, ctx.Err())
	case errors.Is(err, ErrBlockedAddress):
		return fmt.Errorf("fetch %s: %w", t.url, err)
	case isDecodeError(err):
		return fmt.Errorf("fetch %s: decode body: %w", t.url, err)
	}
	return &netError{err: fmt.Errorf("fetch %s: %w", t.url, err), permanent: isPermanent(err)}
}

// isPermanent reports whether err is a network failure that a retry would
// meet again: a host name that does not exist (NXDOMAIN, not a resolver
// timeout or a temporary failure) or a server certificate that does not
// verify.
func isPermanent(err error) bool {
	var (
		dnsErr   *net.DNSError
		verify   *tls.CertificateVerificationError
		unknown  x509.UnknownAuthorityError
		hostname x509.HostnameError
		invalid  x509.CertificateInvalidError
	)
	return errors.As(err, &dnsErr) && dnsErr.IsNotFound ||
		errors.As(err, &verify) || errors.As(err, &unknown) ||
		errors.As(err, &hostname) || errors.As(err, &invalid) ||
		// A response head over maxHeaderBytes: net/http's error has no
		// type of its own.
		strings.Contains(err.Error(), "server response headers exceeded")
}

// bodyErr wraps an error met reading the body of out. The response came
// (its status and header), so it is kept, without a body: a Result of a
// body cut short has its status. A retry, if any, makes a new one.
func (f *fetcher) bodyErr(ctx context.Context, t task, out *response, err error) (*response, error) {
	return out, f.attemptErr(ctx, t, err)
}

// maxCodings is the most content codings a body may be wrapped in: each
// costs a decoder's window.
const maxCodings = 2

// decodeBody returns body decoded from the content codings listed in
// Content-Encoding values, and whether it decoded any: gzip (or x-gzip)
// and deflate (zlib, or raw deflate, which some servers send), undone
// last first; identity is no coding. The decoders stream, so the caller's
// size cap counts decoded bytes. A body with a coding the standard library
// cannot decode (br, zstd, compress) is returned as it is, with encoded
// true.
func decodeBody(body io.Reader, values []string) (_ io.Reader, decoded, encoded bool, _ error) {
	var codings []string
	for _, v := range values {
		for c := range strings.SplitSeq(v, ",") {
			switch c = strings.ToLower(strings.TrimSpace(c)); c {
			case "", "identity":
			case "gzip", "x-gzip", "deflate":
				codings = append(codings, c)
			default:
				return body, false, true, nil
			}
		}
	}
	if len(codings) > maxCodings {
		return nil, false, false, fmt.Errorf("%w: %d content codings, at most %d are decoded", errDecode, len(codings), maxCodings)
	}
	for i := len(codings) - 1; i >= 0; i-- {
		br := bufio.NewReader(body)
		if _, err := br.Peek(1); err == io.EOF {
			// An empty body is empty whatever its coding says.
			return http.NoBody, true, false, nil
		} else if err != nil {
			return nil, false, false, err
		}
		var err error
		if codings[i] == "deflate" {
			body, err = inflater(br)
		} else {
			body, err = gzip.NewReader(br)
		}
		if err != nil {
			return nil, false, false, err
		}
	}
	return body, len(codings) > 0, false, nil
}

// inflater returns a reader of a deflate body: HTTP's deflate is a zlib
// stream (RFC 1950), but some servers send raw deflate (RFC 1951), told
// apart by the zlib header's check bits.
func inflater(br *bufio.Reader) (io.Reader, error) {
	if h, err := br.Peek(2); err == nil && h[0]&0x0f == 8 && h[0]>>4 <= 7 && (uint16(h[0])<<8|uint16(h[1]))%31 == 0 {
		return zlib.NewReader(br)
	}
	return flate.NewReader(br), nil
}

// errDecode marks a body that could not be decoded for a reason of our own.
var errDecode = errors.New("bad content coding")

// isDecodeError reports whether err says a body's compressed data is
// corrupt, which a retry would not mend; a truncated body
// (io.ErrUnexpectedEOF) is a network failure.
func isDecodeError(err error) bool {
	var corrupt flate.CorruptInputError
	return errors.Is(err, errDecode) || errors.Is(err, gzip.ErrHeader) || errors.Is(err, gzip.ErrChecksum) ||
		errors.Is(err, zlib.ErrHeader) || errors.Is(err, zlib.ErrChecksum) || errors.Is(err, zlib.ErrDictionary) ||
		errors.As(err, &corrupt)
}

// minBodyBuf is the least a body buffer grows by: a worker's buffer,
// kept across pages, takes a typical page in one step rather than in the
// dozen that appending from empty costs on its first pages.
const minBodyBuf = 8 << 10

// readBody appends the body to dst, reading at most limit+1 bytes: one byte
// more than allowed is enough to know that the body is too large.
func readBody(dst []byte, body io.Reader, limit int64) ([]byte, error) {
	for {
		if len(dst) == cap(dst) {
			dst = slices.Grow(dst, max(len(dst), minBodyBuf))
		}
		room := dst[len(dst):cap(dst)]
		if over := int64(len(dst)) + int64(len(room)) - (limit + 1); over > 0 {
			room = room[:int64(len(room))-over]
		}
		n, err := body.Read(room)
		dst = dst[:len(dst)+n]
		if int64(len(dst)) > limit {
			return dst, ErrBodyTooLarge
		}
		if err == io.EOF {
			return dst, nil
		}
		if err != nil {
			return dst, err
		}
	}
}

// mediaType splits a Content-Type header into its media type, lower case,
// and its charset parameter, without allocating for the usual forms.
func mediaType(header string) (typ, charsetLabel string) {
	typ, params, _ := strings.Cut(header, ";")
	typ = strings.ToLower(strings.TrimSpace(typ))
	for params != "" {
		var p string
		p, params, _ = strings.Cut(params, ";")
		k, v, ok := strings.Cut(p, "=")
		if ok && strings.EqualFold(strings.TrimSpace(k), "charset") {
			return typ, strings.Trim(strings.TrimSpace(v), `"'`)
		}
	}
	return typ, ""
}

// isText reports whether a media type is text whose encoding should be
// detected and decoded to UTF-8.
func isText(mediaType string) bool {
	return strings.HasPrefix(mediaType, "text/") || mediaType == "application/xhtml+xml" ||
		mediaType == "application/xml" || strings.HasSuffix(mediaType, "+xml")
}

// decode finds the character encoding of a text body and returns the body
// in UTF-8 with the encoding's canonical name. The encoding is decided, as
// the WHATWG Encoding standard and browsers do, by the first of:
//
//   - a byte order mark (UTF-8, UTF-16LE or UTF-16BE), which wins even over
//     the header;
//   - label, the charset of the Content-Type header, if it names an
//     encoding;
//   - for HTML, a <meta charset> or <meta http-equiv="Content-Type"> tag
//     in the first KiB, found by the HTML standard's prescan (the word
//     "charset" elsewhere, as in <script charset>, declares nothing);
//   - for XML types, the encoding of the XML declaration;
//   - detection: UTF-8 if the whole body is valid UTF-8, else
//     windows-1252.
//
// A body in UTF-8 is returned as it is, without its byte order mark. An
// XML declaration at the start of the body that names another encoding is
// made to name UTF-8, which the body now is.
func decode(body []byte, mediaType, label string) ([]byte, string) {
	name := bomEncoding(body)
	switch {
	case name != "" || label == "":
	case strings.EqualFold(label, "utf-8"):
		name = "utf-8" // as Lookup says, without the encoding it allocates
	default:
		_, name = charset.Lookup(label)
	}
	if name == "" && isHTML(mediaType) {
		name = metaCharset(body)
	}
	if name == "" && isXML(mediaType) {
		if label, _, _, ok := xmlDeclaration(body); ok {
			_, name = charset.Lookup(label)
			if strings.HasPrefix(name, "utf-16") {
				// A declaration readable as ASCII is not in UTF-16.
				name = "utf-8"
			}
		}
	}
	if name == "" {
		name = "windows-1252"
		if utf8.Valid(body) {
			name = "utf-8"
		}
	}
	out := body
	if name != "utf-8" {
		// As the Encoding Standard decodes: x/text's decoders differ
		// in a few bytes (webenc).
		var ok bool
		if out, ok = webenc.Decode(body, name); !ok {
			return body, name
		}
	}
	// A UTF-16 decoder keeps the byte order mark as U+FEFF; it goes as
	// for UTF-8.
	return declareUTF8(bytes.TrimPrefix(out, utf8BOM)), name
}

// bomEncoding returns the encoding the byte order mark at the start of
// body names, or "".
func bomEncoding(body []byte) string {
	switch {
	case bytes.HasPrefix(body, utf8BOM):
		return "utf-8"
	case bytes.HasPrefix(body, []byte{0xfe, 0xff}):
		return "utf-16be"
	case bytes.HasPrefix(body, []byte{0xff, 0xfe}):
		return "utf-16le"
	}
	return ""
}

// isXML reports whether a media type is XML, whose encoding an XML
// declaration may give.
func isXML(mediaType string) bool {
	return mediaType == "text/xml" || mediaType == "application/xml" || strings.HasSuffix(mediaType, "+xml")
}

// metaCharset returns the canonical name of the encoding that a <meta> tag
// in the first KiB of an HTML body declares, or "" if none declares one it
// knows. As in the HTML standard's prescan, a tag declares with a charset
// attribute, or with http-equiv="Content-Type" and a charset in its
// content attribute; the first of each attribute counts; tags inside
// comments or scripts do not count; UTF-16 is read as UTF-8 (a page whose
// <meta> can be read as ASCII is not in UTF-16) and x-user-defined as
// windows-1252.
func metaCharset(body []byte) string {
	z := html.NewTokenizer(bytes.NewReader(body[:min(len(body), 1024)]))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return ""
		case html.StartTagToken, html.SelfClosingTagToken:
		default:
			continue
		}
		tag, more := z.TagName()
		if string(tag) != "meta" {
			continue
		}
		var (
			label, content                         string
			hasLabel, hasContent, hasEquiv, pragma bool
		)
		for more {
			var k, v []byte
			k, v, more = z.TagAttr()
			switch string(k) {
			case "charset":
				if !hasLabel {
					label, hasLabel = string(v), true
				}
			case "content":
				if !hasContent {
					content, hasContent = string(v), true
				}
			case "http-equiv":
				if !hasEquiv {
					pragma, hasEquiv = strings.EqualFold(string(v), "content-type"), true
				}
			}
		}
		if !hasLabel && pragma {
			label = contentCharset(content)
		}
		if label == "" {
			continue
		}
		if _, name := charset.Lookup(label); name != "" {
			switch {
			case strings.HasPrefix(name, "utf-16"):
				return "utf-8"
			case name == "x-user-defined":
				return "windows-1252"
			}
			return name
		}
	}
}

// contentCharset returns the charset that the content attribute of a
// <meta http-equiv="Content-Type"> names ("text/html; charset=koi8-r"),
// or "", as the HTML standard extracts it.
func contentCharset(content string) string {
	s := content
	for {
		i := indexFold(s, "charset")
		if i < 0 {
			return ""
		}
		s = strings.TrimLeft(s[i+len("charset"):], htmlSpace)
		if rest, ok := strings.CutPrefix(s, "="); ok {
			s = strings.TrimLeft(rest, htmlSpace)
			break
		}
	}
	if s == "" {
		return ""
	}
	if q := s[0]; q == '"' || q == '\'' {
		v, _, ok := strings.Cut(s[1:], s[:1])
		if !ok {
			return ""
		}
		return v
	}
	if end := strings.IndexAny(s, ";"+htmlSpace); end >= 0 {
		s = s[:end]
	}
	return s
}

// htmlSpace is the white space of HTML.
const htmlSpace = "\t\n\f\r "

// indexFold returns the index of the first instance of word, lower case
// ASCII letters, in s in any case, or -1.
func indexFold(s, word string) int {
next:
	for i := 0; i+len(word) <= len(s); i++ {
		for j := range len(word) {
			if s[i+j]|0x20 != word[j] {
				continue next
			}
		}
		return i
	}
	return -1
}

// xmlDeclaration finds the encoding of an XML declaration at the start of
// b (<?xml version="1.0" encoding="Shift_JIS"?>): the label, and where it
// is in b. ok is false if b starts with no XML declaration, or one that
// declares no encoding.
func xmlDeclaration(b []byte) (label string, start, end int, ok bool) {
	const open = "<?xml"
	if len(b) <= len(open) || string(b[:len(open)]) != open || !sitemap.IsXMLSpace(b[len(open)]) {
		return "", 0, 0, false
	}
	decl := b[:min(len(b), 1024)] // a declaration is short
	skipSpace := func(i int) int {
		for i < len(decl) && sitemap.IsXMLSpace(decl[i]) {
			i++
		}
		return i
	}
	// Pseudo-attributes, name="value" or name='value', up to "?>".
	for i := len(open); ; {
		i = skipSpace(i)
		j := i
		for j < len(decl) && !sitemap.IsXMLSpace(decl[j]) && decl[j] != '=' && decl[j] != '?' {
			j++
		}
		name := string(decl[i:j])
		i = skipSpace(j)
		if name == "" || i >= len(decl) || decl[i] != '=' {
			return "", 0, 0, false
		}
		i = skipSpace(i + 1)
		if i >= len(decl) || decl[i] != '"' && decl[i] != '\'' {
			return "", 0, 0, false
		}
		n := bytes.IndexByte(decl[i+1:], decl[i])
		if n < 0 {
			return "", 0, 0, false
		}
		start, end = i+1, i+1+n
		if name == "encoding" {
			return string(decl[start:end]), start, end, true
		}
		i = end + 1
	}
}

// declareUTF8 returns body, which is in UTF-8, with the encoding of the XML
// declaration at its start, if any, made to say UTF-8, so that an XML
// parser reads it as what it is. body itself is not modified.
func declareUTF8(body []byte) []byte {
	label, start, end, ok := xmlDeclaration(body)
	if !ok || strings.EqualFold(label, "utf-8") {
		return body
	}
	out := make([]byte, 0, len(body)-(end-start)+len("UTF-8"))
	out = append(out, body[:start]...)
	out = append(out, "UTF-8"...)
	return append(out, body[end:]...)
}

// isRedirect reports whether status is one the crawler follows.
func isRedirect(status int) bool {
	switch status {
	case 300, 301, 302, 303, 307, 308:
		return true
	}
	return false
}

var utf8BOM = []byte{0xef, 0xbb, 0xbf}
