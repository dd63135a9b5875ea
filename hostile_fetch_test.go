package crawl_test

// Fetch-side defences against hostile servers: credentials that must not
// follow a redirect to another host, compressed bodies and bombs, huge
// headers, and servers that stall, trickle or break the connection.

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/asyncrawl/crawl"
	"github.com/asyncrawl/crawl/crawltest"
)

// guardSiteClient returns a client that reaches site under any host name
// and keeps no idle connection, so that none outlives a Run.
func guardSiteClient(site *crawltest.Site) *http.Client {
	return &http.Client{Transport: &http.Transport{DialContext: site.DialContext, DisableKeepAlives: true}}
}

func TestFetchCredentialsRedirect(t *testing.T) {
	site := crawltest.Start(t)
	a, b := site.Host("a.example.com"), site.Host("b.example.com")
	a.Page("/", "/same", "/cross", "/bounce", "/chain", "/port", "/sub")
	a.Redirect("/same", http.StatusFound, "/landing")
	a.Page("/landing")
	a.Redirect("/cross", http.StatusMovedPermanently, "http://b.example.com/landing")
	b.Page("/landing")
	// Away and back: once left behind, the credentials stay behind.
	a.Redirect("/bounce", http.StatusFound, "http://b.example.com/back")
	b.Redirect("/back", http.StatusFound, "http://a.example.com/after")
	a.Page("/after")
	// Away, then on within the other host: still without them.
	a.Redirect("/chain", http.StatusFound, "http://b.example.com/step")
	b.Redirect("/step", http.StatusFound, "/final")
	b.Page("/final")
	// Another port of the same host name keeps them.
	a.Redirect("/port", http.StatusFound, "http://a.example.com:8080/ported")
	a.Page("/ported")
	// A subdomain is another host.
	a.Redirect("/sub", http.StatusFound, "http://x.a.example.com/")
	site.Host("x.a.example.com").Page("/")

	creds := []string{"Authorization", "Cookie", "Proxy-Authorization"}
	hook := func(r *http.Request) error {
		r.Header.Set("Authorization", "Bearer s3cret")
		r.Header.Set("Cookie", "session=s3cret")
		r.Header.Set("Proxy-Authorization", "Basic czNjcmV0")
		r.Header.Set("X-Trace", "kept")
		return nil
	}
	_, res, err := crawlSite(t, context.Background(), []string{"http://a.example.com/"},
		crawl.WithHTTPClient(guardSiteClient(site)), crawl.WithRequestHook(hook),
		crawl.WithLenientHosts(true), crawl.WithRobots(false))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	for u, r := range res {
		if r.Err != nil {
			t.Errorf("%s: got Err %v, want nil", u, r.Err)
		}
	}
	for _, tc := range []struct {
		host, uri string
		creds     bool
	}{
		{"a.example.com", "/", true},
		{"a.example.com", "/same", true},
		{"a.example.com", "/landing", true},
		{"b.example.com", "/landing", false},
		{"b.example.com", "/back", false},
		{"a.example.com", "/after", false},
		{"b.example.com", "/step", false},
		{"b.example.com", "/final", false},
		{"a.example.com", "/ported", true},
		{"x.a.example.com", "/", false},
	} {
		reqs := site.Host(tc.host).Requests()
		var found bool
		for _, r := range reqs {
			if r.URI != tc.uri {
				continue
			}
			found = true
			if r.Header.Get("X-Trace") != "kept" {
				t.Errorf("%s%s: X-Trace %q, want kept (the hook ran)", tc.host, tc.uri, r.Header.Get("X-Trace"))
			}
			for _, k := range creds {
				if got := r.Header.Get(k) != ""; got != tc.creds {
					t.Errorf("%s%s: %s sent %v, want %v", tc.host, tc.uri, k, got, tc.creds)
				}
			}
		}
		if !found {
			t.Errorf("%s%s: not requested (requests: %v)", tc.host, tc.uri, reqs)
		}
	}
}

