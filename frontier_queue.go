package crawl

import (
	"encoding/binary"
	"strings"

	"github.com/asyncrawl/crawl/internal/fifo"
)

// reqQueue is a host's queue of new Requests, first in first out, each
// stored once and compactly, and made a Request again when it is taken:
//
//   - the URL without its host key (scheme, host and port), which is the
//     host's, and front-coded: the length of the prefix it shares with the
//     URL queued before it, and the rest (a page's links to one host
//     often share a directory, or differ only in a number);
//   - the referrer by reference: a page's links share one, so it is kept
//     once for a run of requests with the same referrer;
//   - Kind, CrossHost, Depth and Redirects in a flag byte and two varints;
//   - the Wire form, when there is one, after the URL, without its host
//     key too, and not front-coded (it is rare: a URL spelled otherwise
//     than its key).
//
// A Request with a First time or Tries (never one the crawler pushes) is
// kept whole beside the bytes. The bytes are in chunks that grow from
// minChunk to maxChunk: a large queue wastes at most one chunk, a small one
// little, and a chunk read to its end is let go.
//
// A reqQueue is not safe for concurrent use.
type reqQueue struct {
	chunks [][]byte // read from chunks[0][off:], written at the end of the last
	off    int
	n      int // requests queued

	// A referrer is written to refs when it differs from the one before
	// (wRef); reading follows the same sequence (rRef).
	refs fifo.List[string]
	wRef string
	rRef string

	// The path (and query) of the URL written last (wPath) and read last
	// (rPath), which the next one is coded against.
	wPath []byte
	rPath []byte

	whole fifo.List[Request]
}

const (
	minChunk = 64
	maxChunk = 4 << 10
	// maxKeptPath is the room for paths that a drained queue keeps.
	maxKeptPath = 128
)

// The flag byte of an encoded request.
const (
	qKindMask  = 0x07 // the RequestKind
	qCrossHost = 0x08
	qNewRef    = 0x10 // the referrer is the next of refs, not the one before
	qWhole     = 0x20 // the request is the next of whole; nothing follows
	qWire      = 0x40 // the Wire form follows the URL
)

// len returns the number of requests queued.
func (q *reqQueue) len() int { return q.n }

// push queues r, whose URL starts with key; full chunks come from m.
func (q *reqQueue) push(m *offHeap, key string, r Request) {
	q.n++
	if !r.First.IsZero() || r.Tries != 0 || r.Kind > qKindMask || !strings.HasPrefix(r.URL, key) ||
		r.Wire != "" && !strings.HasPrefix(r.Wire, key) {
		q.whole.Push(r)
		q.reserve(m, 1)[0] = qWhole
		q.commit(1)
		return
	}
	rest := r.URL[len(key):]
	shared := 0
	for shared < len(rest) && shared < len(q.wPath) && rest[shared] == q.wPath[shared] {
		shared++
	}
	wire := ""
	if r.Wire != "" {
		wire = r.Wire[len(key):]
	}
	b := q.reserve(m, 1+5*binary.MaxVarintLen64+len(rest)-shared+len(wire))
	flags := byte(r.Kind)
	if r.CrossHost {
		flags |= qCrossHost
	}
	if r.Wire != "" {
		flags |= qWire
	}
	if r.Referrer != q.wRef {
		flags |= qNewRef
		q.refs.Push(r.Referrer)
		q.wRef = r.Referrer
	}
	b = append(b[:0], flags)
	b = binary.AppendVarint(b, int64(r.Depth))
	b = binary.AppendVarint(b, int64(r.Redirects))
	b = binary.AppendUvarint(b, uint64(shared))
	b = binary.AppendUvarint(b, uint64(len(rest)-shared))
	b = append(b, rest[shared:]...)
	if r.Wire != "" {
		b = binary.AppendUvarint(b, uint64(len(wire)))
		b = append(b, wire...)
	}
	q.wPath = append(q.wPath[:shared], rest[shared:]...)
	q.commit(len(b))
}

// reserve returns room for at least size bytes at the end of the last
// chunk, adding a chunk when it has not as much, as a slice of length size
// into the chunk's spare capacity; commit then adds the bytes written.
func (q *reqQueue) reserve(m *offHeap, size int) []byte {
	if len(q.chunks) > 0 {
		last := q.chunks[len(q.chunks)-1]
		if cap(last)-len(last) >= size {
			return last[len(last) : len(last)+size]
		}
	}
	c := minChunk
	if len(q.chunks) > 0 {
		c = min(2*cap(q.chunks[len(q.chunks)-1]), maxChunk)
		if len(q.chunks[len(q.chunks)-1]) == 0 {
			// An empty chunk (a drained queue's) too small for the
			// request: reading must not meet it.
			m.putChunk(q.chunks[len(q.chunks)-1])
			q.chunks = q.chunks[:len(q.chunks)-1]
		}
	}
	if c == maxChunk && size <= maxChunk {
		q.chunks = append(q.chunks, m.chunk())
	} else {
		q.chunks = append(q.chunks, make([]byte, 0, max(c, size)))
	}
	return q.chunks[len(q.chunks)-1][:size]
}

// commit adds the first n bytes of the room reserve returned to the last
// chunk.
func (q *reqQueue) commit(n int) {
	last := &q.chunks[len(q.chunks)-1]
	*last = (*last)[:len(*last)+n]
}

// pop returns the first request queued, its URL made from key; the queue
// must not be empty. Chunks read to their end go back to m.
func (q *reqQueue) pop(m *offHeap, key string) Request {
	c := q.chunks[0][q.off:]
	flags := c[0]
	var r Request
	used := 1
	if flags&qWhole != 0 {
		r = q.whole.Pop()
	} else {
		r.Kind = RequestKind(flags & qKindMask)
		r.CrossHost = flags&qCrossHost != 0
		if flags&qNewRef != 0 {
			q.rRef = q.refs.Pop()
		}
		r.Referrer = q.rRef
		depth, k := binary.Varint(c[used:])
		used += k
		redirects, k := binary.Varint(c[used:])
		used += k
		shared, k := binary.Uvarint(c[used:])
		used += k
		size, k := binary.Uvarint(c[used:])
		used += k
		r.Depth, r.Redirects = int(depth), int(redirects)
		q.rPath = append(q.rPath[:shared], c[used:used+int(size)]...)
		r.URL = key + string(q.rPath)
		used += int(size)
		if flags&qWire != 0 {
			size, k := binary.Uvarint(c[used:])
			used += k
			r.Wire = key + string(c[used:used+int(size)])
			used += int(size)
		}
	}
	q.n--
	q.off += used
	if q.off == len(q.chunks[0]) {
		q.off = 0
		switch {
		case len(q.chunks) > 1:
			m.putChunk(q.chunks[0])
			q.chunks[0] = nil
			q.chunks = q.chunks[1:]
		case cap(q.chunks[0]) > minChunk:
			m.putChunk(q.chunks[0])
			q.chunks = nil // a drained queue keeps no more than minChunk
		default:
			q.chunks[0] = q.chunks[0][:0]
		}
	}
	if q.n == 0 {
		// Nothing queued refers to a referrer any more.
		q.wRef, q.rRef = "", ""
		q.wPath, q.rPath = q.wPath[:0], q.rPath[:0]
		if cap(q.wPath) > maxKeptPath {
			q.wPath, q.rPath = nil, nil
		}
	}
	return r
}
