package main

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/asyncrawl/crawl/crawltest"
)

// TestMaze runs the command on crawltest's replica of the security crawl
// maze's 64 cases that need no script, with the flags the README's table
// names, and checks the cases each finds: the navigation cases with no
// flag, the requisites too with -requisites, every case with every means
// of discovery on and robots.txt not obeyed.
func TestMaze(t *testing.T) {
	tests := []struct {
		name  string
		flags []string
		roles []string
	}{
		{"no flag", nil, []string{"navigation"}},
		{"requisites", []string{"-requisites"}, []string{"navigation", "requisite"}},
		{"all", []string{"-robots=false", "-sitemaps", "-requisites", "-references", "-speculative"},
			[]string{"navigation", "requisite", "reference", "speculative", "sitemap"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			maze := crawltest.NewMaze()
			srv := httptest.NewServer(maze)
			defer srv.Close()
			r := runCrawl(t, append(append([]string{"-q"}, tt.flags...), srv.URL+"/")...)
			if r.code != 0 {
				t.Fatalf("crawl %v: exit %d, stderr:\n%s", tt.flags, r.code, r.stderr)
			}
			if missed, extra := maze.Compare(tt.roles...); len(missed) > 0 || len(extra) > 0 {
				t.Errorf("crawl %v: found %d cases\nmissed:\n\t%s\nnot of %v:\n\t%s",
					tt.flags, len(maze.Found()), strings.Join(missed, "\n\t"), tt.roles, strings.Join(extra, "\n\t"))
			}
		})
	}
}
