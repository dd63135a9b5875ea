package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/asyncrawl/crawl"
	"github.com/asyncrawl/crawl/redisfrontier"
	"github.com/asyncrawl/crawl/render"
	"github.com/asyncrawl/crawl/warc"
	"golang.org/x/net/http/httpguts"
)

// config is what the command line asks for.
type config struct {
	roots []string
	// watch logs the outages of the crawl's Redis, once its client is
	// made (newRedisClient).
	watch *outageWatch

	// crawl.py's flags.
	maxRedirect int
	maxTries    int
	workers     int
	exclude     []string
	lenient     bool
	logLevel    slog.Level
	quiet       bool // no progress line either

	// The package's other options.
	userAgent   string
	hostWorkers int
	hostDelay   time.Duration
	robots      bool
	robotsAge   time.Duration
	directives  *bool // nil: as robots
	sitemaps    bool
	requisites  bool
	references  bool
	checkExt    bool
	skipBodies  bool
	speculative bool
	maxDepth    int
	maxPages    int
	maxDuration time.Duration
	maxBody     int64
	timeout     time.Duration

	// Traps and guards.
	maxURLLength      int
	maxLinks          int
	maxSegmentRepeats int
	blockPrivate      bool

	// The command's own.
	demo        bool
	demoLatency time.Duration
	cpuProfile  string
	format      string
	output      string
	fields      *fieldSet // -select
	graph       string
	state       string
	redis       string        // the Redis frontier's URL
	cluster     []string      // or its Redis Cluster's seed nodes, HOST:PORT each
	crawlName   string        // the crawl's name on it
	lease       time.Duration // its lease term
	redisWait   time.Duration // how long to wait for it at the start
	waitGiven   bool          // whether -redis_wait was given
	// The lifecycle of a crawl shared through Redis (lifecycle.go).
	status   bool          // -status: print the crawl's state and exit
	reset    bool          // -reset: delete the crawl's keys and exit
	force    bool          // -force: -reset even with leases out
	redisTTL time.Duration // -redis_ttl: a finished crawl's keys' life; 0 keeps them
	ttlGiven bool          // whether -redis_ttl was given
	// -redis_wait_replicas: how many replicas each write waits for.
	waitReplicas      int
	waitReplicasGiven bool

	warc        string
	warcMaxSize int64
	warcIndex   string

	// -resolve: where to connect for a host instead of asking DNS.
	resolve resolveFlag

	// Rendering in headless Chromium.
	render        string // "", "all" or "auto"
	renderTabs    int
	renderTimeout time.Duration
}

// A flagSpec is one flag as -h shows it: its names (the first is the main
// one, the others aliases), the name of its argument and what it does.
type flagSpec struct {
	names []string
	arg   string
	usage string
}

// flagGroup is a heading of -h and its flags, in the order they are shown.
type flagGroup struct {
	title string
	flags []flagSpec
}

// cli is the command line's flag set, with the groups -h shows.
type cli struct {
	fs     *flag.FlagSet
	groups []flagGroup
}

// add defines a flag under every one of its names and lists it for -h
// under the last group begun.
func (c *cli) add(v flag.Value, arg, usage string, names ...string) {
	for _, n := range names {
		c.fs.Var(v, n, usage)
	}
	g := &c.groups[len(c.groups)-1]
	g.flags = append(g.flags, flagSpec{names: names, arg: arg, usage: usage})
}

func (c *cli) group(title string) { c.groups = append(c.groups, flagGroup{title: title}) }

