package main

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"sync"
	"time"

	"github.com/asyncrawl/crawl"
)

// isTerminal reports whether f is a terminal (a character device), the
// standard library's way, without a dependency.
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0 && os.Getenv("TERM") != "dumb"
}

// statusLine is stderr shared by the log and the progress line: a log
// record clears the line, is written, and the line is drawn again below
// it, so that neither garbles the other. It is safe for concurrent use.
type statusLine struct {
	mu   sync.Mutex
	w    io.Writer
	line string // the line shown; empty when none is
}

// clearEOL is the ANSI sequence that erases from the cursor to the end of
// the line, so that a shorter line leaves nothing of a longer one.
const clearEOL = "\x1b[K"

// Write writes a log record (slog writes one record per call).
func (s *statusLine) Write(p []byte) (int, error) { return s.writeAbove(s.w, p) }

// writeAbove writes p to w, which shows on the same screen, with the line
// cleared, and draws the line again after it.
func (s *statusLine) writeAbove(w io.Writer, p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.line != "" {
		io.WriteString(s.w, "\r"+clearEOL)
	}
	n, err := w.Write(p)
	if s.line != "" {
		io.WriteString(s.w, s.line)
	}
	return n, err
}

// above returns a writer to w, another file shown on the same terminal,
// whose writes go above the line as the log's do.
func (s *statusLine) above(w io.Writer) io.Writer {
	return writerFunc(func(p []byte) (int, error) { return s.writeAbove(w, p) })
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// show draws line in place of the one shown; "" clears it.
func (s *statusLine) show(line string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	io.WriteString(s.w, "\r"+line+clearEOL)
	s.line = line
}

// progress counts what the live progress line shows, from the crawler's
// hooks. It is safe for concurrent use.
//
// The package has no live view of its queue, so queued is derived: the URLs
// known to be queued are the roots plus every Result's NumNewURLs; those not
// yet finished nor in flight are queued. A redirect's target is queued too
// when it is new, and no Result says whether it was; so are sitemaps found
// in robots.txt. Once a redirect has been seen, or with sitemaps, the
// figure is a lower bound and is shown as such.
type progress struct {
	start    time.Time
	sitemaps bool

	mu        sync.Mutex
	known     int // roots plus NumNewURLs
	done      int
	errors    int // Results with Err or a status of 400 or more
	redirects int
	inFlight  map[string]struct{} // URLs whose request has started
}

func newProgress(roots int, sitemaps bool) *progress {
	return &progress{start: time.Now(), sitemaps: sitemaps, known: roots, inFlight: map[string]struct{}{}}
}

// request is the request hook: the URL is in flight until its Result, also
// while it waits to be retried. A retry's request is the same URL again.
// robots.txt requests do not reach the hook.
func (p *progress) request(req *http.Request) error {
	p.mu.Lock()
	p.inFlight[req.URL.String()] = struct{}{}
	p.mu.Unlock()
	return nil
}

// result counts a finished URL.
func (p *progress) result(r *crawl.Result) {
	// The request's URL is the Result's URL parsed; its String is the key
	// request used.
	key := r.URL
	if u, err := url.Parse(r.URL); err == nil {
		key = u.String()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.inFlight, key)
	p.done++
	p.known += r.NumNewURLs
	if r.Err != nil || r.Status >= 400 {
		p.errors++
	}
	if r.NextURL != "" {
		p.redirects++
	}
}

// line formats the progress line at now.
func (p *progress) line(now time.Time) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	elapsed := now.Sub(p.start)
	queued := max(0, p.known-p.done-len(p.inFlight))
	atLeast := ""
	if p.redirects > 0 || p.sitemaps {
		atLeast = "≥"
	}
	rate := 0.0
	if s := elapsed.Seconds(); s > 0 {
		rate = float64(p.done) / s
	}
	errs := "errors"
	if p.errors == 1 {
		errs = "error"
	}
	return fmt.Sprintf("%d done, %s%d queued, %d in flight, %d %s, %.0f pages/s, %.1fs",
		p.done, atLeast, queued, len(p.inFlight), p.errors, errs, rate, elapsed.Seconds())
}

// refreshInterval is how often the progress line is redrawn.
const refreshInterval = 200 * time.Millisecond

// showProgress redraws p on s every refreshInterval until the returned
// function is called, which stops the redrawing, waits for it and clears the
// line.
func showProgress(s *statusLine, p *progress) (stop func()) {
	quit := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(refreshInterval)
		defer t.Stop()
		for {
			s.show(p.line(time.Now()))
			select {
			case <-quit:
				s.show("")
				return
			case <-t.C:
			}
		}
	}()
	return func() {
		close(quit)
		<-done
	}
}
