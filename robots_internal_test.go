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

// TestRobotsCacheNewRules: a lease that carries other rules of its host
// than those parsed before (fetched anew by another process of a shared
// crawl, WithRobotsMaxAge) is checked against its own; one that carries a
// copy of the same keeps the parse.
func TestRobotsCacheNewRules(t *testing.T) {
	r := &run{cfg: &config{robots: true, userAgent: DefaultUserAgent}}
	var c robotsCache
	lease := func(path string, rules *HostRules) *Lease {
		return &Lease{Request: Request{URL: "http://h.test" + path}, Rules: rules}
	}
	old := &HostRules{Robots: []byte("User-agent: *\nDisallow: /a\n")}
	if err := c.check(r, lease("/a", old)); !errors.Is(err, ErrDisallowed) {
		t.Fatalf("/a under %q: %v, want ErrDisallowed", old.Robots, err)
	}
	parsed, _ := c.m.Load("http://h.test")
	same := &HostRules{Robots: []byte("User-agent: *\nDisallow: /a\n")}
	if err := c.check(r, lease("/b", same)); err != nil {
		t.Fatalf("/b under a copy of the same rules: %v, want allowed", err)
	}
	if h, _ := c.m.Load("http://h.test"); h.(*hostRobots).rules != parsed.(*hostRobots).rules {
		t.Errorf("a copy of the same rules parsed anew")
	}
	fresh := &HostRules{Robots: []byte("User-agent: *\nDisallow: /b\n")}
	if err := c.check(r, lease("/b", fresh)); !errors.Is(err, ErrDisallowed) {
		t.Errorf("/b under new rules %q: %v, want ErrDisallowed", fresh.Robots, err)
	}
	if err := c.check(r, lease("/a", fresh)); err != nil {
		t.Errorf("/a under new rules %q: %v, want allowed", fresh.Robots, err)
	}
	denied := &HostRules{Denied: "robots.txt unavailable: http://h.test/robots.txt: status 503"}
	if err := c.check(r, lease("/a", denied)); !errors.Is(err, ErrRobotsUnavailable) {
		t.Errorf("/a once the robots.txt fetched anew was unavailable: %v, want ErrRobotsUnavailable", err)
	}
}