// newCLI defines the flags, their defaults in cfg.
func newCLI(cfg *config) *cli {
	*cfg = config{
		maxRedirect:   crawl.DefaultMaxRedirects,
		maxTries:      crawl.DefaultMaxTries,
		workers:       100, // crawl.py's max_tasks; the package's default is for programs
		logLevel:      slog.LevelInfo,
		userAgent:     crawl.DefaultUserAgent,
		hostWorkers:   crawl.DefaultHostWorkers,
		renderTabs:    render.DefaultTabs,
		renderTimeout: render.DefaultTimeout,
		robots:        true,
		robotsAge:     crawl.DefaultRobotsMaxAge,
		maxBody:       crawl.DefaultMaxBodySize,
		warcMaxSize:   warc.DefaultMaxSize,
		timeout:       crawl.DefaultRequestTimeout,
		demoLatency:   20 * time.Millisecond,
		lease:         crawl.DefaultLeaseTerm,
		redisWait:     30 * time.Second,
		redisTTL:      redisfrontier.DefaultTTL,

		maxURLLength:      crawl.DefaultMaxURLLength,
		maxLinks:          crawl.DefaultMaxLinksPerPage,
		maxSegmentRepeats: crawl.DefaultMaxSegmentRepeats,
		format:            "text",
		fields:            newFieldSet(),
	}
	c := &cli{fs: flag.NewFlagSet("crawl", flag.ContinueOnError)}
	// Parse errors are printed by run, on one line, and -h by usage.
	c.fs.SetOutput(io.Discard)

	c.group("Flags of crawl.py")
	c.add(&intFlag{p: &cfg.maxRedirect, min: 0}, "N", "follow at most N redirects in a row from one URL", "max_redirect", "redirects")
	c.add(&intFlag{p: &cfg.maxTries, min: 1}, "N", "try each URL at most N times on network errors and 408, 429, 500, 502, 503, 504", "max_tries", "tries")
	c.add(&intFlag{p: &cfg.workers, min: 1}, "N", "fetch at most N URLs at once (worker goroutines)", "max_tasks", "workers")
	c.add(&excludeFlag{p: &cfg.exclude}, "REGEX", "do not crawl links whose URL matches REGEX (RE2 syntax; may be repeated)", "exclude")
	c.add(&funcFlag{set: func(on bool) { cfg.lenient = !on }}, "", "crawl only the roots' hosts, with or without www. (default)", "strict")
	c.add(&funcFlag{set: func(on bool) { cfg.lenient = on }}, "", "crawl every host of the roots' registrable domains", "lenient")
	c.add(&funcFlag{set: func(on bool) {
		if on {
			cfg.logLevel, cfg.quiet = slog.LevelDebug, false
		}
	}}, "", "log every fetch to stderr (the default logs retries and failures)", "v", "verbose")
	c.add(&funcFlag{set: func(on bool) {
		if on {
			cfg.logLevel, cfg.quiet = slog.LevelError, true
		}
	}}, "", "log only errors, and show no progress line", "q", "quiet")

	c.group("Politeness and limits")
	c.add(&headerFlag{stringFlag{p: &cfg.userAgent}}, "STRING", "the User-Agent header", "user_agent")
	c.add(&intFlag{p: &cfg.hostWorkers, min: 1}, "N", "send at most N requests at once to one host", "host_workers")
	c.add(&durationFlag{p: &cfg.hostDelay}, "DURATION", "pause about DURATION between two requests to one host", "host_delay")
	c.add(&boolFlag{p: &cfg.robots}, "", "obey robots.txt (-robots=false to ignore it)", "robots")
	c.add(&durationFlag{p: &cfg.robotsAge}, "DURATION", "fetch a host's robots.txt again once its rules are DURATION old (0: once a run)", "robots_max_age")
	c.add(&funcFlag{set: func(on bool) { cfg.directives = &on }}, "", "obey a page's own rel=nofollow, <meta name=robots> and X-Robots-Tag: nofollow links are neither followed nor checked (default: as -robots; -robots_directives=false follows and checks them)", "robots_directives")
	c.add(&boolFlag{p: &cfg.sitemaps}, "", "also crawl the URLs of the roots' sitemaps", "sitemaps")
	c.add(&boolFlag{p: &cfg.requisites}, "", "also fetch what each page needs to render (images, scripts, stylesheets, fonts), on any host, once each", "requisites")
	c.add(&boolFlag{p: &cfg.references}, "", "also fetch the URLs pages name but neither follow nor need (pings, POST forms' actions, ...), in scope", "references")
	c.add(&boolFlag{p: &cfg.checkExt}, "", "check the navigation links (and sitemap entries) the crawl does not follow (other hosts, out of scope): each once, HEAD or GET, for its status only; not requisites or references (-requisites fetches those of any host)", "check_external")
	c.add(&boolFlag{p: &cfg.skipBodies}, "", "read only the status and headers of files the crawl does not parse for links (images, PDFs, archives)", "skip_unparsed")
	c.add(&boolFlag{p: &cfg.speculative}, "", "also guess URLs in scripts, page text, other attributes and robots.txt paths (many are not URLs)", "speculative")
	c.add(&intFlag{p: &cfg.maxDepth, min: 0}, "N", "follow links at most N deep from a root (0: no limit)", "max_depth")
	c.add(&intFlag{p: &cfg.maxPages, min: 0}, "N", "stop after N URLs (0: no limit)", "max_pages")
	c.add(&durationFlag{p: &cfg.maxDuration}, "DURATION", "stop after DURATION (0: no limit)", "max_duration")
	c.add(&sizeFlag{p: &cfg.maxBody}, "SIZE", "read at most SIZE of a body (bytes, or with k, M, G)", "max_body")
	c.add(&durationFlag{p: &cfg.timeout, positive: true}, "DURATION", "give up an attempt after DURATION", "timeout")

	c.group("Traps and guards")
	c.add(&intFlag{p: &cfg.maxURLLength, min: 0}, "N", "do not follow links longer than N bytes (0: no limit)", "max_url_length")
	c.add(&intFlag{p: &cfg.maxLinks, min: 0}, "N", "consider only the first N distinct links of a page (0: no limit)", "max_links")
	c.add(&intFlag{p: &cfg.maxSegmentRepeats, min: 0}, "N", "do not follow links whose path has one segment more than N times (0: no limit)", "max_segment_repeats")
	c.add(&boolFlag{p: &cfg.blockPrivate}, "", "refuse to connect to loopback, private and other non-public addresses (for untrusted roots)", "block_private")

	c.group("Addresses")
	c.add(&cfg.resolve, "HOST:PORT:ADDR", "connect to ADDR, an IP address or IP:PORT, for HOST on PORT, instead of asking DNS, as curl's --resolve does: only the connection changes, the URLs, Host header, TLS server name and report keep HOST. HOST may be *.NAME, any name under NAME, or *, any host (or an IPv6 address in brackets); an exact HOST wins over *.NAME, the longest NAME over a shorter, and those over *. May be repeated, one ADDR an entry and a HOST:PORT once (curl's lists of addresses and its + and - prefixes are not taken). With -block_private, an ADDR that is not public is refused as any other", "resolve")

	c.group("Rendering")
	c.add(&renderFlag{p: &cfg.render}, "[auto]", "load each HTML page in headless Chromium (Debian's chromium package), after its scripts, and follow what it shows and requests as well: links its scripts build, its fetch and XHR requests, history.pushState URLs, navigations that a click or a script starts. Every request of the browser goes through the crawl's policy (scope, robots.txt, host limits, -block_private, -warc). -render auto (or -render=auto) renders only the pages that look built by their scripts (a page with a script that runs, no meta refresh, and an app root without links, a <noscript> asking for JavaScript, a framework's marker with few links, or next to no text and links); -render=all and =true are -render, =false none", "render")
	c.add(&intFlag{p: &cfg.renderTabs, min: 1}, "N", "with -render, render at most N pages at once, each in a tab of its own", "render_tabs")
	c.add(&durationFlag{p: &cfg.renderTimeout, positive: true}, "DURATION", "with -render, give up the render of a page after DURATION, keeping what it showed until then (its Result has an error); it also bounds the browser's start, which fails the crawl if it takes longer", "render_timeout")

	c.group("Output")
	c.add(&choiceFlag{p: &cfg.format, choices: []string{"text", "jsonl"}}, "FORMAT", "text: crawl.py's report at the end; jsonl: a JSON object per URL as it finishes, then a summary", "format")
	c.add(cfg.fields, "NAME=SELECTOR[@ATTR]", `with -format jsonl, add to each HTML page's record the field NAME, in "fields": the text of the first element the CSS SELECTOR matches, its white space collapsed, or with @ATTR the value of that element's attribute ATTR, its white space collapsed too (ATTR in any case, as HTML's attribute names are; split at the last @ if a name follows it to the end: a letter or _, then letters, digits, -, _, : or ., so a[href*="@"] is all selector); a field is left out when nothing matches or its value is empty; may be repeated. The text report ignores it`, "select")
	c.add(&stringFlag{p: &cfg.output}, "FILE", "write the report or the JSON lines to FILE instead of stdout", "o")
	c.add(&stringFlag{p: &cfg.graph}, "FILE", "write the link graph to FILE in Graphviz DOT (render it with dot -Tsvg)", "graph")

	c.group("Archiving")
	c.add(&stringFlag{p: &cfg.warc}, "FILE", "record every exchange, as transferred, in WARC 1.1 files: FILE (.warc.gz: a gzip member per record; .warc: plain), then FILE-00001... past -warc_max_size; an existing FILE is refused, but by a crawl resumed with -state, which goes on in the next numbered file", "warc")
	c.add(&sizeFlag{p: &cfg.warcMaxSize}, "SIZE", "start the next WARC file once one reaches SIZE (bytes, or with k, M, G)", "warc_max_size")
	c.add(&stringFlag{p: &cfg.warcIndex}, "FILE", "write a CDXJ index of the -warc files' responses to FILE, sorted, as pywb replays from (written at the end of the crawl, Ctrl-C included; a crawl resumed with -state rewrites it to cover every file)", "warc_index")

	c.group("Resuming")
	c.add(&stringFlag{p: &cfg.state}, "FILE", "keep the crawl in FILE: run the same command again after a crash or Ctrl-C and it goes on where it stopped", "state")

	c.group("Crawling on several machines")
	c.add(&stringFlag{p: &cfg.redis}, "URL", "share the crawl through the Redis server at URL (redis://HOST:PORT/DB): the same command on N machines crawls the roots once between them; each prints the whole crawl's counters, after the lines of the URLs it fetched itself, and exits when the whole crawl is done", "redis")
	c.add(&addrsFlag{p: &cfg.cluster}, "ADDR[,ADDR...]", "share the crawl, as -redis does, through the Redis Cluster whose nodes include each ADDR (HOST:PORT; a node or a few will do: the others are learnt from them); may be repeated. The crawl is spread by host over the cluster's masters (in 256 shards), so that they share its work and its keys. Exclusive with -redis; every flag that goes with -redis goes with it", "redis_cluster")
	c.add(&nameFlag{stringFlag{p: &cfg.crawlName}}, "NAME", "the crawl's name on -redis or -redis_cluster, without '{', '}', ':' or a control character (default: one derived from the roots and the options that decide which URLs are crawled); each process prints it at its start, -q or not", "crawl")
	c.add(&durationFlag{p: &cfg.lease, positive: true, min: crawl.MinLeaseTerm}, "DURATION", "with -redis or -redis_cluster, how long a URL a process took stays its own without news of it: then another process takes it (this one died, or cannot reach Redis); at least "+crawl.MinLeaseTerm.String()+" (crawl.MinLeaseTerm); the default is the library's, crawl.DefaultLeaseTerm", "lease")
	c.add(givenFlag{&durationFlag{p: &cfg.redisWait}, &cfg.waitGiven}, "DURATION", "with -redis, how long to wait at the start for Redis to answer, or with -redis_cluster for a node of the cluster to answer that the cluster is up (cluster_state:ok), before giving up with an error (exit 1); 0: as long as it takes. Once the crawl has begun, it waits out any outage", "redis_wait")
	c.add(givenFlag{&intFlag{p: &cfg.waitReplicas, min: 0}, &cfg.waitReplicasGiven}, "N", "with -redis or -redis_cluster, make each write of the crawl wait until N replicas of its master have it (Redis's WAIT), so that a replica that takes over from a failed master has every write, and the failover loses nothing; it costs a round trip from the master to a replica per call (one WAIT after each batch of writes sent to a master), and while fewer than N replicas of a master are up the crawl waits for them. 0: no wait; Redis replicates asynchronously, and a failover may lose the master's last writes (their URLs are fetched again, and may get two results; a link another master's page had just sent it may be lost, crawled only if another page links to it)", "redis_wait_replicas")

	// The lifecycle of a shared crawl.
	c.add(&boolFlag{p: &cfg.status}, "", "with -redis or -redis_cluster and -crawl NAME, print the crawl's state (running: a process on it; waiting: URLs left and no process on it; or done), its counters, who holds leases and until when (a JSON object with -format jsonl) and exit; exit 1 if there is no such crawl", "status")
	c.add(&boolFlag{p: &cfg.reset}, "", "with -redis or -redis_cluster and -crawl NAME, delete the crawl's keys (on every master of a cluster) and exit, so that the command run again crawls anew; refused while a process is on it (holding leases, or waiting out a host's delay), unless -force", "reset")
	c.add(&boolFlag{p: &cfg.force}, "", "with -reset, delete the crawl even while processes are on it: their next call fails, and they exit 1 with an error that says the crawl was deleted", "force")
	c.add(givenFlag{&durationFlag{p: &cfg.redisTTL}, &cfg.ttlGiven}, "DURATION", "with -redis or -redis_cluster, how long the keys of a finished crawl (done, or stopped by its -max_pages) stay in Redis, from when a process finds it so (0: for good; otherwise at least 1s); running the command again on a finished crawl fetches nothing and does not extend it, unless a larger -max_pages lets it go on", "redis_ttl")

	c.group("Profiling")
	c.add(&stringFlag{p: &cfg.cpuProfile}, "FILE", "write a CPU profile of the crawl to FILE (go tool pprof reads it; cmd/crawl/default.pgo was made so)", "cpuprofile")

	c.group("Demo")
	c.add(&boolFlag{p: &cfg.demo}, "", "serve the built-in demo site on a loopback port and crawl it", "demo")
	c.add(&durationFlag{p: &cfg.demoLatency}, "DURATION", "add DURATION to each of the demo site's responses, as a network would", "demo_latency")
	return c
}

