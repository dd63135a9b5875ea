package crawl

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"time"

	"golang.org/x/net/http/httpguts"
)

// Version is the version of this package, as sent in the default User-Agent.
const Version = "0.1.0"

// DefaultUserAgent is the User-Agent header sent unless WithUserAgent sets
// another.
const DefaultUserAgent = "asyncrawl/" + Version + " (+https://github.com/asyncrawl/crawl)"

// Defaults of the options; each With* option documents its own.
const (
	DefaultWorkers        = 10
	DefaultMaxRedirects   = 10
	DefaultMaxTries       = 4
	DefaultMaxBodySize    = 10 << 20
	DefaultRequestTimeout = 30 * time.Second
	DefaultBackoff        = 250 * time.Millisecond
	DefaultMaxBackoff     = 30 * time.Second
	DefaultMaxRetryAfter  = 10 * time.Minute
	DefaultHostWorkers    = 8
	// MaxCrawlDelay caps the Crawl-delay a robots.txt may ask for.
	MaxCrawlDelay = 30 * time.Second
)

// Defaults of the trap limits; see WithMaxURLLength, WithMaxLinksPerPage
// and WithMaxSegmentRepeats.
const (
	// DefaultMaxURLLength is the limit of Internet Explorer, which sites
	// have long kept their URLs under.
	DefaultMaxURLLength      = 2083
	DefaultMaxLinksPerPage   = 5000
	DefaultMaxSegmentRepeats = 2
)

// Filter decides whether a link or redirect target may be crawled: it returns
// false to skip u, which is in the form the crawler sends (see Link.URL).
// Filters run after the URL is resolved and found in scope and may be
// called from several goroutines at once. A filter must not modify u.
type Filter func(u *url.URL) bool

// LinkExtractor returns the links of a fetched page. It is called for every
// 2xx response to a page's URL that is not a redirect, whatever its content
// type (not for sitemaps and robots.txt, whose URLs the crawler reads
// itself), and may be called from several goroutines at once. Relative URLs
// it returns are resolved against the URL requested, and every URL is then
// rewritten in place to the form the crawler sends (see Link.URL), relative
// ones included (the crawler owns the returned URLs: one kept by the
// program reads as the URL queued), and
// checked against the scope, exclude patterns and filters before it is
// queued. p.Body is valid only during the call. The default is
// ExtractLinks.
type LinkExtractor func(ctx context.Context, p *Page) ([]*url.URL, error)

// An Option configures a Crawler. Options are applied in order by New, which
// validates the result.
type Option interface {
	apply(*config)
}

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// config is the validated configuration of a Crawler. It is never modified
// after New returns.
type config struct {
	workers        int
	maxRedirects   int
	maxTries       int
	excludeSrc     []string
	exclude        []*regexp.Regexp
	lenient        bool
	filters        []Filter
	extractor      LinkExtractor // nil: ExtractLinks
	typedExtractor TypedLinkExtractor
	linkFilters    []LinkFilter
	skipUnparsed   bool
	client         *http.Client
	blockPrivate   bool
	userAgent      string
	maxBodySize    int64
	requestTimeout time.Duration
	backoff        time.Duration
	maxBackoff     time.Duration
	maxRetryAfter  time.Duration
	hostWorkers    int
	hostDelay      time.Duration
	robots         bool
	robotsMaxAge   time.Duration
	directives     bool // the page's own robots directives are obeyed
	directivesSet  bool // by WithRobotsDirectives; else as robots
	sitemaps       bool
	requisites     bool // WithRequisites
	references     bool // WithReferences
	checkExternal  bool // WithCheckExternal
	speculative    bool // WithSpeculative
	maxDepth       int
	maxPages       int
	maxDuration    time.Duration
	logger         *slog.Logger
	requestHook    func(*http.Request) error
	pageHooks      []func(*Page)
	resultHooks    []func(Result)
	progressEvery  time.Duration
	progress       func(Progress)
	frontier       Frontier // nil: a MemoryFrontier per Run
	leaseTerm      time.Duration
	wrapTransport  func(http.RoundTripper) http.RoundTripper
	renderer       Renderer // WithRenderer; nil renders nothing
	renderPolicy   RenderPolicy

	// valid is set by validate: a Crawler's zero value has not been.
	valid bool

	// Trap limits; 0 disables each.
	maxURLLength      int
	maxLinksPerPage   int
	maxSegmentRepeats int
}

func defaultConfig() config {
	return config{
		workers:        DefaultWorkers,
		maxRedirects:   DefaultMaxRedirects,
		maxTries:       DefaultMaxTries,
		userAgent:      DefaultUserAgent,
		maxBodySize:    DefaultMaxBodySize,
		requestTimeout: DefaultRequestTimeout,
		backoff:        DefaultBackoff,
		maxBackoff:     DefaultMaxBackoff,
		maxRetryAfter:  DefaultMaxRetryAfter,
		hostWorkers:    DefaultHostWorkers,
		leaseTerm:      DefaultLeaseTerm,
		robots:         true,
		robotsMaxAge:   DefaultRobotsMaxAge,
		logger:         slog.New(slog.DiscardHandler),

		maxURLLength:      DefaultMaxURLLength,
		maxLinksPerPage:   DefaultMaxLinksPerPage,
		maxSegmentRepeats: DefaultMaxSegmentRepeats,
	}
}

