package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asyncrawl/crawl/redisfrontier"
	"github.com/redis/go-redis/v9"
)

// errBothRedis is the error of -redis and -redis_cluster given together.
var errBothRedis = errors.New("-redis and -redis_cluster are exclusive: give the URL of one Redis server, or the nodes of one Redis Cluster")

// sharing reports whether the crawl is shared through Redis: -redis or
// -redis_cluster.
func (cfg *config) sharing() bool { return cfg.redis != "" || len(cfg.cluster) > 0 }

// redisFlag returns the flag that names the crawl's Redis, as given: -redis
// URL (without its password) or -redis_cluster ADDR,...
func (cfg *config) redisFlag() string {
	if len(cfg.cluster) > 0 {
		return "-redis_cluster " + strings.Join(cfg.cluster, ",")
	}
	return "-redis " + redactURL(cfg.redis)
}

// redisFlagName returns the flag that names the crawl's Redis: -redis or
// -redis_cluster.
func (cfg *config) redisFlagName() string {
	if len(cfg.cluster) > 0 {
		return "-redis_cluster"
	}
	return "-redis"
}

// redisWhere names the crawl's Redis for a person: the -redis URL (without
// its password), or "cluster ADDR,..." of -redis_cluster.
func (cfg *config) redisWhere() string {
	if len(cfg.cluster) > 0 {
		return "cluster " + strings.Join(cfg.cluster, ",")
	}
	return redactURL(cfg.redis)
}

// checkRedisFlags returns what is wrong with the flags of a shared crawl,
// before anything starts: one of -redis, a Redis URL, and -redis_cluster,
// and the flags that only mean something with one of them need it.
func checkRedisFlags(cfg *config, leaseSet bool) error {
	if cfg.redis != "" && len(cfg.cluster) > 0 {
		return errBothRedis
	}
	if !cfg.sharing() {
		const give = "give -redis URL or -redis_cluster ADDR too"
		switch {
		case cfg.crawlName != "":
			return fmt.Errorf("-crawl names a crawl shared through Redis: %s", give)
		case leaseSet:
			return fmt.Errorf("-lease is the lease term of a crawl shared through Redis: %s", give)
		case cfg.waitGiven:
			return fmt.Errorf("-redis_wait is how long to wait for the Redis of a shared crawl: %s", give)
		case cfg.ttlGiven:
			return fmt.Errorf("-redis_ttl is how long a finished crawl's keys stay in Redis: %s", give)
		case cfg.waitReplicasGiven:
			return fmt.Errorf("-redis_wait_replicas is how many Redis replicas each write of a shared crawl waits for: %s", give)
		}
		return nil
	}
	switch {
	case cfg.state != "":
		return fmt.Errorf("%s and -state are exclusive: a crawl is kept either in Redis, shared, or in a file, by one process", cfg.redisFlagName())
	case cfg.demo:
		return fmt.Errorf("%s cannot share -demo: the demo site is on a loopback port of this process", cfg.redisFlagName())
	case cfg.redisTTL > 0 && cfg.redisTTL < redisfrontier.MinTTL:
		return fmt.Errorf("-redis_ttl %v: want 0 (keep the keys) or at least %v: the crawl's processes read its keys for a while after it is done", cfg.redisTTL, redisfrontier.MinTTL)
	}
	if cfg.redis == "" {
		return nil // -redis_cluster's addresses are checked as they are parsed
	}
	_, err := redisOptions(cfg)
	return err
}

// redisOptions parses -redis, with the error every use of it gives.
func redisOptions(cfg *config) (*redis.Options, error) {
	o, err := redis.ParseURL(cfg.redis)
	if err != nil {
		return nil, fmt.Errorf("-redis %s: %v (want redis://[[USER]:PASSWORD@]HOST[:PORT][/DB], rediss:// for TLS, or unix:///PATH)", redactURL(cfg.redis), err)
	}
	return redisfrontier.ClientOptions(o), nil
}

