package frontiertest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/asyncrawl/crawl"
)

// FuzzOptions are the settings of Fuzz; a nil *FuzzOptions, and the zero
// value of each field, mean the default.
type FuzzOptions struct {
	// Seeds is how many runs Fuzz makes, with seeds 1 to Seeds; 0 means
	// $FRONTIERTEST_SEEDS, or DefaultFuzzSeeds when that is not set.
	// $FRONTIERTEST_SEED, when set, runs that one seed instead, and
	// $FRONTIERTEST_FIRST_SEED=F makes the seeds F to F+Seeds-1, so that
	// several processes can share a long run.
	Seeds int
	// Ops is the number of operations of a run; 0 means 60.
	Ops int
	// Durable says that open(t, path) opens the state kept at path, as
	// for RunDurable: a run then closes the Frontier at random points and
	// opens it anew on the same path, and checks that the crawl goes on
	// where it was.
	Durable bool
	// Restart, if not nil, is called between the Close of a durable
	// Frontier and its opening anew, with the path: a backend's test
	// restarts its server there, as a crash of the server would (for
	// Redis: kill -9 and a restart on its AOF).
	Restart func(t *testing.T, path string)
	// Save and Rollback, if not nil, make a durable Frontier's state go
	// back in time, as a server restored from an older snapshot would:
	// a run closes the Frontier at random points and calls Save, and at
	// later ones closes it, calls Rollback, which must bring back the
	// state as it was at the last Save, and opens it anew. Leases given
	// out since must stay unique and their holders' calls must get
	// ErrLeaseLost.
	Save     func(t *testing.T, path string)
	Rollback func(t *testing.T, path string)
	// Crash, if not nil, ends a durable Frontier as a crash would, in
	// place of its Close at some of the reopenings of a run: it drops f
	// without closing it (its open's cleanup closes it when the run
	// ends) and kills what holds the state (for Redis: the server, with
	// SIGKILL, restarted on its AOF). What every call that returned did
	// must be kept, as after a Close: a backend that loses calls it
	// answered for (acks not committed yet) cannot use it.
	Crash func(t *testing.T, f crawl.Frontier, path string)
}

// DefaultFuzzSeeds is the number of seeds Fuzz runs when neither
// FuzzOptions.Seeds nor $FRONTIERTEST_SEEDS says otherwise.
const DefaultFuzzSeeds = 40

// Seeds returns the seeds of a randomized test as Fuzz chooses them, so
// that a randomized test of your own answers to the same variables: the
// one of $FRONTIERTEST_SEED, when set; else $FRONTIERTEST_SEEDS of them,
// or n when that is not set (DefaultFuzzSeeds if n <= 0), from
// $FRONTIERTEST_FIRST_SEED, or 1. A variable that is not a number fails t.
func Seeds(t testing.TB, n int) []uint64 {
	t.Helper()
	return seedList(t, n, true)
}

// seedList is Seeds; $FRONTIERTEST_SEEDS overrides n only with env.
func seedList(t testing.TB, n int, env bool) []uint64 {
	t.Helper()
	if s := os.Getenv("FRONTIERTEST_SEED"); s != "" {
		seed, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("$FRONTIERTEST_SEED=%q: %v", s, err)
		}
		return []uint64{seed}
	}
	if s := os.Getenv("FRONTIERTEST_SEEDS"); s != "" && env {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 {
			t.Fatalf("$FRONTIERTEST_SEEDS=%q: want a number of seeds, at least 1", s)
		}
		n = v
	}
	if n <= 0 {
		n = DefaultFuzzSeeds
	}
	first := uint64(1)
	if s := os.Getenv("FRONTIERTEST_FIRST_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil || v < 1 {
			t.Fatalf("$FRONTIERTEST_FIRST_SEED=%q: want a seed, at least 1", s)
		}
		first = v
	}
	all := make([]uint64, n)
	for i := range all {
		all[i] = first + uint64(i)
	}
	return all
}

