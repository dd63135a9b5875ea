package crawl_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/asyncrawl/crawl"
)

// fetchFast keeps retries quick.
var fetchFast = crawl.WithBackoff(time.Millisecond, 5*time.Millisecond)

// fetchCrawl crawls s from path with a generous deadline that only catches
// hangs.
func fetchCrawl(t *testing.T, s *site, path string, opts ...crawl.Option) (*crawl.Stats, map[string]crawl.Result, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return crawlSite(t, ctx, []string{s.URL + path}, opts...)
}

// fetchMust returns the Result for u, failing the test if there is none.
func fetchMust(t *testing.T, res map[string]crawl.Result, u string) crawl.Result {
	t.Helper()
	r, ok := res[u]
	if !ok {
		var got []string
		for k := range res {
			got = append(got, k)
		}
		t.Fatalf("no Result for %s; got Results for %q", u, got)
	}
	return r
}

// fetchRedirect answers with status and a Location header.
func fetchRedirect(status int, loc string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", loc)
		w.WriteHeader(status)
	}
}

// fetchDrop hijacks the connection and closes it without a response.
func fetchDrop(t *testing.T, w http.ResponseWriter) {
	conn, _, err := w.(http.Hijacker).Hijack()
	if err != nil {
		t.Errorf("hijack: %v", err)
		return
	}
	conn.Close()
}

// fetchStall blocks until the client goes away (or, as a safety net, 2s).
func fetchStall(r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-time.After(2 * time.Second):
	}
}

// fetchPages records a copy of every page body the page hook sees.
type fetchPages struct {
	mu    sync.Mutex
	pages map[string]crawl.Page
}

func (p *fetchPages) hook(pg *crawl.Page) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pages == nil {
		p.pages = map[string]crawl.Page{}
	}
	c := *pg
	c.Body = bytes.Clone(pg.Body)
	p.pages[pg.URL.String()] = c
}

func (p *fetchPages) get(t *testing.T, u string) crawl.Page {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	pg, ok := p.pages[u]
	if !ok {
		t.Fatalf("page hook never saw %s", u)
	}
	return pg
}

func TestFetchRedirectChainLimit(t *testing.T) {
	newChain := func(t *testing.T) *site {
		mux := http.NewServeMux()
		mux.Handle("/a", fetchRedirect(http.StatusFound, "/b"))
		mux.Handle("/b", fetchRedirect(http.StatusMovedPermanently, "/c"))
		mux.Handle("/c", htmlPage("<p>end</p>"))
		return newSite(t, mux)
	}

	t.Run("max 1", func(t *testing.T) {
		s := newChain(t)
		_, res, err := fetchCrawl(t, s, "/a", crawl.WithMaxRedirects(1))
		if err != nil {
			t.Fatalf("Run: got %v, want nil", err)
		}
		a := fetchMust(t, res, s.URL+"/a")
		if a.Status != http.StatusFound || a.NextURL != s.URL+"/b" || a.Err != nil {
			t.Errorf("/a: got Status %d NextURL %q Err %v, want 302 %q nil", a.Status, a.NextURL, a.Err, s.URL+"/b")
		}
		if k := a.Kind(); k != "redirect" {
			t.Errorf("/a Kind: got %q, want redirect", k)
		}
		b := fetchMust(t, res, s.URL+"/b")
		if !errors.Is(b.Err, crawl.ErrTooManyRedirects) {
			t.Errorf("/b Err: got %v, want ErrTooManyRedirects", b.Err)
		}
		if b.NextURL != s.URL+"/c" || b.Status != http.StatusMovedPermanently {
			t.Errorf("/b: got NextURL %q Status %d, want %q 301", b.NextURL, b.Status, s.URL+"/c")
		}
		s.wantHits(t, "/c", 0)
		if _, ok := res[s.URL+"/c"]; ok {
			t.Errorf("got a Result for /c, want none")
		}
	})

	t.Run("default", func(t *testing.T) {
		s := newChain(t)
		_, res, err := fetchCrawl(t, s, "/a")
		if err != nil {
			t.Fatalf("Run: got %v, want nil", err)
		}
		c := fetchMust(t, res, s.URL+"/c")
		if c.Status != http.StatusOK || c.Err != nil {
			t.Errorf("/c: got Status %d Err %v, want 200 nil", c.Status, c.Err)
		}
		if c.Depth != 0 {
			t.Errorf("/c Depth: got %d, want 0 (a redirect keeps its source's depth)", c.Depth)
		}
		for _, p := range []string{"/a", "/b", "/c"} {
			s.wantHits(t, p, 1)
		}
	})

	t.Run("max 0", func(t *testing.T) {
		s := newChain(t)
		_, res, err := fetchCrawl(t, s, "/a", crawl.WithMaxRedirects(0))
		if err != nil {
			t.Fatalf("Run: got %v, want nil", err)
		}
		a := fetchMust(t, res, s.URL+"/a")
		if !errors.Is(a.Err, crawl.ErrTooManyRedirects) {
			t.Errorf("/a Err: got %v, want ErrTooManyRedirects", a.Err)
		}
		if a.NextURL != s.URL+"/b" {
			t.Errorf("/a NextURL: got %q, want %q", a.NextURL, s.URL+"/b")
		}
		s.wantHits(t, "/b", 0)
		if len(res) != 1 {
			t.Errorf("got %d Results, want 1", len(res))
		}
	})
}

