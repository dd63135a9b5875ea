package redisfrontier

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asyncrawl/crawl"
	"github.com/redis/go-redis/v9"
)

// Options configure a Frontier. The zero value (or nil) is the default.
type Options struct {
	// Name is the crawl's name: its keys are all under "crawl:{Name}:",
	// one hash tag, or, in a crawl of several Shards, under that tag and
	// one tag of each shard, "crawl:{Name:N}:". Empty: Start derives it
	// from Policy.Roots and Policy.Scope (a short hash), so that the same
	// command run on N machines shares one crawl. It may not hold '{',
	// '}', ':' or a control character (see CheckName): Open, OpenCluster
	// and Start refuse it.
	Name string
	// Shards is the number of parts a crawl's hosts are spread over, each
	// under a hash tag of its own, so that a Redis Cluster spreads the
	// crawl over its masters; a host's part is a hash of its host key,
	// modulo Shards. It is fixed when the crawl is made: later Starts
	// use the crawl's, whatever theirs. 0 or 1 keeps the whole crawl
	// under one hash tag (on one master of a cluster); OpenCluster makes
	// 0 mean DefaultShards. At most 4096: more is taken as 4096, less
	// than 0 as 1. See docs/cluster.md for what a crawl of
	// several shards does differently (its page budget is handed to the
	// shards in parts, and it has no seen cache).
	Shards int
	// WaitReplicas, if not 0, makes every script call of the crawl (its URLs,
	// leases, counters: every change of the crawl's state) wait until that
	// many replicas of its master have it (Redis's WAIT, one after each batch
	// of calls sent to a master, on its connection), so that a replica
	// promoted after its master died has every write a call returned for: a
	// failover then loses nothing of the crawl. The keys' expiry once the
	// crawl is done and the record of the processes on it (see Inspect) are
	// not waited for: a failover may lose them, and they are set again by the
	// next process that finds the crawl done, or by the process's next word (a
	// third of its lease term). A write that fewer replicas acknowledge within
	// WaitTimeout is made again (it is safe to run twice), so the crawl waits
	// while a master has fewer replicas up. 0, the default, does not wait:
	// Redis replicates asynchronously, and a failover may lose the writes of
	// the master's last moment (see docs/cluster.md).
	WaitReplicas int
	// WaitTimeout bounds each wait for the replicas (WaitReplicas);
	// 0 means 1 second.
	WaitTimeout time.Duration
	// Owner names this Frontier among the crawl's processes: its leases
	// are its own, and another owner's Ack, Retry or Extend of them is
	// refused. Empty: the host name, the process ID and a random number,
	// so that every Frontier is an owner of its own. A process restarted
	// with the Owner it had takes back, at Start, the leases it held.
	Owner string
	// SeenBuckets is the number of sets the seen set is spread over, a power
	// of two (another is rounded up to one), on each shard of a crawl of
	// several (Shards × SeenBuckets in all); it is fixed when the crawl starts
	// (later Starts use the crawl's). Each set stays compact (8 bytes a URL)
	// while it has at most the server's set-max-intset-entries (512 by
	// default) members, and turns into a hashtable (about 50 bytes a URL) past
	// that; so the default, 16384, suits crawls of up to about 6 million URLs
	// (10.8 bytes a URL measured at a million; 9.4 with 4096 buckets, which
	// hold 1.5 million); on a crawl of Shards shards, Shards times as many.
	// Give about URLs/400 (over Shards) for more. A small crawl of many shards
	// pays Redis's cost of a key for most of its URLs, its sets having a
	// member or two each (2,000 URLs of 50 hosts on 8 shards made 1,985 sets).
	// 0 means 16384.
	SeenBuckets int
	// MaxTake is the most leases one Take asks the server for at once:
	// as many as this process has Takes waiting, up to MaxTake, each
	// handed out at once to a waiting Take. 0 means 16.
	MaxTake int
	// SeenCache is the number of URL fingerprints this process keeps of
	// the crawl's seen set (8 bytes each, rounded up to a power of two):
	// the links it sent to the server, which are seen from then on, so
	// that an Ack drops the links it knows without sending them. 0 means
	// 1<<20 (8 MiB); a negative number turns the cache off. The table
	// starts at 16,384 fingerprints (128 KiB) and doubles each time an
	// eighth of it is filled, up to this size. The cache is
	// tied to the server's run: after a restart of redis-server (which
	// may have lost its last writes) it starts afresh. A crawl of several
	// Shards has none: each link is asked of its shard's seen set.
	SeenCache int
	// TTL is how long the crawl's keys stay in Redis once it is done:
	// when a Join finds nothing queued, leased or waiting to be retried
	// in the whole crawl, or its page budget (Policy.MaxPages) spent
	// with nothing left but the new Requests the budget holds back, it
	// records when (Status.Finished) and sets every key of the crawl to
	// expire TTL later. The first process to find the crawl done
	// decides: a process that later finds it done as it was (nothing
	// acked since) changes neither the time nor the deadline, so
	// joining a finished crawl never keeps it longer. A crawl that has
	// work again keeps its keys (PERSIST) while it runs: at a Start
	// whose larger MaxPages no longer holds its new Requests back, and
	// at a Push that admits a Request after this process found the
	// crawl done or stopped (at its Start or its Join; a program's
	// crawl.Crawl.Add); and at the Join of any process that finds work
	// left for it under its own MaxPages (it asks at least once a second
	// while it waits): so a process under a larger MaxPages than the one
	// that stopped the crawl keeps its keys, and takes the hosts that
	// budget held back. Done anew, its keys expire TTL after then, or,
	// if nothing was acked since, at the first deadline. A Push by a
	// process that found neither (started before the crawl was done,
	// and not joining it), with no process joining the crawl, leaves the
	// first deadline: a crawl fed that way for longer than TTL needs a
	// negative TTL.
	// 0 means DefaultTTL (7 days); a negative TTL keeps the keys (but
	// for a process's records of its replies, ops:<owner>, which go at
	// its Close, or a week after its Start if it dies). A TTL under
	// MinTTL is taken as MinTTL.
	TTL time.Duration
}

// DefaultTTL is how long a finished crawl's keys stay in Redis when
// Options.TTL is 0.
const DefaultTTL = 7 * 24 * time.Hour

// MinTTL is the shortest Options.TTL: the crawl's processes read its keys
// (its counters, for their report) for a while after they find it done,
// and a crawl whose keys expired under them is one that was deleted.
const MinTTL = time.Second

var _ crawl.StatsStore = (*Frontier)(nil)

// Frontier is a crawl.Frontier kept in Redis, shared by every process that
// opens it with the same crawl name. It is safe for concurrent use, from
// many goroutines and many processes.
type Frontier struct {
	rdb       redis.UniversalClient
	ownClient bool
	opts      Options
	owner     string
	seen      *seenCache // nil: off

	mu       sync.Mutex // guards what follows, to the blank line
	name     string
	prefix   string
	keys     []string
	shards   int      // the crawl's, once started: 1 for one hash tag
	sprefix  []string // each shard's key prefix, if shards > 1
	started  bool
	policy   crawl.Policy
	bits     uint
	wasDone  time.Time // when the crawl was found done, if it was at Start
	rules    map[string]cachedRules
	closed   bool
	closing  bool // a Close is under way
	closedCh chan struct{}
	ev       chan struct{} // closed and replaced when something changes
	jev      chan struct{} // likewise when the crawl may be over
	pubsub   *redis.PubSub
	subDone  chan struct{}
	// The presence (see present): stopped by Close.
	presStop context.CancelFunc
	presDone chan struct{}

	// The Frontier's own goroutines (bgGo), which Close ends and waits
	// for: life is the ctx of their calls, ended by Close; bgN counts
	// them, and bgIdle, if not nil, is closed when bgN drops to 0.
	life    context.Context
	endLife context.CancelFunc
	bgmu    sync.Mutex
	bgN     int
	bgIdle  chan struct{}

	amu      sync.Mutex // guards the Acks waiting, to the blank line
	acks     []*pendingAck
	flushers int // goroutines sending them
	// The leases ahead held (see ahead.go), by the ID of the lease they
	// follow.
	ahead map[string]*chain
	// starved is set when the last call that leased for the Takes
	// waiting had fewer leases than they: then the process asks for
	// leases ahead.
	starved atomic.Bool
	// term is Policy.LeaseTerm, read where f.mu may not be taken.
	term atomic.Int64
	// mute holds the nodes (their addresses; "" for the one server of a
	// Frontier not on a cluster) whose last call had no reply, and when
	// (see noteReach): while one does (see muteMemory), or while a node
	// keeps a call waiting (see answering), a Close or an Ack whose
	// caller's ctx has ended gives up at once rather than give the
	// server a grace it will not answer within. By node: in a cluster,
	// the masters that answer say nothing of the one that does not.
	//
	// waits holds, for the calls waiting for the server (each of
	// evalMany's and of cutCall's: every call the Frontier makes), by a
	// number of their own, the last waitN, when they were sent or last
	// had a reply (Unix ns). See answering.
	wmu   sync.Mutex
	mute  map[string]time.Time
	waits map[uint64]int64
	waitN uint64
	// expiring is set while the crawl's keys are, as far as this
	// process knows, set to expire (see Options.TTL): a Push that
	// admits a Request then keeps them (revive).
	expiring atomic.Bool

	opMu     sync.Mutex
	opSeq    uint64
	inflight map[uint64]struct{}

	smu     sync.Mutex // guards what follows, to the blank line
	due     []int64    // per shard, when a Take may find work (µs; 0 now)
	hot     []bool     // per shard, whether it is known to have work now
	cursor  int        // the shard the next Take asks first
	probed  time.Time  // when every shard was last asked
	balAt   time.Time  // when the budget was last balanced by a Take
	balTurn uint64     // balances made, whose turn it is to be served first

	tmu      sync.Mutex // guards the takers
	leaders  int        // Takes asking the server
	reserved int        // waiters the leaders asked leases for
	waiters  []taker    // Takes waiting for a leader to serve them

	// idle is idlePoll, or a test's own.
	idle time.Duration

	// afterTakeScript, when not nil, is called by takeN between the take
	// script's reply and the reading of the hosts' rules: a test's hook,
	// set while no Take is under way.
	afterTakeScript func()
	// afterForward, when not nil, is called by flushShards between the
	// links sent to their shards and the acks: a test's hook, set before
	// any Ack.
	afterForward func()
	// beforeServe, when not nil, is called by flushAcks between an Acks'
	// call that leased and the handing out of its leases: a test's hook,
	// set before any Ack.
	beforeServe func()
	// beforePersistAll, when not nil, is called by revive between
	// reviveScript and the keeping of the keys: a test's hook.
	beforePersistAll func()
}

