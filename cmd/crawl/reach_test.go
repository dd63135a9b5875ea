package main

import (
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/asyncrawl/crawl"
)

// closedURL returns the URL of a loopback port nothing listens on, where a
// connection is refused.
func closedURL(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := "http://" + l.Addr().String() + "/"
	l.Close()
	return u
}

// silentURL returns the URL of a server that accepts connections and
// never answers, until the test ends.
func silentURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return "http://" + l.Addr().String() + "/"
}

// A crawl in which no root got a response exits 1 with a line naming each
// root and why, after the report, also when a budget (-max_duration,
// -max_pages) ended it; one in which a root got any response, an error
// status or a redirect not followed included, exits 0.
func TestNoRootAnswered(t *testing.T) {
	s := startSite(t)
	s.Page("/", "/a")
	s.Page("/a")
	s.Body("/gone", "text/plain", "gone").Status(http.StatusNotFound)
	s.Redirect("/away", http.StatusFound, "http://elsewhere.example/")
	s.Redirect("/to-broken", http.StatusFound, "/broken")
	s.Handle("/broken", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			conn.Close()
		}
	}))
	down := startSite(t) // robots.txt answers 500
	down.Page("/")
	down.Body("/robots.txt", "text/plain", "busy").Status(http.StatusInternalServerError)
	closed := closedURL(t)
	silent := silentURL(t)
	for _, tt := range []struct {
		name  string
		args  []string
		code  int
		want  []string // in the stderr line, with code 1
		roots int      // the report's Done
	}{
		{"refused, robots.txt", []string{closed}, 1, []string{closed + ": robots.txt unavailable: connection refused"}, 1},
		{"refused", []string{"-robots=false", closed}, 1, []string{closed + ": connection refused"}, 1},
		{"robots.txt 500", []string{down.URL("/")}, 1, []string{down.URL("/") + ": robots.txt unavailable: status 500"}, 1},
		{"redirected to a broken URL", []string{s.URL("/to-broken")}, 1, []string{s.URL("/to-broken") + " (redirected to " + s.URL("/broken") + "): "}, 2},
		{"two dead roots", []string{"-robots=false", closed, s.URL("/broken")}, 1, []string{closed + ": connection refused", s.URL("/broken") + ": "}, 2},
		{"blocked", []string{"-block_private", "-robots=false", closed}, 1, []string{closed + ": dial tcp ", ": host is 127.0.0.1: blocked address"}, 1},
		{"blocked, robots.txt", []string{"-block_private", closed}, 1, []string{closed + ": robots.txt unavailable: dial tcp ", ": host is 127.0.0.1: blocked address"}, 1},
		{"-max_duration before any response", []string{"-max_duration", "500ms", silent}, 1, []string{silent + ": none before -max_duration ended the crawl"}, 0},
		{"-max_pages, the root refused", []string{"-max_pages", "1", "-robots=false", closed}, 1, []string{closed + ": connection refused"}, 1},
		{"-max_pages, the root answers", []string{"-max_pages", "1", s.URL("/")}, 0, nil, 1},
		{"one root answers", []string{closed, s.URL("/")}, 0, nil, 3},
		{"an error status", []string{s.URL("/gone")}, 0, nil, 1},
		{"a redirect out of scope", []string{s.URL("/away")}, 0, nil, 1},
		// Checked, not followed: the redirect was the answer, whatever
		// came of the check (it exited 1, blaming the root).
		{"a redirect out of scope, its target checked and down", []string{"-check_external", s.URL("/away")}, 0, nil, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := runCrawl(t, append([]string{"-q", "-max_tries", "1"}, tt.args...)...)
			if got.code != tt.code {
				t.Fatalf("crawl %q: exit %d, want %d; stderr:\n%s", tt.args, got.code, tt.code, got.stderr)
			}
			if want := "Done: " + string(rune('0'+tt.roots)); !strings.Contains(got.stdout, want) {
				t.Errorf("crawl %q: the report lacks %q:\n%s", tt.args, want, got.stdout)
			}
			if tt.code == 0 {
				if got.stderr != "" {
					t.Errorf("crawl %q: stderr %q, want nothing", tt.args, got.stderr)
				}
				return
			}
			lines := strings.Split(strings.TrimSuffix(got.stderr, "\n"), "\n")
			last := lines[len(lines)-1]
			if len(lines) != 1 || !strings.HasPrefix(last, "crawl: no root got a response: ") {
				t.Errorf("crawl %q: stderr %q, want one line saying no root got a response", tt.args, got.stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(last, w) {
					t.Errorf("crawl %q: stderr %q lacks %q", tt.args, last, w)
				}
			}
		})
	}
	// The log does not call a URL robots.txt did not answer for
	// "disallowed".
	got := runCrawl(t, "-max_tries", "1", down.URL("/"))
	if strings.Contains(got.stderr, "disallowed") || !strings.Contains(got.stderr, "robots.txt unavailable") {
		t.Errorf("crawl %s, robots.txt answering 500: the log says\n%s\nwant robots.txt unavailable, not disallowed", down.URL("/"), got.stderr)
	}
}

