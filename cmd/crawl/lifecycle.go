package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/asyncrawl/crawl/redisfrontier"
	"github.com/redis/go-redis/v9"
)

// The lifecycle of a crawl shared through Redis: the name line at its
// start, the word that a crawl run again was already done, -status and
// -reset.

// redactURL returns the -redis URL as the command prints it: without its
// password.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(a Redis URL)"
	}
	return u.Redacted()
}

// announce says on stderr, -q or not, which crawl this process is on: the
// name -status and -reset take.
func announce(w io.Writer, cfg *config, name string) {
	fmt.Fprintf(w, "crawl: crawl %s on %s\n", name, cfg.redisWhere())
}

// alreadyDone says on stderr, -q or not, that the crawl this process
// joined was done before it started, so that it fetched nothing, when it
// was.
func alreadyDone(w io.Writer, cfg *config, f *redisfrontier.Frontier) {
	at, ok := f.WasDone()
	if !ok {
		return
	}
	flag, value, _ := strings.Cut(cfg.redisFlag(), " ")
	fmt.Fprintf(w, "crawl: fetched nothing: crawl %s was already done, since %s; crawl %s %s -crawl %s -reset deletes it, to crawl it again\n",
		f.Name(), stamp(at), flag, shellQuote(value), shellQuote(f.Name()))
}

// shellQuote quotes s for a POSIX shell, if it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./:@%+=,-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// runLifecycle is the command with -status or -reset: it reads or deletes
// the crawl named by -crawl on -redis or -redis_cluster, and returns the
// exit status.
func runLifecycle(ctx context.Context, cfg *config, stdout, stderr io.Writer, fail func(string, ...any) int) int {
	what := "-status"
	if cfg.reset {
		what = "-reset"
	}
	switch {
	case cfg.status && cfg.reset:
		return fail("-status and -reset are exclusive: give one")
	case cfg.force && !cfg.reset:
		return fail("-force forces -reset: give -reset too")
	case cfg.redis != "" && len(cfg.cluster) > 0:
		return fail("%v", errBothRedis)
	case !cfg.sharing():
		return fail("%s is of a crawl shared through Redis: give -redis URL or -redis_cluster ADDR, and -crawl NAME", what)
	case cfg.crawlName == "":
		return fail("%s needs -crawl NAME: the name the crawl printed at its start (crawl: crawl NAME on ...)", what)
	case len(cfg.roots) > 0:
		return fail("%s takes no root URL (%s): -crawl names the crawl", what, cfg.roots[0])
	case cfg.reset && cfg.output != "":
		return fail("-reset writes no report: -o FILE is for -status or a crawl")
	}
	// The client's complaints (one each failed dial) only with -v, as
	// for a crawl.
	redis.SetLogger(redisLog{slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: cfg.logLevel}))})
	rdb, err := newRedisClient(cfg, nil)
	if err != nil {
		return fail("%v", err)
	}
	defer rdb.Close()
	where := cfg.redisWhere()
	if err := waitRedis(ctx, rdb, cfg.redisWait); err != nil {
		return fail("%v", waitRedisErr(cfg, err))
	}
	interrupted := func() int {
		fmt.Fprintln(stderr, "crawl: interrupted")
		return interruptedCode(ctx)
	}
	if ctx.Err() != nil {
		return interrupted()
	}
	if cfg.reset {
		return resetCrawl(ctx, cfg, rdb, where, stderr, fail)
	}
	st, err := redisfrontier.Inspect(ctx, rdb, cfg.crawlName)
	if err != nil && ctx.Err() != nil {
		return interrupted()
	}
	if errors.Is(err, redisfrontier.ErrNoCrawl) {
		return fail("no crawl %s on %s: it never started, or was reset, or its keys expired after it was done", cfg.crawlName, where)
	}
	if err != nil {
		return fail("-status: %v", err)
	}
	var out *outputFile
	if cfg.output != "" {
		if out, err = openOutput(cfg.output); err != nil {
			return fail("-o: %v", err)
		}
		stdout = out
	}
	if cfg.format == "jsonl" {
		err = writeStatusJSON(stdout, st, where)
	} else {
		err = writeStatus(stdout, st, where)
	}
	if out != nil {
		if cerr := out.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return fail("-status: %v", err)
	}
	return 0
}

// resetCrawl deletes the crawl; it refuses one with leases out, naming
// their holders, unless -force.
func resetCrawl(ctx context.Context, cfg *config, rdb redis.UniversalClient, where string, stderr io.Writer, fail func(string, ...any) int) int {
	n, err := redisfrontier.Reset(ctx, rdb, cfg.crawlName, cfg.force)
	switch {
	case errors.Is(err, redisfrontier.ErrNoCrawl):
		return fail("no crawl %s on %s: nothing to reset", cfg.crawlName, where)
	case errors.Is(err, redisfrontier.ErrLeased):
		var held []string
		if st, ierr := redisfrontier.Inspect(ctx, rdb, cfg.crawlName); ierr == nil {
			for _, h := range st.Holders {
				held = append(held, holderText(h))
			}
		}
		return fail("-reset: crawl %s on %s is running: %s; stop its processes (their leases go back), or wait for a killed one's -lease to end, or give -force", cfg.crawlName, where, strings.Join(held, "; "))
	case err != nil && ctx.Err() != nil:
		// Ctrl-C: exits as a crawl interrupted does.
		fmt.Fprintf(stderr, "crawl: interrupted; -reset of crawl %s may be cut short: -reset again finishes it\n", cfg.crawlName)
		return interruptedCode(ctx)
	case err != nil:
		return fail("-reset: %v", err)
	}
	fmt.Fprintf(stderr, "crawl: crawl %s on %s deleted: %d keys\n", cfg.crawlName, where, n)
	return 0
}

