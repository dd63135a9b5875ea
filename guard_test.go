package crawl_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/asyncrawl/crawl"
	"github.com/asyncrawl/crawl/crawltest"
)

// guardServer is a server on loopback that counts the connections and
// requests it gets.
type guardServer struct {
	*httptest.Server
	conns, reqs atomic.Int64
}

// startGuardServer starts a guardServer listening on addr ("127.0.0.1:0",
// "[::1]:0"), or returns nil if it cannot listen there.
func startGuardServer(t *testing.T, addr string) *guardServer {
	t.Helper()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil
	}
	s := &guardServer{}
	s.Server = &httptest.Server{
		Listener: l,
		Config: &http.Server{
			Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				s.reqs.Add(1)
				if r.URL.Path == "/robots.txt" {
					http.NotFound(w, r)
					return
				}
				w.Header().Set("Content-Type", "text/html")
				fmt.Fprint(w, "<p>inside</p>")
			}),
			ConnState: func(_ net.Conn, st http.ConnState) {
				if st == http.StateNew {
					s.conns.Add(1)
				}
			},
		},
	}
	s.Start()
	t.Cleanup(s.Close)
	return s
}

// guardNoDNS is a resolver that reads the hosts file and fails every DNS
// query at once, so that a test resolves the way Go does without sending
// a query off the machine.
var guardNoDNS = &net.Resolver{
	PreferGo: true,
	Dial: func(context.Context, string, string) (net.Conn, error) {
		return nil, errors.New("no DNS in tests")
	},
}

// guardClient returns a client of a transport with its own dialer, which
// resolves through guardNoDNS, and no idle connections.
func guardClient() *http.Client {
	d := &net.Dialer{Resolver: guardNoDNS}
	return &http.Client{Transport: &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true}}
}

func TestBlockPrivateNetworksSpellings(t *testing.T) {
	v4 := startGuardServer(t, "127.0.0.1:0")
	v6 := startGuardServer(t, "[::1]:0")
	port := func(s *guardServer) string { return strconv.Itoa(s.Listener.Addr().(*net.TCPAddr).Port) }
	for _, tc := range []struct {
		host string // the URL's host, without its port
		v6   bool   // on the IPv6 server
		// resolves says whether the crawl, with the guard off, reaches
		// the server: the numeric forms of inet_aton are IPv4
		// addresses to the URL Standard's host parser, which urlstd.Normalize
		// turns into the dotted literal.
		resolves bool
	}{
		{"127.0.0.1", false, true},
		{"2130706433", false, true},
		{"0x7f.1", false, true},
		{"0x7f000001", false, true},
		{"127.1", false, true},
		{"0177.0.0.1", false, true},
		{"127.0.0.1.", false, true}, // urlstd.Normalize removes the trailing dot: the IP literal
		{"[::ffff:127.0.0.1]", false, true},
		{"[::ffff:7f00:1]", false, true},
		{"localhost", false, true},
		{"[::1]", true, true},
	} {
		srv := v4
		if tc.v6 {
			srv = v6
		}
		if srv == nil {
			t.Logf("%s: no IPv6 loopback, skipped", tc.host)
			continue
		}
		root := "http://" + tc.host + ":" + port(srv) + "/"
		t.Run(tc.host, func(t *testing.T) {
			for _, mode := range []struct {
				name string
				opts []crawl.Option
			}{
				{"off", []crawl.Option{crawl.WithHTTPClient(guardClient()), crawl.WithRobots(false)}},
				// The crawler's own transport: the dialer's Control
				// refuses before connecting, robots.txt first.
				{"on", []crawl.Option{crawl.WithBlockPrivateNetworks(true)}},
				// A caller's transport with its own dialer: refused
				// before the dialer is called.
				{"on, caller's dialer", []crawl.Option{crawl.WithHTTPClient(guardClient()), crawl.WithRobots(false), crawl.WithBlockPrivateNetworks(true)}},
			} {
				t.Run(mode.name, func(t *testing.T) {
					srv.conns.Store(0)
					srv.reqs.Store(0)
					opts := append([]crawl.Option{crawl.WithMaxTries(3), crawl.WithBackoff(0, 0)}, mode.opts...)
					stats, res, err := crawlSite(t, context.Background(), []string{root}, opts...)
					if err != nil {
						t.Fatalf("Run(%s): %v", root, err)
					}
					if len(res) != 1 {
						t.Fatalf("got Results for %v, want one for %s", res, root)
					}
					var r crawl.Result
					for _, r = range res {
					}
					blocked := errors.Is(r.Err, crawl.ErrBlockedAddress)
					if mode.name == "off" {
						if blocked {
							t.Errorf("Err: got %v, want no ErrBlockedAddress with the guard off", r.Err)
						}
						if reached := srv.reqs.Load() > 0; reached != tc.resolves {
							t.Errorf("server reached: got %v, want %v (Err %v)", reached, tc.resolves, r.Err)
						}
						return
					}
					if !blocked {
						t.Errorf("Err: got %v, want ErrBlockedAddress", r.Err)
					}
					if got := stats.FailKinds["blocked"]; got != 1 {
						t.Errorf("Stats.FailKinds: got %v, want blocked: 1", stats.FailKinds)
					}
					if r.Tries > 1 {
						t.Errorf("Tries: got %d, want at most 1 (a blocked address is not retried)", r.Tries)
					}
					if n := srv.conns.Load(); n != 0 {
						t.Errorf("server saw %d connections, want 0", n)
					}
				})
			}
		})
	}
}