// cachedRules are a host's rules as the server last gave them.
type cachedRules struct {
	version string
	rules   *crawl.HostRules
}

// taker is a Take waiting for the leading Take to serve it a lease, or to
// hand it the lead (nil): one of the two, sent once it is out of the
// waiters. Size 1: the leader never waits.
type taker chan *crawl.Lease

// New returns a Frontier on client; Start names the crawl. The caller
// keeps client: Close does not close it. A client of one server made with
// ClientOptions ends its calls at their ctx's deadline, as Open's does. A
// cluster's client (see ClientOptions) holds a call to a master that
// hangs up to its ReadTimeout whatever the call's ctx: the Frontier's
// methods return when their ctx ends all the same, the call left to a
// goroutine of the Frontier's. Another client of one server holds the
// call, and the method with it, so that Close, and a Run's end, may keep
// to their bounds only within that much (a Frontier that has seen a call
// wait 2 s with no reply gives the server no grace, as with one that
// cannot be reached: see Close). The Frontier's goroutines waiting on
// such a call end with it, after Close when the server hangs (see Close).
func New(client redis.UniversalClient, opts *Options) *Frontier {
	f := &Frontier{
		rdb:      client,
		closedCh: make(chan struct{}),
		ev:       make(chan struct{}),
		jev:      make(chan struct{}),
		inflight: map[uint64]struct{}{},
		rules:    map[string]cachedRules{},
		ahead:    map[string]*chain{},
		waits:    map[uint64]int64{},
		mute:     map[string]time.Time{},
		// Call numbers start from the clock, so that an owner restarted
		// under the same name never finds its earlier replies.
		opSeq: uint64(time.Now().UnixMicro()) & (1<<52 - 1),
		idle:  idlePoll,
	}
	f.life, f.endLife = context.WithCancel(context.Background())
	if opts != nil {
		f.opts = *opts
	}
	if f.opts.SeenBuckets <= 0 {
		f.opts.SeenBuckets = 16384
	}
	if f.opts.MaxTake <= 0 {
		f.opts.MaxTake = 16
	}
	if f.opts.TTL == 0 {
		f.opts.TTL = DefaultTTL
	}
	if f.opts.TTL > 0 && f.opts.TTL < MinTTL {
		f.opts.TTL = MinTTL
	}
	f.opts.Shards = min(max(f.opts.Shards, 1), maxShards)
	switch {
	case f.opts.SeenCache == 0:
		f.seen = newSeenCache(1 << 20)
	case f.opts.SeenCache > 0:
		f.seen = newSeenCache(f.opts.SeenCache)
	}
	f.owner = f.opts.Owner
	if f.owner == "" {
		host, _ := os.Hostname()
		var b [4]byte
		rand.Read(b[:])
		f.owner = fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b[:]))
	}
	return f
}

// Open returns a Frontier on the Redis server at redisURL
// ("redis://HOST:PORT/DB", as redis.ParseURL reads it). The Frontier owns
// the client it makes: Close closes it. Open does not contact the server:
// Start does, and waits for it. A node of a Redis Cluster that does not
// serve the crawl's keys (another node does, or none before the cluster
// is formed) fails Start at once, with an error saying to open the
// cluster (OpenCluster).
func Open(ctx context.Context, redisURL string, opts *Options) (*Frontier, error) {
	if err := checkOptName(opts); err != nil {
		return nil, err
	}
	o, err := redis.ParseURL(redisURL)
	if err != nil {
		return nil, fmt.Errorf("redisfrontier: %w", err)
	}
	f := New(redis.NewClient(ClientOptions(o)), opts)
	f.ownClient = true
	return f, nil
}

// OpenCluster returns a Frontier on the Redis Cluster whose nodes include
// addrs ("HOST:PORT" each; any of the cluster's nodes will do: the client
// learns the others from them), with the crawl spread over the cluster's
// masters by host (Options.Shards; 0 means DefaultShards here). The
// Frontier owns the client it makes: Close closes it. Like Open, it does
// not contact the cluster: Start does, and waits for it.
func OpenCluster(ctx context.Context, addrs []string, opts *Options) (*Frontier, error) {
	if err := checkOptName(opts); err != nil {
		return nil, err
	}
	if len(addrs) == 0 {
		return nil, errors.New("redisfrontier: OpenCluster: no address")
	}
	for _, a := range addrs {
		if _, _, err := net.SplitHostPort(a); err != nil {
			return nil, fmt.Errorf("redisfrontier: OpenCluster: address %q: want HOST:PORT", a)
		}
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Shards == 0 {
		o.Shards = DefaultShards
	}
	f := New(redis.NewClusterClient(ClusterOptions(addrs)), &o)
	f.ownClient = true
	return f, nil
}

// ClusterOptions returns the options of the client OpenCluster makes, for
// a program that makes its own (to add hooks, a password, TLS) and gives
// it to New: the slots are read anew every second while in use, where
// go-redis's default is a minute, in which a client dials a master that
// died and was replaced.
func ClusterOptions(addrs []string) *redis.ClusterOptions {
	return &redis.ClusterOptions{Addrs: addrs, ClusterStateReloadInterval: time.Second}
}

// ClientOptions sets in o what Open sets in the options of the client it
// makes, for a program that makes its own client for New:
// ContextTimeoutEnabled, so that a call ends when its ctx's deadline
// passes, even on a server that hangs (stopped, or cut off without a
// reset), rather than after the client's ReadTimeout (3 s by default),
// which ignores ctx: the Frontier's Acks at a Run's end, and its Close,
// then keep to their bounds. It returns o. Not for a Redis Cluster's
// client (ClusterOptions): there, calls cut at their deadline while a
// master fails over hid the failover's errors from the client's hooks
// (the command's outage log), so a master that hangs holds a call up to
// the client's ReadTimeout, which the Frontier leaves to a goroutine of
// its own when the call's ctx ends (see New).
func ClientOptions(o *redis.Options) *redis.Options {
	o.ContextTimeoutEnabled = true
	return o
}

// Name returns the crawl's name, as Options gave it or Start derived it;
// "" before Start.
func (f *Frontier) Name() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.name
}

// Owner returns the name of this Frontier among the crawl's processes.
func (f *Frontier) Owner() string { return f.owner }

// checkOptName checks the crawl's name opts give, if any.
func checkOptName(opts *Options) error {
	if opts == nil || opts.Name == "" {
		return nil
	}
	return CheckName(opts.Name)
}

// crawlName derives a crawl's name from its Roots and Scope.
func crawlName(roots []string, scope string) string {
	h := sha256.New()
	for _, r := range roots {
		h.Write([]byte(r))
		h.Write([]byte{0})
	}
	h.Write([]byte{1})
	h.Write([]byte(scope))
	return hex.EncodeToString(h.Sum(nil)[:6])
}

// Start readies the Frontier for a Run under p: it names the crawl (if
// Options did not), records its Roots and Scope on first use, and refuses
// a crawl of the same name started under other Roots or Scope. It waits
// for the server while it is unreachable (until ctx ends: the error then
// names the server and its last failure). It fails at once on a server
// that can never do: OpenCluster's on a server that is not a Redis
// Cluster, Open's on one node of a cluster. A crawl that was deleted (see
// Reset) is made anew; one that was done stays done, as WasDone then
// reports, and its keys' expiry stays as it was; one stopped by its page
// budget that has work under p (a larger MaxPages) goes on, its keys
// kept until it ends again (see Options.TTL).
func (f *Frontier) Start(ctx context.Context, p crawl.Policy) error {
	if p.HostWorkers < 1 {
		return errors.New("redisfrontier: policy: HostWorkers must be at least 1")
	}
	if err := checkOptName(&f.opts); err != nil {
		return err
	}
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return crawl.ErrFrontierClosed
	}
	if f.name == "" {
		f.name = f.opts.Name
		if f.name == "" {
			f.name = crawlName(p.Roots, p.Scope)
		}
		f.prefix = "crawl:{" + f.name + "}:"
		f.keys = []string{f.prefix + "meta"}
	}
	f.policy = p
	f.term.Store(int64(p.LeaseTerm))
	f.mu.Unlock()

	roots, err := json.Marshal(p.Roots)
	if err != nil {
		return err
	}
	bits := uint(0)
	for 1<<bits < f.opts.SeenBuckets {
		bits++
	}
	shards := max(1, f.opts.Shards)
	var reply string
	for {
		// The control keys first (in a crawl of one shard, its keys).
		reply, err = f.eval(ctx, startScript, false, string(roots), p.Scope, bits, shards)
		if err != nil {
			return err
		}
		n, ok := strings.CutPrefix(reply, "shards:")
		if !ok {
			break
		}
		// The crawl's number of shards, not ours: take it.
		if shards, err = strconv.Atoi(n); err != nil || shards < 1 || shards > maxShards {
			return errCorrupt
		}
	}
	if reply == "reset:" {
		return fmt.Errorf("redisfrontier: crawl %q: a Reset of it was cut short, its keys half deleted: Reset it again", f.name)
	}
	if other, ok := strings.CutPrefix(reply, "other:"); ok {
		r, s, _ := strings.Cut(other, "\t")
		return fmt.Errorf("redisfrontier: crawl %q was started with Roots %s and Scope %q, not Roots %s and Scope %q",
			f.name, r, s, roots, p.Scope)
	}
	state, rest, _ := strings.Cut(reply, ":")
	sb, fin, _ := strings.Cut(rest, ":")
	b, err := strconv.Atoi(sb)
	finAt, ferr := strconv.ParseInt(fin, 10, 64)
	if err != nil || ferr != nil || b < 1 || b > 32 || state != "ok" && state != "new" {
		return errCorrupt
	}
	if state == "new" && f.seen != nil {
		// The crawl was made now: if it had been made and deleted
		// before (Reset), what the cache learned of it is gone.
		f.seen.reset("")
	}
	f.mu.Lock()
	f.bits = uint(b)
	f.shards = shards
	if shards > 1 {
		f.seen = nil // see Options.Shards
		f.sprefix = make([]string, shards)
		for v := range f.sprefix {
			f.sprefix[v] = shardPrefix(f.name, v)
		}
	}
	f.mu.Unlock()
	if shards > 1 {
		if finAt, err = f.startShards(ctx, string(roots), p.Scope, bits, finAt); err != nil {
			return err
		}
	}
	if err := f.reviveIfWork(ctx, p); err != nil {
		return err
	}
	// On the crawl from now on (see present), for Inspect and Reset.
	f.sayPresent(ctx)
	ps, err := f.subscribe(ctx, shards)
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if ps != nil && (f.closed || f.started) {
		defer ps.Close()
	}
	if f.closed {
		return crawl.ErrFrontierClosed
	}
	f.wasDone = time.Time{}
	if finAt > 0 {
		f.wasDone = time.UnixMicro(finAt)
	}
	if !f.started {
		f.started = true
		f.pubsub = ps
		f.subDone = make(chan struct{})
		go f.listen(f.pubsub, f.subDone)
		var pctx context.Context
		pctx, f.presStop = context.WithCancel(context.Background())
		f.presDone = make(chan struct{})
		go f.present(pctx, f.presDone)
	}
	f.notifyLocked()
	return nil
}

