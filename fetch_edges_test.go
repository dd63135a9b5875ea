package crawl_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/asyncrawl/crawl"
)

// edgeCrawl crawls roots with a generous deadline that only catches hangs.
func edgeCrawl(t *testing.T, roots []string, opts ...crawl.Option) (*crawl.Stats, map[string]crawl.Result) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	stats, res, err := crawlSite(t, ctx, roots, opts...)
	if err != nil {
		t.Fatalf("Run: got %v, want nil", err)
	}
	return stats, res
}

// edgeServer starts an unstarted httptest server in front of h after
// counting the connections it accepts, closed at the end of the test.
func edgeServer(t *testing.T, h http.Handler, useTLS bool) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var conns atomic.Int64
	s := httptest.NewUnstartedServer(h)
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	// A client refusing the certificate makes the server log the failed
	// handshake; the tests count handshakes instead.
	s.Config.ErrorLog = log.New(io.Discard, "", 0)
	if useTLS {
		s.StartTLS()
	} else {
		s.Start()
	}
	t.Cleanup(s.Close)
	return s, &conns
}

// TestFetchSitemapOverLimit: a sitemap larger than MaxSitemapBytes is read
// up to the limit, the URLs in that part are queued, the rest is not read,
// and the Result's Err wraps ErrSitemapTooLarge, whether the server
// announced the size (Content-Length) or not (chunked).
func TestFetchSitemapOverLimit(t *testing.T) {
	for _, announce := range []bool{true, false} {
		t.Run(fmt.Sprint("Content-Length=", announce), func(t *testing.T) {
			mux := http.NewServeMux()
			mux.Handle("/{$}", htmlPage("<p>root</p>"))
			mux.Handle("/", htmlPage("<p>page</p>"))
			s := newSite(t, mux)
			first, last, late := s.URL+"/first\n", s.URL+"/last\n", s.URL+"/late\n"
			// Lines of blanks, skipped by the parser, fill the file:
			// /last ends 100 bytes before the limit, /late starts 100
			// bytes after it.
			blanks := strings.Repeat(" ", 60_000) + "\n"
			fill := func(w io.Writer, n int) {
				for ; n >= len(blanks); n -= len(blanks) {
					io.WriteString(w, blanks)
				}
				io.WriteString(w, blanks[len(blanks)-n:])
			}
			before := crawl.MaxSitemapBytes - 100 - len(first) - len(last)
			size := crawl.MaxSitemapBytes + 100 + len(late)
			mux.Handle("/sitemap.xml", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/plain")
				if announce {
					w.Header().Set("Content-Length", strconv.Itoa(size))
				}
				io.WriteString(w, first)
				fill(w, before)
				io.WriteString(w, last)
				fill(w, 200)
				io.WriteString(w, late)
			}))
			_, res := edgeCrawl(t, []string{s.URL + "/"}, crawl.WithSitemaps(true), crawl.WithRobots(false))
			r := fetchMust(t, res, s.URL+"/sitemap.xml")
			if !errors.Is(r.Err, crawl.ErrSitemapTooLarge) {
				t.Errorf("sitemap Result.Err: got %v, want one wrapping ErrSitemapTooLarge", r.Err)
			}
			if r.NumNewURLs != 2 {
				t.Errorf("sitemap Result.NumNewURLs: got %d, want 2 (/first and /last, before the limit)", r.NumNewURLs)
			}
			s.wantHits(t, "/first", 1)
			s.wantHits(t, "/last", 1)
			s.wantHits(t, "/late", 0)
		})
	}
}