// Timeouts of Fuzz. mustWithin bounds a call that the model says must
// return (a Take when something may be fetched, a Join when nothing is
// left); it is far above what a correct Frontier needs, even on a machine
// loaded by other tests (3 s was once not enough for a Redis frontier's Ack
// beside a browser test and a benchmark). The short waits
// are how long a call that must not return is given: a wrong answer
// within them fails the run, a late one is missed.
const (
	mustWithin = 10 * time.Second
	shortWait  = 8 * time.Millisecond
	slack      = 3 * time.Millisecond
)

// Fuzz checks a Frontier against a reference model of the crawl.Frontier
// contract with random sequences of operations: for each seed it opens a
// Frontier with open (path, in a t.TempDir, names its state for a durable
// one; others may ignore it), starts it under a random Policy, applies a
// random list of Push, Take, Ack (with Links, Unsent, Refused and a
// Result), Retry, Extend, Pause, Join and Counts, some of them on several
// goroutines at once and some with a context that is done before the
// call or a few hundred microseconds into it, and checks each answer and,
// after each step, Counts against the model. It then takes and acks what
// is left until Join returns, and closes the Frontier. A failing run is shrunk to
// a shorter list of operations that still fails, and reported with its
// seed, so that FRONTIERTEST_SEED=seed runs it again. See the package
// documentation for what the model checks and what it cannot.
//
// Each run is a subtest named "seed=N" (shrinking runs its seed again);
// runs are made one at a time. open is called once per run, with the
// subtest's t, and again on the same path after each Close of a durable
// run; its cleanup must tolerate a Frontier closed already, as for Run.
func Fuzz(t *testing.T, open func(t *testing.T, path string) crawl.Frontier, opts *FuzzOptions) {
	t.Helper()
	var o FuzzOptions
	if opts != nil {
		o = *opts
	}
	if o.Ops <= 0 {
		o.Ops = 60
	}
	// FuzzOptions.Seeds, when set, is not overridden.
	seeds := seedList(t, o.Seeds, o.Seeds <= 0)
	var others []string // the first lines of the failures of later seeds
	reported := false
	for _, seed := range seeds {
		cfg, ops := generate(seed, o)
		failure, class := runOnce(t, open, o, cfg, ops)
		if failure == "" {
			continue
		}
		if reported {
			// Later failing seeds are listed, not shrunk, and a
			// few at most: a failure can cost a timeout.
			others = append(others, fmt.Sprintf("seed %d: %s", seed, strings.SplitN(failure, "\n", 2)[0]))
			if len(others) == 5 {
				break
			}
			continue
		}
		reported = true
		short, shortFailure := shrink(t, open, o, cfg, ops, failure, class)
		t.Errorf("Fuzz seed %d failed (FRONTIERTEST_SEED=%d reruns it):\n%s\npolicy %s\n"+
			"a shortest failing list of operations (%d of %d):\n%s\nits failure: %s",
			seed, seed, failure, cfg, len(short), len(ops), opList(short), shortFailure)
	}
	if len(others) > 0 {
		t.Errorf("Fuzz: later seeds failed too (the first %d):\n%s", len(others), strings.Join(others, "\n"))
	}
}

// firstFailingSeed runs seeds 1 to n in turn and returns the first that
// fails with its failure, not shrunk; ok is false if none failed.
func firstFailingSeed(t *testing.T, open func(t *testing.T, path string) crawl.Frontier, o FuzzOptions, n int) (seed uint64, failure string, ok bool) {
	if o.Ops <= 0 {
		o.Ops = 60
	}
	for seed := uint64(1); seed <= uint64(n); seed++ {
		cfg, ops := generate(seed, o)
		if failure, _ := runOnce(t, open, o, cfg, ops); failure != "" {
			return seed, failure, true
		}
	}
	return 0, "", false
}

// fuzzConfig is a run's Policy and URLs.
type fuzzConfig struct {
	seed   uint64
	policy crawl.Policy
	hosts  []string
	paths  int
	// push and links are the most Requests a Push draws and the most
	// Links an Ack does.
	push, links int
}