func TestFetchCredentialsDowngrade(t *testing.T) {
	// One host name, 127.0.0.1, on two ports: https and plain http.
	plain := newSite(t, htmlPage("<p>plain</p>"))
	secure := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, `<a href="/down">down</a>`)
		case "/down":
			http.Redirect(w, r, plain.URL+"/downgraded", http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	}))
	defer secure.Close()
	tr := secure.Client().Transport.(*http.Transport).Clone()
	tr.DisableKeepAlives = true
	_, res, err := crawlSite(t, context.Background(), []string{secure.URL + "/"},
		crawl.WithHTTPClient(&http.Client{Transport: tr}), crawl.WithRobots(false),
		crawl.WithRequestHook(func(r *http.Request) error {
			r.Header.Set("Authorization", "Bearer s3cret")
			return nil
		}))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if r, ok := res[plain.URL+"/downgraded"]; !ok || r.Err != nil {
		t.Fatalf("%s/downgraded: got %+v (present %v), want a Result without Err", plain.URL, r, ok)
	}
	if got := plain.Header("/downgraded").Get("Authorization"); got != "" {
		t.Errorf("Authorization after a redirect from https to http: got %q, want none", got)
	}
}

// guardNoLength hides a handler's Content-Length, so that its body is
// sent chunked and only reading it tells its size.
func guardNoLength(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(noLengthWriter{w}, r)
	})
}

type noLengthWriter struct{ http.ResponseWriter }

func (w noLengthWriter) WriteHeader(code int) {
	w.Header().Del("Content-Length")
	w.ResponseWriter.WriteHeader(code)
}

func TestFetchBomb(t *testing.T) {
	const limit = 1 << 20
	for _, tc := range []struct {
		name   string
		coding string
		size   int64
		accept string // Accept-Encoding set by the request hook
		hide   bool   // hide the Content-Length
		limit  int64
		tooBig bool
	}{
		// The transport asked for gzip, and decodes it.
		{"gzip by the transport", "gzip", 1 << 30, "", false, limit, true},
		// The hook asked: the crawler decodes.
		{"gzip asked by the hook", "gzip", 1 << 30, "gzip", true, limit, true},
		{"gzip asked, with length", "gzip", 512 << 20, "gzip, deflate", false, limit, true},
		// Never asked for, sent anyway: the crawler decodes.
		{"deflate unasked", "deflate", 1 << 30, "", true, limit, true},
		{"deflate asked, with length", "deflate", 512 << 20, "deflate", false, limit, true},
		// No decoder: the encoded bytes are the body, capped as sent.
		{"zstd", "zstd", 1 << 30, "zstd", false, limit, false},
		{"zstd over the cap as sent", "zstd", 1 << 30, "zstd", true, 16 << 10, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			site := crawltest.Start(t)
			bomb := crawltest.Bomb(tc.coding, tc.size)
			if tc.hide {
				bomb = guardNoLength(bomb)
			}
			site.Handle("/bomb", bomb)
			opts := []crawl.Option{crawl.WithMaxBodySize(tc.limit), crawl.WithRobots(false), crawl.WithMaxTries(2), crawl.WithBackoff(0, 0)}
			if tc.accept != "" {
				opts = append(opts, crawl.WithRequestHook(func(r *http.Request) error {
					r.Header.Set("Accept-Encoding", tc.accept)
					return nil
				}))
			}
			var header http.Header
			opts = append(opts, crawl.WithPageHook(func(p *crawl.Page) { header = p.Header.Clone() }))

			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			stats, res, err := crawlSite(t, context.Background(), []string{site.URL("/bomb")}, opts...)
			runtime.ReadMemStats(&after)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			r := res[site.URL("/bomb")]
			// A bomb fully read would allocate its size; the cap, a few
			// buffers and the crawl's own state are far below this.
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
				t.Errorf("allocated %d MiB during the crawl, want under 64 MiB", alloc>>20)
			}
			if n := site.Count("/bomb"); n != 1 {
				t.Errorf("server saw %d requests, want 1 (not retried)", n)
			}
			if !tc.tooBig {
				if r.Err != nil {
					t.Fatalf("Err: got %v, want nil", r.Err)
				}
				if r.Size > int(tc.limit) {
					t.Errorf("Size: got %d, want at most %d", r.Size, tc.limit)
				}
				if got := header.Get("Content-Encoding"); got != tc.coding {
					t.Errorf("Page.Header Content-Encoding: got %q, want %q (left encoded)", got, tc.coding)
				}
				return
			}
			if !errors.Is(r.Err, crawl.ErrBodyTooLarge) {
				t.Fatalf("Err: got %v, want ErrBodyTooLarge", r.Err)
			}
			if stats.FailKinds["body_too_large"] != 1 {
				t.Errorf("Stats.FailKinds: got %v, want body_too_large: 1", stats.FailKinds)
			}
			// Size is how far the read went: the cap and one byte, well
			// within 1.1 times the cap.
			if r.Size <= int(tc.limit) || float64(r.Size) > 1.1*float64(tc.limit) {
				t.Errorf("Size: got %d, want over %d and at most 1.1 times it", r.Size, tc.limit)
			}
		})
	}
}

