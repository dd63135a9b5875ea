package sched

import (
	"strings"
	"testing"
	"time"
)

type host struct {
	name string
	Slot
}

// Hosts in the ring take turns in the order they became ready; hosts in
// the heap come out by their time, whatever the order they went in.
func TestHosts(t *testing.T) {
	var s Hosts[*host]
	now := time.Unix(1000, 0)
	a, b, c, d := &host{name: "a"}, &host{name: "b"}, &host{name: "c"}, &host{name: "d"}
	s.Settle(a, now, true, now)
	s.Settle(b, now.Add(-time.Second), true, now)
	s.Settle(c, now.Add(3*time.Second), true, now)
	s.Settle(d, now.Add(2*time.Second), true, now)
	s.Settle(d, now.Add(time.Second), true, now) // moved earlier in the heap
	if w, ok := s.Wake(); !ok || !w.Equal(now.Add(time.Second)) {
		t.Fatalf("Wake = %v %v, want d's time", w, ok)
	}
	var order []string
	for h, ok := s.Next(); ok; h, ok = s.Next() {
		order = append(order, h.name)
	}
	s.Due(now.Add(5 * time.Second))
	for h, ok := s.Next(); ok; h, ok = s.Next() {
		order = append(order, h.name)
	}
	if got := strings.Join(order, " "); got != "a b d c" {
		t.Errorf("turns %q, want \"a b d c\"", got)
	}
	// A host that can start nothing leaves the heap.
	s.Settle(c, now.Add(9*time.Second), true, now)
	s.Settle(c, time.Time{}, false, now)
	if _, ok := s.Wake(); ok {
		t.Error("a host settled with nothing to start is still in the heap")
	}
}

// A host keeps its turns among the active hosts for a run, ahead of the
// hosts at the back of the ring, while fewer than Active are ready; a
// host at the back joins at once when they are fewer.
func TestHostsRuns(t *testing.T) {
	var s Hosts[*host]
	now := time.Unix(1000, 0)
	next := func(what string) *host {
		t.Helper()
		h, ok := s.Next()
		if !ok {
			t.Fatalf("%s: Next gave no host", what)
		}
		return h
	}
	// Active hosts, each had one turn and is ready again.
	active := make([]*host, Active)
	for i := range active {
		active[i] = &host{name: "active"}
		s.Settle(active[i], now, true, now)
		if h := next("a new host while fewer than Active are ready"); h != active[i] {
			t.Fatalf("turn %d: got %q, want the host that became ready first", i, h.name)
		}
	}
	for _, h := range active {
		s.Settle(h, now, true, now)
	}
	late := &host{name: "late"}
	s.Settle(late, now, true, now)
	// Active hosts are ready: the late one waits while they are.
	for turn := 2; turn < Run; turn++ {
		for i, a := range active {
			if h := next("Active hosts in their run are ready"); h != a {
				t.Fatalf("turn %d of active host %d: got %q, want the active hosts in order", turn, i, h.name)
			}
			s.Settle(a, now, true, now)
		}
	}
	// The first one's run is over: it goes behind the late host, which
	// joins the active hosts.
	if h := next("the active hosts' last turn"); h != active[0] {
		t.Fatalf("got %q, want the first active host", h.name)
	}
	s.Settle(active[0], now, true, now)
	if h := next("a run is over: fewer than Active are ready"); h != late {
		t.Fatalf("got %q, want the host that waited", h.name)
	}
	// late may not start another now (at its worker limit): fewer than
	// Active are ready, and the ring's front joins them.
	s.Settle(late, time.Time{}, false, now)
	if h := next("Active-1 hosts are ready, one at the back"); h != active[0] {
		t.Fatalf("got %q, want the host at the back, whose run was over", h.name)
	}
}

// Want.Wake is the politeness rule both frontiers share: robots.txt
// first, the worker limit, the delay, and a spent budget that holds back
// new requests but not retries.
func TestWantWake(t *testing.T) {
	t0 := time.Unix(1000, 0)
	next, retry := t0.Add(time.Second), t0.Add(2*time.Second)
	for _, tt := range []struct {
		name     string
		w        Want
		wake     time.Time
		ok, held bool
	}{
		{"blocked", Want{Next: next, Blocked: true, Queued: true, HasRetry: true, Retry: retry}, time.Time{}, false, false},
		{"nothing", Want{Next: next}, time.Time{}, false, false},
		{"queued", Want{Next: next, Queued: true}, next, true, false},
		{"queued, spent", Want{Next: next, Queued: true, Spent: true}, time.Time{}, false, true},
		{"queued, spent, a retry", Want{Next: next, Queued: true, Spent: true, HasRetry: true, Retry: retry}, retry, true, true},
		{"a retry before the delay", Want{Next: retry, HasRetry: true, Retry: next}, retry, true, false},
		{"robots.txt first, queued", Want{Next: next, Robots: true, Queued: true}, next, true, false},
		{"robots.txt first, spent", Want{Next: next, Robots: true, Queued: true, Spent: true}, next, false, true},
		{"robots.txt first for a retry", Want{Next: next, Robots: true, HasRetry: true, Retry: retry}, next, true, false},
	} {
		wake, ok, held := tt.w.Wake()
		if !wake.Equal(tt.wake) || ok != tt.ok || held != tt.held {
			t.Errorf("%s: Wake() = %v, %v, %v; want %v, %v, %v", tt.name, wake, ok, held, tt.wake, tt.ok, tt.held)
		}
	}
}

func TestRulesDue(t *testing.T) {
	t0 := time.Unix(1000, 0)
	for _, tt := range []struct {
		age        time.Duration
		since, now time.Time
		want       bool
	}{
		{time.Second, t0, t0.Add(time.Second), true},
		{time.Second, t0, t0.Add(time.Second - 1), false},
		{time.Second, time.Time{}, t0.Add(time.Hour), false}, // no URL went by them yet
		{0, t0, t0.Add(time.Hour), false},                    // kept
	} {
		if got := RulesDue(tt.age, tt.since, tt.now); got != tt.want {
			t.Errorf("RulesDue(%v, %v, %v) = %t, want %t", tt.age, tt.since, tt.now, got, tt.want)
		}
	}
}