// presenceTerm is how long a process is among those on the crawl after
// it last said so (see present): its lease term, or a minute.
func presenceTerm(leaseTerm time.Duration) time.Duration {
	if leaseTerm <= 0 {
		return time.Minute
	}
	return leaseTerm
}

// present keeps the Frontier among the processes on the crawl until ctx
// is done (Close, which then takes it out): it says so every third
// of its presenceTerm, so that Inspect counts it and Reset refuses the
// crawl even while it holds no lease (its workers waiting out a host's
// delay); a process killed drops out once the term has passed. A failed
// call is left to the next: the presence lasts three times as long.
func (f *Frontier) present(ctx context.Context, done chan struct{}) {
	defer close(done)
	for {
		t := time.NewTimer(presenceTerm(time.Duration(f.term.Load())) / 3)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		if errors.Is(f.sayPresent(ctx), redis.ErrClosed) {
			return // the client closed under a Frontier dropped unclosed
		}
	}
}

// sayPresent says once that f is on the crawl, for its presenceTerm. It
// returns when ctx ends (see cutCall): Close, which stops present and
// waits for it, is not held by a master that hangs.
func (f *Frontier) sayPresent(ctx context.Context) error {
	term := presenceTerm(time.Duration(f.term.Load()))
	ctx, cancel := context.WithTimeout(ctx, term/3)
	defer cancel()
	f.mu.Lock()
	meta, live := f.prefix+"meta", f.prefix+"live"
	f.mu.Unlock()
	return f.callOn(ctx, f.nodeOf(ctx, meta), func() error {
		return presenceScript.Run(ctx, f.rdb, []string{meta, live}, "1", f.owner, term.Microseconds()).Err()
	})
}

// subscribe subscribes to the crawl's events (every shard's, in a crawl of
// several) and waits, within ctx, until the server says the subscription
// is active, so that no event published once Start has returned is lost:
// go-redis sends the SUBSCRIBE and returns at once. It returns nil if the
// Frontier is subscribed already. Any other failure than ctx's leaves the
// subscription to go-redis, which retries it: the Takes ask the server
// each idlePoll meanwhile.
func (f *Frontier) subscribe(ctx context.Context, shards int) (*redis.PubSub, error) {
	f.mu.Lock()
	started := f.started
	f.mu.Unlock()
	if started {
		return nil, nil
	}
	var ps *redis.PubSub
	if shards > 1 {
		ps = f.rdb.PSubscribe(context.Background(), shardPattern(f.name))
	} else {
		ps = f.rdb.Subscribe(context.Background(), f.prefix+"ev")
	}
	for {
		m, err := ps.Receive(ctx)
		if err != nil {
			// go-redis reads until ctx's deadline: its timeout may
			// come a moment before ctx says it is done.
			if dl, ok := ctx.Deadline(); ctx.Err() != nil || ok && !time.Now().Before(dl) {
				ps.Close()
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				return nil, context.DeadlineExceeded
			}
			return ps, nil
		}
		if _, ok := m.(*redis.Subscription); ok {
			return ps, nil
		}
	}
}

// listen wakes the waiting Takes and Joins when another process says
// that work came up or the crawl may be over (on which shard, in a
// sharded crawl). A subscription made again (go-redis resubscribes on a
// new connection when it loses one, a server restarted or a replica
// promoted) may have missed events meanwhile: every shard may have work
// then, and the crawl may be over.
func (f *Frontier) listen(ps *redis.PubSub, done chan struct{}) {
	defer close(done)
	for m := range ps.ChannelWithSubscriptions() {
		over := false
		switch m := m.(type) {
		case *redis.Subscription:
			if m.Kind != "subscribe" && m.Kind != "psubscribe" {
				continue
			}
			f.markAllDue()
			over = true
		case *redis.Message:
			if m.Pattern != "" {
				f.markDue(f.shardOfChannel(m.Channel))
			}
			over = m.Payload == "j"
		default:
			continue
		}
		f.mu.Lock()
		f.notifyLocked()
		if over {
			close(f.jev)
			f.jev = make(chan struct{})
		}
		f.mu.Unlock()
	}
}

// joinEvents returns a channel closed when a process next says that the
// crawl may be over (the Ack that found it so, or a Reset).
func (f *Frontier) joinEvents() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.jev
}

// events returns a channel closed at the next change.
func (f *Frontier) events() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ev
}

// notify wakes whoever waits on events.
func (f *Frontier) notify() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.notifyLocked()
}

func (f *Frontier) notifyLocked() {
	close(f.ev)
	f.ev = make(chan struct{})
}

// state returns what every script needs: the key prefix, the keys and the
// policy; or ErrFrontierClosed.
func (f *Frontier) state() (prefix string, keys []string, p crawl.Policy, bits uint, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case f.closed:
		err = crawl.ErrFrontierClosed
	case f.name == "":
		err = errors.New("redisfrontier: Start was not called")
	}
	return f.prefix, f.keys, f.policy, f.bits, err
}

// beginOp numbers a call for replay and returns its number and the lowest
// number in flight.
func (f *Frontier) beginOp() (seq, low uint64) {
	f.opMu.Lock()
	defer f.opMu.Unlock()
	f.opSeq++
	seq = f.opSeq
	f.inflight[seq] = struct{}{}
	low = seq
	for s := range f.inflight {
		low = min(low, s)
	}
	return seq, low
}

func (f *Frontier) endOp(seq uint64) {
	f.opMu.Lock()
	defer f.opMu.Unlock()
	delete(f.inflight, seq)
}

// retryRead runs a read-only call with eval's patience. key is a key it
// reads, which names the node it asks (see nodeOf); "" for a call that
// asks every node.
func (f *Frontier) retryRead(ctx context.Context, key string, call func() error) error {
	node := f.nodeOf(ctx, key)
	backoff := 10 * time.Millisecond
	for {
		if f.isClosed() {
			return crawl.ErrFrontierClosed
		}
		err := f.callOn(ctx, node, call)
		if err == nil || errors.Is(err, redis.Nil) {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if !f.transient(err) {
			return f.fatal(err)
		}
		f.reload()
		if werr := f.await(ctx, nil, backoff); werr != nil {
			if werr == crawl.ErrFrontierClosed {
				return werr
			}
			return fmt.Errorf("redisfrontier: %s did not answer (%v): %w", f.serverName(), err, werr)
		}
		backoff = min(2*backoff, maxBackoff)
	}
}

// await waits until ev is closed (never, if nil) or d has passed; or until
// ctx is done or the Frontier closed, which it returns.
func (f *Frontier) await(ctx context.Context, ev <-chan struct{}, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ev:
		return nil
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-f.closedCh:
		return crawl.ErrFrontierClosed
	}
}

// isClosing reports whether a Close has begun: Take then leases nothing
// more, so that a Take blocked when Close is called ends with
// ErrFrontierClosed rather than with a lease that Close's script gave
// back.
func (f *Frontier) isClosing() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.closing || f.closed
}

func (f *Frontier) isClosed() bool {
	select {
	case <-f.closedCh:
		return true
	default:
		return false
	}
}

// Push admits each Request whose URL the crawl never admitted, in one step
// on the server, and returns how many were new. Into a crawl this
// process found done or stopped, its keys set to expire, a Push that
// admits one keeps them (see Options.TTL); an error doing so is returned
// with the count admitted. In a crawl of several
// shards each shard admits its own, in one step on each; a Push whose ctx
// ends once sent is completed on every shard (waiting up to 5 s for an
// unreachable server) before it returns ctx.Err(), never left made on some.
func (f *Frontier) Push(ctx context.Context, reqs ...crawl.Request) (int, error) {
	n, err := f.push(ctx, reqs)
	if n > 0 && f.expiring.Load() {
		// The crawl was done, its keys set to expire: they stay while
		// it has work again.
		if rerr := f.revive(ctx); err == nil {
			err = rerr
		}
	}
	return n, err
}

// push is Push, but for the keys' expiry.
func (f *Frontier) push(ctx context.Context, reqs []crawl.Request) (int, error) {
	_, _, _, bits, err := f.state()
	if err != nil {
		return 0, err
	}
	if n := f.sharded(); n > 0 {
		return f.pushShards(ctx, reqs, bits, n)
	}
	// Bounded batches keep each script short: a long one blocks the
	// server for everyone.
	total := 0
	for len(reqs) > 0 {
		n := min(len(reqs), maxBatch)
		g := f.sift(reqs[:n], bits)
		r, err := f.evalAdmitting(ctx, pushScript, []*pendingAck{g}, bits, func(args []any) []any {
			return appendAdmissions(args, g.links)
		})
		if err != nil {
			return total, err
		}
		k := r.int()
		if r.err != nil {
			return total, r.err
		}
		total += int(k)
		reqs = reqs[n:]
	}
	if total > 0 {
		f.notify()
	}
	return total, nil
}

