package crawl

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"golang.org/x/net/publicsuffix"
)

// ErrBadRoot is wrapped by the error Run returns for a root that is not an
// absolute http or https URL.
var ErrBadRoot = errors.New("not an absolute http(s) URL")

// parseRoot turns a root as a user typed it into a normalised URL. A bare
// host ("example.com", "example.com/docs") gets "http://", as in crawl.py.
func parseRoot(s string) (*url.URL, error) {
	raw := strings.TrimSpace(s)
	if raw == "" {
		return nil, fmt.Errorf("crawl: root %q: empty: %w", s, ErrBadRoot)
	}
	if !strings.Contains(raw, "://") {
		// A bare host may have a port ("localhost:8080"), but a colon
		// followed by anything else ends a scheme ("mailto:a@b"), which
		// "http://" must not turn into a user name.
		host := raw[:strings.IndexAny(raw+"/", "/?#")]
		if name, port, ok := strings.Cut(host, ":"); ok && !strings.HasPrefix(host, "[") && strings.Trim(port, "0123456789") != "" {
			return nil, fmt.Errorf("crawl: root %q: scheme %q: %w", s, name, ErrBadRoot)
		}
		raw = "http://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("crawl: root %q: %w: %w", s, ErrBadRoot, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("crawl: root %q: scheme %q: %w", s, u.Scheme, ErrBadRoot)
	}
	if u.Hostname() == "" {
		return nil, fmt.Errorf("crawl: root %q: no host: %w", s, ErrBadRoot)
	}
	normalize(u)
	return u, nil
}

// normalize rewrites u in place into the form the crawl dedupes on: scheme
// and host lower-cased, the scheme's default port dropped, the fragment
// dropped and an empty path made "/", so that "HTTP://Example.COM:80" and
// "http://example.com/#top" are one URL; and in the path and query,
// percent-encoded unreserved characters decoded and the hex digits of the
// rest upper-cased (RFC 3986, section 6.2.2.2), so that "/%7euser" is
// "/~user"; and dot segments removed ("/a/./b/../c" is "/a/c"). normalize
// is idempotent.
func normalize(u *url.URL) {
	u.Scheme = strings.ToLower(u.Scheme)
	host := strings.ToLower(u.Host)
	// A host with two colons outside brackets ("//h::/x" parses without a
	// scheme, and keeps it when resolved against an http page) has no port
	// to drop: trimming one would make it another, maybe valid, host. Nor
	// has one with no name before its colon: trimming would leave no host.
	if i := strings.LastIndexByte(host, ':'); i > 0 && !strings.Contains(host[i:], "]") &&
		(strings.HasPrefix(host, "[") || strings.IndexByte(host, ':') == i) {
		port := host[i+1:]
		if port == "" || (port == "80" && u.Scheme == "http") || (port == "443" && u.Scheme == "https") {
			host = host[:i]
		}
	}
	u.Host = host
	u.Fragment, u.RawFragment = "", ""
	if u.Path == "" && u.Opaque == "" && u.Host != "" {
		u.Path, u.RawPath = "/", ""
	}
	// RawPath is set only when the link spelled its path in a way the
	// default encoding of Path would not; RawQuery is always as spelled.
	// Only URLs with a host are crawled, and their paths start with "/",
	// clear of url.URL's special cases for relative paths such as "*".
	if u.RawPath != "" && u.Host != "" {
		u.RawPath = normalizePercent(escapeRawPath(u.RawPath))
		if u.RawPath == (&url.URL{Path: u.Path}).EscapedPath() {
			u.RawPath = ""
		}
	}
	if strings.IndexByte(u.RawQuery, '%') >= 0 {
		u.RawQuery = normalizePercent(u.RawQuery)
	}
	// Links are resolved with ResolveReference, which removes dot
	// segments, but roots, redirect targets and the URLs of a custom
	// extractor may still have them. After the percent decoding, so that
	// "%2e%2e" counts as "..".
	if u.Host != "" && strings.Contains(u.Path, "/.") {
		r := u.ResolveReference(&url.URL{})
		u.Path, u.RawPath = r.Path, r.RawPath
	}
}

// normalizePercent decodes the percent-encoded unreserved characters of s
// (letters, digits, "-", ".", "_", "~") and upper-cases the hex digits of
// the other escapes, leaving everything else as it is. A string with a
// malformed escape ("100%", "%zz") is left whole: decoding around it could
// make a new escape ("%0%61" would become "%0a").
func normalizePercent(s string) string {
	i := strings.IndexByte(s, '%')
	if i < 0 {
		return s
	}
	for j := i; j < len(s); j++ {
		if s[j] == '%' && (j+2 >= len(s) || !isHex(s[j+1]) || !isHex(s[j+2])) {
			return s
		}
	}
	var b strings.Builder
	b.Grow(len(s))
	b.WriteString(s[:i])
	for ; i < len(s); i++ {
		c := s[i]
		if c != '%' || i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
			b.WriteByte(c)
			continue
		}
		writeNormalEscape(&b, s[i+1], s[i+2])
		i += 2
	}
	return b.String()
}

