package crawl_test

import (
	"context"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/asyncrawl/crawl"
)

// site is an httptest server that measures what it was sent: requests per
// path, their order, the headers of each, and the peak number in flight.
// It answers /robots.txt itself and counts it apart from the other
// requests.
type site struct {
	*httptest.Server
	mu       sync.Mutex
	hits     map[string]int // by r.URL.RequestURI()
	order    []string
	headers  map[string]http.Header // last request's headers, by RequestURI
	byHost   map[string]int         // by r.Host + r.URL.Path
	inflight atomic.Int64
	peak     atomic.Int64
	// robots is served as /robots.txt; empty, /robots.txt is a 404.
	// robotsHandler, if set, answers /robots.txt instead. Both are set
	// with setRobots, under mu.
	robots        string
	robotsHandler http.Handler
	robotsHits    atomic.Int64
}

// setRobots sets what /robots.txt answers: body, or h if not nil.
func (s *site) setRobots(body string, h http.Handler) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.robots, s.robotsHandler = body, h
}

// newSite starts a measuring server in front of h, closed at the end of the
// test.
func newSite(t testing.TB, h http.Handler) *site {
	t.Helper()
	s := &site{hits: map[string]int{}, headers: map[string]http.Header{}, byHost: map[string]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			// Answered here, and counted apart, so that the tests of
			// other things see only the requests of their pages.
			s.robotsHits.Add(1)
			s.mu.Lock()
			body, h := s.robots, s.robotsHandler
			s.mu.Unlock()
			switch {
			case h != nil:
				h.ServeHTTP(w, r)
			case body == "":
				http.NotFound(w, r)
			default:
				fmt.Fprint(w, body)
			}
			return
		}
		n := s.inflight.Add(1)
		defer s.inflight.Add(-1)
		for {
			p := s.peak.Load()
			if n <= p || s.peak.CompareAndSwap(p, n) {
				break
			}
		}
		s.mu.Lock()
		s.hits[r.URL.RequestURI()]++
		s.order = append(s.order, r.URL.RequestURI())
		s.headers[r.URL.RequestURI()] = r.Header.Clone()
		s.byHost[r.Host+r.URL.Path]++
		s.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// Hits returns how many requests the server saw for a request URI.
func (s *site) Hits(uri string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[uri]
}

// wantHits fails the test unless the server saw exactly want requests for
// a request URI.
func (s *site) wantHits(t testing.TB, uri string, want int) {
	t.Helper()
	if got := s.Hits(uri); got != want {
		t.Errorf("server saw %s %d times, want %d (all requests: %v)", uri, got, want, s.Requested())
	}
}

// Total returns how many requests the server saw.
func (s *site) Total() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.order)
}

// Header returns the headers of the last request for a request URI.
func (s *site) Header(uri string) http.Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.headers[uri]
}

// Requested returns the request URIs the server saw, sorted, each once.
func (s *site) Requested() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Sorted(maps.Keys(s.hits))
}

// HostPaths returns host+path of the requests the server saw, sorted, each
// once: for tests that reach one server under many host names.
func (s *site) HostPaths() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Sorted(maps.Keys(s.byHost))
}

// Peak returns the largest number of requests the server had in flight.
func (s *site) Peak() int64 { return s.peak.Load() }

// htmlPage serves body as text/html in UTF-8.
func htmlPage(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, body)
	}
}

// results collects the Results of a Run through the result hook.
type results struct {
	mu  sync.Mutex
	all []crawl.Result
}

func (c *results) hook(r crawl.Result) {
	c.mu.Lock()
	c.all = append(c.all, r)
	c.mu.Unlock()
}

func (c *results) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.all)
}

// byURL returns the Results keyed by URL, failing the test if any URL has
// more than one.
func (c *results) byURL(t testing.TB) map[string]crawl.Result {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	m := map[string]crawl.Result{}
	for _, r := range c.all {
		if _, dup := m[r.URL]; dup {
			t.Errorf("two Results for %s", r.URL)
		}
		m[r.URL] = r
	}
	return m
}

// urls returns the URLs that got a Result, sorted.
func (c *results) urls() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, r := range c.all {
		out = append(out, r.URL)
	}
	sort.Strings(out)
	return out
}

// crawlSite runs a crawl with opts plus a result hook, checks the
// invariants every crawl keeps (one Result per URL, Stats.Done equal to the
// Results delivered, no goroutine left behind) and returns what it saw.
func crawlSite(t testing.TB, ctx context.Context, roots []string, opts ...crawl.Option) (*crawl.Stats, map[string]crawl.Result, error) {
	t.Helper()
	defer checkNoLeak(t)()
	var got results
	c, err := crawl.New(append(opts, crawl.WithResultHook(got.hook))...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	stats, err := c.Run(ctx, roots...)
	m := got.byURL(t)
	if stats != nil && stats.Done != len(got.all) {
		t.Errorf("Stats.Done = %d, want %d (Results delivered)", stats.Done, len(got.all))
	}
	return stats, m, err
}

// routeAll returns a client whose dialer sends every host name to srv, so
// that a test can crawl http://www.example.com/ offline.
func routeAll(t testing.TB, srv *httptest.Server) *http.Client {
	addr := srv.Listener.Addr().String()
	tr := &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		},
		// No idle connections, so none of their goroutines outlive a Run.
		DisableKeepAlives: true,
	}
	return &http.Client{Transport: tr}
}

// checkNoLeak records the number of goroutines and returns a function that
// fails the test if, after a short settle, there are more.
func checkNoLeak(t testing.TB) func() {
	before := runtime.NumGoroutine()
	return func() {
		t.Helper()
		deadline := time.Now().Add(2 * time.Second)
		for {
			n := runtime.NumGoroutine()
			if n <= before {
				return
			}
			if time.Now().After(deadline) {
				buf := make([]byte, 1<<16)
				buf = buf[:runtime.Stack(buf, true)]
				t.Errorf("goroutines: %d after Run, %d before\n%s", n, before, leakReport(buf))
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// leakReport keeps the stacks that mention the crawl package.
func leakReport(stacks []byte) string {
	var keep []string
	for _, g := range strings.Split(string(stacks), "\n\n") {
		if strings.Contains(g, "asyncrawl/crawl.") {
			keep = append(keep, g)
		}
	}
	return strings.Join(keep, "\n\n")
}
