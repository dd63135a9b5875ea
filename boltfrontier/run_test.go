package boltfrontier_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/asyncrawl/crawl"
	"github.com/asyncrawl/crawl/boltfrontier"
	"github.com/asyncrawl/crawl/crawltest"
)

// TestRunResumes crawls a 40-page site with crawl.Run in two Runs on one
// state file: the first stops at a page budget of 15, the second, on a
// Frontier opened anew, finishes the crawl. No page is fetched twice,
// robots.txt once, and the second Run's Stats cover the whole crawl.
func TestRunResumes(t *testing.T) {
	site := crawltest.Start(t)
	site.Robots("User-agent: *\nDisallow: /private/\n")
	const pages = 40
	for i := range pages {
		links := []string{fmt.Sprintf("/p%d", (2*i+1)%pages), fmt.Sprintf("/p%d", (2*i+2)%pages), "/private/x"}
		path := fmt.Sprintf("/p%d", i)
		if i == 0 {
			path = "/"
		}
		site.Page(path, links...)
	}
	site.Page("/p0", "/")
	state := filepath.Join(t.TempDir(), "crawl.db")
	run := func(maxPages int) *crawl.Stats {
		f, err := boltfrontier.Open(state, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		c, err := crawl.New(crawl.WithFrontier(f), crawl.WithHTTPClient(site.Client()), crawl.WithRobots(true),
			crawl.WithMaxPages(maxPages), crawl.WithWorkers(4))
		if err != nil {
			t.Fatal(err)
		}
		stats, err := c.Run(context.Background(), site.URL("/"))
		if err != nil {
			t.Fatal(err)
		}
		return stats
	}
	first := run(15)
	// 15 pages fetched, and /private/x, disallowed, not counted.
	if first.Done != 16 || first.Budget != "max_pages" {
		t.Errorf("first Run: Done %d, Budget %q; want 16, max_pages", first.Done, first.Budget)
	}
	second := run(0)
	// pages, p0 (a copy of /) and /private/x (disallowed, a Result).
	if want := pages + 2; second.Done != want || second.Todo != 0 {
		t.Errorf("second Run: Done %d, Todo %d; want %d (the whole crawl), 0", second.Done, second.Todo, want)
	}
	for uri, n := range site.Counts() {
		// robots.txt once a Run: each Run goes by the rules of its time.
		if want := map[bool]int{true: 2, false: 1}[uri == "/robots.txt"]; n != want {
			t.Errorf("%s fetched %d times, want %d", uri, n, want)
		}
	}
	if n := site.Count("/private/x"); n != 0 {
		t.Errorf("/private/x fetched %d times, want 0", n)
	}
}
