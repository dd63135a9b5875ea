package crawl_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/asyncrawl/crawl"
)

// TestBothBudgets checks that a Run ended by WithMaxDuration after
// WithMaxPages was spent returns a nil error: a budget ended it, not the
// caller's context.
func TestBothBudgets(t *testing.T) {
	s := newSite(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The one page the budget allows is still in flight at the
		// deadline.
		<-r.Context().Done()
	}))
	stats, _, err := crawlSite(t, context.Background(), []string{s.URL},
		crawl.WithRobots(false), crawl.WithSitemaps(false), crawl.WithMaxTries(1),
		crawl.WithMaxPages(1), crawl.WithMaxDuration(100*time.Millisecond))
	if err != nil {
		t.Errorf("Run: got error %v, want nil (a budget ended the crawl)", err)
	}
	if stats == nil || stats.Budget == "" {
		t.Errorf("Stats: got %+v, want a Budget", stats)
	}
}