// newRedisClient returns a client of the crawl's Redis: of the server of
// -redis, or of the cluster of -redis_cluster. With logger, it logs each
// outage once, and its end (see outageWatch).
func newRedisClient(cfg *config, logger *slog.Logger) (redis.UniversalClient, error) {
	if len(cfg.cluster) > 0 {
		// As redisfrontier.OpenCluster makes it (the command makes its
		// own, for the outage watch): the slots read anew every second
		// in use, so that after a failover the client does not dial
		// the dead master for a minute.
		rdb := redis.NewClusterClient(redisfrontier.ClusterOptions(cfg.cluster))
		if logger != nil {
			// On the cluster's calls, and on each node's: the Frontier
			// sends some calls to a master's own client (the writes
			// -redis_wait_replicas WAITs for, what it counts on each
			// master), which the cluster's hooks do not see.
			w := &outageWatch{logger: logger, server: strings.Join(cfg.cluster, ","), quiet: outageQuiet, want: cfg.waitReplicas}
			cfg.watch = w
			rdb.AddHook(w)
			rdb.OnNewNode(func(node *redis.Client) { node.AddHook(nodeWatch{w}) })
		}
		return rdb, nil
	}
	o, err := redisOptions(cfg)
	if err != nil {
		return nil, err
	}
	rdb := redis.NewClient(o)
	if logger != nil {
		cfg.watch = &outageWatch{logger: logger, server: redactURL(cfg.redis), dials: true, want: cfg.waitReplicas}
		rdb.AddHook(cfg.watch)
	}
	return rdb, nil
}

// waitRedisErr is the error of a Redis that did not answer within
// -redis_wait, or that refused the client (see answers), or of a node of
// -redis_cluster that replied an error.
func waitRedisErr(cfg *config, err error) error {
	var reply redis.Error
	if len(cfg.cluster) > 0 {
		if errors.As(err, &reply) {
			return fmt.Errorf("%s: not a Redis Cluster: %w", cfg.redisFlag(), err)
		}
		return fmt.Errorf("%s: no node of the cluster answered that it is up in %v (-redis_wait): %w", cfg.redisFlag(), cfg.redisWait, err)
	}
	addr := cfg.redis
	if o, perr := redisOptions(cfg); perr == nil {
		addr = o.Addr
	}
	if errors.As(err, &reply) {
		return fmt.Errorf("%s: Redis at %s refused the connection: %w", cfg.redisFlag(), addr, err)
	}
	return fmt.Errorf("%s: Redis at %s did not answer in %v (-redis_wait): %w", cfg.redisFlag(), addr, cfg.redisWait, err)
}

// openRedis opens the crawl on the Redis of -redis or -redis_cluster once
// it answers: it waits for it up to -redis_wait (0: as long as it takes),
// and past that returns an error that names the server or the cluster and
// what kept it from answering. ctx ending meanwhile (Ctrl-C) is no error:
// the Run that follows then returns at once, interrupted. Later, while a
// server cannot be reached, the crawl waits for it (the Frontier does);
// logger says so once an outage, and once it is over.
func openRedis(ctx context.Context, cfg *config, logger *slog.Logger) (*redisfrontier.Frontier, redis.UniversalClient, error) {
	// The client logs each failed dial while a server is down (every
	// few hundred milliseconds): through the command's log at debug
	// level (-v); the outage watch says it once.
	redis.SetLogger(redisLog{logger})
	rdb, err := newRedisClient(cfg, logger)
	if err != nil {
		return nil, nil, err
	}
	// The Frontier closes only a client Open made: this one, made here
	// for the hook, lives as long as the process.
	opts := &redisfrontier.Options{Name: cfg.crawlName, TTL: cfg.redisTTL, WaitReplicas: cfg.waitReplicas}
	if opts.TTL == 0 {
		opts.TTL = -1 // -redis_ttl 0 keeps the keys
	}
	if len(cfg.cluster) > 0 {
		opts.Shards = redisfrontier.DefaultShards
	}
	f := redisfrontier.New(rdb, opts)
	if err := waitRedis(ctx, rdb, cfg.redisWait); err != nil {
		f.Close()
		rdb.Close()
		return nil, nil, waitRedisErr(cfg, err)
	}
	return f, rdb, nil
}

