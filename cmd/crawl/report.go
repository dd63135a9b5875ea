package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sync"

	"github.com/asyncrawl/crawl"
	"github.com/asyncrawl/crawl/internal/extsort"
)

// textReport collects the lines of crawl.py's report, which is sorted by
// URL and so written at the end. Past reportMemory bytes of lines it
// spills them, sorted, to files in the temporary directory ($TMPDIR),
// merged when the report is written, so that a crawl of millions of URLs
// does not hold a line of each in memory. It is safe for concurrent use.
type textReport struct {
	mu    sync.Mutex
	lines *extsort.Sorter
	line  bytes.Buffer
	warn  func(error) // told once, if the lines cannot be spilled
}

// reportMemory is how many bytes of report lines textReport holds in
// memory: about 90,000 URLs.
const reportMemory = 8 << 20

// newTextReport returns a report that holds limit bytes of lines in
// memory (reportMemory in the command) and tells warn once if it cannot
// spill the rest.
func newTextReport(limit int, warn func(error)) *textReport {
	return &textReport{lines: extsort.New(limit, reportKey), warn: warn}
}

// reportKey is a report line's sort key, its URL: the line up to its
// first space. A URL in the crawl's form holds no space, nor any byte
// below it, so that lines sorted by it are sorted by URL.
func reportKey(line []byte) []byte {
	if i := bytes.IndexByte(line, ' '); i >= 0 {
		return line[:i]
	}
	return line
}

func (t *textReport) result(r *crawl.Result) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.line.Reset()
	r.WriteReportLine(&t.line)
	ok := t.lines.SpillErr() == nil
	t.lines.Add(t.line.Bytes())
	if err := t.lines.SpillErr(); ok && err != nil {
		t.warn(err)
	}
}

// write writes the report, a line per URL sorted by URL, then the summary
// of stats. close removes the lines spilled. own is how many of the URLs
// that stats count this run finished: when earlier runs (-state) or other
// processes (-redis) finished the others, the Finished line says so, and
// its rate is of this run's URLs, over this run's time.
func (t *textReport) write(w io.Writer, stats *crawl.Stats, own int) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	bw := bufio.NewWriter(w)
	if err := t.lines.Each(func(line []byte) error {
		_, err := bw.Write(line)
		return err
	}); err != nil {
		return err
	}
	if own == stats.Done {
		if err := stats.WriteReport(bw); err != nil {
			return err
		}
		return bw.Flush()
	}
	var sum bytes.Buffer
	stats.WriteReport(&sum)
	_, rest, _ := bytes.Cut(sum.Bytes(), []byte("\n")) // after crawl.py's Finished line
	secs, rate := stats.Elapsed.Seconds(), 0.0
	if secs > 0 && stats.Workers > 0 {
		rate = float64(own) / secs / float64(stats.Workers)
	}
	fmt.Fprintf(bw, "Finished %d urls (%d in this run) in %.3f secs (max_tasks=%d) (%.3f urls/sec/task in this run)\n", stats.Done, own, secs, stats.Workers, rate)
	bw.Write(rest)
	return bw.Flush()
}

// close removes the lines the report spilled to disk, written or not.
func (t *textReport) close() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lines.Close()
}

// jsonResult is the JSON object of one Result in -format jsonl.
type jsonResult struct {
	Type        string  `json:"type"` // "result"
	URL         string  `json:"url"`
	Referrer    string  `json:"referrer,omitempty"` // the page that first linked to it
	NextURL     string  `json:"next_url,omitempty"`
	Status      int     `json:"status"`
	Error       string  `json:"error,omitempty"`
	FailKind    string  `json:"fail_kind,omitempty"` // crawl.FailKind of the error
	Broken      bool    `json:"broken"`              // Result.Broken: requested, and failed or answered 4xx or 5xx
	Size        int     `json:"size"`
	Truncated   bool    `json:"truncated,omitempty"` // the body went on past -max_body
	ContentType string  `json:"content_type"`
	Encoding    string  `json:"encoding"`
	NumURLs     int     `json:"num_urls"`
	NumNewURLs  int     `json:"num_new_urls"`
	Depth       int     `json:"depth"`
	Tries       int     `json:"tries"`
	ElapsedMS   float64 `json:"elapsed_ms"`
	Kind        string  `json:"kind"` // Result.Kind: html, other, redirect, error or fail
	// Fields are the -select fields of an HTML page that matched, by
	// name.
	Fields map[string]string `json:"fields,omitempty"`
}

