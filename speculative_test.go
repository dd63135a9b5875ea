package crawl_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/asyncrawl/crawl"
)

// TestSpeculative crawls a site whose pages reach some URLs only through
// a script, an external script fetched as a requisite, or robots.txt:
// those are fetched with WithSpeculative, and only with it.
func TestSpeculative(t *testing.T) {
	for _, tt := range []struct {
		name    string
		opts    []crawl.Option
		fetched []string // on the site, robots.txt aside
	}{
		{"default", nil, []string{"/"}},
		{"speculative", []crawl.Option{crawl.WithSpeculative(true)},
			[]string{"/", "/hidden.html", "/open/page.html"}},
		{"speculative requisites", []crawl.Option{crawl.WithSpeculative(true), crawl.WithRequisites(true)},
			[]string{"/", "/app.js", "/chunk.js", "/hidden.html", "/open/page.html", "/sprite.png"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			mux := http.NewServeMux()
			mux.Handle("/{$}", htmlPage(`<html><head><script src="/app.js"></script>
<script>if (ok) { location = "/hidden.html" }</script></head><body>hello</body></html>`))
			mux.Handle("/hidden.html", htmlPage(`<p>found</p>`))
			mux.Handle("/open/page.html", htmlPage(`<p>open</p>`))
			mux.HandleFunc("/app.js", func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/javascript")
				// A page named by a requisite script is not followed; its
				// requisites are.
				fmt.Fprint(w, `load("/chunk.js"); go("/from-script.html"); img = "sprite.png"`)
			})
			mux.HandleFunc("/{file}", func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/octet-stream")
				fmt.Fprint(w, "data")
			})
			s := newSite(t, mux)
			s.setRobots("User-agent: *\nDisallow: /private/\nAllow: /open/page.html\nDisallow: /wild*card\n", nil)
			var mu sync.Mutex
			var spec []string
			hook := crawl.WithPageHook(func(p *crawl.Page) {
				mu.Lock()
				defer mu.Unlock()
				for _, l := range p.Links {
					if l.Speculative {
						spec = append(spec, strings.TrimPrefix(l.URL.String(), s.URL)+" "+l.Source)
					}
				}
			})
			opts := append([]crawl.Option{crawl.WithRobots(true), hook}, tt.opts...)
			if _, _, err := crawlSite(t, crawlerCtx(t), []string{s.URL + "/"}, opts...); err != nil {
				t.Fatal(err)
			}
			if g, w := strings.Join(s.Requested(), " "), strings.Join(tt.fetched, " "); g != w {
				t.Errorf("fetched %q, want %q", g, w)
			}
			if len(tt.opts) == 0 && len(spec) != 0 {
				t.Errorf("speculative links without WithSpeculative: got %q, want none", spec)
			}
			if len(tt.opts) > 0 && !strings.Contains(strings.Join(spec, "\n"), "/hidden.html script speculative") {
				t.Errorf("Page.Links speculative: got %q, want /hidden.html with Source \"script speculative\"", spec)
			}
		})
	}
}

// Without robots.txt obeyed and without sitemaps, WithSpeculative still
// reads the root host's robots.txt for its paths, disallowed ones too.
func TestSpeculativeRobotsPathsWithoutRobots(t *testing.T) {
	s := newSite(t, htmlPage(`home`))
	s.setRobots("User-agent: *\nDisallow: /secret/\nAllow: /open.html\n", nil)
	_, res, err := crawlSite(t, context.Background(), []string{s.URL + "/"},
		crawl.WithRobots(false), crawl.WithSpeculative(true))
	if err != nil {
		t.Fatal(err)
	}
	s.wantHits(t, "/secret/", 1)
	s.wantHits(t, "/open.html", 1)
	if _, ok := res[s.URL+"/robots.txt"]; !ok {
		t.Errorf("robots.txt has no Result; got %v", res)
	}
}