func TestFetchRedirectCycle(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("/x", fetchRedirect(http.StatusFound, "/y"))
	mux.Handle("/y", fetchRedirect(http.StatusFound, "/x"))
	s := newSite(t, mux)
	stats, res, err := fetchCrawl(t, s, "/x")
	if err != nil {
		t.Fatalf("Run: got %v, want nil", err)
	}
	for _, c := range []struct{ path, next string }{{"/x", "/y"}, {"/y", "/x"}} {
		s.wantHits(t, c.path, 1)
		r := fetchMust(t, res, s.URL+c.path)
		if r.Err != nil || r.NextURL != s.URL+c.next {
			t.Errorf("%s: got NextURL %q Err %v, want %q nil", c.path, r.NextURL, r.Err, s.URL+c.next)
		}
	}
	if stats.Redirects != 2 {
		t.Errorf("Stats.Redirects: got %d, want 2", stats.Redirects)
	}
}

func TestFetchRedirectsJoin(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("/{$}", htmlPage(`<a href="/r1">1</a> <a href="/r2">2</a>`))
	mux.Handle("/r1", fetchRedirect(http.StatusMovedPermanently, "/t"))
	mux.Handle("/r2", fetchRedirect(http.StatusFound, "/t"))
	mux.Handle("/t", htmlPage("<p>target</p>"))
	s := newSite(t, mux)
	_, res, err := fetchCrawl(t, s, "/")
	if err != nil {
		t.Fatalf("Run: got %v, want nil", err)
	}
	s.wantHits(t, "/t", 1)
	for _, p := range []string{"/r1", "/r2"} {
		r := fetchMust(t, res, s.URL+p)
		if r.NextURL != s.URL+"/t" || r.Err != nil {
			t.Errorf("%s: got NextURL %q Err %v, want %q nil", p, r.NextURL, r.Err, s.URL+"/t")
		}
	}
	fetchMust(t, res, s.URL+"/t")
}

func TestFetchRedirectNoLocation(t *testing.T) {
	s := newSite(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusFound)
	}))
	_, res, err := fetchCrawl(t, s, "/", fetchFast)
	if err != nil {
		t.Fatalf("Run: got %v, want nil", err)
	}
	r := fetchMust(t, res, s.URL+"/")
	if !errors.Is(r.Err, crawl.ErrNoLocation) {
		t.Errorf("Err: got %v, want ErrNoLocation", r.Err)
	}
	if r.Status != http.StatusFound || r.Tries != 1 {
		t.Errorf("got Status %d Tries %d, want 302 1", r.Status, r.Tries)
	}
	s.wantHits(t, "/", 1)
}

func TestFetchRedirectBadLocation(t *testing.T) {
	s := newSite(t, fetchRedirect(http.StatusFound, "http://[::1"))
	_, res, err := fetchCrawl(t, s, "/", fetchFast)
	if err != nil {
		t.Fatalf("Run: got %v, want nil", err)
	}
	r := fetchMust(t, res, s.URL+"/")
	if !errors.Is(r.Err, crawl.ErrNoLocation) {
		t.Errorf("Err: got %v, want ErrNoLocation", r.Err)
	}
	s.wantHits(t, "/", 1)
}

func TestFetchRedirectOtherHost(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("/{$}", fetchRedirect(http.StatusFound, "http://other.example/away"))
	mux.Handle("/away", htmlPage("<p>away</p>"))
	s := newSite(t, mux)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, res, err := crawlSite(t, ctx, []string{"http://www.example.com/"}, crawl.WithHTTPClient(routeAll(t, s.Server)))
	if err != nil {
		t.Fatalf("Run: got %v, want nil", err)
	}
	r := fetchMust(t, res, "http://www.example.com/")
	if r.NextURL != "http://other.example/away" || r.Err != nil {
		t.Errorf("got NextURL %q Err %v, want %q nil", r.NextURL, r.Err, "http://other.example/away")
	}
	s.wantHits(t, "/away", 0)
	if len(res) != 1 {
		t.Errorf("got %d Results, want 1", len(res))
	}
}

func TestFetchRedirectRelative(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("/dir/a", fetchRedirect(http.StatusFound, "b?x=1#frag"))
	mux.Handle("/dir/b", htmlPage("<p>b</p>"))
	s := newSite(t, mux)
	_, res, err := fetchCrawl(t, s, "/dir/a")
	if err != nil {
		t.Fatalf("Run: got %v, want nil", err)
	}
	want := s.URL + "/dir/b?x=1"
	if r := fetchMust(t, res, s.URL+"/dir/a"); r.NextURL != want {
		t.Errorf("NextURL: got %q, want %q", r.NextURL, want)
	}
	if n := s.Hits("/dir/b?x=1"); n != 1 {
		t.Errorf("/dir/b?x=1 requested %d times, want 1 (server saw %q)", n, s.Requested())
	}
	fetchMust(t, res, want)
}

