package crawltest_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/asyncrawl/crawl"
	"github.com/asyncrawl/crawl/crawltest"
)

// allRoles are the roles of every case of the FullMaze.
var allRoles = []string{"navigation", "requisite", "reference", "speculative", "sitemap"}

// TestJSMazeCases checks the list of cases: 27, named and targeted as the
// doc says, unique among themselves and with the Maze's, of the roles and
// interactions the doc lists.
func TestJSMazeCases(t *testing.T) {
	cases := crawltest.JSMazeCases()
	if len(cases) != 27 {
		t.Fatalf("got %d cases, want 27", len(cases))
	}
	clicks := 0
	for _, c := range cases {
		if want := "/test/" + c.Name + ".found"; c.Target != want || !strings.HasPrefix(c.Name, "javascript/") {
			t.Errorf("case %q: got target %q, want %q under javascript/", c.Name, c.Target, want)
		}
		if c.Role != "navigation" && c.Role != "requisite" {
			t.Errorf("case %q: got role %q, want navigation or requisite", c.Name, c.Role)
		}
		switch c.Interaction {
		case "click":
			clicks++
		case "":
		default:
			t.Errorf("case %q: got interaction %q, want \"\" or \"click\"", c.Name, c.Interaction)
		}
	}
	if clicks != 19 {
		t.Errorf("got %d cases that need clicks, want 19", clicks)
	}
	names, targets := map[string]bool{}, map[string]bool{}
	full := crawltest.FullMazeCases()
	if len(full) != 64+27 {
		t.Fatalf("got %d cases of the full maze, want 91", len(full))
	}
	for _, c := range full {
		if names[c.Name] || targets[c.Target] {
			t.Errorf("case %q (target %q) is listed twice", c.Name, c.Target)
		}
		names[c.Name], targets[c.Target] = true, true
		if c.Interaction != "" && !slices.Contains(cases, c) {
			t.Errorf("static case %q: got interaction %q, want none", c.Name, c.Interaction)
		}
	}
}

// fetchBody sends a request and returns the status, the Content-Type and
// the body of the response.
func fetchBody(t *testing.T, method, u string) (int, string, string) {
	t.Helper()
	req, err := http.NewRequest(method, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
}

var (
	hrefRe = regexp.MustCompile(`href="([^"]+)"`)
	srcRe  = regexp.MustCompile(`<script[^>]* src="([^"]+)"`)
)

// mazePages walks the directory listings of the maze served at base from
// "/", and returns the pages (paths ending in .html) under /javascript/ it
// reached, and the listings' paths.
func mazePages(t *testing.T, base string) (pages, dirs []string) {
	t.Helper()
	queue := []string{"/"}
	seen := map[string]bool{"/": true}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		code, _, body := fetchBody(t, "GET", base+p)
		if code != http.StatusOK {
			continue // the Maze's pages that answer with a redirect
		}
		if !strings.HasSuffix(p, "/") {
			if strings.HasPrefix(p, "/javascript/") {
				pages = append(pages, p)
			}
			continue
		}
		dirs = append(dirs, p)
		for _, m := range hrefRe.FindAllStringSubmatch(body, -1) {
			next := m[1]
			if !seen[next] && strings.HasPrefix(next, "/") && (strings.HasSuffix(next, "/") || strings.HasSuffix(next, ".html")) {
				seen[next] = true
				queue = append(queue, next)
			}
		}
	}
	slices.Sort(pages)
	return pages, dirs
}

