package crawl_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/asyncrawl/crawl"
)

// bigSite serves a page linking to a large file nobody parses and a large
// page that the crawl reads for links; sent counts the bytes of /big.bin
// the server got out before the client stopped reading.
func bigSite(t *testing.T, size, pageSize int, sent *atomic.Int64) *site {
	chunk := []byte(strings.Repeat("x", 64<<10))
	return newSite(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			htmlPage(`<a href="/big.bin">file</a><a href="/big.html">page</a>`)(w, r)
		case "/big.bin", "/big.html":
			ct, size := "application/octet-stream", size
			if r.URL.Path == "/big.html" {
				ct, size = "text/html", pageSize
			}
			w.Header().Set("Content-Type", ct)
			for n := 0; n < size; n += len(chunk) {
				k, err := w.Write(chunk)
				if r.URL.Path == "/big.bin" {
					sent.Add(int64(k))
				}
				if err != nil {
					return
				}
			}
		}
	}))
}

// A body over the cap is a failure for a page the crawl reads for links,
// and for a file nobody parses it is cut at the cap and marked, not
// reported broken.
func TestUnparsedBodyOverCapIsNoFailure(t *testing.T) {
	var sent atomic.Int64
	s := bigSite(t, 1<<20, 1<<20, &sent)
	_, res, err := crawlSite(t, context.Background(), []string{s.URL + "/"},
		crawl.WithRobots(false), crawl.WithMaxBodySize(64<<10))
	if err != nil {
		t.Fatal(err)
	}
	bin := res[s.URL+"/big.bin"]
	if bin.Err != nil || !bin.Truncated || bin.Size != 64<<10 || bin.Broken() {
		t.Errorf("big.bin: Err %v Truncated %v Size %d; want no error, truncated at 65536", bin.Err, bin.Truncated, bin.Size)
	}
	page := res[s.URL+"/big.html"]
	if !errors.Is(page.Err, crawl.ErrBodyTooLarge) {
		t.Errorf("big.html: Err %v, want ErrBodyTooLarge", page.Err)
	}
}

// With a custom extractor, which reads every page, a body over the cap is
// a failure whatever its type.
func TestOverCapFailsWithCustomExtractor(t *testing.T) {
	var sent atomic.Int64
	s := bigSite(t, 1<<20, 1<<20, &sent)
	_, res, err := crawlSite(t, context.Background(), []string{s.URL + "/"},
		crawl.WithRobots(false), crawl.WithMaxBodySize(64<<10),
		crawl.WithLinkExtractor(func(ctx context.Context, p *crawl.Page) ([]*url.URL, error) {
			return crawl.ExtractLinks(ctx, p)
		}))
	if err != nil {
		t.Fatal(err)
	}
	if bin := res[s.URL+"/big.bin"]; !errors.Is(bin.Err, crawl.ErrBodyTooLarge) {
		t.Errorf("big.bin: Err %v, want ErrBodyTooLarge", bin.Err)
	}
}

// WithSkipUnparsed reads only the headers of a file nobody parses: the
// server gets to send a small part of it before the client hangs up.
func TestSkipUnparsed(t *testing.T) {
	var sent atomic.Int64
	const size = 64 << 20
	s := bigSite(t, size, 256<<10, &sent)
	var bodies atomic.Int64
	_, res, err := crawlSite(t, context.Background(), []string{s.URL + "/"},
		crawl.WithRobots(false), crawl.WithMaxBodySize(128<<20), crawl.WithSkipUnparsed(true),
		crawl.WithPageHook(func(p *crawl.Page) {
			if p.URL.Path == "/big.bin" {
				bodies.Add(int64(len(p.Body)))
			}
		}))
	if err != nil {
		t.Fatal(err)
	}
	bin := res[s.URL+"/big.bin"]
	if bin.Err != nil || bin.Status != 200 || bin.Size != 0 || bin.ContentType != "application/octet-stream" {
		t.Errorf("big.bin: %+v; want status 200, no error, size 0", bin)
	}
	if bodies.Load() != 0 {
		t.Errorf("the page hook saw %d body bytes, want 0", bodies.Load())
	}
	if n := sent.Load(); n >= size/2 {
		t.Errorf("the server sent %d of %d bytes of big.bin: the body was read", n, size)
	}
	if page := res[s.URL+"/big.html"]; page.Err != nil || page.Size != 256<<10 {
		t.Errorf("big.html: Err %v Size %d; a page the crawl parses is read whole", page.Err, page.Size)
	}
}
