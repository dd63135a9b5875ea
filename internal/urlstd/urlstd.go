// Package urlstd parses http and https URLs as the WHATWG URL Standard's
// basic URL parser does (https://url.spec.whatwg.org/), so that the
// crawler requests what a browser would for the same link, and gives each
// URL the two forms the crawler uses: its serialisation, which is sent
// (Parse, Resolve, URL.String, NewRequest), and its key, which the crawl
// dedupes on (URL.Key, Forms, Normalize): the serialisation with the
// equivalences of RFC 3986, section 6.2.2 applied. It also makes host
// names canonical (CanonicalHost, by UTS #46 as browsers do) and holds
// the percent-encoding helpers of RFC 3986 that robots.txt matching and
// the link extractor share. Its functions keep no state and are safe for concurrent use.
package urlstd

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Parse reads http and https URLs as the WHATWG URL Standard's basic
// URL parser does (https://url.spec.whatwg.org/), so that the crawler
// requests what a browser would for the same link: the Standard's
// serialisation of the URL as first spelled is what goes on the wire, "|"
// and a "%" not followed by two hex digits included, as a browser sends
// them. Only what an http(s) URL can hold is kept: the userinfo is dropped
// (see Normalize), and so is the fragment, which is never sent.
//
// The crawl dedupes on another form, the key (URL.Key): the
// serialisation with the equivalences of RFC 3986, section 6.2.2 applied
// (see NormalizePercent), so that "/%7Euser" and "/~user" are one URL,
// fetched once, as spelled the first time, while "/a%zz" and "/a%25zz"
// stay two.
//
// net/url cannot hold every such path in url.URL.Path and RawPath: its
// EscapedPath re-encodes a path holding "|" or a malformed escape. Such a
// URL has its path in Opaque (see URL.SetURL), which net/http sends as it is;
// the crawler's own request has it in origin form (see NewRequest).

// ErrNotHTTP is the error of a reference that gives no http(s) URL
// ("mailto:", "javascript:"), errURLFailure that of one the URL Standard's
// parser fails on.
var (
	errURLFailure = errors.New("not a valid URL")
	ErrNotHTTP    = errors.New("not an http(s) URL")
)

// URL is an http(s) URL as the URL Standard serialises it, without
// userinfo and fragment: the form that is sent.
type URL struct {
	scheme   string // "http" or "https"
	host     string // serialised host, with a port other than the default
	path     string // serialised path, starting with "/"
	query    string // serialised query, without "?"
	hasQuery bool   // the query is not null ("?" alone gives "")
}

// byteSet is a set of bytes; index finds one in a string, as
// strings.IndexAny does, without making the set again for each call.
type byteSet [256]bool

func newByteSet(chars string) *byteSet {
	var b byteSet
	for i := range len(chars) {
		b[chars[i]] = true
	}
	return &b
}

func (b *byteSet) index(s string) int {
	for i := range len(s) {
		if b[s[i]] {
			return i
		}
	}
	return -1
}

// Sets of the bytes the parser looks for on every link.
var (
	pathEscapes  = newByteSet("%!'()*[]|") // what net/url's path escaping may change
	tabOrNewline = newByteSet("\t\n\r")
	authorityEnd = newByteSet("/\\?#")
	slashes      = newByteSet("/\\")
)

// URL returns u as a new url.URL (see URL.SetURL).
func (u *URL) URL() *url.URL {
	r := new(url.URL)
	u.SetURL(r)
	return r
}

// SetURL sets r to u, so that r's String is u's serialisation and its
// RequestURI the serialisation after the host, byte for byte: as
// url.Parse of it would, Path is the decoded path, and RawPath the
// serialised one when the default encoding of Path differs from it. A
// path net/url cannot give back that way (one holding "|" or a "%" not
// followed by two hex digits, which url.Parse refuses) is in Opaque
// instead, with the host, "//h/a%zz", and Path and RawPath empty: String
// is then still the serialisation, and RequestURI is it whole, which
// net/http sends in absolute form ("GET http://h/a%zz"), as HTTP allows;
// originForm makes the request line a browser's.
func (u *URL) SetURL(r *url.URL) {
	*r = url.URL{Scheme: u.scheme, Host: u.host, Path: u.path, RawQuery: u.query, ForceQuery: u.hasQuery && u.query == ""}
	if pathEscapes.index(u.path) < 0 {
		return
	}
	if p, err := url.PathUnescape(u.path); err == nil {
		r.Path = p
		if r.EscapedPath() == u.path {
			return
		}
		r.RawPath = u.path
		if r.EscapedPath() == u.path {
			return
		}
	}
	r.Path, r.RawPath, r.Opaque = "", "", "//"+u.host+u.path
}