func TestFetchRedirectStatuses(t *testing.T) {
	for _, code := range []int{300, 301, 302, 303, 307, 308} {
		t.Run(fmt.Sprint(code), func(t *testing.T) {
			mux := http.NewServeMux()
			mux.Handle("/from", fetchRedirect(code, "/to"))
			mux.Handle("/to", htmlPage("<p>to</p>"))
			s := newSite(t, mux)
			stats, res, err := fetchCrawl(t, s, "/from")
			if err != nil {
				t.Fatalf("Run: got %v, want nil", err)
			}
			r := fetchMust(t, res, s.URL+"/from")
			if r.Status != code || r.NextURL != s.URL+"/to" || r.Err != nil {
				t.Errorf("got Status %d NextURL %q Err %v, want %d %q nil", r.Status, r.NextURL, r.Err, code, s.URL+"/to")
			}
			s.wantHits(t, "/from", 1)
			s.wantHits(t, "/to", 1)
			if stats.Redirects != 1 || stats.HTML != 1 {
				t.Errorf("Stats: got Redirects %d HTML %d, want 1 1", stats.Redirects, stats.HTML)
			}
		})
	}
}

// fetchFlaky serves body after failing the first n requests with fail.
func fetchFlaky(n int32, fail func(w http.ResponseWriter), body string) http.HandlerFunc {
	var seen atomic.Int32
	return func(w http.ResponseWriter, r *http.Request) {
		if seen.Add(1) <= n {
			fail(w)
			return
		}
		htmlPage(body)(w, r)
	}
}

func TestFetchRetryDroppedConnection(t *testing.T) {
	// The flaky path is the root, the Run's first request (without
	// robots.txt, whose connection would be reused), so every connection
	// is fresh and the transport never retries on its own: the server's
	// count is the crawler's.
	t.Run("default tries", func(t *testing.T) {
		s := newSite(t, fetchFlaky(2, func(w http.ResponseWriter) { fetchDrop(t, w) }, "<p>ok</p>"))
		_, res, err := fetchCrawl(t, s, "/", fetchFast, crawl.WithRobots(false))
		if err != nil {
			t.Fatalf("Run: got %v, want nil", err)
		}
		r := fetchMust(t, res, s.URL+"/")
		if r.Status != http.StatusOK || r.Tries != 3 || r.Err != nil {
			t.Errorf("got Status %d Tries %d Err %v, want 200 3 nil", r.Status, r.Tries, r.Err)
		}
		if n := s.Hits("/"); n != 3 {
			t.Errorf("server saw %d requests, want 3", n)
		}
	})
	t.Run("one try", func(t *testing.T) {
		s := newSite(t, fetchFlaky(2, func(w http.ResponseWriter) { fetchDrop(t, w) }, "<p>ok</p>"))
		stats, res, err := fetchCrawl(t, s, "/", fetchFast, crawl.WithMaxTries(1), crawl.WithRobots(false))
		if err != nil {
			t.Fatalf("Run: got %v, want nil", err)
		}
		r := fetchMust(t, res, s.URL+"/")
		if r.Err == nil || r.Status != 0 || r.Tries != 1 {
			t.Errorf("got Status %d Tries %d Err %v, want 0 1 non-nil", r.Status, r.Tries, r.Err)
		}
		if !errors.Is(r.Err, io.EOF) && !errors.Is(r.Err, io.ErrUnexpectedEOF) {
			t.Errorf("Err: got %v, want one wrapping io.EOF", r.Err)
		}
		if k := crawl.FailKind(r.Err); k != "network" {
			t.Errorf("FailKind: got %q, want network", k)
		}
		if stats.FailKinds["network"] != 1 {
			t.Errorf("Stats.FailKinds: got %v, want network: 1", stats.FailKinds)
		}
		if n := s.Hits("/"); n != 1 {
			t.Errorf("server saw %d requests, want 1", n)
		}
	})
}

// fetchStatus answers with code and a short HTML body.
func fetchStatus(code int) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(code)
		io.WriteString(w, "<p>busy</p>")
	}
}