// options returns the crawler's options that the flags set.
func (cfg *config) options() []crawl.Option {
	opts := []crawl.Option{
		crawl.WithWorkers(cfg.workers),
		crawl.WithMaxRedirects(cfg.maxRedirect),
		crawl.WithMaxTries(cfg.maxTries),
		crawl.WithExclude(cfg.exclude...),
		crawl.WithLenientHosts(cfg.lenient),
		crawl.WithUserAgent(cfg.userAgent),
		crawl.WithHostWorkers(cfg.hostWorkers),
		crawl.WithHostDelay(cfg.hostDelay),
		crawl.WithRobots(cfg.robots),
		crawl.WithRobotsMaxAge(cfg.robotsAge),
		crawl.WithSitemaps(cfg.sitemaps),
		crawl.WithRequisites(cfg.requisites),
		crawl.WithReferences(cfg.references),
		crawl.WithCheckExternal(cfg.checkExt),
		crawl.WithSkipUnparsed(cfg.skipBodies),
		crawl.WithSpeculative(cfg.speculative),
		crawl.WithMaxDepth(cfg.maxDepth),
		crawl.WithMaxPages(cfg.maxPages),
		crawl.WithMaxDuration(cfg.maxDuration),
		crawl.WithMaxBodySize(cfg.maxBody),
		crawl.WithRequestTimeout(cfg.timeout),
		crawl.WithMaxURLLength(cfg.maxURLLength),
		crawl.WithMaxLinksPerPage(cfg.maxLinks),
		crawl.WithMaxSegmentRepeats(cfg.maxSegmentRepeats),
		crawl.WithBlockPrivateNetworks(cfg.blockPrivate),
	}
	if cfg.directives != nil {
		opts = append(opts, crawl.WithRobotsDirectives(*cfg.directives))
	}
	if cfg.render != "" {
		policy := crawl.RenderAll
		if cfg.render == "auto" {
			policy = crawl.RenderAuto
		}
		r := render.New(render.Options{Tabs: cfg.renderTabs, Timeout: cfg.renderTimeout})
		opts = append(opts, crawl.WithRenderer(r, policy))
	}
	return opts
}