// originForm rewrites a URL that URL.SetURL made with an Opaque "//host/path"
// to have the path alone in Opaque, so that its RequestURI, the
// request-target net/http sends, is in origin form ("/a%zz"), as a
// browser sends it. Its String then lacks the host ("http:/a%zz"; see
// String). A path that starts with "//" stays as it is, in absolute
// form: RequestURI would read it as an authority.
func originForm(r *url.URL) {
	if p, ok := strings.CutPrefix(r.Opaque, "//"+r.Host); ok && strings.HasPrefix(p, "/") && !strings.HasPrefix(p, "//") {
		r.Opaque = p
	}
}

// String returns u's serialisation, the URL as sent.
func (u *URL) String() string {
	s := u.scheme + "://" + u.host + u.path
	if u.hasQuery {
		s += "?" + u.query
	}
	return s
}

// Key returns the form of u the crawl dedupes on: its serialisation with
// the path and query in the normal form of RFC 3986, section 6.2.2 (see
// NormalizePercent). It is its own key: parsed again, it gives itself.
func (u *URL) Key() string {
	k := u.Keyed()
	return k.String()
}

// Keyed returns u with its path and query as its key has them.
func (u *URL) Keyed() URL {
	k := *u
	k.path = NormalizePercent(u.path)
	if u.hasQuery {
		k.query = NormalizePercent(u.query)
	}
	return k
}

// WireKey returns the key of a URL given in its wire form (a
// URL.String), as URL.Key does, without parsing it again.
func WireKey(wire string) string {
	if strings.IndexByte(wire, '%') < 0 {
		return wire
	}
	// The host holds no "/", and the path starts with one.
	i := strings.Index(wire, "://") + 3
	i += strings.IndexByte(wire[i:], '/')
	path, query, hasQuery := strings.Cut(wire[i:], "?")
	k := wire[:i] + NormalizePercent(path)
	if hasQuery {
		k += "?" + NormalizePercent(query)
	}
	return k
}

// Forms returns the two forms of u, a URL as Resolve, parseRoot
// and Normalize leave it: wire, its serialisation, which is sent, and key,
// which the crawl dedupes on (see URL.Key). A URL the URL Standard's
// parser refuses, which no scope contains, has Normalize's form as both.
func Forms(u *url.URL) (wire, key string) {
	s, err := FromURL(u)
	if err != nil {
		v := *u
		Normalize(&v)
		k := String(&v)
		return k, k
	}
	wire = s.String()
	return wire, WireKey(wire)
}

// String returns u's string form, as url.URL.String does, but for a
// URL whose path originForm left alone in Opaque, which it gives as a URL
// with its host ("http://h/a%zz"), not as url.URL.String does
// ("http:/a%zz").
func String(u *url.URL) string {
	if u.Opaque == "" || u.Opaque[0] != '/' || strings.HasPrefix(u.Opaque, "//") || u.Host == "" || u.Scheme == "" {
		return u.String()
	}
	s := u.Scheme + "://" + u.Host + u.Opaque
	if u.ForceQuery || u.RawQuery != "" {
		s += "?" + u.RawQuery
	}
	if u.Fragment != "" {
		s += "#" + u.EscapedFragment()
	}
	return s
}

// EscapedPath returns u's path as sent: for a path that URL.SetURL put in
// Opaque, the Opaque after "//" and the host (or after originForm, the
// Opaque as it is), else u.EscapedPath().
func EscapedPath(u *url.URL) string {
	if u.Opaque != "" {
		if p, ok := strings.CutPrefix(u.Opaque, "//"+u.Host); ok {
			return p
		}
		return u.Opaque
	}
	return u.EscapedPath()
}

// FromURL returns an http(s) url.URL parsed anew as the URL Standard
// parses its string form (see RefString).
func FromURL(u *url.URL) (URL, error) {
	return Parse(RefString(u), nil)
}