// With -sitemaps, a root host's /sitemap.xml, which the crawler tries on
// its own, is no root: the stderr line does not name it, and its response
// (a 404) is none of a root's; a page its sitemap lists that answers is a
// response of the crawl, as README's exit status says.
func TestNoRootAnsweredSitemaps(t *testing.T) {
	refused := startSite(t) // the root disallowed, no sitemap
	refused.Page("/")
	refused.Body("/robots.txt", "text/plain", "User-agent: *\nDisallow: /\nAllow: /sitemap.xml\n")
	mapped := startSite(t) // the root disallowed, its sitemap's page allowed
	mapped.Page("/")
	mapped.Page("/a")
	mapped.Body("/robots.txt", "text/plain", "User-agent: *\nDisallow: /\nAllow: /sitemap.xml\nAllow: /a\n")
	mapped.Body("/sitemap.xml", "application/xml", `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>`+mapped.URL("/a")+`</loc></url></urlset>`)
	down := startSite(t) // robots.txt answers 500
	down.Page("/")
	down.Body("/robots.txt", "text/plain", "busy").Status(http.StatusInternalServerError)
	for _, tt := range []struct {
		name, root string
		code       int
		want       string // the stderr line, with code 1
		done       string
	}{
		{"root disallowed, /sitemap.xml 404", refused.URL("/"), 1, "crawl: no root got a response: " + refused.URL("/") + ": disallowed by robots.txt\n", "Done: 2"},
		{"root disallowed, a sitemap's page answers", mapped.URL("/"), 0, "", "Done: 3"},
		{"robots.txt 500", down.URL("/"), 1, "crawl: no root got a response: " + down.URL("/") + ": robots.txt unavailable: status 500\n", "Done: 2"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := runCrawl(t, "-q", "-max_tries", "1", "-sitemaps", tt.root)
			if got.code != tt.code || got.stderr != tt.want {
				t.Errorf("crawl -sitemaps %s: exit %d, stderr %q; want %d, %q", tt.root, got.code, got.stderr, tt.code, tt.want)
			}
			if !strings.Contains(got.stdout, tt.done) {
				t.Errorf("crawl -sitemaps %s: the report lacks %q:\n%s", tt.root, tt.done, got.stdout)
			}
		})
	}
}

// A root that is a path is an error naming it, not a host: crawl
// /relative/path is not http://relative/path.
func TestRootIsPath(t *testing.T) {
	for _, root := range []string{"/relative/path", "./page.html", "../up"} {
		got := runCrawl(t, "-q", root)
		if got.code != 1 || got.stdout != "" || !strings.Contains(got.stderr, `"`+root+`": a path, not a URL`) {
			t.Errorf("crawl %s: exit %d, stdout %q, stderr %q; want 1, nothing, an error naming it as a path", root, got.code, got.stdout, got.stderr)
		}
	}
}

