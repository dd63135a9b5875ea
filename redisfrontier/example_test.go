package redisfrontier_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/asyncrawl/crawl"
	"github.com/asyncrawl/crawl/redisfrontier"
)

// Run this on each machine of the crawl, against one Redis: the processes
// share the crawl named after its roots and scope, and each Run returns
// when the whole crawl is done, with its Stats.
func Example() {
	ctx := context.Background()
	f, err := redisfrontier.Open(ctx, "redis://127.0.0.1:6379/0", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	c, err := crawl.New(crawl.WithFrontier(f), crawl.WithLeaseTerm(time.Minute))
	if err != nil {
		log.Fatal(err)
	}
	stats, err := c.Run(ctx, "https://example.com/")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(f.Name(), stats.Done)
}