// jsonSummary is the last JSON object of -format jsonl: the counters of the
// report.
type jsonSummary struct {
	Type        string  `json:"type"` // "summary"
	Done        int     `json:"done"`
	Todo        int     `json:"todo"`
	Interrupted bool    `json:"interrupted"`
	Budget      string  `json:"budget,omitempty"` // the budget that ended the crawl
	Workers     int     `json:"workers"`
	ElapsedMS   float64 `json:"elapsed_ms"`
	statsJSON
}

// statsJSON is the counters of the report, in jsonSummary and in the
// object of -status -format jsonl.
type statsJSON struct {
	HTML       int            `json:"html"`
	HTMLBytes  int64          `json:"html_bytes"`
	Other      int            `json:"other"`
	OtherBytes int64          `json:"other_bytes"`
	Redirect   int            `json:"redirect"`
	Error      int            `json:"error"`
	ErrorBytes int64          `json:"error_bytes"`
	Fail       int            `json:"fail"`
	FailKinds  map[string]int `json:"fail_kinds"`
	Status     map[int]int    `json:"status"` // count by status code
	// Refused counts the links not followed, by the trap limit that
	// refused them.
	Refused map[string]int `json:"refused,omitempty"`
}

// countersJSON returns the counters of s.
func countersJSON(s *crawl.Stats) statsJSON {
	return statsJSON{HTML: s.HTML, HTMLBytes: s.HTMLBytes, Other: s.Other, OtherBytes: s.OtherBytes,
		Redirect: s.Redirects, Error: s.Errors, ErrorBytes: s.ErrorBytes, Fail: s.Failures,
		FailKinds: s.FailKinds, Status: s.StatusCounts, Refused: s.Refused}
}

// jsonLines writes a JSON object per Result as it finishes. It is safe for
// concurrent use; the first write error stops the writing and is kept,
// and given to onErr, if set, at once (the command stops the crawl then).
type jsonLines struct {
	mu    sync.Mutex
	enc   *json.Encoder
	err   error
	onErr func(error)
}

func newJSONLines(w io.Writer) *jsonLines { return &jsonLines{enc: json.NewEncoder(w)} }

// result writes the line of r, with the page's -select fields.
func (j *jsonLines) result(r *crawl.Result, fields map[string]string) {
	o := jsonResult{
		Type:        "result",
		URL:         r.URL,
		Referrer:    r.Referrer,
		NextURL:     r.NextURL,
		Status:      r.Status,
		Size:        r.Size,
		Truncated:   r.Truncated,
		ContentType: r.ContentType,
		Encoding:    r.Encoding,
		NumURLs:     r.NumURLs,
		NumNewURLs:  r.NumNewURLs,
		Depth:       r.Depth,
		Tries:       r.Tries,
		ElapsedMS:   float64(r.Elapsed.Microseconds()) / 1000,
		Kind:        r.Kind(),
		Broken:      r.Broken(),
		Fields:      fields,
	}
	if r.Err != nil {
		o.Error, o.FailKind = r.Err.Error(), crawl.FailKind(r.Err)
	}
	j.write(o)
}

// summary writes the final object.
func (j *jsonLines) summary(s *crawl.Stats, interrupted bool) error {
	j.write(jsonSummary{
		Type:        "summary",
		Done:        s.Done,
		Todo:        s.Todo,
		Interrupted: interrupted,
		Budget:      s.Budget,
		Workers:     s.Workers,
		ElapsedMS:   float64(s.Elapsed.Microseconds()) / 1000,
		statsJSON:   countersJSON(s),
	})
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.err
}

func (j *jsonLines) write(v any) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.err == nil {
		j.err = j.enc.Encode(v)
		if j.err != nil && j.onErr != nil {
			j.onErr(j.err)
		}
	}
}

// failed returns the write error that stopped the writing, if any.
func (j *jsonLines) failed() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.err
}