// With -check_external, a rel=nofollow link is neither followed nor
// checked while the page's robots directives are obeyed (the default, as
// -robots); -robots_directives=false follows and checks it, robots.txt
// still obeyed.
func TestNofollowChecked(t *testing.T) {
	other := startSite(t)
	other.Page("/x")
	otherURL := strings.Replace(other.URL("/x"), "127.0.0.1", "localhost", 1)
	s := startSite(t)
	s.Body("/", "text/html", `<a rel=nofollow href="`+otherURL+`">x</a> <a rel="nofollow" href="/n">n</a> <a href="/private">p</a>`)
	s.Page("/n")
	s.Page("/private")
	s.Robots("User-agent: *\nDisallow: /private\n")
	for _, tt := range []struct {
		args []string
		want []string // the URLs with a Result
	}{
		{nil, []string{s.URL("/"), s.URL("/private")}},
		{[]string{"-robots_directives=false"}, []string{s.URL("/"), s.URL("/n"), s.URL("/private"), otherURL}},
	} {
		r := runCrawl(t, append(append([]string{"-q", "-check_external", "-format", "jsonl"}, tt.args...), s.URL("/"))...)
		if r.code != 0 {
			t.Fatalf("crawl %q: exit %d; stderr %q", tt.args, r.code, r.stderr)
		}
		results, _ := parseJSONLines(t, r.stdout)
		var got []string
		for _, res := range results {
			got = append(got, res.URL)
			if res.URL == s.URL("/private") && (res.FailKind != "disallowed" || res.Broken) {
				t.Errorf("crawl %q: /private: %+v, want disallowed, not broken", tt.args, res)
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, tt.want) {
			t.Errorf("crawl %q: Results for %q, want %q", tt.args, got, tt.want)
		}
	}
}

// A bad root is refused before any file is made: the same command with the
// root corrected then runs.
func TestBadRootLeavesNoFile(t *testing.T) {
	s := startSite(t)
	s.Page("/")
	dir := t.TempDir()
	files := []string{"-warc", filepath.Join(dir, "a.warc.gz"), "-warc_index", filepath.Join(dir, "a.cdxj"), "-state", filepath.Join(dir, "a.state"), "-o", filepath.Join(dir, "report.txt")}
	r := runCrawl(t, append([]string{"-q", "/relative/path"}, files...)...)
	if left, _ := os.ReadDir(dir); r.code != 1 || len(left) != 0 {
		t.Errorf("crawl /relative/path: exit %d, %d files left (%v); want 1, none", r.code, len(left), left)
	}
	if r := runCrawl(t, append([]string{"-q", s.URL("/")}, files...)...); r.code != 0 {
		t.Errorf("the root corrected: exit %d, want 0; stderr %q", r.code, r.stderr)
	}
}

// TestUnansweredShared: a process of a shared crawl that got no Result of
// a root (another process took them) tells by the crawl's counters: no
// response anywhere in the crawl is no root answered; any response, or
// nothing done yet, is not.
func TestUnansweredShared(t *testing.T) {
	roots := []string{"http://h0.test/", "http://h1.test/"}
	a := newReach()
	a.result(&crawl.Result{URL: "http://h0.test/p", Referrer: "http://h0.test/", Depth: 1, Err: errors.New("timeout")})
	for _, tt := range []struct {
		stats *crawl.Stats
		want  bool // a line naming the roots
	}{
		{&crawl.Stats{Done: 3, StatusCounts: map[int]int{}}, true},
		{&crawl.Stats{Done: 3, StatusCounts: map[int]int{503: 1}}, false},
		{&crawl.Stats{Done: 3, StatusCounts: map[int]int{301: 1}}, false},
		{&crawl.Stats{}, false},
	} {
		got := a.unanswered(tt.stats, roots)
		if (got != "") != tt.want || tt.want && !strings.Contains(got, strings.Join(roots, ", ")) {
			t.Errorf("unanswered(%+v) = %q, want a line naming %v: %v", tt.stats, got, roots, tt.want)
		}
	}
}
