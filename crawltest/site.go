// Package crawltest builds fake web sites for the tests of crawlers: a few
// lines declare pages with links, redirects, status codes, content types,
// latency, robots.txt and the traps a crawler meets on the web (an endless
// calendar, a decompression bomb, a server that trickles or stalls, a
// connection reset mid-body), and the site records every request it is sent
// so that a test can assert on what the crawler did.
//
//	site := crawltest.Start(t)
//	site.Page("/", "/a", "/b")
//	site.Page("/a", "/")
//	site.Redirect("/b", http.StatusFound, "/a")
//	site.Handle("/calendar/", crawltest.Calendar())
//	client := site.Client() // any host name reaches the site
//	// ... crawl http://www.example.com/ with client ...
//	if got := site.Count("/a"); got != 1 { ... }
//
// A Site is an [httptest.Server] on loopback. Its [Site.DialContext] and
// [Site.Client] route every host name and port to it, so a test can crawl
// http://www.example.com/ without the internet; [Site.Host] declares
// content for one host name, so that one Site serves several virtual hosts.
//
// The trap handlers ([Calendar], [Bomb], [Trickle], [Stall], [NoResponse],
// [ConnReset], [Truncated], [ManyLinks], [RedirectLoop], [RedirectChain],
// [Repeater]) are plain [http.Handler] values: mount them with [Site.Handle]
// or in any server. Those that hold a request open end when the client goes
// away or the Site closes, so that no goroutine outlives [Site.Close].
//
// [Maze] replicates the 64 cases of Google's security-crawl-maze that need
// no script, [JSMaze] the 27 that need one (a browser that runs the pages'
// scripts and clicks), and [FullMaze] serves both on one site: each records
// which cases' targets a crawler requested.
//
// The package depends on the standard library only; it does not import the
// crawler, so the crawler's own tests can use it.
package crawltest

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Site is a fake web site served on loopback: content declared with Page,
// Body, Redirect, Handle and Robots (for every host name) or through Host
// (for one), and a record of every request it was sent.
//
// All methods of a Site, and of the Host and Route values it returns, are
// safe for concurrent use, also while the Site serves requests: a test may
// change a page between two crawls.
type Site struct {
	srv    *httptest.Server
	addr   string             // the listener's address, host:port
	cancel context.CancelFunc // cancels every request's context at Close
	close  sync.Once

	mu         sync.Mutex
	any        *Host            // routes for every host name
	hosts      map[string]*Host // by hostKey
	latency    time.Duration    // added to every request
	transports []*http.Transport
	rec        recorder
}

// New starts a Site on a loopback port. The caller must call Close when
// done; in a test, Start does that at the end of the test. New panics if
// it cannot listen, as httptest.NewServer does.
func New() *Site {
	s := &Site{hosts: map[string]*Host{}}
	s.any = &Host{site: s, routes: map[string]*Route{}}
	s.rec.init()
	base, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	// Every request's context derives from base, so that Close ends the
	// handlers that hold a request open (Trickle, Stall, NoResponse) and
	// the server's Close, which waits for them, returns.
	s.srv.Config.BaseContext = func(net.Listener) context.Context { return base }
	s.srv.Start()
	s.addr = s.srv.Listener.Addr().String()
	return s
}

// Start starts a Site on a loopback port and closes it when tb and its
// subtests have completed.
func Start(tb testing.TB) *Site {
	tb.Helper()
	s := New()
	tb.Cleanup(s.Close)
	return s
}

// Close ends the requests in flight, shuts the server down, waits for its
// handlers to return and closes the idle connections of the clients made
// by Client. A request still in flight ends without a complete response:
// its context is cancelled and its connection closed, so the client sees
// an error, not a short page, and a handler of Handle that ignores its
// context ends at its next write. Close may be called more than once.
func (s *Site) Close() {
	s.close.Do(func() {
		s.cancel()
		// A handler blocked writing to a client that does not read
		// ignores its context; closing the connections fails its write.
		s.srv.CloseClientConnections()
		s.srv.Close()
		s.mu.Lock()
		trs := s.transports
		s.transports = nil
		s.mu.Unlock()
		for _, tr := range trs {
			tr.CloseIdleConnections()
		}
	})
}

// Addr returns the host:port the Site listens on, such as
// "127.0.0.1:41703".
func (s *Site) Addr() string { return s.addr }

// URL returns the URL of path on the Site's own address, such as
// "http://127.0.0.1:41703/a". Path should start with "/"; it may carry a
// query. Any http.Client reaches this URL; for another host name use
// Host(name).URL and a client that dials through DialContext.
func (s *Site) URL(path string) string { return "http://" + s.addr + path }

// DialContext connects to the Site whatever the address: every host name
// and port reach it. It has the signature of http.Transport.DialContext and
// accepts the networks "tcp", "tcp4" and "tcp6".
func (s *Site) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	switch network {
	case "tcp", "tcp4", "tcp6":
	default:
		return nil, fmt.Errorf("crawltest: dial %s %s: network not supported", network, addr)
	}
	var d net.Dialer
	return d.DialContext(ctx, "tcp", s.addr)
}

