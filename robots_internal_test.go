package crawl

import (
	"testing"

	"github.com/asyncrawl/crawl/internal/robots"
)

// TestRobotsProductToken checks that the robots.txt groups the crawler
// obeys by default are those of the product token "asyncrawl", which
// internal/robots tests its parsing with.
func TestRobotsProductToken(t *testing.T) {
	if got, want := robots.ProductToken(DefaultUserAgent), "asyncrawl"; got != want {
		t.Errorf("robots.ProductToken(%q) = %q, want %q", DefaultUserAgent, got, want)
	}
}