func TestFetchRetryStatus(t *testing.T) {
	t.Run("503 twice", func(t *testing.T) {
		s := newSite(t, fetchFlaky(2, fetchStatus(503), "<p>ok</p>"))
		_, res, err := fetchCrawl(t, s, "/", fetchFast)
		if err != nil {
			t.Fatalf("Run: got %v, want nil", err)
		}
		r := fetchMust(t, res, s.URL+"/")
		if r.Status != http.StatusOK || r.Tries != 3 || r.Err != nil {
			t.Errorf("got Status %d Tries %d Err %v, want 200 3 nil", r.Status, r.Tries, r.Err)
		}
		if n := s.Hits("/"); n != 3 {
			t.Errorf("server saw %d requests, want 3", n)
		}
	})

	for _, code := range []int{500, 502, 504, 408, 429} {
		t.Run(fmt.Sprintf("retried %d", code), func(t *testing.T) {
			s := newSite(t, fetchFlaky(1, fetchStatus(code), "<p>ok</p>"))
			_, res, err := fetchCrawl(t, s, "/", fetchFast)
			if err != nil {
				t.Fatalf("Run: got %v, want nil", err)
			}
			r := fetchMust(t, res, s.URL+"/")
			if r.Status != http.StatusOK || r.Tries != 2 || r.Err != nil {
				t.Errorf("got Status %d Tries %d Err %v, want 200 2 nil", r.Status, r.Tries, r.Err)
			}
			if n := s.Hits("/"); n != 2 {
				t.Errorf("server saw %d requests, want 2", n)
			}
		})
	}

	for _, code := range []int{403, 404, 410} {
		t.Run(fmt.Sprintf("not retried %d", code), func(t *testing.T) {
			s := newSite(t, fetchFlaky(1, fetchStatus(code), "<p>ok</p>"))
			_, res, err := fetchCrawl(t, s, "/", fetchFast)
			if err != nil {
				t.Fatalf("Run: got %v, want nil", err)
			}
			r := fetchMust(t, res, s.URL+"/")
			if r.Status != code || r.Tries != 1 || r.Err != nil {
				t.Errorf("got Status %d Tries %d Err %v, want %d 1 nil", r.Status, r.Tries, r.Err, code)
			}
			if n := s.Hits("/"); n != 1 {
				t.Errorf("server saw %d requests, want 1", n)
			}
		})
	}

	t.Run("503 to the end", func(t *testing.T) {
		const tries = 3
		s := newSite(t, fetchFlaky(100, fetchStatus(503), "<p>ok</p>"))
		_, res, err := fetchCrawl(t, s, "/", fetchFast, crawl.WithMaxTries(tries))
		if err != nil {
			t.Fatalf("Run: got %v, want nil", err)
		}
		r := fetchMust(t, res, s.URL+"/")
		if r.Status != http.StatusServiceUnavailable || r.Tries != tries || r.Err != nil {
			t.Errorf("got Status %d Tries %d Err %v, want 503 %d nil", r.Status, r.Tries, r.Err, tries)
		}
		if n := s.Hits("/"); n != tries {
			t.Errorf("server saw %d requests, want %d", n, tries)
		}
	})
}

// fetchTimes records when each request arrived.
type fetchTimes struct {
	mu sync.Mutex
	at []time.Time
}

func (f *fetchTimes) add() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.at = append(f.at, time.Now())
	return len(f.at)
}

func (f *fetchTimes) get() []time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Time(nil), f.at...)
}

func TestFetchRetryAfter(t *testing.T) {
	// Two slow subtests: the only way to see Retry-After honoured is to
	// wait for it. The backoff is a few milliseconds, so a gap of about a
	// second can only come from the header.
	const tolerance = 100 * time.Millisecond
	for _, tc := range []struct {
		name  string
		value func() string
		want  time.Duration // least gap between the two requests
	}{
		{"seconds", func() string { return "1" }, time.Second},
		// An HTTP date has whole seconds: two seconds ahead, truncated,
		// is at least one second ahead.
		{"date", func() string { return time.Now().Add(2 * time.Second).UTC().Format(http.TimeFormat) }, time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var times fetchTimes
			s := newSite(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if times.add() == 1 {
					w.Header().Set("Retry-After", tc.value())
					w.WriteHeader(http.StatusTooManyRequests)
					return
				}
				htmlPage("<p>ok</p>")(w, r)
			}))
			_, res, err := fetchCrawl(t, s, "/", fetchFast)
			if err != nil {
				t.Fatalf("Run: got %v, want nil", err)
			}
			r := fetchMust(t, res, s.URL+"/")
			if r.Status != http.StatusOK || r.Tries != 2 {
				t.Errorf("got Status %d Tries %d, want 200 2", r.Status, r.Tries)
			}
			at := times.get()
			if len(at) != 2 {
				t.Fatalf("server saw %d requests, want 2", len(at))
			}
			if gap := at[1].Sub(at[0]); gap < tc.want-tolerance {
				t.Errorf("second request %v after the first, want at least %v", gap, tc.want-tolerance)
			}
		})
	}
}

