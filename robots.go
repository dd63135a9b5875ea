package crawl

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Parsing
//
// robots.txt is parsed as RFC 9309 (the Robots Exclusion Protocol) says,
// for one crawler, into the rules of the groups that apply to it. The
// parser never fails: whatever it cannot read it skips, and it uses every
// line it can read (section 2.3.1.5, parsing errors). Its memory is
// proportional to the body, whose size the caller caps; it keeps every
// rule of the groups that apply (no count limit), because a rule costs a
// prefix comparison per URL and a file of 500 KiB cannot hold more than a
// few tens of thousands of them.

// robots is the parsed robots.txt of one host, as it applies to one user
// agent. It is immutable after parseRobots returns and safe for concurrent
// use. A nil *robots allows everything, has no delay and no sitemaps: it
// stands for a host without a robots.txt.
type robots struct {
	// rules are the allow and disallow rules of the groups that apply,
	// longest pattern first and, between patterns of one length, allow
	// first, so that the first rule that matches a path decides.
	rules []robotsRule
	delay time.Duration
	maps  []string
}

// robotsRule is one allow or disallow line of a group.
type robotsRule struct {
	allow bool
	// pattern is the path pattern normalised by robotsEscape, with its
	// "*" and a final "$"; its length in octets is the rule's priority
	// (RFC 9309, section 2.2.2).
	pattern string
	// parts are the literal parts of pattern between its "*" wildcards,
	// without the final "$"; there is always at least one (maybe empty).
	parts []string
	// anchored is set when pattern ends in "$": the path must end where
	// the pattern does.
	anchored bool
}

// parseRobots parses body, a robots.txt, for the crawler whose User-Agent
// header is userAgent. body may be cut short anywhere (the caller caps its
// size); its last line is read even without a line end.
//
// The groups that apply are those with a user-agent line naming the
// crawler's product token (see productToken), compared case-insensitively
// with the product token of the line's value, so that "User-agent:
// asyncrawl/2.1" names asyncrawl; if there are several, their rules are
// combined (RFC 9309, section 2.2.1). If none does, the groups of
// "User-agent: *" apply, combined; if there are none either, everything
// is allowed. A group is a run of user-agent lines followed by the rules
// after them; blank lines, comments, sitemap lines and unknown lines do
// not end it (the grammar of section 2.2), and rules before the first
// user-agent line belong to no group and are ignored. Allow, disallow and
// crawl-delay lines are the group's members: a user-agent line after one
// of them starts a new group.
func parseRobots(body []byte, userAgent string) *robots {
	token := productToken(userAgent)
	var (
		r robots
		// The rules and delay of the groups that name the crawler and of
		// the "*" groups; named wins if any such group exists, even one
		// with no rules.
		named, star           []robotsRule
		namedDelay, starDelay time.Duration
		anyNamed              bool
		// The group being read: whether it names the crawler or "*",
		// whether any user-agent line has been read yet (rules before
		// one are ignored), and whether the group's user-agent lines are
		// still being read.
		isNamed, isStar, inGroup, inAgents bool
	)
	body = bytes.TrimPrefix(body, []byte("\ufeff"))
	for len(body) > 0 {
		var line []byte
		if i := bytes.IndexAny(body, "\r\n"); i >= 0 {
			// A CR LF pair leaves an empty line between them, which is
			// skipped like any other.
			line, body = body[:i], body[i+1:]
		} else {
			line, body = body, nil
		}
		key, value, ok := robotsLine(line)
		if !ok {
			continue
		}
		switch {
		case bytes.EqualFold(key, []byte("user-agent")):
			if !inAgents {
				isNamed, isStar = false, false
			}
			inGroup, inAgents = true, true
			if robotsStarAgent(value) {
				isStar = true
			} else if t := productToken(string(value)); t != "" && strings.EqualFold(t, token) {
				isNamed, anyNamed = true, true
			}
		case bytes.EqualFold(key, []byte("allow")), bytes.EqualFold(key, []byte("disallow")):
			if !inGroup {
				continue
			}
			inAgents = false
			if !isNamed && !isStar || len(value) == 0 {
				// An empty disallow allows everything, the same as no rule;
				// an empty allow would match every path with the lowest
				// priority, the same as no rule too.
				continue
			}
			rule := newRobotsRule(bytes.EqualFold(key, []byte("allow")), string(value))
			if isNamed {
				named = append(named, rule)
			} else {
				star = append(star, rule)
			}
		case bytes.EqualFold(key, []byte("crawl-delay")):
			if !inGroup {
				continue
			}
			inAgents = false
			d, ok := parseCrawlDelay(value)
			if !ok {
				continue
			}
			if isNamed {
				namedDelay = max(namedDelay, d)
			} else if isStar {
				starDelay = max(starDelay, d)
			}
		case bytes.EqualFold(key, []byte("sitemap")):
			if len(value) > 0 {
				r.maps = append(r.maps, string(value))
			}
		}
	}
	if anyNamed {
		r.rules, r.delay = named, namedDelay
	} else {
		r.rules, r.delay = star, starDelay
	}
	slices.SortStableFunc(r.rules, func(a, b robotsRule) int {
		if c := cmp.Compare(len(b.pattern), len(a.pattern)); c != 0 {
			return c
		}
		// Allow wins a tie: of an allow and a disallow rule that are
		// equivalent, section 2.2.2 says to use the allow; true first.
		switch {
		case a.allow == b.allow:
			return 0
		case a.allow:
			return -1
		default:
			return 1
		}
	})
	return &r
}