func (c fuzzConfig) String() string {
	return fmt.Sprintf("%s on %d hosts of %d paths, Pushes of up to %d Requests, Acks of up to %d Links",
		policyString(c.policy), len(c.hosts), c.paths, c.push, c.links)
}

// wideEvery says which seeds draw their URLs from a wide space: those it
// divides. The others draw from at most 3 hosts of 11 paths, 33 URLs, and
// admit some 20 to 30 in a run: too few for a defect that shows only once
// a Frontier holds more (a table that loses entries as it grows). A wide
// seed draws from 5 to 8 hosts of 30 to 60 paths (150 to 480 URLs), with
// Pushes and Acks that carry more, and its run admits some 40 to 110
// distinct URLs (seeds 8 to 200: 38 to 110, most over 70). A wide seed
// takes up to twice as long as another: one in eight added 0 to 7% to the
// time of Fuzz on MemoryFrontier, boltfrontier and redisfrontier (one
// server, sharded, a Cluster), 16% on the reference Frontier.
const wideEvery = 8

// wideHosts are the hosts of a wide seed's URLs.
var wideHosts = []string{hostA, hostB, hostC, hostD, "http://e.example:8080", "https://f.example", "https://www.g.example", "http://h.example"}

// opKind is what an operation does.
type opKind uint8

const (
	opPush opKind = iota
	opTake
	opAck
	opRetry
	opEdit
	opExtend
	opPause
	opJoin
	opCounts
	opStale // an Ack, Retry or Extend of a lease already ended
	opParallel
	opReopen
	opSleep  // wait for the leases held to pass their term
	opNewRun // give back the leases held, Start under another Policy
	opSave
	opRollback
	opCrash
)

// cut is how an operation's context ends.
type cut uint8

const (
	cutNone   cut = iota
	cutBefore     // done before the call
	cutDuring     // done a few hundred microseconds into the call
)

// fuzzOp is one operation of a run, drawn from the seed. A lease is named
// by an index into the leases held at the time (modulo their number), so
// that a list with operations removed still runs.
type fuzzOp struct {
	kind   opKind
	cut    cut
	lease  int
	reqs   []crawl.Request // Push's Requests, Ack's Links
	unsent bool
	result bool
	refuse bool
	after  time.Duration // Retry's and Pause's time from now; 0: at once
	host   string
	rules  *crawl.HostRules
	next   bool          // Ack: AckTake, if the Frontier is an AckTaker
	during time.Duration // for cutDuring
	sub    []fuzzOp      // opParallel's operations
	policy crawl.Policy  // opNewRun's
}

func (o fuzzOp) String() string {
	c := map[cut]string{cutNone: "", cutBefore: " ctx done before", cutDuring: fmt.Sprintf(" ctx done after %v", o.during)}[o.cut]
	switch o.kind {
	case opPush:
		return fmt.Sprintf("Push(%s)%s", reqList(o.reqs), c)
	case opTake:
		return "Take" + c
	case opAck:
		s := fmt.Sprintf("Ack(held[%d]", o.lease)
		if o.next {
			s = fmt.Sprintf("AckTake(held[%d]", o.lease)
		}
		if len(o.reqs) > 0 {
			s += ", Links " + reqList(o.reqs)
		}
		if o.unsent {
			s += ", Unsent"
		}
		if o.result {
			s += ", Result"
		}
		if o.refuse {
			s += ", Refused"
		}
		return s + ", robots.txt Rules " + rulesString(o.rules) + ")" + c
	case opRetry:
		return fmt.Sprintf("Retry(held[%d], now+%v)%s", o.lease, o.after, c)
	case opEdit:
		return fmt.Sprintf("held[%d].Tries++, .First = now (no call)", o.lease)
	case opExtend:
		return fmt.Sprintf("Extend(held[%d])%s", o.lease, c)
	case opPause:
		return fmt.Sprintf("Pause(%s, now+%v)%s", o.host, o.after, c)
	case opJoin:
		return "Join" + c
	case opCounts:
		return "Counts" + c
	case opStale:
		return fmt.Sprintf("Ack, Retry or Extend (%d mod 3) of ended[%d], Links %s", o.lease%3, o.lease, reqList(o.reqs))
	case opParallel:
		s := make([]string, len(o.sub))
		for i, sub := range o.sub {
			s[i] = sub.String()
		}
		return "at once: " + strings.Join(s, " | ")
	case opReopen:
		return "Close, open anew, Start"
	case opSleep:
		return "every lease held: Tries++, .First = now; sleep for Policy.LeaseTerm: they may be taken back"
	case opNewRun:
		return "Retry(every lease held, at once), Start(" + policyString(o.policy) + ")"
	case opCrash:
		return "crash (no Close), open anew, Start"
	case opSave:
		return "Close, save the state, open anew, Start"
	case opRollback:
		return "Close, roll the state back to the last save, open anew, Start"
	}
	return "?"
}