func TestFetchCharsets(t *testing.T) {
	cp1251 := "\xcf\xf0\xe8\xe2\xe5\xf2" // "Привет" in windows-1251
	utf16 := []byte{0xff, 0xfe}
	for _, r := range "<p>café</p>" {
		utf16 = append(utf16, byte(r), byte(r>>8))
	}
	for _, tc := range []struct {
		name        string
		contentType string
		body        string
		encoding    string
		contains    []string // in the decoded Page.Body
		prefix      string   // of the decoded Page.Body
	}{
		{"ascii no charset", "text/html", "<p>plain text</p>", "utf-8", []string{"plain text"}, "<p>"},
		{"utf-8 no charset", "text/html", "<p>café</p>", "utf-8", []string{"café"}, "<p>"},
		{"utf-8 late", "text/html", "<p>" + strings.Repeat("a", 2000) + "</p><p>café</p>", "utf-8", []string{"café"}, "<p>"},
		{"header utf-8", "text/html; charset=UTF-8", "<p>café</p>", "utf-8", []string{"café"}, "<p>"},
		{"header latin-1", "text/html; charset=ISO-8859-1", "<p>caf\xe9</p><a href=\"/next\">r\xe9sum\xe9</a>", "windows-1252", []string{"café", "résumé"}, "<p>"},
		{"meta charset", "text/html", `<meta charset="iso-8859-15"><p>caf` + "\xe9 \xa4</p>", "iso-8859-15", []string{"café €"}, "<meta"},
		{"meta http-equiv", "text/html", `<meta http-equiv="Content-Type" content="text/html; charset=windows-1251"><p>` + cp1251 + "</p>", "windows-1251", []string{"Привет"}, "<meta"},
		{"utf-8 BOM", "text/html", "\xef\xbb\xbf<p>café</p>", "utf-8", []string{"café"}, "<p>"},
		{"utf-8 BOM beats header", "text/html; charset=iso-8859-1", "\xef\xbb\xbf<p>café</p>", "utf-8", []string{"café"}, "<p>"},
		{"utf-16 BOM", "text/html; charset=utf-8", string(utf16), "utf-16le", []string{"café"}, "<p>"},
		{"text/plain latin-1", "text/plain; charset=latin1", "caf\xe9", "windows-1252", []string{"café"}, "caf"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSite(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/" {
					htmlPage("<p>next</p>")(w, r)
					return
				}
				w.Header().Set("Content-Type", tc.contentType)
				io.WriteString(w, tc.body)
			}))
			var pages fetchPages
			_, res, err := fetchCrawl(t, s, "/", crawl.WithPageHook(pages.hook))
			if err != nil {
				t.Fatalf("Run: got %v, want nil", err)
			}
			r := fetchMust(t, res, s.URL+"/")
			if r.Encoding != tc.encoding {
				t.Errorf("Result.Encoding: got %q, want %q", r.Encoding, tc.encoding)
			}
			if r.Size != len(tc.body) {
				t.Errorf("Result.Size: got %d, want %d (bytes as sent)", r.Size, len(tc.body))
			}
			p := pages.get(t, s.URL+"/")
			if p.Encoding != tc.encoding {
				t.Errorf("Page.Encoding: got %q, want %q", p.Encoding, tc.encoding)
			}
			if !utf8.Valid(p.Body) {
				t.Errorf("Page.Body is not valid UTF-8: %q", p.Body)
			}
			for _, want := range tc.contains {
				if !bytes.Contains(p.Body, []byte(want)) {
					t.Errorf("Page.Body: got %q, want it to contain %q", p.Body, want)
				}
			}
			if !bytes.HasPrefix(p.Body, []byte(tc.prefix)) {
				t.Errorf("Page.Body: got %q, want prefix %q", p.Body, tc.prefix)
			}
			if strings.Contains(tc.body, `href="/next"`) {
				s.wantHits(t, "/next", 1)
			}
		})
	}
}

func TestFetchNotHTML(t *testing.T) {
	png := "\x89PNG\r\n\x1a\n" + `<a href="/linked">x</a>` + strings.Repeat("\x00", 100)
	for _, tc := range []struct {
		name        string
		contentType string
		want        string // Result.ContentType
		body        string
	}{
		{"foo", "foo", "foo", `<a href="/linked">x</a>`},
		{"params", "Application/Foo; x=y", "application/foo", `<a href="/linked">x</a>`},
		{"png", "image/png", "image/png", png},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSite(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tc.contentType)
				io.WriteString(w, tc.body)
			}))
			stats, res, err := fetchCrawl(t, s, "/")
			if err != nil {
				t.Fatalf("Run: got %v, want nil", err)
			}
			r := fetchMust(t, res, s.URL+"/")
			if r.ContentType != tc.want {
				t.Errorf("ContentType: got %q, want %q", r.ContentType, tc.want)
			}
			if k := r.Kind(); k != "other" {
				t.Errorf("Kind: got %q, want other", k)
			}
			if r.Size != len(tc.body) {
				t.Errorf("Size: got %d, want %d", r.Size, len(tc.body))
			}
			if r.Encoding != "" {
				t.Errorf("Encoding: got %q, want none for a type that is not text", r.Encoding)
			}
			if r.NumURLs != 0 {
				t.Errorf("NumURLs: got %d, want 0", r.NumURLs)
			}
			s.wantHits(t, "/linked", 0)
			if stats.Other != 1 || stats.OtherBytes != int64(len(tc.body)) {
				t.Errorf("Stats: got Other %d OtherBytes %d, want 1 %d", stats.Other, stats.OtherBytes, len(tc.body))
			}
		})
	}
}

