package crawl

// The private-network guard of WithBlockPrivateNetworks. It judges the
// address a connection is dialled to, not the URL, because only the dial
// sees what a name resolved to: a URL's host may be a name that resolves,
// or rebinds between two requests, to a private address, or a numeric
// spelling of one ("2130706433", "0x7f.1") that a URL check would miss.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"syscall"
)

// ErrBlockedAddress means WithBlockPrivateNetworks refused a connection
// because its address is not on the public internet (loopback, private,
// link-local and the like); the URL was not fetched. The error that wraps
// it names the address.
var ErrBlockedAddress = errors.New("blocked address: not on the public internet")

// blockedNets are the networks the guard refuses: every block that the
// IANA special-purpose address registries mark as not globally reachable,
// with multicast and the reserved and broadcast space. IPv4 addresses
// embedded in IPv6 are judged by blockedAddr as the IPv4 address.
var blockedNets = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),       // "this network", unspecified
	netip.MustParsePrefix("10.0.0.0/8"),      // private, RFC 1918
	netip.MustParsePrefix("100.64.0.0/10"),   // shared address space, CGNAT
	netip.MustParsePrefix("127.0.0.0/8"),     // loopback
	netip.MustParsePrefix("169.254.0.0/16"),  // link-local, cloud metadata
	netip.MustParsePrefix("172.16.0.0/12"),   // private, RFC 1918
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
	netip.MustParsePrefix("192.0.2.0/24"),    // documentation
	netip.MustParsePrefix("192.88.99.0/24"),  // 6to4 relay anycast, deprecated
	netip.MustParsePrefix("192.168.0.0/16"),  // private, RFC 1918
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
	netip.MustParsePrefix("198.51.100.0/24"), // documentation
	netip.MustParsePrefix("203.0.113.0/24"),  // documentation
	netip.MustParsePrefix("224.0.0.0/4"),     // multicast
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved, and broadcast
	netip.MustParsePrefix("::/96"),           // unspecified, loopback, IPv4-compatible
	netip.MustParsePrefix("64:ff9b:1::/48"),  // local-use NAT64
	netip.MustParsePrefix("100::/64"),        // discard-only
	netip.MustParsePrefix("2001::/23"),       // IETF protocol assignments, Teredo
	netip.MustParsePrefix("2001:db8::/32"),   // documentation
	netip.MustParsePrefix("3fff::/20"),       // documentation
	netip.MustParsePrefix("5f00::/16"),       // segment routing SIDs
	netip.MustParsePrefix("fc00::/7"),        // unique local
	netip.MustParsePrefix("fe80::/10"),       // link-local
	netip.MustParsePrefix("fec0::/10"),       // site-local, deprecated
	netip.MustParsePrefix("ff00::/8"),        // multicast
}

// IPv6 blocks that carry an IPv4 address, which decides.
var (
	nat64Net   = netip.MustParsePrefix("64:ff9b::/96") // the IPv4 address in the last 32 bits
	sixToFour  = netip.MustParsePrefix("2002::/16")    // the IPv4 address in bits 16 to 47
	localhost4 = netip.AddrFrom4([4]byte{127, 0, 0, 1})
)

// blockedAddr reports whether the guard refuses ip. An invalid address is
// refused.
func blockedAddr(ip netip.Addr) bool {
	// Prefix.Contains never matches an address with a zone.
	ip = ip.WithZone("").Unmap()
	if !ip.IsValid() {
		return true
	}
	if ip.Is6() {
		a := ip.As16()
		switch {
		case nat64Net.Contains(ip):
			return blockedAddr(netip.AddrFrom4([4]byte(a[12:16])))
		case sixToFour.Contains(ip):
			return blockedAddr(netip.AddrFrom4([4]byte(a[2:6])))
		}
	}
	for _, p := range blockedNets {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// dialFunc is the signature of http.Transport.DialContext.
type dialFunc = func(ctx context.Context, network, addr string) (net.Conn, error)

// guardDial wraps dial with the guard. Before dialling, it refuses a host
// that spells a blocked address, whatever the resolver would make of the
// spelling, and the names of localhost (RFC 6761), so that these never
// reach a resolver or a caller's dialer. After dialling, it refuses a
// connection whose remote address is blocked, or is not an IP address,
// before anything is sent on it: the check that catches names, and with it
// DNS rebinding, when dial is not a net.Dialer with controlAddr.
func guardDial(dial dialFunc) dialFunc {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			host = addr
		}
		if ip, ok := hostAddr(host); ok && blockedAddr(ip) {
			return nil, fmt.Errorf("dial %s %s: host is %v: %w", network, addr, ip, ErrBlockedAddress)
		}
		conn, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		ip, ok := remoteIP(conn)
		if !ok {
			remote := conn.RemoteAddr()
			conn.Close()
			return nil, fmt.Errorf("dial %s %s: remote address %v is not an IP address: %w", network, addr, remote, ErrBlockedAddress)
		}
		if blockedAddr(ip) {
			conn.Close()
			return nil, fmt.Errorf("dial %s %s: connected to %v: %w", network, addr, ip, ErrBlockedAddress)
		}
		return conn, nil
	}
}