// Take leases a Request that may start now, waiting until there is one.
// Of the Takes of one process, one at a time asks the server, for itself
// and for the Takes waiting, up to Options.MaxTake, and hands the leases
// out; the other Takes wait to be served or to lead. The
// Acks' script call (see Ack) leases for the Takes waiting too.
// A Take whose ctx ends once the server has made its lease completes:
// it returns the lease, having read its host's rules (waiting for an
// unreachable server up to 5 s past ctx's end, after which it gives the
// lease back and returns the error), so that no lease is left out with
// no holder. One whose ctx ends before the server's reply gives back
// what its call may have leased before it returns, but while the server
// does not answer (as for Ack): those leases come back when it does, or
// when their term ends.
func (f *Frontier) Take(ctx context.Context) (*crawl.Lease, error) {
	if _, _, _, _, err := f.state(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f.tmu.Lock()
	if f.leaders >= maxInFlight {
		w := make(taker, 1)
		f.waiters = append(f.waiters, w)
		f.tmu.Unlock()
		var l *crawl.Lease
		select {
		case l = <-w:
		case <-ctx.Done():
			if !f.leave(w) {
				return nil, ctx.Err()
			}
			l = <-w // served or made leader while leaving: sent already
		case <-f.closedCh:
			if !f.leave(w) {
				return nil, crawl.ErrFrontierClosed
			}
			l = <-w
		}
		if l != nil {
			return l, nil
		}
	} else {
		f.leaders++
		f.tmu.Unlock()
	}
	return f.lead(ctx)
}

// leave removes w from the waiters; false if it was there (it has nothing),
// true if it was served or made leader meanwhile.
func (f *Frontier) leave(w taker) bool {
	f.tmu.Lock()
	defer f.tmu.Unlock()
	for i, x := range f.waiters {
		if x == w {
			f.waiters = append(f.waiters[:i], f.waiters[i+1:]...)
			return false
		}
	}
	return true
}

// resign hands the lead to the first waiter, if any. f.tmu is held.
func (f *Frontier) resign() {
	if len(f.waiters) == 0 {
		f.leaders--
		return
	}
	w := f.waiters[0]
	f.waiters = f.waiters[1:]
	w <- nil // the lead
}

// idlePoll bounds how long a waiting Take or Join goes without asking the
// server: the other processes' wake-ups may be lost while the server is
// unreachable.
const idlePoll = time.Second

// lead asks the server for leases until it gets one, serving the waiters
// with those left over.
func (f *Frontier) lead(ctx context.Context) (*crawl.Lease, error) {
	for {
		if f.isClosing() {
			f.tmu.Lock()
			f.resign()
			f.tmu.Unlock()
			return nil, crawl.ErrFrontierClosed
		}
		ev := f.events()
		f.tmu.Lock()
		n := min(1+max(0, len(f.waiters)-f.reserved), f.opts.MaxTake)
		f.reserved += n - 1
		f.tmu.Unlock()
		leases, wait, err := f.takeN(ctx, n)
		f.tmu.Lock()
		f.reserved -= n - 1
		f.tmu.Unlock()
		if err == nil && f.sharded() == 0 {
			f.starved.Store(len(leases) < n)
		}
		if err != nil {
			f.tmu.Lock()
			f.resign()
			f.tmu.Unlock()
			if ctx.Err() != nil {
				err = ctx.Err()
			}
			return nil, err
		}
		if len(leases) > 0 && f.isClosing() {
			// Close's script gives back the process's leases, and
			// these may have come after it: give them back too. (If
			// Close has closed the client meanwhile, they expire.)
			f.tmu.Lock()
			f.resign()
			f.tmu.Unlock()
			for _, l := range leases {
				f.release(l)
			}
			return nil, crawl.ErrFrontierClosed
		}
		if len(leases) > 0 {
			var extra []*crawl.Lease
			f.tmu.Lock()
			for _, l := range leases[1:] {
				if len(f.waiters) == 0 {
					extra = append(extra, l)
					continue
				}
				w := f.waiters[0]
				f.waiters = f.waiters[1:]
				w <- l
			}
			f.resign()
			f.tmu.Unlock()
			for _, l := range extra {
				// Its Take gave up meanwhile: back as if never taken.
				f.release(l)
			}
			return leases[0], nil
		}
		d := f.idle
		if wait >= 0 && wait < d {
			d = wait
		}
		f.await(ctx, ev, d)
		if err := ctx.Err(); err != nil || f.isClosing() {
			f.tmu.Lock()
			f.resign()
			f.tmu.Unlock()
			if err == nil {
				err = crawl.ErrFrontierClosed
			}
			return nil, err
		}
	}
}

// takeN runs the take script for up to n leases. It returns them, or, with
// none, how long until something may be taken (-1: nothing is timed).
func (f *Frontier) takeN(ctx context.Context, n int) ([]*crawl.Lease, time.Duration, error) {
	if shards := f.sharded(); shards > 0 {
		return f.takeShards(ctx, n, shards)
	}
	args := takeArgs(n, f.starved.Load())
	seq, low := f.beginOp()
	sent := time.Now()
	reply, err := f.evalAs(ctx, takeScript, seq, low, args...)
	if err != nil {
		if ctx.Err() != nil {
			// The call may have leased on the server after all, its
			// reply lost with ctx: give back what it took before
			// returning, so that the call is as if not made (unless
			// the server does not answer within rulesGrace, or did
			// not answer the call: then the leases go back when it
			// does, or expire).
			f.graceWait(func() { f.undoTake(seq, low, args) })
		} else {
			f.endOp(seq)
		}
		return nil, 0, err
	}
	f.endOp(seq)
	if f.afterTakeScript != nil {
		f.afterTakeScript()
	}
	got, wait, perr := parseTake(reply)
	ids := make([]string, len(got))
	for i, g := range got {
		ids[i] = g.id
	}
	leases, err := f.makeLeases(ctx, got, ids, perr)
	if err != nil {
		return nil, 0, err
	}
	leases = f.keepAhead(got, leases, sent)
	if wait < 0 {
		return leases, -1, nil
	}
	return leases, time.Duration(wait) * time.Microsecond, nil
}

// rulesGrace is how long a Take whose ctx has ended goes on reading the
// rules of the leases its script made, so as to hand them out, before it
// gives them back.
const rulesGrace = 5 * time.Second

// rulesCtx returns the ctx a Take reads its leases' rules with: ctx's
// values, ended rulesGrace after ctx ends (while the server is
// unreachable the read waits for it as long as ctx lasts, like every
// call, then a little longer); and at once when Close ends the
// Frontier's own calls.
func (f *Frontier) rulesCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, func() { time.AfterFunc(rulesGrace, cancel) })
	stopLife := context.AfterFunc(f.life, cancel)
	return rctx, func() {
		stop()
		stopLife()
		cancel()
	}
}

// graceWait runs fn, what a call whose ctx has ended does to leave
// nothing half made, in a goroutine of the Frontier's (see bgGo), and
// waits for it at most rulesGrace, and only while the server answers (see
// answering): its calls wait anyway, and a cluster's client, which ends a
// call cut by ctx only at its read timeout whatever its ctx, returns one
// cut by ctx seconds late, after which a grace would add 5 s to a Run's
// end. What fn has not done when graceWait returns, it goes on with
// until Close ends it.
func (f *Frontier) graceWait(fn func()) {
	done := make(chan struct{})
	f.bgGo(func() {
		defer close(done)
		fn()
	})
	f.waitWhile(done, rulesGrace)
}

// waitWhile waits for done to be closed, at most d, and only while the
// server answers (asked every 50ms).
func (f *Frontier) waitWhile(done <-chan struct{}, d time.Duration) {
	limit := time.NewTimer(d)
	defer limit.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for f.answering() {
		select {
		case <-done:
			return
		case <-limit.C:
			return
		case <-tick.C:
		}
	}
}

// bgGo runs fn in a goroutine of the Frontier's own: work a call leaves to
// finish after it returns (an Ack that goes on past its ctx, leases given
// back). Its calls use f.life, which Close ends; Close then waits for it,
// so that no goroutine of the Frontier outlives Close.
func (f *Frontier) bgGo(fn func()) {
	f.bgmu.Lock()
	if f.bgN == 0 {
		f.bgIdle = make(chan struct{})
	}
	f.bgN++
	f.bgmu.Unlock()
	go func() {
		defer func() {
			f.bgmu.Lock()
			if f.bgN--; f.bgN == 0 {
				close(f.bgIdle)
			}
			f.bgmu.Unlock()
		}()
		fn()
	}()
}

// bgDone returns a channel closed once no goroutine of bgGo's runs.
func (f *Frontier) bgDone() <-chan struct{} {
	f.bgmu.Lock()
	defer f.bgmu.Unlock()
	if f.bgN == 0 {
		c := make(chan struct{})
		close(c)
		return c
	}
	return f.bgIdle
}

// bgCtx returns the ctx of a call made by a goroutine of the Frontier's
// own: ended by Close, and after d.
func (f *Frontier) bgCtx(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(f.life, d)
}

// leaseToken returns a take call's token, which the IDs of the leases it
// makes carry: 64 random bits, so that no two calls share one, even on a
// server rolled back to an older state.
func leaseToken() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// undoTake gives back the leases of take call seq, whose caller gave up on
// it: sent again under its number, the call returns the leases it made if
// it ran, or makes them now if it did not; either way they go back as if
// never taken.
func (f *Frontier) undoTake(seq, low uint64, args []any) {
	defer f.endOp(seq)
	ctx, cancel := f.bgCtx(time.Minute)
	defer cancel()
	reply, err := f.evalAs(ctx, takeScript, seq, low, args...)
	if err != nil {
		return // they expire after their term, or go back at Close
	}
	r := fields{s: reply}
	for range r.int() {
		_, id, _, _, err := leaseField(r.next())
		if r.err != nil || err != nil {
			return
		}
		f.release(&crawl.Lease{ID: id})
	}
}

// leaseField reads a lease as the take script frames it: its kind ('R'
// for a robots.txt, 'P' else) and ID, a space, its tries (R) or its
// host's rules version (P, "" if none), a space, its host key (R) or
// Request encoding (P).
func leaseField(s string) (kind byte, id, extra, body string, err error) {
	if s == "" {
		return 0, "", "", "", errCorrupt
	}
	kind = s[0]
	id, rest, ok1 := strings.Cut(s[1:], " ")
	extra, body, ok2 := strings.Cut(rest, " ")
	if !ok1 || !ok2 {
		return 0, "", "", "", errCorrupt
	}
	return kind, id, extra, body, nil
}

// hostRules returns the rules of host at version, from the cache or the
// server.
func (f *Frontier) hostRules(ctx context.Context, host, version string) (*crawl.HostRules, error) {
	f.mu.Lock()
	c, ok := f.rules[host]
	prefix := f.prefix
	if f.shards > 1 {
		prefix = f.sprefix[shardOf(host, f.shards)]
	}
	f.mu.Unlock()
	if ok && c.version == version {
		return c.rules, nil
	}
	var v []any
	err := f.retryRead(ctx, prefix+"h:"+host, func() error {
		var err error
		v, err = f.rdb.HMGet(ctx, prefix+"h:"+host, "r", "rb").Result()
		return err
	})
	if err != nil {
		return nil, err
	}
	ver, _ := v[0].(string)
	body, _ := v[1].(string)
	rules, err := decodeRules(body)
	if err != nil {
		return nil, err
	}
	if ver == version {
		f.mu.Lock()
		if len(f.rules) >= maxCachedRules {
			// A robots.txt may be 500 KiB: the cache must not grow
			// with the hosts of a large crawl.
			clear(f.rules)
		}
		f.rules[host] = cachedRules{version: ver, rules: rules}
		f.mu.Unlock()
	}
	return rules, nil
}