// guardEncode compresses s in the format named: gzip, zlib or flate.
func guardEncode(format, s string) string {
	var b bytes.Buffer
	var w io.WriteCloser
	switch format {
	case "gzip":
		w = gzip.NewWriter(&b)
	case "zlib":
		w = zlib.NewWriter(&b)
	default:
		w, _ = flate.NewWriter(&b, flate.BestSpeed) // the level is valid
	}
	io.WriteString(w, s)
	w.Close()
	return b.String()
}

func TestFetchContentCoding(t *testing.T) {
	const page = `<html><body><a href="/next">next</a></body></html>`
	gz := guardEncode("gzip", page)
	zl := guardEncode("zlib", page)
	raw := guardEncode("flate", page)
	gzgz := guardEncode("gzip", gz)
	corrupt := []byte(gz)
	corrupt[len(corrupt)-6] ^= 0xff // the CRC-32

	for _, tc := range []struct {
		name, coding, body string
		want               string // the page body; "" for an error
	}{
		{"gzip", "gzip", gz, page},
		{"x-gzip", "x-gzip", gz, page},
		{"upper case", "GZIP", gz, page},
		{"deflate as zlib", "deflate", zl, page},
		{"deflate raw", "deflate", raw, page},
		{"identity", "identity", page, page},
		{"gzip twice", "gzip, gzip", gzgz, page},
		{"empty gzip", "gzip", "", ""},
		{"corrupt gzip", "gzip", string(corrupt), ""},
		{"not gzip at all", "gzip", page, ""},
		{"three codings", "gzip, gzip, gzip", gz, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			site := crawltest.Start(t)
			site.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				w.Header().Set("Content-Encoding", tc.coding)
				fmt.Fprint(w, tc.body)
			}))
			site.Page("/next")
			var mu sync.Mutex
			pages := map[string]*crawl.Page{}
			_, res, err := crawlSite(t, context.Background(), []string{site.URL("/")},
				crawl.WithRobots(false), crawl.WithMaxTries(2), crawl.WithBackoff(0, 0),
				crawl.WithRequestHook(func(r *http.Request) error {
					r.Header.Set("Accept-Encoding", "gzip, deflate")
					return nil
				}),
				crawl.WithPageHook(func(p *crawl.Page) {
					c := *p
					c.Body = bytes.Clone(p.Body)
					c.Header = p.Header.Clone()
					mu.Lock()
					pages[p.URL.String()] = &c
					mu.Unlock()
				}))
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			r := res[site.URL("/")]
			p := pages[site.URL("/")]
			if n := site.Count("/"); n != 1 {
				t.Errorf("server saw / %d times, want 1 (a bad body is not retried)", n)
			}
			switch {
			case tc.name == "empty gzip":
				if r.Err != nil || r.Size != 0 {
					t.Errorf("got Err %v Size %d, want nil 0", r.Err, r.Size)
				}
			case tc.want == "":
				if r.Err == nil {
					t.Errorf("Err: got nil, want an error for a body that does not decode")
				}
				if r.Status != http.StatusOK {
					t.Errorf("Status: got %d, want 200 (the response came)", r.Status)
				}
			default:
				if r.Err != nil {
					t.Fatalf("Err: got %v, want nil", r.Err)
				}
				if p == nil || string(p.Body) != tc.want {
					t.Fatalf("Page.Body: got %v, want %q", p, tc.want)
				}
				if r.NumNewURLs != 1 || site.Count("/next") != 1 {
					t.Errorf("got %d new links, /next fetched %d times, want 1, 1", r.NumNewURLs, site.Count("/next"))
				}
				if ce := p.Header.Get("Content-Encoding"); ce != "" && tc.coding != "identity" {
					t.Errorf("Page.Header Content-Encoding: got %q, want none (decoded)", ce)
				}
			}
		})
	}
}

