package crawl_test

import (
	"context"
	"errors"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/asyncrawl/crawl"
)

// uriServer is an httptest server that serves one HTML page of links at
// "/" and an empty page elsewhere, and records the request-target of each
// request as the server read it off the wire.
type uriServer struct {
	*httptest.Server
	mu   sync.Mutex
	uris map[string]int
}

func newURIServer(t *testing.T, page string) *uriServer {
	s := &uriServer{uris: make(map[string]int)}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.uris[r.RequestURI]++
		s.mu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if r.URL.Path == "/" {
			fmt.Fprint(w, page)
		}
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *uriServer) requested() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var uris []string
	for u, n := range s.uris {
		for range n {
			uris = append(uris, u)
		}
	}
	slices.Sort(uris)
	return uris
}

// TestCrawlSendsStandardURLs checks what goes on the wire for links a
// browser would send as the URL Standard's parser serialises them, and
// which of them are one URL, sent as first spelled.
func TestCrawlSendsStandardURLs(t *testing.T) {
	links := []string{
		"/q?x=a b",       // a space in the query: %20
		"/caf\u00e9",     // non-ASCII: UTF-8, percent-encoded
		`/"q"`,           // a quote in the path: %22
		"/a%3Bb", "/a;b", // a reserved escape is not its character: two URLs
		"/a b", "/a%20b", // one URL
		"/%7Euser", "/~user", // an unreserved escape is its character: one URL
		"/x/%2e%2E/d", "/d", // a dot segment spelled with escapes: one URL
		"\\e\\f", " /e/f\t\n ", // backslashes, white space: one URL
		"/a%2fb", "/a%2Fb", // one URL, sent as first spelled; not decoded
	}
	var b strings.Builder
	for _, l := range links {
		fmt.Fprintf(&b, "<a href=\"%s\">x</a>\n", html.EscapeString(l))
	}
	s := newURIServer(t, b.String())
	c, err := crawl.New(crawl.WithRobots(false), crawl.WithMaxDepth(1))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if _, err := c.Run(context.Background(), s.URL+"/"); err != nil {
		t.Fatalf("Run: %v", err)
	}
	want := []string{
		"/", "/%22q%22", "/%7Euser", "/a%20b", "/a%2fb", "/a%3Bb", "/a;b",
		"/caf%C3%A9", "/d", "/e/f", "/q?x=a%20b",
	}
	if got := s.requested(); !slices.Equal(got, want) {
		t.Errorf("requests: got %q, want %q", got, want)
	}
}

// TestPageBaseAndResolve checks Page.Base for a page with and without
// <base href>, and Page.Resolve against it.
func TestPageBaseAndResolve(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		switch r.URL.Path {
		case "/":
			fmt.Fprint(w, `<a href="/plain/p">p</a><a href="/based/p">b</a>`)
		case "/based/p":
			fmt.Fprint(w, `<head><base href="/other/dir/"></head><a href="q">q</a>`)
		}
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	for _, custom := range []bool{false, true} {
		var mu sync.Mutex
		bases := make(map[string]string)
		resolved := make(map[string]string)
		opts := []crawl.Option{crawl.WithRobots(false), crawl.WithMaxDepth(1),
			crawl.WithPageHook(func(p *crawl.Page) {
				u, err := p.Resolve("x y/../z?q=\u00e9#f")
				mu.Lock()
				defer mu.Unlock()
				bases[p.URL.Path] = p.Base.String()
				if err != nil {
					resolved[p.URL.Path] = err.Error()
					return
				}
				resolved[p.URL.Path] = u.String()
			})}
		if custom {
			opts = append(opts, crawl.WithLinkExtractor(crawl.ExtractLinks))
		}
		c, err := crawl.New(opts...)
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		if _, err := c.Run(context.Background(), srv.URL+"/"); err != nil {
			t.Fatalf("Run: %v", err)
		}
		for path, want := range map[string]string{
			"/":        srv.URL + "/",
			"/plain/p": srv.URL + "/plain/p",
			"/based/p": srv.URL + "/other/dir/",
		} {
			if got := bases[path]; got != want {
				t.Errorf("custom extractor %v: Base of %s: got %q, want %q", custom, path, got, want)
			}
			dir := want[:strings.LastIndexByte(want, '/')+1]
			if got, want := resolved[path], dir+"z?q=%C3%A9"; got != want {
				t.Errorf("custom extractor %v: Resolve on %s: got %q, want %q", custom, path, got, want)
			}
		}
	}
}