// robotsLine splits a line into its key and value, both trimmed of spaces
// and tabs, after removing a comment. ok is false for a line without a
// colon, which includes blank and comment-only lines.
func robotsLine(line []byte) (key, value []byte, ok bool) {
	if i := bytes.IndexByte(line, '#'); i >= 0 {
		line = line[:i]
	}
	key, value, ok = bytes.Cut(line, []byte(":"))
	return bytes.Trim(key, " \t"), bytes.Trim(value, " \t"), ok
}

// robotsStarAgent reports whether a user-agent value is "*", which may be
// followed by a space and anything (as Google's parser reads it).
func robotsStarAgent(value []byte) bool {
	return len(value) > 0 && value[0] == '*' && (len(value) == 1 || value[1] == ' ' || value[1] == '\t')
}

// productToken returns the product token of a User-Agent header, its
// leading run of letters, digits, "_" and "-", so that
// "asyncrawl/0.1.0 (+https://...)" is "asyncrawl". RFC 9309 (section
// 2.2.1) allows only letters, "_" and "-" in a product token; digits are
// accepted too because real crawlers have them ("360Spider").
func productToken(userAgent string) string {
	userAgent = strings.TrimLeft(userAgent, " \t")
	i := 0
	for i < len(userAgent) && isTokenChar(userAgent[i]) {
		i++
	}
	return userAgent[:i]
}

func isTokenChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-'
}

// newRobotsRule makes the rule of an allow or disallow line. A pattern
// that starts with neither "/" nor "*" ("Disallow: private/") gets a
// leading "/", as Google reads it: the path it compares with always has
// one, so the pattern could otherwise never match.
func newRobotsRule(allow bool, value string) robotsRule {
	p := robotsEscape(value)
	if p[0] != '/' && p[0] != '*' {
		p = "/" + p
	}
	rule := robotsRule{allow: allow, pattern: p}
	// Only a final "$" anchors; one elsewhere is a literal "$", which a
	// path may contain.
	if strings.HasSuffix(p, "$") {
		rule.anchored = true
		p = p[:len(p)-1]
	}
	rule.parts = strings.Split(p, "*")
	return rule
}

// parseCrawlDelay parses a Crawl-delay value, a non-negative decimal
// number of seconds ("10", "0.5", ".5"), capped at MaxCrawlDelay. ok is
// false for anything else, including signs, exponents and trailing words,
// which strconv.ParseFloat alone would accept or which may mean another
// unit.
func parseCrawlDelay(value []byte) (d time.Duration, ok bool) {
	digits, dot := 0, 0
	for _, c := range value {
		switch {
		case '0' <= c && c <= '9':
			digits++
		case c == '.':
			dot++
		default:
			return 0, false
		}
	}
	if digits == 0 || dot > 1 {
		return 0, false
	}
	// Only a value too large for a float64 fails here, and it is +Inf.
	s, _ := strconv.ParseFloat(string(value), 64)
	// Compare in seconds before converting: a huge value would overflow
	// a Duration.
	if s >= MaxCrawlDelay.Seconds() {
		return MaxCrawlDelay, true
	}
	return time.Duration(s * float64(time.Second)), true
}

