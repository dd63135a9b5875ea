// Command crawl crawls web sites from the command line and prints the report
// of crawl.py, the crawler of "A Web Crawler With asyncio Coroutines" (500
// Lines or Less), with its flags and defaults:
//
//	crawl -q xkcd.com
//	crawl -max_tasks 20 -exclude '\.pdf$' https://example.com/docs/
//	crawl -demo
//
// -demo serves a built-in site of a few hundred pages on a loopback port
// and crawls it, so the command can be tried with no network. While it
// crawls, a progress line is redrawn on stderr when stderr is a terminal;
// at the end the report goes to stdout: a line per URL, sorted, then the
// counters. -format jsonl writes a JSON object per URL as it finishes
// instead, -graph writes the link graph in Graphviz DOT. Ctrl-C stops the
// crawl and still prints the report of what was done. crawl -h lists every
// flag.
//
// -select NAME=SELECTOR, which may be repeated, adds to the JSON object of
// each HTML page a "fields" object: under NAME, the text of the first
// element the CSS selector matches, its white space collapsed, or with
// NAME=SELECTOR@ATTR the value of that element's attribute ATTR. A field
// that matched nothing, or is empty, is left out, and "fields" with it
// when none is left. A site's inventory in one line:
//
//	crawl -format jsonl -select title=title -select h1=h1 -select desc='meta[name=description]@content' example.com
//
// The command crawls through the public API of package crawl and its
// packages (boltfrontier for -state, redisfrontier for -redis and
// -redis_cluster, warc for -warc, scrape for -select); its sorted report
// spills to disk through the repository's internal/extsort.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/asyncrawl/crawl"
	"github.com/asyncrawl/crawl/boltfrontier"
	"github.com/asyncrawl/crawl/redisfrontier"
	"github.com/asyncrawl/crawl/render"
	"github.com/asyncrawl/crawl/warc"
	"github.com/redis/go-redis/v9"
)

func main() {
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	// A write to a closed pipe fails with EPIPE, as to any other file,
	// rather than kill the command with SIGPIPE, silently, as Go does for
	// standard output and error by default: a JSON line that cannot be
	// written then stops the crawl with a line that says so and exit
	// status 1, and logs that cannot be written are dropped.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	go func() {
		s := <-sigs
		// A second Ctrl-C while the crawl winds down kills at once.
		signal.Stop(sigs)
		cancel(signalCause{s})
	}()
	ttys := terminals{stdout: isTerminal(os.Stdout), stderr: isTerminal(os.Stderr)}
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr, ttys))
}

// signalCause is the cause of the context main cancels on a signal.
type signalCause struct{ sig os.Signal }

func (s signalCause) Error() string { return s.sig.String() + " received" }

// interruptedCode returns the exit status after ctx was cancelled: 128 plus
// the signal's number, as a shell reports a process killed by it, so 130
// for SIGINT and 143 for SIGTERM; 130 when no signal is known.
func interruptedCode(ctx context.Context) int {
	var sc signalCause
	if errors.As(context.Cause(ctx), &sc) {
		if n, ok := sc.sig.(syscall.Signal); ok {
			return 128 + int(n)
		}
	}
	return 128 + int(syscall.SIGINT)
}

// terminals says which of stdout and stderr are terminals.
type terminals struct{ stdout, stderr bool }