func TestFetchHTMLDetection(t *testing.T) {
	for _, tc := range []struct {
		name        string
		contentType string
		status      int
		follow      bool
	}{
		{"upper case", "TEXT/HTML; charset=utf-8", 200, true},
		{"xhtml", "application/xhtml+xml", 200, true},
		{"203", "text/html", 203, true},
		{"404", "text/html", 404, false},
		{"500 after retries", "text/html", 500, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mux := http.NewServeMux()
			mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tc.contentType)
				w.WriteHeader(tc.status)
				io.WriteString(w, `<html><body><a href="/next">next</a></body></html>`)
			})
			mux.Handle("/next", htmlPage("<p>next</p>"))
			s := newSite(t, mux)
			_, res, err := fetchCrawl(t, s, "/", fetchFast, crawl.WithMaxTries(1))
			if err != nil {
				t.Fatalf("Run: got %v, want nil", err)
			}
			r := fetchMust(t, res, s.URL+"/")
			if r.Status != tc.status {
				t.Errorf("Status: got %d, want %d", r.Status, tc.status)
			}
			want := 0
			if tc.follow {
				want = 1
			}
			s.wantHits(t, "/next", want)
			if r.NumURLs != want {
				t.Errorf("NumURLs: got %d, want %d", r.NumURLs, want)
			}
		})
	}
}

func TestFetchTimeout(t *testing.T) {
	for _, tc := range []struct {
		name    string
		handler http.HandlerFunc
	}{
		{"no headers", func(w http.ResponseWriter, r *http.Request) { fetchStall(r) }},
		{"body stalls", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.Header().Set("Content-Length", "1000")
			io.WriteString(w, "<p>the start")
			w.(http.Flusher).Flush()
			fetchStall(r)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSite(t, tc.handler)
			stats, res, err := fetchCrawl(t, s, "/", fetchFast,
				crawl.WithRequestTimeout(100*time.Millisecond), crawl.WithMaxTries(2))
			if err != nil {
				t.Fatalf("Run: got %v, want nil (it should end on its own, well before the 10s deadline)", err)
			}
			r := fetchMust(t, res, s.URL+"/")
			if !errors.Is(r.Err, context.DeadlineExceeded) {
				t.Errorf("Err: got %v, want one wrapping context.DeadlineExceeded", r.Err)
			}
			if k := crawl.FailKind(r.Err); k != "timeout" {
				t.Errorf("FailKind: got %q, want timeout", k)
			}
			if stats.FailKinds["timeout"] != 1 {
				t.Errorf("Stats.FailKinds: got %v, want timeout: 1", stats.FailKinds)
			}
			if r.Tries != 2 {
				t.Errorf("Tries: got %d, want 2", r.Tries)
			}
			if n := s.Hits("/"); n != 2 {
				t.Errorf("server saw %d requests, want 2", n)
			}
		})
	}
}

func TestFetchBodySize(t *testing.T) {
	const limit = 1000
	gz := func(n int) []byte {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		zw.Write(bytes.Repeat([]byte("a"), n))
		zw.Close()
		return b.Bytes()
	}
	chunked := func(n int) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html") // a page the crawl parses
			piece := []byte(strings.Repeat("a", 100))
			for sent := 0; sent < n; sent += len(piece) {
				w.Write(piece[:min(len(piece), n-sent)])
				w.(http.Flusher).Flush()
			}
		}
	}
	gzipped := func(n int) http.HandlerFunc {
		body := gz(n)
		return func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Accept-Encoding") != "gzip" {
				t.Errorf("Accept-Encoding: got %q, want gzip (the transport's own)", r.Header.Get("Accept-Encoding"))
			}
			w.Header().Set("Content-Type", "text/html") // a page the crawl parses
			w.Header().Set("Content-Encoding", "gzip")
			w.Header().Set("Content-Length", fmt.Sprint(len(body)))
			w.Write(body)
		}
	}
	for _, tc := range []struct {
		name    string
		handler http.HandlerFunc
		tooBig  bool
		size    int // when not too big
	}{
		{"content-length over", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html") // a page the crawl parses
			w.Header().Set("Content-Length", "5000")
			w.Write(bytes.Repeat([]byte("a"), 5000))
		}, true, 0},
		{"chunked over", chunked(5000), true, 0},
		{"chunked one over", chunked(limit + 1), true, 0},
		{"chunked exact", chunked(limit), false, limit},
		{"content-length exact", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html") // a page the crawl parses
			w.Write(bytes.Repeat([]byte("a"), limit))
		}, false, limit},
		{"gzip over", gzipped(5000), true, 0},
		{"gzip under", gzipped(limit), false, limit},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSite(t, tc.handler)
			stats, res, err := fetchCrawl(t, s, "/", fetchFast, crawl.WithMaxBodySize(limit))
			if err != nil {
				t.Fatalf("Run: got %v, want nil", err)
			}
			r := fetchMust(t, res, s.URL+"/")
			if n := s.Hits("/"); n != 1 {
				t.Errorf("server saw %d requests, want 1", n)
			}
			if r.Tries != 1 {
				t.Errorf("Tries: got %d, want 1", r.Tries)
			}
			if !tc.tooBig {
				if r.Err != nil || r.Size != tc.size {
					t.Errorf("got Err %v Size %d, want nil %d", r.Err, r.Size, tc.size)
				}
				return
			}
			if !errors.Is(r.Err, crawl.ErrBodyTooLarge) {
				t.Errorf("Err: got %v, want ErrBodyTooLarge", r.Err)
			}
			if r.Status != http.StatusOK {
				t.Errorf("Status: got %d, want 200 (the response came)", r.Status)
			}
			if stats.FailKinds["body_too_large"] != 1 {
				t.Errorf("Stats.FailKinds: got %v, want body_too_large: 1", stats.FailKinds)
			}
		})
	}
}

