package crawl

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

func TestBlockedAddr(t *testing.T) {
	for _, tc := range []struct {
		addr    string
		blocked bool
	}{
		// Public addresses, some at the edge of a blocked network.
		{"93.184.216.34", false},
		{"8.8.8.8", false},
		{"1.1.1.1", false},
		{"11.0.0.0", false},
		{"100.63.255.255", false},
		{"100.128.0.0", false},
		{"169.253.255.255", false},
		{"172.15.255.255", false},
		{"172.32.0.0", false},
		{"192.167.255.255", false},
		{"198.17.255.255", false},
		{"223.255.255.255", false},
		{"2606:4700:4700::1111", false},
		{"::ffff:93.184.216.34", false},
		{"64:ff9b::5db8:d822", false}, // NAT64 of 93.184.216.34
		{"2002:5db8:d822::1", false},  // 6to4 of 93.184.216.34

		// Blocked IPv4.
		{"0.0.0.0", true},
		{"0.1.2.3", true},
		{"10.0.0.1", true},
		{"10.255.255.255", true},
		{"100.64.0.1", true},
		{"100.127.255.255", true},
		{"127.0.0.1", true},
		{"127.255.255.254", true},
		{"169.254.169.254", true}, // cloud metadata
		{"172.16.0.1", true},
		{"172.31.255.255", true},
		{"192.0.0.170", true},
		{"192.0.2.1", true},
		{"192.168.1.1", true},
		{"198.18.0.1", true},
		{"198.19.255.255", true},
		{"198.51.100.7", true},
		{"203.0.113.9", true},
		{"224.0.0.1", true},
		{"239.255.255.250", true},
		{"240.0.0.1", true},
		{"255.255.255.255", true},

		// Blocked IPv6, and IPv4 inside IPv6.
		{"::", true},
		{"::1", true},
		{"::127.0.0.1", true}, // IPv4-compatible
		{"::ffff:127.0.0.1", true},
		{"::ffff:10.0.0.1", true},
		{"::ffff:169.254.169.254", true},
		{"64:ff9b::7f00:1", true},  // NAT64 of 127.0.0.1
		{"64:ff9b::a00:1", true},   // NAT64 of 10.0.0.1
		{"64:ff9b:1::1", true},     // local-use NAT64
		{"2002:7f00:1::1", true},   // 6to4 of 127.0.0.1
		{"2002:a9fe:a9fe::", true}, // 6to4 of 169.254.169.254
		{"2001::1", true},          // Teredo
		{"2001:db8::1", true},
		{"fc00::1", true},
		{"fd12:3456:789a::1", true},
		{"fe80::1", true},
		{"fe80::1%eth0", true}, // a zone must not hide it
		{"fec0::1", true},
		{"ff02::1", true},
		{"100::1", true},
	} {
		ip := netip.MustParseAddr(tc.addr)
		if got := blockedAddr(ip); got != tc.blocked {
			t.Errorf("blockedAddr(%s): got %v, want %v", tc.addr, got, tc.blocked)
		}
	}
	if !blockedAddr(netip.Addr{}) {
		t.Errorf("blockedAddr(zero Addr): got false, want true")
	}
}

func TestHostAddr(t *testing.T) {
	for _, tc := range []struct {
		host string
		want string // "" when the host spells no address
	}{
		{"127.0.0.1", "127.0.0.1"},
		{"127.0.0.1.", "127.0.0.1"},
		{"2130706433", "127.0.0.1"},
		{"0x7f.1", "127.0.0.1"},
		{"0X7F000001", "127.0.0.1"},
		{"0x7f.0x0.0x0.0x1", "127.0.0.1"},
		{"127.1", "127.0.0.1"},
		{"127.0.1", "127.0.0.1"},
		{"0177.0.0.1", "127.0.0.1"},
		{"0177.1", "127.0.0.1"},
		{"017700000001", "127.0.0.1"},
		{"169.254.43518", "169.254.169.254"},
		{"0xa9fea9fe", "169.254.169.254"},
		{"0", "0.0.0.0"},
		{"0x", "0.0.0.0"},
		{"1.2.3.4", "1.2.3.4"},
		{"::1", "::1"},
		{"::ffff:127.0.0.1", "::ffff:127.0.0.1"},
		{"fe80::1%eth0", "fe80::1%eth0"},
		{"localhost", "127.0.0.1"},
		{"LocalHost", "127.0.0.1"},
		{"localhost.", "127.0.0.1"},
		{"app.localhost", "127.0.0.1"},

		{"", ""},
		{"example.com", ""},
		{"localhost.example.com", ""},
		{"mylocalhost", ""},
		{"1.2.3.4.5", ""},
		{"256.1", ""},
		{"1.16777216", ""},
		{"1.2.65536", ""},
		{"4294967296", ""},
		{"08.1", ""},
		{"1..2", ""},
		{"+1", ""},
		{"0x1g", ""},
		{"1.2.3.com", ""},
	} {
		ip, ok := hostAddr(tc.host)
		got := ""
		if ok {
			got = ip.String()
		}
		if got != tc.want {
			t.Errorf("hostAddr(%q): got %q, %v, want %q", tc.host, got, ok, tc.want)
		}
	}
}

