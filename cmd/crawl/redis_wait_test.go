package main

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/asyncrawl/crawl/redisfrontier/redistest"
	"github.com/redis/go-redis/v9"
)

// deadAddr returns a loopback address where nothing listens.
func deadAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close() // nothing listens there once it returns
	return l.Addr().String()
}

// -redis to a port where nothing listens: the command waits -redis_wait,
// warns once that Redis does not answer (the client's own complaints,
// one each failed dial, only with -v), then exits 1 with an error that
// names the server and why it did not answer; with -q it says only that.
// Nothing is fetched.
func TestRedisWait(t *testing.T) {
	t.Parallel()
	addr := deadAddr(t)
	s := newSharedSite(t, 3, 0)
	url := "redis://" + addr + "/0"
	for _, tt := range []struct {
		quiet bool
		warn  int    // the warnings that Redis does not answer
		wait  string // under 2s, the wait ends within the client's own tries
	}{{false, 1, "2s"}, {true, 0, "2s"}, {true, 0, "1s"}} {
		args := []string{"-redis", url, "-redis_wait", tt.wait, s.URL + "/p/0"}
		if tt.quiet {
			args = append([]string{"-q"}, args...)
		}
		r := runCrawl(t, args...)
		lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
		last := lines[len(lines)-1]
		for _, want := range []string{"crawl: -redis " + url, "Redis at " + addr + " did not answer in " + tt.wait + " (-redis_wait)", "connection refused"} {
			if r.code != 1 || !strings.Contains(last, want) {
				t.Errorf("crawl %q, nothing listening: exit %d, last line of stderr %q; want 1 and %q", args, r.code, last, want)
			}
		}
		if n := strings.Count(r.stderr, "Redis does not answer"); n != tt.warn {
			t.Errorf("crawl %q, nothing listening: %d warnings that Redis does not answer, want %d; stderr:\n%s", args, n, tt.warn, r.stderr)
		}
		if n := len(lines); n != tt.warn+1 {
			t.Errorf("crawl %q, nothing listening: %d lines on stderr, want %d (the client's complaints only with -v); stderr:\n%s", args, n, tt.warn+1, r.stderr)
		}
	}
	// A name given is said at once, before Redis answers.
	if r := runCrawl(t, "-q", "-redis", url, "-redis_wait", "1s", "-crawl", "named", s.URL+"/p/0"); r.code != 1 || !strings.HasPrefix(r.stderr, "crawl: crawl named on "+url+"\n") {
		t.Errorf("crawl -crawl named, Redis down: exit %d, stderr %q; want 1, the name line first", r.code, r.stderr)
	}
	if r := runCrawl(t, "-redis_wait", "1s", s.URL+"/p/0"); r.code != 1 || !strings.Contains(r.stderr, "-redis_wait is") {
		t.Errorf("crawl -redis_wait 1s without -redis: exit %d, stderr %q; want 1 and the flag named", r.code, r.stderr)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.fetches) != 0 {
		t.Errorf("%d requests sent, want none", len(s.fetches))
	}
}

// -redis to a Redis that holds its connections and never replies (stopped
// with SIGSTOP): the command gives up after -redis_wait, as it says, not
// after the client's read timeout and its retries (5 s).
func TestRedisWaitFrozen(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	rs.Freeze()
	s := newSharedSite(t, 3, 0)
	start := time.Now()
	r := runCrawlFor(t, 20*time.Second, "-q", "-redis", rs.URL(), "-redis_wait", "1s", s.URL+"/p/0")
	took := time.Since(start)
	if r.code != 1 || !strings.Contains(r.stderr, "did not answer in 1s (-redis_wait)") {
		t.Errorf("crawl -redis_wait 1s, Redis frozen: exit %d, stderr %q; want 1 and the wait named", r.code, r.stderr)
	}
	if took > 3500*time.Millisecond {
		t.Errorf("crawl -redis_wait 1s, Redis frozen: exited after %v, want about 1s", took)
	}
}