// parse parses args, flags and roots mixed as crawl.py allows; after "--"
// every argument is a root. "-render auto" is "-render=auto".
func (c *cli) parse(cfg *config, args []string) error {
	args = slices.Clone(args)
	for i := 0; i+1 < len(args); i++ {
		if args[i] == "--" {
			break
		}
		if (args[i] == "-render" || args[i] == "--render") && (args[i+1] == "auto" || args[i+1] == "all") {
			args[i] += "=" + args[i+1]
			args = slices.Delete(args, i+1, i+2)
		}
	}
	for {
		if err := c.fs.Parse(args); err != nil {
			return err
		}
		rest := c.fs.Args()
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			cfg.roots = append(cfg.roots, rest...)
			return nil
		}
		if len(rest) == 0 {
			return nil
		}
		cfg.roots = append(cfg.roots, rest[0])
		args = rest[1:]
	}
}

// usage writes the help text of -h.
func (c *cli) usage(w io.Writer) {
	var b strings.Builder
	b.WriteString(`Usage: crawl [flags] ROOT...
       crawl -demo [flags]

Crawl from each ROOT URL (a bare host gets http://; a path is an error)
every page of its site, then print the report of crawl.py from "500 Lines or
Less": one line per URL, sorted, then the counters. Ctrl-C stops the crawl
and prints what was done. Flags and roots may be mixed; --flag works as
-flag.
`)
	for _, g := range c.groups {
		fmt.Fprintf(&b, "\n%s:\n", g.title)
		for _, f := range g.flags {
			var names []string
			for _, n := range f.names {
				if f.arg != "" {
					n += " " + f.arg
				}
				names = append(names, "-"+n)
			}
			fmt.Fprintf(&b, "  %s\n    \t%s", strings.Join(names, ", "), f.usage)
			if def := c.fs.Lookup(f.names[0]).DefValue; def != "" && def != "0" && def != "0s" && def != "false" {
				fmt.Fprintf(&b, " (default %s)", def)
			}
			b.WriteString("\n")
		}
	}
	b.WriteString(`
Exit status: 0 when the crawl ran and a root (or a URL a root host's
sitemap lists) got a response, whatever the pages returned; 1 when it
could not start, or when no root got a response (each root's reason on
stderr), or when a write failed (-warc, -warc_index, -state, -o, -graph,
standard output: a full disk), whatever the roots got; 130 after Ctrl-C
(SIGINT), 143 after SIGTERM.
`)
	io.WriteString(w, b.String())
}