// RefString returns the string form of u, as url.URL.String does, but
// for its path as spelled in RawPath when that decodes to Path, even
// where net/url would not use it ("/a%2Fb/café", whose non-ASCII bytes
// make RawPath no valid encoding): the Standard's parser then encodes
// what needs it, and "%2F" stays a "%2F"; and for a path in Opaque (see
// URL.SetURL), as String gives it. The fragment is left out.
func RefString(u *url.URL) string {
	if u.Opaque != "" {
		if u.Fragment == "" {
			return String(u)
		}
		v := *u
		v.Fragment, v.RawFragment = "", ""
		return String(&v)
	}
	if u.RawPath == "" {
		if u.Fragment == "" {
			return u.String()
		}
		v := *u
		v.Fragment, v.RawFragment = "", ""
		return v.String()
	}
	if p, err := url.PathUnescape(u.RawPath); err != nil || p != u.Path {
		v := *u
		v.RawPath, v.Fragment, v.RawFragment = "", "", ""
		return v.String()
	}
	v := *u
	v.Path, v.RawPath, v.RawQuery, v.ForceQuery, v.Fragment, v.RawFragment = "", "", "", false, "", ""
	s := v.String() + u.RawPath
	if u.ForceQuery || u.RawQuery != "" {
		s += "?" + u.RawQuery
	}
	return s
}

// Resolve resolves the reference ref (an href, a Location, a sitemap
// entry) against base as the URL Standard's basic URL parser does, and
// returns the http(s) URL in the form that is sent: the Standard's
// serialisation, without userinfo and fragment (see URL.SetURL; Forms
// gives its key). A nil base
// leaves only absolute references. It fails for a reference the parser
// fails on, and for one that is not http(s) ("mailto:", "javascript:").
// It is safe for concurrent use.
func Resolve(base *url.URL, ref string) (*url.URL, error) {
	var b *URL
	if base != nil {
		s, err := FromURL(base)
		if err != nil {
			return nil, err
		}
		b = &s
	}
	u, err := Parse(ref, b)
	if err != nil {
		return nil, err
	}
	return u.URL(), nil
}

// isC0OrSpace reports whether c is a C0 control or space, which the URL
// Standard strips from both ends of its input.
func isC0OrSpace(c byte) bool { return c <= ' ' }

// cleanInput strips leading and trailing C0 controls and spaces from s,
// and removes ASCII tabs and newlines anywhere in it.
func cleanInput(s string) string {
	i, j := 0, len(s)
	for i < j && isC0OrSpace(s[i]) {
		i++
	}
	for j > i && isC0OrSpace(s[j-1]) {
		j--
	}
	s = s[i:j]
	if tabOrNewline.index(s) >= 0 {
		var b strings.Builder
		b.Grow(len(s))
		for k := range len(s) {
			if c := s[k]; c != '\t' && c != '\n' && c != '\r' {
				b.WriteByte(c)
			}
		}
		s = b.String()
	}
	return s
}

// Parse parses input against base (nil for none) as the URL Standard's
// basic URL parser does, for a result with the special scheme http or
// https. Other schemes are refused with ErrNotHTTP.
func Parse(input string, base *URL) (URL, error) {
	s := cleanInput(ValidUTF8(input))
	var u URL
	// Scheme state: a scheme is an ASCII letter then letters, digits,
	// "+", "-" and ".", ended by ":".
	scheme, rest, hasScheme := "", s, false
	if s != "" && isAlpha(s[0]) {
		for i := 1; i < len(s); i++ {
			c := s[i]
			if c == ':' {
				scheme, rest, hasScheme = LowerASCII(s[:i]), s[i+1:], true
				break
			}
			if !isAlpha(c) && !('0' <= c && c <= '9') && c != '+' && c != '-' && c != '.' {
				break
			}
		}
	}
	switch {
	case hasScheme && scheme != "http" && scheme != "https":
		return u, ErrNotHTTP
	case hasScheme && base != nil && base.scheme == scheme && !strings.HasPrefix(rest, "//"):
		// Special relative or authority state: "http:foo" against an
		// http base is relative to it.
		u.scheme = scheme
		return u, parseRelative(&u, rest, base)
	case hasScheme:
		// Special authority slashes, then ignore slashes state.
		u.scheme = scheme
		return u, parseAuthority(&u, strings.TrimLeft(rest, "/\\"))
	case base == nil:
		return u, errURLFailure
	}
	u.scheme = base.scheme
	return u, parseRelative(&u, s, base)
}

