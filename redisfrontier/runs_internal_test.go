package redisfrontier

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/asyncrawl/crawl"
	"github.com/asyncrawl/crawl/redisfrontier/redistest"
	"github.com/redis/go-redis/v9"
)

// commandCalls returns the calls of command cmd (lower case) the server
// of f counted since its stats were last reset (INFO commandstats),
// those the scripts made included.
func commandCalls(t *testing.T, f *Frontier, cmd string) int {
	t.Helper()
	info, err := f.rdb.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(info, "cmdstat_"+cmd+":calls=")
	if !ok {
		return 0
	}
	n, _ := strconv.Atoi(after[:strings.IndexByte(after, ',')])
	return n
}

// takeCall runs the take script once for want leases and returns what it
// leased, by URL, in order.
func takeCall(t *testing.T, f *Frontier, want int) []string {
	t.Helper()
	var urls []string
	for _, l := range takeLeased(t, f, want, false) {
		r, err := decodeRequest(l.body)
		if err != nil {
			t.Fatal(err)
		}
		urls = append(urls, r.URL)
	}
	return urls
}

// ackCall runs the ack script once with args and returns its field of
// the acks (see ackScript).
func ackCall(t *testing.T, f *Frontier, args []any) string {
	t.Helper()
	seq, low := f.beginOp()
	reply, err := f.evalAs(context.Background(), ackScript, seq, low, args...)
	f.endOp(seq)
	if err != nil {
		t.Fatal(err)
	}
	r := fields{s: reply}
	r.next() // the server's run
	return r.next()
}

