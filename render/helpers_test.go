package render_test

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/asyncrawl/crawl/crawltest"
)

// publicClient returns a client that dials every host name to site, its
// connections reporting the remote address addrs gives the host, or a
// public one (93.184.216.34): what WithBlockPrivateNetworks checks. It
// counts the dials of each host in dials, when not nil.
func publicClient(site *crawltest.Site, addrs map[string]string, dials *sync.Map) *http.Client {
	var mu sync.Mutex
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		if dials != nil {
			host, _, _ := net.SplitHostPort(addr)
			mu.Lock()
			n, _ := dials.LoadOrStore(host, 0)
			dials.Store(host, n.(int)+1)
			mu.Unlock()
		}
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

// browserTree returns the processes of the browsers that descend from the
// process root, by PID, with their command lines: a test's own browsers,
// whatever the browsers of other tests beside it.
func browserTree(t testing.TB, root int) map[int]string {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	parent := map[int]int{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if len(f) > 1 {
			parent[pid], _ = strconv.Atoi(f[1])
		}
	}
	tree := map[int]string{}
	for pid := range parent {
		p := pid
		for p > 1 && p != root {
			p = parent[p]
		}
		if p != root || pid == root {
			continue
		}
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		if err == nil && strings.Contains(string(b), "chrom") {
			tree[pid] = string(b)
		}
	}
	return tree
}

// alive returns the PIDs of tree that still run the same command line.
func alive(tree map[int]string) []int {
	var pids []int
	for pid, cmdline := range tree {
		if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline"); err == nil && string(b) == cmdline {
			pids = append(pids, pid)
		}
	}
	return pids
}