// parseRelative is the relative state, and what follows it, of a URL
// whose scheme is base's.
func parseRelative(u *URL, s string, base *URL) error {
	if s != "" && (s[0] == '/' || s[0] == '\\') {
		if len(s) > 1 && (s[1] == '/' || s[1] == '\\') {
			// Relative slash, then special authority ignore slashes
			// state.
			return parseAuthority(u, strings.TrimLeft(s, "/\\"))
		}
		u.host = base.host
		parsePathQuery(u, "", s)
		return nil
	}
	u.host = base.host
	switch {
	case s == "" || s[0] == '#':
		u.path, u.query, u.hasQuery = base.path, base.query, base.hasQuery
	case s[0] == '?':
		u.path = base.path
		parsePathQuery(u, base.path, s)
	default:
		// Shorten the base's path: drop its last segment.
		p := base.path[:strings.LastIndexByte(base.path, '/')]
		parsePathQuery(u, p, "/"+s)
	}
	return nil
}

// parseAuthority is the authority state, and what follows it, for s
// after the slashes.
func parseAuthority(u *URL, s string) error {
	end := authorityEnd.index(s)
	if end < 0 {
		end = len(s)
	}
	auth := s[:end]
	if at := strings.LastIndexByte(auth, '@'); at >= 0 {
		// The userinfo is dropped; only an empty host after it fails.
		auth = auth[at+1:]
		if auth == "" {
			return errURLFailure
		}
	}
	// Host state: a colon outside brackets starts the port.
	host, port, hasPort := auth, "", false
	inBrackets := false
	for i := range len(auth) {
		switch auth[i] {
		case '[':
			inBrackets = true
		case ']':
			inBrackets = false
		case ':':
			if !inBrackets {
				host, port, hasPort = auth[:i], auth[i+1:], true
			}
		}
		if hasPort {
			break
		}
	}
	if host == "" {
		return errURLFailure
	}
	h, err := parseHost(host)
	if err != nil {
		return fmt.Errorf("host %q: %w", auth, err)
	}
	if hasPort && port != "" {
		if strings.Trim(port, "0123456789") != "" {
			return fmt.Errorf("host %q: port not a number: %w", auth, errURLFailure)
		}
		p := strings.TrimLeft(port, "0")
		n, _ := strconv.Atoi(p)
		if len(p) > 5 || n > 65535 {
			return fmt.Errorf("host %q: port out of range: %w", auth, errURLFailure)
		}
		switch {
		case n == 80 && u.scheme == "http" || n == 443 && u.scheme == "https":
		case h == host && p == port:
			// Already canonical, the usual case: no new string.
			h = auth[:len(host)+1+len(port)]
		default:
			h += ":" + strconv.Itoa(n)
		}
	}
	u.host = h
	parsePathQuery(u, "", s[end:])
	return nil
}

// parseHost is the URL Standard's host parser for a special URL, with
// the project's stricter domain rules of CanonicalHost: it returns an
// IPv6 address in brackets, compressed; an IPv4 address in dotted
// decimal from any of the Standard's number forms ("0x7f.1" is
// "127.0.0.1"); or a domain made canonical by CanonicalHost.
func parseHost(s string) (string, error) {
	if s[0] == '[' {
		if len(s) < 2 || s[len(s)-1] != ']' || strings.IndexByte(s, '%') >= 0 {
			return "", errURLFailure
		}
		a, err := netip.ParseAddr(s[1 : len(s)-1])
		if err != nil || !a.Is6() || a.Zone() != "" {
			return "", errURLFailure
		}
		return "[" + serializeIPv6(a.As16()) + "]", nil
	}
	if strings.IndexByte(s, '%') >= 0 {
		d, err := url.PathUnescape(s)
		if err != nil {
			// A "%" not followed by two hex digits stays a "%",
			// a forbidden domain code point.
			return "", errURLFailure
		}
		s = d
	}
	if !utf8.ValidString(s) {
		return "", errURLFailure
	}
	h, err := CanonicalHost(s)
	if err != nil {
		return "", errURLFailure
	}
	if endsInNumber(h) && !isDottedDecimal(h) {
		return parseIPv4(h)
	}
	return h, nil
}

// endsInNumber reports whether the last label of the domain h (without
// a trailing dot) is a number of the IPv4 parser: decimal digits, or
// "0x" followed by hex digits.
func endsInNumber(h string) bool {
	last := h[strings.LastIndexByte(h, '.')+1:]
	if last == "" {
		return false
	}
	if strings.Trim(last, "0123456789") == "" {
		return true
	}
	if len(last) >= 2 && last[0] == '0' && (last[1] == 'x' || last[1] == 'X') {
		for i := 2; i < len(last); i++ {
			if !IsHex(last[i]) {
				return false
			}
		}
		return true
	}
	return false
}