// TestFetchUndecodableCoding: a text body in a content coding the crawler
// cannot decode reaches the page hook byte for byte as sent, with its
// Content-Encoding, no Encoding, and is not parsed: no link is followed,
// no robots meta tag is read.
func TestFetchUndecodableCoding(t *testing.T) {
	// Not real br or zstd: the crawler must not look inside either way.
	// The bytes above 0x7f are not UTF-8, so a charset decoder would
	// change them, and the markup would give a link and a meta tag.
	sent := "\x8b\x05\x80" + `<meta name="robots" content="noindex"><a href="/next">` + "\xe9\xff</a>\x03"
	for _, coding := range []string{"br", "zstd", "gzip, br"} {
		for _, contentType := range []string{"text/html", "text/html; charset=iso-8859-1"} {
			t.Run(coding+" "+contentType, func(t *testing.T) {
				mux := http.NewServeMux()
				mux.Handle("/{$}", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Content-Type", contentType)
					w.Header().Set("Content-Encoding", coding)
					io.WriteString(w, sent)
				}))
				mux.Handle("/next", htmlPage("<p>next</p>"))
				s := newSite(t, mux)
				var pages fetchPages
				_, res := edgeCrawl(t, []string{s.URL + "/"}, crawl.WithPageHook(pages.hook))
				r := fetchMust(t, res, s.URL+"/")
				p := pages.get(t, s.URL+"/")
				if !bytes.Equal(p.Body, []byte(sent)) {
					t.Errorf("Page.Body: got %q (%d bytes), want %q (%d bytes, as sent)", p.Body, len(p.Body), sent, len(sent))
				}
				if p.Encoding != "" || r.Encoding != "" {
					t.Errorf("Page.Encoding, Result.Encoding: got %q, %q, want empty (not decoded)", p.Encoding, r.Encoding)
				}
				if got := p.Header.Get("Content-Encoding"); got != coding {
					t.Errorf("Page.Header Content-Encoding: got %q, want %q", got, coding)
				}
				if p.NoIndex {
					t.Errorf("Page.NoIndex: got true, want false (the body is not parsed)")
				}
				if r.Err != nil || r.NumURLs != 0 {
					t.Errorf("Result: got Err %v, NumURLs %d, want nil, 0 (no links parsed)", r.Err, r.NumURLs)
				}
				s.wantHits(t, "/next", 0)
			})
		}
	}
}

// TestFetchCharsetWord: the word "charset" in the first KiB of a page that
// declares no encoding (a <script charset>, text) does not stop UTF-8
// from being detected; a <meta> declaration after such a word still
// counts.
func TestFetchCharsetWord(t *testing.T) {
	pad := "<p>" + strings.Repeat("a", 1100) + "</p>" // the first non-ASCII byte comes after the first KiB
	cp1251 := "\xcf\xf0\xe8\xe2\xe5\xf2"              // "Привет" in windows-1251
	for _, tc := range []struct {
		name, body, encoding, contains string
	}{
		{"script charset", `<script charset="utf-8" src="/x.js"></script>` + pad + "<p>café</p>", "utf-8", "café"},
		{"text", "<p>Which charset is this?</p>" + pad + "<p>café</p>", "utf-8", "café"},
		{"meta after script", `<script charset="utf-8" src="/x.js"></script><meta charset="windows-1251">` + pad + cp1251, "windows-1251", "Привет"},
		{"meta in a comment", `<!-- <meta charset="windows-1251"> -->` + pad + "<p>café</p>", "utf-8", "café"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSite(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html")
				io.WriteString(w, tc.body)
			}))
			var pages fetchPages
			_, res := edgeCrawl(t, []string{s.URL + "/"}, crawl.WithPageHook(pages.hook))
			r := fetchMust(t, res, s.URL+"/")
			p := pages.get(t, s.URL+"/")
			if r.Encoding != tc.encoding || p.Encoding != tc.encoding {
				t.Errorf("Result.Encoding, Page.Encoding: got %q, %q, want %q", r.Encoding, p.Encoding, tc.encoding)
			}
			if !bytes.Contains(p.Body, []byte(tc.contains)) {
				t.Errorf("Page.Body: got %q, want it to contain %q", p.Body[len(p.Body)-30:], tc.contains)
			}
		})
	}
}

