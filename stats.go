package crawl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"sort"
	"sync"
	"time"
)

// Result is the record of one URL taken from the queue, the twin of the
// FetchStatistic of "500 Lines or Less". Every URL taken from the queue gets
// exactly one Result, whatever happens to it, but for those the end of a
// Run cut short, which go back unfinished (see the package's Guarantees).
type Result struct {
	// URL is the URL as it was sent: the WHATWG URL Standard's
	// serialisation of the first spelling the crawl met (see Link.URL);
	// the crawl dedupes on another form, in which "/%7Euser" and "/~user"
	// are one URL (see Request.Wire).
	URL string
	// NextURL is, for a redirect, where it points, resolved as a browser
	// resolves its Location, in the form it is sent.
	NextURL string
	// Referrer is the URL of the page (or sitemap, redirect or robots.txt)
	// where the crawl first found URL, as its Result.URL has it; empty for
	// roots and URLs added with Crawl.Add.
	Referrer string
	// Status is the HTTP status of the last response; 0 when none came.
	Status int
	// Err says what went wrong, wrapped with the URL: a network failure
	// after the last try, ErrBodyTooLarge, ErrTooManyRedirects,
	// ErrNoLocation, ErrPanic, a request hook's error or the Run's context
	// error. A non-2xx status alone is not an error.
	Err  error
	Size int // body bytes, decompressed, before charset decoding
	// Truncated says that the body went on past WithMaxBodySize and was
	// read only up to it, which is no failure for a body the crawl does
	// not parse (see WithMaxBodySize); Size is then the cap.
	Truncated   bool
	ContentType string // media type, lower case, no parameters
	Encoding    string // canonical name of the charset the body was decoded from
	// NumURLs is the number of distinct links of the page handed to the
	// frontier: those in scope (and the requisites, references and
	// links to check that WithRequisites, WithReferences and
	// WithCheckExternal add), less those excluded or refused (see
	// Stats.Refused: past WithMaxDepth or a trap limit). A redirect's
	// target is its one link: NumURLs is 1 for a redirect, unless its
	// target was out of scope, excluded or refused, or past
	// WithMaxRedirects.
	NumURLs int
	// NumNewURLs is, of those, the number the frontier had not seen
	// before (in this Run, or in an earlier one on the same frontier),
	// which it queued: never more than NumURLs.
	NumNewURLs int
	Depth      int // 0 for roots; a redirect keeps its source's depth
	Tries      int // requests sent: 1 unless retried (see WithMaxTries)
	Elapsed    time.Duration

	// probe: the crawler tried the URL on its own, no page naming it (a
	// host's /sitemap.xml; robots.txt as a sitemap): not broken, whatever
	// came of it.
	probe bool
	// check: a CheckRequest's (see Check).
	check bool
}

// Probe reports whether the crawler tried the URL on its own, no page or
// robots.txt naming it: a root host's /sitemap.xml (WithSitemaps), or its
// robots.txt read as a sitemap (WithRobots(false)). Such a Result has no
// Referrer and depth 0, as a root's has, but is no root; it is never
// Broken. MarshalBinary keeps it.
func (r *Result) Probe() bool { return r.probe }

// Check reports whether the URL was only checked (WithCheckExternal): a
// link, or a redirect's target, that the crawl does not follow, requested
// to see whether it is broken, its links not read. A redirect to it was
// the answer of the URL that redirected. MarshalBinary keeps it.
func (r *Result) Check() bool { return r.check }

// Kind returns the report's category of the Result, as crawl.py's
// url_report decides it: "fail" when Err is set, else "redirect" when
// NextURL is, else "html" for text/html, "other" for any other type with
// status 200 and "error" for the rest.
func (r *Result) Kind() string {
	switch {
	case r.Err != nil:
		return "fail"
	case r.NextURL != "":
		return "redirect"
	case r.ContentType == "text/html":
		return "html"
	case r.Status == 200:
		return "other"
	default:
		return "error"
	}
}