// maxCachedRules bounds the hosts whose rules a Frontier keeps at hand.
const maxCachedRules = 1024

// release gives back a lease its Take no longer wants, and the lease ahead
// of it, as if they had never been taken.
func (f *Frontier) release(l *crawl.Lease) {
	ctx, cancel := f.bgCtx(time.Minute)
	defer cancel()
	shard, id, ok := f.route(l.ID)
	if !ok {
		return
	}
	ahead := joinIDs(f.takeAhead(l))
	seq, low := f.beginOp()
	defer f.endOp(seq)
	f.evalOn(ctx, shard, retryScript, seq, low, id, 0, "", 0, "1", ahead) // lost: they expire
	f.endAhead(l)
}

// Ack ends a lease as done, admits o.Links and counts o.Result in the
// crawl's Stats, in one step on the server. The Acks of the process that
// come while one is on its way to the server go together in the next
// script call (each still its own step), so that a busy process pays one
// round trip for many. That call also leases for the Takes of the process
// that wait (up to Options.MaxTake), after the acks, so that a host's slot
// an ack frees is leased again with no round trip between. An Ack whose
// ctx ends while its call leases so waits for the call before it returns
// ctx.Err() (for a server slow to answer, up to 5 s past ctx's end), so
// that the leases no Take is left to take have gone back by then; it
// returns at once, or as soon as it is seen, if the server does not
// answer (the process's last call to it, made in the last 10 s, had no
// reply, or one of its calls in flight has waited 2 s with none, over
// all its tries; in a cluster, one master's is enough): those leases
// then come back when their term ends.
func (f *Frontier) Ack(ctx context.Context, l *crawl.Lease, o crawl.Outcome) (int, error) {
	n, _, err := f.ack(ctx, nil, l, o)
	return n, err
}

// AckTake is Ack, then a Take for the caller that does not wait, in the
// one script call of the Acks (crawl.AckTaker): a crawler's worker that
// acks its lease has its next lease in the same round trip, where an Ack
// then a Take cost two. It returns the lease, or nil when the call had
// none for it (nothing could start, the Ack failed, take ended before the
// lease was handed out, or the crawl is on several shards): the caller
// then calls Take. A lease made for a caller that is no longer there for
// it goes back as if never taken.
func (f *Frontier) AckTake(ctx, take context.Context, l *crawl.Lease, o crawl.Outcome) (int, *crawl.Lease, error) {
	return f.ack(ctx, take, l, o)
}

// ack is Ack, and, with take not nil, AckTake.
func (f *Frontier) ack(ctx, take context.Context, l *crawl.Lease, o crawl.Outcome) (int, *crawl.Lease, error) {
	_, _, _, bits, err := f.state()
	if err != nil {
		return 0, nil, err
	}
	unsent := "0"
	if o.Unsent {
		unsent = "1"
	}
	hasRules, rules := "0", ""
	var rulesDelay int64
	if l.Kind == crawl.RobotsRequest && o.Rules != nil {
		hasRules = "1"
		if rules, err = encodeRules(o.Rules); err != nil {
			return 0, nil, err
		}
		rulesDelay = o.Rules.Delay.Microseconds()
	}
	// Links beyond one script's batch are pushed first: they must be
	// admitted before the ack, never after.
	links := o.Links
	pre := 0
	for len(links) > maxBatch {
		n, err := f.Push(ctx, links[:maxBatch]...)
		pre += n
		if err != nil {
			return pre, nil, err
		}
		links = links[maxBatch:]
	}
	a := f.sift(links, bits)
	a.done = make(chan struct{})
	if take != nil && take.Err() == nil && f.sharded() == 0 {
		a.take = take
	}
	a.args = make([]any, 0, 8)
	id := l.ID
	if f.sharded() > 0 {
		var ok bool
		if a.shard, id, ok = f.route(l.ID); !ok {
			a.shard = -1 // no lease of the crawl: lost, its links admitted
		}
	}
	// A random number for the jitter of a robots.txt's delay, which only
	// its ack uses.
	var r any = 0
	if l.Kind == crawl.RobotsRequest {
		r = randomArg()
	}
	a.args = append(a.args, id, unsent, hasRules, rules, rulesDelay, r, "", "")
	a.stats = appendStats(a.statBuf[:0], o)
	f.amu.Lock()
	if s, c := f.aheadFor(l); s != nil {
		f.handOff(a, s, c)
	}
	f.acks = append(f.acks, a)
	if f.flushers < maxInFlight {
		f.flushers++
		f.bgGo(f.flushAcks)
	}
	f.amu.Unlock()
	select {
	case <-a.done:
	case <-ctx.Done():
		// The ack goes on: it is done or not, never half done.
		a.keep()
		f.amu.Lock()
		taking := a.taking
		a.abandoned = !taking
		a.take = nil    // the call leases nothing more for it
		a.aheadTo = nil // nor keeps its lease ahead for it
		f.amu.Unlock()
		if taking {
			// Its call leases for the Takes waiting: those it cannot
			// hand out go back before this Ack returns (see
			// flushAcks), unless the server is that slow.
			f.graceWait(func() { <-a.done })
		}
		return pre, nil, ctx.Err()
	}
	if a.err != nil {
		return pre, nil, a.err
	}
	admitted := pre + a.admitted
	if o.Result != nil {
		o.Result.NumNewURLs = admitted
	}
	if !a.owned {
		if a.next != nil {
			f.release(a.next)
		}
		return admitted, nil, crawl.ErrLeaseLost
	}
	return admitted, a.next, nil
}

// maxInFlight bounds the script calls of one kind (Take, Ack) that a
// process has on their way at once: while they are, the next calls
// gather, to go together. One is the fastest measured (BenchmarkFrontier:
// 6.2k URLs/s, against 5.1k with 2 and 4.6-5.4k with 4): the server's
// time per URL, not the round trips, is the limit.
const maxInFlight = 1

// maxBatch bounds the Requests or acks of one script call: a long script
// blocks the server for everyone.
const maxBatch = 500

// pendingAck is an Ack waiting for its script call (or the Requests of a
// Push call).
type pendingAck struct {
	args    []any       // the lease's fields (see appendAck)
	stats   []stat      // the stats counters the Ack changes
	statBuf [5]stat     // stats' room for the usual Ack
	links   []admission // the links to send
	shard   int         // the lease's shard, in a crawl of several (-1: none)
	// Under Frontier.amu: whether its call leases for Takes waiting, and
	// whether its Ack returned before the call was made; for an AckTake
	// while its caller waits, the ctx of its Take.
	taking, abandoned bool
	take              context.Context
	next              *crawl.Lease // set before done is closed: AckTake's lease
	// Under Frontier.amu: the lease ahead its call promotes for its
	// AckTake's caller, and that caller's take while it waits for it
	// (see handOff); whether its call is made.
	ahead   *crawl.Lease
	aheadTo context.Context
	chain   *chain // the chain of the lease it promotes
	sent    bool
	// The links the seen cache dropped, as of its run: they are sent
	// after all if the server is no longer on that run. Until the Ack
	// returns they are the caller's Requests, those of from whose bit is
	// set in drop (no copy: most links of a crawl are dropped); an Ack
	// that returns before its call copies them to own.
	dmu      sync.Mutex
	from     []crawl.Request
	drop     []uint64
	own      []crawl.Request
	small    [2]uint64 // drop's room for up to 128 links
	run      string
	done     chan struct{} // closed when what follows is set
	owned    bool
	admitted int
	err      error
}

// sift returns the links of reqs to admit, without those the seen cache
// knows.
func (f *Frontier) sift(reqs []crawl.Request, bits uint) *pendingAck {
	c := f.seen
	if c == nil {
		return &pendingAck{links: admissions(reqs, bits)}
	}
	a := &pendingAck{from: reqs}
	if n := (len(reqs) + 63) / 64; n <= len(a.small) {
		a.drop = a.small[:n]
	} else {
		a.drop = make([]uint64, n)
	}
	// The fingerprints, so that the links kept, most often few, are
	// counted before their room is made.
	var small [16]uint64
	fps := small[:0]
	if len(reqs) > len(small) {
		fps = make([]uint64, 0, len(reqs))
	}
	dropped, kept := false, 0
	c.mu.RLock()
	for i := range reqs {
		h := fingerprint(reqs[i].URL)
		fps = append(fps, h)
		if c.has(h) {
			a.drop[i/64] |= 1 << (i % 64)
			dropped = true
			continue
		}
		kept++
	}
	if kept > 0 {
		a.links = make([]admission, 0, kept)
		for i := range reqs {
			if a.drop[i/64]&(1<<(i%64)) == 0 {
				a.links = append(a.links, admit(&reqs[i], fps[i], bits))
			}
		}
	}
	if dropped {
		a.run = c.run
	}
	c.mu.RUnlock()
	return a
}

// dropped returns the links the seen cache dropped. a.dmu is held.
func (a *pendingAck) dropped() []crawl.Request {
	if a.from == nil {
		return a.own
	}
	var out []crawl.Request
	for i := range a.from {
		if a.drop[i/64]&(1<<(i%64)) != 0 {
			out = append(out, a.from[i])
		}
	}
	return out
}

// keep copies the links the seen cache dropped, which are the caller's:
// its Ack returns before its call.
func (a *pendingAck) keep() {
	a.dmu.Lock()
	defer a.dmu.Unlock()
	a.own, a.from = a.dropped(), nil
}

// undrop puts the links of a that the seen cache dropped back among those
// sent.
func (a *pendingAck) undrop(bits uint) {
	a.dmu.Lock()
	defer a.dmu.Unlock()
	if d := a.dropped(); len(d) > 0 {
		a.links = append(a.links, admissions(d, bits)...)
	}
	a.from, a.own, a.run = nil, nil, ""
}

