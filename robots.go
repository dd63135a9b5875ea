package crawl

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/asyncrawl/crawl/internal/extract"
	"github.com/asyncrawl/crawl/internal/robots"
	"github.com/asyncrawl/crawl/internal/sched"
	"github.com/asyncrawl/crawl/internal/urlstd"
)

// Fetching: how a Run gets a host's robots.txt.

// maxRobotsRedirects is the limit of RFC 9309, section 2.3.1 on the
// redirects followed to a robots.txt (robots.MaxSize is that on its size).
const maxRobotsRedirects = 5

// robotsStatusError is a robots.txt answer that makes the host unreachable
// (RFC 9309, section 2.3.1.4): a 5xx, or a 429.
type robotsStatusError struct {
	url    string
	status int
	header http.Header
}

func (e *robotsStatusError) Error() string {
	return fmt.Sprintf("%s: status %d", e.url, e.status)
}

// robots fetches the robots.txt of the leased host and acks the lease
// with what it says, which opens the host, or puts the lease back to be
// fetched again after a pause. After the last try, a host whose
// robots.txt is unreachable is opened with every URL disallowed, wrapping
// the reason. The sitemaps it names are queued with it, for a root host.
func (r *run) robots(ctx context.Context, w *worker, l *Lease, h *held) {
	body, hops, err := r.fetch.robots(ctx, &w.buf, l.URL)
	if r.lost(h) {
		return
	}
	fctx := r.endCtx
	if d := r.cfg.hostDelay; d > 0 {
		// A request a redirect led to counts against its host's delay
		// as any other: the frontier spaced only the first.
		for key, at := range hops {
			if err := r.front.Pause(fctx, key, at.Add(sched.Jitter(d))); err != nil {
				r.frontierError(l.URL, err)
			}
		}
	}
	if err != nil && ctx.Err() != nil {
		// The Run is ending: no verdict on the host, and nothing to log.
		if err := r.endLease(fctx, l.URL, func() error { return r.front.Retry(fctx, l, time.Time{}) }); err != nil {
			r.frontierError(l.URL, err)
		}
		return
	}
	key := HostKey(l.URL)
	var o Outcome
	if err != nil {
		l.Tries++
		var header http.Header
		if se, ok := err.(*robotsStatusError); ok {
			header = se.header
		}
		var ne *netError
		_, status := err.(*robotsStatusError)
		transient := status || errors.As(err, &ne) && !ne.permanent
		wait, retry := r.fetch.retryWait(header, l.Tries), l.Tries < r.cfg.maxTries && transient
		if retry {
			r.cfg.logger.Info("retry", "url", l.URL, "try", l.Tries, "wait", wait, "err", err)
			at := time.Now().Add(wait)
			if err := r.endLease(fctx, l.URL, func() error { return r.front.Retry(fctx, l, at) }); err != nil {
				r.frontierError(l.URL, err)
			}
			return
		}
		r.cfg.logger.Warn("robots.txt unavailable: none of the host's URLs is fetched", "url", l.URL, "tries", l.Tries, "err", err)
		deny := &RobotsUnavailableError{URL: l.URL, Err: err}
		if se, ok := err.(*robotsStatusError); ok {
			deny.Status, deny.Err = se.status, nil
		}
		o.Rules = &HostRules{Denied: deny.Error()}
		r.rules.put(key, &hostRobots{deny: deny, src: o.Rules})
		if r.cfg.sitemaps && r.rootHosts[key] {
			// Its /sitemap.xml is a Result all the same, failing as
			// the host's other URLs do (WithSitemaps).
			o.Links = r.sitemaps(key, nil)
		}
	} else {
		var rules *robots.Rules
		if body != nil {
			rules = robots.Parse(body, r.cfg.userAgent, MaxCrawlDelay)
		}
		o.Rules = &HostRules{Robots: body, Delay: rules.CrawlDelay()}
		r.rules.put(key, &hostRobots{rules: rules, src: o.Rules})
		if r.cfg.sitemaps && r.rootHosts[key] {
			o.Links = r.sitemaps(key, rules.Sitemaps())
		}
		if r.cfg.speculative && r.rootHosts[key] && body != nil {
			o.Links = append(o.Links, r.robotsPaths(key, body, rules)...)
		}
	}
	if err := r.endLease(fctx, l.URL, func() error { _, err := r.front.Ack(fctx, l, o); return err }); err != nil {
		r.frontierError(l.URL, err)
	}
}

// maxRobotsPaths is the most pages robotsPaths queues for one host.
const maxRobotsPaths = 1000