// Broken reports whether the URL is broken, as a link checker means it: it
// was tried and failed (Err is set: a network error, a timeout, too many
// redirects, ...) or its server answered an error status, 4xx or 5xx,
// whatever the body (an HTML 404 page is "html" to Kind, as in crawl.py's
// report, and broken here). Only what was tried is broken: a URL that was
// not requested because of robots.txt is not, whether robots.txt
// disallows it or could not be fetched (ErrRobotsUnavailable: the host
// may be down, or only its robots.txt failing). errors.Is(r.Err,
// ErrDisallowed) holds for both, so that a link checker can report them
// apart as not checked, or check them with WithRobots(false). A page
// fetched whose render failed (ErrRender) is broken only by its status:
// the browser's trouble is not the link's. Nor is a URL the crawler tried
// on its own, which no page or robots.txt named (WithSitemaps' /sitemap.xml
// of a host, its Referrer empty): a site without one has no broken link.
func (r *Result) Broken() bool {
	if r.probe {
		return false
	}
	if r.Err != nil && !errors.Is(r.Err, ErrRender) {
		return !errors.Is(r.Err, ErrDisallowed)
	}
	return r.Status >= 400
}

// WriteReportLine writes r's line of crawl.py's report, as its url_report
// does: "URL error ERR" for a failure, "URL STATUS redirect NEXT" for a
// redirect, else "URL STATUS TYPE ENCODING SIZE NEW/TOTAL", with "?" for a
// missing type or encoding so that every line has its columns.
func (r *Result) WriteReportLine(w io.Writer) error {
	var err error
	switch r.Kind() {
	case "fail":
		_, err = fmt.Fprintln(w, r.URL, "error", r.Err)
	case "redirect":
		_, err = fmt.Fprintln(w, r.URL, r.Status, "redirect", r.NextURL)
	default:
		_, err = fmt.Fprintf(w, "%s %d %s %s %d %d/%d\n", r.URL, r.Status,
			orUnknown(r.ContentType), orUnknown(r.Encoding), r.Size, r.NumNewURLs, r.NumURLs)
	}
	return err
}

func orUnknown(s string) string {
	if s == "" {
		return "?"
	}
	return s
}

// FailKind names the kind of a failed Result's error for the report's
// fail_<kind> counters: "timeout", "canceled", "body_too_large",
// "too_many_redirects", "no_location", "panic", "blocked",
// "robots_unavailable", "render" (the page was fetched, but its render
// failed: see ErrRender; a Renderer's panic is "panic"), "dns", "refused", "disallowed", "network" or
// "other". A URL not fetched because its host's robots.txt could not be
// (see RobotsUnavailableError) is "robots_unavailable", apart from the
// URLs robots.txt disallows ("disallowed"), so that a site that is down
// shows in the report; but "blocked" when the robots.txt's address was
// blocked (WithBlockPrivateNetworks), which says why.
func FailKind(err error) string {
	var dns *net.DNSError
	var op *net.OpError
	var ne *netError
	var stored *storedError
	var robotsErr *RobotsUnavailableError
	switch {
	case err == nil:
		return ""
	case errors.As(err, &stored) && stored.kind != "":
		return stored.kind
	case errors.As(err, &robotsErr) && !errors.Is(err, ErrBlockedAddress):
		// Whatever kept the robots.txt from being fetched (a request
		// hook's panic included): the URL was not fetched.
		return "robots_unavailable"
	case errors.Is(err, ErrBodyTooLarge):
		return "body_too_large"
	case errors.Is(err, ErrTooManyRedirects):
		return "too_many_redirects"
	case errors.Is(err, ErrNoLocation):
		return "no_location"
	case errors.Is(err, ErrPanic):
		return "panic"
	case errors.Is(err, ErrRender):
		return "render"
	case errors.Is(err, ErrBlockedAddress):
		// Before robots_unavailable: a robots.txt whose address is
		// blocked says why the host's URLs were not fetched.
		return "blocked"
	case errors.Is(err, ErrRobotsUnavailable):
		return "robots_unavailable"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded):
		return "timeout"
	case errors.As(err, &dns):
		return "dns"
	case errors.As(err, &op) && op.Op == "dial":
		return "refused"
	case errors.Is(err, ErrDisallowed):
		// After the network kinds: a host whose robots.txt could not be
		// fetched is reported by why ("refused"), as the user will want
		// to know that the site is down.
		return "disallowed"
	case errors.As(err, &ne):
		return "network"
	default:
		return "other"
	}
}

