package main

import (
	"fmt"
	"io"
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

// progress counts what the live progress line shows. Done and errors come
// from the result hook, so they are exact; queued and in flight come from
// the crawler's own snapshots (crawl.WithProgress), at most one interval
// old. It is safe for concurrent use.
type progress struct {
	start time.Time

	mu       sync.Mutex
	done     int
	before   int // of done, the URLs earlier runs finished (-state)
	errors   int // Results with Err or a status of 400 or more
	queued   int
	inFlight int
}

func newProgress() *progress {
	return &progress{start: time.Now()}
}

// update is the crawler's progress hook.
func (p *progress) update(s crawl.Progress) {
	p.mu.Lock()
	p.queued, p.inFlight = s.Queued, s.InFlight
	p.mu.Unlock()
}

// result counts a finished URL.
func (p *progress) result(r *crawl.Result) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done++
	if r.Err != nil || r.Status >= 400 {
		p.errors++
	}
}

// earlier counts a URL an earlier run of the crawl finished.
func (p *progress) earlier(r *crawl.Result) {
	p.result(r)
	p.mu.Lock()
	p.before++
	p.mu.Unlock()
}

// thisRun returns how many URLs this run finished.
func (p *progress) thisRun() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.done - p.before
}

// line formats the progress line at now: the rate is of the URLs this run
// finished.
func (p *progress) line(now time.Time) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	elapsed := now.Sub(p.start)
	rate := 0.0
	if s := elapsed.Seconds(); s > 0 {
		rate = float64(p.done-p.before) / s
	}
	errs := "errors"
	if p.errors == 1 {
		errs = "error"
	}
	return fmt.Sprintf("%d done, %d queued, %d in flight, %d %s, %.0f pages/s, %.1fs",
		p.done, p.queued, p.inFlight, p.errors, errs, rate, elapsed.Seconds())
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