// waitRedis waits until the Redis of rdb answers (see answers), for at
// most wait (0: no limit), or until ctx ends (which is no error). It
// returns the last reason it did not answer, or at once the error a
// cluster's node replied.
func waitRedis(ctx context.Context, rdb redis.UniversalClient, wait time.Duration) error {
	wctx := ctx
	if wait > 0 {
		var cancel context.CancelFunc
		wctx, cancel = context.WithTimeout(ctx, wait)
		defer cancel()
	}
	var last error
	backoff := 50 * time.Millisecond
	for {
		pctx, cancel := context.WithTimeout(wctx, 2*time.Second)
		err := answersBy(pctx, rdb)
		cancel()
		var reply redis.Error
		if err == nil || errors.As(err, &reply) {
			return err
		}
		if ctx.Err() != nil {
			return nil
		}
		if errors.Is(err, context.DeadlineExceeded) {
			if last == nil {
				// Cut within the client's own tries (a wait under
				// its dial retries' time): a dial of our own says
				// why, if the address refuses it.
				last = dialReason(wctx, rdb)
			}
		} else {
			last = err
		}
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-wctx.Done():
			t.Stop()
			if ctx.Err() != nil {
				return nil
			}
			return last
		}
		backoff = min(2*backoff, time.Second)
	}
}

// dialReason dials the server (or each seed node) of rdb, for at most
// 500ms, and returns why it could not connect, or "no reply" if it did:
// the server takes connections and does not answer (stopped, overloaded).
func dialReason(ctx context.Context, rdb redis.UniversalClient) error {
	type target struct{ network, addr string }
	var ts []target
	switch c := rdb.(type) {
	case *redis.Client:
		o := c.Options()
		ts = append(ts, target{o.Network, o.Addr})
	case *redis.ClusterClient:
		for _, a := range c.Options().Addrs {
			ts = append(ts, target{"tcp", a})
		}
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 500*time.Millisecond)
	defer cancel()
	var d net.Dialer
	var first error
	for _, t := range ts {
		if t.network == "" {
			t.network = "tcp"
		}
		c, err := d.DialContext(ctx, t.network, t.addr)
		if err == nil {
			c.Close()
			return errors.New("no reply")
		}
		if first == nil {
			first = err
		}
	}
	if first == nil {
		first = errors.New("no reply")
	}
	return first
}

