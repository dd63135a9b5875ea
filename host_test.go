package crawl_test

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/asyncrawl/crawl"
)

// The tests of this file check that a crawl knows each host by one name
// (issue 11): the host key, the scope, the robots.txt cache and the seen
// set all see "http://u@h./", "http://H/" and "http://h/" as one host, and
// an IDN host in Unicode and in ASCII as one.

// TestUserinfoIsNotAHost crawls a page linking one path under 21 spellings
// that differ only in their userinfo. They are one URL on one host: one
// request for the path, one for robots.txt, and never two requests at once
// at a host limited to one.
func TestUserinfoIsNotAHost(t *testing.T) {
	var links []string // the root's, set once the server has its address
	mux := http.NewServeMux()
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) {
		htmlPage(crawlerLinks(links...))(w, r)
	})
	mux.HandleFunc("/p", func(w http.ResponseWriter, r *http.Request) {
		// Slow enough that requests to the one host would overlap
		// if it had several slots; the count is what is checked.
		time.Sleep(20 * time.Millisecond)
		htmlPage("<p>p</p>")(w, r)
	})
	s := newSite(t, mux)
	hostport := strings.TrimPrefix(s.URL, "http://")
	for i := range 20 {
		links = append(links, fmt.Sprintf("http://u%d:pw@%s/p", i, hostport))
	}
	links = append(links, "http://"+hostport+"/p")

	stats, res, err := crawlSite(t, crawlerCtx(t), []string{s.URL + "/"},
		crawl.WithWorkers(8), crawl.WithHostWorkers(1), crawl.WithRobots(true))
	if err != nil {
		t.Fatalf("Run: got %v, want nil", err)
	}
	s.wantHits(t, "/p", 1)
	if got := s.robotsHits.Load(); got != 1 {
		t.Errorf("root linking %d userinfo spellings of /p: server saw /robots.txt %d times, want 1", len(links), got)
	}
	if got := s.Peak(); got != 1 {
		t.Errorf("root linking %d userinfo spellings of /p, WithHostWorkers(1): server's peak in flight %d, want 1", len(links), got)
	}
	if got := s.Header("/p").Get("Authorization"); got != "" {
		t.Errorf("request for /p: Authorization %q, want none (userinfo is dropped)", got)
	}
	var urls []string
	for u := range res {
		urls = append(urls, u)
	}
	slices.Sort(urls)
	if want := []string{s.URL + "/", s.URL + "/p"}; !slices.Equal(urls, want) {
		t.Errorf("got Results for %q, want %q", urls, want)
	}
	if stats.Done != 2 {
		t.Errorf("Stats.Done = %d, want 2", stats.Done)
	}
}

// TestUserinfoDroppedFromRoot checks that a root's userinfo is dropped too:
// the root is crawled under its URL without it, and no credentials are
// sent.
func TestUserinfoDroppedFromRoot(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/{$}", htmlPage(crawlerLinks("/p")))
	mux.HandleFunc("/p", htmlPage("<p>p</p>"))
	s := newSite(t, mux)
	root := "http://user:secret@" + strings.TrimPrefix(s.URL, "http://") + "/"

	_, res, err := crawlSite(t, crawlerCtx(t), []string{root})
	if err != nil {
		t.Fatalf("Run(%q): got %v, want nil", root, err)
	}
	for _, u := range []string{s.URL + "/", s.URL + "/p"} {
		if _, ok := res[u]; !ok {
			t.Errorf("Run(%q): no Result for %s; got Results for %v", root, u, crawlerURIs(t, s.URL, res))
		}
	}
	for _, uri := range []string{"/", "/p"} {
		s.wantHits(t, uri, 1)
		if got := s.Header(uri).Get("Authorization"); got != "" {
			t.Errorf("Run(%q): request for %s had Authorization %q, want none", root, uri, got)
		}
	}
}

// TestTrailingDotRootLenient crawls from a root whose host ends in a dot,
// with lenient scope: the dot is removed, so the registrable domain is
// found, and a link to a subdomain is in scope.
func TestTrailingDotRootLenient(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/{$}", htmlPage(crawlerLinks("http://a.example.com/x", "http://example.com/")))
	mux.HandleFunc("/x", htmlPage("<p>x</p>"))
	s := newSite(t, mux)

	const root = "http://example.com./"
	_, res, err := crawlSite(t, crawlerCtx(t), []string{root},
		crawl.WithHTTPClient(routeAll(t, s.Server)), crawl.WithLenientHosts(true))
	if err != nil {
		t.Fatalf("Run(%q): got %v, want nil", root, err)
	}
	if want := []string{"a.example.com/x", "example.com/"}; !slices.Equal(s.HostPaths(), want) {
		t.Errorf("root %s linking http://a.example.com/x and http://example.com/, lenient: server saw host+path %q, want %q",
			root, s.HostPaths(), want)
	}
	for _, u := range []string{"http://example.com/", "http://a.example.com/x"} {
		if _, ok := res[u]; !ok {
			t.Errorf("root %s, lenient: no Result for %s", root, u)
		}
	}
}