// evalAdmitting runs script (pushScript or ackScript), which admits the
// links of batch, with the arguments body appends: first the server run
// the seen cache's drops were made under, checked by the script. If the
// server is no longer on it, the drops are undone and the call made
// again. It returns the reply after the run it ran on, and adds the links
// sent to the cache.
func (f *Frontier) evalAdmitting(ctx context.Context, script *redis.Script, batch []*pendingAck, bits uint, body func([]any) []any) (fields, error) {
	size := 2
	for _, a := range batch {
		size += len(a.args) + 1 + 4*len(a.links)
	}
	run := "-" // no cache: the script need not know its run
	if f.seen != nil {
		run = ""
		for _, a := range batch {
			switch {
			case a.run == "":
			case run == "":
				run = a.run
			case a.run != run:
				a.undrop(bits) // the cache was reset meanwhile
			}
		}
	}
	for {
		if run == "" {
			sent := false
			for _, a := range batch {
				sent = sent || len(a.links) > 0
			}
			if !sent {
				run = "-" // nothing to learn
			}
		}
		args := make([]any, 1, size)
		args[0] = run
		reply, err := f.eval(ctx, script, true, body(args)...)
		if err != nil {
			return fields{}, err
		}
		if now, ok := strings.CutPrefix(reply, "stale:"); ok {
			f.seen.reset(now)
			for _, a := range batch {
				a.undrop(bits)
			}
			run = ""
			continue
		}
		r := fields{s: reply}
		if now := r.next(); now != "-" && r.err == nil {
			var fps []uint64
			for _, a := range batch {
				for _, l := range a.links {
					fps = append(fps, l.fp)
				}
			}
			f.seen.add(now, fps)
		}
		return r, r.err
	}
}

// flushAcks sends the Acks waiting, as many as fit in one script call, and
// again until none waits.
func (f *Frontier) flushAcks() {
	for {
		f.amu.Lock()
		batch, size := f.acks, 0
		for i, a := range f.acks {
			size += len(a.args) + 4*len(a.links)
			if i > 0 && size > 8*maxBatch {
				batch = f.acks[:i]
				break
			}
		}
		f.acks = f.acks[len(batch):]
		if len(batch) == 0 {
			f.flushers--
			f.amu.Unlock()
			return
		}
		var tok string
		for _, a := range batch {
			a.sent = true
			op, _ := a.args[aheadOp].(string)
			if _, ok := opPromotes(op); ok && f.starved.Load() {
				if tok == "" {
					tok = leaseToken()
				}
				a.args[aheadTok] = f.aheadWanted(a, tok)
			}
		}
		// Takes waiting get their leases in the acks' call: the slots
		// the acks free are leased again with no round trip between.
		// Only while an Ack of the batch waits for it: the leases no
		// Take is left to take go back before that Ack returns, so
		// that no lease is out with no holder once the calls are over.
		// An AckTake's call leases for its caller too.
		want, own := 0, 0
		if f.sharded() == 0 {
			asked := false
			for _, a := range batch {
				if !a.abandoned && !asked {
					want, asked = f.reserveWaiters(), true
				}
				if a.take != nil {
					own++
				}
			}
			for _, a := range batch {
				a.taking = want+own > 0 || a.ahead != nil
			}
		}
		f.amu.Unlock()
		_, _, _, bits, _ := f.state()
		if f.seen == nil {
			f.siftBatch(batch)
		}
		if n := f.sharded(); n > 0 {
			f.flushShards(batch, n)
			f.notify()
			continue
		}
		script, take := ackScript, []any(nil)
		if want+own > 0 {
			script = ackTakeScript
			take = takeArgs(want+own, f.starved.Load())
		}
		// The acks are the crawl's record: they wait for the server as
		// long as the Frontier is open, whatever their callers' ctx.
		sent := time.Now()
		var once linksOnce
		r, err := f.evalAdmitting(f.life, script, batch, bits, func(args []any) []any {
			return append(appendAcksOnce(args, batch, &once), take...)
		})
		acked := r.next()
		if err == nil {
			err = r.err
		}
		var taken string
		quiet := false
		if want+own > 0 && err == nil {
			taken = r.next()
			quiet = r.next() == "1"
			if r.err != nil {
				taken, quiet = "", false
			}
		}
		aheads := ""
		if err == nil {
			aheads = r.next()
			if r.err != nil {
				err = r.err
			}
		}
		f.promoted(batch, aheads, err, sent)
		if want+own > 0 {
			if f.beforeServe != nil {
				f.beforeServe()
			}
			f.serveWaiters(want, want+own, batch, taken, err, sent)
		}
		for _, a := range batch {
			if err == nil {
				var tok string
				tok, acked, _ = strings.Cut(acked, " ")
				if len(tok) < 2 {
					err = errCorrupt
				} else {
					a.owned = tok[0] == '1'
					if a.admitted, err = strconv.Atoi(tok[1:]); err != nil {
						err = errCorrupt
					}
				}
			}
			a.err = err
			close(a.done)
		}
		if !quiet {
			f.notify()
		}
	}
}

// reserveWaiters reserves, for the acks' call to lease, the Takes waiting
// that no leading Take asks for: their number, up to Options.MaxTake.
func (f *Frontier) reserveWaiters() int {
	f.tmu.Lock()
	defer f.tmu.Unlock()
	n := min(len(f.waiters)-f.reserved, f.opts.MaxTake)
	if n <= 0 {
		return 0
	}
	f.reserved += n
	return n
}

// takeArgs returns the take script's own arguments for up to n leases,
// and leases ahead if ahead (see aheadOf).
func takeArgs(n int, ahead bool) []any {
	args := make([]any, 0, 2+n)
	var want any = n
	if ahead {
		want = strconv.Itoa(n) + "a" + strconv.Itoa(aheadDepth)
	}
	args = append(args, want, leaseToken())
	for range n {
		args = append(args, randomArg())
	}
	return args
}

// randomArgs are random numbers in [0, 1), as script arguments made once:
// one made for each lease would be allocated, twice, for each. 4096 of
// them jitter the hosts' delays (see HostDelay) as well as more would.
var randomArgs = func() (rs [4096]any) {
	for i := range rs {
		rs[i] = strconv.FormatFloat(mrand.Float64(), 'f', 6, 64)
	}
	return rs
}()

// randomArg returns a random number in [0, 1) as a script argument.
func randomArg() any { return randomArgs[mrand.IntN(len(randomArgs))] }

// serveWaiters hands the leases of taken, the take part of the reply of
// an acks' call of batch that reserved want waiters and asked for asked
// leases in all, to the callers of the
// AckTakes of batch, then to the Takes waiting; the
// leases no Take waits for any more (it left meanwhile, or the Frontier
// is closing) go back as if never taken. err is the call's: with it,
// taken is empty.
func (f *Frontier) serveWaiters(want, asked int, batch []*pendingAck, taken string, err error, sent time.Time) {
	var leases []*crawl.Lease
	if err == nil && taken != "" {
		got, _, perr := parseTake(taken)
		ids := make([]string, len(got))
		for i, g := range got {
			ids[i] = g.id
		}
		leases, _ = f.makeLeases(f.life, got, ids, perr)
		leases = f.keepAhead(got, leases, sent)
		f.starved.Store(len(leases) < asked)
	}
	var extra []*crawl.Lease
	closing := f.isClosing()
	// First the callers of the AckTakes of the batch that are still
	// there for their lease.
	f.amu.Lock()
	for _, a := range batch {
		if len(leases) == 0 || closing {
			break
		}
		if a.take != nil && a.take.Err() == nil {
			a.next, leases = leases[0], leases[1:]
		}
	}
	f.amu.Unlock()
	f.tmu.Lock()
	f.reserved -= want
	for _, l := range leases {
		if closing || len(f.waiters) == 0 {
			extra = append(extra, l)
			continue
		}
		w := f.waiters[0]
		f.waiters = f.waiters[1:]
		w <- l
	}
	f.tmu.Unlock()
	for _, l := range extra {
		f.release(l)
	}
}

// siftBatch drops, for a Frontier with no seen cache, the links of batch
// that an earlier ack of it sends (see linksOnce), then those the seen set
// has (dropSeen). The batch's acks are admitted in one call, or in one
// round of calls a shard (flushShards), whose links the first sender's
// brings in.
func (f *Frontier) siftBatch(batch []*pendingAck) {
	var once linksOnce
	for _, a := range batch {
		a.links = once.drop(a.links)
	}
	f.dropSeen(batch)
}

// dropSeen drops from the links of batch those the seen set has already,
// asked in one pipeline: in a crawl most links are, and a check outside a
// script costs the server a fraction of one inside. A URL once seen stays
// seen, so a link dropped here would not have been admitted by the
// script; those left are checked there again. If the server does not
// answer, every link goes to the script. Like every call of the
// Frontier's, it counts as waiting for the server, and what it hears is
// noted node by node (see answering): a master that hangs holds it until
// the cluster's client gives up, and Close must not take the server for
// one that answers meanwhile.
func (f *Frontier) dropSeen(batch []*pendingAck) {
	prefix, _, _, _, err := f.state()
	if err != nil {
		return
	}
	f.mu.Lock()
	shards, sprefix := f.shards, f.sprefix
	f.mu.Unlock()
	pre := func(v int) string {
		if shards > 1 {
			return sprefix[v]
		}
		return prefix
	}
	ctx := f.life
	// Each link's shard (0 on a crawl of one); the node of each shard
	// the batch asks, found before the call, as a failover may move the
	// shard while it waits; and those nodes, each once.
	var (
		of    []int
		nodes = make(map[int]string)
		asked []string
		cmds  []*redis.BoolCmd
	)
	for _, a := range batch {
		for _, l := range a.links {
			v := 0
			if shards > 1 {
				v = shardOf(l.host, shards)
			}
			of = append(of, v)
			if _, ok := nodes[v]; !ok {
				node := f.nodeOf(ctx, pre(v)+"meta")
				nodes[v] = node
				if !slices.Contains(asked, node) {
					asked = append(asked, node)
				}
			}
		}
	}
	if len(of) == 0 {
		return
	}
	// What the call heard: from every node if it went through; else,
	// node by node, what the first command of each shard had.
	note := func(err error, took time.Duration) {
		if err == nil {
			for _, node := range asked {
				f.noteReach(ctx, node, nil, took)
			}
			return
		}
		noted := make(map[int]bool, len(nodes))
		for i, c := range cmds {
			if v := of[i]; !noted[v] {
				noted[v] = true
				f.noteReach(ctx, nodes[v], c.Err(), took)
			}
		}
	}
	sent := time.Now()
	cut, err := f.cutCall(ctx, func() error {
		_, err := f.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			i := 0
			for _, a := range batch {
				for _, l := range a.links {
					cmds = append(cmds, p.SIsMember(ctx, pre(of[i])+"s:"+strconv.FormatUint(l.bucket, 10), l.member))
					i++
				}
			}
			return nil
		})
		return err
	}, note)
	if cut {
		return
	}
	note(err, time.Since(sent))
	if err != nil {
		return
	}
	i := 0
	for _, a := range batch {
		kept := a.links[:0]
		for _, l := range a.links {
			if !cmds[i].Val() {
				kept = append(kept, l)
			}
			i++
		}
		a.links = kept
	}
}