// reqList describes Requests in an op list: their URLs.
func reqList(reqs []crawl.Request) string {
	s := make([]string, len(reqs))
	for i, r := range reqs {
		s[i] = r.URL
		if r.Wire != "" {
			s[i] += " (wire " + r.Wire + ")"
		}
	}
	return "[" + strings.Join(s, ", ") + "]"
}

// opList lists ops, one a line, numbered.
func opList(ops []fuzzOp) string {
	var b strings.Builder
	for i, o := range ops {
		fmt.Fprintf(&b, "  %2d. %s\n", i+1, o)
	}
	return b.String()
}

// generate draws a run's Policy and operations from seed.
func generate(seed uint64, o FuzzOptions) (fuzzConfig, []fuzzOp) {
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	all := []string{hostA, hostB, hostC, hostD}
	cfg := fuzzConfig{seed: seed, hosts: all[:1+rng.IntN(3)], paths: 4 + rng.IntN(8), push: 3, links: 3}
	if seed%wideEvery == 0 {
		// Drawn after the narrow space: the other seeds' draws stay
		// what they were.
		cfg.hosts, cfg.paths = wideHosts[:5+rng.IntN(4)], 30+rng.IntN(31)
		cfg.push, cfg.links = 12, 8
	}
	cfg.policy = drawPolicy(rng, cfg.hosts)
	g := &gen{rng: rng, cfg: cfg}
	ops := make([]fuzzOp, 0, o.Ops)
	for range o.Ops {
		ops = append(ops, g.op(o.Durable, true))
	}
	return cfg, ops
}

// drawPolicy draws a Policy.
func drawPolicy(rng *rand.Rand, hosts []string) crawl.Policy {
	var p crawl.Policy
	p.HostWorkers = 1 + rng.IntN(3)
	if rng.IntN(5) == 0 {
		p.HostDelay = time.Duration(1+rng.IntN(4)) * time.Millisecond
	}
	p.Robots = rng.IntN(2) == 0
	if rng.IntN(5) < 2 {
		p.MaxPages = 1 + rng.IntN(8)
	}
	if rng.IntN(10) < 3 {
		p.LeaseTerm = time.Duration(20+rng.IntN(60)) * time.Millisecond
	}
	p.Roots = []string{hosts[0] + "/"}
	p.Scope = "host"
	return p
}

// policyString describes a Policy in failure messages.
func policyString(p crawl.Policy) string {
	return fmt.Sprintf("{HostWorkers: %d, HostDelay: %v, Robots: %v, MaxPages: %d, LeaseTerm: %v}",
		p.HostWorkers, p.HostDelay, p.Robots, p.MaxPages, p.LeaseTerm)
}

// gen draws operations.
type gen struct {
	rng *rand.Rand
	cfg fuzzConfig
}

