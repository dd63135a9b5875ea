package redisfrontier_test

import (
	"testing"
	"time"

	"github.com/asyncrawl/crawl"
	"github.com/asyncrawl/crawl/redisfrontier/redistest"
)

// TestWire: a Request's Wire comes back from Take as it was pushed, on its
// first attempt and on its retry, and through a lease taken back after its
// term.
func TestWire(t *testing.T) {
	s := redistest.Start(t)
	p := crawl.Policy{HostWorkers: 4, LeaseTerm: 200 * time.Millisecond}
	f := process(t, s, "wire", p)
	pushed := crawl.Request{
		URL:      "https://a.example/~user?x=%7Ezz",
		Wire:     "https://a.example/%7Euser?x=%7Ezz",
		Kind:     crawl.PageRequest,
		Depth:    2,
		Referrer: "https://a.example/",
	}
	if n, err := f.Push(t.Context(), pushed); n != 1 || err != nil {
		t.Fatalf("Push: %d, %v; want 1, nil", n, err)
	}
	l, err := f.Take(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if l.Request != pushed {
		t.Errorf("Take: got %+v, want %+v as pushed", l.Request, pushed)
	}
	// Retried, it comes back as l.Request then was.
	l.Tries, l.First = 1, time.Unix(1700000000, 0)
	want := l.Request
	if err := f.Retry(t.Context(), l, time.Time{}); err != nil {
		t.Fatal(err)
	}
	l, err = f.Take(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if !l.First.Equal(want.First) {
		t.Errorf("Take after Retry: First %v, want %v", l.First, want.First)
	}
	l.First = want.First
	if l.Request != want {
		t.Errorf("Take after Retry: got %+v, want %+v", l.Request, want)
	}
	// Not extended, the lease is taken back with the Request as leased.
	l, err = f.Take(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if l.Wire != pushed.Wire {
		t.Errorf("Take of a lease taken back: Wire %q, want %q", l.Wire, pushed.Wire)
	}
}
