package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/asyncrawl/crawl/redisfrontier"
	"github.com/redis/go-redis/v9"
)

// checkRedisFlags returns what is wrong with the flags of a shared crawl,
// before anything starts: -redis must be a Redis URL, and the flags that
// only mean something with it need it.
func checkRedisFlags(cfg *config, leaseSet bool) error {
	if cfg.redis == "" {
		switch {
		case cfg.crawlName != "":
			return fmt.Errorf("-crawl names a crawl shared through Redis: give -redis URL too")
		case leaseSet:
			return fmt.Errorf("-lease is the lease term of a crawl shared through Redis: give -redis URL too")
		case cfg.waitGiven:
			return fmt.Errorf("-redis_wait is how long to wait for the Redis server of -redis: give -redis URL too")
		case cfg.ttlGiven:
			return fmt.Errorf("-redis_ttl is how long a finished crawl's keys stay in Redis: give -redis URL too")
		}
		return nil
	}
	switch {
	case cfg.state != "":
		return fmt.Errorf("-redis and -state are exclusive: a crawl is kept either in Redis, shared, or in a file, by one process")
	case cfg.demo:
		return fmt.Errorf("-redis cannot share -demo: the demo site is on a loopback port of this process")
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
	return o, nil
}

// waitRedisErr is the error of a server that did not answer within
// -redis_wait.
func waitRedisErr(cfg *config, o *redis.Options, err error) error {
	return fmt.Errorf("-redis %s: Redis at %s did not answer in %v (-redis_wait): %w", redactURL(cfg.redis), o.Addr, cfg.redisWait, err)
}

// openRedis opens the crawl on the Redis server of -redis once the server
// answers: it waits for it up to -redis_wait (0: as long as it takes),
// and past that returns an error that names the server and what kept it
// from answering. ctx ending meanwhile (Ctrl-C) is no error: the Run that
// follows then returns at once, interrupted. Later, while the server
// cannot be reached, the crawl waits for it (the Frontier does); logger
// says so once an outage, and once it is over.
func openRedis(ctx context.Context, cfg *config, logger *slog.Logger) (*redisfrontier.Frontier, error) {
	o, err := redisOptions(cfg)
	if err != nil {
		return nil, err
	}
	// The client logs each failed dial while the server is down (every
	// few hundred milliseconds): through the command's log at debug
	// level (-v); the outage watch says it once.
	redis.SetLogger(redisLog{logger})
	rdb := redis.NewClient(o)
	rdb.AddHook(&outageWatch{logger: logger, url: cfg.redis})
	// The Frontier closes only a client Open made: this one, made here
	// for the hook, lives as long as the process.
	ttl := cfg.redisTTL
	if ttl == 0 {
		ttl = -1 // -redis_ttl 0 keeps the keys
	}
	f := redisfrontier.New(rdb, &redisfrontier.Options{Name: cfg.crawlName, TTL: ttl})
	if err := waitRedis(ctx, rdb, cfg.redisWait); err != nil {
		f.Close()
		rdb.Close()
		return nil, waitRedisErr(cfg, o, err)
	}
	return f, nil
}

// waitRedis waits until the server of rdb answers, for at most wait (0: no
// limit), or until ctx ends (which is no error). It returns the last
// reason the server did not answer.
func waitRedis(ctx context.Context, rdb *redis.Client, wait time.Duration) error {
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
		err := rdb.Ping(pctx).Err()
		cancel()
		var reply redis.Error
		if err == nil || errors.As(err, &reply) {
			// It answers: an error it replies (LOADING, NOAUTH) is the
			// crawl's to wait out or to report.
			return nil
		}
		if ctx.Err() != nil {
			return nil
		}
		if errors.Is(err, context.DeadlineExceeded) {
			if last == nil {
				last = errors.New("no reply to PING")
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

// outageWatch is a hook of the Redis client that logs, once an outage,
// that the server does not answer, and once that it does again: a dial
// that fails begins an outage, one that succeeds ends it.
type outageWatch struct {
	logger *slog.Logger
	url    string

	mu   sync.Mutex
	down bool
}

func (w *outageWatch) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := next(ctx, network, addr)
		if err != nil && ctx.Err() != nil {
			return c, err // the caller gave up, not the server
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		switch {
		case err != nil && !w.down:
			w.down = true
			w.logger.Warn("Redis does not answer: waiting for it", "redis", w.url, "err", err)
		case err == nil && w.down:
			w.down = false
			w.logger.Info("Redis answers again", "redis", w.url)
		}
		return c, err
	}
}

func (w *outageWatch) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

func (w *outageWatch) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// redisLog is the Redis client's logger, writing to the command's log at
// debug level.
type redisLog struct{ l *slog.Logger }

func (r redisLog) Printf(ctx context.Context, format string, v ...any) {
	r.l.DebugContext(ctx, strings.TrimPrefix(fmt.Sprintf(format, v...), "redis: "))
}
