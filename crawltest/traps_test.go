package crawltest_test

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/asyncrawl/crawl/crawltest"
)

// hrefRE finds the links crawltest writes.
var hrefRE = regexp.MustCompile(`<a href="([^"]*)"`)

// links returns the links of an HTML body, resolved against base.
func links(t *testing.T, base, body string) []string {
	t.Helper()
	b, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range hrefRE.FindAllStringSubmatch(body, -1) {
		u, err := b.Parse(html.UnescapeString(m[1]))
		if err != nil {
			t.Fatalf("link %q on %s: %v", m[1], base, err)
		}
		out = append(out, u.String())
	}
	return out
}

func TestCalendar(t *testing.T) {
	site := crawltest.Start(t)
	site.Handle("/calendar/", crawltest.Calendar())
	client := site.Client()
	// Walk 400 days by the first link of each page and check that every
	// link leads forward to a page not visited yet: the trap never runs dry.
	visited := map[string]bool{}
	u := "http://www.example.com/calendar/"
	for i := range 400 {
		visited[u] = true
		got := get(t, client, u)
		if got.status != 200 {
			t.Fatalf("step %d: GET %s: status %d, want 200", i, u, got.status)
		}
		ls := links(t, u, got.body)
		if len(ls) != 2 {
			t.Fatalf("step %d: GET %s: links %v, want 2", i, u, ls)
		}
		for _, l := range ls {
			if visited[l] || l <= u {
				t.Fatalf("step %d: GET %s links back to %s", i, u, l)
			}
		}
		u = ls[0]
	}
	if want := "http://www.example.com/calendar/2001-02-04"; u != want {
		t.Errorf("after 400 days: %s, want %s", u, want)
	}
	start := get(t, client, "http://www.example.com/calendar/")
	if got, want := links(t, "http://x/calendar/", start.body), []string{"http://x/calendar/2000-01-02", "http://x/calendar/2000-02-01"}; !slices.Equal(got, want) {
		t.Errorf("links of the start page: %v, want %v", got, want)
	}
	if got := get(t, client, "http://www.example.com/calendar/not-a-date"); got.status != 404 {
		t.Errorf("GET /calendar/not-a-date: status %d, want 404", got.status)
	}
}

func TestRepeater(t *testing.T) {
	site := crawltest.Start(t)
	site.Handle("/a/", crawltest.Repeater())
	site.Handle("/b/", crawltest.Repeater())
	client := site.Client()
	for _, tt := range []struct{ start, want string }{
		{"/a/", "/a/a/a/a/a/a/"},
		{"/b/x", "/b/x/x/x/x/x/x"},
	} {
		u := site.URL(tt.start)
		for range 5 {
			ls := links(t, u, get(t, client, u).body)
			if len(ls) != 1 {
				t.Fatalf("GET %s: links %v, want 1", u, ls)
			}
			u = ls[0]
		}
		if want := site.URL(tt.want); u != want {
			t.Errorf("5 links from %s: %s, want %s", tt.start, u, want)
		}
	}
}

func TestManyLinks(t *testing.T) {
	const n = 10000
	site := crawltest.Start(t)
	site.Handle("/big", crawltest.ManyLinks(n, "/p/%d?q=<&>"))
	got := get(t, site.Client(), site.URL("/big"))
	ls := links(t, site.URL("/big"), got.body)
	if len(ls) != n {
		t.Fatalf("links: %d, want %d", len(ls), n)
	}
	for _, i := range []int{0, 1, n - 1} {
		if want := site.URL(fmt.Sprintf("/p/%d?q=<&>", i)); ls[i] != want {
			t.Errorf("link %d: %s, want %s", i, ls[i], want)
		}
	}
	slices.Sort(ls)
	if len(slices.Compact(ls)) != n {
		t.Errorf("links are not distinct")
	}
}