// fakeConn is a connection that says it is connected to remote.
type fakeConn struct {
	net.Conn
	remote net.Addr
	closed bool
}

func (c *fakeConn) RemoteAddr() net.Addr { return c.remote }
func (c *fakeConn) Close() error         { c.closed = true; return nil }

func TestGuardDial(t *testing.T) {
	for _, tc := range []struct {
		name    string
		addr    string
		remote  net.Addr
		dialled bool // the wrapped dialer was called
		blocked bool
	}{
		{"public", "example.com:80", &net.TCPAddr{IP: net.ParseIP("93.184.216.34"), Port: 80}, true, false},
		{"public IPv6", "example.com:80", &net.TCPAddr{IP: net.ParseIP("2606:2800:220:1::"), Port: 80}, true, false},
		{"resolves private", "example.com:80", &net.TCPAddr{IP: net.ParseIP("10.0.0.1"), Port: 80}, true, true},
		{"resolves mapped loopback", "example.com:80", &net.TCPAddr{IP: net.ParseIP("::ffff:127.0.0.1"), Port: 80}, true, true},
		{"not an IP address", "example.com:80", &net.UnixAddr{Name: "/tmp/sock", Net: "unix"}, true, true},
		{"no remote address", "example.com:80", nil, true, true},
		{"other address type", "example.com:80", fakeAddr("10.1.1.1:80"), true, true},
		{"other public address type", "example.com:80", fakeAddr("93.184.216.34:80"), true, false},
		{"literal loopback", "127.0.0.1:80", nil, false, true},
		{"numeric loopback", "2130706433:80", nil, false, true},
		{"localhost", "localhost:8080", nil, false, true},
		{"literal metadata", "169.254.169.254:80", nil, false, true},
		{"no port", "10.0.0.1", nil, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var conn *fakeConn
			dialled := false
			dial := guardDial(func(ctx context.Context, network, addr string) (net.Conn, error) {
				dialled = true
				conn = &fakeConn{remote: tc.remote}
				if tc.remote == nil {
					// A nil *fakeConn field would not be a nil interface.
					return &nilRemote{fakeConn: conn}, nil
				}
				return conn, nil
			})
			c, err := dial(context.Background(), "tcp", tc.addr)
			if dialled != tc.dialled {
				t.Errorf("dialled: got %v, want %v", dialled, tc.dialled)
			}
			if got := errors.Is(err, ErrBlockedAddress); got != tc.blocked {
				t.Fatalf("dial %s to %v: got err %v, want blocked %v", tc.addr, tc.remote, err, tc.blocked)
			}
			if tc.blocked {
				if c != nil {
					t.Errorf("got a connection with the error")
				}
				if conn != nil && !conn.closed {
					t.Errorf("the refused connection was not closed")
				}
			} else if conn.closed {
				t.Errorf("the allowed connection was closed")
			}
		})
	}
}

// fakeAddr is an address of a type the guard does not know.
type fakeAddr string

func (a fakeAddr) Network() string { return "fake" }
func (a fakeAddr) String() string  { return string(a) }

// nilRemote is a connection whose RemoteAddr is a nil interface.
type nilRemote struct{ *fakeConn }

func (c *nilRemote) RemoteAddr() net.Addr { return nil }

func TestControlAddr(t *testing.T) {
	for _, tc := range []struct {
		addr    string
		blocked bool
	}{
		{"93.184.216.34:80", false},
		{"[2606:4700:4700::1111]:443", false},
		{"127.0.0.1:80", true},
		{"[::1]:80", true},
		{"[fe80::1%eth0]:80", true},
		{"169.254.169.254:80", true},
		{"not an address", true},
	} {
		err := controlAddr("tcp", tc.addr, nil)
		if got := errors.Is(err, ErrBlockedAddress); got != tc.blocked {
			t.Errorf("controlAddr(%q): got %v, want blocked %v", tc.addr, err, tc.blocked)
		}
	}
}