// robotsEscape normalises the percent-encoding of a path pattern or of a
// path, so that two spellings of one path compare equal (RFC 9309, section
// 2.2.2): a percent-encoded unreserved character is decoded ("%7E" is
// "~"); the hex digits of the other escapes are upper-cased; octets that
// may not stand unencoded in a URI (non-ASCII, controls, space and
// `"<>[\]^{|}` and the backquote) are percent-encoded, as url.URL
// encodes them in RequestURI; and a "%" that starts no escape is "%25",
// the escape of what it is. Everything else, including the reserved
// characters, is kept as written, so "/a%2Fb" and "/a/b" stay distinct.
// It returns s itself when nothing changes.
func robotsEscape(s string) string {
	i := 0
	for i < len(s) && !robotsNeedsEscape(s, i) {
		i++
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	const hex = "0123456789ABCDEF"
	for ; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			writeNormalEscape(&b, s[i+1], s[i+2])
			i += 2
		case c == '%' || robotsUnsafe(c):
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&0xF])
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// robotsNeedsEscape reports whether robotsEscape would change s at i.
func robotsNeedsEscape(s string, i int) bool {
	c := s[i]
	if c != '%' {
		return robotsUnsafe(c)
	}
	if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
		return true
	}
	return isUnreserved(unhex(s[i+1])<<4|unhex(s[i+2])) || s[i+1] != upperHex(s[i+1]) || s[i+2] != upperHex(s[i+2])
}

// robotsUnsafe reports whether c may not stand unencoded in a URI.
func robotsUnsafe(c byte) bool {
	return c <= ' ' || c >= 0x7F || strings.IndexByte("\"<>[\\]^`{|}", c) >= 0
}

// Matching

// allowed reports whether a URL with this path and query (as
// url.URL.RequestURI gives it: escaped, starting with "/", query included)
// may be fetched. The rule with the longest pattern that matches decides;
// allow wins a tie; no matching rule allows (RFC 9309, section 2.2.2).
// "/robots.txt" is always allowed (section 2.2.2).
func (r *robots) allowed(pathQuery string) bool {
	if r == nil || len(r.rules) == 0 {
		return true
	}
	if pathQuery == "" {
		pathQuery = "/"
	}
	path := robotsEscape(pathQuery)
	if path == "/robots.txt" {
		return true
	}
	for i := range r.rules {
		if r.rules[i].matches(path) {
			return r.rules[i].allow
		}
	}
	return true
}

// matches reports whether the rule's pattern matches path, normalised by
// robotsEscape. A pattern matches a path that starts with it, "*"
// standing for any run of octets, or, with a final "$", a path that it
// matches whole. Each literal part after the first is matched at its
// leftmost place after the one before, which finds a match if there is
// one, since a "*" can absorb whatever lies between; the time is that of
// a few strings.Index calls, linear in the path and pattern, however many
// "*" the pattern has.
func (rule *robotsRule) matches(path string) bool {
	parts := rule.parts
	if !strings.HasPrefix(path, parts[0]) {
		return false
	}
	if len(parts) == 1 {
		return !rule.anchored || len(path) == len(parts[0])
	}
	pos := len(parts[0])
	last := len(parts) - 1
	for _, part := range parts[1:last] {
		i := strings.Index(path[pos:], part)
		if i < 0 {
			return false
		}
		pos += i + len(part)
	}
	if rule.anchored {
		// The last part must end the path, after what the others matched.
		return len(path)-pos >= len(parts[last]) && strings.HasSuffix(path, parts[last])
	}
	return strings.Contains(path[pos:], parts[last])
}

// crawlDelay returns the Crawl-delay of the groups that apply, the largest
// if several give one, capped at MaxCrawlDelay; 0 if none gives one.
// Crawl-delay is not in RFC 9309; the value is a non-negative decimal
// number of seconds, and a line with anything else is ignored.
func (r *robots) crawlDelay() time.Duration {
	if r == nil {
		return 0
	}
	return r.delay
}

// sitemaps returns the values of the Sitemap lines of the file, whatever
// group they stand in (they belong to none: RFC 9309, section 2.2.4), in
// file order and as written. The caller may modify the slice.
func (r *robots) sitemaps() []string {
	if r == nil {
		return nil
	}
	return slices.Clone(r.maps)
}

// Fetching: how a Run gets a host's robots.txt.

