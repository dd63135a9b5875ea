package crawl_test

import (
	"context"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/asyncrawl/crawl"
	"github.com/asyncrawl/crawl/crawltest"
)

// crawlMaze crawls a crawltest.Maze served on loopback with opts and
// returns the names of the cases found.
func crawlMaze(t *testing.T, opts ...crawl.Option) []string {
	t.Helper()
	maze := crawltest.NewMaze()
	srv := httptest.NewServer(maze)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	opts = append([]crawl.Option{crawl.WithWorkers(8), crawl.WithHostWorkers(8)}, opts...)
	c, err := crawl.New(opts...)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Run(ctx, srv.URL+"/"); err != nil {
		t.Fatalf("Run: %v", err)
	}
	var found []string
	for _, fc := range maze.Found() {
		found = append(found, fc.Name)
	}
	return found
}

// mazeCasesOf returns the names of the maze's cases whose role is one of
// roles.
func mazeCasesOf(roles ...string) []string {
	var names []string
	for _, c := range crawltest.MazeCases() {
		if slices.Contains(roles, c.Role) {
			names = append(names, c.Name)
		}
	}
	return names
}

// TestMaze crawls the replica of security-crawl-maze's 64 cases that need
// no script: with no option every navigation case is found and nothing
// else; with requisites every requisite too; with every means of
// discovery on (and robots.txt not obeyed, as the maze disallows one case
// in it), every case.
func TestMaze(t *testing.T) {
	if n := len(crawltest.MazeCases()); n != 64 {
		t.Fatalf("the maze has %d cases, want 64", n)
	}
	tests := []struct {
		name string
		opts []crawl.Option
		want []string
	}{
		{"no option", nil, mazeCasesOf("navigation")},
		{"requisites", []crawl.Option{crawl.WithRequisites(true)}, mazeCasesOf("navigation", "requisite")},
		{"references", []crawl.Option{crawl.WithReferences(true)}, mazeCasesOf("navigation", "reference")},
		{"all", []crawl.Option{crawl.WithRobots(false), crawl.WithSitemaps(true), crawl.WithRequisites(true),
			crawl.WithReferences(true), crawl.WithSpeculative(true)},
			mazeCasesOf("navigation", "requisite", "reference", "speculative", "sitemap")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := crawlMaze(t, tt.opts...)
			var missed, extra []string
			for _, w := range tt.want {
				if !slices.Contains(got, w) {
					missed = append(missed, w)
				}
			}
			for _, g := range got {
				if !slices.Contains(tt.want, g) {
					extra = append(extra, g)
				}
			}
			if len(missed) > 0 {
				t.Errorf("found %d of %d cases; missed:\n\t%s", len(got)-len(extra), len(tt.want), strings.Join(missed, "\n\t"))
			}
			if len(extra) > 0 {
				t.Errorf("found cases it should not have:\n\t%s", strings.Join(extra, "\n\t"))
			}
		})
	}
}