// req draws a Request of the run's URLs, every field set.
func (g *gen) req() crawl.Request {
	host := g.cfg.hosts[g.rng.IntN(len(g.cfg.hosts))]
	u := fmt.Sprintf("%s/p%d", host, g.rng.IntN(g.cfg.paths))
	kinds := []crawl.RequestKind{crawl.PageRequest, crawl.PageRequest, crawl.SitemapRequest, crawl.ResourceRequest, crawl.CheckRequest}
	r := crawl.Request{
		URL:       u,
		Kind:      kinds[g.rng.IntN(len(kinds))],
		Depth:     g.rng.IntN(4),
		Redirects: g.rng.IntN(11),
		CrossHost: g.rng.IntN(4) == 0,
		Referrer:  host + "/",
	}
	if g.rng.IntN(3) == 0 {
		r.Wire = strings.Replace(u, "/p", "/%7Ep", 1)
	}
	if g.rng.IntN(5) == 0 {
		r.Tries = 1 + g.rng.IntN(2)
		r.First = time.Unix(1_700_000_000+int64(g.rng.IntN(1000)), 0).UTC()
	}
	return r
}

// reqs draws up to n Requests.
func (g *gen) reqs(n int) []crawl.Request {
	k := g.rng.IntN(n + 1)
	rs := make([]crawl.Request, k)
	for i := range rs {
		rs[i] = g.req()
	}
	return rs
}

func (g *gen) op(durable, top bool) fuzzOp {
	o := fuzzOp{lease: g.rng.IntN(8)}
	if durable && top && g.rng.IntN(25) == 0 {
		o.kind = []opKind{opReopen, opSave, opRollback, opCrash}[g.rng.IntN(4)]
		return o
	}
	x := g.rng.IntN(100)
	switch {
	case x < 16:
		o.kind, o.reqs = opPush, g.reqs(g.cfg.push)
		if len(o.reqs) == 0 {
			o.reqs = []crawl.Request{g.req()}
		}
	case x < 38:
		o.kind = opTake
	case x < 58:
		o.kind, o.reqs = opAck, g.reqs(g.cfg.links)
		o.unsent = g.rng.IntN(4) == 0
		o.result = g.rng.IntN(2) == 0
		o.refuse = g.rng.IntN(4) == 0
		// Drawn from x, not the generator: the sequences stay those
		// of the seeds before AckTake was checked.
		o.next = x%2 == 0
		if g.rng.IntN(3) > 0 {
			o.rules = &crawl.HostRules{Robots: []byte("User-agent: *\nDisallow: /x" + strconv.Itoa(g.rng.IntN(9)) + "\n")}
			if g.rng.IntN(4) == 0 {
				o.rules.Delay = time.Duration(1+g.rng.IntN(3)) * time.Millisecond
			}
			if g.rng.IntN(6) == 0 {
				o.rules.Denied = "robots.txt answered 503"
			}
		}
	case x < 68:
		o.kind = opRetry
		if g.rng.IntN(2) == 0 {
			o.after = time.Duration(1+g.rng.IntN(20)) * time.Millisecond
		}
	case x < 72:
		o.kind = opEdit
	case x < 74 && g.cfg.policy.LeaseTerm > 0:
		o.kind = opSleep
		return o
	case x < 76:
		o.kind = opExtend
	case x < 78:
		o.kind = opPause
		o.host = g.cfg.hosts[g.rng.IntN(len(g.cfg.hosts))]
		o.after = time.Duration(1+g.rng.IntN(15)) * time.Millisecond
	case x < 83:
		o.kind = opJoin
	case x < 87:
		o.kind = opCounts
	case x < 91:
		o.kind, o.reqs = opStale, g.reqs(2)
	case x < 98 && top:
		o.kind = opParallel
		n := 2 + g.rng.IntN(3)
		for len(o.sub) < n {
			s := g.op(false, false)
			switch s.kind {
			case opPush, opTake, opAck, opRetry, opExtend, opPause:
				s.cut = cutNone
				o.sub = append(o.sub, s)
			}
		}
		return o
	case x < 99 && top:
		o.kind = opNewRun
		o.policy = drawPolicy(g.rng, g.cfg.hosts)
		return o
	default:
		o.kind = opTake
	}
	switch g.rng.IntN(6) {
	case 0:
		o.cut = cutBefore
	case 1:
		o.cut = cutDuring
		o.during = time.Duration(g.rng.IntN(500)) * time.Microsecond
	}
	return o
}

