package crawl

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/asyncrawl/crawl/internal/urlstd"
	"golang.org/x/net/publicsuffix"
)

// ErrBadRoot is wrapped by the error Run and Start return for a root, and
// Crawl.Add for a URL, that is not an absolute http or https URL with a
// valid host name: a path ("/docs", "./docs", "../docs") included.
var ErrBadRoot = errors.New("not an absolute http(s) URL")

// parseRoot turns a root as a user typed it into a normalised URL. A bare
// host ("example.com", "example.com/docs") gets "http://", as in crawl.py,
// and so does a scheme-relative "//example.com/docs"; a path ("/docs",
// "./docs", "../docs") is an error, not a host. The error starts with s
// quoted: the caller says what s was.
// A root whose host urlstd.Normalize cannot make canonical (see urlstd.CanonicalHost) is
// an error naming the host.
func parseRoot(s string) (*url.URL, error) {
	raw := strings.TrimSpace(s)
	if raw == "" {
		return nil, fmt.Errorf("%q: empty: %w", s, ErrBadRoot)
	}
	if !strings.Contains(raw, "://") && !hasHTTPScheme(raw) {
		if isPath(raw) {
			return nil, fmt.Errorf("%q: a path, not a URL: %w", s, ErrBadRoot)
		}
		// A bare host may have a port ("localhost:8080"), but a colon
		// followed by anything else ends a scheme ("mailto:a@b"), which
		// "http://" must not turn into a user name.
		host := raw[:strings.IndexAny(raw+"/", "/?#")]
		if name, port, ok := strings.Cut(host, ":"); ok && !strings.HasPrefix(host, "[") && strings.Trim(port, "0123456789") != "" {
			return nil, fmt.Errorf("%q: scheme %q: %w", s, name, ErrBadRoot)
		}
		raw = "http://" + raw
	}
	u, err := urlstd.Resolve(nil, raw)
	if errors.Is(err, urlstd.ErrNotHTTP) {
		scheme, _, _ := strings.Cut(raw, ":")
		return nil, fmt.Errorf("%q: scheme %q: %w", s, urlstd.LowerASCII(scheme), ErrBadRoot)
	}
	if err != nil {
		if _, perr := url.Parse(raw); perr != nil {
			// What net/url says too, for a caller that looks for a
			// *url.Error.
			return nil, fmt.Errorf("%q: %w: %w: %w", s, ErrBadRoot, err, perr)
		}
		return nil, fmt.Errorf("%q: %w: %w", s, ErrBadRoot, err)
	}
	return u, nil
}

// hasHTTPScheme reports whether s starts with "http:" or "https:", in any
// case: a URL however few its slashes ("http:/h/x", "http:h", "https:\\h"),
// as the URL Standard reads them, not a bare host named "http".
func hasHTTPScheme(s string) bool {
	scheme, _, ok := strings.Cut(s, ":")
	scheme = urlstd.LowerASCII(scheme)
	return ok && (scheme == "http" || scheme == "https")
}

// isPath reports whether a root without "://" is a path (absolute, or
// relative with a dot segment first) rather than a bare host, which
// "http://" would turn into a host: "/docs/x" into http://docs/x.
func isPath(s string) bool {
	if s == "." || s == ".." {
		return true
	}
	for _, p := range []string{"./", "../", `.\`, `..\`} {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return (s[0] == '/' || s[0] == '\\') && !strings.HasPrefix(s, "//")
}

// scope decides which hosts a Run may crawl, from the hosts of its roots.
// It is read-only once built and safe for concurrent use.
type scope struct {
	lenient bool
	hosts   map[string]struct{} // strict: hosts; lenient: registrable domains
	// rootHosts are the roots' hosts (with their ports), canonical and
	// in scope, for http [0] and https [1]: most links of a crawl are on
	// them, and are known in scope without a look at their host.
	rootHosts [2]map[string]struct{}
	exclude   []*regexp.Regexp
	filters   []Filter
	// The trap limits on a URL; 0 disables each.
	maxURLLength      int
	maxSegmentRepeats int
}

func newScope(roots []*url.URL, cfg *config) *scope {
	s := &scope{
		lenient:           cfg.lenient,
		hosts:             make(map[string]struct{}),
		rootHosts:         [2]map[string]struct{}{{}, {}},
		exclude:           cfg.exclude,
		filters:           cfg.filters,
		maxURLLength:      cfg.maxURLLength,
		maxSegmentRepeats: cfg.maxSegmentRepeats,
	}
	for _, u := range roots {
		if urlstd.IsHTTP(u) {
			if h, err := urlstd.CanonicalHostPort(u.Host, u.Scheme); err == nil && h == u.Host {
				s.rootHosts[httpsIndex(u.Scheme)][h] = struct{}{}
			}
		}
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
// in scope. A host that urlstd.Normalize could not make canonical is in no scope.
func (s *scope) contains(u *url.URL) bool {
	if u.Scheme != "http" && u.Scheme != "https" {
		return false
	}
	if _, ok := s.rootHosts[httpsIndex(u.Scheme)][u.Host]; ok {
		return true
	}
	if h, err := urlstd.CanonicalHostPort(u.Host, u.Scheme); err != nil || h != u.Host {
		return false
	}
	h := u.Hostname()
	if s.lenient {
		h = registrableDomain(h)
	}
	_, ok := s.hosts[h]
	return ok
}

// httpsIndex is 1 for https, 0 for http.
func httpsIndex(scheme string) int {
	if scheme == "https" {
		return 1
	}
	return 0
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
	refuseDepth                  // WithMaxDepth
	numRefusals
)

// refusalNames are the keys of Stats.Refused, by refusal.
var refusalNames = [numRefusals]string{
	refuseURLLength:      "url_length",
	refuseLinksPerPage:   "links_per_page",
	refuseSegmentRepeats: "segment_repeats",
	refuseDepth:          "max_depth",
}

// trap applies the trap limits on one URL to a link or redirect target that
// scope and allows let through, key being its normalised string form. Roots
// never come here: they are always crawled.
func (s *scope) trap(key string, u *url.URL) refusal {
	if s.maxURLLength > 0 && len(key) > s.maxURLLength {
		return refuseURLLength
	}
	if s.maxSegmentRepeats > 0 && segmentRepeats(urlstd.EscapedPath(u), s.maxSegmentRepeats) {
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
