package redisfrontier

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/asyncrawl/crawl"
	"github.com/asyncrawl/crawl/redisfrontier/redistest"
	"github.com/redis/go-redis/v9"
)

// usualAck returns the usual ack of lease id with Result r and the
// refusals refused, as Ack makes it.
func usualAck(id string, r crawl.Result, refused map[string]int) *pendingAck {
	return &pendingAck{args: []any{id, "0", "0", "", int64(0), 0, "", ""},
		stats: appendStats(nil, crawl.Outcome{Result: &r, Refused: refused})}
}

// TestAckStatsMixed: one ack call sums its acks' stats counters once,
// and an ack in it whose lease is lost, or that acks a lease the call
// acked already, takes its own counters back: the crawl's Stats count
// each lease acked once, as Stats.Add counts its Result.
func TestAckStatsMixed(t *testing.T) {
	ctx := context.Background()
	f := startFrontier(t, "ackstats", crawl.Policy{HostWorkers: 8, LeaseTerm: time.Minute})
	defer f.Close()
	var reqs []crawl.Request
	for _, u := range []string{"https://a.example/1", "https://a.example/2", "https://b.example/3"} {
		reqs = append(reqs, crawl.Request{URL: u, Depth: 1})
	}
	if _, err := f.Push(ctx, reqs...); err != nil {
		t.Fatal(err)
	}
	var ls []*crawl.Lease
	for range reqs {
		l, err := f.Take(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
	}
	results := []crawl.Result{
		{Status: 200, ContentType: "text/html", Size: 1000},
		{Status: 404, ContentType: "text/plain", Size: 20},
		{Status: 301, NextURL: "https://b.example/x"},
	}
	ack := usualAck
	lost := crawl.Result{Status: 500, ContentType: "text/html", Size: 7}
	batch := []*pendingAck{
		ack(ls[0].ID, results[0], map[string]int{"max_depth": 2}),
		ack("999-nosuchlease", lost, map[string]int{"max_depth": 5, "odd name: x 1": 3}),
		ack(ls[1].ID, results[1], nil),
		ack(ls[0].ID, lost, map[string]int{"url_length": 4}), // acked twice
		ack(ls[2].ID, results[2], map[string]int{"max_depth": 1}),
	}
	if acked := ackCall(t, f, appendAcks([]any{"-"}, batch, func(int) []admission { return nil })); acked != "10 00 10 00 10 " {
		t.Errorf("acks: reply %q, want \"10 00 10 00 10 \" (owned, lost, owned, twice, owned)", acked)
	}
	want := crawl.Stats{Refused: map[string]int{"max_depth": 3}}
	for i := range results {
		want.Add(&results[i])
	}
	got, err := f.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Stats:\n got %+v\nwant %+v", got, want)
	}
}

// TestAckStatsRobotsKind: the stats of an ack count by the kind of its
// lease on the server: a Request pushed with Kind RobotsRequest is leased
// as a page and its Result counts; a robots.txt's lease counts nothing.
func TestAckStatsRobotsKind(t *testing.T) {
	ctx := context.Background()
	f := startFrontier(t, "ackstats-kind", crawl.Policy{HostWorkers: 8, LeaseTerm: time.Minute, Robots: true})
	defer f.Close()
	if _, err := f.Push(ctx, crawl.Request{URL: "https://a.example/robots.txt", Kind: crawl.RobotsRequest, Depth: 1}); err != nil {
		t.Fatal(err)
	}
	// Both leases are of https://a.example/robots.txt, with Kind
	// RobotsRequest: the host's robots.txt first, then the Request pushed.
	ackNext := func(what string, o crawl.Outcome) {
		l, err := f.Take(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if l.Kind != crawl.RobotsRequest || l.URL != "https://a.example/robots.txt" {
			t.Fatalf("lease: %s %v, want %s", l.URL, l.Kind, what)
		}
		o.Result.URL = l.URL
		if _, err := f.Ack(ctx, l, o); err != nil {
			t.Fatal(err)
		}
	}
	ackNext("the host's robots.txt", crawl.Outcome{Result: &crawl.Result{Status: 200, ContentType: "text/plain", Size: 5}, Rules: &crawl.HostRules{}})
	page := crawl.Result{Status: 200, ContentType: "text/html", Size: 10}
	ackNext("the URL pushed as a robots.txt", crawl.Outcome{Result: &page})
	st, err := f.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var want crawl.Stats
	want.Add(&page)
	if st.Done != want.Done || st.HTML != 1 || st.HTMLBytes != 10 || st.Other != 0 {
		t.Errorf("Stats: %+v; want the page's only (%+v)", st, want)
	}
}

// TestAckStatsManyShards: on a crawl of several shards, the acks of one
// batch go to their shards in one call a node, each shard a section, and
// the call counts the stats counters of all its sections once: the
// crawl's Stats count each lease acked once, and those of an ack whose
// lease is lost, or acked twice in the batch, not at all.
func TestAckStatsManyShards(t *testing.T) {
	ctx := context.Background()
	s := redistest.Start(t)
	c := redis.NewClient(&redis.Options{Addr: s.Addr()})
	defer c.Close()
	f := New(c, &Options{Name: "ackstatsmany", Shards: 8})
	defer f.Close()
	if err := f.Start(ctx, crawl.Policy{HostWorkers: 8, LeaseTerm: time.Minute}); err != nil {
		t.Fatal(err)
	}
	var reqs []crawl.Request
	for i := range 6 {
		reqs = append(reqs, crawl.Request{URL: fmt.Sprintf("https://h%d.example/%d", i, i), Depth: 1})
	}
	if _, err := f.Push(ctx, reqs...); err != nil {
		t.Fatal(err)
	}
	var ls []*crawl.Lease
	shards := map[int]bool{}
	for range reqs {
		l, err := f.Take(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		v, _, _ := f.route(l.ID)
		shards[v] = true
	}
	if len(shards) < 3 {
		t.Fatalf("the 6 hosts' leases are on %d shards of 8; the test needs 3 or more", len(shards))
	}
	var want crawl.Stats
	want.Refused = map[string]int{}
	lost := crawl.Result{Status: 500, ContentType: "text/html", Size: 7}
	var batch []*pendingAck
	add := func(l *crawl.Lease, r crawl.Result, refused map[string]int, counts bool) {
		v, id, ok := f.route(l.ID)
		if !ok {
			t.Fatalf("lease ID %q: no shard", l.ID)
		}
		a := usualAck(id, r, refused)
		a.shard, a.done = v, make(chan struct{})
		batch = append(batch, a)
		if counts {
			want.Add(&r)
			for k, n := range refused {
				want.Refused[k] += n
			}
		}
	}
	for i, l := range ls {
		add(l, crawl.Result{URL: l.URL, Status: 200 + i, ContentType: "text/html", Size: 100 * i}, map[string]int{"max_depth": i + 1}, true)
	}
	add(ls[1], lost, map[string]int{"url_length": 4}, false) // acked twice
	add(&crawl.Lease{ID: ls[2].ID[:strings.IndexByte(ls[2].ID, '/')+1] + "999-nosuchlease"}, lost, map[string]int{"max_depth": 5}, false)
	f.flushShards(batch, 8)
	for i, a := range batch {
		if a.err != nil {
			t.Fatalf("ack %d: %v", i, a.err)
		}
		if wantOwned := i < len(ls); a.owned != wantOwned {
			t.Errorf("ack %d: owned %v, want %v", i, a.owned, wantOwned)
		}
	}
	got, err := f.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Stats:\n got %+v\nwant %+v", got, want)
	}
}
