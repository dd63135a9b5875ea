package boltfrontier_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/asyncrawl/crawl"
	"github.com/asyncrawl/crawl/boltfrontier"
	"github.com/asyncrawl/crawl/crawltest"
)

// A crawl kept in a state file: a Run cut short by its page budget (as a
// crash or a Ctrl-C would cut it) leaves the rest in the file, and the
// next Run on it goes on from there, fetching only what was left, and the
// site's robots.txt again, as each Run goes by the rules of its time (the
// site counts what it was sent); its Stats cover the whole crawl.
func Example() {
	site := crawltest.New()
	defer site.Close()
	site.Page("/", "/a", "/b", "/c")
	site.Page("/a", "/")
	site.Page("/b", "/c")
	site.Page("/c")

	dir, err := os.MkdirTemp("", "example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	state := filepath.Join(dir, "crawl.state")

	for _, budget := range []int{2, 0} {
		f, err := boltfrontier.Open(state, nil)
		if err != nil {
			panic(err)
		}
		c, err := crawl.New(crawl.WithFrontier(f), crawl.WithHTTPClient(site.Client()), crawl.WithMaxPages(budget))
		if err != nil {
			panic(err)
		}
		stats, err := c.Run(context.Background(), "http://www.example.com/")
		if err != nil {
			panic(err)
		}
		fmt.Printf("done %d, todo %d, pages fetched so far %d\n", stats.Done, stats.Todo, site.TotalExceptRobots())
		if err := f.Close(); err != nil {
			panic(err)
		}
	}
	fmt.Println(site.Counts()) // each page fetched once in all
	// Output:
	// done 2, todo 2, pages fetched so far 2
	// done 4, todo 0, pages fetched so far 4
	// map[/:1 /a:1 /b:1 /c:1 /robots.txt:2]
}