// Client returns a new http.Client whose Transport dials every host name
// through DialContext, so that http://www.example.com/ is served by the
// Site. The Transport is its own (not http.DefaultTransport), uses no proxy
// whatever the environment says, and keeps connections alive as browsers
// do; their goroutines remain until CloseIdleConnections or Close, which
// matters to a test that counts goroutines. The Site speaks plain HTTP: an
// https URL fails its TLS handshake.
func (s *Site) Client() *http.Client {
	tr := &http.Transport{
		DialContext:         s.DialContext,
		MaxIdleConnsPerHost: 64,
		IdleConnTimeout:     30 * time.Second,
	}
	s.mu.Lock()
	s.transports = append(s.transports, tr)
	s.mu.Unlock()
	return &http.Client{Transport: tr}
}

// Host returns the virtual host name: routes declared through it serve
// requests whose Host header names it, before the routes declared on the
// Site for every host. Name is compared without its port and without
// regard to case, so Host("a.example") serves http://A.example:8080/ too.
// Host returns the same *Host for the same name; calling it only to read
// Peak or Requests declares nothing. Host panics if name is empty.
func (s *Site) Host(name string) *Host {
	key := hostKey(name)
	if key == "" {
		panic("crawltest: empty host name")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.hosts[key]
	if h == nil {
		h = &Host{site: s, name: key, routes: map[string]*Route{}}
		s.hosts[key] = h
	}
	return h
}

// Latency makes every request to the Site, whatever its host and path,
// wait d before it is answered, on top of any latency of its Host and
// Route. Zero removes it.
func (s *Site) Latency(d time.Duration) {
	s.mu.Lock()
	s.latency = d
	s.mu.Unlock()
}

// Page declares an HTML page at path, for every host name, whose body links
// to each of links in an <a href>, in order and HTML-escaped: a link may be
// absolute, relative or anything else a page can hold. The page is served
// as 200 text/html; charset=utf-8 unless its Route says otherwise.
//
// A path ending in "/" serves that path and every path under it that has
// no route of its own, like http.ServeMux, except "/", which serves only
// the root: a home page that answered every path would hide every 404. Any
// other path serves only itself. A path with a query ("/search?q=a") serves only that request URI
// and comes before the same path without it. Declaring a path again
// replaces its route. Page panics if path does not start with "/".
func (s *Site) Page(path string, links ...string) *Route { return s.any.Page(path, links...) }

// Body declares a response at path, for every host name, with the given
// Content-Type and body, sent as they are: a body in windows-1252 or
// Shift_JIS is the bytes of that encoding in a Go string, such as
// "caf\xe9". An empty contentType sends no Content-Type at all (net/http
// does not sniff one). Paths are as for Page.
func (s *Site) Body(path, contentType, body string) *Route {
	return s.any.Body(path, contentType, body)
}

// Redirect declares a redirect at path, for every host name: status code
// and Location: location, sent as given, unresolved and unchecked. An empty
// location sends no Location header; BadLocation is one that does not
// parse. Paths are as for Page.
func (s *Site) Redirect(path string, code int, location string) *Route {
	return s.any.Redirect(path, code, location)
}

// Handle declares h as the handler of path, for every host name: the
// escape hatch for any response the other methods cannot declare, and the
// way to mount the trap handlers. Paths are as for Page.
func (s *Site) Handle(path string, h http.Handler) *Route { return s.any.Handle(path, h) }

// Robots declares /robots.txt, for every host name, as text/plain with the
// given body. Without it /robots.txt is a 404, which allows everything.
func (s *Site) Robots(body string) *Route { return s.any.Robots(body) }

// serve records the request, finds its route and answers it.
func (s *Site) serve(w http.ResponseWriter, r *http.Request) {
	key := hostKey(r.Host)
	s.begin(r, key)
	defer s.end(key)
	h, wait := s.resolve(key, r)
	if !sleep(r.Context(), wait) {
		// The client left or the Site is closing: no answer at all.
		panic(http.ErrAbortHandler)
	}
	h.ServeHTTP(w, r)
}

// resolve returns the handler for r and how long to wait before running
// it: the host's route first, then the Site's, then a 404.
func (s *Site) resolve(key string, r *http.Request) (http.Handler, time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	wait := s.latency
	var rt *Route
	if h := s.hosts[key]; h != nil {
		wait += h.latency
		rt = h.match(r.URL)
	}
	if rt == nil {
		rt = s.any.match(r.URL)
	}
	if rt == nil {
		return http.HandlerFunc(http.NotFound), wait
	}
	h, d := rt.next()
	return h, wait + d
}

// sleep waits d or until ctx is done, and reports whether it waited d.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// hostKey returns a host name as the Site compares it: without its port
// or IPv6 brackets, in lower case.
func hostKey(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	return strings.ToLower(host)
}