func TestFetchHeaderCap(t *testing.T) {
	site := crawltest.Start(t)
	site.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		filler := strings.Repeat("x", 1000)
		for i := range 2048 { // 2 MiB of headers
			w.Header().Set(fmt.Sprintf("X-Filler-%d", i), filler)
		}
		fmt.Fprint(w, "<p>hi</p>")
	}))
	stats, res, err := crawlSite(t, context.Background(), []string{site.URL("/")},
		crawl.WithRobots(false), crawl.WithMaxTries(1))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	r := res[site.URL("/")]
	if r.Err == nil || r.Status != 0 {
		t.Errorf("got Status %d Err %v, want 0 and an error", r.Status, r.Err)
	}
	if stats.Failures != 1 {
		t.Errorf("Stats.Failures: got %d, want 1", stats.Failures)
	}
}

func TestFetchSlowServers(t *testing.T) {
	for _, tc := range []struct {
		name    string
		handler http.Handler
		kind    string // FailKind of the Result
	}{
		{"never answers", crawltest.NoResponse(), "timeout"},
		{"headers then stall", crawltest.Stall(), "timeout"},
		{"trickle", crawltest.Trickle(50 * time.Millisecond), "timeout"},
		{"reset mid-body", crawltest.ConnReset(4000), "network"},
		{"truncated chunked body", crawltest.Truncated(4000), "network"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			site := crawltest.Start(t)
			site.Handle("/trap", tc.handler)
			// A bound on the test, not a timing assertion: a hang fails
			// here instead of at the test binary's deadline.
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			u := site.URL("/trap")
			stats, res, err := crawlSite(t, ctx, []string{u},
				crawl.WithRequestTimeout(200*time.Millisecond), crawl.WithMaxTries(2),
				crawl.WithBackoff(0, 0), crawl.WithRobots(false))
			if err != nil {
				t.Fatalf("Run: got %v, want nil", err)
			}
			if len(res) != 1 {
				t.Fatalf("got %d Results, want 1", len(res))
			}
			r := res[u]
			if r.Err == nil || r.Tries != 2 {
				t.Errorf("got Err %v Tries %d, want an error after 2 tries", r.Err, r.Tries)
			}
			if got := crawl.FailKind(r.Err); got != tc.kind {
				t.Errorf("FailKind: got %q, want %q (Err %v)", got, tc.kind, r.Err)
			}
			if stats.Failures != 1 {
				t.Errorf("Stats.Failures: got %d, want 1", stats.Failures)
			}
			if n := site.Count("/trap"); n != 2 {
				t.Errorf("server saw %d requests, want 2", n)
			}
		})
	}
}

// A response whose status line and header came, and whose body then
// stalled past the request timeout, got a response: its Result has the
// status (and the error), as "status ... 0 when none came" says; one that
// sent nothing has 0.
func TestStalledBodyKeepsStatus(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/stall", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Content-Length", "1000")
		w.WriteHeader(http.StatusOK)
		w.Write([]byte("<p>a start"))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	mux.HandleFunc("/silent", func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	})
	mux.Handle("/{$}", htmlPage(`<a href="/stall">s</a><a href="/silent">n</a>`))
	s := newSite(t, mux)
	_, res, err := crawlSite(t, crawlerCtx(t), []string{s.URL + "/"}, crawl.WithRequestTimeout(300*time.Millisecond), crawl.WithMaxTries(1))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if r := res[s.URL+"/stall"]; r.Status != 200 || r.Err == nil || r.Kind() != "fail" {
		t.Errorf("/stall: status %d, err %v, kind %s; want 200, a timeout, fail", r.Status, r.Err, r.Kind())
	}
	if r := res[s.URL+"/silent"]; r.Status != 0 || r.Err == nil {
		t.Errorf("/silent: status %d, err %v; want 0 and a timeout", r.Status, r.Err)
	}
}