func TestPageResolve(t *testing.T) {
	page, _ := url.Parse("http://example.com/a/b")
	base, _ := url.Parse("https://other.example/c/")
	for _, tt := range []struct {
		base *url.URL
		ref  string
		want string // "" for an error
	}{
		{nil, "d", "http://example.com/a/d"},
		{base, "d", "https://other.example/c/d"},
		{base, "//x.example", "https://x.example/"},
		{base, "http:d", "http://d/"},
		{nil, "http:d", "http://example.com/a/d"},
		{nil, "mailto:a@example.com", ""},
		{nil, "javascript:void(0)", ""},
		{nil, "http://[::1", ""},
		{nil, "http://h:65536/", ""},
	} {
		p := &crawl.Page{URL: page, Base: tt.base}
		u, err := p.Resolve(tt.ref)
		switch {
		case tt.want == "" && err == nil:
			t.Errorf("Resolve(%q) with Base %v: got %q, want an error", tt.ref, tt.base, u)
		case tt.want != "" && err != nil:
			t.Errorf("Resolve(%q) with Base %v: got error %v, want %q", tt.ref, tt.base, err, tt.want)
		case tt.want != "" && u.String() != tt.want:
			t.Errorf("Resolve(%q) with Base %v: got %q, want %q", tt.ref, tt.base, u, tt.want)
		}
	}
}

// TestRedirectLocationStandard checks that a Location header is resolved
// as a browser resolves it, one net/url refuses included, and sent as the
// URL Standard serialises it, deduped on its key: "/%7eu" is the root
// "/~u", fetched once.
func TestRedirectLocationStandard(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			w.Header().Set("Location", "/to/a b?c=\u00e9")
			w.WriteHeader(http.StatusFound)
		case "/r2":
			w.Header().Set("Location", "/100%")
			w.WriteHeader(http.StatusFound)
		case "/r3":
			w.Header().Set("Location", "/%7eu")
			w.WriteHeader(http.StatusFound)
		}
	}))
	ll := &lineListener{Listener: srv.Listener}
	srv.Listener = ll
	srv.Start()
	t.Cleanup(srv.Close)
	var rmu sync.Mutex
	next := make(map[string]string)
	c, err := crawl.New(crawl.WithRobots(false), crawl.WithResultHook(func(r crawl.Result) {
		rmu.Lock()
		defer rmu.Unlock()
		next[r.URL] = r.NextURL
		if r.NextURL == "" && r.Err != nil && !errors.Is(r.Err, context.Canceled) {
			t.Errorf("%s: %v", r.URL, r.Err)
		}
	}))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if _, err := c.Run(context.Background(), srv.URL+"/", srv.URL+"/r2", srv.URL+"/r3", srv.URL+"/~u"); err != nil {
		t.Fatalf("Run: %v", err)
	}
	want := []string{"/", "/100%", "/r2", "/r3", "/to/a%20b?c=%C3%A9", "/~u"}
	if got := ll.targets(); !slices.Equal(got, want) {
		t.Errorf("requests: got %q, want %q", got, want)
	}
	for from, to := range map[string]string{"/": "/to/a%20b?c=%C3%A9", "/r2": "/100%", "/r3": "/%7eu"} {
		if n := next[srv.URL+from]; n != srv.URL+to {
			t.Errorf("NextURL of %s: got %q, want %q", from, n, srv.URL+to)
		}
	}
}

// lineListener records the request line of every HTTP/1.1 request read
// through its connections, as the bytes came off the wire: a net/http
// handler never sees a request whose target net/url refuses ("/a%zz",
// answered 400 before any handler runs).
type lineListener struct {
	net.Listener
	mu    sync.Mutex
	lines []string
}

func (l *lineListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &lineConn{Conn: c, l: l}, nil
}

// targets returns the request-targets of the requests read, sorted.
func (l *lineListener) targets() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var ts []string
	for _, line := range l.lines {
		if f := strings.Fields(line); len(f) == 3 {
			ts = append(ts, f[1])
		}
	}
	slices.Sort(ts)
	return ts
}

type lineConn struct {
	net.Conn
	l    *lineListener
	line []byte // the line read so far
}

func (c *lineConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	for _, b := range p[:n] {
		if b != '\n' {
			c.line = append(c.line, b)
			continue
		}
		line := strings.TrimSuffix(string(c.line), "\r")
		c.line = c.line[:0]
		if strings.HasPrefix(line, "GET ") || strings.HasPrefix(line, "HEAD ") {
			c.l.mu.Lock()
			c.l.lines = append(c.l.lines, line)
			c.l.mu.Unlock()
		}
	}
	return n, err
}