// Stats are the counters of one Run, the report of crawl.py. Each Result
// counts once, under the category Result.Kind gives it. The Stats that Run
// returns are the caller's own copy: the Run no longer touches them.
type Stats struct {
	Done       int   // Results delivered
	HTML       int   // text/html responses
	HTMLBytes  int64 // their body bytes
	Other      int   // other 200 responses
	OtherBytes int64
	Redirects  int // redirects recorded
	Errors     int // non-HTML responses with a status other than 200
	ErrorBytes int64
	Failures   int // Results with an Err
	// FailKinds counts Failures by FailKind.
	FailKinds map[string]int
	// StatusCounts counts every Result with a response (redirects and
	// failures after a response included) by its status code.
	StatusCounts map[int]int
	// Refused counts the links and redirect targets that a trap limit kept
	// from the queue, by the limit's name: "url_length"
	// (WithMaxURLLength), "links_per_page" (WithMaxLinksPerPage) and
	// "segment_repeats" (WithMaxSegmentRepeats); and the links in scope
	// past WithMaxDepth, as "max_depth": those are counted before the
	// seen set is asked, so a link past the depth to a URL the crawl has
	// already (a page linking back to the root) counts too. What is
	// refused gets no Result (a URL the crawl had already has its own).
	Refused map[string]int
	// Todo is the number of URLs still queued when the Run stopped early;
	// they got no Result. It is -1 when the frontier could not count
	// them at the end of the Run (a shared crawl whose Redis was down, a
	// file frontier whose write failed): the number is not known.
	Todo int
	// Budget names the budget that ended the Run early, "max_pages" or
	// "max_duration"; it is empty when the crawl ran to its end or was
	// cancelled.
	Budget  string
	Workers int           // the Run's WithWorkers, max_tasks in the report
	Elapsed time.Duration // wall time of the Run
}

// Progress is a snapshot of a Run in progress, as WithProgress reports it:
// the Stats so far (Elapsed so far, Todo unset) and the frontier's state.
type Progress struct {
	Stats
	// Queued is the number of URLs waiting to be fetched, retries
	// included.
	Queued int
	// InFlight is the number of URLs being fetched by the workers.
	InFlight int
}

// Add counts r in s, as a Run counts each Result it delivers: a StatsStore
// counts the same way. It makes the maps it needs. It is not safe for
// concurrent use.
func (s *Stats) Add(r *Result) {
	s.ensureMaps()
	s.Done++
	if r.Status != 0 {
		s.StatusCounts[r.Status]++
	}
	switch r.Kind() {
	case "fail":
		s.Failures++
		s.FailKinds[FailKind(r.Err)]++
	case "redirect":
		s.Redirects++
	case "html":
		s.HTML++
		s.HTMLBytes += int64(r.Size)
	case "other":
		s.Other++
		s.OtherBytes += int64(r.Size)
	default:
		s.Errors++
		s.ErrorBytes += int64(r.Size)
	}
}