// shrink looks for a shorter list of operations that still fails, by
// removing chunks of ops, and returns it with its failure: one of the
// same check (class). It gives up after a minute or 200 runs.
func shrink(t *testing.T, open func(t *testing.T, path string) crawl.Frontier, o FuzzOptions, cfg fuzzConfig, ops []fuzzOp, failure, class string) ([]fuzzOp, string) {
	deadline := time.Now().Add(time.Minute)
	runs := 0
	for chunk := len(ops) / 2; chunk >= 1; {
		removed := false
		for i := 0; i+chunk <= len(ops) && time.Now().Before(deadline) && runs < 200; {
			cand := slices.Concat(ops[:i], ops[i+chunk:])
			runs++
			if f, c := runOnce(t, open, o, cfg, cand); f != "" && c == class {
				ops, failure, removed = cand, f, true
				continue
			}
			i += chunk
		}
		if !time.Now().Before(deadline) || runs >= 200 {
			break
		}
		if !removed {
			chunk /= 2
		}
	}
	return ops, failure
}

// runOnce runs ops on a Frontier of its own, in a subtest so that it has a
// t of its own for open, and returns the first failure, or "".
func runOnce(t *testing.T, open func(t *testing.T, path string) crawl.Frontier, o FuzzOptions, cfg fuzzConfig, ops []fuzzOp) (failure, class string) {
	t.Run(fmt.Sprintf("seed=%d", cfg.seed), func(t *testing.T) {
		r := &runner{t: t, open: open, opts: o, cfg: cfg, path: filepath.Join(t.TempDir(), "frontier")}
		r.m = newModel(cfg.policy)
		failure, class = r.run(ops)
		if failure != "" {
			// Logged, not failed: the caller reports the shrunk list.
			t.Logf("%s", failure)
		}
	})
	return failure, class
}

// failed is how a runner stops a run: a panic with it, recovered in run.
// Its class is the format of the message, which names the check that
// failed: shrinking keeps only lists that fail the same check.
type failed struct{ msg, class string }

// runner applies a run's ops to a Frontier and its model.
type runner struct {
	t    *testing.T
	open func(t *testing.T, path string) crawl.Frontier
	opts FuzzOptions
	cfg  fuzzConfig
	path string
	f    crawl.Frontier
	m    *model
	step int
	op   fuzzOp
	ids  map[string]bool // every lease ID handed out in the run
	// saved is the model at the last Save.
	saved *model
	// crash makes reopen call FuzzOptions.Crash instead of Close.
	crash bool
	// sameStep holds, while the answers of calls made at once are
	// checked, the URLs their Takes handed out.
	sameStep map[string]bool
}

// fail ends the run with a failure at the current step.
func (r *runner) fail(format string, args ...any) {
	panic(failed{fmt.Sprintf("step %d (%s): ", r.step, r.op) + fmt.Sprintf(format, args...), format})
}

func (r *runner) run(ops []fuzzOp) (failure, class string) {
	defer func() {
		if v := recover(); v != nil {
			f, ok := v.(failed)
			if !ok {
				panic(v)
			}
			failure, class = f.msg, f.class
			if r.f != nil {
				go r.f.Close() // unblocks what a broken Frontier holds
			}
		}
	}()
	r.ids = map[string]bool{}
	r.f = r.openFrontier()
	r.start()
	for i, op := range ops {
		r.step, r.op = i+1, op
		r.apply(op)
		r.checkCounts()
	}
	r.step, r.op = len(ops)+1, fuzzOp{kind: opJoin}
	r.drain()
	r.closeAndCheck()
	return "", ""
}

// openFrontier calls open.
func (r *runner) openFrontier() crawl.Frontier {
	f := r.open(r.t, r.path)
	if f == nil {
		r.fail("open returned a nil Frontier")
	}
	return f
}

// start starts r.f, failing on an error.
func (r *runner) start() {
	err := r.bounded("Start", func(ctx context.Context) error { return r.f.Start(ctx, r.m.p) })
	if err != nil {
		r.fail("Start(%s): got error %v, want nil", policyString(r.m.p), err)
	}
	r.m.started()
}