// validate checks the configuration and compiles what needs compiling. The
// error names the option and the bad value.
func (c *config) validate() error {
	var errs []error
	if c.workers < 1 {
		errs = append(errs, fmt.Errorf("WithWorkers(%d): need at least 1 worker", c.workers))
	}
	if c.maxRedirects < 0 {
		errs = append(errs, fmt.Errorf("WithMaxRedirects(%d): must not be negative", c.maxRedirects))
	}
	if c.maxTries < 1 {
		errs = append(errs, fmt.Errorf("WithMaxTries(%d): need at least 1 try", c.maxTries))
	}
	if c.leaseTerm < 0 || c.leaseTerm > 0 && c.leaseTerm < MinLeaseTerm {
		errs = append(errs, fmt.Errorf("WithLeaseTerm(%v): must be 0 or at least %v", c.leaseTerm, MinLeaseTerm))
	}
	if c.maxBodySize < 1 {
		errs = append(errs, fmt.Errorf("WithMaxBodySize(%d): must be positive", c.maxBodySize))
	}
	if c.requestTimeout <= 0 {
		errs = append(errs, fmt.Errorf("WithRequestTimeout(%v): must be positive", c.requestTimeout))
	}
	if c.backoff < 0 || c.maxBackoff < c.backoff {
		errs = append(errs, fmt.Errorf("WithBackoff(%v, %v): need 0 <= base <= max", c.backoff, c.maxBackoff))
	}
	if c.hostWorkers < 1 {
		errs = append(errs, fmt.Errorf("WithHostWorkers(%d): need at least 1", c.hostWorkers))
	}
	if !httpguts.ValidHeaderFieldValue(c.userAgent) {
		errs = append(errs, fmt.Errorf("WithUserAgent(%q): not a valid header value (no control character but a tab)", c.userAgent))
	}
	// Limits where 0 means none and a negative value is a mistake.
	for _, l := range []struct {
		option string
		value  any
		bad    bool
	}{
		{"WithHostDelay", c.hostDelay, c.hostDelay < 0},
		{"WithRobotsMaxAge", c.robotsMaxAge, c.robotsMaxAge < 0},
		{"WithMaxDepth", c.maxDepth, c.maxDepth < 0},
		{"WithMaxPages", c.maxPages, c.maxPages < 0},
		{"WithMaxDuration", c.maxDuration, c.maxDuration < 0},
		{"WithMaxURLLength", c.maxURLLength, c.maxURLLength < 0},
		{"WithMaxLinksPerPage", c.maxLinksPerPage, c.maxLinksPerPage < 0},
		{"WithMaxSegmentRepeats", c.maxSegmentRepeats, c.maxSegmentRepeats < 0},
	} {
		if l.bad {
			errs = append(errs, fmt.Errorf("%s(%v): must not be negative", l.option, l.value))
		}
	}
	if c.progress != nil && c.progressEvery <= 0 {
		errs = append(errs, fmt.Errorf("WithProgress(%v, f): the interval must be positive", c.progressEvery))
	}
	if c.userAgent == "" {
		errs = append(errs, errors.New("WithUserAgent: empty user agent"))
	}
	if c.blockPrivate && c.client != nil {
		if _, err := guardTransport(c.client.Transport); err != nil {
			errs = append(errs, fmt.Errorf("WithBlockPrivateNetworks: %w", err))
		}
	}
	if c.logger == nil {
		c.logger = slog.New(slog.DiscardHandler)
	} else if _, ok := c.logger.Handler().(safeHandler); !ok {
		c.logger = slog.New(safeHandler{c.logger.Handler()})
	}
	for _, f := range c.filters {
		if f == nil {
			errs = append(errs, errors.New("WithFilter: nil filter"))
			break
		}
	}
	c.exclude = c.exclude[:0]
	for _, p := range c.excludeSrc {
		re, err := regexp.Compile(p)
		if err != nil {
			errs = append(errs, fmt.Errorf("WithExclude(%q): %w", p, err))
			continue
		}
		c.exclude = append(c.exclude, re)
	}
	if !c.directivesSet {
		c.directives = c.robots
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	c.valid = true
	return nil
}

// WithWorkers sets how many URLs are fetched at once: the number of
// long-lived worker goroutines, max_tasks in crawl.py. The default is 10;
// n must be at least 1.
func WithWorkers(n int) Option {
	return optionFunc(func(c *config) { c.workers = n })
}

// WithMaxRedirects sets how many redirects in a row are followed from one
// URL. The default is 10; 0 follows none (a redirect then ends in a Result
// whose Err wraps ErrTooManyRedirects); n must not be negative.
func WithMaxRedirects(n int) Option {
	return optionFunc(func(c *config) { c.maxRedirects = n })
}

// WithMaxTries sets how many attempts are made per URL when the network
// fails or the server answers 408, 429, 500, 502, 503 or 504; any other
// status is a Result at once. A network failure that would only happen
// again is not retried: a host name that does not exist (NXDOMAIN), a
// server certificate that does not verify, an address refused by
// WithBlockPrivateNetworks, a body whose compression is corrupt, a
// response head over 1 MiB. The
// default is 4; 1 means no retry; n must be at least 1. Each request sent
// counts, those net/http sends again by itself included: it sends a GET
// again on a new connection when a kept-alive one fails before any
// answer, and the crawler lets it do so once an attempt, as a browser
// does, so the last attempt may reach a server twice (n+1 requests; in a
// race of net/http's, when another kept-alive connection to the host is
// free as the crawler stops the third, which it then writes, n+2). Result.Tries counts the
// requests written, one written to a connection the server had just
// closed among them.
func WithMaxTries(n int) Option {
	return optionFunc(func(c *config) { c.maxTries = n })
}

// WithBackoff sets the pause before a retry (see WithMaxTries for what is
// retried: network failures and 408, 429, 500, 502, 503, 504): base before
// the second attempt, doubling each time up to max, with random jitter
// (each pause is drawn from [d/2, d]). A Retry-After header, in seconds or
// as an HTTP date, on any response retried replaces the computed pause,
// capped at 10 minutes; on a 429 or 503 it also pauses the whole host.
// The defaults are 250ms and 30s; base 0 retries at once.
func WithBackoff(base, max time.Duration) Option {
	return optionFunc(func(c *config) { c.backoff, c.maxBackoff = base, max })
}

// WithExclude adds regular expressions (RE2 syntax, as in package regexp);
// a link or redirect target whose normalised URL matches any of them is not
// crawled: the form the crawl dedupes on, with percent-encoded unreserved
// characters decoded and other escapes' hex digits upper-cased ("/~user"
// for "/%7euser"; see the repository's docs/urls.md), not the form it sends. Roots are always crawled. A pattern that does not compile makes
// New fail. The default is no pattern. The option may be given many times.
func WithExclude(patterns ...string) Option {
	return optionFunc(func(c *config) { c.excludeSrc = append(c.excludeSrc, patterns...) })
}

// WithLenientHosts chooses the scope of the crawl. Strict (the default,
// false): a URL is in scope when its host is a root's host, or that host with
// "www." added (to a host that does not start with it) or removed (from one
// that does). Lenient (true): when its host has the same
// registrable domain as a root's host (per the public suffix list, so
// "a.example.co.uk" and "b.example.co.uk" match but "other.co.uk" does not).
// Ports are ignored either way; only http and https URLs are ever crawled.
func WithLenientHosts(on bool) Option {
	return optionFunc(func(c *config) { c.lenient = on })
}

// WithFilter adds a filter; a link or redirect target is crawled only if
// every filter accepts it. Roots are always crawled. Filters may be called
// concurrently. The option may be given many times; the default is none.
func WithFilter(f Filter) Option {
	return optionFunc(func(c *config) { c.filters = append(c.filters, f) })
}

// WithLinkExtractor replaces the function that finds a page's links; nil
// restores the default, ExtractLinks. An extractor that wants the default
// links as well can call ExtractLinks itself.
func WithLinkExtractor(e LinkExtractor) Option {
	return optionFunc(func(c *config) { c.extractor, c.typedExtractor = e, nil })
}

// WithTypedLinkExtractor replaces the function that finds a page's typed
// links; nil restores the default, ExtractTypedLinks, which it may call
// itself to add to or prune the default links. The crawler treats its
// links as it treats the default extractor's: Page.Links holds them for
// the page hook, each followed by its role (navigation links in scope,
// one deeper; requisites with WithRequisites; references with
// WithReferences), and each gets its Fate. Each Link's URL must be
// absolute, or relative to p.Base; the crawler resolves it in place, to the
// form it sends (see Link.URL), and drops a link that does not resolve to an http(s) URL. It
// is called for the 2xx responses of pages, whatever their Content-Type
// (it decides by Page.ContentType what it reads; a page it is given has its
// body capped as one the crawl reads for links, see WithMaxBodySize), but
// for a body in a coding the crawler cannot decode, and not for sitemaps
// and robots.txt, which the crawler reads itself; and for the stylesheets
// (and, with WithSpeculative, scripts) fetched as requisites. It replaces a
// WithLinkExtractor given before it, as that replaces it.
func WithTypedLinkExtractor(e TypedLinkExtractor) Option {
	return optionFunc(func(c *config) { c.typedExtractor, c.extractor = e, nil })
}

// WithLinkFilter adds a LinkFilter, which decides on the typed links of
// pages, seeing what kind of link each is: a link is followed only if every
// LinkFilter accepts it, and then every Filter. The links of a custom
// WithLinkExtractor, which are bare URLs, see only the Filters. The option
// may be given many times; the default is none.
func WithLinkFilter(f LinkFilter) Option {
	return optionFunc(func(c *config) {
		if f != nil {
			c.linkFilters = append(c.linkFilters, f)
		}
	})
}

// WithHTTPClient sets the client used for every request; proxies, cookies
// and TLS settings belong to it. The crawler follows redirects itself, so it
// uses a shallow copy of c whose CheckRedirect stops at the first response;
// c itself is not modified. Its connections are the caller's: Run does not
// close them, unless WithBlockPrivateNetworks makes a clone of its
// transport. Its limits are its own: the default transport's 1 MiB cap on
// response headers does not apply to it. A Jar of c adds cookies to every
// request as its own rules say, redirects included. The default is a
// client with a transport tuned for many connections to one host, made
// anew by each Run and closed when it returns.
func WithHTTPClient(c *http.Client) Option {
	return optionFunc(func(cfg *config) { cfg.client = c })
}

// WithUserAgent sets the User-Agent header of every request. The default is
// DefaultUserAgent, which names this package and its version. New refuses
// one that is not a valid header value (a control character other than a
// tab, such as a line break): no request could carry it.
func WithUserAgent(ua string) Option {
	return optionFunc(func(c *config) { c.userAgent = ua })
}

// WithMaxBodySize caps the bytes read from one response body, after any
// decompression. A response whose Content-Length is larger is refused before
// its body is read (the Result's Size is then 0), and a body that turns out
// larger stops at n+1 bytes (the Result's Size); either way the Result's Err
// wraps ErrBodyTooLarge. That is for the bodies the crawl reads for links:
// the pages of the types the default extractor reads (HTML, XHTML, SVG,
// XML, RSS and Atom feeds, CSS, and scripts with WithSpeculative), or any page with a custom
// extractor. A body nobody parses (a linked PDF, image or archive), a
// requisite, a reference or a checked link is read up to n bytes and cut
// there, with Result.Truncated set, and is no failure. A body in gzip or deflate is decoded as it is read,
// by the transport or, when a request hook set Accept-Encoding or the server
// sent a coding unasked, by the crawler, so a decompression bomb stops at
// the cap too. A body in a coding the standard library cannot decode (br,
// zstd) is left encoded and not parsed (see Page.Body), Content-Encoding
// stays in Page.Header, and the cap counts its bytes as sent. The default
// is 10 MiB; n must be positive.
func WithMaxBodySize(n int64) Option {
	return optionFunc(func(c *config) { c.maxBodySize = n })
}

// WithSkipUnparsed makes the crawl read only the status and headers of a
// page or requisite whose body nobody parses (see WithMaxBodySize): its
// body is not read, so Result.Size is 0 and Page.Body empty, and a link
// checker learns that a linked 2 GB file is there without fetching it.
// The page hook still sees the response. The default is false: every body
// is read, up to WithMaxBodySize.
func WithSkipUnparsed(on bool) Option {
	return optionFunc(func(c *config) { c.skipUnparsed = on })
}

// WithRequestTimeout bounds each attempt, from sending the request to the
// last byte of the body; an attempt that times out is retried like a
// network error. The default is 30s; d must be positive.
func WithRequestTimeout(d time.Duration) Option {
	return optionFunc(func(c *config) { c.requestTimeout = d })
}

// WithLogger sets where the crawler logs: each fetch at debug level, retries
// at info, failures at warn. The default (and nil) discards everything.
func WithLogger(l *slog.Logger) Option {
	return optionFunc(func(c *config) { c.logger = l })
}

// WithRequestHook sets a function called before every request the crawler
// sends, each retry and each robots.txt included, to add headers or
// cookies. If it returns an error (or panics), the URL is not fetched and its
// Result's Err wraps that error. It may be called from several goroutines at
// once. The option may be given many times: the hooks run in the order
// given, and the first error ends the call. The default is none.
//
// Credentials stay with their host: for a URL reached by a redirect chain
// that went to another host name (ports aside; a subdomain is another
// host) or from https to http, the Authorization, Cookie and
// Proxy-Authorization headers the hook sets are removed before the
// request is sent, and stay removed if the chain comes back. A request
// hook that sets Accept-Encoding gets the bodies in that coding; see
// WithMaxBodySize for which are decoded.
func WithRequestHook(f func(*http.Request) error) Option {
	return optionFunc(func(c *config) {
		if prev := c.requestHook; prev != nil && f != nil {
			c.requestHook = func(r *http.Request) error {
				if err := prev(r); err != nil {
					return err
				}
				return f(r)
			}
		} else if f != nil {
			c.requestHook = f
		}
	})
}

// WithPageHook sets a function called for every response that is not a
// redirect, whatever its status or content type, after retries are over,
// but one whose body is over WithMaxBodySize (its Result's Err wraps
// ErrBodyTooLarge: the page was not read whole, and no Page is made). It
// comes after the default extractor (or a WithTypedLinkExtractor) found
// the page's links and the crawler weighed them, so that Page.Links says
// what became of each (Link.Fate), and before a custom WithLinkExtractor
// is called. p.Body is valid only during the
// call: the crawler reuses the buffer, so a hook that keeps the body copies
// it. If the hook panics, the panic is recovered into the URL's Result.Err
// and the page's links are not followed. It may be called from several
// goroutines at once. The option may be given many times: the hooks run in
// the order given, each of them whatever another did (a panic in one is
// the Result's Err, the first if several panic). The default is none.
func WithPageHook(f func(p *Page)) Option {
	return optionFunc(func(c *config) {
		if f != nil {
			c.pageHooks = append(c.pageHooks, f)
		}
	})
}

// WithResultHook sets a function called exactly once for every URL taken
// from the queue, whatever the outcome, when the crawler is done with it;
// but not for a URL whose fetch (or render, or custom link extraction) the
// end of the Run cut short, which goes back unfinished, counted in
// Stats.Todo, for a later Run to fetch; nor one whose lease was lost (see
// WithLeaseTerm), whose new holder delivers its Result.
// It may be called from several goroutines at once. A panic in it is
// recovered and logged. The option may be given many times: the hooks run
// in the order given, each of them whatever another did (a panic in one
// does not keep the next from its call). The default is none.
func WithResultHook(f func(Result)) Option {
	return optionFunc(func(c *config) {
		if f != nil {
			c.resultHooks = append(c.resultHooks, f)
		}
	})
}

// WithHostWorkers sets how many requests may be in flight at once to one
// host (scheme, host and port), robots.txt requests included. It composes
// with WithWorkers: a worker never waits for a busy host while URLs of other
// hosts are ready (with WithRenderer, it may wait for the browser's
// requests to its URL's host, which count too). The default is 8; n must
// be at least 1.
func WithHostWorkers(n int) Option {
	return optionFunc(func(c *config) { c.hostWorkers = n })
}

// WithHostDelay sets the pause between the starts of two requests to one
// host. Each pause is drawn uniformly from [d/2, 3d/2], so it is d on
// average and never under d/2, as Scrapy's randomised delay. A robots.txt
// Crawl-delay larger than d replaces it for its host, capped at
// MaxCrawlDelay (30s), and is a floor: each pause of that host is then
// drawn from [c/2, 3c/2] but never under c, the Crawl-delay, so that the
// site gets the spacing it asked for (a Crawl-delay of 100 is 30 s, and
// pauses of 30 to 45 s). A URL waiting for its host's delay never holds a
// worker (with WithRenderer, a worker may wait the delay after the
// browser's last request to its URL's host). The default is 0, no delay;
// d must not be negative.
func WithHostDelay(d time.Duration) Option {
	return optionFunc(func(c *config) { c.hostDelay = d })
}

// WithRobots sets whether robots.txt is obeyed, as RFC 9309 specifies. When
// on (the default), /robots.txt is fetched before any other URL of a host,
// once per host per Run and again once its rules are a day old
// (WithRobotsMaxAge): a Run that resumes a crawl, on a MemoryFrontier
// reused or a boltfrontier, fetches it anew; a crawl shared through
// redisfrontier fetches it once for all its processes, and again once a
// day. A URL it disallows for the User-Agent is not fetched: its Result's Err
// wraps ErrDisallowed. A robots.txt that answers 4xx allows everything; one
// that fails with a 5xx, a 429 or a network error after WithMaxTries
// attempts disallows the whole host: its URLs' Results have a
// RobotsUnavailableError. Unless WithRobotsDirectives says otherwise, links
// marked rel="nofollow", and every link of a page whose <meta
// name="robots"> says nofollow, are not followed. robots.txt requests are
// not Results and do not count in Stats or budgets, but they do count
// against WithHostWorkers and WithHostDelay, a redirect of one to the same
// host included (a hop to another host, at most 5 once per host and Run,
// is made at once, outside that host's limits, whose next request then
// waits its delay after it), and they go through the request hook.
func WithRobots(on bool) Option {
	return optionFunc(func(c *config) { c.robots = on })
}

// DefaultRobotsMaxAge is how long a host's robots.txt rules are kept by
// default: RFC 9309 (section 2.4) has crawlers use a cached robots.txt
// for no more than 24 hours.
const DefaultRobotsMaxAge = 24 * time.Hour

// WithRobotsMaxAge sets how long a host's robots.txt rules are kept
// (Policy.RobotsMaxAge): once they are d old (counted from the first URL
// that went by them, so that a host whose delay is longer than d still
// gets a URL for each fetch), the host's robots.txt is fetched again
// before its next URL, and the host's URLs wait for it as
// for a new host; one found unavailable then disallows the host, as it
// would have at first (RFC 9309, section 2.3.1.4). The default is
// DefaultRobotsMaxAge; 0 keeps the rules for the whole Run (for a crawl
// shared through redisfrontier, for the whole crawl); d must not be
// negative.
func WithRobotsMaxAge(d time.Duration) Option {
	return optionFunc(func(c *config) { c.robotsMaxAge = d })
}

// WithRequisites sets whether each page's requisites are fetched, as
// wget's -p does: what a browser needs to render it (images, scripts,
// stylesheets and what they import, fonts, media, embedded objects; see
// Requisite). Each is fetched once, on any host (robots.txt, politeness,
// the exclude patterns and filters apply; scope does not), at its page's
// depth (they do not count toward WithMaxDepth), as a ResourceRequest: it
// gets a Result, and its links are not followed, but for a stylesheet's
// own requisites (url(), @import), which are fetched too. Where a
// requisite redirects is fetched as one, on any host too (a reference, the
// other ResourceRequest, then also leaves scope when it redirects). The
// default is off: no requisite is fetched.
func WithRequisites(on bool) Option {
	return optionFunc(func(c *config) { c.requisites = on })
}

// WithReferences sets whether the references of each page in scope are
// fetched (see Reference: pings, POST forms' actions, the DOCTYPE's
// system identifier, ...), for a site map or a security scan, each once,
// at its page's depth, without following its links. The default is off.
func WithReferences(on bool) Option {
	return optionFunc(func(c *config) { c.references = on })
}

// WithCheckExternal sets whether the navigation links (and sitemap
// entries) the crawl does not follow, because they are on another host or
// out of scope (a redirect that leaves scope included), are checked:
// requisites and references are not (WithRequisites fetches the
// requisites of any host; a reference on another host is neither fetched
// nor checked). Each is fetched once, politely
// (robots.txt, per-host limits and delays apply, and the exclude patterns
// and filters), with HEAD, or with GET and its body discarded past
// WithMaxBodySize where the server refuses HEAD (405, 501), to learn its
// status without following its links: a link checker's need. Each gets a
// Result (Result.Broken says whether it is broken; Result.Check that it
// was only checked) of a CheckRequest; the
// out-of-scope links of a page at WithMaxDepth are checked too (see
// WithMaxDepth). The default is off.
func WithCheckExternal(on bool) Option {
	return optionFunc(func(c *config) { c.checkExternal = on })
}

// WithSpeculative sets whether URLs are also guessed where no markup names
// them, as Heritrix's ExtractorJS does: in the string literals of inline
// scripts and of the JavaScript fetched (pages, and requisites with
// WithRequisites), in the text of pages, in the values of attributes that
// are not URL attributes (data-*, onclick, value, a meta's content, ...),
// and, for the roots' hosts, in the Allow and Disallow paths of
// robots.txt. A string counts if it is an absolute http(s) URL, a path
// ("/api/x"), a relative path starting "./" or "../", or ends in a known
// file extension ("logo.png"); its role follows from the extension (see
// Link.Speculative). Guessed links are marked Speculative in Page.Links,
// come after the page's other links, at most a few thousand a page, and
// are followed as the others are, by role; from a script fetched as a
// requisite, only its requisites. Many guesses are not URLs: expect 404s.
// A "./" or "../" path is also tried from the site's root, and on a page
// with a <base href>, a path is also tried below the base's path. Paths of
// robots.txt are queued only if in scope, as pages one deeper than the
// roots: when robots.txt is obeyed, only those it allows; when it is not
// (WithRobots(false)), it is fetched as a sitemap request (a Result) and
// all its paths are queued, disallowed ones included. The default is off:
// nothing is guessed, at no cost.
func WithSpeculative(on bool) Option {
	return optionFunc(func(c *config) { c.speculative = on })
}

// WithRobotsDirectives sets whether a page's own robots directives are
// obeyed: links marked rel="nofollow" are not followed, nor any link or
// reference of a page whose <meta name="robots"> or X-Robots-Tag says
// "nofollow" or "none" (whatever extractor found them; its requisites,
// with WithRequisites, are fetched all the same, as a browser fetches
// them to show the page), and Page.NoIndex and
// Page.NoFollow report them. It is a switch of its own, apart from
// robots.txt, so that a link checker can obey robots.txt and still check
// the links of a nofollow page. The default is to obey them when
// robots.txt is obeyed (WithRobots), and not otherwise.
func WithRobotsDirectives(on bool) Option {
	return optionFunc(func(c *config) { c.directives, c.directivesSet = on, true })
}

// WithSitemaps sets whether sitemaps are read. When on, each root host's
// /sitemap.xml and the Sitemap lines of its robots.txt are fetched at
// depth 0 (each is a Result: a host whose robots.txt is unavailable has
// its /sitemap.xml fail with ErrRobotsUnavailable, as its other URLs do),
// gzip sitemaps are decompressed, and the in-scope URLs a sitemap lists
// are queued at one more than its depth (the others are checked under
// WithCheckExternal, as a page's links are). A
// Sitemap line is a full URL, as sitemaps.org has it (a relative one is
// left out), and one out of the crawl's scope (another host: sitemaps.org's
// cross-submission) is left out too, as the exclude patterns and filters
// may leave one out. A sitemap is the sitemaps.org XML (a urlset or a
// sitemap index) or text form: an RSS or Atom feed named as one fails (a
// feed met as a page's link is read for its links as a page is).
// The sitemaps a sitemap index lists are read too, at one more than the
// index's depth, so WithMaxDepth bounds them; an index listed by an index
// (which sitemaps.org does not allow) has its entries left unread. A
// sitemap file is read up to 50,000 URLs and 50 MB (MaxSitemapURLs,
// MaxSitemapBytes, the limits of sitemaps.org, whatever WithMaxBodySize
// says); of a larger one, the URLs found up to the limit are queued and its
// Result's Err wraps ErrSitemapTooLarge; a file that is not a sitemap, or
// has an XML token over 256 KiB (a huge comment), fails with the URLs
// found before it queued; an entry that is no absolute URL (a relative
// <loc>, or text line) fails it too, and the other entries, before and
// after it, are queued. With WithRobots(false), the root hosts'
// robots.txt is fetched as a sitemap request (a Result of its own) for its
// Sitemap lines. A /sitemap.xml (or robots.txt) the crawler tries on its
// own has no Referrer, and its Result is never Broken: no page named it
// (Result.Probe reports it).
// A sitemap whose URL the crawl met first as a link of a page is fetched
// as that link, once, and not read as a sitemap. The default is off.
func WithSitemaps(on bool) Option {
	return optionFunc(func(c *config) { c.sitemaps = on })
}

// WithMaxDepth limits how far links are followed: roots are depth 0, the
// links of a depth-n page are depth n+1, and links past depth n are not
// queued, but for those WithCheckExternal checks: an out-of-scope link of
// a depth-n page is checked all the same (its Result at depth n+1), as a
// check follows nothing. A redirect keeps the depth of its source. The
// default is 0, no limit; n must not be negative.
func WithMaxDepth(n int) Option {
	return optionFunc(func(c *config) { c.maxDepth = n })
}

// WithMaxPages limits how many URLs a Run requests, of every kind: pages,
// sitemaps, requisites, references and external checks (retries of one URL
// count once; robots.txt does not count, nor a URL robots.txt disallows,
// which is not requested). When the budget is spent, the URLs in flight
// finish and those waiting to be retried are retried, Run returns a nil
// error, Stats.Budget says "max_pages" and the URLs still queued are
// counted in Stats.Todo, without Results; a crawl that simply had no more
// than n pages was not ended by the budget, and Stats.Budget is empty, as
// it is for a Run whose ctx was cancelled. The frontier keeps the count: with one that
// keeps its state across Runs (WithFrontier), the budget is of the whole
// crawl. The default is 0, no limit; n must not be negative.
func WithMaxPages(n int) Option {
	return optionFunc(func(c *config) { c.maxPages = n })
}

// WithMaxDuration limits the wall time of a Run. At the deadline the
// requests in flight are cancelled and their URLs go back to the frontier
// unfinished, without Results, as do URLs waiting to be retried; Run
// returns a nil error, Stats.Budget says "max_duration" and the URLs left
// are counted in Stats.Todo. The default is 0, no limit; d must not be
// negative.
func WithMaxDuration(d time.Duration) Option {
	return optionFunc(func(c *config) { c.maxDuration = d })
}

// WithProgress sets a function called every interval while a Run goes on,
// with a snapshot of its counters and of its frontier, for a progress
// display. The calls come from one goroutine of the Run, one at a time, and
// end before Run returns; the last snapshot may be up to one interval old,
// so use the Stats that Run returns for the final figures. The default is
// none; with f set, every must be positive.
func WithProgress(every time.Duration, f func(Progress)) Option {
	return optionFunc(func(c *config) { c.progressEvery, c.progress = every, f })
}

// WithBlockPrivateNetworks sets whether the crawler refuses to connect to
// addresses outside the public internet. Turn it on in a program whose
// roots come from untrusted input, so that a user cannot point the crawler
// at the program's own network (server-side request forgery). When on, a
// connection is refused if its address is loopback, private (RFC 1918),
// link-local (169.254.0.0/16, where clouds serve instance metadata, and
// fe80::/10), shared CGNAT space (100.64.0.0/10), unique-local IPv6
// (fc00::/7), unspecified, multicast, broadcast or reserved, or in another
// block that the IANA special-purpose registries mark not globally
// reachable (documentation, benchmarking, 192.0.0.0/24); an IPv4 address
// inside IPv6 (::ffff:a.b.c.d, NAT64 64:ff9b::/96, 6to4 2002::/16) is
// judged as that IPv4 address. The URL is not fetched and not retried: its
// Result's Err wraps ErrBlockedAddress and names the address. A URL whose
// host's robots.txt was so blocked is not fetched either: its Err is the
// host's RobotsUnavailableError, which wraps ErrBlockedAddress, and its
// FailKind is "blocked".
//
// The check runs when a connection is dialled, on the address the host
// name resolved to, so it holds for every URL, redirect hop and robots.txt
// request, for a name that resolves, or rebinds between two requests, to a
// private address, and for numeric host spellings such as "2130706433",
// "0x7f.1", "127.1" and "[::ffff:127.0.0.1]"; "localhost" and names under
// ".localhost" are refused without a lookup.
//
// With WithHTTPClient, the client's Transport must be an *http.Transport,
// or nil for http.DefaultTransport: New fails otherwise, since the guard
// cannot reach the dialer of another RoundTripper. Each Run then uses a
// clone of that transport, whose connections it closes when it returns. A
// transport without a dialer gets one that checks each address before it
// connects. A transport's own DialContext or DialTLSContext
// (http.DefaultTransport has one) is kept, and the connection it makes is
// checked before any byte of a request is sent on it: the TCP handshake,
// and a DialTLSContext's TLS handshake, have reached the address by then.
// A connection whose remote address is not an IP address is refused. With
// a proxy, the transport connects to the proxy, not to the sites: the
// guard checks the proxy's address only, so a proxy on a private network
// is refused, and keeping the crawl off private sites is then the proxy's
// job.
//
// The default is off, so that tests can crawl servers on loopback.
func WithBlockPrivateNetworks(on bool) Option {
	return optionFunc(func(c *config) { c.blockPrivate = on })
}

// The trap limits below keep a crawl out of the endless URL spaces of
// hostile or broken sites: calendars, session IDs in paths, relative links
// that grow a path on every page. Each applies to the links of a page and
// to redirect targets, never to roots, which are always fetched. A link
// refused by one is not queued and gets no Result, like a link out of
// scope, and Stats.Refused counts it under the limit's name, so that a
// program can see that a limit bit. The exclude patterns and filters run
// before the limits on one URL (length, segment repeats): what they drop is
// not counted as refused.

// WithMaxURLLength sets the longest URL, in bytes of its normalised form,
// that is followed. The default is DefaultMaxURLLength, 2083; 0 means no
// limit; n must not be negative. Refusals count as "url_length".
func WithMaxURLLength(n int) Option {
	return optionFunc(func(c *config) { c.maxURLLength = n })
}

// WithMaxLinksPerPage sets how many links of one page are considered: the
// first n distinct links the crawl would take up, in document order, are
// (whether or not the exclude patterns and filters then drop them). A link
// is taken up if it is in scope, or fetched whatever its host (a requisite
// under WithRequisites, a reference under WithReferences), or checked
// (out of scope, under WithCheckExternal); a link it leaves alone (out of
// scope, with no check) does not count. The page's links are read in
// order, duplicates and links left alone with them, until one would be
// the (n+1)th distinct link taken up: that link and every one after it
// are left unread. Stats.Refused counts those as "links_per_page", one
// for each link left, as the page holds them (duplicates and links out of
// scope among them included; those read before it have their own fates). The limit applies to the
// links of pages, whatever extractor found them; a sitemap has its own
// limit of MaxSitemapURLs. Past 4n links, the default extractor leaves
// the rest of a page unresolved, and they count as refused too, so that a
// page of a million links costs little. The default is
// DefaultMaxLinksPerPage, 5000; 0 means no limit; n must not be negative.
func WithMaxLinksPerPage(n int) Option {
	return optionFunc(func(c *config) { c.maxLinksPerPage = n })
}

// WithMaxSegmentRepeats sets how many times one segment may occur in the
// path of a URL that is followed, anywhere in the path: with the default,
// DefaultMaxSegmentRepeats, 2, a URL whose path holds one segment 3 or more
// times ("/a/b/a/c/a/") is refused, the rule of Nutch's default URL filter.
// It ends the trap of a relative link on a server that answers any path,
// where "/a/" links to "/a/a/" and that to "/a/a/a/". Segments are compared
// as escaped in the URL, case included; the query does not count. 1 refuses
// any repeated segment; 0 means no limit; n must not be negative. Refusals
// count as "segment_repeats".
func WithMaxSegmentRepeats(n int) Option {
	return optionFunc(func(c *config) { c.maxSegmentRepeats = n })
}

// WithFrontier sets the Frontier that holds the crawl's URLs: the seen set,
// the queue and the per-host schedule. Every Run of the Crawler uses f, so
// that a Run may go on with what an earlier one left (a MemoryFrontier
// after a cancelled Run; a persistent frontier after a crash), and Run
// does not close it: f is the caller's. The default (and nil) is a new
// MemoryFrontier for each Run.
func WithFrontier(f Frontier) Option {
	return optionFunc(func(c *config) { c.frontier = f })
}

// DefaultLeaseTerm is the default of WithLeaseTerm.
const DefaultLeaseTerm = time.Minute

// MinLeaseTerm is the shortest lease term WithLeaseTerm accepts: the
// crawler renews its leases every third of the term, and a shorter term
// would spend its time renewing them.
const MinLeaseTerm = 30 * time.Millisecond

// WithLeaseTerm sets Policy.LeaseTerm, how long the frontier keeps a URL
// leased to a worker that does not renew the lease: a worker renews the
// leases it holds every d/3 while it works on them, so d bounds how long
// the URLs of a process that died (kill -9, a machine lost) stay out
// before another worker, of this process or another sharing the frontier,
// takes them again. A worker whose lease is taken back (it could not renew
// it in time: its process was stopped, or the frontier was unreachable)
// abandons the URL, its fetch cut short, and delivers no Result for it:
// the new holder does. The default is DefaultLeaseTerm, one minute; 0
// means leases never expire (right for a frontier no other process
// shares); d must be 0 or at least MinLeaseTerm.
func WithLeaseTerm(d time.Duration) Option {
	return optionFunc(func(c *config) { c.leaseTerm = d })
}

// urlNormalisation names the version of how URLs are normalised (the URL
// Standard, RFC 3986's equivalences, the canonical host); change it with
// any change that makes one URL normalise to another string.
const urlNormalisation = "whatwg-2"

// scopeID names the options that decide which URLs a crawl admits, for a
// durable Frontier to refuse a crawl resumed under others. Filters are
// code and cannot be named: they are the caller's to keep.
func (c *config) scopeID() string {
	// urls names how URLs are normalised: the seen set of a state file
	// made under another normalisation would not dedupe this one's.
	return fmt.Sprintf("urls=%s lenient=%t exclude=%q max_depth=%d sitemaps=%t robots=%t", urlNormalisation, c.lenient, c.excludeSrc, c.maxDepth, c.sitemaps, c.robots)
}

// WithTransportWrapper sets a function that wraps the transport of each
// Run's client, to see every exchange as it is sent and received: the
// crawler's own transport (or the one of WithHTTPClient's client), after
// WithBlockPrivateNetworks has guarded its dialer, is given to wrap, and
// every request, robots.txt and sitemaps included, goes through what wrap
// returns. Its main use is to archive a crawl as transferred:
//
//	w, err := warc.NewWriter(warc.Options{Dir: "archive"})
//	...
//	c, err := crawl.New(crawl.WithTransportWrapper(w.Transport))
//
// wrap is called once per Run. The Run closes the idle connections of
// what it returns (through a CloseIdleConnections method, if it has one)
// when it ends. The default is none.
func WithTransportWrapper(wrap func(http.RoundTripper) http.RoundTripper) Option {
	return optionFunc(func(c *config) { c.wrapTransport = wrap })
}