// run is the command: it crawls as args say and returns the exit status.
// Cancelling ctx stops the crawl, which then reports what was done. The
// progress line goes to stderr when ttys says it is a terminal.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, ttys terminals) int {
	fail := func(format string, a ...any) int {
		// One line: an error joined from several has a line each.
		msg := strings.ReplaceAll(fmt.Sprintf(format, a...), "\n", "; ")
		fmt.Fprintln(stderr, "crawl: "+strings.TrimPrefix(msg, "crawl: "))
		return 1
	}
	var cfg config
	cl := newCLI(&cfg)
	if err := cl.parse(&cfg, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			cl.usage(stdout)
			return 0
		}
		return fail("%v (crawl -h lists the flags)", err)
	}
	if cfg.status || cfg.reset || cfg.force {
		return runLifecycle(ctx, &cfg, stdout, stderr, fail)
	}
	switch {
	case cfg.demo && len(cfg.roots) > 0:
		return fail("-demo crawls the demo site: give no root URL with it")
	case !cfg.demo && len(cfg.roots) == 0:
		return fail("no root URL: give one or more, or -demo to crawl the built-in demo site")
	}

	// A bad root is refused before any file is opened, so that the
	// command run again, the root corrected, finds none in its way.
	for _, root := range cfg.roots {
		if _, err := crawl.ParseRoot(root); err != nil {
			return fail("%v", err)
		}
	}
	if cfg.demo && cfg.state != "" {
		return fail("-state cannot resume -demo: the demo site gets a new port each run")
	}
	leaseSet := false
	cl.fs.Visit(func(f *flag.Flag) { leaseSet = leaseSet || f.Name == "lease" })
	if err := checkRedisFlags(&cfg, leaseSet); err != nil {
		return fail("%v", err)
	}
	if cfg.warcIndex != "" && cfg.warc == "" {
		return fail("-warc_index indexes the archive -warc writes: give -warc FILE too")
	}
	// Two flags naming one file would each destroy what the other
	// writes: the crawl's -state above all.
	files := []struct{ flag, path string }{{"-state", cfg.state}, {"-o", cfg.output}, {"-graph", cfg.graph}, {"-warc", cfg.warc}, {"-warc_index", cfg.warcIndex}, {"-cpuprofile", cfg.cpuProfile}}
	for i, a := range files {
		for _, b := range files[i+1:] {
			if a.path != "" && b.path != "" && sameFile(a.path, b.path) {
				return fail("%s and %s name the same file, %s: each would overwrite the other", a.flag, b.flag, b.path)
			}
		}
	}
	out := stdout
	var outFile *outputFile
	if cfg.output != "" {
		f, err := openOutput(cfg.output)
		if err != nil {
			return fail("-o: %v", err)
		}
		defer f.Close()
		out, outFile = f, f
	}
	var graphFile *outputFile
	if cfg.graph != "" {
		f, err := openOutput(cfg.graph)
		if err != nil {
			return fail("-graph: %v", err)
		}
		defer f.Close()
		graphFile = f
	}

	if cfg.cpuProfile != "" {
		f, err := os.Create(cfg.cpuProfile)
		if err != nil {
			return fail("-cpuprofile: %v", err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return fail("-cpuprofile: %v", err)
		}
		defer pprof.StopCPUProfile()
	}

	if cfg.demo {
		root, stop, err := serveDemo(ctx, cfg.demoLatency)
		if err != nil {
			return fail("%v", err)
		}
		defer stop()
		cfg.roots = []string{root}
	}

	status := &statusLine{w: stderr}
	logger := slog.New(slog.NewTextHandler(status, &slog.HandlerOptions{
		Level: cfg.logLevel,
		// A person reads this as it happens: the time is noise.
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey && len(groups) == 0 {
				return slog.Attr{}
			}
			return a
		},
	}))
	// net/http's own complaints ("Unsolicited response received on idle
	// HTTP channel", a server's framing gone wrong) go through the
	// standard logger: they are the site's doing, and show with -v only.
	log.SetFlags(0)
	log.SetOutput(slog.NewLogLogger(logger.Handler(), slog.LevelDebug).Writer())
	prog := newProgress()
	text := newTextReport(reportMemory, func(err error) {
		logger.Warn("the report's lines are kept in memory: they could not be spilled to disk", "err", err)
	})
	defer text.close()
	showLine := ttys.stderr && !cfg.quiet
	var lines *jsonLines
	if cfg.format == "jsonl" {
		w := out
		if outFile == nil && ttys.stdout && showLine {
			// Both on one screen: a JSON line must not land on the
			// progress line.
			w = status.above(out)
		}
		lines = newJSONLines(w)
	}
	opts := append(cfg.options(), crawl.WithLogger(logger))
	if showLine {
		opts = append(opts, crawl.WithProgress(refreshInterval/2, prog.update))
	}
	var graph *linkGraph
	if graphFile != nil {
		graph = newLinkGraph()
		opts = append(opts, crawl.WithPageHook(graph.page))
	}
	if lines != nil && !cfg.fields.empty() {
		opts = append(opts, crawl.WithPageHook(cfg.fields.hook))
	}
	answers := newReach()
	// write adds a Result to the report (and its line, with fields, in
	// JSON lines): this run's, or an earlier run's of -state.
	write := func(r *crawl.Result, fields map[string]string) {
		answers.result(r)
		if lines != nil {
			lines.result(r, fields)
		} else {
			text.result(r)
		}
	}
	opts = append(opts, crawl.WithResultHook(func(r crawl.Result) {
		prog.result(&r)
		write(&r, cfg.fields.take(r.URL))
		if graph != nil {
			graph.result(&r)
		}
	}))
	// A write error of the archive stops the crawl at once.
	ctx, stopCrawl := context.WithCancelCause(ctx)
	defer stopCrawl(nil)
	if lines != nil {
		// So does one of the JSON lines, written as the crawl goes:
		// the URLs done after it would have no line.
		lines.onErr = stopCrawl
	}
	// A crawl resumed with -state continues its archive; any other
	// refuses to add to one.
	resumed := false
	if cfg.state != "" {
		if _, err := os.Stat(cfg.state); err == nil {
			resumed = true
		} else if dir := filepath.Dir(cfg.state); !isDir(dir) {
			if exists(dir) {
				return fail("-state %s: %s is not a directory", cfg.state, dir)
			}
			return fail("-state %s: the directory %s does not exist", cfg.state, dir)
		}
	}
	if !resumed {
		for _, f := range []struct{ flag, path string }{{"-warc", cfg.warc}, {"-warc_index", cfg.warcIndex}} {
			if f.path != "" && exists(f.path) {
				return fail("%s: %s exists: give a new name, such as %s, or remove it (only a crawl resumed with -state continues its archive)", f.flag, f.path, freeName(f.path))
			}
		}
	}
	// The archive: opened by openArchive at once, or, with -state, once
	// the state has taken the crawl; closeArchive closes it when the
	// command ends, and removes the files it made if the crawl did not
	// begin.
	var (
		state        *boltfrontier.Frontier
		archive      *warc.Writer
		closeArchive func()
		started      bool // the crawl began: its archive is kept
	)
	openArchive := func() error {
		if cfg.warc == "" {
			return nil
		}
		// An index made now goes with the crawl if it does not begin,
		// as the archive does, resumed or not.
		_, serr := os.Stat(cfg.warcIndex)
		newIndex := cfg.warcIndex != "" && errors.Is(serr, fs.ErrNotExist)
		w, err := warc.NewWriter(warc.Options{
			Resume:   resumed,
			OnError:  stopCrawl,
			File:     cfg.warc,
			MaxSize:  cfg.warcMaxSize,
			Index:    cfg.warcIndex,
			Software: "asyncrawl/" + crawl.Version,
			Info:     map[string]string{"http-header-user-agent": cfg.userAgent, "robots": robotsPolicy(cfg.robots)},
		})
		if err != nil {
			if state != nil && !resumed {
				// Made by this run, opened before the archive: a crawl
				// that does not begin leaves no state in the way.
				os.Remove(cfg.state)
			}
			return &archiveError{err}
		}
		// The files this run makes: a crawl that does not begin (a
		// bad -exclude, a -state of another crawl) leaves none in the
		// way of the command run again.
		files := w.Files()
		made := files[len(files)-1:]
		if newIndex {
			made = append(made, cfg.warcIndex)
		}
		closeArchive = func() {
			w.Close()
			if !started {
				for _, f := range made {
					os.Remove(f)
				}
			}
		}
		archive = w
		return nil
	}
	// The state first: a -state another process holds is refused before
	// anything is done to the archive it writes (a resumed archive's
	// last file is read, and may be cut back: see warc.Options.Resume).
	if cfg.state != "" {
		f, err := openState(ctx, cfg.state)
		if ctx.Err() != nil {
			fmt.Fprintln(stderr, "crawl: interrupted")
			return interruptedCode(ctx)
		}
		if err != nil {
			return fail("-state: %v", err)
		}
		defer f.Close()
		state = f
		// The report, or the JSON lines, are of the whole crawl: the
		// URLs earlier runs finished come first (their lines without
		// -select fields, which the state does not keep), so that the
		// lines agree with the summary, and a run killed leaves no line
		// twice in the next run's output.
		opts = append(opts, crawl.WithFrontier(reprinting{f, func(ctx context.Context) error {
			// The state has taken the crawl (its roots and scope):
			// only now is the archive it continues opened, so that a
			// crawl the state refuses leaves it as it was.
			if err := openArchive(); err != nil {
				return err
			}
			return f.Results(ctx, func(r crawl.Result) bool {
				prog.earlier(&r)
				write(&r, nil)
				return true
			})
		}}))
	}
	defer func() {
		if closeArchive != nil {
			closeArchive()
		}
	}()
	if state == nil {
		if err := openArchive(); err != nil {
			return fail("%v", err)
		}
	}
	// The archive records the connections -resolve makes: it wraps the
	// mapping's transport. With -state it is opened once the crawl has
	// begun (see above), after the crawler made its transport: made at
	// the first request.
	var record func(http.RoundTripper) http.RoundTripper
	if cfg.warc != "" {
		record = func(rt http.RoundTripper) http.RoundTripper { return &archiveTransport{rt: rt, w: &archive} }
	}
	if wrap := cfg.resolve.wrapper(record); wrap != nil {
		opts = append(opts, crawl.WithTransportWrapper(wrap))
	}

	var (
		shared *redisfrontier.Frontier
		rdb    redis.UniversalClient // shared's
	)
	announced := false
	if cfg.sharing() {
		if cfg.crawlName != "" {
			// Named by -crawl: said at once, before Redis answers (a
			// derived name is said once Start has made it).
			announce(stderr, &cfg, cfg.crawlName)
			announced = true
		}
		f, client, err := openRedis(ctx, &cfg, logger)
		if err != nil {
			return fail("%v", err)
		}
		defer f.Close()
		shared, rdb = f, client
		opts = append(opts, crawl.WithFrontier(f), crawl.WithLeaseTerm(cfg.lease))
	}
	c, err := crawl.New(opts...)
	if err != nil {
		return fail("%v", err)
	}

	// Run, with the name of a shared crawl said once Start has named it
	// and Redis has answered: when Start returns, or before, while it
	// waits on a Redis that answers (its writes short of
	// -redis_wait_replicas), so that -q's one line comes all the same.
	var nameSaid sync.Once
	sayName := func() { nameSaid.Do(func() { announce(stderr, &cfg, shared.Name()) }) }
	startDone := make(chan struct{})
	if shared != nil && !announced && cfg.watch != nil {
		go func() {
			tick := time.NewTicker(100 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-startDone:
					return
				case <-tick.C:
					if shared.Name() != "" && cfg.watch.replied.Load() {
						sayName()
						return
					}
				}
			}
		}()
	}
	stopProgress := func() {}
	cr, err := c.Start(ctx, cfg.roots...)
	close(startDone)
	if ae := (*archiveError)(nil); errors.As(err, &ae) {
		// The archive, opened once -state took the crawl, failed (its
		// OnError cancelled ctx: no interruption).
		return fail("%v", ae)
	}
	var stats *crawl.Stats
	if shared != nil && shared.Name() != "" && !announced && (err == nil || ctx.Err() == nil) {
		// Even when the crawl refused this process (other roots or
		// scope under its name): the name to give -status or -reset.
		// Not when Start was interrupted before Redis answered.
		sayName()
	}
	if err == nil {
		if showLine {
			stopProgress = showProgress(status, prog)
		}
		cr.Close()
		stats, err = cr.Wait()
	}
	started = stats != nil
	stopProgress()
	if shared != nil {
		if cfg.watch != nil {
			// An outage that ended as the crawl did: said now.
			cfg.watch.settle()
		}
		// A Run stopped while Redis cannot be reached returns all the
		// same, a few seconds later, its URLs left to expire.
		if name := shared.Name(); name != "" && started && !errors.Is(err, redisfrontier.ErrCrawlDeleted) {
			keys := "crawl:{" + name + "}:*"
			if len(cfg.cluster) > 0 {
				keys += " crawl:{" + name + ":*}:*" // its shards'
			}
			// The keys' expiry as the server has it: set by this run,
			// or by an earlier one that finished the crawl (done, or
			// its page budget spent), which a rerun does not extend.
			// Asked only of a Run that ended well: one cut short (Redis
			// down, say) is not held up by it.
			var expires time.Time
			if err == nil {
				ictx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				if st, ierr := redisfrontier.Inspect(ictx, rdb, name); ierr == nil {
					expires = st.Expires
				}
				cancel()
			}
			switch _, wasDone := shared.WasDone(); {
			case wasDone:
				// Its expiry, or none, was set when it was first
				// done, by that run's -redis_ttl.
				logger.Info("the crawl was done before this run: its keys expire as that run's -redis_ttl said (-status says when)", "crawl", name, "keys", keys)
			case !expires.IsZero():
				logger.Info("the crawl's keys are set to expire (-status says so; a run that does not go on with it does not extend them)", "crawl", name, "keys", keys, "at", expires.Local().Format(time.RFC3339))
			case cfg.redisTTL == 0:
				logger.Info("the crawl is kept in Redis for good (-redis_ttl 0): -reset deletes it", "crawl", name, "keys", keys)
			default:
				logger.Info("the crawl is kept in Redis until -redis_ttl after it is done", "crawl", name, "keys", keys, "redis_ttl", cfg.redisTTL)
			}
		}
	}
	// A crawl stopped by an error once it ran (the archive or the state
	// could not be written: a full disk) still writes its report, which
	// shows what was done, and then exits 1 with the error.
	var stopped, archiveStopped error
	// failThen fails with the message, then closes the archive (writing
	// its index) and says each error of its close, but archiveStopped,
	// said already: whatever stopped the crawl, an index that could not
	// be written is said, after the error that stopped it.
	failThen := func(format string, a ...any) int {
		code := fail(format, a...)
		if archive != nil {
			err := archive.Close()
			errs := []error{err}
			if j, ok := err.(interface{ Unwrap() []error }); ok {
				errs = j.Unwrap()
			}
			for _, e := range errs {
				if e != nil && e != archiveStopped {
					fmt.Fprintf(stderr, "crawl: -warc: %v\n", e)
				}
			}
		}
		return code
	}
	switch {
	case archive != nil && archive.Err() != nil:
		archiveStopped = archive.Err()
		stopped = fmt.Errorf("-warc: %v: the crawl was stopped, the archive holds what came before", archiveStopped)
	case lines != nil && lines.failed() != nil:
		name := "standard output"
		if cfg.output != "" {
			name = "-o " + cfg.output
		}
		// No report follows: its lines go where this one failed.
		return failThen("%s: %v: the crawl was stopped there, the lines before are written", name, lines.failed())
	case err != nil && ctx.Err() == nil && stats != nil:
		stopped = err
	}
	interrupted := err != nil && ctx.Err() != nil || stopped != nil
	switch {
	case err != nil && !interrupted && errors.Is(err, render.ErrNoBrowser):
		return fail("-render: no chromium on PATH: install Debian's chromium package (apt-get install chromium)")
	case err != nil && !interrupted:
		return fail("%v", err)
	case stats == nil:
		if stopped != nil {
			return fail("%v", stopped)
		}
		// Interrupted before the crawl began: nothing to report.
		fmt.Fprintln(stderr, "crawl: interrupted")
		return interruptedCode(ctx)
	}
	switch {
	case stopped != nil:
	case interrupted:
		fmt.Fprintln(stderr, "crawl: interrupted; the report shows what was done")
	case stats.Budget != "" && !cfg.quiet:
		fmt.Fprintf(stderr, "crawl: stopped by -%s; Todo counts the URLs left\n", stats.Budget)
	}
	if shared != nil && !interrupted && prog.thisRun() == 0 {
		alreadyDone(stderr, &cfg, shared)
	}

	if lines != nil {
		err = lines.summary(stats, interrupted)
	} else {
		err = text.write(out, stats, prog.thisRun())
	}
	if err != nil {
		return failThen("write report: %v", err)
	}
	if graph != nil {
		if err := graph.writeDOT(graphFile, cfg.roots[0]); err != nil {
			return failThen("-graph: %v", err)
		}
	}
	if archive != nil && stopped == nil {
		if err := archive.Close(); err != nil {
			return fail("-warc: %v", err)
		}
	}
	if state != nil {
		if err := state.Close(); err != nil {
			return failThen("-state: %v", err)
		}
	}
	if shared != nil {
		if err := shared.Close(); err != nil && !errors.Is(err, crawl.ErrFrontierClosed) {
			return failThen("%s: %v", cfg.redisFlagName(), err)
		}
	}
	for _, f := range []*outputFile{outFile, graphFile} {
		if f != nil {
			if err := f.Close(); err != nil {
				return failThen("%v", err)
			}
		}
	}
	if stopped != nil {
		// The error that stopped the crawl first, then what else went
		// wrong at the archive's close (the index of a full disk).
		return failThen("%v; the report shows what was done", stopped)
	}
	if interrupted {
		return interruptedCode(ctx)
	}
	if roots := answers.unanswered(stats, cfg.roots); roots != "" {
		return fail("no root got a response: %s", roots)
	}
	if stats.Budget != "" && stats.Done == 0 && !answers.any(stats) {
		// A budget (-max_duration) ended the crawl before any URL was
		// done: no root got a response either.
		return fail("no root got a response: %s: none before -%s ended the crawl", strings.Join(cfg.roots, ", "), stats.Budget)
	}
	return 0
}