// bounded runs fn with a context that ends after mustWithin, and fails the
// run if fn does not return within mustWithin plus grace.
func (r *runner) bounded(what string, fn func(ctx context.Context) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), mustWithin)
	defer cancel()
	return r.within(what, mustWithin+grace, func() error { return fn(ctx) })
}

// within runs fn, failing the run if it has not returned after d.
func (r *runner) within(what string, d time.Duration, fn func() error) error {
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		r.fail("%s still blocked after %v, want it to return promptly", what, d)
		return nil
	}
}

// ctxFor returns the context of an operation with the given cut.
func ctxFor(c cut, during time.Duration, d time.Duration) (context.Context, context.CancelFunc) {
	switch c {
	case cutBefore:
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		return ctx, cancel
	case cutDuring:
		return context.WithTimeout(context.Background(), during)
	}
	return context.WithTimeout(context.Background(), d)
}

// isCtxErr reports whether err is a context's error.
func isCtxErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// lease returns the held lease an op names, or nil when none is held.
func (r *runner) lease(i int) *mLease {
	if len(r.m.held) == 0 {
		return nil
	}
	return r.m.held[i%len(r.m.held)]
}

func (r *runner) apply(op fuzzOp) {
	switch op.kind {
	case opPush:
		r.push(op)
	case opTake:
		r.take(op)
	case opAck:
		if l := r.lease(op.lease); l != nil {
			r.ack(op, l)
		}
	case opRetry:
		if l := r.lease(op.lease); l != nil {
			r.retry(op, l)
		}
	case opEdit:
		if l := r.lease(op.lease); l != nil {
			l.l.Tries++
			l.l.First = time.Now()
		}
	case opExtend:
		if l := r.lease(op.lease); l != nil {
			r.extend(op, l)
		}
	case opPause:
		r.pause(op)
	case opJoin:
		r.join(op)
	case opCounts:
		ctx, cancel := ctxFor(op.cut, op.during, mustWithin)
		defer cancel()
		var c crawl.Counts
		err := r.within("Counts", mustWithin+grace, func() (err error) { c, err = r.f.Counts(ctx); return err })
		switch {
		case err == nil:
			r.compareCounts(c)
		case op.cut != cutNone && isCtxErr(err):
		default:
			r.fail("Counts: got error %v, want nil", err)
		}
	case opStale:
		r.stale(op)
	case opParallel:
		r.parallel(op)
	case opReopen:
		r.reopen(r.opts.Restart)
	case opCrash:
		if r.opts.Crash == nil {
			r.reopen(r.opts.Restart)
			break
		}
		r.crash = true
		r.reopen(nil)
		r.crash = false
	case opSave:
		if r.opts.Save == nil || r.opts.Rollback == nil {
			r.reopen(r.opts.Restart)
			break
		}
		r.reopen(r.opts.Save)
		r.saved = r.m.clone()
	case opRollback:
		if r.saved == nil {
			r.reopen(r.opts.Restart)
			break
		}
		now := r.m
		r.reopen(r.opts.Rollback)
		// The state as saved; every lease ended since, and every
		// one held at the Close, ended for the Frontier too.
		m := r.saved.clone()
		m.p = now.p
		m.ended = append(m.ended, now.ended...)
		if n := len(m.ended); n > 16 {
			m.ended = m.ended[n-16:]
		}
		r.m = m
		m.started()
	case opSleep:
		for _, l := range r.m.held { // as a holder counts a try it has not made yet
			l.l.Tries++
			l.l.First = time.Now()
		}
		time.Sleep(r.m.p.LeaseTerm + slack)
	case opNewRun:
		// A Run ends, cancelled: it gives back its leases; another
		// starts on the same Frontier under another Policy.
		for len(r.m.held) > 0 {
			r.retry(fuzzOp{kind: opRetry}, r.m.held[0])
		}
		// Policy.Robots may be turned on, not off: a Frontier
		// reused without robots.txt need not forget the rules it has.
		p := op.policy
		p.Robots = p.Robots || r.m.p.Robots
		r.m.p = p
		r.start()
		r.m.pagesLo = 0 // a Frontier may count the budget per Run or over the crawl
	}
}