// TestHugeHeaderNotRetried: a response head over the client's 1 MiB limit
// would only come again: it is a failure at once, not retried.
func TestHugeHeaderNotRetried(t *testing.T) {
	var hits atomic.Int64
	s := newSite(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("X-Big", strings.Repeat("a", 2<<20))
		w.Write([]byte("ok"))
	}))
	var res []crawl.Result
	c, err := crawl.New(crawl.WithRobots(false), crawl.WithMaxTries(4), crawl.WithBackoff(0, 0),
		crawl.WithResultHook(func(r crawl.Result) { res = append(res, r) }))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Run(crawlerCtx(t), s.URL+"/"); err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || res[0].Err == nil || res[0].Tries != 1 || hits.Load() != 1 {
		t.Fatalf("got %d Results (%+v), %d requests; want one failed Result of 1 try, 1 request", len(res), res, hits.Load())
	}
}

// A server that answers 101 Switching Protocols (the crawler asks no
// upgrade) and then says nothing: net/http gives the connection itself as
// the body and no longer watches ctx, and the read held the Run past the
// request timeout, ctx and WithMaxDuration, until the server let go (40 s,
// 600 s). A 101 is now a final answer with no body, on a page and on a
// robots.txt; and a body whose transport ignores ctx is cut at the
// attempt's end all the same.
func TestFetchUpgradeStall(t *testing.T) {
	upgrade := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		io.WriteString(conn, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
		// Silent until the crawler lets go of the connection.
		io.Copy(io.Discard, conn)
	})
	for _, robots := range []bool{false, true} {
		t.Run(fmt.Sprintf("robots=%v", robots), func(t *testing.T) {
			mux := http.NewServeMux()
			if robots {
				mux.Handle("/robots.txt", upgrade)
				mux.Handle("/", htmlPage("<p>a page</p>"))
			} else {
				mux.Handle("/", upgrade)
			}
			srv := httptest.NewServer(mux)
			defer srv.Close()
			// A bound on the test, not a timing assertion: the hang
			// lasted as long as the server held the connection.
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_, res, err := crawlSite(t, ctx, []string{srv.URL + "/"},
				crawl.WithRequestTimeout(300*time.Millisecond), crawl.WithRobots(robots), crawl.WithBackoff(0, 0))
			if err != nil || ctx.Err() != nil {
				t.Fatalf("Run: %v (ctx %v), want it to return on its own", err, ctx.Err())
			}
			r, ok := res[srv.URL+"/"]
			if !ok {
				t.Fatalf("no Result for the root")
			}
			if !robots && r.Status != http.StatusSwitchingProtocols {
				t.Errorf("the root answered 101: Result status %d, err %v; want 101", r.Status, r.Err)
			}
		})
	}
	t.Run("a transport that ignores ctx", func(t *testing.T) {
		pr, pw := io.Pipe()
		defer pw.Close()
		rt := roundTripFunc(func(req *http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/html"}}, Body: pr, Request: req}, nil
		})
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, res, err := crawlSite(t, ctx, []string{"http://stall.example/"}, crawl.WithHTTPClient(&http.Client{Transport: rt}),
			crawl.WithRequestTimeout(300*time.Millisecond), crawl.WithMaxTries(1), crawl.WithRobots(false))
		if err != nil || ctx.Err() != nil {
			t.Fatalf("Run: %v (ctx %v), want it to return on its own", err, ctx.Err())
		}
		if r := res["http://stall.example/"]; crawl.FailKind(r.Err) != "timeout" {
			t.Errorf("a body that never ends, under a transport that ignores ctx: Err %v (kind %q), want a timeout", r.Err, crawl.FailKind(r.Err))
		}
	})
}