// intFlag is an int flag with a lower bound.
type intFlag struct {
	p   *int
	min int
}

func (f *intFlag) String() string {
	if f.p == nil {
		return ""
	}
	return strconv.Itoa(*f.p)
}

func (f *intFlag) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil {
		return errors.New("not an integer")
	}
	if n < f.min {
		return fmt.Errorf("must be at least %d", f.min)
	}
	*f.p = n
	return nil
}

// givenFlag is a flag that records whether it was given.
type givenFlag struct {
	flag.Value
	given *bool
}

func (f givenFlag) Set(s string) error {
	*f.given = true
	return f.Value.Set(s)
}

// durationFlag is a time.Duration flag that is never negative, and with
// positive set never zero.
type durationFlag struct {
	p        *time.Duration
	positive bool
	min      time.Duration // if not 0, the least a positive value may be
}

func (f *durationFlag) String() string {
	if f.p == nil {
		return ""
	}
	return f.p.String()
}

func (f *durationFlag) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil {
		return errors.New("not a duration (such as 500ms, 2s or 1m30s)")
	}
	switch {
	case d <= 0 && f.positive:
		return errors.New("must be positive")
	case d < 0:
		return errors.New("must not be negative")
	case d > 0 && d < f.min:
		return fmt.Errorf("must be at least %v", f.min)
	}
	*f.p = d
	return nil
}

