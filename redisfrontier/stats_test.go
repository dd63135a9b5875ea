package redisfrontier_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/asyncrawl/crawl"
	"github.com/asyncrawl/crawl/redisfrontier/redistest"
)

// TestStats: Results acked by two processes are counted in the crawl's
// Stats as (*crawl.Stats).Add counts them, with the refusals acked; an
// ack refused (lease lost) counts nothing.
func TestStats(t *testing.T) {
	s := redistest.Start(t)
	p := crawl.Policy{HostWorkers: 8, LeaseTerm: time.Minute}
	a, b := process(t, s, "stats", p), process(t, s, "stats", p)
	results := []crawl.Result{
		{Status: 200, ContentType: "text/html", Size: 1000},
		{Status: 200, ContentType: "image/png", Size: 500},
		{Status: 301, NextURL: "https://h0.example/x"},
		{Status: 404, ContentType: "text/plain", Size: 20},
		{Status: 503, Err: fmt.Errorf("fetch: %w", context.DeadlineExceeded)},
		{Err: fmt.Errorf("fetch: %w", crawl.ErrBodyTooLarge)},
		{Status: 200, ContentType: "text/html", Size: 42},
	}
	var reqs []crawl.Request
	for i := range results {
		reqs = append(reqs, siteURL(100+i))
	}
	if _, err := a.Push(t.Context(), reqs...); err != nil {
		t.Fatal(err)
	}
	want := crawl.Stats{Refused: map[string]int{}}
	for i := range results {
		f := a
		if i%2 == 1 {
			f = b
		}
		l, err := f.Take(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		r := results[i]
		r.URL = l.URL
		o := crawl.Outcome{Result: &r, Refused: map[string]int{"max_depth": i, "url_length": 1}}
		if _, err := f.Ack(t.Context(), l, o); err != nil {
			t.Fatal(err)
		}
		want.Add(&r)
		for k, v := range o.Refused {
			if v != 0 {
				want.Refused[k] += v
			}
		}
		// A second ack of the same lease is refused and counts nothing.
		if _, err := f.Ack(t.Context(), l, o); !errors.Is(err, crawl.ErrLeaseLost) {
			t.Errorf("second Ack of %s: %v, want ErrLeaseLost", l.URL, err)
		}
	}
	for _, f := range []interface {
		Stats(context.Context) (crawl.Stats, error)
	}{a, b} {
		got, err := f.Stats(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Stats:\n got %+v\nwant %+v", got, want)
		}
	}
}
