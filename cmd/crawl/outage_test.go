package main

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// bufferLogger returns a logger that writes to memory, safe for
// concurrent use, and a func that returns what it wrote so far.
func bufferLogger() (*slog.Logger, func() string) {
	var mu sync.Mutex
	var log strings.Builder
	logger := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return log.Write(p)
	}), nil))
	return logger, func() string {
		mu.Lock()
		defer mu.Unlock()
		return log.String()
	}
}

// TestOutageWatchOncePerOutage drives the outage watch's hooks as the
// client calls them, in the orders a helper saw log an outage of a
// redis-server not at all (2 s, the client's retries of a refused dial
// within one call outlasting it) or twice (a call begun in the outage
// failing just after it ended, a reply late by outageSilence after it):
// each outage is logged once, and its end once.
func TestOutageWatchOncePerOutage(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connect: connection refused")}
	setup := func() (*outageWatch, func() (down, up int)) {
		logger, logged := bufferLogger()
		w := &outageWatch{logger: logger, server: "redis://127.0.0.1:1/0", dials: true}
		return w, func() (int, int) {
			log := logged()
			return strings.Count(log, "Redis does not answer"), strings.Count(log, "Redis answers again")
		}
	}
	ctx := context.Background()
	// call runs a call through the watch's hook, begun now, ended when
	// end is closed, with err.
	call := func(w *outageWatch, end <-chan struct{}, err error) <-chan struct{} {
		done := make(chan struct{})
		begun := make(chan struct{})
		hook := w.ProcessHook(func(context.Context, redis.Cmder) error {
			close(begun)
			<-end
			return err
		})
		go func() {
			defer close(done)
			hook(ctx, redis.NewStatusCmd(ctx, "ping"))
		}()
		<-begun
		time.Sleep(time.Millisecond) // the next event strictly later
		return done
	}
	now := func() chan struct{} { c := make(chan struct{}); close(c); return c }
	dial := func(w *outageWatch, err error) {
		w.DialHook(func(context.Context, string, string) (net.Conn, error) { return nil, err })(ctx, "tcp", "127.0.0.1:1")
		time.Sleep(time.Millisecond)
	}

	t.Run("refused dials only", func(t *testing.T) {
		w, count := setup()
		dial(w, refused) // the client's own tries within a call
		dial(w, refused)
		<-call(w, now(), nil) // the call succeeds once the server is back
		if down, up := count(); down != 1 || up != 1 {
			t.Errorf("an outage seen by refused dials only: logged %d, its end %d; want 1, 1", down, up)
		}
	})
	t.Run("a call of the outage fails after it", func(t *testing.T) {
		w, count := setup()
		<-call(w, now(), refused) // the outage
		late := make(chan struct{})
		inOutage := time.Now()
		a := call(w, late, refused) // begun in it, failing after its end
		<-call(w, now(), nil)       // the server is back
		close(late)
		<-a
		// The watch's timer of a call begun in the outage, firing
		// after its end.
		w.note(ctx, inOutage, errors.New("no reply in 3s"))
		if down, up := count(); down != 1 || up != 1 {
			t.Errorf("failures of calls begun in the outage, after its end: logged %d outages, %d ends; want 1, 1", down, up)
		}
		<-call(w, now(), refused) // a new outage is one
		if down, _ := count(); down != 2 {
			t.Errorf("a failure of a call begun after the end: logged %d outages, want 2", down)
		}
	})
	t.Run("a call begun before the outage succeeds in it", func(t *testing.T) {
		w, count := setup()
		release := make(chan struct{})
		early := call(w, release, nil) // begun before the outage
		<-call(w, now(), refused)      // the outage
		close(release)
		<-early // its reply came as the server went down: no end
		if down, up := count(); down != 1 || up != 0 {
			t.Fatalf("a call begun before the outage, succeeding in it: logged %d outages, %d ends; want 1, 0", down, up)
		}
		<-call(w, now(), nil)
		if down, up := count(); down != 1 || up != 1 {
			t.Errorf("then a call begun in it succeeds: logged %d outages, %d ends; want 1, 1", down, up)
		}
	})
	t.Run("a cluster's outage that ends as the crawl does", func(t *testing.T) {
		logger, logged := bufferLogger()
		w := &outageWatch{logger: logger, server: "127.0.0.1:1", quiet: outageQuiet}
		<-call(w, now(), refused) // a master lost
		<-call(w, now(), nil)     // its replica promoted: the last calls succeed
		w.settle()                // the crawl is over, before outageQuiet
		if log := logged(); strings.Count(log, "Redis does not answer") != 1 || strings.Count(log, "Redis answers again") != 1 {
			t.Errorf("an outage whose calls succeed again within outageQuiet of the end: log %q; want the outage once, its end once", log)
		}
		w2, count := setup()
		<-call(w2, now(), refused)
		w2.settle() // no call succeeded since: still down, nothing said
		if down, up := count(); down != 1 || up != 0 {
			t.Errorf("an outage with no success after it: logged %d outages, %d ends; want 1, 0", down, up)
		}
	})
	t.Run("writes short of -redis_wait_replicas", func(t *testing.T) {
		logger, logged := bufferLogger()
		w := &outageWatch{logger: logger, server: "127.0.0.1:1", want: 1}
		wait := func(got int64) {
			c := redis.NewCmd(ctx, "wait", 1, 100)
			c.SetVal(got)
			w.ProcessPipelineHook(func(context.Context, []redis.Cmder) error { return nil })(ctx, []redis.Cmder{c})
		}
		count := func() (short, again int) {
			log := logged()
			return strings.Count(log, "fewer replicas than -redis_wait_replicas"), strings.Count(log, "enough replicas again")
		}
		wait(1)
		wait(0) // a master's replica down: the crawl waits, no error
		wait(0)
		if short, again := count(); short != 1 || again != 0 {
			t.Errorf("WAITs short of the replicas wanted: logged %d times, the end %d; want 1, 0", short, again)
		}
		wait(1) // another master's, within outageQuiet: not the end
		if _, again := count(); again != 0 {
			t.Errorf("a full WAIT within outageQuiet of a short one: the end logged")
		}
		w.settle() // the crawl is over: said now
		if short, again := count(); short != 1 || again != 1 {
			t.Errorf("after the crawl: logged %d shortfalls, %d ends; want 1, 1", short, again)
		}
	})
	t.Run("a dial that succeeds tells nothing", func(t *testing.T) {
		w, count := setup()
		<-call(w, now(), refused)
		dial(w, nil)
		if down, up := count(); down != 1 || up != 0 {
			t.Errorf("a dial that succeeds in an outage: logged %d outages, %d ends; want 1, 0", down, up)
		}
	})
	t.Run("a cluster's watch does not count dials", func(t *testing.T) {
		w, count := setup()
		w.dials = false
		dial(w, refused)
		if down, _ := count(); down != 0 {
			t.Errorf("a refused dial on a cluster's watch: logged %d outages, want 0", down)
		}
	})
}