// guardRoute returns a client that connects every host name to site, as a
// resolver and dialer would, and reports the remote address that addrs
// gives for the host name (the address the name resolved to) instead of
// the loopback one; a name addrs does not know keeps its real address. It
// makes a new connection for each request, and counts the dials in dials.
func guardRoute(site *crawltest.Site, dials *atomic.Int64, addrs func(host string) string) *http.Client {
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		conn, err := site.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		host, port, _ := net.SplitHostPort(addr)
		if ip := addrs(host); ip != "" {
			p, _ := strconv.Atoi(port)
			return guardRemote{conn, &net.TCPAddr{IP: net.ParseIP(ip), Port: p}}, nil
		}
		return conn, nil
	}
	return &http.Client{Transport: &http.Transport{DialContext: dial, DisableKeepAlives: true}}
}

// guardRemote is a connection that reports another remote address.
type guardRemote struct {
	net.Conn
	remote net.Addr
}

func (c guardRemote) RemoteAddr() net.Addr { return c.remote }

func TestBlockPrivateNetworksRedirects(t *testing.T) {
	site := crawltest.Start(t)
	resolve := map[string]string{
		"public.example":   "93.184.216.34",
		"a.public.example": "10.1.2.3",
		"b.public.example": "169.254.169.254",
		"c.public.example": "fd00::1",
		"d.public.example": "::ffff:192.168.0.1",
		"e.public.example": "93.184.216.35",
	}
	home := site.Host("public.example")
	home.Page("/", "/r/a", "/r/b", "/r/c", "/r/d", "/r/e", "/hop")
	for _, h := range []string{"a", "b", "c", "d", "e"} {
		home.Redirect("/r/"+h, http.StatusFound, "http://"+h+".public.example/landing")
		site.Host(h + ".public.example").Page("/landing")
	}
	// Two hops on the public host, then a private one.
	home.Redirect("/hop", http.StatusMovedPermanently, "/hop2")
	home.Redirect("/hop2", http.StatusFound, "http://a.public.example/deep")
	site.Host("a.public.example").Page("/deep")

	for _, on := range []bool{false, true} {
		t.Run(fmt.Sprintf("guard %v", on), func(t *testing.T) {
			site.Reset()
			var dials atomic.Int64
			client := guardRoute(site, &dials, func(h string) string { return resolve[h] })
			_, res, err := crawlSite(t, context.Background(), []string{"http://public.example/"},
				crawl.WithHTTPClient(client), crawl.WithBlockPrivateNetworks(on), crawl.WithLenientHosts(true),
				crawl.WithRobots(false), crawl.WithMaxTries(2), crawl.WithBackoff(0, 0))
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			for _, u := range []string{"http://public.example/", "http://public.example/r/a", "http://public.example/hop", "http://public.example/hop2", "http://e.public.example/landing"} {
				if r, ok := res[u]; !ok || r.Err != nil {
					t.Errorf("%s: got Result %+v (present %v), want one without Err", u, r, ok)
				}
			}
			for _, h := range []string{"a", "b", "c", "d"} {
				name := h + ".public.example"
				u := "http://" + name + "/landing"
				r, ok := res[u]
				if !ok {
					t.Errorf("%s: no Result", u)
					continue
				}
				if got := errors.Is(r.Err, crawl.ErrBlockedAddress); got != on {
					t.Errorf("%s (resolves to %s): got Err %v, want ErrBlockedAddress %v", u, resolve[name], r.Err, on)
				}
				want := 1
				if on {
					want = 0
				}
				if got := site.Host(name).Count("/landing"); got != want {
					t.Errorf("%s saw /landing %d times, want %d", name, got, want)
				}
			}
			if r := res["http://a.public.example/deep"]; errors.Is(r.Err, crawl.ErrBlockedAddress) != on {
				t.Errorf("third hop: got Err %v, want ErrBlockedAddress %v", r.Err, on)
			}
			if on && res["http://a.public.example/landing"].Tries != 1 {
				t.Errorf("Tries: got %d, want 1 (a blocked address is not retried)", res["http://a.public.example/landing"].Tries)
			}
		})
	}
}