var errFetchDenied = errors.New("fetch test: denied")

func TestFetchRequestHook(t *testing.T) {
	var mu sync.Mutex
	var seen []string // X-Fetch-Test of every request, in order
	mux := http.NewServeMux()
	mux.Handle("/{$}", htmlPage(`<a href="/flaky">f</a> <a href="/secret">s</a>`))
	mux.Handle("/flaky", fetchFlaky(2, fetchStatus(503), "<p>ok</p>"))
	mux.Handle("/secret", htmlPage("<p>secret</p>"))
	s := newSite(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("X-Fetch-Test"))
		mu.Unlock()
		mux.ServeHTTP(w, r)
	}))
	var secretCalls atomic.Int32
	hook := func(r *http.Request) error {
		if r.URL.Path == "/secret" {
			secretCalls.Add(1)
			return fmt.Errorf("no secrets: %w", errFetchDenied)
		}
		r.Header.Set("X-Fetch-Test", "yes")
		return nil
	}
	_, res, err := fetchCrawl(t, s, "/", fetchFast, crawl.WithRequestHook(hook))
	if err != nil {
		t.Fatalf("Run: got %v, want nil", err)
	}

	mu.Lock()
	got := append([]string(nil), seen...)
	mu.Unlock()
	if len(got) != 4 { // "/" once, "/flaky" three times
		t.Errorf("server saw %d requests, want 4 (%q)", len(got), s.Requested())
	}
	for i, v := range got {
		if v != "yes" {
			t.Errorf("request %d: X-Fetch-Test got %q, want yes", i, v)
		}
	}
	if r := fetchMust(t, res, s.URL+"/flaky"); r.Tries != 3 || r.Status != http.StatusOK {
		t.Errorf("/flaky: got Tries %d Status %d, want 3 200", r.Tries, r.Status)
	}

	s.wantHits(t, "/secret", 0)
	r := fetchMust(t, res, s.URL+"/secret")
	if !errors.Is(r.Err, errFetchDenied) {
		t.Errorf("/secret Err: got %v, want one wrapping the hook's error", r.Err)
	}
	if r.Tries != 1 || r.Status != 0 {
		t.Errorf("/secret: got Tries %d Status %d, want 1 0", r.Tries, r.Status)
	}
	if n := secretCalls.Load(); n != 1 {
		t.Errorf("hook called %d times for /secret, want 1", n)
	}
}

// fetchCountingTransport counts the requests it carries.
type fetchCountingTransport struct {
	base http.RoundTripper
	n    atomic.Int32
}

func (c *fetchCountingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.base.RoundTrip(r)
}

func TestFetchHTTPClient(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("/{$}", fetchRedirect(http.StatusFound, "/b"))
	mux.Handle("/b", htmlPage("<p>b</p>"))
	s := newSite(t, mux)

	tr := &fetchCountingTransport{base: &http.Transport{DisableKeepAlives: true}}
	var checks atomic.Int32
	client := &http.Client{
		Transport: tr,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			checks.Add(1)
			return nil // follow
		},
	}
	_, res, err := fetchCrawl(t, s, "/", crawl.WithHTTPClient(client))
	if err != nil {
		t.Fatalf("Run: got %v, want nil", err)
	}
	r := fetchMust(t, res, s.URL+"/")
	if r.NextURL != s.URL+"/b" || r.Status != http.StatusFound {
		t.Errorf("/: got Status %d NextURL %q, want 302 %q (a redirect Result)", r.Status, r.NextURL, s.URL+"/b")
	}
	fetchMust(t, res, s.URL+"/b")
	if n := checks.Load(); n != 0 {
		t.Errorf("caller's CheckRedirect called %d times during the crawl, want 0", n)
	}
	s.wantHits(t, "/b", 1)
	// The robots.txt request goes through the caller's client too.
	if got, want := int(tr.n.Load()), s.Total()+int(s.robotsHits.Load()); got != want || got != 3 {
		t.Errorf("RoundTrips: got %d, want %d (the server's count, robots.txt included) = 3", got, want)
	}

	// The caller's client is as it was.
	if client.Transport != tr {
		t.Errorf("client.Transport: got %T, want the caller's", client.Transport)
	}
	if client.CheckRedirect == nil {
		t.Fatalf("client.CheckRedirect: got nil, want the caller's")
	}
	if err := client.CheckRedirect(nil, nil); err != nil || checks.Load() != 1 {
		t.Errorf("client.CheckRedirect: got err %v and %d calls, want the caller's function (nil, 1 call)", err, checks.Load())
	}
}