// outputFile is a file named on the command line. It is opened before the
// crawl, so that a path that cannot be written fails at once, but emptied
// only when first written, so that a crawl that cannot start leaves a file
// that was there as it was, and removes one it created. It is not safe for
// concurrent use.
type outputFile struct {
	f       *os.File
	path    string
	created bool
	written bool
	closed  bool
	size    int64 // the bytes of the writes that succeeded whole
}

// openState opens the -state file, waiting up to its lock's timeout if
// another process holds it, or until ctx is done (Ctrl-C): then it
// returns at once, and a file opened after that is closed.
func openState(ctx context.Context, path string) (*boltfrontier.Frontier, error) {
	type opened struct {
		f   *boltfrontier.Frontier
		err error
	}
	c := make(chan opened, 1)
	go func() {
		f, err := boltfrontier.Open(path, nil)
		c <- opened{f, err}
	}()
	select {
	case o := <-c:
		return o.f, o.err
	case <-ctx.Done():
		go func() {
			if o := <-c; o.f != nil {
				o.f.Close()
			}
		}()
		return nil, ctx.Err()
	}
}

func openOutput(path string) (*outputFile, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	created := err == nil
	if errors.Is(err, fs.ErrExist) {
		f, err = os.OpenFile(path, os.O_WRONLY, 0)
	}
	if err != nil {
		return nil, err
	}
	return &outputFile{f: f, path: path, created: created}, nil
}