// fakeResolver returns a resolver whose DNS server, in memory, answers A
// and AAAA queries for the names of answers, and nothing else.
func fakeResolver(answers map[string]netip.Addr) *net.Resolver {
	return &net.Resolver{
		PreferGo: true,
		Dial: func(context.Context, string, string) (net.Conn, error) {
			client, server := net.Pipe()
			go serveDNS(server, answers)
			return client, nil
		},
	}
}

// serveDNS answers the queries on c, framed as over TCP (a net.Pipe is
// not a PacketConn), until the resolver closes it.
func serveDNS(c net.Conn, answers map[string]netip.Addr) {
	defer c.Close()
	for {
		var n [2]byte
		if _, err := io.ReadFull(c, n[:]); err != nil {
			return
		}
		query := make([]byte, binary.BigEndian.Uint16(n[:]))
		if _, err := io.ReadFull(c, query); err != nil {
			return
		}
		var p dnsmessage.Parser
		h, err := p.Start(query)
		if err != nil {
			return
		}
		q, err := p.Question()
		if err != nil {
			return
		}
		b := dnsmessage.NewBuilder(make([]byte, 2, 514), dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true})
		b.StartQuestions()
		b.Question(q)
		b.StartAnswers()
		rh := dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 60}
		ip, ok := answers[strings.TrimSuffix(q.Name.String(), ".")]
		switch {
		case !ok:
		case q.Type == dnsmessage.TypeA && ip.Is4():
			b.AResource(rh, dnsmessage.AResource{A: ip.As4()})
		case q.Type == dnsmessage.TypeAAAA && ip.Is6():
			b.AAAAResource(rh, dnsmessage.AAAAResource{AAAA: ip.As16()})
		}
		msg, err := b.Finish()
		if err != nil {
			return
		}
		binary.BigEndian.PutUint16(msg, uint16(len(msg)-2))
		if _, err := c.Write(msg); err != nil {
			return
		}
	}
}

// TestControlAddrDial checks the guard where the crawler's own dialer
// applies it: a name resolved to a blocked address is refused after the
// lookup and before the socket connects.
func TestControlAddrDial(t *testing.T) {
	var conns atomic.Int64
	l4, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	listeners := []net.Listener{l4}
	if l6, err := net.Listen("tcp", "[::1]:0"); err == nil {
		listeners = append(listeners, l6)
	}
	var wg sync.WaitGroup
	for _, l := range listeners {
		wg.Go(func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				conns.Add(1)
				c.Close()
			}
		})
	}
	defer wg.Wait()
	for _, l := range listeners {
		defer l.Close()
	}
	resolver := fakeResolver(map[string]netip.Addr{
		"loop.example":   netip.MustParseAddr("127.0.0.1"),
		"loop6.example":  netip.MustParseAddr("::1"),
		"mapped.example": netip.MustParseAddr("::ffff:127.0.0.1"),
	})
	for _, tc := range []struct {
		host string
		l    int // index in listeners
	}{
		{"loop.example", 0},
		{"mapped.example", 0},
		{"loop6.example", 1},
	} {
		if tc.l >= len(listeners) {
			t.Logf("%s: no IPv6 loopback, skipped", tc.host)
			continue
		}
		_, port, _ := net.SplitHostPort(listeners[tc.l].Addr().String())
		addr := net.JoinHostPort(tc.host, port)
		for _, guarded := range []bool{false, true} {
			conns.Store(0)
			d := &net.Dialer{Resolver: resolver, Timeout: 5 * time.Second}
			if guarded {
				d.Control = controlAddr
			}
			c, err := d.DialContext(context.Background(), "tcp", addr)
			if c != nil {
				c.Close()
			}
			if got := errors.Is(err, ErrBlockedAddress); got != guarded {
				t.Errorf("dial %s, guard %v: got %v, want ErrBlockedAddress %v", addr, guarded, err, guarded)
			}
			if !guarded && err != nil {
				continue
			}
			// The listener's accept may lag the dial: wait for the
			// unguarded connection before counting.
			for want := int64(0); !guarded && conns.Load() == want; {
				time.Sleep(time.Millisecond)
			}
			if got, want := conns.Load(), int64(1); guarded && got != 0 || !guarded && got != want {
				t.Errorf("dial %s, guard %v: listener got %d connections", addr, guarded, got)
			}
		}
	}
}
