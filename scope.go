package crawl

import (
	"errors"
	"fmt"
	"net"
	"net/url"
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
// "http://example.com/#top" are one URL. Dot segments are already resolved
// by url.URL.ResolveReference. normalize is idempotent.
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
}

// scope decides which hosts a Run may crawl, from the hosts of its roots.
// It is read-only once built and safe for concurrent use.
type scope struct {
	lenient bool
	hosts   map[string]struct{} // strict: hosts; lenient: registrable domains
}

func newScope(roots []*url.URL, lenient bool) *scope {
	s := &scope{lenient: lenient, hosts: make(map[string]struct{})}
	for _, u := range roots {
		h := u.Hostname()
		if lenient {
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