func (o *outputFile) Write(p []byte) (int, error) {
	if !o.written {
		o.written = true
		// Not a regular file (-o /dev/stdout): nothing to empty.
		if fi, err := o.f.Stat(); err == nil && fi.Mode().IsRegular() {
			if err := o.f.Truncate(0); err != nil {
				return 0, err
			}
		}
	}
	n, err := o.f.Write(p)
	if err != nil && n > 0 {
		// Cut short (a full disk): the file ends with the last write
		// whole, a JSON line's, not part of the next.
		if fi, serr := o.f.Stat(); serr == nil && fi.Mode().IsRegular() && o.f.Truncate(o.size) == nil {
			o.f.Seek(o.size, io.SeekStart)
			n = 0
		}
	}
	o.size += int64(n)
	return n, err
}

// Close closes the file, once; a file created and never written is removed.
func (o *outputFile) Close() error {
	if o.closed {
		return nil
	}
	o.closed = true
	err := o.f.Close()
	if !o.written && o.created {
		os.Remove(o.path)
	}
	return err
}

// sameFile reports whether two paths of the command line name one file:
// the same path, or an existing file under two names.
func sameFile(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	if errA == nil && errB == nil {
		return os.SameFile(fa, fb)
	}
	// One not made yet: the same name in the same directory, however
	// each is spelt (relative or absolute, through a link).
	return errA != nil && errB != nil && realPath(a) == realPath(b)
}

