package main

import (
	"net/http/httptest"
	"slices"
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
	roles := func(rs ...string) []string {
		var names []string
		for _, c := range crawltest.MazeCases() {
			if slices.Contains(rs, c.Role) {
				names = append(names, c.Name)
			}
		}
		return names
	}
	tests := []struct {
		name  string
		flags []string
		want  []string
	}{
		{"no flag", nil, roles("navigation")},
		{"requisites", []string{"-requisites"}, roles("navigation", "requisite")},
		{"all", []string{"-robots=false", "-sitemaps", "-requisites", "-references", "-speculative"},
			roles("navigation", "requisite", "reference", "speculative", "sitemap")},
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
			var got []string
			for _, c := range maze.Found() {
				got = append(got, c.Name)
			}
			if !slices.Equal(got, tt.want) {
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
				t.Errorf("crawl %v: found %d cases, want %d\nmissed:\n\t%s\nnot expected:\n\t%s",
					tt.flags, len(got), len(tt.want), strings.Join(missed, "\n\t"), strings.Join(extra, "\n\t"))
			}
		})
	}
}
