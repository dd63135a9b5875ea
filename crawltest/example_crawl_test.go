package crawltest_test

import (
	"context"
	"fmt"
	"log"
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