// realPath returns name with its directory made absolute and its links
// resolved, the name itself as given.
func realPath(name string) string {
	dir, err := filepath.Abs(filepath.Dir(name))
	if err != nil {
		return name
	}
	if d, err := filepath.EvalSymlinks(dir); err == nil {
		dir = d
	}
	return filepath.Join(dir, filepath.Base(name))
}

// exists reports whether a file of that name exists.
func exists(name string) bool {
	_, err := os.Lstat(name)
	return err == nil
}

// isDir reports whether name is a directory.
func isDir(name string) bool {
	fi, err := os.Stat(name)
	return err == nil && fi.IsDir()
}

// freeName returns a name like path's that no file has: "site.warc.gz"
// gives "site-2.warc.gz", or -3, ...
func freeName(path string) string {
	base, ext := path, filepath.Ext(path)
	for _, e := range []string{".warc.gz", ".warc", ext} {
		if strings.HasSuffix(path, e) {
			base, ext = strings.TrimSuffix(path, e), e
			break
		}
	}
	for n := 2; ; n++ {
		if name := fmt.Sprintf("%s-%d%s", base, n, ext); !exists(name) {
			return name
		}
	}
}

// robotsPolicy names the robots policy for a WARC's warcinfo record.
func robotsPolicy(obey bool) string {
	if obey {
		return "obey"
	}
	return "ignore"
}

