// Package sched is the per-host schedule the crawl's frontiers share: which
// hosts may start a request now, taking turns, and which wait for a time.
// A frontier decides when each host may next start (its politeness rules);
// Hosts keeps the hosts in that order, at O(log n) a change and O(1) a turn,
// whatever the number of hosts.
//
// Hosts take turns in runs. A host that has had its turn and may start
// another request stays among the active hosts, which take turns among
// themselves, until it has had Run turns; then it goes to the back of the
// ring. A host at the back joins the active hosts whenever fewer than
// Active of them are ready, so a new host waits for no more than that. In
// strict rotation, ten thousand hosts each needed a new connection for every
// request (the one their last request used had been let go long before
// their next turn); in runs, the few active hosts keep the workers busy on
// connections already open (as Heritrix's per-queue budget does), and every
// host still has its turn.
package sched

import (
	"container/heap"
	"math/rand/v2"
	"time"

	"github.com/asyncrawl/crawl/internal/fifo"
)

// Jitter returns a pause drawn uniformly from [d/2, 3d/2]: the spacing of
// a host's requests under a delay d, as crawl.Policy.HostDelay says.
func Jitter(d time.Duration) time.Duration {
	return d/2 + rand.N(d+1)
}

// RulesDue reports whether a host's robots.txt rules, first gone by at
// since (zero: no URL has yet), are maxAge old at now, so that its
// robots.txt goes first again (Policy.RobotsMaxAge; 0 keeps them).
func RulesDue(maxAge time.Duration, since, now time.Time) bool {
	return maxAge > 0 && !since.IsZero() && now.Sub(since) >= maxAge
}

// Pause returns the pause before a host's next request start under a
// delay d: Jitter(d), but never under floor, the Crawl-delay the host's
// robots.txt asked for (d is at least that), which a site gets in full.
func Pause(d, floor time.Duration) time.Duration {
	return max(Jitter(d), floor)
}

// Slot is a host's place in Hosts. A frontier's host type embeds it; its
// zero value is a host in neither the ring nor the heap.
type Slot struct {
	wake  time.Time // when the host may start, while in the heap
	idx   int       // 1 + its index in the heap; 0 when not there
	ready bool      // in the ring
	turns int       // turns in its run: 0 while at the back of the ring
}

const (
	// Run is the number of turns a host has among the active hosts before
	// it goes to the back of the ring: enough that a busy host's
	// connections are used again many times, few enough that a large host
	// does not hold the workers from the rest for long.
	Run = 100
	// Active is the number of ready active hosts below which a host at the
	// back of the ring joins them at the next turn. A host that is active
	// but may not start a request now (at its worker limit, or waiting for
	// its delay) is not counted, so however many workers there are, enough
	// hosts join to keep them busy.
	Active = 16
)

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
	warm   fifo.List[H] // ready active hosts, in the middle of their run
	ring   fifo.List[H] // ready hosts at the back
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
	var h H
	switch {
	case s.ring.Len() > 0 && s.warm.Len() < Active:
		h = s.ring.Pop()
	case s.warm.Len() > 0:
		h = s.warm.Pop()
	default:
		return h, false
	}
	sl := h.Sched()
	sl.ready = false
	sl.turns++
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

// toRing makes h ready: among the hosts in the middle of their run if it
// is in one, else at the back.
func (s *Hosts[H]) toRing(h H) {
	sl := h.Sched()
	sl.ready = true
	if sl.turns > 0 && sl.turns < Run {
		s.warm.Push(h)
		return
	}
	sl.turns = 0
	s.ring.Push(h)
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

// Want is what a frontier knows of a host when it decides when the host
// may next start a request: the politeness rule both frontiers share.
type Want struct {
	// Next is the earliest start its delay, or a Pause, allows.
	Next time.Time
	// Blocked says that it may start nothing whatever the time: its
	// robots.txt is in flight, or all its worker slots are in use.
	Blocked bool
	// Robots says that its robots.txt must go before anything else.
	Robots bool
	// Queued says that it has new requests queued; Spent that the page
	// budget is spent, which holds new requests back but not retries.
	Queued, Spent bool
	// Retry is when its earliest retry is due, if HasRetry.
	Retry    time.Time
	HasRetry bool
}

// Wake returns when the host may start its next request, and false when
// it has nothing it may start, whatever the time. held reports that the
// page budget alone holds back new requests it could start otherwise, so
// that the frontier must settle it again when the budget frees up.
func (w Want) Wake() (wake time.Time, ok, held bool) {
	if w.Blocked {
		return time.Time{}, false, false
	}
	held = w.Queued && w.Spent
	if w.Robots {
		// Its robots.txt goes first, for a new request within the
		// budget or for a retry (which the budget does not hold back).
		return w.Next, w.Queued && !w.Spent || w.HasRetry, held
	}
	if w.Queued && !w.Spent {
		return w.Next, true, false
	}
	if !w.HasRetry {
		return time.Time{}, false, held
	}
	if w.Retry.After(w.Next) {
		return w.Retry, true, held
	}
	return w.Next, true, held
}