// stat is a stats counter an Ack changes: its name, as a script argument
// (see statusKeys), and its increment.
type stat struct {
	name any
	n    int64
}

// appendStats appends the stats counters o changes: the categories of
// crawl.Stats, as Stats.Add counts a Result, and the refusals.
func appendStats(st []stat, o crawl.Outcome) []stat {
	if r := o.Result; r != nil {
		st = append(st, stat{"done", 1})
		if r.Status != 0 {
			st = append(st, stat{statusKey(r.Status), 1})
		}
		switch kind := r.Kind(); kind {
		case "fail":
			st = append(st, stat{"fail", 1}, stat{"fail:" + crawl.FailKind(r.Err), 1})
		case "redirect":
			st = append(st, stat{"redirect", 1})
		default: // html, other, error
			k, b := kindKey(kind)
			st = append(st, stat{k, 1}, stat{b, int64(r.Size)})
		}
	}
	for name, n := range o.Refused {
		if n != 0 {
			st = append(st, stat{"refused:" + name, int64(n)})
		}
	}
	return st
}

// linksOnce drops a link that an earlier ack of the same call sends: the
// script admits it with the first (pages of one site fetched together
// share many links), and the second's SADD would find it seen, admitting
// nothing. The counts are the same: a link counts as new for the first
// ack that sends it.
type linksOnce struct {
	few  []uint64            // the fingerprints sent, while they are few
	many map[uint64]struct{} // the same, past onceFew
	buf  [onceFew]uint64     // few's room
}

// onceFew is how many fingerprints linksOnce keeps in a slice: a call
// sends a few dozen links most often, which a scan finds quicker than a
// map does.
const onceFew = 64

func (o *linksOnce) reset() {
	o.few = o.few[:0]
	clear(o.many)
}

// sent reports whether fingerprint fp was sent, and notes it as sent.
func (o *linksOnce) sent(fp uint64) bool {
	if o.many != nil {
		if _, ok := o.many[fp]; ok {
			return true
		}
		o.many[fp] = struct{}{}
		return false
	}
	if o.few == nil {
		o.few = o.buf[:0]
	}
	for _, h := range o.few {
		if h == fp {
			return true
		}
	}
	if len(o.few) < onceFew {
		o.few = append(o.few, fp)
		return false
	}
	o.many = make(map[uint64]struct{}, 4*onceFew)
	for _, h := range o.few {
		o.many[h] = struct{}{}
	}
	o.many[fp] = struct{}{}
	return false
}

// drop returns links without those sent already in the call, and notes
// the rest as sent; links itself if none is dropped.
func (o *linksOnce) drop(links []admission) []admission {
	var out []admission
	copied := false
	for i, l := range links {
		if o.sent(l.fp) {
			if !copied {
				out, copied = append(make([]admission, 0, len(links)-1), links[:i]...), true
			}
			continue
		}
		if copied {
			out = append(out, l)
		}
	}
	if !copied {
		return links
	}
	return out
}

// appendAcksOnce is appendAcks for one call: a link an earlier ack of the
// call sends is not sent again (see linksOnce).
func appendAcksOnce(args []any, batch []*pendingAck, once *linksOnce) []any {
	once.reset()
	return appendAcks(args, batch, func(i int) []admission { return once.drop(batch[i].links) })
}

// appendAcks appends the acks of batch as ackScript reads them, links(i)
// the links of batch[i] to send: their number, each ack, then the stats
// counters of them all, summed.
func appendAcks(args []any, batch []*pendingAck, links func(i int) []admission) []any {
	args = append(args, len(batch))
	var small [8]stat
	sum := small[:0]
	for i, a := range batch {
		args = appendAck(args, a, links(i))
	next:
		for _, s := range a.stats {
			for j := range sum {
				if sum[j].name == s.name {
					sum[j].n += s.n
					continue next
				}
			}
			sum = append(sum, s)
		}
	}
	args = append(args, len(sum))
	for _, s := range sum {
		args = append(args, s.name, s.n)
	}
	return args
}

// appendAck appends the ack a, with links, as ackScript reads it: the
// lease's ID; "" for an ack with the usual fields (see ackScript), else
// "x" and the fields; its stats counters framed in one argument; its
// links.
func appendAck(args []any, a *pendingAck, links []admission) []any {
	h := a.args // ID, unsent, hasRules, rules, rules' delay, random, op, ahead
	if h[1] == "0" && h[2] == "0" && h[5] == any(0) && h[aheadOp] == "" && h[aheadTok] == "" {
		args = append(args, h[0], "")
	} else {
		args = append(args, h[0], "x")
		args = append(args, h[1:]...)
	}
	var b []byte
	if len(a.stats) > 0 {
		b = make([]byte, 0, 16*len(a.stats))
	}
	for _, s := range a.stats {
		name := s.name.(string)
		b = strconv.AppendInt(b, int64(len(name)), 10)
		b = append(b, ':')
		b = append(b, name...)
		b = strconv.AppendInt(b, s.n, 10)
		b = append(b, ' ')
	}
	args = append(args, string(b))
	return appendAdmissions(args, links)
}

// statusKeys are the stats keys of the usual statuses, made once, as
// script arguments: a string made an argument each time would be
// allocated each time.
var statusKeys = func() (keys [600]any) {
	for i := 100; i < len(keys); i++ {
		keys[i] = "status:" + strconv.Itoa(i)
	}
	return keys
}()

// statusKey returns the stats key of status, as a script argument.
func statusKey(status int) any {
	if status >= 100 && status < len(statusKeys) {
		return statusKeys[status]
	}
	return "status:" + strconv.Itoa(status)
}

// kindKeys are the stats keys of the usual kinds of Result and of their
// bytes, as script arguments (see statusKeys).
var kindKeys = map[string][2]any{
	"html":  {"html", "html_bytes"},
	"other": {"other", "other_bytes"},
	"error": {"error", "error_bytes"},
}

// kindKey returns the stats keys of a Result of kind and of its bytes, as
// script arguments.
func kindKey(kind string) (any, any) {
	if k, ok := kindKeys[kind]; ok {
		return k[0], k[1]
	}
	return kind, kind + "_bytes"
}

// Retry ends a lease by putting its Request back, as l.Request is now, to
// be taken no earlier than at (measured from now on the server's clock).
func (f *Frontier) Retry(ctx context.Context, l *crawl.Lease, at time.Time) error {
	var delay int64
	if !at.IsZero() {
		delay = max(0, time.Until(at).Microseconds())
	}
	shard, id, ok := f.route(l.ID)
	if !ok {
		if _, _, _, _, err := f.state(); err != nil {
			return err
		}
		return crawl.ErrLeaseLost
	}
	// Its lease ahead goes back first (see takeAhead).
	ahead := f.takeAhead(l)
	seq, low := f.beginOp()
	reply, err := f.evalOn(ctx, shard, retryScript, seq, low, id, delay, encodeRequest(&l.Request), l.Tries, "0", joinIDs(ahead))
	f.endOp(seq)
	if err != nil {
		f.putAhead(l, ahead) // as if not called
		return err
	}
	f.endAhead(l)
	f.notify()
	if reply != "1" {
		return crawl.ErrLeaseLost
	}
	return nil
}

// Extend renews a lease for another Policy.LeaseTerm from now.
func (f *Frontier) Extend(ctx context.Context, l *crawl.Lease) error {
	shard, id, ok := f.route(l.ID)
	if !ok {
		if _, _, _, _, err := f.state(); err != nil {
			return err
		}
		return crawl.ErrLeaseLost
	}
	sent := time.Now()
	reply, err := f.evalOn(ctx, shard, extendScript, 0, 0, id, f.aheadIDs(l.ID))
	if err != nil {
		return err
	}
	if reply != "1" {
		return crawl.ErrLeaseLost
	}
	f.renewedAhead(l.ID, sent)
	return nil
}

// Pause holds back every request to host until the given time, measured
// from now on the server's clock, for every process: the server leases
// none of the host's Requests meanwhile, this process's leases ahead of
// the host go back at once, and a lease ahead that an Ack's call would
// promote for its AckTake's caller goes back instead (see the package's
// Speed). A lease out when Pause is called still runs, a lease ahead of
// another process included: that process may hand it to one of its Takes
// that waits, as the lease before it is acked, without asking the server.
func (f *Frontier) Pause(ctx context.Context, host string, until time.Time) error {
	shard := -1
	if n := f.sharded(); n > 0 {
		shard = shardOf(host, n)
	}
	_, err := f.evalOn(ctx, shard, pauseScript, 0, 0, host, max(0, time.Until(until).Microseconds()))
	if err != nil {
		return err
	}
	// The leases ahead of the host go back: none may start in the pause.
	var back []*crawl.Lease
	f.amu.Lock()
	for _, c := range f.ahead {
		if c.host == host {
			back = append(back, c.ls...)
			c.ls = nil
		}
	}
	f.amu.Unlock()
	if len(back) > 0 {
		f.giveAhead(joinIDs(back))
	}
	return nil
}

// Join blocks until nothing is pending in the whole crawl, over every
// process (or until the page budget is spent and only new Requests are
// left), or until ctx is done. When nothing is pending, the crawl is done:
// Join records when, and sets its keys to expire (see Options.TTL),
// before it returns. It returns ErrCrawlDeleted if the crawl was deleted
// meanwhile.
func (f *Frontier) Join(ctx context.Context) error {
	if f.sharded() > 0 {
		return f.joinShards(ctx)
	}
	for {
		prefix, _, p, _, err := f.state()
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		// Only the Acks that find the crawl over say so, with "j" (others
		// say "w", work came up, which Takes wait for): Join asks the
		// server again then, or after idlePoll, not after every Ack of
		// every process.
		ev := f.joinEvents()
		var (
			hm   *redis.SliceCmd
			pttl *redis.DurationCmd
		)
		err = f.retryRead(ctx, prefix+"meta", func() error {
			_, err := f.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
				hm = p.HMGet(ctx, prefix+"meta", "unfinished", "fresh", "pages", "sb", "dl", "rv")
				pttl = p.PTTL(ctx, prefix+"meta")
				return nil
			})
			return err
		})
		if err != nil {
			return err
		}
		v := hm.Val()
		if v[3] == nil {
			return f.deleted()
		}
		unf, fresh, pages := num(v[0]), num(v[1]), num(v[2])
		if unf == 0 {
			return f.finish(ctx, false)
		}
		if budgetSpent(p, unf, fresh, pages) {
			return f.finish(ctx, true)
		}
		// Work is left for this process, under its budget: another,
		// under a smaller one, may have stopped the crawl and set its
		// keys to expire.
		if setToExpire(pttl.Val(), v[4], v[5]) {
			if err := f.revive(ctx); err != nil {
				return err
			}
		}
		if err := f.await(ctx, ev, f.idle); err != nil {
			return err
		}
	}
}

