package crawl

import (
	"math/rand/v2"
	"strconv"
	"testing"
	"time"
)

// TestReqQueue pushes and pops requests of every shape in random
// interleavings and checks that each comes back as it went in, in order.
func TestReqQueue(t *testing.T) {
	const key = "https://h.example:8443"
	rng := rand.New(rand.NewPCG(1, 2))
	refs := []string{"", key + "/a", key + "/b", "http://other.example/"}
	var q reqQueue
	m := &offHeap{}
	defer m.release()
	var want []Request
	for i := range 20000 {
		if rng.IntN(3) > 0 || len(want) == 0 {
			r := Request{
				URL:       key + "/p/" + strconv.Itoa(i) + "?q=" + string(make([]byte, rng.IntN(3)*1000)),
				Kind:      RequestKind(rng.IntN(5)),
				Depth:     rng.IntN(1000),
				Redirects: rng.IntN(12) - 1,
				CrossHost: rng.IntN(2) == 0,
				Referrer:  refs[rng.IntN(len(refs))],
			}
			switch rng.IntN(8) {
			case 0:
				r.Wire = key + "/p/%7E" + strconv.Itoa(i) + "%zz|" + string(make([]byte, rng.IntN(2)*300))
			case 1:
				r.Wire = "https://elsewhere.example/x" // no host key prefix
			}
			switch rng.IntN(50) {
			case 0:
				r.Tries = 2
			case 1:
				r.First = time.Now()
			case 2:
				r.URL = "https://h.example:8443"
			case 3:
				r.URL = "mailto:x@h.example" // no host key prefix
			}
			q.push(m, key, r)
			want = append(want, r)
		} else {
			got := q.pop(m, key)
			if got != want[0] {
				t.Fatalf("pop %d: got %+v, want %+v", i, got, want[0])
			}
			want = want[1:]
		}
		if q.len() != len(want) {
			t.Fatalf("step %d: len %d, want %d", i, q.len(), len(want))
		}
	}
	for len(want) > 0 {
		if got := q.pop(m, key); got != want[0] {
			t.Fatalf("drain: got %+v, want %+v", got, want[0])
		}
		want = want[1:]
	}
	if q.chunks != nil || q.refs.Len() != 0 || q.whole.Len() != 0 {
		t.Errorf("drained queue holds %d chunks, %d refs, %d whole requests; want none", len(q.chunks), q.refs.Len(), q.whole.Len())
	}
}

// TestSeenSet adds URLs across several growths of the tables, mapped by
// an offHeap, and checks that each is new once and seen after.
func TestSeenSet(t *testing.T) {
	m := &offHeap{}
	defer m.release()
	s := newSeenSet(m)
	const n = 300000 // the tables outgrow 8 KB: mapped where the system allows
	for i := range n {
		if !s.add("http://h.example/" + strconv.Itoa(i)) {
			t.Fatalf("add %d: got seen, want new", i)
		}
		if i%7 == 0 && s.add("http://h.example/"+strconv.Itoa(i/2)) {
			t.Fatalf("add %d again: got new, want seen", i/2)
		}
	}
	for i := range n {
		if s.add("http://h.example/" + strconv.Itoa(i)) {
			t.Fatalf("add %d again: got new, want seen", i)
		}
	}
	if got := s.fps.Len(); got != n {
		t.Errorf("got %d URLs, want %d", got, n)
	}
}

// TestReqQueueDrainedThenLarge queues a request larger than the chunk a
// drained queue keeps: reading must not stop at the empty chunk.
func TestReqQueueDrainedThenLarge(t *testing.T) {
	const key = "http://h.example"
	var q reqQueue
	m := &offHeap{}
	defer m.release()
	small := Request{URL: key + "/a"}
	large := Request{URL: key + "/" + string(make([]byte, 2*minChunk))}
	q.push(m, key, small)
	if got := q.pop(m, key); got != small {
		t.Fatalf("got %+v, want %+v", got, small)
	}
	q.push(m, key, large)
	if got := q.pop(m, key); got != large {
		t.Fatalf("got %q, want %q", got.URL, large.URL)
	}
}

// TestReqQueueReusedChunks drains a queue of more chunks than keptChunks,
// so that some free chunks give their pages back, and fills and drains it
// again on the chunks used before.
func TestReqQueueReusedChunks(t *testing.T) {
	const key = "http://h.example"
	m := &offHeap{}
	defer m.release()
	var q reqQueue
	pad := string(make([]byte, 200))
	n := 3 * keptChunks * maxChunk / 200
	for round := range 2 {
		for i := range n {
			q.push(m, key, Request{URL: key + "/" + strconv.Itoa(i) + pad, Depth: round})
		}
		for i := range n {
			want := Request{URL: key + "/" + strconv.Itoa(i) + pad, Depth: round}
			if got := q.pop(m, key); got != want {
				t.Fatalf("round %d, pop %d: got %.40q depth %d, want %.40q depth %d", round, i, got.URL, got.Depth, want.URL, want.Depth)
			}
		}
		if len(m.free) < keptChunks {
			t.Errorf("round %d: %d free chunks, want at least %d", round, len(m.free), keptChunks)
		}
	}
}