// A Redis that answers but refuses the client (a database it does not
// have, a password missing or wrong) is an error at once, naming the
// server and the reply, with -status as with a crawl: waiting does not
// mend it. (The crawl used to wait for good: its scripts' pipelines
// were never sent, and their empty replies were taken for an outage.)
func TestRedisRefuses(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	s := newSharedSite(t, 3, 0)
	check := func(url, want string) {
		t.Helper()
		for _, args := range [][]string{
			{"-q", "-redis", url, "-redis_wait", "10s", s.URL + "/p/0"},
			{"-redis", url, "-crawl", "x", "-status"},
		} {
			r := runCrawlFor(t, 8*time.Second, args...)
			if r.code != 1 || !strings.Contains(r.stderr, "Redis at "+rs.Addr()+" refused the connection: "+want) {
				t.Errorf("crawl %q: exit %d, stderr %q; want 1 at once, the server and %q named", args, r.code, r.stderr, want)
			}
		}
	}
	check("redis://"+rs.Addr()+"/99", "ERR DB index is out of range")
	c := redis.NewClient(&redis.Options{Addr: rs.Addr()})
	defer c.Close()
	if err := c.ConfigSet(t.Context(), "requirepass", "sekrit").Err(); err != nil {
		t.Fatal(err)
	}
	check(rs.URL(), "NOAUTH")
	check("redis://:wrong@"+rs.Addr()+"/0", "WRONGPASS")
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.fetches) != 0 {
		t.Errorf("%d requests sent, want none", len(s.fetches))
	}
}

// Redis stopped mid-crawl, then started again: the process waits it out
// (-redis_wait bounds only the wait at the start) and logs the outage
// once, and once that Redis is back, not each try of the client.
//
// Killed, Redis refuses connections; frozen (SIGSTOP: a server stopped,
// or cut off without a reset), it accepts them and never answers: the
// outage is the same, logged by the calls that fail (it went unlogged
// when only failed dials began one).
func TestRedisOutageLoggedOnce(t *testing.T) {
	t.Parallel()
	for _, frozen := range []bool{false, true} {
		t.Run(map[bool]string{false: "killed", true: "frozen"}[frozen], func(t *testing.T) {
			t.Parallel()
			rs := redistest.Start(t)
			s := newSharedSite(t, 200, 20*time.Millisecond)
			ps := startProcs(t, s, 1, "-redis", rs.URL(), "-redis_wait", "1s", "-workers", "4", s.URL+"/p/0")
			s.waitSent(t, ps[0].name, 20)
			if frozen {
				rs.Freeze()
			} else {
				rs.Kill()
			}
			// Down for longer than -redis_wait, and long enough for the
			// client to try many times (a frozen server's calls time out
			// after the client's 3 s).
			time.Sleep(5 * time.Second)
			if frozen {
				rs.Thaw()
			} else {
				rs.Restart()
			}
			checkFinished(t, s, ps)
			r := ps[0].r
			for what, want := range map[string]int{"Redis does not answer": 1, "Redis answers again": 1, "failed to dial": 0} {
				if n := strings.Count(r.stderr, what); n != want {
					t.Errorf("one outage of Redis, 5s: %q logged %d times, want %d; stderr:\n%s", what, n, want, r.stderr)
				}
			}
			t.Logf("stderr: %s", r.stderr)
		})
	}
}

// A call to one master's own client (as the Frontier sends the writes
// -redis_wait_replicas WAITs for) that fails is an outage too: the
// cluster's hooks do not see such calls, and a master killed went
// unlogged (TestClusterFailover/waited failed so, now and then). The
// client's reads of the slots, which try one node then the next, are not.
func TestClusterNodeCallOutageLogged(t *testing.T) {
	t.Parallel()
	c := redistest.StartCluster(t, 3, 0)
	logger, logged := bufferLogger()
	rdb, err := newRedisClient(&config{cluster: c.Masters()}, logger)
	if err != nil {
		t.Fatal(err)
	}
	defer rdb.Close()
	ctx := context.Background()
	node, err := rdb.(*redis.ClusterClient).MasterForKey(ctx, "crawl:{x}:meta")
	if err != nil {
		t.Fatal(err)
	}
	if err := node.Ping(ctx).Err(); err != nil {
		t.Fatalf("PING %s: %v", node.Options().Addr, err)
	}
	c.Node(node.Options().Addr).Kill()
	// The client's own read of the slots, which it asks of any node and
	// fails over to the next, is no outage.
	if err := node.ClusterSlots(ctx).Err(); err == nil {
		t.Fatalf("CLUSTER SLOTS of %s killed: no error", node.Options().Addr)
	}
	if log := logged(); log != "" {
		t.Errorf("CLUSTER SLOTS of a killed node's client: logged %q, want nothing", log)
	}
	if err := node.Ping(ctx).Err(); err == nil {
		t.Fatalf("PING %s killed: no error", node.Options().Addr)
	}
	if log := logged(); strings.Count(log, "Redis does not answer: waiting for it") != 1 {
		t.Errorf("a call to a killed master's client: the outage logged %d times, want once; log %q", strings.Count(log, "Redis does not answer: waiting for it"), log)
	}
}
