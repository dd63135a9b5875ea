package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
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
		}
		return nil
	}
	switch {
	case cfg.state != "":
		return fmt.Errorf("-redis and -state are exclusive: a crawl is kept either in Redis, shared, or in a file, by one process")
	case cfg.demo:
		return fmt.Errorf("-redis cannot share -demo: the demo site is on a loopback port of this process")
	}
	if _, err := redis.ParseURL(cfg.redis); err != nil {
		return fmt.Errorf("-redis %s: %v (want redis://[[USER]:PASSWORD@]HOST[:PORT][/DB], rediss:// for TLS, or unix:///PATH)", cfg.redis, err)
	}
	return nil
}

// openRedis opens the crawl on the Redis server of -redis. It does not
// wait for the server, which the crawl does (and goes on waiting while it
// is unreachable); it only warns, on logger, when the server does not
// answer at once, so that a wrong address does not look like a crawl with
// nothing to do.
func openRedis(ctx context.Context, cfg *config, logger *slog.Logger) (*redisfrontier.Frontier, error) {
	// The client logs each failed dial while the server is down: through
	// the command's log, which -q quiets, not straight to stderr.
	redis.SetLogger(redisLog{logger})
	f, err := redisfrontier.Open(ctx, cfg.redis, &redisfrontier.Options{Name: cfg.crawlName})
	if err != nil {
		return nil, fmt.Errorf("-redis %s: %w", cfg.redis, err)
	}
	o, err := redis.ParseURL(cfg.redis)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("-redis %s: %w", cfg.redis, err)
	}
	o.MaxRetries = -1
	rdb := redis.NewClient(o)
	defer rdb.Close()
	pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if err := rdb.Ping(pctx).Err(); err != nil && ctx.Err() == nil {
		logger.Warn("Redis does not answer: waiting for it", "redis", cfg.redis, "err", err)
	}
	return f, nil
}

// redisLog is the Redis client's logger, writing to the command's log.
type redisLog struct{ l *slog.Logger }

func (r redisLog) Printf(ctx context.Context, format string, v ...any) {
	r.l.WarnContext(ctx, strings.TrimPrefix(fmt.Sprintf(format, v...), "redis: "))
}