// TestJSMazeServes checks what the FullMaze serves of the JSMaze: "/"
// lists the static maze's directories and the script maze's; every page
// under /javascript/ is reached from it and answers 200, it and the
// scripts it loads never write a path under /test/; each case's target
// answers 200 to any method and other /test/ paths 404.
func TestJSMazeServes(t *testing.T) {
	maze := crawltest.NewFullMaze()
	srv := httptest.NewServer(maze)
	defer srv.Close()
	_, _, root := fetchBody(t, "GET", srv.URL+"/")
	for _, dir := range []string{"/javascript/", "/html/", "/headers/", "/misc/", "/css/"} {
		if !strings.Contains(root, `href="`+dir+`"`) {
			t.Errorf("/ does not list %s:\n%s", dir, root)
		}
	}
	pages, _ := mazePages(t, srv.URL)
	if len(pages) != 22 {
		t.Errorf("got %d pages under /javascript/: %v, want 22", len(pages), pages)
	}
	scripts := 0
	for _, p := range pages {
		code, ctype, body := fetchBody(t, "GET", srv.URL+p)
		if code != http.StatusOK || !strings.HasPrefix(ctype, "text/html") {
			t.Errorf("GET %s: got %d %q, want 200 text/html", p, code, ctype)
		}
		if strings.Contains(body, "/test/") {
			t.Errorf("page %s writes a path under /test/:\n%s", p, body)
		}
		for _, m := range srcRe.FindAllStringSubmatch(body, -1) {
			u, err := url.Parse(srv.URL + p)
			if err != nil {
				t.Fatal(err)
			}
			u, _ = u.Parse(m[1])
			scripts++
			code, ctype, script := fetchBody(t, "GET", u.String())
			if code != http.StatusOK || !strings.HasPrefix(ctype, "text/javascript") {
				t.Errorf("GET %s (of %s): got %d %q, want 200 text/javascript", u.Path, p, code, ctype)
			}
			if strings.Contains(script, "/test/") {
				t.Errorf("script %s writes a path under /test/:\n%s", u.Path, script)
			}
		}
	}
	if scripts != 6 {
		t.Errorf("got %d scripts loaded by the pages, want 6", scripts)
	}
	for _, c := range crawltest.JSMazeCases() {
		for _, method := range []string{"GET", "POST", "PUT", "DELETE"} {
			if code, _, _ := fetchBody(t, method, srv.URL+c.Target); code != http.StatusOK {
				t.Errorf("%s %s: got %d, want 200", method, c.Target, code)
			}
		}
		for _, p := range []string{strings.TrimSuffix(c.Target, ".found"), c.Target + "x", strings.TrimSuffix(c.Target, ".found") + ".html"} {
			if code, _, _ := fetchBody(t, "GET", srv.URL+p); code != http.StatusNotFound {
				t.Errorf("GET %s: got %d, want 404", p, code)
			}
		}
	}
	if missed, _ := maze.Script.Compare("navigation", "requisite"); len(missed) != 0 {
		t.Errorf("targets requested, missed by Found: %v", missed)
	}
}

// TestJSMazeAlone checks the JSMaze served on its own: "/" lists only
// "javascript/", the walk from it reaches the 22 pages, and the static
// maze's files are not there.
func TestJSMazeAlone(t *testing.T) {
	srv := httptest.NewServer(crawltest.NewJSMaze())
	defer srv.Close()
	_, _, root := fetchBody(t, "GET", srv.URL+"/")
	if got := hrefRe.FindAllStringSubmatch(root, -1); len(got) != 1 || got[0][1] != "/javascript/" {
		t.Errorf("/ links to %v, want only /javascript/", got)
	}
	if pages, _ := mazePages(t, srv.URL); len(pages) != 22 {
		t.Errorf("got %d pages, want 22", len(pages))
	}
	for _, p := range []string{"/robots.txt", "/sitemap.xml", "/html/body/a/href.html", "/test/html/body/a/href.found"} {
		if code, _, _ := fetchBody(t, "GET", srv.URL+p); code != http.StatusNotFound {
			t.Errorf("GET %s: got %d, want 404", p, code)
		}
	}
}

// TestFullMazeStaticCrawl crawls the FullMaze with every means of
// discovery a crawler without a browser has: it finds every static case
// and none of the script cases, which is what makes the script cases a
// test of a browser.
func TestFullMazeStaticCrawl(t *testing.T) {
	maze := crawltest.NewFullMaze()
	srv := httptest.NewServer(maze)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := crawl.New(crawl.WithWorkers(8), crawl.WithHostWorkers(8), crawl.WithRobots(false), crawl.WithSitemaps(true),
		crawl.WithRequisites(true), crawl.WithReferences(true), crawl.WithSpeculative(true))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Run(ctx, srv.URL+"/"); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if missed, extra := maze.Static.Compare(allRoles...); len(missed) > 0 || len(extra) > 0 {
		t.Errorf("static cases: got %d found, missed %v, extra %v; want all %d", len(maze.Static.Found()), missed, extra, len(crawltest.MazeCases()))
	}
	if found := maze.Script.Found(); len(found) > 0 {
		t.Errorf("got %d script cases found without a browser: %v, want none", len(found), found)
	}
	missed, extra := maze.Compare(allRoles...)
	var want []string
	for _, c := range crawltest.JSMazeCases() {
		want = append(want, c.Name)
	}
	if !slices.Equal(missed, want) || len(extra) > 0 {
		t.Errorf("full maze: got missed %v, extra %v; want missed the %d script cases, no extra", missed, extra, len(want))
	}
	// The crawl did read the script maze: each of its pages and scripts.
	reqs := maze.Script.Requests()
	for _, p := range []string{"/javascript/interactive/two-listeners.html", "/javascript/frameworks/react/app.js", "/javascript/misc/string-variable.js"} {
		if reqs[p] == 0 {
			t.Errorf("got no request for %s, want the crawl to have read it", p)
		}
	}
}