// counters returns the report's counters by name, as crawl.py names them,
// and the refusals of the trap limits, which crawl.py lacks, as
// refused_<reason>.
func (s *Stats) counters() map[string]int64 {
	m := map[string]int64{}
	put := func(k string, v int64) {
		if v != 0 {
			m[k] = v
		}
	}
	put("html", int64(s.HTML))
	put("html_bytes", s.HTMLBytes)
	put("other", int64(s.Other))
	put("other_bytes", s.OtherBytes)
	put("redirect", int64(s.Redirects))
	put("error", int64(s.Errors))
	put("error_bytes", s.ErrorBytes)
	put("fail", int64(s.Failures))
	for k, v := range s.FailKinds {
		put("fail_"+k, int64(v))
	}
	for code, v := range s.StatusCounts {
		put(fmt.Sprintf("status_%d", code), int64(v))
	}
	for k, v := range s.Refused {
		put("refused_"+k, int64(v))
	}
	return m
}

// WriteReport writes the summary of crawl.py's report: the Finished line,
// the counters sorted by name, the budget that ended the Run if one did,
// Todo, Done and the date.
func (s *Stats) WriteReport(w io.Writer) error {
	secs := s.Elapsed.Seconds()
	speed := 0.0
	if secs > 0 && s.Workers > 0 {
		speed = float64(s.Done) / secs / float64(s.Workers)
	}
	ew := &errWriter{w: w}
	ew.printf("Finished %d urls in %.3f secs (max_tasks=%d) (%.3f urls/sec/task)\n", s.Done, secs, s.Workers, speed)
	m := s.counters()
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		ew.printf("%10d %s\n", m[k], k)
	}
	if s.Budget != "" {
		ew.printf("Budget: %s\n", s.Budget)
	}
	if s.Todo < 0 {
		ew.printf("Todo: unknown (the frontier could not count what is left)\n")
	} else {
		ew.printf("Todo: %d\n", s.Todo)
	}
	ew.printf("Done: %d\n", s.Done)
	ew.printf("Date: %s local time\n", time.Now().Format(time.ANSIC))
	return ew.err
}

type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}

// tally collects the Stats of a Run from its workers.
type tally struct {
	mu sync.Mutex
	s  Stats
}

func newTally(workers int) *tally {
	t := &tally{s: Stats{Workers: workers}}
	t.s.ensureMaps()
	return t
}

func (t *tally) add(r *Result) {
	t.mu.Lock()
	t.s.Add(r)
	t.mu.Unlock()
}

// refuse counts the refusals of one page or redirect, n[reason] each: one
// call per page, so that the workers take the lock once for a page's links.
func (t *tally) refuse(n *[numRefusals]int) {
	t.mu.Lock()
	for reason, k := range n {
		if k > 0 {
			t.s.Refused[refusalNames[reason]] += k
		}
	}
	t.mu.Unlock()
}

// snapshot returns a copy of the Stats so far.
func (t *tally) snapshot() *Stats {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.s.clone()
}

// ensureMaps makes the maps of s that are nil.
func (s *Stats) ensureMaps() {
	if s.FailKinds == nil {
		s.FailKinds = map[string]int{}
	}
	if s.StatusCounts == nil {
		s.StatusCounts = map[int]int{}
	}
	if s.Refused == nil {
		s.Refused = map[string]int{}
	}
}

// clone returns a copy of s that shares none of its maps.
func (s *Stats) clone() *Stats {
	c := *s
	c.FailKinds = maps.Clone(s.FailKinds)
	c.StatusCounts = maps.Clone(s.StatusCounts)
	c.Refused = maps.Clone(s.Refused)
	return &c
}

