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