// isDottedDecimal reports whether h is an IPv4 address as the URL
// Standard serialises it: four decimal numbers up to 255 without leading
// zeros, so that parseIPv4 would return it unchanged.
func isDottedDecimal(h string) bool {
	for i := range 4 {
		end := strings.IndexByte(h, '.')
		if i == 3 {
			end = len(h)
		}
		if end < 1 || end > 3 || end > 1 && h[0] == '0' {
			return false
		}
		n := 0
		for _, c := range []byte(h[:end]) {
			if c < '0' || c > '9' {
				return false
			}
			n = n*10 + int(c-'0')
		}
		if n > 255 {
			return false
		}
		h = h[min(end+1, len(h)):]
	}
	return h == ""
}

// parseIPv4 is the URL Standard's IPv4 parser, for a host without a
// trailing dot: up to four parts, each decimal, octal (a leading "0") or
// hex ("0x"), the last filling the bytes the others leave.
func parseIPv4(h string) (string, error) {
	parts := strings.Split(h, ".")
	if len(parts) > 4 {
		return "", errURLFailure
	}
	var nums [4]uint64
	for i, p := range parts {
		n, ok := parseIPv4Number(p)
		if !ok {
			return "", errURLFailure
		}
		nums[i] = n
	}
	last := len(parts) - 1
	for i := range last {
		if nums[i] > 255 {
			return "", errURLFailure
		}
	}
	if nums[last] >= 1<<(8*(5-len(parts))) {
		return "", errURLFailure
	}
	v := nums[last]
	for i := range last {
		v += nums[i] << (8 * (3 - i))
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}).String(), nil
}

// parseIPv4Number is the URL Standard's IPv4 number parser. A number
// past 2^32 reports that it is too big by returning 2^32.
func parseIPv4Number(p string) (uint64, bool) {
	if p == "" {
		return 0, false
	}
	radix := uint64(10)
	switch {
	case len(p) >= 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'):
		p, radix = p[2:], 16
	case len(p) >= 2 && p[0] == '0':
		p, radix = p[1:], 8
	}
	var n uint64
	for i := range len(p) {
		c := p[i]
		var d uint64
		switch {
		case '0' <= c && c <= '9':
			d = uint64(c - '0')
		case 'a' <= c && c <= 'f':
			d = uint64(c-'a') + 10
		case 'A' <= c && c <= 'F':
			d = uint64(c-'A') + 10
		default:
			return 0, false
		}
		if d >= radix {
			return 0, false
		}
		if n = n*radix + d; n > 1<<32 {
			n = 1 << 32
		}
	}
	return n, true
}

// serializeIPv6 is the URL Standard's IPv6 serialiser: pieces in lower-case
// hex without leading zeros, the first longest run of two or more zero
// pieces compressed to "::".
func serializeIPv6(a [16]byte) string {
	var pieces [8]uint16
	for i := range pieces {
		pieces[i] = uint16(a[2*i])<<8 | uint16(a[2*i+1])
	}
	start, length := -1, 1
	for i := 0; i < 8; {
		if pieces[i] != 0 {
			i++
			continue
		}
		j := i
		for j < 8 && pieces[j] == 0 {
			j++
		}
		if j-i > length {
			start, length = i, j-i
		}
		i = j
	}
	var b strings.Builder
	for i := 0; i < 8; i++ {
		if i == start {
			if i == 0 {
				b.WriteString("::")
			} else {
				b.WriteByte(':')
			}
			i += length - 1
			continue
		}
		b.WriteString(strconv.FormatUint(uint64(pieces[i]), 16))
		if i < 7 {
			b.WriteByte(':')
		}
	}
	return b.String()
}

// Percent-encode sets of the URL Standard, as bit masks over the ASCII
// bytes; every byte past 0x7E is in each of them (the C0 control
// percent-encode set).
const (
	setC0       = 1 << iota
	setFragment // C0 and space " < > `
	setQuery    // C0 and space " # < >
	setSpecialQ // query and '
	setPath     // query and ? ^ ` { }
)