// Limits of RFC 9309, section 2.3.1: how much of a robots.txt is read, and
// how many redirects are followed to it.
const (
	maxRobotsSize      = 500 << 10
	maxRobotsRedirects = 5
)

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
func (r *run) robots(ctx context.Context, w *worker, l *Lease) {
	fctx := context.WithoutCancel(ctx)
	body, err := r.fetchRobots(ctx, w, l.URL)
	if err != nil && ctx.Err() != nil {
		// The Run is ending: no verdict on the host, and nothing to log.
		if err := r.front.Retry(fctx, l, time.Time{}); err != nil {
			r.cfg.logger.Error("frontier", "url", l.URL, "err", err)
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
			if err := r.front.Retry(fctx, l, time.Now().Add(wait)); err != nil {
				r.cfg.logger.Error("frontier", "url", l.URL, "err", err)
			}
			return
		}
		r.cfg.logger.Warn("robots.txt unreachable, host disallowed", "url", l.URL, "tries", l.Tries, "err", err)
		deny := fmt.Errorf("%w: robots.txt unreachable: %w", ErrDisallowed, err)
		r.rules.put(key, &hostRobots{deny: deny})
		o.Rules = &HostRules{Denied: err.Error()}
	} else {
		var rules *robots
		if body != nil {
			rules = parseRobots(body, r.cfg.userAgent)
		}
		r.rules.put(key, &hostRobots{rules: rules})
		o.Rules = &HostRules{Robots: body, Delay: rules.crawlDelay()}
		if r.cfg.sitemaps && r.rootHosts[key] {
			o.Links = r.sitemaps(key, rules.sitemaps())
		}
	}
	if _, err := r.front.Ack(fctx, l, o); err != nil {
		r.cfg.logger.Error("frontier", "url", l.URL, "err", err)
	}
}

// robotsCache holds the robots.txt rules of the hosts of a Run, parsed
// once per host from what the frontier's leases carry, so that every URL
// is checked by the worker that took it, outside any lock. It is safe for
// concurrent use.
type robotsCache struct {
	m sync.Map // HostKey -> *hostRobots
}

// hostRobots is what a host's robots.txt says: its rules, or the reason
// it could not be fetched, which disallows every URL.
type hostRobots struct {
	rules *robots
	deny  error
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
	} else {
		// Opened by an earlier Run or another process: parsed here
		// once (or, by a race, a few times: the result is the same).
		h = &hostRobots{}
		switch {
		case l.Rules.Denied != "":
			h.deny = fmt.Errorf("%w: robots.txt unreachable: %s", ErrDisallowed, l.Rules.Denied)
		case l.Rules.Robots != nil:
			h.rules = parseRobots(l.Rules.Robots, r.cfg.userAgent)
		}
		c.m.Store(key, h)
	}
	if h.deny != nil {
		return h.deny
	}
	if !h.rules.allowed(l.URL[len(key):]) {
		return ErrDisallowed
	}
	return nil
}

// fetchRobots gets the robots.txt at u, following up to five redirects,
// and returns at most its first 500 KiB. It returns a nil body (everything
// allowed) for a 4xx other than 429, or when the redirects lead nowhere,
// and an error when the host is unreachable.
func (r *run) fetchRobots(ctx context.Context, w *worker, u string) (body []byte, err error) {
	defer func() {
		if v := recover(); v != nil {
			body, err = nil, fmt.Errorf("%s: %w: %v", u, ErrPanic, v)
		}
	}()
	for range maxRobotsRedirects + 1 {
		resp, err := r.fetch.attempt(ctx, &w.buf, task{url: u, kind: kindRobots}, maxRobotsSize)
		switch {
		case err != nil:
			return nil, err
		case isRedirect(resp.status):
			next, err := resp.location()
			if err != nil || !isHTTP(next) {
				return nil, nil
			}
			normalize(next)
			u = next.String()
		case resp.status >= 200 && resp.status <= 299 && resp.encoded:
			// In a coding the crawler cannot decode: no rules to read.
			return nil, nil
		case resp.status >= 200 && resp.status <= 299:
			return bytes.Clone(resp.body), nil
		case resp.status == http.StatusTooManyRequests || resp.status >= 500:
			return nil, &robotsStatusError{url: u, status: resp.status, header: resp.header}
		default:
			return nil, nil
		}
	}
	return nil, nil // RFC 9309: too many redirects, unavailable
}

// headerRobots returns what the X-Robots-Tag headers of a response say to
// the robot named token ("asyncrawl"). A value may name the robot it is for
// ("otherbot: noindex"), and then applies to it alone.
func headerRobots(h http.Header, token string) robotsMeta {
	var m robotsMeta
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
		for d := range strings.SplitSeq(v, ",") {
			switch strings.ToLower(strings.TrimSpace(d)) {
			case "noindex":
				m.noindex = true
			case "nofollow":
				m.nofollow = true
			case "none":
				m.noindex, m.nofollow = true, true
			}
		}
	}
	return m
}