// resultJSON is the stored form of a Result; see MarshalBinary.
type resultJSON struct {
	URL         string `json:"url"`
	Referrer    string `json:"referrer,omitempty"`
	NextURL     string `json:"next_url,omitempty"`
	Status      int    `json:"status,omitempty"`
	Err         string `json:"err,omitempty"`
	FailKind    string `json:"fail_kind,omitempty"`
	Size        int    `json:"size,omitempty"`
	Truncated   bool   `json:"truncated,omitempty"`
	ContentType string `json:"content_type,omitempty"`
	Encoding    string `json:"encoding,omitempty"`
	NumURLs     int    `json:"num_urls,omitempty"`
	NumNewURLs  int    `json:"num_new_urls,omitempty"`
	Depth       int    `json:"depth,omitempty"`
	Tries       int    `json:"tries,omitempty"`
	Elapsed     int64  `json:"elapsed_ns,omitempty"`
	Robots      bool   `json:"robots_unavailable,omitempty"`
	Probe       bool   `json:"probe,omitempty"`
	Check       bool   `json:"check,omitempty"`
}

// MarshalBinary encodes r for a ResultStore to keep. Err is kept as its
// text and its FailKind: decoded by UnmarshalBinary, it says the same and
// still matches, with errors.Is, the sentinel error of its kind
// (ErrBodyTooLarge, ErrDisallowed, context.DeadlineExceeded, ...), so that
// Stats and reports made from stored Results are those of the Results
// delivered.
func (r *Result) MarshalBinary() ([]byte, error) {
	j := resultJSON{
		URL: r.URL, Referrer: r.Referrer, NextURL: r.NextURL, Status: r.Status, Size: r.Size, Truncated: r.Truncated,
		ContentType: r.ContentType, Encoding: r.Encoding, NumURLs: r.NumURLs,
		NumNewURLs: r.NumNewURLs, Depth: r.Depth, Tries: r.Tries, Elapsed: int64(r.Elapsed), Probe: r.probe,
		Check: r.check,
	}
	if r.Err != nil {
		j.Err, j.FailKind = r.Err.Error(), FailKind(r.Err)
		// A robots.txt that could not be fetched, of another kind
		// (blocked): the URL was not fetched, and is not broken.
		j.Robots = j.FailKind != "robots_unavailable" && errors.Is(r.Err, ErrRobotsUnavailable)
	}
	return json.Marshal(&j)
}

// UnmarshalBinary decodes a Result encoded by MarshalBinary into r.
func (r *Result) UnmarshalBinary(b []byte) error {
	var j resultJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return fmt.Errorf("decode result: %w", err)
	}
	*r = Result{
		URL: j.URL, Referrer: j.Referrer, NextURL: j.NextURL, Status: j.Status, Size: j.Size, Truncated: j.Truncated,
		ContentType: j.ContentType, Encoding: j.Encoding, NumURLs: j.NumURLs,
		NumNewURLs: j.NumNewURLs, Depth: j.Depth, Tries: j.Tries, Elapsed: time.Duration(j.Elapsed), probe: j.Probe,
		check: j.Check,
	}
	if j.Err != "" || j.FailKind != "" {
		r.Err = &storedError{msg: j.Err, kind: j.FailKind, robots: j.Robots}
	}
	return nil
}

// storedError is a Result's error as a ResultStore gave it back: its text
// and its FailKind.
type storedError struct {
	msg, kind string
	robots    bool // a robots.txt unavailable, of another kind
}

func (e *storedError) Error() string { return e.msg }

// Is reports whether the error stood for target, the sentinel error of its
// kind.
func (e *storedError) Is(target error) bool {
	if e.robots && (target == ErrRobotsUnavailable || target == ErrDisallowed) {
		return true
	}
	switch e.kind {
	case "body_too_large":
		return target == ErrBodyTooLarge
	case "too_many_redirects":
		return target == ErrTooManyRedirects
	case "no_location":
		return target == ErrNoLocation
	case "panic":
		return target == ErrPanic
	case "blocked":
		return target == ErrBlockedAddress
	case "canceled":
		return target == context.Canceled
	case "timeout":
		return target == context.DeadlineExceeded
	case "disallowed":
		return target == ErrDisallowed
	case "robots_unavailable":
		return target == ErrDisallowed || target == ErrRobotsUnavailable
	}
	return false
}
