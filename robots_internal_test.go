package crawl

import (
	"errors"
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

// TestDeniedError: the error a HostRules.Denied holds the text of, read
// back (a shared frontier's rules acked by another process), is the error
// it was: its status kept, its text not prefixed twice.
func TestDeniedError(t *testing.T) {
	const u = "http://h.test/robots.txt"
	for _, e := range []*RobotsUnavailableError{
		{URL: u, Status: 503},
		{URL: u, Err: errors.New(`Get "http://h.test/robots.txt": dial tcp 127.0.0.1:1: connect: connection refused`)},
	} {
		got := deniedError(u, e.Error())
		if got.Error() != e.Error() || got.Status != e.Status || (got.Err == nil) != (e.Err == nil) {
			t.Errorf("deniedError(%q) = %q (status %d), want %q (status %d)", e.Error(), got.Error(), got.Status, e.Error(), e.Status)
		}
	}
	if got := deniedError(u, "robots.txt answered 503"); got.Error() != "robots.txt unavailable: "+u+": robots.txt answered 503" {
		t.Errorf("deniedError of another text: %q", got.Error())
	}
}