// TestFetchXMLDeclaration: an XML body's encoding declaration is honoured
// when no header or byte order mark says otherwise, and Page.Body, in
// UTF-8, declares UTF-8, so that encoding/xml reads it.
func TestFetchXMLDeclaration(t *testing.T) {
	const nihongo = "\x93\xfa\x96\x7b\x8c\xea" // "日本語" in Shift_JIS
	rss := func(decl string) string {
		return `<?xml version="1.0"` + decl + `?>` + "\n" +
			`<rss version="2.0"><channel><title>` + nihongo + `</title></channel></rss>`
	}
	for _, tc := range []struct {
		name, contentType, body string
		encoding, title         string
	}{
		{"Shift_JIS RSS", "application/rss+xml", rss(` encoding="Shift_JIS"`), "shift_jis", "日本語"},
		{"single quotes", "application/xml", rss(` encoding='shift_jis' standalone='yes'`), "shift_jis", "日本語"},
		{"text/xml", "text/xml", `<?xml version="1.0" encoding="ISO-8859-1"?><rss><channel><title>caf` + "\xe9</title></channel></rss>", "windows-1252", "café"},
		{"header beats declaration", "application/rss+xml; charset=Shift_JIS", rss(` encoding="EUC-JP"`), "shift_jis", "日本語"},
		{"utf-8 declared", "application/rss+xml", `<?xml version="1.0" encoding="utf-8"?><rss><channel><title>café</title></channel></rss>`, "utf-8", "café"},
		{"utf-8 BOM beats declaration", "application/rss+xml", "\xef\xbb\xbf" + `<?xml version="1.0" encoding="ISO-8859-1"?><rss><channel><title>café</title></channel></rss>`, "utf-8", "café"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSite(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tc.contentType)
				io.WriteString(w, tc.body)
			}))
			var pages fetchPages
			_, res := edgeCrawl(t, []string{s.URL + "/"}, crawl.WithPageHook(pages.hook))
			r := fetchMust(t, res, s.URL+"/")
			p := pages.get(t, s.URL+"/")
			if r.Encoding != tc.encoding || p.Encoding != tc.encoding {
				t.Errorf("Result.Encoding, Page.Encoding: got %q, %q, want %q", r.Encoding, p.Encoding, tc.encoding)
			}
			if r.Size != len(tc.body) {
				t.Errorf("Result.Size: got %d, want %d (bytes as sent)", r.Size, len(tc.body))
			}
			var feed struct {
				Title string `xml:"channel>title"`
			}
			if err := xml.Unmarshal(p.Body, &feed); err != nil || feed.Title != tc.title {
				t.Errorf("xml.Unmarshal(Page.Body %q): got title %q, err %v, want %q, nil", p.Body, feed.Title, err, tc.title)
			}
		})
	}
}

// TestFetchRobotsNotFoundReusesConnection: a robots.txt answering 404 with
// a body leaves its connection open for the pages of the host.
func TestFetchRobotsNotFoundReusesConnection(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("/robots.txt", http.NotFoundHandler()) // "404 page not found\n"
	mux.Handle("/{$}", htmlPage(`<a href="/a">a</a><a href="/b">b</a>`))
	mux.Handle("/", htmlPage("<p>page</p>"))
	s, conns := edgeServer(t, mux, false)
	_, res := edgeCrawl(t, []string{s.URL + "/"}, crawl.WithWorkers(1))
	if len(res) != 3 {
		t.Errorf("Results: got %d, want 3 (/, /a, /b)", len(res))
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("connections: got %d, want 1 (robots.txt's reused)", n)
	}
}

// TestFetchCertificateErrorNotRetried: a certificate that does not verify
// fails the same way every time, so it is tried once.
func TestFetchCertificateErrorNotRetried(t *testing.T) {
	s, conns := edgeServer(t, htmlPage("<p>secret</p>"), true)
	// The default client does not trust the test server's certificate.
	_, res := edgeCrawl(t, []string{s.URL + "/"}, crawl.WithRobots(false), crawl.WithMaxTries(4), fetchFast)
	r := fetchMust(t, res, s.URL+"/")
	var verr *tls.CertificateVerificationError
	if !errors.As(r.Err, &verr) {
		t.Errorf("Result.Err: got %v, want a *tls.CertificateVerificationError", r.Err)
	}
	if r.Tries != 1 || conns.Load() != 1 {
		t.Errorf("Result.Tries, connections: got %d, %d, want 1, 1 (not retried)", r.Tries, conns.Load())
	}
	if k := crawl.FailKind(r.Err); k != "network" {
		t.Errorf("FailKind: got %q, want network", k)
	}
}