func TestFetchResultFields(t *testing.T) {
	const body = `<html><body><a href="/x">x</a><a href="/x#2">x</a><a href="/y">y</a></body></html>`
	mux := http.NewServeMux()
	mux.Handle("/{$}", htmlPage(body))
	mux.Handle("/x", htmlPage("<p>x</p>"))
	mux.Handle("/y", htmlPage("<p>y</p>"))
	s := newSite(t, mux)
	_, res, err := fetchCrawl(t, s, "/")
	if err != nil {
		t.Fatalf("Run: got %v, want nil", err)
	}
	r := fetchMust(t, res, s.URL+"/")
	want := crawl.Result{
		URL: s.URL + "/", Status: 200, Size: len(body), ContentType: "text/html",
		Encoding: "utf-8", Tries: 1, NumURLs: 2, NumNewURLs: 2,
	}
	got := r
	got.Elapsed = 0
	if got != want {
		t.Errorf("Result:\ngot  %+v\nwant %+v", got, want)
	}
	if r.Elapsed <= 0 {
		t.Errorf("Elapsed: got %v, want > 0", r.Elapsed)
	}
	if k := r.Kind(); k != "html" {
		t.Errorf("Kind: got %q, want html", k)
	}
	if x := fetchMust(t, res, s.URL+"/x"); x.Depth != 1 {
		t.Errorf("/x Depth: got %d, want 1", x.Depth)
	}
	if ua := s.Header("/").Get("User-Agent"); ua != crawl.DefaultUserAgent {
		t.Errorf("User-Agent: got %q, want %q", ua, crawl.DefaultUserAgent)
	}
}

func TestFetchFailKind(t *testing.T) {
	closed := httptest.NewServer(http.NotFoundHandler())
	closedURL := closed.URL
	closed.Close()

	for _, tc := range []struct {
		name    string
		handler http.HandlerFunc // nil: crawl closedURL
		opts    []crawl.Option
		is      error // the Err wraps it
		kind    string
	}{
		{"timeout", func(w http.ResponseWriter, r *http.Request) { fetchStall(r) },
			[]crawl.Option{crawl.WithRequestTimeout(50 * time.Millisecond)}, context.DeadlineExceeded, "timeout"},
		{"body too large", htmlPage(strings.Repeat("a", 100)),
			[]crawl.Option{crawl.WithMaxBodySize(10)}, crawl.ErrBodyTooLarge, "body_too_large"},
		{"too many redirects", fetchRedirect(http.StatusFound, "/elsewhere"),
			[]crawl.Option{crawl.WithMaxRedirects(0)}, crawl.ErrTooManyRedirects, "too_many_redirects"},
		{"no location", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusMovedPermanently) },
			nil, crawl.ErrNoLocation, "no_location"},
		{"panic", htmlPage("<p>boom</p>"),
			[]crawl.Option{crawl.WithPageHook(func(*crawl.Page) { panic("fetch test") })}, crawl.ErrPanic, "panic"},
		// The robots.txt of a host that refuses connections is
		// unavailable: its URLs are not fetched.
		{"refused", nil, nil, crawl.ErrRobotsUnavailable, "robots_unavailable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := closedURL + "/"
			if tc.handler != nil {
				root = newSite(t, tc.handler).URL + "/"
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			opts := append([]crawl.Option{fetchFast, crawl.WithMaxTries(1)}, tc.opts...)
			stats, res, err := crawlSite(t, ctx, []string{root}, opts...)
			if err != nil {
				t.Fatalf("Run: got %v, want nil", err)
			}
			r := fetchMust(t, res, root)
			if r.Err == nil {
				t.Fatalf("Err: got nil, want an error")
			}
			if tc.is != nil && !errors.Is(r.Err, tc.is) {
				t.Errorf("Err: got %v, want one wrapping %v", r.Err, tc.is)
			}
			if k := crawl.FailKind(r.Err); k != tc.kind {
				t.Errorf("FailKind(%v): got %q, want %q", r.Err, k, tc.kind)
			}
			if stats.Failures != 1 || stats.FailKinds[tc.kind] != 1 {
				t.Errorf("Stats: got Failures %d FailKinds %v, want 1 and %s: 1", stats.Failures, stats.FailKinds, tc.kind)
			}
		})
	}
	if k := crawl.FailKind(nil); k != "" {
		t.Errorf("FailKind(nil): got %q, want empty", k)
	}
	if k := crawl.FailKind(os.ErrDeadlineExceeded); k != "timeout" {
		t.Errorf("FailKind(os.ErrDeadlineExceeded): got %q, want timeout", k)
	}
}