// robotsPaths returns, for WithSpeculative, the pages a root host's
// robots.txt names in the Allow and Disallow lines of all its groups: each
// path without a "*" (a final "$" dropped), resolved against the host and
// normalised, if in scope, allowed by rules (a path the crawler would be
// refused is not worth a request), and not excluded or filtered out, as a
// page at depth 1, at most maxRobotsPaths. A filter that panics is logged,
// and its path left out.
func (r *run) robotsPaths(key string, body []byte, rules *robots.Rules) []Request {
	var reqs []Request
	seen := make(map[string]bool)
	for u := range robotsTxtPaths(key, body) {
		if len(reqs) >= maxRobotsPaths {
			break
		}
		if !r.scope.contains(u) {
			continue
		}
		wire, us := urlstd.Forms(u)
		if seen[us] || HostKey(us) != key || !rules.Allowed(wire[len(key):]) {
			continue
		}
		seen[us] = true
		ok, err := r.allows(us, u)
		if err != nil {
			r.cfg.logger.Error("robots.txt path", "url", us, "err", err)
		}
		if !ok || err != nil {
			continue
		}
		reqs = append(reqs, Request{URL: us, Wire: wireField(wire, us), Kind: PageRequest, Depth: 1, Redirects: r.cfg.maxRedirects, Referrer: key + "/robots.txt"})
	}
	return reqs
}

// robotsTxtPaths yields the URLs of the paths in the Allow and Disallow
// lines of a robots.txt body, of all its groups, on the host key: each
// path without a "*" (a final "$" dropped; see robots.Paths), resolved
// against the host and normalised. The same URL may come more than once.
func robotsTxtPaths(key string, body []byte) iter.Seq[*url.URL] {
	return func(yield func(*url.URL) bool) {
		for p := range robots.Paths(body) {
			u, err := urlstd.Resolve(nil, key+p)
			if err != nil {
				continue
			}
			if !yield(u) {
				return
			}
		}
	}
}

// ErrRobotsUnavailable is matched, with errors.Is, by the error of every URL
// of a host whose robots.txt could not be fetched; see
// RobotsUnavailableError.
var ErrRobotsUnavailable = errors.New("robots.txt unavailable")

// RobotsUnavailableError is the error of every URL of a host whose
// robots.txt could not be fetched after WithMaxTries attempts (a 5xx or a
// 429), or at all (no such host, connection refused, a certificate that
// does not verify, a timeout). RFC 9309 then has the crawler fetch nothing
// of the host: the URL was not fetched. It matches both ErrRobotsUnavailable
// and ErrDisallowed with errors.Is, so that code that only wants to skip
// disallowed URLs does, and a link checker can tell a site that is down
// from one that says no. Its FailKind is "robots_unavailable", or
// "blocked" when the robots.txt's address was blocked
// (WithBlockPrivateNetworks), whose ErrBlockedAddress it then wraps.
type RobotsUnavailableError struct {
	URL    string // the robots.txt
	Status int    // its HTTP status (a 5xx, 429); 0 when no response came
	Err    error  // the failure when no response came
}

func (e *RobotsUnavailableError) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("%sstatus %d", robotsUnavailable(e.URL), e.Status)
	}
	return fmt.Sprintf("%s%v", robotsUnavailable(e.URL), e.Err)
}

// robotsUnavailable is the start of the text of a RobotsUnavailableError
// of the robots.txt at url, which deniedError reads back.
func robotsUnavailable(url string) string { return "robots.txt unavailable: " + url + ": " }

// Unwrap returns the failure, for errors.Is and errors.As to look into.
func (e *RobotsUnavailableError) Unwrap() error { return e.Err }

// deniedError remakes the error whose text a HostRules.Denied of the
// robots.txt at url holds: its status again, if it had one, and else the
// failure as text, without the prefix its Error adds once more.
func deniedError(url, denied string) *RobotsUnavailableError {
	e := &RobotsUnavailableError{URL: url}
	rest, ok := strings.CutPrefix(denied, robotsUnavailable(url))
	if !ok {
		rest = denied // another crawler's, or an older version's
	}
	if s, ok := strings.CutPrefix(rest, "status "); ok {
		if n, err := strconv.Atoi(s); err == nil && n > 0 {
			e.Status = n
			return e
		}
	}
	e.Err = errors.New(rest)
	return e
}

// Is reports whether target is ErrRobotsUnavailable or ErrDisallowed.
func (e *RobotsUnavailableError) Is(target error) bool {
	return target == ErrRobotsUnavailable || target == ErrDisallowed
}

// robotsCache holds the robots.txt rules of the hosts of a Run, parsed
// once per host from what the frontier's leases carry, so that every URL
// is checked by the worker that took it, outside any lock. It is safe for
// concurrent use.
type robotsCache struct {
	m sync.Map // HostKey -> *hostRobots
}

// hostRobots is what a host's robots.txt says: its rules, or the reason
// it could not be fetched, which disallows every URL; src is the
// HostRules they were read from.
type hostRobots struct {
	rules *robots.Rules
	deny  error
	src   *HostRules
}

func (c *robotsCache) put(key string, h *hostRobots) { c.m.Store(key, h) }