// TestCrawlSendsWireForm checks that a link goes on the wire as a browser
// sends it, the URL Standard's serialisation of its first spelling, and
// that the spellings RFC 3986 (section 6.2.2) makes one URL are fetched
// once, while "/a%zz" and "/a%25zz" are two URLs; with the default
// extractor and with a LinkExtractor.
func TestCrawlSendsWireForm(t *testing.T) {
	links := []string{
		"/a%zz", "/a%25zz", // a malformed escape is no "%25": two URLs
		"/%7Euser", "/~user", // one URL, sent as first spelled
		"?x=%7E&y=%zz", "?x=~&y=%zz", // a bad escape in the query: still one URL
		"/a|b",               // "|" left as written
		"/%0%61", "/%%30%61", // one URL; not "/%0a"
		"/%0a",                     // the escape of a newline: another URL
		"/caf%c3%a9", "/caf\u00e9", // hex case: one URL
	}
	var b strings.Builder
	for _, l := range links {
		fmt.Fprintf(&b, "<a href=\"%s\">x</a>\n", html.EscapeString(l))
	}
	page := b.String()
	want := []string{
		"/", "/%0%61", "/%0a", "/%7Euser", "/?x=%7E&y=%zz", "/a%25zz", "/a%zz", "/a|b", "/caf%c3%a9",
	}
	for _, custom := range []bool{false, true} {
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			if r.URL.Path == "/" && r.URL.RawQuery == "" {
				fmt.Fprint(w, page)
			}
		}))
		ll := &lineListener{Listener: srv.Listener}
		srv.Listener = ll
		srv.Start()
		t.Cleanup(srv.Close)
		var mu sync.Mutex
		var results []string
		opts := []crawl.Option{crawl.WithRobots(false), crawl.WithMaxDepth(1), crawl.WithResultHook(func(r crawl.Result) {
			mu.Lock()
			defer mu.Unlock()
			results = append(results, r.URL)
		})}
		if custom {
			opts = append(opts, crawl.WithLinkExtractor(crawl.ExtractLinks))
		}
		c, err := crawl.New(opts...)
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		if _, err := c.Run(context.Background(), srv.URL+"/"); err != nil {
			t.Fatalf("Run: %v", err)
		}
		if got := ll.targets(); !slices.Equal(got, want) {
			t.Errorf("custom extractor %v: request-targets: got %q, want %q", custom, got, want)
		}
		var wantResults []string
		for _, w := range want {
			wantResults = append(wantResults, srv.URL+w)
		}
		slices.Sort(results)
		if !slices.Equal(results, wantResults) {
			t.Errorf("custom extractor %v: Result.URL: got %q, want %q", custom, results, wantResults)
		}
	}
}

// TestURLKey checks that the spellings a crawl fetches once have one key,
// and the URLs it fetches apart have two.
func TestURLKey(t *testing.T) {
	same := [][2]string{
		{"http://h/%7Euser", "http://h/~user"},
		{"HTTP://H:80/caf%c3%a9#x", "http://h/caf\u00e9"},
		{"http://h/?x=%7E&y=%zz", "http://h/?x=~&y=%zz"},
		{"http://h/%0%61", "http://h/%%30%61"},
		{"http://u@h/a|b", "http://h/a|b"},
	}
	for _, p := range same {
		if a, b := crawl.URLKey(p[0]), crawl.URLKey(p[1]); a != b {
			t.Errorf("URLKey(%q) = %q, URLKey(%q) = %q, want equal", p[0], a, p[1], b)
		}
	}
	apart := [][2]string{
		{"http://h/a%zz", "http://h/a%25zz"},
		{"http://h/a%3Bb", "http://h/a;b"},
		{"http://h/%0%61", "http://h/%0a"},
		{"http://h/a|b", "http://h/a%7Cb"},
	}
	for _, p := range apart {
		if a, b := crawl.URLKey(p[0]), crawl.URLKey(p[1]); a == b {
			t.Errorf("URLKey(%q) = URLKey(%q) = %q, want two keys", p[0], p[1], a)
		}
	}
	if got := crawl.URLKey("mailto:x@h"); got != "mailto:x@h" {
		t.Errorf("URLKey(%q) = %q, want it unchanged", "mailto:x@h", got)
	}
}

// TestCrawlRetrySendsWireForm checks that a URL retried goes out again as
// it was first spelled: the frontier keeps its wire form with its retry.
func TestCrawlRetrySendsWireForm(t *testing.T) {
	var mu sync.Mutex
	tries := 0
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		if r.URL.Path == "/" {
			fmt.Fprint(w, `<a href="/%7Euser">x</a>`)
			return
		}
		mu.Lock()
		tries++
		first := tries == 1
		mu.Unlock()
		if first {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	ll := &lineListener{Listener: srv.Listener}
	srv.Listener = ll
	srv.Start()
	t.Cleanup(srv.Close)
	c, err := crawl.New(crawl.WithRobots(false), crawl.WithBackoff(time.Millisecond, time.Millisecond))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if _, err := c.Run(context.Background(), srv.URL+"/"); err != nil {
		t.Fatalf("Run: %v", err)
	}
	want := []string{"/", "/%7Euser", "/%7Euser"}
	if got := ll.targets(); !slices.Equal(got, want) {
		t.Errorf("request-targets: got %q, want %q", got, want)
	}
}