func TestRedirects(t *testing.T) {
	site := crawltest.Start(t)
	site.Handle("/loop/", crawltest.RedirectLoop(http.StatusFound, 3))
	site.Handle("/self/", crawltest.RedirectLoop(http.StatusMovedPermanently, 1))
	site.Handle("/chain/", crawltest.RedirectChain(http.StatusTemporaryRedirect))
	client := site.Client()
	tests := []struct {
		start  string
		status int
		hops   []string
	}{
		{"/loop/", 302, []string{"/loop/1", "/loop/2", "/loop/0", "/loop/1", "/loop/2"}},
		{"/self/0", 301, []string{"/self/0", "/self/0"}},
		{"/chain/", 307, []string{"/chain/1", "/chain/2", "/chain/3", "/chain/4"}},
	}
	for _, tt := range tests {
		u := tt.start
		var hops []string
		for range tt.hops {
			got := get(t, client, site.URL(u))
			if got.status != tt.status {
				t.Fatalf("GET %s: status %d, want %d", u, got.status, tt.status)
			}
			u = got.header.Get("Location")
			hops = append(hops, u)
		}
		if !slices.Equal(hops, tt.hops) {
			t.Errorf("redirects from %s: %v, want %v", tt.start, hops, tt.hops)
		}
	}
	// A client that follows redirects gives up on the loop.
	resp, err := client.Get(site.URL("/loop/"))
	if err == nil {
		resp.Body.Close()
		t.Errorf("GET /loop/ with redirects followed: %d, want an error", resp.StatusCode)
	}
}

// TestBomb decodes each bomb and checks it inflates to its size from a
// body a small fraction of it.
func TestBomb(t *testing.T) {
	const size = 3<<20 + 12345 // not a whole number of the bombs' units
	decoders := map[string]func(io.Reader) (io.Reader, error){
		"gzip":    func(r io.Reader) (io.Reader, error) { return gzip.NewReader(r) },
		"deflate": func(r io.Reader) (io.Reader, error) { return zlib.NewReader(r) },
		"zstd":    zstdDecoder,
	}
	for _, coding := range []string{"gzip", "deflate", "zstd"} {
		for _, size := range []int64{size, 0, 1 << 20} {
			t.Run(coding+"/"+strconv.FormatInt(size, 10), func(t *testing.T) {
				site := crawltest.Start(t)
				site.Handle("/bomb", crawltest.Bomb(coding, size))
				req, _ := http.NewRequest(http.MethodGet, "http://www.example.com/bomb", nil)
				// The caller asks, so the transport leaves the body encoded.
				req.Header.Set("Accept-Encoding", coding)
				got := roundTrip(t, site.Client(), req)
				if ce := got.header.Get("Content-Encoding"); ce != coding {
					t.Errorf("Content-Encoding: %q, want %q", ce, coding)
				}
				if cl := got.header.Get("Content-Length"); cl != strconv.Itoa(len(got.body)) {
					t.Errorf("Content-Length: %s, body %d bytes", cl, len(got.body))
				}
				if size > 0 && int64(len(got.body)) > size/500 {
					t.Errorf("encoded body: %d bytes, want at most %d", len(got.body), size/500)
				}
				dec, err := decoders[coding](strings.NewReader(got.body))
				if errors.Is(err, errSkip) {
					t.Skip("no zstd command to decode with")
				}
				if err != nil {
					t.Fatalf("decode: %v", err)
				}
				n, err := io.Copy(io.Discard, dec)
				if err != nil || n != size {
					t.Errorf("decoded: %d bytes, %v; want %d bytes, no error", n, err, size)
				}
			})
		}
	}
	t.Run("gzip decoded by the transport", func(t *testing.T) {
		site := crawltest.Start(t)
		site.Handle("/bomb", crawltest.Bomb("gzip", size))
		resp, err := site.Client().Get(site.URL("/bomb"))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		n, err := io.Copy(io.Discard, resp.Body)
		if err != nil || n != size || !resp.Uncompressed {
			t.Errorf("read %d bytes, %v, Uncompressed %t; want %d bytes, no error, true", n, err, resp.Uncompressed, size)
		}
	})
	t.Run("unknown coding", func(t *testing.T) {
		defer func() {
			if recover() == nil {
				t.Errorf("Bomb(br) did not panic")
			}
		}()
		crawltest.Bomb("br", 1)
	})
}

