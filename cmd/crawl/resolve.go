package main

// -resolve HOST:PORT:ADDR, as curl's --resolve: the connections to HOST on
// PORT go to ADDR, without asking DNS. Only the dial changes: the URLs, the
// Host header, a TLS connection's server name, the scope, politeness,
// robots.txt, the report and the archive's target URIs keep the real name.
//
// The command does it all through the crawler's public API: a transport
// wrapper (crawl.WithTransportWrapper) clones the crawler's own transport
// and puts the mapping in front of its dialer. So the transport keeps the
// crawler's tuning, and the private-network guard of -block_private, which
// is that dialer's, judges the address actually dialled: a name mapped to
// loopback or a private address is refused as any such address is. A WARC
// recorder wraps the mapping's transport in turn, dials through it, and so
// records the mapped address as WARC-IP-Address.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"github.com/asyncrawl/crawl"
)

// resolveFlag is the value of the repeatable -resolve: a map from HOST:PORT
// to the address to dial instead. A wildcard HOST, "*.example" or "*", is
// kept under that spelling. Set is not safe for concurrent use; lookup is,
// once the flags are parsed.
type resolveFlag struct {
	to    map[string]string // "host:port" or "*.suffix:port" or "*:port" → "ip:port"
	given []string          // the values, in order, for String
}

func (f *resolveFlag) String() string {
	if f == nil {
		return ""
	}
	return strings.Join(f.given, " ")
}

func (f *resolveFlag) Set(s string) error {
	var host, rest string
	var ok bool
	if inner, v6 := strings.CutPrefix(s, "["); v6 {
		// An IPv6 address as HOST, in brackets as in a URL.
		var lit string
		lit, rest, ok = strings.Cut(inner, "]:")
		ip, err := netip.ParseAddr(lit)
		if !ok || err != nil || !ip.Is6() {
			return fmt.Errorf("HOST %q: want an IPv6 address in brackets, [IPv6]:PORT:ADDR", "["+lit+"]")
		}
		host = ip.String()
	} else {
		host, rest, ok = strings.Cut(s, ":")
	}
	port, addr, ok2 := strings.Cut(rest, ":")
	if !ok || !ok2 {
		return errors.New("want HOST:PORT:ADDR, such as example.com:443:127.0.0.1 or '*.example:80:127.0.0.1:8080'")
	}
	if host == "" {
		return errors.New("HOST is empty: want HOST:PORT:ADDR (an IPv6 address as HOST goes in brackets: [::1]:80:127.0.0.1)")
	}
	if host[0] == '+' || host[0] == '-' {
		return fmt.Errorf("host %q: curl's %c prefix is not taken: give HOST:PORT:ADDR", host, host[0])
	}
	host, err := resolveHost(host)
	if err != nil {
		return err
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 || port != strconv.Itoa(n) {
		return fmt.Errorf("port %q is not a number from 1 to 65535", port)
	}
	to, err := resolveAddr(addr, port)
	if err != nil {
		return err
	}
	key := net.JoinHostPort(host, port)
	if prev, ok := f.to[key]; ok {
		return fmt.Errorf("%s is mapped already, to %s", key, prev)
	}
	if f.to == nil {
		f.to = map[string]string{}
	}
	f.to[key] = to
	f.given = append(f.given, s)
	return nil
}

// resolveHost returns HOST as the URLs the crawler dials spell it (lower
// case, an international name in its xn-- form), "*" or "*." and such a
// name for a wildcard.
func resolveHost(host string) (string, error) {
	if host == "*" {
		return host, nil
	}
	if ip, err := netip.ParseAddr(host); err == nil && ip.Is6() {
		return ip.String(), nil // as a transport dials it, out of its brackets
	}
	if strings.Contains(host, ",") {
		return "", fmt.Errorf("host %q: one HOST an entry (-resolve may be repeated)", host)
	}
	name, wild := strings.CutPrefix(host, "*.")
	if name == "" || strings.ContainsAny(name, "/?#@[]\\*") {
		return "", fmt.Errorf("host %q is not a host name, *.NAME or *", host)
	}
	root, err := crawl.ParseRoot("http://" + name + "/")
	if err != nil {
		return "", fmt.Errorf("host %q is not a host name, *.NAME or *", host)
	}
	u, err := url.Parse(root)
	if err != nil {
		return "", fmt.Errorf("host %q is not a host name, *.NAME or *", host)
	}
	name = strings.TrimSuffix(u.Hostname(), ".")
	if wild {
		return "*." + name, nil
	}
	return name, nil
}

// resolveAddr returns ADDR as "ip:port": ADDR is an IP address, an IPv6
// one in brackets or not, to dial on port, the URL's own; or IP:PORT, an
// IPv6 address then in brackets ("[::1]:8080"), as curl's --resolve reads
// it ("::1:8080" is an IPv6 address).
func resolveAddr(addr, port string) (string, error) {
	bare := addr
	if inner, ok := strings.CutPrefix(addr, "["); ok && strings.HasSuffix(inner, "]") {
		bare = strings.TrimSuffix(inner, "]")
	}
	if ip, err := netip.ParseAddr(bare); err == nil {
		return net.JoinHostPort(ip.String(), port), nil
	}
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		return "", fmt.Errorf("address %q is neither an IP address nor IP:PORT (an IPv6 address with a port in brackets: [::1]:8080)", addr)
	}
	if ap.Port() == 0 {
		return "", fmt.Errorf("address %q: port 0 cannot be connected to", addr)
	}
	return ap.String(), nil
}

// lookup returns the address to dial for addr, a "host:port" as a
// transport dials it, and whether -resolve maps it: an exact HOST first,
// then the wildcard of the longest suffix of the name, then "*".
func (f *resolveFlag) lookup(addr string) (string, bool) {
	if len(f.to) == 0 {
		return "", false
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", false
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if to, ok := f.to[net.JoinHostPort(host, port)]; ok {
		return to, true
	}
	for name := host; ; {
		_, parent, ok := strings.Cut(name, ".")
		if !ok {
			break
		}
		if to, ok := f.to[net.JoinHostPort("*."+parent, port)]; ok {
			return to, true
		}
		name = parent
	}
	to, ok := f.to[net.JoinHostPort("*", port)]
	return to, ok
}

// wrapper returns the transport wrapper of the crawl: outer (a WARC
// recorder's, or nil) over the mapping of -resolve, each left out when it
// has nothing to do, and nil when neither has.
func (f *resolveFlag) wrapper(outer func(http.RoundTripper) http.RoundTripper) func(http.RoundTripper) http.RoundTripper {
	if len(f.to) == 0 {
		return outer
	}
	if outer == nil {
		return f.transport
	}
	return func(rt http.RoundTripper) http.RoundTripper { return outer(f.transport(rt)) }
}

// transport returns a clone of rt, the crawler's own *http.Transport, whose
// dialer connects to the address -resolve maps a host and port to. The
// transport makes its TLS connections over that dialer, naming the server
// by the URL's host, not by the address.
func (f *resolveFlag) transport(rt http.RoundTripper) http.RoundTripper {
	t, ok := rt.(*http.Transport)
	if !ok {
		return failingTransport{fmt.Errorf("-resolve: the transport is a %T, not an *http.Transport: its dialer cannot be changed", rt)}
	}
	t = t.Clone()
	dial := t.DialContext
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if to, ok := f.lookup(addr); ok {
			addr = to
		}
		return dial(ctx, network, addr)
	}
	return t
}

// failingTransport fails every request with its error.
type failingTransport struct{ err error }

func (f failingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		req.Body.Close()
	}
	return nil, f.err
}