func TestBlockPrivateNetworksRebinding(t *testing.T) {
	site := crawltest.Start(t)
	site.Page("/", "/next")
	site.Page("/next")
	for _, on := range []bool{false, true} {
		t.Run(fmt.Sprintf("guard %v", on), func(t *testing.T) {
			site.Reset()
			// The name resolves to a public address the first time, and
			// to loopback ever after.
			var dials atomic.Int64
			client := guardRoute(site, &dials, func(string) string {
				if dials.Load() == 1 {
					return "93.184.216.34"
				}
				return "127.0.0.1"
			})
			_, res, err := crawlSite(t, context.Background(), []string{"http://rebind.example/"},
				crawl.WithHTTPClient(client), crawl.WithBlockPrivateNetworks(on), crawl.WithRobots(false))
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if r := res["http://rebind.example/"]; r.Err != nil || r.NumNewURLs != 1 {
				t.Errorf("first request: got Err %v, %d new links, want nil, 1", r.Err, r.NumNewURLs)
			}
			r := res["http://rebind.example/next"]
			if got := errors.Is(r.Err, crawl.ErrBlockedAddress); got != on {
				t.Errorf("second request: got Err %v, want ErrBlockedAddress %v", r.Err, on)
			}
			want := 1
			if on {
				want = 0
			}
			if got := site.Count("/next"); got != want {
				t.Errorf("server saw /next %d times, want %d", got, want)
			}
		})
	}
}

func TestBlockPrivateNetworksRobots(t *testing.T) {
	site := crawltest.Start(t)
	site.Page("/")
	var dials atomic.Int64
	client := guardRoute(site, &dials, func(string) string { return "10.0.0.7" })
	stats, res, err := crawlSite(t, context.Background(), []string{"http://intranet.example/"},
		crawl.WithHTTPClient(client), crawl.WithBlockPrivateNetworks(true),
		crawl.WithMaxTries(3), crawl.WithBackoff(time.Millisecond, time.Millisecond))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	r := res["http://intranet.example/"]
	if !errors.Is(r.Err, crawl.ErrBlockedAddress) || !errors.Is(r.Err, crawl.ErrDisallowed) {
		t.Errorf("Err: got %v, want ErrDisallowed and ErrBlockedAddress", r.Err)
	}
	if stats.FailKinds["blocked"] != 1 {
		t.Errorf("Stats.FailKinds: got %v, want blocked: 1", stats.FailKinds)
	}
	// One dial, for robots.txt: not retried, and the page not tried.
	if n := dials.Load(); n != 1 {
		t.Errorf("dials: got %d, want 1", n)
	}
	if n := site.Total(); n != 0 {
		t.Errorf("server saw %d requests, want 0", n)
	}
}

// guardRoundTripper is a RoundTripper that is not an *http.Transport.
type guardRoundTripper struct{}

func (guardRoundTripper) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, errors.New("not used")
}

func TestBlockPrivateNetworksClient(t *testing.T) {
	// A RoundTripper the guard cannot see into makes New fail, only
	// with the guard on.
	other := &http.Client{Transport: guardRoundTripper{}}
	if _, err := crawl.New(crawl.WithHTTPClient(other), crawl.WithBlockPrivateNetworks(true)); err == nil {
		t.Errorf("New with a %T transport and the guard: got nil error, want one", other.Transport)
	}
	if _, err := crawl.New(crawl.WithHTTPClient(other)); err != nil {
		t.Errorf("New with a %T transport: got %v, want nil", other.Transport, err)
	}

	srv := startGuardServer(t, "127.0.0.1:0")
	bare := &http.Transport{DisableKeepAlives: true}
	//lint:ignore SA1019 the deprecated Dial field is guarded too
	dialOnly := &http.Transport{Dial: (&net.Dialer{}).Dial, DisableKeepAlives: true}
	for _, tc := range []struct {
		name   string
		client *http.Client
	}{
		{"nil transport", &http.Client{}},
		{"transport without dialer", &http.Client{Transport: bare}},
		{"transport with Dial", &http.Client{Transport: dialOnly}},
		{"transport with DialContext", guardClient()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv.conns.Store(0)
			_, res, err := crawlSite(t, context.Background(), []string{srv.URL + "/"},
				crawl.WithHTTPClient(tc.client), crawl.WithBlockPrivateNetworks(true), crawl.WithRobots(false))
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if r := res[srv.URL+"/"]; !errors.Is(r.Err, crawl.ErrBlockedAddress) {
				t.Errorf("Err: got %v, want ErrBlockedAddress", r.Err)
			}
			if n := srv.conns.Load(); n != 0 {
				t.Errorf("server saw %d connections, want 0", n)
			}
		})
	}
	// The caller's transport is left as it was: the guard is on a clone.
	if bare.DialContext != nil || dialOnly.DialContext != nil || dialOnly.Dial == nil {
		t.Errorf("the caller's transport was modified")
	}

}