// zstdDecoder decodes with the zstd command, which the standard library
// lacks a decoder for; the test is skipped where it is not installed.
func zstdDecoder(r io.Reader) (io.Reader, error) {
	path, err := exec.LookPath("zstd")
	if err != nil {
		return nil, errSkip
	}
	var out bytes.Buffer
	cmd := exec.Command(path, "-d", "-c", "-q")
	cmd.Stdin, cmd.Stdout = r, &out
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("zstd -d: %w", err)
	}
	return &out, nil
}

var errSkip = errors.New("skip")

// roundTrip sends req through the transport of client and reads the body.
func roundTrip(t *testing.T, client *http.Client, req *http.Request) response {
	t.Helper()
	resp, err := client.Transport.RoundTrip(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read body: %v", req.Method, req.URL, err)
	}
	return response{resp.StatusCode, resp.Header, string(body)}
}

// TestTrickle reads a trickle for a while and checks that its bytes came
// no faster than one an interval and that the body did not end.
func TestTrickle(t *testing.T) {
	const every = 10 * time.Millisecond
	site := crawltest.Start(t)
	site.Handle("/slow", crawltest.Trickle(every))
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, site.URL("/slow"), nil)
	resp, err := site.Client().Do(req)
	if err != nil {
		t.Skipf("no headers before the deadline (a loaded machine): %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("status %d, want 200", resp.StatusCode)
	}
	body, err := io.ReadAll(resp.Body)
	elapsed := time.Since(start)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("reading the body: %v, want context.DeadlineExceeded", err)
	}
	// The first byte comes with the headers, then one per interval at
	// most: the server sleeps between them.
	if limit := int(elapsed/every) + 1; len(body) < 1 || len(body) > limit {
		t.Errorf("read %d bytes (%q) in %v, want 1 to %d", len(body), body, elapsed, limit)
	}
	if !strings.HasPrefix("<!DOCTYPE html>\n<html><body>\n", string(body)) {
		t.Errorf("body %q, want a prefix of an HTML page", body)
	}
	waitFor(t, "the trickle to end", func() bool { return site.InFlight() == 0 })
}

// TestHeld checks the traps that hold a request open: each keeps the
// client waiting until it gives up, and ends its handler then.
func TestHeld(t *testing.T) {
	tests := []struct {
		name    string
		h       http.Handler
		headers bool // the client gets a status and headers
	}{
		{"stall", crawltest.Stall(), true},
		{"no response", crawltest.NoResponse(), false},
		{"latency", crawltest.Status(200), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			site := crawltest.Start(t)
			rt := site.Handle("/held", tt.h)
			if tt.name == "latency" {
				rt.Latency(time.Hour)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, site.URL("/held"), nil)
			type result struct {
				resp *http.Response
				err  error
			}
			done := make(chan result, 1)
			go func() {
				resp, err := site.Client().Do(req)
				done <- result{resp, err}
			}()
			waitFor(t, "the request to arrive", func() bool { return site.InFlight() == 1 })
			if tt.headers {
				res := <-done
				if res.err != nil {
					t.Fatalf("GET /held: %v, want the headers", res.err)
				}
				defer res.resp.Body.Close()
				go func() {
					_, err := res.resp.Body.Read(make([]byte, 1))
					done <- result{nil, err}
				}()
			}
			// Nothing more comes until the client gives up.
			select {
			case res := <-done:
				t.Fatalf("the client got %v, %v before it gave up", res.resp, res.err)
			case <-time.After(20 * time.Millisecond):
			}
			cancel()
			if res := <-done; !errors.Is(res.err, context.Canceled) {
				t.Errorf("after the client gave up: %v, want context.Canceled", res.err)
			}
			waitFor(t, "the handler to end", func() bool { return site.InFlight() == 0 })
		})
	}
	t.Run("client timeout", func(t *testing.T) {
		site := crawltest.Start(t)
		site.Handle("/", crawltest.NoResponse())
		client := site.Client()
		client.Timeout = 50 * time.Millisecond
		resp, err := client.Get("http://www.example.com/")
		if err == nil {
			resp.Body.Close()
			t.Fatalf("GET /: %d, want a timeout", resp.StatusCode)
		}
		var terr interface{ Timeout() bool }
		if !errors.As(err, &terr) || !terr.Timeout() {
			t.Errorf("GET /: %v, want a timeout", err)
		}
	})
}

