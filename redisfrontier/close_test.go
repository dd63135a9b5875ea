package redisfrontier_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/asyncrawl/crawl"
	"github.com/asyncrawl/crawl/redisfrontier"
	"github.com/asyncrawl/crawl/redisfrontier/redistest"
)

// Two Closes at once, with the server gone, both return: the first after
// giving the server its while, the second when the first is done.
func TestCloseTwiceServerDown(t *testing.T) {
	s := redistest.Start(t)
	f := open(t, s, &redisfrontier.Options{Name: t.Name()})
	if err := f.Start(context.Background(), crawl.Policy{HostWorkers: 1, LeaseTerm: time.Second, Roots: []string{"http://a.test/"}}); err != nil {
		t.Fatal(err)
	}
	s.Kill()
	errs := make(chan error, 2)
	for range 2 {
		go func() { errs <- f.Close() }()
	}
	var closed int
	for range 2 {
		select {
		case err := <-errs:
			if errors.Is(err, crawl.ErrFrontierClosed) {
				closed++
			} else if err != nil {
				t.Errorf("Close: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("a Close did not return within 30 s")
		}
	}
	if closed != 1 {
		t.Errorf("%d Closes returned ErrFrontierClosed, want 1 (the second)", closed)
	}
}
