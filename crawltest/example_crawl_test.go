package crawltest_test

import (
	"context"
	"fmt"
	"log"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/asyncrawl/crawl"
	"github.com/asyncrawl/crawl/crawltest"
)

// Test a crawl offline: the site declares pages, a robots.txt and a trap,
// records every request it is sent, and the test checks what the crawl
// did. In a test, crawltest.Start(t) starts the site and closes it at the
// test's end, and each check below is an if with t.Errorf.
func Example_crawl() {
	site := crawltest.New()
	defer site.Close()
	site.Robots("User-agent: *\nDisallow: /private/\n")
	site.Page("/", "/about", "/private/admin", "/calendar/")
	site.Page("/about", "/", "http://www.example.com/about#team")
	site.Handle("/calendar/", crawltest.Calendar()) // links without end
	site.Latency(5 * time.Millisecond)              // so that requests overlap

	// The crawl under test, as the program configures it.
	c, err := crawl.New(
		crawl.WithHTTPClient(site.Client()), // every host name reaches the site
		crawl.WithHostWorkers(2),
		crawl.WithMaxDepth(3),
	)
	if err != nil {
		log.Fatal(err)
	}
	stats, err := c.Run(context.Background(), "http://www.example.com/")
	if err != nil {
		log.Fatal(err)
	}

	calendar := 0
	for _, r := range site.Requests() {
		if strings.HasPrefix(r.URI, "/calendar/") {
			calendar++
		}
	}
	fmt.Println("robots.txt fetched:", site.Count("/robots.txt"))
	fmt.Println("/ and /about fetched:", site.Count("/"), site.Count("/about"))
	fmt.Println("/private/admin fetched:", site.Count("/private/admin"))
	fmt.Println("calendar pages, depth 1 to 3:", calendar)
	fmt.Println("at most 2 requests at once:", site.Peak() <= 2)
	fmt.Println("results:", stats.Done, "refused past max depth:", stats.Refused["max_depth"])
	// Output:
	// robots.txt fetched: 1
	// / and /about fetched: 1 1
	// /private/admin fetched: 0
	// calendar pages, depth 1 to 3: 6
	// at most 2 requests at once: true
	// results: 9 refused past max depth: 6
}

// Measure a crawler on the full maze: one crawl of "/" meets the 64 static
// cases and the 27 script cases. A crawler without a browser, here with
// every means of discovery on (robots.txt not obeyed, since the maze
// disallows a case in it), finds all the static cases and none of the
// script cases, whose pages name their targets only by running a script.
func ExampleFullMaze() {
	maze := crawltest.NewFullMaze()
	srv := httptest.NewServer(maze)
	defer srv.Close()
	c, err := crawl.New(crawl.WithRobots(false), crawl.WithSitemaps(true), crawl.WithRequisites(true),
		crawl.WithReferences(true), crawl.WithSpeculative(true))
	if err != nil {
		log.Fatal(err)
	}
	if _, err := c.Run(context.Background(), srv.URL+"/"); err != nil {
		log.Fatal(err)
	}
	missed, extra := maze.Compare("navigation", "requisite", "reference", "speculative", "sitemap")
	fmt.Println(len(maze.Static.Found()), "of", len(crawltest.MazeCases()), "static cases found")
	fmt.Println(len(maze.Script.Found()), "of", len(crawltest.JSMazeCases()), "script cases found")
	fmt.Println(len(missed), "missed, the first:", missed[0])
	fmt.Println(len(extra), "found of other roles")
	// Output:
	// 64 of 64 static cases found
	// 0 of 27 script cases found
	// 27 missed, the first: javascript/misc/automatic-post
	// 0 found of other roles
}