func TestConnReset(t *testing.T) {
	site := crawltest.Start(t)
	site.Handle("/reset", crawltest.ConnReset(1000))
	site.Handle("/reset0", crawltest.ConnReset(0))
	for _, path := range []string{"/reset", "/reset0"} {
		resp, err := site.Client().Get(site.URL(path))
		if err != nil {
			// The reset came before the headers were read: still a reset.
			if !errors.Is(err, syscall.ECONNRESET) {
				t.Errorf("GET %s: %v, want ECONNRESET", path, err)
			}
			continue
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !errors.Is(err, syscall.ECONNRESET) {
			t.Errorf("GET %s: read %d bytes, %v; want ECONNRESET", path, len(body), err)
		}
	}
}

func TestTruncated(t *testing.T) {
	for _, n := range []int{0, 1, 5000} {
		site := crawltest.Start(t)
		site.Handle("/cut", crawltest.Truncated(n))
		resp, err := site.Client().Get(site.URL("/cut"))
		if err != nil {
			t.Fatalf("GET /cut: %v", err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if len(body) != n || !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("Truncated(%d): read %d bytes, %v; want %d, io.ErrUnexpectedEOF", n, len(body), err, n)
		}
		if len(resp.TransferEncoding) != 1 || resp.TransferEncoding[0] != "chunked" {
			t.Errorf("Truncated(%d): Transfer-Encoding %v, want chunked", n, resp.TransferEncoding)
		}
	}
}

// TestCloseEndsEverything holds a request open in every way a Site can,
// closes the Site, and checks that each client sees an error, not a short
// page, and that no goroutine is left.
func TestCloseEndsEverything(t *testing.T) {
	before := runtime.NumGoroutine()
	site := crawltest.New()
	site.Handle("/trickle", crawltest.Trickle(time.Millisecond))
	site.Handle("/stall", crawltest.Stall())
	site.Handle("/silent", crawltest.NoResponse())
	site.Page("/latency").Latency(time.Hour)
	// A handler that ignores its context, writing to a client that does
	// not read.
	site.Handle("/endless", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		buf := make([]byte, 64<<10)
		for {
			if _, err := w.Write(buf); err != nil {
				return
			}
		}
	}))
	paths := []string{"/trickle", "/stall", "/silent", "/latency", "/endless"}
	client := site.Client()
	var wg sync.WaitGroup
	errs := make([]error, len(paths))
	unread := make(chan *http.Response, 1)
	for i, p := range paths {
		wg.Go(func() {
			resp, err := client.Get("http://www.example.com" + p)
			if err == nil && p == "/endless" {
				unread <- resp
				return
			}
			if err == nil {
				_, err = io.ReadAll(resp.Body)
				resp.Body.Close()
			}
			errs[i] = err
		})
	}
	waitFor(t, "every request in flight", func() bool { return site.InFlight() == len(paths) })
	resp := <-unread
	site.Close()
	wg.Wait()
	if _, err := io.Copy(io.Discard, resp.Body); err == nil {
		t.Errorf("GET /endless ended without error at Close, want an error")
	}
	resp.Body.Close()
	errs = errs[:len(errs)-1]
	for i, err := range errs {
		if err == nil {
			t.Errorf("GET %s ended without error at Close, want an error", paths[i])
		}
	}
	if got := site.InFlight(); got != 0 {
		t.Errorf("InFlight after Close = %d, want 0", got)
	}
	site.Close() // a second Close is harmless
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<16)
		t.Errorf("goroutines: %d after Close, %d before\n%s", n, before, buf[:runtime.Stack(buf, true)])
	}
}