// TestIDNHostIsOneHost crawls an IDN host under both its Unicode and its
// ASCII names, in any case: one host for scope, dedupe and robots.txt, and
// every request sent to its ASCII name.
func TestIDNHostIsOneHost(t *testing.T) {
	tests := []struct {
		name  string
		roots []string // with %s for the port
		links []string // with %s for the port
	}{
		{
			name:  "ASCII root",
			roots: []string{"http://xn--bcher-kva.example:%s/"},
			links: []string{"http://bücher.example:%s/p", "http://BÜCHER.example:%s/p", "http://xn--bcher-kva.example:%s/p",
				"http://bücher.example:%s/q"},
		},
		{
			name:  "Unicode root",
			roots: []string{"http://BÜCHER.example:%s/"},
			links: []string{"http://xn--bcher-kva.example:%s/p", "http://XN--BCHER-KVA.example:%s/q", "http://bücher.example.:%s/q"},
		},
		{
			name:  "both roots",
			roots: []string{"http://xn--bcher-kva.example:%s/", "http://bücher.example:%s/"},
			links: []string{"http://bücher.example:%s/p", "http://xn--bcher-kva.example:%s/q"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var links []string
			mux := http.NewServeMux()
			mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) {
				htmlPage(crawlerLinks(links...))(w, r)
			})
			mux.HandleFunc("/p", htmlPage("<p>p</p>"))
			mux.HandleFunc("/q", htmlPage("<p>q</p>"))
			s := newSite(t, mux)
			port := s.URL[strings.LastIndexByte(s.URL, ':')+1:]
			for _, l := range tt.links {
				links = append(links, fmt.Sprintf(l, port))
			}
			var roots []string
			for _, r := range tt.roots {
				roots = append(roots, fmt.Sprintf(r, port))
			}

			_, _, err := crawlSite(t, crawlerCtx(t), roots,
				crawl.WithHTTPClient(routeAll(t, s.Server)), crawl.WithRobots(true))
			if err != nil {
				t.Fatalf("Run(%q): got %v, want nil", roots, err)
			}
			for _, uri := range []string{"/", "/p", "/q"} {
				if got := s.Hits(uri); got != 1 {
					t.Errorf("roots %q linking %q: server saw %s %d times, want 1", roots, links, uri, got)
				}
			}
			if got := s.robotsHits.Load(); got != 1 {
				t.Errorf("roots %q linking %q: server saw /robots.txt %d times, want 1", roots, links, got)
			}
			host := "xn--bcher-kva.example:" + port
			want := []string{host + "/", host + "/p", host + "/q"}
			if got := s.HostPaths(); !slices.Equal(got, want) {
				t.Errorf("roots %q linking %q: server saw host+path %q, want %q", roots, links, got, want)
			}
		})
	}
}

// TestInvalidHostNotCrawled checks that a host that fails IDNA or has an
// empty label is never crawled: as a root it is an error wrapping
// ErrBadRoot, as a link it is dropped, even when lenient scope would take
// its registrable domain.
func TestInvalidHostNotCrawled(t *testing.T) {
	bad := []string{
		"http://xn--zzzz.example.com/x", // not punycode
		"http://xn--abc.example.com/x",  // punycode of ASCII only
		"http://a..example.com/x",       // an empty label
		"http://example.com../x",        // two trailing dots
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/{$}", htmlPage(crawlerLinks(append(bad, "http://ok.example.com/x")...)))
	mux.HandleFunc("/x", htmlPage("<p>x</p>"))
	s := newSite(t, mux)

	const root = "http://example.com/"
	_, _, err := crawlSite(t, crawlerCtx(t), []string{root},
		crawl.WithHTTPClient(routeAll(t, s.Server)), crawl.WithLenientHosts(true))
	if err != nil {
		t.Fatalf("Run(%q): got %v, want nil", root, err)
	}
	if want := []string{"example.com/", "ok.example.com/x"}; !slices.Equal(s.HostPaths(), want) {
		t.Errorf("root %s linking %q, lenient: server saw host+path %q, want %q", root, bad, s.HostPaths(), want)
	}

	c, err := crawl.New(crawl.WithHTTPClient(routeAll(t, s.Server)))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range bad {
		if _, err := c.Run(crawlerCtx(t), r); !errors.Is(err, crawl.ErrBadRoot) {
			t.Errorf("Run(%q): got %v, want an error wrapping ErrBadRoot", r, err)
		}
	}
	if got := s.Total(); got != 2 {
		t.Errorf("after Runs from bad roots %q: server saw %d requests, want 2 (those of the first crawl)", bad, got)
	}
}