// sizeFlag is a positive number of bytes, with an optional binary suffix:
// k, M or G, alone or followed by B or iB ("512k", "10MiB").
type sizeFlag struct{ p *int64 }

var sizeUnits = []struct {
	suffix string
	shift  uint
}{{"g", 30}, {"m", 20}, {"k", 10}, {"", 0}}

func (f *sizeFlag) String() string {
	if f.p == nil {
		return ""
	}
	for _, u := range sizeUnits {
		if n := *f.p; n != 0 && n%(1<<u.shift) == 0 {
			if u.suffix == "" {
				return strconv.FormatInt(n, 10)
			}
			return strconv.FormatInt(n>>u.shift, 10) + strings.ToUpper(u.suffix) + "iB"
		}
	}
	return "0"
}

func (f *sizeFlag) Set(s string) error {
	num := strings.TrimSuffix(strings.TrimSuffix(strings.ToLower(s), "b"), "i")
	var shift uint
	for _, u := range sizeUnits {
		if u.suffix != "" && strings.HasSuffix(num, u.suffix) {
			num, shift = strings.TrimSuffix(num, u.suffix), u.shift
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil {
		return errors.New("not a size (such as 65536, 512k or 10MiB)")
	}
	if n < 1 {
		return errors.New("must be positive")
	}
	if n > (1<<63-1)>>shift {
		return errors.New("too large")
	}
	*f.p = n << shift
	return nil
}

// excludeFlag collects regular expressions, each checked as it is given.
type excludeFlag struct{ p *[]string }

func (f *excludeFlag) String() string {
	if f.p == nil {
		return ""
	}
	return strings.Join(*f.p, " ")
}

func (f *excludeFlag) Set(s string) error {
	if _, err := regexp.Compile(s); err != nil {
		return err
	}
	*f.p = append(*f.p, s)
	return nil
}

// addrsFlag collects HOST:PORT addresses, comma-separated or repeated,
// each checked as it is given.
type addrsFlag struct{ p *[]string }

func (f *addrsFlag) String() string {
	if f.p == nil {
		return ""
	}
	return strings.Join(*f.p, ",")
}

func (f *addrsFlag) Set(s string) error {
	for _, a := range strings.Split(s, ",") {
		host, port, err := net.SplitHostPort(a)
		if n, perr := strconv.Atoi(port); err != nil || host == "" || perr != nil || n < 1 || n > 65535 || port != strconv.Itoa(n) {
			return fmt.Errorf("address %q: want HOST:PORT, such as 10.0.0.5:6379, PORT a number from 1 to 65535", a)
		}
		*f.p = append(*f.p, a)
	}
	return nil
}

// stringFlag is a string flag that must not be empty.
type stringFlag struct{ p *string }

func (f *stringFlag) String() string {
	if f.p == nil {
		return ""
	}
	return *f.p
}

func (f *stringFlag) Set(s string) error {
	if s == "" {
		return errors.New("must not be empty")
	}
	*f.p = s
	return nil
}

// headerFlag is the value of a request header: no control character but
// a tab, which no request could carry.
type headerFlag struct{ stringFlag }

func (f *headerFlag) Set(s string) error {
	if !httpguts.ValidHeaderFieldValue(s) {
		return errors.New("not a valid header value (no control character but a tab)")
	}
	return f.stringFlag.Set(s)
}

// nameFlag is a crawl's name, as redisfrontier.CheckName allows.
type nameFlag struct{ stringFlag }

func (f *nameFlag) Set(s string) error {
	if err := redisfrontier.CheckName(s); err != nil {
		if s == "" {
			return errors.New("must not be empty")
		}
		// The problem, without the name the flag's error quotes.
		msg := err.Error()
		if i := strings.Index(msg, `": `); i >= 0 {
			msg = msg[i+3:]
		}
		return errors.New(msg)
	}
	*f.p = s
	return nil
}

// choiceFlag is a string flag with a fixed set of values.
type choiceFlag struct {
	p       *string
	choices []string
}

func (f *choiceFlag) String() string {
	if f.p == nil {
		return ""
	}
	return *f.p
}

func (f *choiceFlag) Set(s string) error {
	for _, c := range f.choices {
		if s == c {
			*f.p = s
			return nil
		}
	}
	return fmt.Errorf("must be one of %s", strings.Join(f.choices, ", "))
}

// boolFlag is a bool flag; it is a flag.Value of its own so that add can
// define it under several names.
type boolFlag struct{ p *bool }

func (f *boolFlag) IsBoolFlag() bool { return true }

func (f *boolFlag) String() string {
	if f.p == nil {
		return ""
	}
	return strconv.FormatBool(*f.p)
}

func (f *boolFlag) Set(s string) error {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return errors.New("not true or false")
	}
	*f.p = v
	return nil
}

// funcFlag is a bool flag that calls set, so that two flags can share one
// setting and the last given wins, as crawl.py's -strict and -lenient do.
type funcFlag struct{ set func(bool) }

func (f *funcFlag) IsBoolFlag() bool { return true }

func (f *funcFlag) String() string { return "" }

func (f *funcFlag) Set(s string) error {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return errors.New("not true or false")
	}
	f.set(v)
	return nil
}

// renderFlag is -render: alone, or true or all, every HTML page; auto, the
// pages that look built by their scripts; false, none.
type renderFlag struct{ p *string }

func (f *renderFlag) IsBoolFlag() bool { return true }

func (f *renderFlag) String() string {
	if f.p == nil {
		return ""
	}
	return *f.p
}

func (f *renderFlag) Set(s string) error {
	switch s {
	case "true", "all":
		*f.p = "all"
	case "auto":
		*f.p = "auto"
	case "false":
		*f.p = ""
	default:
		return errors.New("must be alone, auto, all, true or false")
	}
	return nil
}
