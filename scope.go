package crawl

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"
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
// A root whose host normalize cannot make canonical (see canonicalHost) is
// an error naming the host.
func parseRoot(s string) (*url.URL, error) {
	raw := strings.TrimSpace(s)
	if raw == "" {
		return nil, fmt.Errorf("%q: empty: %w", s, ErrBadRoot)
	}
	if !strings.Contains(raw, "://") {
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
	u, err := resolveRef(nil, raw)
	if errors.Is(err, errNotHTTP) {
		scheme, _, _ := strings.Cut(raw, ":")
		return nil, fmt.Errorf("%q: scheme %q: %w", s, lowerASCII(scheme), ErrBadRoot)
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

// normalize rewrites u in place into the form the crawl dedupes on, its
// key (see stdURL.key), from which the host key, the scope and the
// robots.txt cache take the host: u's string form parsed anew by the URL
// Standard's basic URL parser (see resolveRef), as a browser would parse
// it, so that "HTTP://Example.COM.:80" is "http://example.com/",
// "http://Bücher.example" is "http://xn--bcher-kva.example/",
// "http://0x7f.1/a/./b/../c" is "http://127.0.0.1/a/c" and a space in the
// path is "%20". The userinfo is dropped, so that "http://u@h/p" and
// "http://h/p" are one URL on one host: a crawl's credentials belong in
// WithRequestHook or WithHTTPClient, not in the URLs it finds. The host
// is made canonical as canonicalHost makes it (one trailing dot removed
// among others). The fragment is dropped. In the path and query,
// percent-encoded unreserved characters are decoded and the hex digits of
// the other escapes upper-cased (RFC 3986, section 6.2.2.2; see
// normalizePercent), so that "/%7euser" is "/~user" while "/a%3Bb" and
// "/a;b" stay two URLs, and so do "/a%zz" and "/a%25zz". The key is not
// what is sent: the crawler sends the Standard's serialisation of the
// spelling it met first (see urlForms). A key net/url cannot hold in Path
// and RawPath ("/a%zz") has its path in Opaque (see setURL).
//
// A URL the Standard's parser refuses, or whose host canonicalHost
// refuses (an empty label, a name that fails IDNA, a malformed port), is
// only lower-cased in scheme and host, with userinfo and fragment dropped,
// and scope.contains refuses it: a URL that names no valid host is never
// crawled. normalize is idempotent.
func normalize(u *url.URL) {
	if v, err := parseStd(refString(u), nil); err == nil {
		k := v.keyed()
		k.setURL(u)
		return
	}
	u.Scheme = strings.ToLower(u.Scheme)
	u.User = nil
	// Trimming a port or a dot here could make another, maybe valid,
	// host: the URL would then be fetched under a second key.
	u.Host = lowerASCII(u.Host)
	u.Fragment, u.RawFragment = "", ""
	if u.Path == "" && u.Opaque == "" && u.Host != "" {
		u.Path, u.RawPath = "/", ""
	}
}

// canonicalHostPort returns the host and port of a URL with the given
// scheme (url.URL.Host, the port optional) in canonical form: the host as
// canonicalHost makes it, the port without leading zeros, and dropped if
// empty or the scheme's default. It fails for a host canonicalHost refuses
// and for a port that is not a decimal number up to 65535.
func canonicalHostPort(hostport, scheme string) (string, error) {
	name, port, hasPort := hostport, "", false
	if strings.HasPrefix(hostport, "[") {
		// Only the colon after the bracket starts a port; a
		// bracket not followed by one leaves a name that is not
		// an IPv6 literal.
		if i := strings.IndexByte(hostport, ']'); i >= 0 && i+1 < len(hostport) && hostport[i+1] == ':' {
			name, port, hasPort = hostport[:i+1], hostport[i+2:], true
		}
	} else {
		// A second colon ("h::", "h:80:") is left in the port, which
		// is then no number: such a host is refused, not trimmed
		// into a valid one.
		name, port, hasPort = strings.Cut(hostport, ":")
	}
	if hasPort {
		if strings.Trim(port, "0123456789") != "" {
			return "", fmt.Errorf("port %q is not a number", port)
		}
		if port != "" {
			port = strings.TrimLeft(port, "0")
			if port == "" {
				port = "0"
			}
			if n, err := strconv.Atoi(port); err != nil || n > 65535 {
				return "", fmt.Errorf("port %s out of range", port)
			}
		}
	}
	given := name
	name, err := canonicalHost(name)
	if err != nil {
		return "", err
	}
	if port == "" || port == "80" && scheme == "http" || port == "443" && scheme == "https" {
		return name, nil
	}
	if name == given && len(hostport) == len(name)+1+len(port) {
		// Already canonical, the usual case: no new string.
		return hostport, nil
	}
	return name + ":" + port, nil
}

// idnaProfile maps host names to ASCII as browsers' URL parsers do (the
// URL Standard's "domain to ASCII"): UTS #46 non-transitional processing,
// as idna.Lookup does, with the Bidi and ContextJ rules, but without
// idna.Lookup's STD3 rules and hyphen checks, which would refuse names in
// use such as "my_host.example.com" and "r3---sn-abc.googlevideo.com". It
// is safe for concurrent use.
var idnaProfile = idna.New(idna.MapForLookup(), idna.BidiRule(), idna.Transitional(false),
	idna.StrictDomainName(false), idna.CheckHyphens(false))

// canonicalHost returns a host name (url.URL.Hostname, but with an IPv6
// literal's brackets) in the one form a crawl knows the host by: mapped to
// ASCII by IDNA ("BÜCHER.example" is "xn--bcher-kva.example", as is
// "XN--BCHER-KVA.example"), lower case, one trailing dot removed
// ("example.com." is "example.com"). An IPv4 address is left as it is, an
// IPv6 literal only lower-cased. It fails for an empty name, for an IPv6
// literal with a zone, for one not in UTF-8, for one that
// fails IDNA (a bad "xn--" label, a disallowed rune), for one with an
// empty label ("a..b", "example.com.."), and for one with a byte other
// than a letter, a digit, "-", "_" or ".", which net's resolver would
// refuse. canonicalHost(canonicalHost(h)) is canonicalHost(h).
func canonicalHost(name string) (string, error) {
	if strings.HasPrefix(name, "[") {
		a, err := netip.ParseAddr(strings.TrimSuffix(name[1:], "]"))
		if err != nil || !a.Is6() || a.Zone() != "" || !strings.HasSuffix(name, "]") {
			return "", errors.New("not an IPv6 literal")
		}
		return lowerASCII(name), nil
	}
	h := lowerASCII(name)
	if !utf8.ValidString(h) {
		// The URL Standard decodes it to U+FFFD, which IDNA refuses.
		return "", errors.New("not UTF-8")
	}
	if !isLDH(h) || strings.HasPrefix(h, "xn--") || strings.Contains(h, ".xn--") {
		// Names of letters, digits, "-", "_" and "." are their own
		// ASCII form, unless a label is punycode, which must decode
		// to a valid name and encode back to the same.
		var err error
		if h, err = idnaProfile.ToASCII(h); err != nil {
			return "", err
		}
	}
	h = strings.TrimSuffix(h, ".")
	if h == "" || h[0] == '.' || h[len(h)-1] == '.' || strings.Contains(h, "..") {
		return "", errors.New("empty label")
	}
	if !isLDH(h) {
		return "", errors.New("not a host name")
	}
	return h, nil
}

// isLDH reports whether s holds only lower-case letters, digits, "-", "_"
// and ".".
func isLDH(s string) bool {
	for i := range len(s) {
		c := s[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// lowerASCII returns s with its ASCII upper-case letters lower-cased and
// every other byte as it was, valid UTF-8 or not.
func lowerASCII(s string) string {
	for i := range len(s) {
		if 'A' <= s[i] && s[i] <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if 'A' <= b[j] && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// normalizePercent returns s, a path or a query as the URL Standard
// serialises it, in the normal form of RFC 3986, section 6.2.2.2: the
// percent-encoded unreserved characters (letters, digits, "-", ".", "_",
// "~") decoded and the hex digits of the other escapes upper-cased, so
// that "%7euser" and "~user" have one form, as do "%c3%a9" and "%C3%A9".
// A "%" not followed by two hex digits ("100%", "%zz") is not an escape:
// it is no "%25" either, so that "/a%zz" and "/a%25zz" keep two forms.
// It stays a "%", and decoding never makes an escape of it: after such a
// "%", of two hex digits the second is written as its escape ("%0%61" and
// "%%30a" are both "%0%61", never "%0a", the escape of a newline). The
// result is its own normal form. It allocates only when it changes s.
func normalizePercent(s string) string {
	i := strings.IndexByte(s, '%')
	if i < 0 {
		return s
	}
	var buf [256]byte
	b := append(buf[:0], s[:i]...)
	// lone counts the characters still to be written that could make
	// an escape of the last "%" written alone: 2 right after it, 1 after
	// a hex digit that followed it.
	lone := 0
	for i < len(s) {
		c, n := s[i], 1
		if c == '%' {
			if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
				b = append(b, '%')
				i, lone = i+1, 2
				continue
			}
			v := unhex(s[i+1])<<4 | unhex(s[i+2])
			if !isUnreserved(v) {
				b = append(b, '%', upperHex(s[i+1]), upperHex(s[i+2]))
				i, lone = i+3, 0
				continue
			}
			c, n = v, 3
		}
		switch {
		case lone == 1 && isHex(c):
			// The second hex digit after a lone "%".
			b = append(b, '%', "0123456789ABCDEF"[c>>4], "0123456789ABCDEF"[c&15])
			lone = 0
		case lone == 2 && isHex(c):
			b = append(b, c)
			lone = 1
		default:
			b = append(b, c)
			lone = 0
		}
		i += n
	}
	if string(b) == s {
		return s
	}
	return string(b)
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
		if isHTTP(u) {
			if h, err := canonicalHostPort(u.Host, u.Scheme); err == nil && h == u.Host {
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
// in scope. A host that normalize could not make canonical is in no scope.
func (s *scope) contains(u *url.URL) bool {
	if u.Scheme != "http" && u.Scheme != "https" {
		return false
	}
	if _, ok := s.rootHosts[httpsIndex(u.Scheme)][u.Host]; ok {
		return true
	}
	if h, err := canonicalHostPort(u.Host, u.Scheme); err != nil || h != u.Host {
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
	if s.maxSegmentRepeats > 0 && segmentRepeats(escapedPath(u), s.maxSegmentRepeats) {
		return refuseSegmentRepeats
	}
	return refuseNone
}

// escapedPath returns u's path as sent: for a path that setURL put in
// Opaque, the Opaque after "//" and the host, else its EscapedPath.
func escapedPath(u *url.URL) string {
	if u.Opaque != "" {
		if p, ok := strings.CutPrefix(u.Opaque, "//"+u.Host); ok {
			return p
		}
		return u.Opaque
	}
	return u.EscapedPath()
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