// takeLeased runs the take script once for want leases, and leases ahead
// if ahead, and returns what it leased.
func takeLeased(t *testing.T, f *Frontier, want int, ahead bool) []leased {
	t.Helper()
	seq, low := f.beginOp()
	reply, err := f.evalAs(context.Background(), takeScript, seq, low, takeArgs(want, ahead)...)
	f.endOp(seq)
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := parseTake(reply)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// pagesOf returns n Requests of host, /1 to /n.
func pagesOf(host string, n int) []crawl.Request {
	var rs []crawl.Request
	for i := 1; i <= n; i++ {
		rs = append(rs, crawl.Request{URL: fmt.Sprintf("https://%s/%d", host, i), Depth: 1})
	}
	return rs
}

// TestTakeRuns: a host with room and no delay gives a take its share of
// the leases the call wants among the hosts ready (a run), popped from its
// queue at once, in their order; never beyond its HostWorkers, the page
// budget or 16, and one lease a turn for a host with a delay. a is first
// in the ready set (pushed first), b second.
func TestTakeRuns(t *testing.T) {
	for _, c := range []struct {
		name      string
		p         crawl.Policy
		want      int
		leases    string // hosts of the leases, in order
		lpopCalls int
	}{
		// Two hosts ready: half each.
		{"room", crawl.Policy{HostWorkers: 100}, 8, "aaaabbbb", 2},
		// Two hosts ready, 3 wanted: a's share is 2, b's the 1 left.
		{"odd", crawl.Policy{HostWorkers: 100}, 3, "aab", 2},
		// A run stops at a host's 3 slots.
		{"host workers", crawl.Policy{HostWorkers: 3}, 8, "aaabbb", 2},
		// 5 pages in all: b's run is cut by the budget.
		{"budget", crawl.Policy{HostWorkers: 100, MaxPages: 5}, 8, "aaaab", 2},
		// A host with a delay gives one lease a turn.
		{"delay", crawl.Policy{HostWorkers: 100, HostDelay: time.Hour}, 8, "ab", 2},
		// 30 wanted: a 15, b its 10 (its queue then empty), a 5 more in
		// a second pass.
		{"long", crawl.Policy{HostWorkers: 100}, 30, strings.Repeat("a", 15) + strings.Repeat("b", 10) + "aaaaa", 3},
		// A run is at most 16: a 16, b its 10, a its last 4.
		{"longer", crawl.Policy{HostWorkers: 100}, 40, strings.Repeat("a", 16) + strings.Repeat("b", 10) + strings.Repeat("a", 4), 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			f := startFrontier(t, "runs", c.p)
			defer f.Close()
			if _, err := f.Push(ctx, pagesOf("a.example", 20)...); err != nil {
				t.Fatal(err)
			}
			if _, err := f.Push(ctx, pagesOf("b.example", 10)...); err != nil {
				t.Fatal(err)
			}
			if err := f.rdb.ConfigResetStat(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			urls := takeCall(t, f, c.want)
			var hosts strings.Builder
			next := map[byte]int{}
			for _, u := range urls {
				h := u[len("https://")]
				next[h]++
				if want := fmt.Sprintf("https://%c.example/%d", h, next[h]); u != want {
					t.Errorf("lease %q, want %q: a host's leases in the order of its queue", u, want)
				}
				hosts.WriteByte(h)
			}
			if hosts.String() != c.leases {
				t.Errorf("leased from hosts %q, want %q (%v)", hosts.String(), c.leases, urls)
			}
			if n := commandCalls(t, f, "lpop"); n != c.lpopCalls {
				t.Errorf("%d LPOPs for the call, want %d: one a host's turn", n, c.lpopCalls)
			}
			for _, h := range []string{"a", "b"} {
				n, _ := f.rdb.HGet(ctx, f.prefix+"h:"+crawl.HostKey("https://"+h+".example/"), "n").Int()
				if w := strings.Count(hosts.String(), h); n != w {
					t.Errorf("host %s counts %d leases out, want %d", h, n, w)
				}
			}
			cnt, err := f.Counts(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if cnt.Leased != len(urls) || cnt.Queued != 30-len(urls) || cnt.Pages != len(urls) {
				t.Errorf("Counts %+v, want %d leased, %d queued, %d pages", cnt, len(urls), 30-len(urls), len(urls))
			}
		})
	}
}

// TestAckSumsByHost: the usual acks of one call count their hosts' leases
// out down once a host, and a host that was at its HostWorkers is ready
// again after: a Take gets its next URL.
func TestAckSumsByHost(t *testing.T) {
	ctx := context.Background()
	f := startFrontier(t, "acksums", crawl.Policy{HostWorkers: 6, LeaseTerm: time.Minute})
	defer f.Close()
	if _, err := f.Push(ctx, pagesOf("a.example", 8)...); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Push(ctx, pagesOf("b.example", 2)...); err != nil {
		t.Fatal(err)
	}
	var ls []*crawl.Lease
	for range 8 {
		l, err := f.Take(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
	}
	var batch []*pendingAck
	for _, l := range ls {
		batch = append(batch, usualAck(l.ID, crawl.Result{URL: l.URL, Status: 200}, nil))
	}
	if err := f.rdb.ConfigResetStat(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if acked := ackCall(t, f, appendAcks([]any{"-"}, batch, func(int) []admission { return nil })); acked != strings.Repeat("10 ", 8) {
		t.Errorf("acks: reply %q, want each owned", acked)
	}
	if n := commandCalls(t, f, "hincrby"); n != 2 {
		t.Errorf("%d HINCRBYs for 8 acks of 2 hosts, want 2", n)
	}
	for _, h := range []string{"a", "b"} {
		if n, _ := f.rdb.HGet(ctx, f.prefix+"h:"+crawl.HostKey("https://"+h+".example/"), "n").Int(); n != 0 {
			t.Errorf("host %s counts %d leases out after every ack, want 0", h, n)
		}
	}
	// a was at its 6: its last 2 URLs are taken now.
	for range 2 {
		take, cancel := context.WithTimeout(ctx, 5*time.Second)
		l, err := f.Take(take)
		cancel()
		if err != nil || !strings.HasPrefix(l.URL, "https://a.example/") {
			t.Fatalf("Take after the acks: %v, %v; want a's next URL", l, err)
		}
	}
	c, err := f.Counts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if c.Done != 8 || c.Leased != 2 || c.Queued != 0 {
		t.Errorf("Counts %+v, want 8 done, 2 leased", c)
	}
}

// TestAckLinksOnce: a link two acks of one call send goes to the server
// once, counted as new for the first ack only, as the server would count
// it.
func TestAckLinksOnce(t *testing.T) {
	var o linksOnce
	a := []admission{{fp: 1}, {fp: 2}, {fp: 3}}
	b := []admission{{fp: 2}, {fp: 4}, {fp: 3}, {fp: 4}}
	if got := o.drop(a); len(got) != 3 || &got[0] != &a[0] {
		t.Errorf("first ack's links: %v, want all three, not copied", got)
	}
	got := o.drop(b)
	if len(got) != 1 || got[0].fp != 4 {
		t.Errorf("second ack's links: %v, want fingerprint 4 only", got)
	}
	if b[0].fp != 2 || b[1].fp != 4 || b[2].fp != 3 {
		t.Errorf("the ack's own links changed: %v", b)
	}
	o.reset()
	if got := o.drop(b); len(got) != 3 || got[2].fp != 3 {
		t.Errorf("after reset: %v, want 2, 4 and 3", got)
	}
	// Past the few a scan keeps: 200 links, each sent twice.
	var long []admission
	for i := range 400 {
		long = append(long, admission{fp: uint64(100 + i%200)})
	}
	o.reset()
	if got := o.drop(long); len(got) != 200 || got[199].fp != 299 {
		t.Errorf("200 links twice: %d kept, want the first 200", len(got))
	}
	if got := o.drop([]admission{{fp: 5}, {fp: 150}}); len(got) != 1 || got[0].fp != 5 {
		t.Errorf("then 5 and 150: %v, want 5 only", got)
	}

	ctx := context.Background()
	f := startFrontier(t, "linksonce", crawl.Policy{HostWorkers: 8})
	defer f.Close()
	if _, err := f.Push(ctx, pagesOf("a.example", 2)...); err != nil {
		t.Fatal(err)
	}
	l1, err := f.Take(ctx)
	if err != nil {
		t.Fatal(err)
	}
	l2, err := f.Take(ctx)
	if err != nil {
		t.Fatal(err)
	}
	shared := crawl.Request{URL: "https://a.example/shared", Depth: 2}
	var batch []*pendingAck
	for i, links := range [][]crawl.Request{{shared}, {shared, {URL: "https://a.example/own", Depth: 2}}} {
		l := []*crawl.Lease{l1, l2}[i]
		a := usualAck(l.ID, crawl.Result{URL: l.URL, Status: 200}, nil)
		a.links = f.sift(links, f.bits).links
		batch = append(batch, a)
	}
	if err := f.rdb.ConfigResetStat(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	var once linksOnce
	if acked := ackCall(t, f, appendAcksOnce([]any{"-"}, batch, &once)); acked != "11 11 " {
		t.Errorf("acks: reply %q, want \"11 11 \" (each owned, one new link each)", acked)
	}
	// 2 SADDs to the seen set, and 1 of the call's hosts to the set
	// hosts (see queueAll).
	if n := commandCalls(t, f, "sadd"); n != 3 {
		t.Errorf("%d SADDs for 3 links of which 2 distinct, of one host, want 3: 2 to the seen set, 1 to hosts", n)
	}
	c, err := f.Counts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if c.Queued != 2 || c.Done != 2 {
		t.Errorf("Counts %+v, want 2 done, 2 queued", c)
	}
}

// TestShardedLinksOnce: in a crawl of several shards (no seen cache), a
// link two acks of one batch send is asked of the seen set and sent once,
// with the first.
func TestShardedLinksOnce(t *testing.T) {
	ctx := context.Background()
	s := redistest.Start(t)
	f := openSharded(t, s, "shardedonce", crawl.Policy{HostWorkers: 8})
	shared := crawl.Request{URL: "https://a.example/shared", Depth: 2}
	other := crawl.Request{URL: "https://b.example/own", Depth: 2}
	a1 := &pendingAck{links: admissions([]crawl.Request{shared}, f.bits)}
	a2 := &pendingAck{links: admissions([]crawl.Request{other, shared}, f.bits)}
	if err := f.rdb.ConfigResetStat(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	f.siftBatch([]*pendingAck{a1, a2})
	if len(a1.links) != 1 || len(a2.links) != 1 || a2.links[0].fp != fingerprint(other.URL) {
		t.Errorf("links after: %v and %v, want the shared one with the first ack only", a1.links, a2.links)
	}
	if n := commandCalls(t, f, "sismember"); n != 2 {
		t.Errorf("%d SISMEMBERs for 2 distinct links, want 2", n)
	}
}

// TestRunShortLeavesReady: a run cut short by its host's queue (the LPOP
// gave fewer than asked) leaves the host out of the ready set, its queue
// empty: a Take that finds nothing is not told to ask again at once.
func TestRunShortLeavesReady(t *testing.T) {
	ctx := context.Background()
	f := startFrontier(t, "runshort", crawl.Policy{HostWorkers: 100})
	defer f.Close()
	if _, err := f.Push(ctx, pagesOf("a.example", 3)...); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Push(ctx, pagesOf("b.example", 20)...); err != nil {
		t.Fatal(err)
	}
	if urls := takeCall(t, f, 8); len(urls) != 8 {
		t.Fatalf("%d leases, want 8 (a's 3, then 5 of b)", len(urls))
	}
	a := crawl.HostKey("https://a.example/")
	if err := f.rdb.ZScore(ctx, f.prefix+"ready", a).Err(); err != redis.Nil {
		t.Errorf("host a, its queue empty after its run, is in the ready set (ZSCORE: %v)", err)
	}
}

// TestAheadAfterUsualAck: a call that acks a lease of a host the usual
// way, then promotes another lease's lease ahead asking for more, makes
// none: the host has room once the usual ack is counted (leases ahead are
// made only for a host at its HostWorkers), and another process's Take
// gets the host's next URL.
func TestAheadAfterUsualAck(t *testing.T) {
	ctx := context.Background()
	p := crawl.Policy{HostWorkers: 2, LeaseTerm: time.Minute}
	f := startFrontier(t, "aheadusual", p)
	defer f.Close()
	if _, err := f.Push(ctx, pagesOf("a.example", 12)...); err != nil {
		t.Fatal(err)
	}
	// The second lease fills a: it comes with leases ahead.
	first, second := takeLeased(t, f, 1, false), takeLeased(t, f, 1, true)
	if len(first) != 1 || len(second) != 1+aheadDepth || second[1].kind != 'S' {
		t.Fatalf("takes gave %d and %d leases, want 1 and 1+%d ahead", len(first), len(second), aheadDepth)
	}
	var rest []string
	for _, g := range second[2:] {
		rest = append(rest, g.id)
	}
	promo := usualAck(second[0].id, crawl.Result{Status: 200}, nil)
	promo.args[aheadOp] = "+" + second[1].id + "," + strings.Join(rest, ",")
	promo.args[aheadTok] = "2.abcdef"
	batch := []*pendingAck{usualAck(first[0].id, crawl.Result{Status: 200}, nil), promo}
	if acked := ackCall(t, f, appendAcks([]any{"-"}, batch, func(int) []admission { return nil })); acked != "10 10 " {
		t.Fatalf("acks: reply %q, want both owned", acked)
	}
	host := crawl.HostKey("https://a.example/")
	kinds, n := serverLeases(t, f, host)
	if n != "1" || kinds["S"] != aheadDepth-1 {
		t.Errorf("after the call: host's leases out %s, %d leases ahead; want 1 and the %d left of the chain (none new: the host has room)", n, kinds["S"], aheadDepth-1)
	}
	g := New(f.rdb, &Options{Name: "aheadusual"})
	if err := g.Start(ctx, p); err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	short, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if l, err := g.Take(short); err != nil {
		t.Errorf("another process's Take, host a at 1 of its 2: %v; want a's next URL", err)
	} else if l.URL != "https://a.example/7" {
		t.Errorf("another process's Take: %s, want https://a.example/7", l.URL)
	}
}
