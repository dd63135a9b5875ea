package render_test

import (
	"context"
	"net"
	"net/http"
	"strconv"

	"github.com/asyncrawl/crawl/crawltest"
)

// publicClient returns a client that dials every host name to site, its
// connections reporting the remote address addrs gives the host, or a
// public one (93.184.216.34): what WithBlockPrivateNetworks checks.
func publicClient(site *crawltest.Site, addrs map[string]string) *http.Client {
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := site.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		host, port, _ := net.SplitHostPort(addr)
		ip, ok := addrs[host]
		if !ok {
			ip = "93.184.216.34"
		}
		p, _ := strconv.Atoi(port)
		return remoteConn{conn, &net.TCPAddr{IP: net.ParseIP(ip), Port: p}}, nil
	}
	return &http.Client{Transport: &http.Transport{DialContext: dial, DisableKeepAlives: true}}
}

// remoteConn is a connection that reports another remote address.
type remoteConn struct {
	net.Conn
	remote net.Addr
}

func (c remoteConn) RemoteAddr() net.Addr { return c.remote }