// controlAddr is the net.Dialer Control function of the guard: it refuses
// an address after the name is resolved and before the socket connects.
// The dialer names the address in the error it wraps this one in.
func controlAddr(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil || blockedAddr(ap.Addr()) {
		return ErrBlockedAddress
	}
	return nil
}

// remoteIP returns the IP address conn is connected to, and false if its
// remote address is not an IP address.
func remoteIP(conn net.Conn) (netip.Addr, bool) {
	switch a := conn.RemoteAddr().(type) {
	case nil:
		return netip.Addr{}, false
	case *net.TCPAddr:
		ip, ok := netip.AddrFromSlice(a.IP)
		return ip, ok
	default:
		ap, err := netip.ParseAddrPort(a.String())
		return ap.Addr(), err == nil
	}
}

// hostAddr returns the address that a host spells without a lookup, and
// whether it spells one: an IP literal, with or without a zone, a
// localhost name, or one of the numeric IPv4 forms of inet_aton that some
// resolvers and every browser accept ("2130706433", "0x7f.1", "127.1",
// "0177.0.0.1"). A single trailing dot is ignored, as a resolver does.
func hostAddr(host string) (netip.Addr, bool) {
	host = strings.TrimSuffix(host, ".")
	if ip, err := netip.ParseAddr(host); err == nil {
		return ip, true
	}
	if lower := strings.ToLower(host); lower == "localhost" || strings.HasSuffix(lower, ".localhost") {
		return localhost4, true
	}
	return inetAton(host)
}

// inetAton parses the numeric IPv4 forms of inet_aton(3): one to four
// parts separated by dots, each decimal, octal with a leading 0, or hex
// with a leading 0x; the last part fills the bytes the others leave.
func inetAton(s string) (netip.Addr, bool) {
	parts := strings.Split(s, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	var v uint64
	for i, p := range parts {
		base := 10
		switch {
		case len(p) >= 2 && (p[:2] == "0x" || p[:2] == "0X"):
			base, p = 16, p[2:]
			if p == "" {
				p = "0"
			}
		case len(p) >= 2 && p[0] == '0':
			base = 8
		}
		if p == "" || p[0] == '+' || p[0] == '-' {
			return netip.Addr{}, false
		}
		n, err := strconv.ParseUint(p, base, 32)
		if err != nil {
			return netip.Addr{}, false
		}
		if i < len(parts)-1 {
			if n > 0xff {
				return netip.Addr{}, false
			}
			v |= n << (8 * (3 - i))
			continue
		}
		if bits := 8 * (4 - i); bits < 32 && n >= 1<<bits {
			return netip.Addr{}, false
		}
		v |= n
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

// guardTransport returns a clone of rt, which must be an *http.Transport
// or nil (http.DefaultTransport), with the guard on its dialers. A
// transport without a dialer of its own gets a net.Dialer that checks each
// address before it connects; its own dialers are kept and their
// connections checked once made.
func guardTransport(rt http.RoundTripper) (*http.Transport, error) {
	if rt == nil {
		rt = http.DefaultTransport
	}
	t, ok := rt.(*http.Transport)
	if !ok {
		return nil, fmt.Errorf("the client's Transport is a %T, not an *http.Transport: its dialer cannot be guarded", rt)
	}
	t = t.Clone()
	switch {
	case t.DialContext != nil:
		t.DialContext = guardDial(t.DialContext)
	case t.Dial != nil:
		t.DialContext, t.Dial = guardDial(withContext(t.Dial)), nil
	default:
		// The zero net.Dialer is what a Transport without a dialer uses.
		t.DialContext = guardDial((&net.Dialer{Control: controlAddr}).DialContext)
	}
	switch {
	case t.DialTLSContext != nil:
		t.DialTLSContext = guardDial(t.DialTLSContext)
	case t.DialTLS != nil:
		t.DialTLSContext, t.DialTLS = guardDial(withContext(t.DialTLS)), nil
	}
	return t, nil
}

// withContext adapts a dialer of the deprecated Transport.Dial kind.
func withContext(dial func(network, addr string) (net.Conn, error)) dialFunc {
	return func(_ context.Context, network, addr string) (net.Conn, error) {
		return dial(network, addr)
	}
}
