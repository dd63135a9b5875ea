package crawl_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/asyncrawl/crawl"
	"github.com/asyncrawl/crawl/crawltest"
)

// TestMaze crawls the replica of security-crawl-maze's 64 cases that need
// no script: with no option every navigation case is found and nothing
// else; with requisites every requisite too; with references every
// reference; with every means of discovery on (and robots.txt not obeyed,
// as the maze disallows one case in it), every case.
func TestMaze(t *testing.T) {
	if n := len(crawltest.MazeCases()); n != 64 {
		t.Fatalf("the maze has %d cases, want 64", n)
	}
	tests := []struct {
		name  string
		opts  []crawl.Option
		roles []string
	}{
		{"no option", nil, []string{"navigation"}},
		{"requisites", []crawl.Option{crawl.WithRequisites(true)}, []string{"navigation", "requisite"}},
		{"references", []crawl.Option{crawl.WithReferences(true)}, []string{"navigation", "reference"}},
		{"all", []crawl.Option{crawl.WithRobots(false), crawl.WithSitemaps(true), crawl.WithRequisites(true),
			crawl.WithReferences(true), crawl.WithSpeculative(true)},
			[]string{"navigation", "requisite", "reference", "speculative", "sitemap"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			maze := crawltest.NewMaze()
			srv := httptest.NewServer(maze)
			defer srv.Close()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			c, err := crawl.New(append([]crawl.Option{crawl.WithWorkers(8), crawl.WithHostWorkers(8)}, tt.opts...)...)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Run(ctx, srv.URL+"/"); err != nil {
				t.Fatalf("Run: %v", err)
			}
			missed, extra := maze.Compare(tt.roles...)
			if len(missed) > 0 {
				t.Errorf("found %d cases; missed, of %v:\n\t%s", len(maze.Found()), tt.roles, strings.Join(missed, "\n\t"))
			}
			if len(extra) > 0 {
				t.Errorf("found cases not of %v:\n\t%s", tt.roles, strings.Join(extra, "\n\t"))
			}
		})
	}
}