var encodeSets = func() (t [128]uint8) {
	for c := range 0x20 {
		t[c] = setC0 | setFragment | setQuery | setSpecialQ | setPath
	}
	t[0x7f] = setC0 | setFragment | setQuery | setSpecialQ | setPath
	for _, c := range " \"<>`" {
		t[c] |= setFragment
	}
	for _, c := range " \"#<>" {
		t[c] |= setQuery | setSpecialQ | setPath
	}
	t['\''] |= setSpecialQ
	for _, c := range "?^`{}" {
		t[c] |= setPath
	}
	return t
}()

// inSet reports whether c is in the percent-encode set.
func inSet(c byte, set uint8) bool {
	return c >= 0x80 || encodeSets[c]&set != 0
}

// parsePathQuery is the path state of a special URL for s, which starts
// with "/" or "\" or is empty, appending its segments to the serialised
// path p, then the query state; the fragment is dropped. It sets u.path,
// and u.query and u.hasQuery if s holds a query.
func parsePathQuery(u *URL, p string, s string) {
	if frag := strings.IndexByte(s, '#'); frag >= 0 {
		s = s[:frag]
	}
	var query string
	hasQuery := false
	if q := strings.IndexByte(s, '?'); q >= 0 {
		s, query, hasQuery = s[:q], s[q+1:], true
	}
	if s != "" || p == "" {
		u.path = appendPath(p, s)
	} else {
		u.path = p
	}
	if hasQuery {
		u.query, u.hasQuery = encodeQuery(query), true
	}
}

// appendPath appends the segments of s (empty, or starting with a slash)
// to the serialised path p, resolving dot segments, and returns the
// path, never empty.
func appendPath(p, s string) string {
	if s == "" {
		s = "/"
	}
	if p == "" && isPlainPath(s) {
		// The common case of a path with nothing to encode or resolve
		// costs no new string.
		return s
	}
	b := make([]byte, 0, len(p)+len(s)+8)
	b = append(b, p...)
	s = s[1:]
	for {
		end := slashes.index(s)
		seg, more := s, false
		if end >= 0 {
			seg, s, more = s[:end], s[end+1:], true
		}
		switch {
		case isDoubleDot(seg):
			if i := lastSlash(b); i >= 0 {
				b = b[:i]
			}
			if !more {
				b = append(b, '/')
			}
		case isSingleDot(seg):
			if !more {
				b = append(b, '/')
			}
		default:
			b = append(b, '/')
			b = appendEncoded(b, seg, setPath)
		}
		if !more {
			break
		}
	}
	if len(b) == 0 {
		return "/"
	}
	return string(b)
}

func lastSlash(b []byte) int {
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == '/' {
			return i
		}
	}
	return -1
}

// isPlainPath reports whether the path s needs no encoding, no "\"
// turned into "/" and no dot segment resolved.
func isPlainPath(s string) bool {
	for i := range len(s) {
		c := s[i]
		switch {
		case inSet(c, setPath) || c == '\\':
			return false
		case c == '.' && s[i-1] == '/':
			return false
		case c == '%' && i+2 < len(s) && s[i-1] == '/' && (s[i+2] == 'e' || s[i+2] == 'E') && s[i+1] == '2':
			return false
		}
	}
	return true
}

// isSingleDot reports whether seg is a single-dot URL path segment:
// "." or "%2e", case-insensitively.
func isSingleDot(seg string) bool {
	return seg == "." || len(seg) == 3 && seg[0] == '%' && seg[1] == '2' && seg[2]|0x20 == 'e'
}

// isDoubleDot reports whether seg is a double-dot URL path segment: "..",
// ".%2e", "%2e." or "%2e%2e", case-insensitively.
func isDoubleDot(seg string) bool {
	switch len(seg) {
	case 2:
		return seg == ".."
	case 4:
		return seg[0] == '.' && isSingleDot(seg[1:]) || seg[3] == '.' && isSingleDot(seg[:3])
	case 6:
		return isSingleDot(seg[:3]) && isSingleDot(seg[3:])
	}
	return false
}

// appendEncoded appends s to b with the bytes in set percent-encoded; a
// "%" is left as it is, followed by two hex digits or not.
func appendEncoded(b []byte, s string, set uint8) []byte {
	const hex = "0123456789ABCDEF"
	for i := range len(s) {
		c := s[i]
		if inSet(c, set) {
			b = append(b, '%', hex[c>>4], hex[c&15])
			continue
		}
		b = append(b, c)
	}
	return b
}