// answersBy is answers given up when ctx ends: go-redis does not bound a
// reply's wait by ctx (a server stopped with SIGSTOP holds the connection
// open, and the client waits its read timeout, then retries), so that
// -redis_wait would be exceeded by seconds. The question goes on in the
// background until the client's own timeouts end it.
func answersBy(ctx context.Context, rdb redis.UniversalClient) error {
	done := make(chan error, 1)
	go func() { done <- answers(ctx, rdb) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// answers returns nil if the Redis of rdb answers. A server answers when
// it replies to PING, even with an error that says it is not ready yet
// (LOADING, BUSY, MASTERDOWN: see redisfrontier.Transient): that is the
// crawl's to wait out. Any other
// error reply (NOAUTH or WRONGPASS: a password missing or wrong; ERR: a
// database it does not have) refuses the client, and is returned as it
// is, a redis.Error, for waiting does not mend it. A cluster answers when
// a node of it replies to CLUSTER INFO with cluster_state:ok; a node's
// ERR reply (a server not in cluster mode) is returned so too.
func answers(ctx context.Context, rdb redis.UniversalClient) error {
	c, ok := rdb.(*redis.ClusterClient)
	if !ok {
		err := rdb.Ping(ctx).Err()
		var reply redis.Error
		if errors.As(err, &reply) && redisfrontier.Transient(err) {
			return nil
		}
		return err
	}
	info, err := c.ClusterInfo(ctx).Result()
	var reply redis.Error
	if errors.As(err, &reply) && !strings.HasPrefix(reply.Error(), "ERR ") {
		// CLUSTERDOWN, LOADING, TRYAGAIN: a cluster on its way up.
		return errors.New(reply.Error())
	}
	if err != nil {
		return err
	}
	if !strings.Contains(info, "cluster_state:ok") {
		return errors.New("cluster_state is not ok")
	}
	return nil
}

// outageWatch is a hook of the Redis client (of a server, or of a Redis
// Cluster) that logs, once an outage, that Redis does not answer (a call
// failed for the network, a timeout included, or with a reply saying the
// server is not ready: loading its data, a cluster's master lost, a
// failover under way), and once that it answers again: when a call
// succeeds after quiet without a failure (a cluster's; a server's is 0),
// so that the calls that go on meanwhile to a cluster's live masters do
// not end the outage while those of a lost one's slots still fail (the
// Frontier tries them again at least every 2s). By the calls: a server
// stopped (SIGSTOP), or cut off without a reset, still accepts
// connections, and never answers on them; so a call with no reply after
// outageSilence is a failure too (a call the client timed out may be
// tried again by it before it fails: a stopped server went unlogged for 5
// s and more). And, of a server (with dials), by the dials that fail: the
// client tries a refused dial again within one call, which a short
// outage (2 s) let succeed, unlogged. Only what began after the outage's
// start ends it, and what began before its end does not start another:
// a call made before an outage that succeeds as it begins, or one made
// during it that fails just after it (a dial refused, a reply late by
// outageSilence), logged it twice.
type outageWatch struct {
	logger *slog.Logger
	server string // the -redis URL without its password, or the seed nodes
	quiet  time.Duration
	dials  bool // a failed dial is a failure (see above)

	// replied is set once Redis has answered a call (a reply, an error
	// one included).
	replied atomic.Bool

	mu     sync.Mutex
	down   bool
	failed time.Time // the last failure
	downAt time.Time // when the outage began
	upAt   time.Time // when the last one ended
	okAt   time.Time // the last success of a call begun in the outage

	// With -redis_wait_replicas: want replicas a write waits for; short
	// while the WAITs get fewer (a master with no replica up, which the
	// crawl waits out with no error to log), shortAt the last such.
	want    int
	short   bool
	shortAt time.Time
	fullAt  time.Time // the last WAIT that got them all
}

// outageQuiet is outageWatch's quiet on a Redis Cluster, and
// outageSilence how long a call waits for its reply before the watch
// takes Redis for down. Redis serves one command at a time: one that has
// not replied in 3 s serves no one.
const (
	outageQuiet   = 3 * time.Second
	outageSilence = 3 * time.Second
)

// note notes how a call (or a dial) begun at start ended: err.
func (w *outageWatch) note(ctx context.Context, start time.Time, err error) {
	if err != nil && ctx.Err() != nil {
		return // the caller gave up, not Redis
	}
	var reply redis.Error
	if err == nil || errors.As(err, &reply) {
		w.replied.Store(true)
	}
	failed := err != nil && (!errors.As(err, &reply) || redisfrontier.Transient(err))
	w.mu.Lock()
	defer w.mu.Unlock()
	now := time.Now()
	switch {
	case failed:
		if !w.down && start.Before(w.upAt) {
			return // begun in the outage just ended
		}
		w.failed = now
		if !w.down {
			w.down, w.downAt = true, now
			w.logger.Warn("Redis does not answer: waiting for it", "redis", w.server, "err", err)
		}
	case w.down && !start.Before(w.downAt) && now.Sub(w.failed) >= w.quiet:
		w.down, w.upAt = false, now
		w.logger.Info("Redis answers again", "redis", w.server)
	case w.down && !start.Before(w.downAt):
		w.okAt = now
	}
}

// replicas notes the WAITs of a call (see outageWatch.want): one that got
// fewer replicas than wanted starts a shortfall, logged once; one that got
// them all, quiet after the last shortfall (another master's may still
// be short), ends it.
func (w *outageWatch) replicas(cmds []redis.Cmder) {
	if w.want <= 0 {
		return
	}
	for _, c := range cmds {
		if c.Name() != "wait" || c.Err() != nil {
			continue
		}
		var got int64
		switch c := c.(type) {
		case *redis.Cmd:
			n, err := c.Int64()
			if err != nil {
				continue
			}
			got = n
		case *redis.IntCmd:
			got = c.Val()
		default:
			continue
		}
		w.mu.Lock()
		now := time.Now()
		switch {
		case got < int64(w.want):
			w.shortAt = now
			if !w.short {
				w.short = true
				w.logger.Warn("a master's writes reach fewer replicas than -redis_wait_replicas: the crawl waits until enough are up", "redis", w.server, "replicas", got, "want", w.want)
			}
		case w.short:
			w.fullAt = now
			if now.Sub(w.shortAt) >= max(w.quiet, outageQuiet) {
				w.short = false
				w.logger.Info("the writes reach enough replicas again", "redis", w.server)
			}
		}
		w.mu.Unlock()
	}
}

// settle ends an outage that a call begun in it, and succeeding after its
// last failure, ended before quiet had passed: the crawl is over, and no
// call will come to say so (on a Redis Cluster, a crawl that ended within
// outageQuiet of an outage's end logged the outage and never its end).
func (w *outageWatch) settle() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.down && w.okAt.After(w.failed) {
		w.down, w.upAt = false, time.Now()
		w.logger.Info("Redis answers again", "redis", w.server)
	}
	if w.short && w.fullAt.After(w.shortAt) {
		w.short = false
		w.logger.Info("the writes reach enough replicas again", "redis", w.server)
	}
}

func (w *outageWatch) DialHook(next redis.DialHook) redis.DialHook {
	if !w.dials {
		return next
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		start := time.Now()
		c, err := next(ctx, network, addr)
		if err != nil {
			// A dial that succeeds tells nothing: a stopped server
			// takes connections.
			w.note(ctx, start, err)
		}
		return c, err
	}
}

func (w *outageWatch) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		start := time.Now()
		t := w.watch(ctx, start)
		err := next(ctx, cmd)
		t.Stop()
		w.note(ctx, start, err)
		w.replicas([]redis.Cmder{cmd})
		return err
	}
}

