// Package sched is the per-host schedule the crawl's frontiers share: which
// hosts may start a request now, taking turns, and which wait for a time.
// A frontier decides when each host may next start (its politeness rules);
// Hosts keeps the hosts in that order, at O(log n) a change and O(1) a turn,
// whatever the number of hosts.
package sched

import (
	"container/heap"
	"math/rand/v2"
	"time"
)

// Jitter returns a pause drawn uniformly from [d/2, 3d/2]: the spacing of
// a host's requests under a delay d, as crawl.Policy.HostDelay says.
func Jitter(d time.Duration) time.Duration {
	return d/2 + rand.N(d+1)
}

// Slot is a host's place in Hosts. A frontier's host type embeds it; its
// zero value is a host in neither the ring nor the heap.
type Slot struct {
	wake  time.Time // when the host may start, while in the heap
	idx   int       // 1 + its index in the heap; 0 when not there
	ready bool      // in the ring
}

// Sched returns s, so that a type embedding Slot is a Host.
func (s *Slot) Sched() *Slot { return s }

// Host is a frontier's host: a pointer to a type that embeds Slot.
type Host interface {
	comparable
	Sched() *Slot
}

// Hosts is the schedule: a ring of the hosts that may start a request now,
// which take turns, and a heap of those that wait for a time. A host that
// can start nothing (at its worker limit, nothing queued) is in neither.
// It is not safe for concurrent use.
type Hosts[H Host] struct {
	ring   []H // ring[head:] may start a request now
	head   int
	timers timers[H]
}

// Settle puts h where it belongs after a change: in the ring if it may
// start a request at wake and wake is not after now, in the heap if it is,
// in neither if !ok. A host in the ring stays there: Next gives it its
// turn, and the frontier settles it again then.
func (s *Hosts[H]) Settle(h H, wake time.Time, ok bool, now time.Time) {
	sl := h.Sched()
	if sl.ready {
		return
	}
	switch {
	case !ok:
		if sl.idx > 0 {
			heap.Remove(&s.timers, sl.idx-1)
		}
	case !wake.After(now):
		if sl.idx > 0 {
			heap.Remove(&s.timers, sl.idx-1)
		}
		s.toRing(h)
	case sl.idx > 0:
		sl.wake = wake
		heap.Fix(&s.timers, sl.idx-1)
	default:
		sl.wake = wake
		heap.Push(&s.timers, h)
	}
}

// Next takes the next host of the ring, for its turn; false when the ring
// is empty. The frontier settles the host again after its turn.
func (s *Hosts[H]) Next() (H, bool) {
	if s.head == len(s.ring) {
		s.ring, s.head = s.ring[:0], 0
		var none H
		return none, false
	}
	h := s.ring[s.head]
	var none H
	s.ring[s.head] = none
	s.head++
	h.Sched().ready = false
	return h, true
}

// Due moves the hosts whose time has come by now from the heap to the
// ring.
func (s *Hosts[H]) Due(now time.Time) {
	for len(s.timers) > 0 && !s.timers[0].Sched().wake.After(now) {
		s.toRing(heap.Pop(&s.timers).(H))
	}
}

// Wake returns the earliest time a host in the heap may start; false when
// none waits.
func (s *Hosts[H]) Wake() (time.Time, bool) {
	if len(s.timers) == 0 {
		return time.Time{}, false
	}
	return s.timers[0].Sched().wake, true
}

func (s *Hosts[H]) toRing(h H) {
	h.Sched().ready = true
	if s.head >= 64 && s.head*2 >= len(s.ring) {
		// Hosts that had their turn are forgotten, so that a ring that
		// is never empty does not grow with every turn.
		n := copy(s.ring, s.ring[s.head:])
		clear(s.ring[n:])
		s.ring, s.head = s.ring[:n], 0
	}
	s.ring = append(s.ring, h)
}

// timers orders hosts by the time they may next start a request.
type timers[H Host] []H

func (t timers[H]) Len() int           { return len(t) }
func (t timers[H]) Less(i, j int) bool { return t[i].Sched().wake.Before(t[j].Sched().wake) }
func (t timers[H]) Swap(i, j int) {
	t[i], t[j] = t[j], t[i]
	t[i].Sched().idx = i + 1
	t[j].Sched().idx = j + 1
}
func (t *timers[H]) Push(x any) {
	h := x.(H)
	h.Sched().idx = len(*t) + 1
	*t = append(*t, h)
}
func (t *timers[H]) Pop() any {
	old := *t
	h := old[len(old)-1]
	var none H
	old[len(old)-1] = none
	h.Sched().idx = 0
	*t = old[:len(old)-1]
	return h
}