// TestFetchNoSuchHostNotRetried: a host name that does not exist is tried
// once; a DNS failure that may pass is retried.
func TestFetchNoSuchHostNotRetried(t *testing.T) {
	for _, tc := range []struct {
		name  string
		err   net.DNSError
		dials int64
	}{
		{"not found", net.DNSError{Err: "no such host", IsNotFound: true}, 1},
		{"temporary", net.DNSError{Err: "server misbehaving", IsTemporary: true}, 4},
		{"timeout", net.DNSError{Err: "i/o timeout", IsTimeout: true}, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var dials atomic.Int64
			client := &http.Client{Transport: &http.Transport{
				DialContext: func(_ context.Context, _, addr string) (net.Conn, error) {
					dials.Add(1)
					e := tc.err
					e.Name, _, _ = net.SplitHostPort(addr)
					return nil, &e
				},
			}}
			const u = "http://no-such-host.invalid/"
			_, res := edgeCrawl(t, []string{u}, crawl.WithHTTPClient(client), crawl.WithRobots(false), crawl.WithMaxTries(4), fetchFast)
			r := fetchMust(t, res, u)
			var dnsErr *net.DNSError
			if !errors.As(r.Err, &dnsErr) {
				t.Errorf("Result.Err: got %v, want a *net.DNSError", r.Err)
			}
			if n := dials.Load(); n != tc.dials || int64(r.Tries) != tc.dials {
				t.Errorf("dials, Result.Tries: got %d, %d, want %d, %d", n, r.Tries, tc.dials, tc.dials)
			}
		})
	}
}

// TestFetchTriesCountResends: net/http sends a GET again on a new
// connection each time a kept-alive one fails before any answer, for as
// long as its pool has kept-alive connections (a browser, once). A server
// that resets every connection at the request, reached through a pool of
// four, is sent a try twice at most: Result.Tries counts every request
// sent, and the crawler tries no more once WithMaxTries of them were sent
// (the last may be sent again: one more at most).
func TestFetchTriesCountResends(t *testing.T) {
	for _, tries := range []int{1, 3} {
		t.Run(fmt.Sprintf("MaxTries=%d", tries), func(t *testing.T) {
			var resets atomic.Int64
			mux := http.NewServeMux()
			mux.HandleFunc("/robots.txt", func(w http.ResponseWriter, r *http.Request) {
				w.Write([]byte("User-agent: *\nAllow: /\n"))
			})
			// Four pages at once, each on a connection of its own,
			// kept alive in the pool: net/http would send /reset
			// again on each of them.
			mux.HandleFunc("/{$}", htmlPage(`<a href="/s/1">1</a><a href="/s/2">2</a><a href="/s/3">3</a><a href="/s/4">4</a>`))
			mux.HandleFunc("/s/", func(w http.ResponseWriter, r *http.Request) {
				time.Sleep(50 * time.Millisecond)
				htmlPage(`<a href="/reset">r</a>`)(w, r)
			})
			mux.HandleFunc("/reset", func(w http.ResponseWriter, r *http.Request) {
				resets.Add(1)
				c, _, err := http.NewResponseController(w).Hijack()
				if err != nil {
					t.Error(err)
					return
				}
				c.(*net.TCPConn).SetLinger(0)
				c.Close()
			})
			s, _ := edgeServer(t, mux, false)
			u := s.URL + "/reset"
			_, res := edgeCrawl(t, []string{s.URL + "/"}, crawl.WithMaxTries(tries), crawl.WithWorkers(4), crawl.WithHostWorkers(4), fetchFast)
			r := fetchMust(t, res, u)
			n := resets.Load()
			// A request written to a connection the server had closed
			// already is counted, and never reaches the handler: Tries
			// may be more than the handler saw, never less.
			if int64(r.Tries) < n || r.Tries > tries+2 {
				t.Errorf("Result.Tries %d, the server was sent %d requests: want at least those, and %d at most", r.Tries, n, tries+2)
			}
			// One more at most, or two in a race of net/http's that
			// lets the third connection of a try through (see
			// WithMaxTries): without the cap, 3 and 6.
			if n < 1 || n > int64(tries)+2 {
				t.Errorf("the server was sent %d requests with WithMaxTries(%d): want %d at most", n, tries, tries+2)
			}
			if r.Err == nil {
				t.Errorf("Result.Err nil, want the reset")
			}
		})
	}
}
