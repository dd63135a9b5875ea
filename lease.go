package crawl

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// This file is the crawler's side of leases: a worker holds the lease of
// the URL it works on, a heartbeat renews the leases held, a lease the
// frontier took back is abandoned, and a Run that ends gives the frontier
// a bounded while to record what its workers did.

// endGrace is how long a frontier is given to record what a Run that is
// ending did (its leases acked or given back, its last counts) once the
// Run's context is done: a shared frontier whose server cannot be reached
// by then takes the leases back when their term ends, and Run returns.
const endGrace = 5 * time.Second

// endContext is a Run's context for its last frontier calls: cancelled
// endGrace after the Run's context ends, and from that end on it has that
// time as its deadline too, so that a client that bounds a call by its
// context's deadline rather than by its cancel (go-redis, whose reads
// take their socket deadline from it, and otherwise wait their
// ReadTimeout, then try again: a Ctrl-C with redis-server stopped took 10
// s, not 5) is bounded by endGrace as well.
type endContext struct {
	context.Context
	deadline atomic.Pointer[time.Time] // set when the Run's context ends
}

func (c *endContext) Deadline() (time.Time, bool) {
	if d := c.deadline.Load(); d != nil {
		return *d, true
	}
	return c.Context.Deadline()
}

// held is a worker's hold on the lease it works on, while leases expire
// (WithLeaseTerm): the heartbeat renews the lease, and cuts the work on it
// short if the frontier took it back. Each worker keeps one, and the
// context of its work, across leases: a new context is made only after one
// was cut short (or the parent changed), so that a page costs no context
// of its own.
type held struct {
	mu     sync.Mutex
	lease  *Lease // nil between leases
	lost   bool   // the frontier took lease back
	parent context.Context
	ctx    context.Context // the work's, done when a lease was lost
	cancel context.CancelCauseFunc
}

// errLeaseLost is the cause of a held lease's context ending when the
// frontier took the lease back.
var errLeaseLost = fmt.Errorf("crawl: %w", ErrLeaseLost)

// hold registers l as worker i's, for the heartbeat to renew, and returns
// the context of the work on it, under ctx, which ends if the lease is
// lost. With leases that never expire it returns ctx and nil.
func (r *run) hold(ctx context.Context, i int, l *Lease) (context.Context, *held) {
	if r.held == nil {
		return ctx, nil
	}
	h := &r.held[i]
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.parent != ctx || h.ctx.Err() != nil {
		if h.cancel != nil {
			h.cancel(nil)
		}
		h.parent = ctx
		h.ctx, h.cancel = context.WithCancelCause(ctx)
	}
	h.lease, h.lost = l, false
	return h.ctx, h
}

// release ends worker i's hold on h's lease.
func (r *run) release(h *held) {
	if h != nil {
		h.mu.Lock()
		h.lease = nil
		h.mu.Unlock()
	}
}

// unhold lets go of worker i's context, when the worker stops.
func (r *run) unhold(i int) {
	if r.held == nil {
		return
	}
	h := &r.held[i]
	h.mu.Lock()
	if h.cancel != nil {
		h.cancel(nil)
	}
	h.mu.Unlock()
}

// lost reports whether h's lease was taken back: its holder then abandons
// it, and neither acks it nor puts it back, nor delivers a Result, since
// the frontier handed it to another worker.
func (r *run) lost(h *held) bool {
	if h == nil {
		return false
	}
	h.mu.Lock()
	lost, u := h.lost, h.lease.URL
	h.mu.Unlock()
	if lost {
		r.cfg.logger.Info("lease lost, URL abandoned", "url", u)
	}
	return lost
}

// heartbeat renews the leases the workers hold every third of the lease
// term, until ctx is done; a lease the frontier refuses to renew is lost,
// and the work on it is cut short.
func (r *run) heartbeat(ctx context.Context) {
	every(ctx, r.cfg.leaseTerm/3, func() {
		for i := range r.held {
			h := &r.held[i]
			h.mu.Lock()
			l := h.lease
			h.mu.Unlock()
			if l == nil {
				continue
			}
			err := r.front.Extend(ctx, l)
			switch {
			case errors.Is(err, ErrLeaseLost):
				h.mu.Lock()
				if h.lease == l { // not ended meanwhile
					h.lost = true
					h.cancel(errLeaseLost)
				}
				h.mu.Unlock()
			case err != nil && ctx.Err() == nil:
				r.cfg.logger.Error("frontier: renew lease", "url", l.URL, "err", err)
			}
		}
	})
}

// maxFrontierErrs bounds the distinct frontier errors frontierError keeps
// so as to log each once.
const maxFrontierErrs = 64

// endLeaseTries is how many times a call that ends a lease is made before
// the Run fails with its error (see endLease); endLeasePause the first
// pause between two, doubling.
const (
	endLeaseTries = 6
	endLeasePause = 50 * time.Millisecond
)

// endLease makes call, the Ack or Retry that ends the lease of u, and
// makes it again while it fails with an error that does not end the lease
// (ErrLeaseLost, ErrFrontierClosed do) and ctx lasts: a frontier that
// could not record it (a disk full, a store refusing a write) leaves the
// lease out, and a lease never ended holds Join back (for good under a
// LeaseTerm of 0). After endLeaseTries, the Run fails with the frontier's
// error, as when its Join fails. It returns call's last error.
func (r *run) endLease(ctx context.Context, u string, call func() error) error {
	pause := endLeasePause
	for try := 1; ; try++ {
		err := call()
		if err == nil || errors.Is(err, ErrLeaseLost) || errors.Is(err, ErrFrontierClosed) || ctx.Err() != nil {
			return err
		}
		if try == endLeaseTries {
			f := fmt.Errorf("crawl: frontier: %s: %w", u, err)
			if r.failure.CompareAndSwap(nil, &f) {
				r.stop()
			}
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(pause):
		}
		pause *= 2
	}
}

// endError logs err, what the frontier answered when asked for its
// stats or counts at the Run's end (what names it), with what it means
// for the report: a frontier that did not answer within endGrace was
// said once already (see frontierError), and is not an error of the
// crawl's, so that its report says what it does not know at the level
// of a warning.
func (r *run) endError(what, means string, err error) {
	if r.endCtx.Err() != nil {
		r.cfg.logger.Warn("the frontier does not answer: "+means, "asked", what)
		return
	}
	r.cfg.logger.Error("frontier "+what, "err", err)
}

// frontierError logs err, what the frontier answered when a lease of u was
// ended: a lease lost is no error of the crawl's (some other worker has
// it); a frontier that did not answer within endGrace of the Run's end is
// said once, as what it means for the URLs; anything else is an error.
func (r *run) frontierError(u string, err error) {
	switch {
	case errors.Is(err, ErrLeaseLost):
		r.cfg.logger.Info("lease lost, URL abandoned", "url", u)
	case r.endCtx.Err() != nil:
		r.gaveUp.Do(func() {
			r.cfg.logger.Warn("the frontier does not answer: the URLs in flight are left to expire after their lease term", "waited", endGrace)
		})
	default:
		// Once an error: the same one for each lease in flight (a
		// crawl deleted under 100 workers) is one event.
		// The messages kept are bounded: past maxFrontierErrs distinct
		// ones (each naming a URL, say), each is logged.
		msg := err.Error()
		if _, said := r.frontierErrs.Load(msg); said {
			return
		}
		if r.frontierErrN.Add(1) <= maxFrontierErrs {
			if _, said := r.frontierErrs.LoadOrStore(msg, true); said {
				return // another worker's, at the same moment
			}
		}
		r.cfg.logger.Error("frontier", "url", u, "err", err)
	}
}