func (w *outageWatch) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		start := time.Now()
		t := w.watch(ctx, start)
		err := next(ctx, cmds)
		t.Stop()
		w.note(ctx, start, err)
		w.replicas(cmds)
		return err
	}
}

// nodeWatch is outageWatch on a cluster node's own client, but for the
// client's reads of the cluster's slots (CLUSTER SLOTS, ...), which it
// asks of any node, a replica or a node long dead included, and which
// fail over to the next: the cluster answers all the same.
type nodeWatch struct{ *outageWatch }

func (w nodeWatch) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	watched := w.outageWatch.ProcessHook(next)
	return func(ctx context.Context, cmd redis.Cmder) error {
		if cmd.Name() == "cluster" {
			return next(ctx, cmd)
		}
		return watched(ctx, cmd)
	}
}

// watch notes a failure if the call under ctx, begun at start, has no
// reply within outageSilence; the caller stops the timer it returns when
// it has.
func (w *outageWatch) watch(ctx context.Context, start time.Time) *time.Timer {
	return time.AfterFunc(outageSilence, func() {
		w.note(ctx, start, fmt.Errorf("no reply in %v", outageSilence))
	})
}

// redisLog is the Redis client's logger, writing to the command's log at
// debug level.
type redisLog struct{ l *slog.Logger }

func (r redisLog) Printf(ctx context.Context, format string, v ...any) {
	r.l.DebugContext(ctx, strings.TrimPrefix(fmt.Sprintf(format, v...), "redis: "))
}