// budgetSpent reports whether a crawl of these counters (Requests not
// acked, new ones among them, pages taken) has its page budget under p
// spent, with nothing left but the new Requests it holds back.
func budgetSpent(p crawl.Policy, unf, fresh, pages int64) bool {
	return p.MaxPages > 0 && pages >= int64(p.MaxPages) && unf == fresh
}

// num reads a counter HMGET returned; a missing one is 0.
func num(v any) int64 {
	s, _ := v.(string)
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

// Counts returns the counters of the whole crawl, over every process; the
// leases this process holds ahead (see the package's Speed), which no
// caller has, count as queued, not leased nor taken. It returns an error
// wrapping ErrCrawlDeleted if the crawl was deleted.
func (f *Frontier) Counts(ctx context.Context) (crawl.Counts, error) {
	prefix, _, _, _, err := f.state()
	if err != nil {
		return crawl.Counts{}, err
	}
	if f.sharded() > 0 {
		return f.countShards(ctx)
	}
	// The leases ahead this process holds are leased on the server, and
	// counted as Requests queued, not leased nor taken: no caller has
	// them (see keepAhead).
	f.amu.Lock()
	var ahead []string
	for _, c := range f.ahead {
		for _, s := range c.ls {
			ahead = append(ahead, s.ID)
		}
	}
	f.amu.Unlock()
	var (
		hm, ha *redis.SliceCmd
		hl     *redis.IntCmd
	)
	err = f.retryRead(ctx, prefix+"meta", func() error {
		_, err := f.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
			hm = p.HMGet(ctx, prefix+"meta", "queued", "done", "pages", "sb")
			hl = p.HLen(ctx, prefix+"leases")
			if len(ahead) > 0 {
				ha = p.HMGet(ctx, prefix+"leases", ahead...)
			}
			return nil
		})
		return err
	})
	if err != nil {
		return crawl.Counts{}, err
	}
	v := hm.Val()
	if v[3] == nil {
		// Every crawl's meta hash has sb: gone, the crawl was deleted
		// (reset, or its keys expired), not empty.
		return crawl.Counts{}, f.deleted()
	}
	c := crawl.Counts{Queued: int(num(v[0])), Leased: int(hl.Val()), Done: int(num(v[1])), Pages: int(num(v[2]))}
	if ha != nil {
		for _, x := range ha.Val() {
			if rec, ok := x.(string); ok && strings.HasPrefix(rec, "S") {
				c.Queued++
				c.Leased--
				c.Pages--
			}
		}
	}
	return c, nil
}

// Stats returns the counters of the whole crawl, over every process: every
// Result acked (Done, HTML, HTMLBytes, Other, OtherBytes, Redirects,
// Errors, ErrorBytes, Failures, FailKinds, StatusCounts) and the refusals
// acked (Refused). It returns an error wrapping ErrCrawlDeleted if the
// crawl was deleted: its counters are gone.
func (f *Frontier) Stats(ctx context.Context) (crawl.Stats, error) {
	prefix, _, _, _, err := f.state()
	if err != nil {
		return crawl.Stats{}, err
	}
	f.mu.Lock()
	prefixes, statsKey := []string{prefix}, prefix+"stats"
	if f.shards > 1 {
		prefixes, statsKey = f.sprefix, "" // every node's
	}
	f.mu.Unlock()
	var (
		cmds  []*redis.MapStringStringCmd
		alive []*redis.BoolCmd
	)
	err = f.retryRead(ctx, statsKey, func() error {
		cmds, alive = cmds[:0], alive[:0]
		_, err := f.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, pre := range prefixes {
				cmds = append(cmds, p.HGetAll(ctx, pre+"stats"))
				alive = append(alive, p.HExists(ctx, pre+"meta", "sb"))
			}
			return nil
		})
		return err
	})
	if err != nil {
		return crawl.Stats{}, err
	}
	for _, a := range alive {
		if !a.Val() {
			// The crawl was deleted: its counters are gone, not 0.
			return crawl.Stats{}, f.deleted()
		}
	}
	vals := make([]map[string]string, len(cmds))
	for i, c := range cmds {
		vals[i] = c.Val()
	}
	return statsOf(vals), nil
}

// statsOf sums the stats hashes vals (one, or each shard's) into the
// crawl's Stats.
func statsOf(vals []map[string]string) crawl.Stats {
	s := crawl.Stats{FailKinds: map[string]int{}, StatusCounts: map[int]int{}, Refused: map[string]int{}}
	counts := map[string]*int{"done": &s.Done, "html": &s.HTML, "other": &s.Other,
		"redirect": &s.Redirects, "error": &s.Errors, "fail": &s.Failures}
	sizes := map[string]*int64{"html_bytes": &s.HTMLBytes, "other_bytes": &s.OtherBytes, "error_bytes": &s.ErrorBytes}
	for _, m := range vals {
		for k, v := range m {
			n, _ := strconv.ParseInt(v, 10, 64)
			if c := counts[k]; c != nil {
				*c += int(n)
				continue
			}
			if b := sizes[k]; b != nil {
				*b += n
				continue
			}
			name, rest, _ := strings.Cut(k, ":")
			switch name {
			case "fail":
				s.FailKinds[rest] += int(n)
			case "status":
				code, _ := strconv.Atoi(rest)
				s.StatusCounts[code] += int(n)
			case "refused":
				s.Refused[rest] += int(n)
			}
		}
	}
	return s
}

// Close puts back the leases this Frontier holds, so that another process
// (or this one, opened anew) takes them at once, and releases the
// Frontier; it closes the client if Open made it. It gives the server 5 s
// (a quarter of a second if the process's last call to it, or in a
// cluster to one of its masters, had no reply and was made in the last
// 10 s, or if one of its calls in flight has waited 2 s with no reply: a
// server, or a master, that hangs or cannot be reached), after which the
// leases come back only when their term ends.
// A Take or Join blocked, or begun once Close has begun, returns
// ErrFrontierClosed, as does every later call. The work the Frontier's
// calls leave to finish after they return (an Ack that goes on past its
// ctx, the leases of a Take cut short going back) is done first, within
// the same grace; then Close ends it and waits for the goroutines doing
// it (a second at most, a quarter of one when the server hangs), so that
// none outlives Close, but one waiting on a call to a server that hangs:
// the client ends such a call at its ReadTimeout (3 s by default)
// whatever the call's ctx, after Close has returned, unless the client
// is Open's of one server, which Close closes.
func (f *Frontier) Close() error {
	f.mu.Lock()
	if f.closing {
		// Another Close is under way: it is done when it has closed.
		f.mu.Unlock()
		<-f.closedCh
		return crawl.ErrFrontierClosed
	}
	f.closing = true
	started := f.started
	f.mu.Unlock()
	var err error
	if started {
		// Give the server a while; if it is down, the leases expire.
		// First the Frontier's own calls end: the Acks that go on past
		// their callers' ctx, the leases of a Take cut short going
		// back; then the leases left go back.
		grace := 5 * time.Second
		if !f.answering() {
			// It is down (stopped, cut off): its calls under way are
			// not waited for either, whose reads end at the client's
			// ReadTimeout (a Ctrl-C of the command took 7 s, not the
			// 5 of the crawler's own wait).
			grace = 250 * time.Millisecond
		}
		limit := time.Now().Add(grace)
		f.waitWhile(f.bgDone(), grace)
		grace = time.Until(limit)
		if !f.answering() || grace < 250*time.Millisecond {
			grace = 250 * time.Millisecond // it is down: one try
		}
		f.presStop()
		// Its call to a server that hangs ends only at the client's
		// ReadTimeout, whatever its ctx (a Ctrl-C of the command with
		// redis-server stopped waited for it): waited for within the
		// grace, and then ended by the client's Close below.
		select {
		case <-f.presDone:
		case <-time.After(grace):
		}
		// In a goroutine of the Frontier's, waited for until the
		// grace ends: a cluster's client holds a call to a master that
		// hangs until its ReadTimeout, whatever the call's ctx.
		ctx, cancel := context.WithTimeout(context.Background(), grace)
		res := make(chan error, 1)
		f.bgGo(func() {
			presenceScript.Run(ctx, f.rdb, []string{f.prefix + "meta", f.prefix + "live"}, "0", f.owner)
			if n := f.sharded(); n > 0 {
				calls := make([]*call, n)
				for v := range calls {
					calls[v] = &call{shard: v, script: closeScript}
				}
				res <- f.evalMany(ctx, calls)
			} else {
				_, err := f.eval(ctx, closeScript, false)
				res <- err
			}
		})
		select {
		case err = <-res:
		case <-ctx.Done():
			err = ctx.Err()
		}
		cancel()
	}
	// Close's script gave back the leases ahead with the others.
	f.amu.Lock()
	clear(f.ahead)
	f.amu.Unlock()
	f.mu.Lock()
	f.closed = true
	close(f.closedCh)
	ps, done := f.pubsub, f.subDone
	f.mu.Unlock()
	if ps != nil {
		ps.Close()
		<-done
	}
	// The Frontier's own calls still waiting, which had their grace
	// above, end now, so that none of its goroutines outlives Close: at
	// once with the client of one server that Open made, closed here. A
	// client that holds a call to a server that hangs until its
	// ReadTimeout, whatever the call's ctx (the caller's; a cluster's,
	// which goes on with a call cut by ctx for a while), ends it then,
	// and Close does not wait for that.
	f.endLife()
	if f.ownClient {
		if cerr := f.rdb.Close(); err == nil {
			err = cerr
		}
	}
	wait := time.Second
	if !f.answering() {
		wait = 250 * time.Millisecond
	}
	select {
	case <-f.bgDone():
	case <-time.After(wait):
	}
	if errors.Is(err, context.DeadlineExceeded) {
		err = nil // the leases expire after their term
	}
	if errors.Is(err, ErrCrawlDeleted) {
		err = nil // nothing to give back
	}
	return err
}
