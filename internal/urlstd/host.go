package urlstd

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// CanonicalHostPort returns the host and port of a URL with the given
// scheme (url.URL.Host, the port optional) in canonical form: the host as
// CanonicalHost makes it, the port without leading zeros, and dropped if
// empty or the scheme's default. It fails for a host CanonicalHost refuses
// and for a port that is not a decimal number up to 65535.
func CanonicalHostPort(hostport, scheme string) (string, error) {
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
	name, err := CanonicalHost(name)
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

// CanonicalHost returns a host name (url.URL.Hostname, but with an IPv6
// literal's brackets) in the one form a crawl knows the host by: mapped to
// ASCII by IDNA ("BÜCHER.example" is "xn--bcher-kva.example", as is
// "XN--BCHER-KVA.example"), lower case, one trailing dot removed
// ("example.com." is "example.com"). An IPv4 address is left as it is, an
// IPv6 literal only lower-cased. It fails for an empty name, for an IPv6
// literal with a zone, for one not in UTF-8, for one that
// fails IDNA (a bad "xn--" label, a disallowed rune), for one with an
// empty label ("a..b", "example.com.."), and for one with a byte other
// than a letter, a digit, "-", "_" or ".", which net's resolver would
// refuse. CanonicalHost(CanonicalHost(h)) is CanonicalHost(h).
func CanonicalHost(name string) (string, error) {
	if strings.HasPrefix(name, "[") {
		a, err := netip.ParseAddr(strings.TrimSuffix(name[1:], "]"))
		if err != nil || !a.Is6() || a.Zone() != "" || !strings.HasSuffix(name, "]") {
			return "", errors.New("not an IPv6 literal")
		}
		return LowerASCII(name), nil
	}
	h := LowerASCII(name)
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

// LowerASCII returns s with its ASCII upper-case letters lower-cased and
// every other byte as it was, valid UTF-8 or not.
func LowerASCII(s string) string {
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