// reprinting is the frontier of -state: its Start, once the file is found
// to hold this crawl (the same roots and scope: another crawl's is refused
// with nothing written), writes the Results of the earlier runs by
// reprint, before any of this run's. A reprint cut short by Ctrl-C (ctx
// done) is no error: the Run that follows ends at once, interrupted.
type reprinting struct {
	*boltfrontier.Frontier
	reprint func(ctx context.Context) error
}

func (f reprinting) Start(ctx context.Context, p crawl.Policy) error {
	if err := f.Frontier.Start(ctx, p); err != nil {
		return err
	}
	switch err := f.reprint(ctx); {
	case errors.As(err, new(*archiveError)):
		// Whatever ctx: the archive's failure cancels it (OnError).
		return err
	case err != nil && ctx.Err() == nil:
		return fmt.Errorf("-state: %w", err)
	}
	return nil
}

// archiveError is the error of the -warc archive's opening.
type archiveError struct{ err error }

func (e *archiveError) Error() string { return "-warc: " + e.err.Error() }
func (e *archiveError) Unwrap() error { return e.err }

// archiveTransport is the -warc archive's Transport over rt, made at the
// first request: with -state the archive is opened once the state has
// taken the crawl, after the crawler made its transport, and before any
// request.
type archiveTransport struct {
	rt http.RoundTripper
	w  **warc.Writer
	mu sync.Mutex
	t  http.RoundTripper // made at the first request
}

func (a *archiveTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	a.mu.Lock()
	if a.t == nil {
		if *a.w == nil {
			a.t = failingTransport{errors.New("-warc: the archive is not open")}
		} else {
			a.t = (*a.w).Transport(a.rt)
		}
	}
	t := a.t
	a.mu.Unlock()
	return t.RoundTrip(r)
}

// CloseIdleConnections closes the idle connections of the archive's
// Transport, if made, as http.Client's does of its own.
func (a *archiveTransport) CloseIdleConnections() {
	a.mu.Lock()
	t := a.t
	a.mu.Unlock()
	if c, ok := t.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}
