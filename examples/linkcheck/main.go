// Command linkcheck reports every broken link of a site: 404s, 5xx, network
// errors, for its pages, their images, scripts and stylesheets, and the
// links to other sites, each with the pages and anchor text that named it;
// then, apart, the URLs it could not check because their host's robots.txt
// is unavailable. It exits 1 when one is broken.
//
//	go run ./examples/linkcheck https://example.com/docs/
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"sync"

	"github.com/asyncrawl/crawl"
)

// namer is where a page names a URL.
type namer struct{ page, text string }

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: linkcheck ROOT...")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	os.Exit(check(ctx, os.Stdout, os.Args[1:]...))
}

// check crawls from roots, writes the broken links to out and returns the
// exit status: 0 when none is broken, 1 when one is, 2 when the crawl
// could not run.
func check(ctx context.Context, out io.Writer, roots ...string) int {
	var mu sync.Mutex
	named := map[string][]namer{} // URL key (crawl.URLKey) -> where pages name it
	var broken, unchecked []crawl.Result
	c, err := crawl.New(
		crawl.WithWorkers(16),
		crawl.WithRequisites(true),        // images, scripts, stylesheets: on any host
		crawl.WithCheckExternal(true),     // links to other sites: their status only
		crawl.WithRobotsDirectives(false), // check a nofollow page's links too
		crawl.WithPageHook(func(p *crawl.Page) {
			mu.Lock()
			defer mu.Unlock()
			for _, l := range p.Links {
				if l.Role != crawl.Reference {
					u := crawl.URLKey(l.URL.String())
					named[u] = append(named[u], namer{l.Page, l.Text})
				}
			}
		}),
		crawl.WithResultHook(func(r crawl.Result) {
			mu.Lock()
			defer mu.Unlock()
			switch {
			case r.Broken():
				broken = append(broken, r)
			case errors.Is(r.Err, crawl.ErrRobotsUnavailable):
				// Not requested, so not broken: not checked.
				unchecked = append(unchecked, r)
			}
		}),
	)
	if err != nil {
		fmt.Fprintln(out, err)
		return 2
	}
	stats, err := c.Run(ctx, roots...)
	if err != nil {
		fmt.Fprintln(out, err)
		return 2
	}
	for _, rs := range [][]crawl.Result{broken, unchecked} {
		sort.Slice(rs, func(i, j int) bool { return rs[i].URL < rs[j].URL })
		for _, r := range rs {
			what := fmt.Sprint(r.Status)
			if r.Err != nil {
				what = r.Err.Error()
			}
			if !r.Broken() {
				what = "not checked: " + what
			}
			fmt.Fprintf(out, "%s: %s\n", r.URL, what)
			for _, n := range named[crawl.URLKey(r.URL)] {
				fmt.Fprintf(out, "\ton %s %q\n", n.page, n.text)
			}
			if len(named[crawl.URLKey(r.URL)]) == 0 && r.Referrer != "" {
				fmt.Fprintf(out, "\tfrom %s\n", r.Referrer)
			}
		}
	}
	fmt.Fprintf(out, "%d URLs checked, %d broken", stats.Done-len(unchecked), len(broken))
	if len(unchecked) > 0 {
		fmt.Fprintf(out, ", %d not checked (robots.txt unavailable)", len(unchecked))
	}
	fmt.Fprintln(out)
	if len(broken) > 0 {
		return 1
	}
	return 0
}