// statusState names a crawl's state: done, or running.
func statusState(st *redisfrontier.Status) string {
	switch {
	case st.Done:
		return "done"
	case st.Leased > st.Expired:
		return "running"
	}
	for _, h := range st.Holders {
		if h.Leases == 0 {
			return "running" // on it, waiting out a host's delay, say
		}
	}
	// No lease in its term and no process on it: its processes stopped
	// (a -max_pages spent, a Ctrl-C, a crash, whose leases have gone
	// back or ended).
	return "waiting"
}

// holderText says who holds leases, how many, until when; or who is on
// the crawl holding none.
func holderText(h redisfrontier.Holder) string {
	if h.Leases == 0 {
		return h.Owner + " is on it, holding no lease now (waiting out a host's delay, say)"
	}
	s := fmt.Sprintf("%s holds %d lease", h.Owner, h.Leases)
	if h.Leases != 1 {
		s += "s"
	}
	if !h.Until.IsZero() {
		if d := time.Until(h.Until).Round(time.Second); d >= 0 {
			s += fmt.Sprintf(" until %s (in %v)", stamp(h.Until), d)
		} else {
			// Its process stopped, or was cut off: the next Take of
			// another process takes them back.
			s += fmt.Sprintf(" until %s (ended %v ago: its process stopped?)", stamp(h.Until), -d)
		}
	}
	return s
}

// stamp formats a time of the status for a person.
func stamp(t time.Time) string { return t.UTC().Format(time.DateTime + " UTC") }

// writeStatus writes the crawl's state as lines for a person.
func writeStatus(w io.Writer, st *redisfrontier.Status, where string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "crawl:     %s on %s\n", st.Name, where)
	fmt.Fprintf(&b, "state:     %s\n", statusState(st))
	fmt.Fprintf(&b, "roots:     %s\n", strings.Join(st.Roots, " "))
	fmt.Fprintf(&b, "scope:     %s\n", st.Scope)
	fmt.Fprintf(&b, "queued:    %d (%d waiting to be retried)\n", st.Queued, st.Retrying)
	if st.Expired > 0 {
		fmt.Fprintf(&b, "leased:    %d (%d of them past their term: their process stopped; the next process takes them back)\n", st.Leased, st.Expired)
	} else {
		fmt.Fprintf(&b, "leased:    %d\n", st.Leased)
	}
	fmt.Fprintf(&b, "done:      %d\n", st.Acked)
	fmt.Fprintf(&b, "pages:     %d\n", st.Pages)
	for _, h := range st.Holders {
		fmt.Fprintf(&b, "holder:    %s\n", holderText(h))
	}
	if !st.Finished.IsZero() {
		fmt.Fprintf(&b, "finished:  %s\n", stamp(st.Finished))
	}
	if !st.Expires.IsZero() {
		fmt.Fprintf(&b, "expires:   %s (in %v)\n", stamp(st.Expires), time.Until(st.Expires).Round(time.Second))
	} else {
		b.WriteString("expires:   never\n")
	}
	// The whole crawl's counters, as the report's summary has them: its
	// lines after the Finished line, up to Budget, Todo and Done.
	var sum bytes.Buffer
	st.Stats.WriteReport(&sum)
	lines := strings.Split(sum.String(), "\n")
	for _, l := range lines[1:] {
		if !counterLine.MatchString(l) {
			break
		}
		b.WriteString(l + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// counterLine matches a counter's line of the report's summary.
var counterLine = regexp.MustCompile(`^ *\d+ \S`)

// statusJSON is the JSON object of -status -format jsonl.
type statusJSON struct {
	Crawl    string       `json:"crawl"`
	Redis    string       `json:"redis"`
	State    string       `json:"state"`
	Roots    []string     `json:"roots"`
	Scope    string       `json:"scope"` // the flags that decide which URLs the crawl admits
	Queued   int          `json:"queued"`
	Retrying int          `json:"retrying"`
	Leased   int          `json:"leased"`
	Done     int          `json:"done"`
	Pages    int          `json:"pages"`
	Pending  int          `json:"pending"`
	Expired  int          `json:"expired"`
	Holders  []holderJSON `json:"holders"`
	Finished *time.Time   `json:"finished,omitempty"`
	Expires  *time.Time   `json:"expires,omitempty"`
	// Stats are the whole crawl's counters, as the summary of -format
	// jsonl has them.
	Stats statsJSON `json:"stats"`
}

type holderJSON struct {
	Owner  string     `json:"owner"`
	Leases int        `json:"leases"`
	Until  *time.Time `json:"until,omitempty"`
}

// timeField returns t for a JSON field, nil if zero.
func timeField(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	t = t.UTC()
	return &t
}

// writeStatusJSON writes the crawl's state as one JSON object.
func writeStatusJSON(w io.Writer, st *redisfrontier.Status, where string) error {
	j := statusJSON{Crawl: st.Name, Redis: where, State: statusState(st), Roots: st.Roots, Scope: st.Scope,
		Queued: st.Queued, Retrying: st.Retrying, Leased: st.Leased, Done: st.Acked, Pages: st.Pages, Pending: st.Pending, Expired: st.Expired,
		Holders: []holderJSON{}, Finished: timeField(st.Finished), Expires: timeField(st.Expires),
		Stats: countersJSON(&st.Stats)}
	if j.Roots == nil {
		j.Roots = []string{}
	}
	for _, h := range st.Holders {
		j.Holders = append(j.Holders, holderJSON{Owner: h.Owner, Leases: h.Leases, Until: timeField(h.Until)})
	}
	b, err := json.Marshal(j)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