// encodeQuery percent-encodes the query of a special URL with the
// special-query percent-encode set, in UTF-8.
func encodeQuery(q string) string {
	for i := range len(q) {
		if inSet(q[i], setSpecialQ) {
			return string(appendEncoded(make([]byte, 0, len(q)+16), q, setSpecialQ))
		}
	}
	return q
}

func isAlpha(c byte) bool { return 'a' <= c|0x20 && c|0x20 <= 'z' }

// Normalize rewrites u in place into the form the crawl dedupes on, its
// key (see URL.Key), from which the host key, the scope and the
// robots.txt cache take the host: u's string form parsed anew by the URL
// Standard's basic URL parser (see Resolve), as a browser would parse
// it, so that "HTTP://Example.COM.:80" is "http://example.com/",
// "http://Bücher.example" is "http://xn--bcher-kva.example/",
// "http://0x7f.1/a/./b/../c" is "http://127.0.0.1/a/c" and a space in the
// path is "%20". The userinfo is dropped, so that "http://u@h/p" and
// "http://h/p" are one URL on one host: a crawl's credentials belong in
// WithRequestHook or WithHTTPClient, not in the URLs it finds. The host
// is made canonical as CanonicalHost makes it (one trailing dot removed
// among others). The fragment is dropped. In the path and query,
// percent-encoded unreserved characters are decoded and the hex digits of
// the other escapes upper-cased (RFC 3986, section 6.2.2.2; see
// NormalizePercent), so that "/%7euser" is "/~user" while "/a%3Bb" and
// "/a;b" stay two URLs, and so do "/a%zz" and "/a%25zz". The key is not
// what is sent: the crawler sends the Standard's serialisation of the
// spelling it met first (see Forms). A key net/url cannot hold in Path
// and RawPath ("/a%zz") has its path in Opaque (see URL.SetURL).
//
// A URL the Standard's parser refuses, or whose host CanonicalHost
// refuses (an empty label, a name that fails IDNA, a malformed port), is
// only lower-cased in scheme and host, with userinfo and fragment dropped,
// and scope.contains refuses it: a URL that names no valid host is never
// crawled. Normalize is idempotent.
func Normalize(u *url.URL) {
	if v, err := Parse(RefString(u), nil); err == nil {
		k := v.Keyed()
		k.SetURL(u)
		return
	}
	u.Scheme = strings.ToLower(u.Scheme)
	u.User = nil
	// Trimming a port or a dot here could make another, maybe valid,
	// host: the URL would then be fetched under a second key.
	u.Host = LowerASCII(u.Host)
	u.Fragment, u.RawFragment = "", ""
	if u.Path == "" && u.Opaque == "" && u.Host != "" {
		u.Path, u.RawPath = "/", ""
	}
}

// NewRequest returns a request with method for the URL s as it is sent (a
// Request's wire form), parsed by the URL Standard's parser, and the URL
// as URL.SetURL makes it: a path that net/url refuses or would re-encode
// ("/a%zz", "/a|b") is in the request's URL.Opaque in origin form (see
// originForm), and the request line carries it as written, as a browser's
// does. A URL the Standard's parser refuses is left to
// http.NewRequestWithContext.
func NewRequest(ctx context.Context, method, s string) (*http.Request, *url.URL, error) {
	v, err := Parse(s, nil)
	if err != nil {
		req, err := http.NewRequestWithContext(ctx, method, s, nil)
		if err != nil {
			return nil, nil, err
		}
		u := *req.URL
		return req, &u, nil
	}
	req, err := http.NewRequestWithContext(ctx, method, "/", nil)
	if err != nil {
		return nil, nil, err
	}
	u := v.URL()
	req.URL = new(url.URL)
	*req.URL = *u
	originForm(req.URL)
	req.Host = u.Host
	return req, u, nil
}

// IsHTTP reports whether u is an absolute http(s) URL with a host name.
func IsHTTP(u *url.URL) bool {
	if u.Scheme != "http" && u.Scheme != "https" {
		return false
	}
	// A host name with a colon left in it ("//::" resolves to host "::",
	// whose name is ":") is no host: url.Parse accepts it in a reference
	// but not in the absolute URL it makes. Only an IPv6 literal, in
	// brackets, has colons.
	name := u.Hostname()
	return name != "" && (!strings.Contains(name, ":") || strings.HasPrefix(u.Host, "["))
}