// escapeRawPath percent-encodes the bytes of a path as spelled that may not
// stand bare in a URL (non-ASCII, space, quote), in upper-case hex. Without
// that, net/url would drop the whole spelling for the encoding of the
// decoded path, and an escape such as "%2F" with it: "/a%2Fb/café" would
// become "/a/b/caf%C3%A9", another URL.
func escapeRawPath(s string) string {
	n := 0
	for i := range len(s) {
		if !isPathByte(s[i]) {
			n++
		}
	}
	if n == 0 {
		return s
	}
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(s) + 2*n)
	for i := range len(s) {
		c := s[i]
		if isPathByte(c) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

// isPathByte reports whether c may stand bare in a path as net/url keeps
// it spelled: an unreserved character, a sub-delimiter, ":", "@", "/", the
// "%" of an escape, or a bracket, which browsers leave alone.
func isPathByte(c byte) bool {
	return isUnreserved(c) || strings.IndexByte("!$&'()*+,;=:@/%[]", c) >= 0
}

// writeNormalEscape writes the escape "%" h1 h2, hex digits, in its
// normal form: the octet itself if it is an unreserved character, else the
// escape with upper-case hex digits.
func writeNormalEscape(b *strings.Builder, h1, h2 byte) {
	if v := unhex(h1)<<4 | unhex(h2); isUnreserved(v) {
		b.WriteByte(v)
		return
	}
	b.WriteByte('%')
	b.WriteByte(upperHex(h1))
	b.WriteByte(upperHex(h2))
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	default:
		return c - 'a' + 10
	}
}

func upperHex(c byte) byte {
	if 'a' <= c && c <= 'f' {
		return c - 'a' + 'A'
	}
	return c
}

// isUnreserved reports whether c is an unreserved character of RFC 3986.
func isUnreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

// scope decides which hosts a Run may crawl, from the hosts of its roots.
// It is read-only once built and safe for concurrent use.
type scope struct {
	lenient bool
	hosts   map[string]struct{} // strict: hosts; lenient: registrable domains
	exclude []*regexp.Regexp
	filters []Filter
	// The trap limits on a URL; 0 disables each.
	maxURLLength      int
	maxSegmentRepeats int
}

func newScope(roots []*url.URL, cfg *config) *scope {
	s := &scope{
		lenient:           cfg.lenient,
		hosts:             make(map[string]struct{}),
		exclude:           cfg.exclude,
		filters:           cfg.filters,
		maxURLLength:      cfg.maxURLLength,
		maxSegmentRepeats: cfg.maxSegmentRepeats,
	}
	for _, u := range roots {
		h := u.Hostname()
		if s.lenient {
			s.hosts[registrableDomain(h)] = struct{}{}
			continue
		}
		s.hosts[h] = struct{}{}
		if rest, ok := strings.CutPrefix(h, "www."); ok {
			s.hosts[rest] = struct{}{}
		} else if net.ParseIP(h) == nil {
			s.hosts["www."+h] = struct{}{}
		}
	}
	return s
}

// contains reports whether the normalised URL u is an http(s) URL on a host
// in scope.
func (s *scope) contains(u *url.URL) bool {
	if u.Scheme != "http" && u.Scheme != "https" {
		return false
	}
	h := u.Hostname()
	if h == "" {
		return false
	}
	if s.lenient {
		h = registrableDomain(h)
	}
	_, ok := s.hosts[h]
	return ok
}

// allows applies the exclude patterns and filters to a link or redirect
// target in scope, key being its normalised string form. Roots never come
// here: they are always crawled.
func (s *scope) allows(key string, u *url.URL) bool {
	for _, re := range s.exclude {
		if re.MatchString(key) {
			return false
		}
	}
	for _, f := range s.filters {
		if !f(u) {
			return false
		}
	}
	return true
}

// refusal is the trap limit that kept a link or redirect target from the
// queue; refuseNone lets it in.
type refusal uint8

const (
	refuseNone           refusal = iota
	refuseURLLength              // WithMaxURLLength
	refuseLinksPerPage           // WithMaxLinksPerPage
	refuseSegmentRepeats         // WithMaxSegmentRepeats
	numRefusals
)

// refusalNames are the keys of Stats.Refused, by refusal.
var refusalNames = [numRefusals]string{
	refuseURLLength:      "url_length",
	refuseLinksPerPage:   "links_per_page",
	refuseSegmentRepeats: "segment_repeats",
}

// trap applies the trap limits on one URL to a link or redirect target that
// scope and allows let through, key being its normalised string form. Roots
// never come here: they are always crawled.
func (s *scope) trap(key string, u *url.URL) refusal {
	if s.maxURLLength > 0 && len(key) > s.maxURLLength {
		return refuseURLLength
	}
	if s.maxSegmentRepeats > 0 && segmentRepeats(u.EscapedPath(), s.maxSegmentRepeats) {
		return refuseSegmentRepeats
	}
	return refuseNone
}

// segmentRepeats reports whether one segment of the escaped path, which
// starts with "/", occurs in it more than max times, anywhere ("/a/b/a/c/a"
// holds "a" three times); max is at least 1. Empty segments ("//", a
// trailing "/") do not count. It allocates nothing for a path of up to 32
// segments, and sorts rather than compares every pair, so that a hostile
// path of many segments costs n log n, not n squared.
func segmentRepeats(path string, max int) bool {
	if strings.Count(path, "/") <= max {
		// Each segment follows a "/": too few for one to occur max+1
		// times. The common case, decided without splitting.
		return false
	}
	var buf [32]string
	segs := buf[:0]
	for path != "" {
		seg, rest, _ := strings.Cut(path, "/")
		if seg != "" {
			segs = append(segs, seg)
		}
		path = rest
	}
	if len(segs) <= max {
		return false
	}
	slices.Sort(segs)
	run := 1
	for i := 1; i < len(segs); i++ {
		if segs[i] != segs[i-1] {
			run = 1
			continue
		}
		if run++; run > max {
			return true
		}
	}
	return false
}

// registrableDomain returns the host's eTLD+1 ("example.co.uk" for
// "a.b.example.co.uk"), or the host itself for IP addresses and names that
// have none, such as "localhost".
func registrableDomain(host string) string {
	if net.ParseIP(host) != nil {
		return host
	}
	d, err := publicsuffix.EffectiveTLDPlusOne(host)
	if err != nil {
		return host
	}
	return d
}