// check returns an error wrapping ErrDisallowed when the robots.txt rules
// of l's host do not allow l's URL to be fetched.
func (c *robotsCache) check(r *run, l *Lease) error {
	if !r.cfg.robots || l.Rules == nil {
		return nil
	}
	key := HostKey(l.URL)
	var h *hostRobots
	if v, ok := c.m.Load(key); ok {
		h = v.(*hostRobots)
	}
	if h != nil && h.src != l.Rules && sameRules(h.src, l.Rules) {
		// Another copy of the same: kept, so that the next of it is
		// told at once.
		h = &hostRobots{rules: h.rules, deny: h.deny, src: l.Rules}
		c.m.Store(key, h)
	}
	if h == nil || h.src != l.Rules {
		// Opened by an earlier Run or another process, or fetched anew
		// since (WithRobotsMaxAge): parsed here once (or, by a race, a
		// few times: the result is the same).
		h = &hostRobots{src: l.Rules}
		switch {
		case l.Rules.Denied != "":
			h.deny = deniedError(key+"/robots.txt", l.Rules.Denied)
		case l.Rules.Robots != nil:
			h.rules = robots.Parse(l.Rules.Robots, r.cfg.userAgent, MaxCrawlDelay)
		}
		c.m.Store(key, h)
	}
	if h.deny != nil {
		return h.deny
	}
	// The path as sent; a Wire of another host (never one the crawler
	// made) leaves the key's.
	u := wireURL(&l.Request)
	if !strings.HasPrefix(u, key) {
		u = l.URL
	}
	if !h.rules.Allowed(u[len(key):]) {
		return ErrDisallowed
	}
	return nil
}

// sameRules reports whether a and b say the same: a frontier may hand out
// one host's rules as many copies (a shared one, a copy per process).
func sameRules(a, b *HostRules) bool {
	return a != nil && b != nil && a.Denied == b.Denied && a.Delay == b.Delay && bytes.Equal(a.Robots, b.Robots) && (a.Robots == nil) == (b.Robots == nil)
}

// robots gets the robots.txt at u, following up to five redirects, and
// returns at most its first 500 KiB, read into *buf and copied. It returns
// a nil body (everything allowed) for a 4xx other than 429, for a body in
// a coding it cannot decode, or when the redirects lead nowhere, and an
// error when the host is unreachable. hops says, by HostKey, when the last
// request that a redirect led to started on each host it went to: the
// frontier spaced the first request only.
func (f *fetcher) robots(ctx context.Context, buf *[]byte, u string) (body []byte, hops map[string]time.Time, err error) {
	defer func() {
		if v := recover(); v != nil {
			body, err = nil, fmt.Errorf("%s: %w: %v", u, ErrPanic, v)
		}
	}()
	for i := range maxRobotsRedirects + 1 {
		if i > 0 {
			if hops == nil {
				hops = make(map[string]time.Time, 1)
			}
			hops[HostKey(u)] = time.Now()
		}
		// One octet past the limit: a line that ends right at it is
		// whole, and kept.
		resp, err := f.attempt(ctx, buf, task{url: u, kind: kindRobots}, robots.MaxSize+1)
		switch {
		case err != nil:
			return nil, hops, err
		case isRedirect(resp.status):
			next, err := resp.location()
			if err != nil || !urlstd.IsHTTP(next) {
				return nil, hops, nil
			}
			u, _ = urlstd.Forms(next)
			if f.hostDelay > 0 {
				// A redirect is one more request to the host: it waits
				// its turn as any other would.
				if err := sleepUntil(ctx, time.Now().Add(sched.Jitter(f.hostDelay))); err != nil {
					return nil, hops, err
				}
			}
		case resp.status >= 200 && resp.status <= 299 && resp.encoded:
			// In a coding the crawler cannot decode: no rules to read.
			return nil, hops, nil
		case resp.status >= 200 && resp.status <= 299:
			body := resp.body
			if resp.truncated {
				// Cut at robots.MaxSize (and the octet after it): its
				// last line may be a part of a rule ("Allow: /" of
				// "Allow: /public-only"), which would say what the
				// file does not. It is left out, unless its line end
				// is that next octet.
				body = body[:bytes.LastIndexAny(body, "\r\n")+1]
			}
			return bytes.Clone(body), hops, nil
		case resp.status == http.StatusTooManyRequests || resp.status >= 500:
			return nil, hops, &robotsStatusError{url: u, status: resp.status, header: resp.header}
		default:
			return nil, hops, nil
		}
	}
	return nil, hops, nil // RFC 9309: too many redirects, unavailable
}

// headerRobots returns what the X-Robots-Tag headers of a response say to
// the robot named token ("asyncrawl"), read as a robots meta tag's content
// is (extract.RobotsDirectives). A value may name the robot it is for
// ("otherbot: noindex"), and then applies to it alone.
func headerRobots(h http.Header, token string) extract.Meta {
	var m extract.Meta
	for _, v := range h.Values("X-Robots-Tag") {
		if name, rest, ok := strings.Cut(v, ":"); ok && !strings.Contains(name, ",") {
			switch n := strings.ToLower(strings.TrimSpace(name)); n {
			case "unavailable_after", "max-snippet", "max-image-preview", "max-video-preview":
			default:
				if !strings.EqualFold(n, token) {
					continue
				}
				v = rest
			}
		}
		extract.RobotsDirectives([]byte(v), &m)
	}
	return m
}
