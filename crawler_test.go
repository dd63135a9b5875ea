package crawl_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"regexp/syntax"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/asyncrawl/crawl"
)

// crawlerCtx returns a context that ends the test's crawl if it hangs.
func crawlerCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// crawlerLinks returns an HTML page linking to each href.
func crawlerLinks(hrefs ...string) string {
	var b strings.Builder
	b.WriteString("<!doctype html><html><body>\n")
	for _, h := range hrefs {
		fmt.Fprintf(&b, "<a href=%q>link</a>\n", h)
	}
	b.WriteString("</body></html>\n")
	return b.String()
}

// crawlerURIs returns the request URIs of the URLs that got a Result,
// sorted, failing the test for a URL that is not on the server at base.
func crawlerURIs(t *testing.T, base string, res map[string]crawl.Result) []string {
	t.Helper()
	var out []string
	for u := range res {
		rest, ok := strings.CutPrefix(u, base)
		if !ok {
			t.Errorf("Result for %s, not on %s", u, base)
			continue
		}
		out = append(out, rest)
	}
	sort.Strings(out)
	return out
}

// crawlerHostClient returns a client whose dialer sends each host name to
// its server, so that one crawl can reach several servers by name.
func crawlerHostClient(servers map[string]*httptest.Server) *http.Client {
	tr := &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			host, _, err := net.SplitHostPort(addr)
			if err != nil {
				return nil, err
			}
			srv, ok := servers[host]
			if !ok {
				return nil, fmt.Errorf("no server for %s", host)
			}
			var d net.Dialer
			return d.DialContext(ctx, network, srv.Listener.Addr().String())
		},
		DisableKeepAlives: true, // no idle connection outlives a Run
	}
	return &http.Client{Transport: tr}
}

func TestCrawl404(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/{$}", htmlPage(crawlerLinks("/missing")))
	mux.HandleFunc("/missing", http.NotFound)
	site := newSite(t, mux)

	stats, res, err := crawlSite(t, crawlerCtx(t), []string{site.URL + "/"},
		crawl.WithMaxTries(4), crawl.WithBackoff(time.Millisecond, 10*time.Millisecond))
	if err != nil {
		t.Fatalf("Run: got %v, want nil", err)
	}
	r, ok := res[site.URL+"/missing"]
	if !ok {
		t.Fatalf("no Result for /missing; got Results for %v", crawlerURIs(t, site.URL, res))
	}
	if r.Status != http.StatusNotFound {
		t.Errorf("Status: got %d, want 404", r.Status)
	}
	if r.Err != nil {
		t.Errorf("Err: got %v, want nil", r.Err)
	}
	if r.ContentType != "text/plain" {
		t.Errorf("ContentType: got %q, want text/plain", r.ContentType)
	}
	if got := r.Kind(); got != "error" {
		t.Errorf("Kind: got %q, want error", got)
	}
	if r.Tries != 1 {
		t.Errorf("Tries: got %d, want 1", r.Tries)
	}
	if got := site.Hits("/missing"); got != 1 {
		t.Errorf("server hits for /missing: got %d, want 1", got)
	}
	if stats.Errors != 1 {
		t.Errorf("Stats.Errors: got %d, want 1", stats.Errors)
	}
	if got := stats.StatusCounts[404]; got != 1 {
		t.Errorf("Stats.StatusCounts[404]: got %d, want 1", got)
	}
	if stats.Failures != 0 {
		t.Errorf("Stats.Failures: got %d, want 0", stats.Failures)
	}
	if stats.Done != 2 {
		t.Errorf("Stats.Done: got %d, want 2", stats.Done)
	}
}

func TestCrawlCycle(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/a", htmlPage(crawlerLinks("/b", "/a", "#top")))
	mux.HandleFunc("/b", htmlPage(crawlerLinks("/a", "/a#x")))
	site := newSite(t, mux)

	stats, res, err := crawlSite(t, crawlerCtx(t), []string{site.URL + "/a"})
	if err != nil {
		t.Fatalf("Run: got %v, want nil", err)
	}
	for _, p := range []string{"/a", "/b"} {
		if got := site.Hits(p); got != 1 {
			t.Errorf("server hits for %s: got %d, want 1", p, got)
		}
	}
	if got, want := site.Total(), 2; got != want {
		t.Errorf("server requests: got %d (%v), want %d", got, site.Requested(), want)
	}
	if stats.Done != 2 || stats.HTML != 2 || stats.Todo != 0 {
		t.Errorf("Stats: got Done %d HTML %d Todo %d, want 2 2 0", stats.Done, stats.HTML, stats.Todo)
	}
	tests := []struct {
		path            string
		numURLs, numNew int
		depth           int
	}{
		// /a links to /b and to itself: two distinct links, /b is new.
		{"/a", 2, 1, 0},
		// /b links to /a twice (fragment dropped): one link, not new.
		{"/b", 1, 0, 1},
	}
	for _, tt := range tests {
		r, ok := res[site.URL+tt.path]
		if !ok {
			t.Errorf("no Result for %s", tt.path)
			continue
		}
		if r.NumURLs != tt.numURLs || r.NumNewURLs != tt.numNew || r.Depth != tt.depth {
			t.Errorf("%s: got NumURLs %d NumNewURLs %d Depth %d, want %d %d %d",
				tt.path, r.NumURLs, r.NumNewURLs, r.Depth, tt.numURLs, tt.numNew, tt.depth)
		}
	}
}

func TestCrawlSkipsOtherHostsAndSchemes(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/{$}", htmlPage(crawlerLinks(
		"http://other.example/elsewhere",
		"https://other.example/secure",
		"ftp://127.0.0.1/file",
		"mailto:someone@example.com",
		"javascript:alert(1)",
		"tel:+15551234",
		"data:text/html,<a href=/data>x</a>",
		"/ok",
	)))
	mux.HandleFunc("/ok", htmlPage("ok"))
	site := newSite(t, mux)
	// routeAll makes a request for other.example reach the test server,
	// where it would be seen.
	root := "http://crawl.test/"
	stats, res, err := crawlSite(t, crawlerCtx(t), []string{root}, crawl.WithHTTPClient(routeAll(t, site.Server)))
	if err != nil {
		t.Fatalf("Run: got %v, want nil", err)
	}
	if got, want := site.HostPaths(), []string{"crawl.test/", "crawl.test/ok"}; !slices.Equal(got, want) {
		t.Errorf("server saw %v, want %v", got, want)
	}
	var got []string
	for u := range res {
		got = append(got, u)
	}
	sort.Strings(got)
	if want := []string{root, root + "ok"}; !slices.Equal(got, want) {
		t.Errorf("Results for %v, want %v", got, want)
	}
	if r := res[root]; r.NumURLs != 1 || r.NumNewURLs != 1 {
		t.Errorf("root: got NumURLs %d NumNewURLs %d, want 1 1", r.NumURLs, r.NumNewURLs)
	}
	if stats.Done != 2 {
		t.Errorf("Stats.Done: got %d, want 2", stats.Done)
	}
}

func TestCrawlScope(t *testing.T) {
	tests := []struct {
		name    string
		lenient bool
		root    string
		links   []string
		want    []string // URLs fetched, root included
	}{
		{
			name: "strict",
			root: "http://example.com/",
			links: []string{
				"http://www.example.com/www",
				"http://EXAMPLE.com:80/port80",
				"http://example.com:8080/port8080",
				"http://blog.example.com/blog",
				"http://www.blog.example.com/wwwblog",
				"http://example.org/org",
				"http://www.example.org/wwworg",
				"http://example.com.evil.test/suffix",
				"http://wwwexample.com/nodot",
			},
			want: []string{
				"http://example.com/",
				"http://example.com/port80",
				"http://example.com:8080/port8080",
				"http://www.example.com/www",
			},
		},
		{
			name: "strict www root",
			root: "http://www.example.com/",
			links: []string{
				"http://example.com/bare",
				"http://www.www.example.com/double",
				"http://blog.example.com/blog",
			},
			want: []string{
				"http://example.com/bare",
				"http://www.example.com/",
			},
		},
		{
			name:    "lenient",
			lenient: true,
			root:    "http://example.com/",
			links: []string{
				"http://www.example.com/www",
				"http://EXAMPLE.com:80/port80",
				"http://blog.example.com:8080/blog",
				"http://a.b.example.com/deep",
				"http://example.org/org",
				"http://example.com.evil.test/suffix",
			},
			want: []string{
				"http://a.b.example.com/deep",
				"http://blog.example.com:8080/blog",
				"http://example.com/",
				"http://example.com/port80",
				"http://www.example.com/www",
			},
		},
		{
			name: "strict co.uk",
			root: "http://shop.example.co.uk/",
			links: []string{
				"http://www.shop.example.co.uk/www",
				"http://www.example.co.uk/sibling",
				"http://example.co.uk/parent",
				"http://other.co.uk/other",
			},
			want: []string{
				"http://shop.example.co.uk/",
				"http://www.shop.example.co.uk/www",
			},
		},
		{
			name:    "lenient co.uk",
			lenient: true,
			root:    "http://shop.example.co.uk/",
			links: []string{
				"http://www.example.co.uk/sibling",
				"http://example.co.uk/parent",
				"http://a.b.example.co.uk/deep",
				// Same public suffix, another registrable domain: a
				// "last two labels" rule would let this in.
				"http://other.co.uk/other",
				"http://co.uk/suffix",
			},
			want: []string{
				"http://a.b.example.co.uk/deep",
				"http://example.co.uk/parent",
				"http://shop.example.co.uk/",
				"http://www.example.co.uk/sibling",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			page := crawlerLinks(tt.links...)
			site := newSite(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/" {
					htmlPage(page)(w, r)
					return
				}
				htmlPage("leaf")(w, r)
			}))
			_, res, err := crawlSite(t, crawlerCtx(t), []string{tt.root},
				crawl.WithLenientHosts(tt.lenient), crawl.WithHTTPClient(routeAll(t, site.Server)))
			if err != nil {
				t.Fatalf("Run: got %v, want nil", err)
			}
			var got []string
			for u := range res {
				got = append(got, u)
			}
			sort.Strings(got)
			if !slices.Equal(got, tt.want) {
				t.Errorf("Results for\n%v\nwant\n%v", got, tt.want)
			}
			// What the server saw: host (with any port) and path.
			var wantSeen []string
			for _, w := range tt.want {
				u, _ := url.Parse(w)
				wantSeen = append(wantSeen, u.Host+u.Path)
			}
			sort.Strings(wantSeen)
			if got := site.HostPaths(); !slices.Equal(got, wantSeen) {
				t.Errorf("server saw\n%v\nwant\n%v", got, wantSeen)
			}
		})
	}
}

func TestCrawlExclude(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/private/", htmlPage(crawlerLinks("/private/a", "/public", "/redir", "/logout?next=/")))
	mux.HandleFunc("/public", htmlPage("public"))
	mux.HandleFunc("/redir", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/private/b", http.StatusFound)
	})
	site := newSite(t, mux)

	// The root matches the first pattern and is fetched all the same.
	root := site.URL + "/private/"
	stats, res, err := crawlSite(t, crawlerCtx(t), []string{root},
		crawl.WithExclude(`/private/`), crawl.WithExclude(`logout`))
	if err != nil {
		t.Fatalf("Run: got %v, want nil", err)
	}
	if got, want := site.Requested(), []string{"/private/", "/public", "/redir"}; !slices.Equal(got, want) {
		t.Errorf("server saw %v, want %v", got, want)
	}
	if got, want := crawlerURIs(t, site.URL, res), []string{"/private/", "/public", "/redir"}; !slices.Equal(got, want) {
		t.Errorf("Results for %v, want %v", got, want)
	}
	// The excluded links are not counted as the page's links.
	if r := res[root]; r.NumURLs != 2 {
		t.Errorf("root NumURLs: got %d, want 2 (/public, /redir)", r.NumURLs)
	}
	// The redirect is recorded, its target is not followed.
	if r := res[site.URL+"/redir"]; r.NextURL != site.URL+"/private/b" || r.Err != nil {
		t.Errorf("/redir: got NextURL %q Err %v, want %q and nil", r.NextURL, r.Err, site.URL+"/private/b")
	}
	if stats.Redirects != 1 {
		t.Errorf("Stats.Redirects: got %d, want 1", stats.Redirects)
	}
}

func TestCrawlExcludeBadPattern(t *testing.T) {
	const bad = `a(b`
	_, err := crawl.New(crawl.WithExclude(`ok`, bad))
	if err == nil {
		t.Fatalf("New(WithExclude(%q)): got nil error, want one", bad)
	}
	var se *syntax.Error
	if !errors.As(err, &se) {
		t.Errorf("New(WithExclude(%q)): got %v, want a *syntax.Error", bad, err)
	}
	// The message is for a user, who needs to know which pattern.
	if !strings.Contains(err.Error(), bad) {
		t.Errorf("New(WithExclude(%q)): error %q does not name the pattern", bad, err)
	}
}

func TestCrawlFilter(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/private/start", htmlPage(crawlerLinks(
		"/private/a",      // rejected by the first filter
		"/list?sort=name", // rejected by the second
		"/private/b?sort=1",
		"/list",
		"/about?page=2",
	)))
	mux.HandleFunc("/", htmlPage("leaf"))
	site := newSite(t, mux)

	var mu sync.Mutex
	filtered := map[string]bool{} // URLs the first filter saw
	noPrivate := func(u *url.URL) bool {
		mu.Lock()
		filtered[u.RequestURI()] = true
		mu.Unlock()
		return !strings.HasPrefix(u.Path, "/private/")
	}
	noSort := func(u *url.URL) bool {
		return !u.Query().Has("sort")
	}
	// The root is rejected by both filters and fetched all the same.
	root := site.URL + "/private/start?sort=asc"
	_, res, err := crawlSite(t, crawlerCtx(t), []string{root},
		crawl.WithFilter(noPrivate), crawl.WithFilter(noSort))
	if err != nil {
		t.Fatalf("Run: got %v, want nil", err)
	}
	want := []string{"/about?page=2", "/list", "/private/start?sort=asc"}
	if got := site.Requested(); !slices.Equal(got, want) {
		t.Errorf("server saw %v, want %v", got, want)
	}
	if got := crawlerURIs(t, site.URL, res); !slices.Equal(got, want) {
		t.Errorf("Results for %v, want %v", got, want)
	}
	if r := res[root]; r.NumURLs != 2 {
		t.Errorf("root NumURLs: got %d, want 2", r.NumURLs)
	}
	// The first filter sees every link, never the root.
	mu.Lock()
	defer mu.Unlock()
	if filtered["/private/start?sort=asc"] {
		t.Errorf("the filter was asked about the root, want only links")
	}
	for _, l := range []string{"/private/a", "/list?sort=name", "/private/b?sort=1", "/list", "/about?page=2"} {
		if !filtered[l] {
			t.Errorf("the first filter never saw the link %s", l)
		}
	}
}

func TestCrawlSeveralRoots(t *testing.T) {
	t.Run("two paths", func(t *testing.T) {
		mux := http.NewServeMux()
		mux.HandleFunc("/a/", htmlPage(crawlerLinks("/a/1")))
		mux.HandleFunc("/b/", htmlPage(crawlerLinks("/b/1")))
		mux.HandleFunc("/", htmlPage("leaf"))
		site := newSite(t, mux)
		_, res, err := crawlSite(t, crawlerCtx(t), []string{site.URL + "/a/", site.URL + "/b/"})
		if err != nil {
			t.Fatalf("Run: got %v, want nil", err)
		}
		want := []string{"/a/", "/a/1", "/b/", "/b/1"}
		if got := site.Requested(); !slices.Equal(got, want) {
			t.Errorf("server saw %v, want %v", got, want)
		}
		if got := crawlerURIs(t, site.URL, res); !slices.Equal(got, want) {
			t.Errorf("Results for %v, want %v", got, want)
		}
		for _, root := range []string{"/a/", "/b/"} {
			if d := res[site.URL+root].Depth; d != 0 {
				t.Errorf("%s Depth: got %d, want 0", root, d)
			}
		}
	})

	t.Run("duplicates", func(t *testing.T) {
		mux := http.NewServeMux()
		mux.HandleFunc("/", htmlPage(crawlerLinks("/a")))
		site := newSite(t, mux)
		host := strings.TrimPrefix(site.URL, "http://")
		roots := []string{
			site.URL + "/",
			site.URL,
			site.URL + "/#top",
			"HTTP://" + host + "/",
			host,
			site.URL + "/a",
		}
		stats, res, err := crawlSite(t, crawlerCtx(t), roots)
		if err != nil {
			t.Fatalf("Run: got %v, want nil", err)
		}
		for _, p := range []string{"/", "/a"} {
			if got := site.Hits(p); got != 1 {
				t.Errorf("server hits for %s: got %d, want 1", p, got)
			}
		}
		if stats.Done != 2 || len(res) != 2 {
			t.Errorf("got Stats.Done %d and %d Results, want 2 and 2", stats.Done, len(res))
		}
		// /a was a root, so the root page's link to it is not new.
		if r := res[site.URL+"/"]; r.NumURLs != 1 || r.NumNewURLs != 0 {
			t.Errorf("root: got NumURLs %d NumNewURLs %d, want 1 0", r.NumURLs, r.NumNewURLs)
		}
		if d := res[site.URL+"/a"].Depth; d != 0 {
			t.Errorf("/a Depth: got %d, want 0 (a root)", d)
		}
	})

	t.Run("two servers one host", func(t *testing.T) {
		// Both servers are 127.0.0.1 on different ports. Scope ignores
		// ports, so a root on A alone also crawls B through A's link.
		b := newSite(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			htmlPage(crawlerLinks("/b1"))(w, r)
		}))
		a := newSite(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			htmlPage(crawlerLinks("/a1", b.URL+"/from-a"))(w, r)
		}))
		_, res, err := crawlSite(t, crawlerCtx(t), []string{a.URL + "/"})
		if err != nil {
			t.Fatalf("Run: got %v, want nil", err)
		}
		if got, want := a.Requested(), []string{"/", "/a1"}; !slices.Equal(got, want) {
			t.Errorf("server A saw %v, want %v", got, want)
		}
		if got, want := b.Requested(), []string{"/b1", "/from-a"}; !slices.Equal(got, want) {
			t.Errorf("server B saw %v, want %v", got, want)
		}
		if len(res) != 4 {
			t.Errorf("got %d Results, want 4", len(res))
		}
	})

	t.Run("two hosts", func(t *testing.T) {
		// a.test links to b.test, which is in scope only when it is a
		// root too.
		a := newSite(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			htmlPage(crawlerLinks("/a1", "http://b.test/from-a"))(w, r)
		}))
		b := newSite(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			htmlPage(crawlerLinks("/b1"))(w, r)
		}))
		client := crawlerHostClient(map[string]*httptest.Server{"a.test": a.Server, "b.test": b.Server})

		_, res, err := crawlSite(t, crawlerCtx(t), []string{"http://a.test/", "http://b.test/"}, crawl.WithHTTPClient(client))
		if err != nil {
			t.Fatalf("Run: got %v, want nil", err)
		}
		if got, want := a.Requested(), []string{"/", "/a1"}; !slices.Equal(got, want) {
			t.Errorf("server a.test saw %v, want %v", got, want)
		}
		if got, want := b.Requested(), []string{"/", "/b1", "/from-a"}; !slices.Equal(got, want) {
			t.Errorf("server b.test saw %v, want %v", got, want)
		}
		if r, ok := res["http://b.test/from-a"]; !ok || r.Depth != 1 {
			t.Errorf("http://b.test/from-a: got Result %v (Depth %d), want one at depth 1", ok, r.Depth)
		}

		// Control: with a.test the only root, b.test is out of scope.
		before := b.Total()
		_, res, err = crawlSite(t, crawlerCtx(t), []string{"http://a.test/"}, crawl.WithHTTPClient(client))
		if err != nil {
			t.Fatalf("Run: got %v, want nil", err)
		}
		if got := b.Total() - before; got != 0 {
			t.Errorf("server b.test: got %d requests with root a.test alone, want 0", got)
		}
		if len(res) != 2 {
			t.Errorf("got %d Results with root a.test alone, want 2", len(res))
		}
	})
}

func TestCrawlRootForms(t *testing.T) {
	t.Run("path and fragment", func(t *testing.T) {
		mux := http.NewServeMux()
		mux.HandleFunc("/docs/index.html", htmlPage(crawlerLinks("guide.html", "../about", "#intro", "index.html#other")))
		mux.HandleFunc("/", htmlPage("leaf"))
		site := newSite(t, mux)
		_, res, err := crawlSite(t, crawlerCtx(t), []string{site.URL + "/docs/index.html#intro"})
		if err != nil {
			t.Fatalf("Run: got %v, want nil", err)
		}
		want := []string{"/about", "/docs/guide.html", "/docs/index.html"}
		if got := site.Requested(); !slices.Equal(got, want) {
			t.Errorf("server saw %v, want %v", got, want)
		}
		if got := site.Hits("/docs/index.html"); got != 1 {
			t.Errorf("server hits for /docs/index.html: got %d, want 1", got)
		}
		for u := range res {
			if strings.Contains(u, "#") {
				t.Errorf("Result URL %q has a fragment", u)
			}
		}
		r, ok := res[site.URL+"/docs/index.html"]
		if !ok {
			t.Fatalf("no Result for the root; got %v", crawlerURIs(t, site.URL, res))
		}
		if r.NumURLs != 3 || r.Depth != 0 {
			t.Errorf("root: got NumURLs %d Depth %d, want 3 0", r.NumURLs, r.Depth)
		}
	})

	t.Run("bare host", func(t *testing.T) {
		site := newSite(t, htmlPage(crawlerLinks("/x")))
		host := strings.TrimPrefix(site.URL, "http://")
		_, res, err := crawlSite(t, crawlerCtx(t), []string{host})
		if err != nil {
			t.Fatalf("Run(%q): got %v, want nil", host, err)
		}
		if _, ok := res["http://"+host+"/"]; !ok {
			t.Errorf("Run(%q): no Result for http://%s/; got %v", host, host, crawlerURIs(t, site.URL, res))
		}
		if got, want := site.Requested(), []string{"/", "/x"}; !slices.Equal(got, want) {
			t.Errorf("server saw %v, want %v", got, want)
		}
	})

	t.Run("bare host with colons after the host", func(t *testing.T) {
		// Only a colon in the host part can start a scheme; one in the
		// path or query is the page's own.
		site := newSite(t, htmlPage("leaf"))
		host := strings.TrimPrefix(site.URL, "http://")
		root := host + "/x:y?q=a:b"
		_, res, err := crawlSite(t, crawlerCtx(t), []string{root})
		if err != nil {
			t.Fatalf("Run(%q): got %v, want nil", root, err)
		}
		if got, want := site.Requested(), []string{"/x:y?q=a:b"}; !slices.Equal(got, want) {
			t.Errorf("server saw %v, want %v", got, want)
		}
		if len(res) != 1 {
			t.Errorf("got %d Results, want 1", len(res))
		}
	})
}

func TestCrawlBadRoots(t *testing.T) {
	tests := []struct {
		root string
		bad  bool // errors.Is(err, ErrBadRoot)
	}{
		{"", true},
		{"   ", true},
		{"ftp://x/", true},
		{"http://", true},
		{"https://:443/path", true},
		{"mailto:a@b", true},
		{"javascript:alert(1)", true},
		{":%%", true},
		// A path is not a host: not http://relative/path.
		{"/relative/path", true},
		{"./page", true},
		{"../page", true},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q", tt.root), func(t *testing.T) {
			site := newSite(t, htmlPage(crawlerLinks("/a")))
			c, err := crawl.New()
			if err != nil {
				t.Fatal(err)
			}
			// The bad root comes after a good one: nothing may be
			// fetched, not even the good root.
			for _, roots := range [][]string{{site.URL + "/", tt.root}, {tt.root, site.URL + "/"}} {
				_, err := c.Run(crawlerCtx(t), roots...)
				if err == nil {
					t.Errorf("Run(%q): got nil error, want one", roots)
				} else if tt.bad && !errors.Is(err, crawl.ErrBadRoot) {
					t.Errorf("Run(%q): got %v, want ErrBadRoot", roots, err)
				}
			}
			if got := site.Total(); got != 0 {
				t.Errorf("server saw %d requests (%v), want 0", got, site.Requested())
			}
		})
	}

	t.Run("no roots", func(t *testing.T) {
		c, err := crawl.New()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Run(crawlerCtx(t)); err == nil {
			t.Errorf("Run(): got nil error, want one")
		}
		if _, err := c.Run(crawlerCtx(t), []string{}...); err == nil {
			t.Errorf("Run(empty slice): got nil error, want one")
		}
	})
}

func TestNewValidation(t *testing.T) {
	tests := []struct {
		opt  crawl.Option
		name string // the option the error must name
	}{
		{crawl.WithWorkers(0), "WithWorkers"},
		{crawl.WithWorkers(-3), "WithWorkers"},
		{crawl.WithMaxTries(0), "WithMaxTries"},
		{crawl.WithMaxRedirects(-1), "WithMaxRedirects"},
		{crawl.WithMaxBodySize(0), "WithMaxBodySize"},
		{crawl.WithRequestTimeout(0), "WithRequestTimeout"},
		{crawl.WithRequestTimeout(-time.Second), "WithRequestTimeout"},
		{crawl.WithUserAgent(""), "WithUserAgent"},
		{crawl.WithUserAgent("bot\r\nX-Evil: 1"), "WithUserAgent"},
		{crawl.WithUserAgent("bot\x00"), "WithUserAgent"},
		{crawl.WithExclude("("), "WithExclude"},
		{crawl.WithBackoff(-time.Millisecond, time.Second), "WithBackoff"},
		{crawl.WithBackoff(time.Second, time.Millisecond), "WithBackoff"},
		{crawl.WithFilter(nil), "WithFilter"},
		{crawl.WithMaxURLLength(-1), "WithMaxURLLength"},
		{crawl.WithMaxLinksPerPage(-1), "WithMaxLinksPerPage"},
		{crawl.WithMaxSegmentRepeats(-1), "WithMaxSegmentRepeats"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := crawl.New(crawl.WithWorkers(2), tt.opt)
			if err == nil {
				t.Fatalf("New(%s): got nil error, want one", tt.name)
			}
			if c != nil {
				t.Errorf("New(%s): got a Crawler with the error, want nil", tt.name)
			}
			// A message check, for the user: which option is wrong.
			if !strings.Contains(err.Error(), tt.name) {
				t.Errorf("New(%s): error %q does not name the option", tt.name, err)
			}
		})
	}

	t.Run("every bad option named", func(t *testing.T) {
		_, err := crawl.New(crawl.WithWorkers(0), crawl.WithMaxTries(0))
		if err == nil {
			t.Fatal("New: got nil error, want one")
		}
		for _, name := range []string{"WithWorkers", "WithMaxTries"} {
			if !strings.Contains(err.Error(), name) {
				t.Errorf("New: error %q does not name %s", err, name)
			}
		}
	})

	t.Run("later option wins", func(t *testing.T) {
		// A bad value replaced by a good one is no error.
		if _, err := crawl.New(crawl.WithWorkers(0), crawl.WithWorkers(3), nil); err != nil {
			t.Errorf("New(WithWorkers(0), WithWorkers(3), nil): got %v, want nil", err)
		}
	})
}

func TestCrawlWorkersPeak(t *testing.T) {
	const pages = 12
	for _, workers := range []int{1, 2, 4} {
		t.Run(strconv.Itoa(workers), func(t *testing.T) {
			var links []string
			for i := range pages {
				links = append(links, fmt.Sprintf("/p%d", i))
			}
			root := crawlerLinks(links...)
			site := newSite(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/" {
					htmlPage(root)(w, r)
					return
				}
				// Hold the request so that the workers' requests overlap.
				select {
				case <-time.After(20 * time.Millisecond):
				case <-r.Context().Done():
				}
				htmlPage("leaf")(w, r)
			}))
			stats, res, err := crawlSite(t, crawlerCtx(t), []string{site.URL + "/"}, crawl.WithWorkers(workers))
			if err != nil {
				t.Fatalf("Run: got %v, want nil", err)
			}
			if len(res) != pages+1 || site.Total() != pages+1 {
				t.Errorf("got %d Results and %d requests, want %d and %d", len(res), site.Total(), pages+1, pages+1)
			}
			if got := site.Peak(); got != int64(workers) {
				t.Errorf("peak requests in flight with WithWorkers(%d): got %d, want %d", workers, got, workers)
			}
			if stats.Workers != workers {
				t.Errorf("Stats.Workers: got %d, want %d", stats.Workers, workers)
			}
		})
	}
}

func TestCrawlPanics(t *testing.T) {
	// Every test site: / links to /boom, /a and /b; /boom links to
	// /from-boom, which only a followed /boom reveals.
	newPanicSite := func(t *testing.T) *site {
		mux := http.NewServeMux()
		mux.HandleFunc("/{$}", htmlPage(crawlerLinks("/boom", "/a", "/b")))
		mux.HandleFunc("/boom", htmlPage(crawlerLinks("/from-boom")))
		mux.HandleFunc("/", htmlPage("leaf"))
		return newSite(t, mux)
	}
	isBoom := func(u *url.URL) bool { return u.Path == "/boom" }

	tests := []struct {
		name string
		opt  crawl.Option
		// seen is what the server must see; /boom's Result must wrap
		// ErrPanic.
		seen []string
	}{
		{
			name: "page hook",
			opt: crawl.WithPageHook(func(p *crawl.Page) {
				if isBoom(p.URL) {
					panic("page hook boom")
				}
			}),
			// A page whose hook panicked is not followed.
			seen: []string{"/", "/a", "/b", "/boom"},
		},
		{
			name: "link extractor",
			opt: crawl.WithLinkExtractor(func(ctx context.Context, p *crawl.Page) ([]*url.URL, error) {
				if isBoom(p.URL) {
					panic("extractor boom")
				}
				return crawl.ExtractLinks(ctx, p)
			}),
			seen: []string{"/", "/a", "/b", "/boom"},
		},
		{
			name: "request hook",
			opt: crawl.WithRequestHook(func(r *http.Request) error {
				if isBoom(r.URL) {
					panic("request hook boom")
				}
				return nil
			}),
			// The request was never sent.
			seen: []string{"/", "/a", "/b"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			site := newPanicSite(t)
			stats, res, err := crawlSite(t, crawlerCtx(t), []string{site.URL + "/"}, tt.opt,
				crawl.WithBackoff(time.Millisecond, 10*time.Millisecond))
			if err != nil {
				t.Fatalf("Run: got %v, want nil", err)
			}
			if got := site.Requested(); !slices.Equal(got, tt.seen) {
				t.Errorf("server saw %v, want %v", got, tt.seen)
			}
			if got, want := crawlerURIs(t, site.URL, res), []string{"/", "/a", "/b", "/boom"}; !slices.Equal(got, want) {
				t.Errorf("Results for %v, want %v", got, want)
			}
			boom := res[site.URL+"/boom"]
			if !errors.Is(boom.Err, crawl.ErrPanic) {
				t.Errorf("/boom Err: got %v, want ErrPanic", boom.Err)
			}
			if boom.Tries != 1 {
				t.Errorf("/boom Tries: got %d, want 1 (a panic is not retried)", boom.Tries)
			}
			for _, p := range []string{"/", "/a", "/b"} {
				if err := res[site.URL+p].Err; err != nil {
					t.Errorf("%s Err: got %v, want nil", p, err)
				}
			}
			if stats.Failures != 1 || stats.FailKinds["panic"] != 1 {
				t.Errorf("Stats: got Failures %d FailKinds %v, want 1 and panic:1", stats.Failures, stats.FailKinds)
			}
		})
	}

	t.Run("result hook", func(t *testing.T) {
		site := newPanicSite(t)
		defer checkNoLeak(t)()
		var got results
		c, err := crawl.New(crawl.WithResultHook(func(r crawl.Result) {
			got.hook(r)
			if strings.HasSuffix(r.URL, "/boom") || strings.HasSuffix(r.URL, "/") {
				panic("result hook boom")
			}
		}))
		if err != nil {
			t.Fatal(err)
		}
		stats, err := c.Run(crawlerCtx(t), site.URL+"/")
		if err != nil {
			t.Fatalf("Run: got %v, want nil", err)
		}
		want := []string{"/", "/a", "/b", "/boom", "/from-boom"}
		if got := site.Requested(); !slices.Equal(got, want) {
			t.Errorf("server saw %v, want %v", got, want)
		}
		if got := crawlerURIs(t, site.URL, got.byURL(t)); !slices.Equal(got, want) {
			t.Errorf("Results for %v, want %v", got, want)
		}
		if stats.Done != len(want) || stats.Failures != 0 {
			t.Errorf("Stats: got Done %d Failures %d, want %d 0", stats.Done, stats.Failures, len(want))
		}
	})
}

func TestCrawlCancel(t *testing.T) {
	const pages = 60
	// Pages hold their request until it is cancelled (or 30s pass, far
	// beyond the test's bound): only cancellation reaching the in-flight
	// requests lets the Run end promptly.
	var links []string
	for i := range pages {
		links = append(links, fmt.Sprintf("/p%d", i))
	}
	root := crawlerLinks(links...)
	// The first 4 pages answer once 4 slow requests are in flight, so
	// that the crawl is cancelled with requests in flight.
	const fast = 4
	var slow atomic.Int64
	slowInFlight := make(chan struct{})
	site := newSite(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/p"))
		switch {
		case r.URL.Path == "/":
			htmlPage(root)(w, r)
			return
		case n < fast:
			select {
			case <-slowInFlight:
			case <-r.Context().Done():
				return
			}
		default:
			if slow.Add(1) == fast {
				close(slowInFlight)
			}
			select {
			case <-time.After(30 * time.Second):
			case <-r.Context().Done():
				return
			}
		}
		htmlPage("leaf")(w, r)
	}))

	defer checkNoLeak(t)()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var got results
	var delivered atomic.Int64
	c, err := crawl.New(crawl.WithWorkers(8), crawl.WithResultHook(func(r crawl.Result) {
		got.hook(r)
		if delivered.Add(1) == 3 {
			cancel()
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	type outcome struct {
		stats *crawl.Stats
		err   error
	}
	done := make(chan outcome, 1)
	go func() {
		stats, err := c.Run(ctx, site.URL+"/")
		done <- outcome{stats, err}
	}()
	var out outcome
	select {
	case out = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return within 10s of starting; cancellation did not stop it")
	}
	if !errors.Is(out.err, context.Canceled) {
		t.Errorf("Run: got error %v, want context.Canceled", out.err)
	}
	if out.stats == nil {
		t.Fatal("Run: got nil Stats, want the Stats so far")
	}
	res := got.byURL(t)
	if out.stats.Done != len(got.all) {
		t.Errorf("Stats.Done: got %d, want %d (Results delivered)", out.stats.Done, len(got.all))
	}
	if out.stats.Todo <= 0 {
		t.Errorf("Stats.Todo: got %d, want > 0", out.stats.Todo)
	}
	// Every URL queued either got a Result or is counted in Todo.
	if sum := out.stats.Done + out.stats.Todo; sum != pages+1 {
		t.Errorf("Stats.Done+Todo: got %d, want %d (every URL queued)", sum, pages+1)
	}
	if got := site.Total(); got >= pages+1 {
		t.Errorf("server saw %d requests, want fewer than %d", got, pages+1)
	}
	for u, r := range res {
		if r.Err != nil || r.Status != 200 {
			t.Errorf("%s: got Status %d, Err %v; want 200 and no Err (a fetch cut short by the caller gets no Result)", u, r.Status, r.Err)
		}
	}
	// The slow pages in flight when the crawl was cancelled were sent,
	// went back unfinished, and are in Todo, not in failures.
	if got := site.Total(); got <= out.stats.Done {
		t.Errorf("server saw %d requests, Done %d; want the slow pages in flight too", got, out.stats.Done)
	}
	if got := out.stats.FailKinds["canceled"]; got != 0 {
		t.Errorf("Stats.FailKinds[canceled]: got %d, want 0", got)
	}
}

func TestCrawlCancelledBeforeRun(t *testing.T) {
	site := newSite(t, htmlPage(crawlerLinks("/a")))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	stats, res, err := crawlSite(t, ctx, []string{site.URL + "/"})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Run: got error %v, want context.Canceled", err)
	}
	if stats == nil {
		t.Fatal("Run: got nil Stats, want Stats")
	}
	if stats.Done != 0 || stats.Todo != 1 || len(res) != 0 {
		t.Errorf("got Done %d Todo %d and %d Results, want 0 1 0", stats.Done, stats.Todo, len(res))
	}
	if got := site.Total(); got != 0 {
		t.Errorf("server saw %d requests, want 0", got)
	}
}

// crawlerMixedSite serves a small site with pages, a redirect, a 404 and
// an image; it returns the paths a crawl of / fetches.
func crawlerMixedSite(t *testing.T) (*site, []string) {
	mux := http.NewServeMux()
	mux.HandleFunc("/{$}", htmlPage(crawlerLinks("/a", "/b", "/old", "/missing", "/img.png")))
	mux.HandleFunc("/a", htmlPage(crawlerLinks("/", "/c")))
	mux.HandleFunc("/b", htmlPage(crawlerLinks("/c", "/a")))
	mux.HandleFunc("/c", htmlPage(crawlerLinks("/new")))
	mux.HandleFunc("/old", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/new", http.StatusMovedPermanently)
	})
	mux.HandleFunc("/new", htmlPage("new"))
	mux.HandleFunc("/img.png", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Write([]byte("\x89PNG\r\n\x1a\n"))
	})
	mux.HandleFunc("/missing", http.NotFound)
	return newSite(t, mux), []string{"/", "/a", "/b", "/c", "/img.png", "/missing", "/new", "/old"}
}

func TestCrawlConcurrentRuns(t *testing.T) {
	site, paths := crawlerMixedSite(t)
	var all results
	c, err := crawl.New(crawl.WithWorkers(3), crawl.WithResultHook(all.hook))
	if err != nil {
		t.Fatal(err)
	}
	defer checkNoLeak(t)()

	const runs = 3
	stats := make([]*crawl.Stats, runs)
	errs := make([]error, runs)
	var wg sync.WaitGroup
	for i := range runs {
		wg.Go(func() {
			stats[i], errs[i] = c.Run(crawlerCtx(t), site.URL+"/")
		})
	}
	wg.Wait()
	for i := range runs {
		if errs[i] != nil {
			t.Errorf("Run %d: got %v, want nil", i, errs[i])
			continue
		}
		if stats[i].Done != len(paths) {
			t.Errorf("Run %d: got Stats.Done %d, want %d", i, stats[i].Done, len(paths))
		}
	}
	// Each Run has its own seen set: each fetches every page once.
	for _, p := range paths {
		if got := site.Hits(p); got != runs {
			t.Errorf("server hits for %s: got %d, want %d (once per Run)", p, got, runs)
		}
	}
	count := map[string]int{}
	all.mu.Lock()
	for _, r := range all.all {
		count[r.URL]++
	}
	all.mu.Unlock()
	for _, p := range paths {
		if got := count[site.URL+p]; got != runs {
			t.Errorf("Results for %s: got %d, want %d (one per Run)", p, got, runs)
		}
	}
	if len(count) != len(paths) {
		t.Errorf("Results for %d URLs, want %d", len(count), len(paths))
	}
}

func TestCrawlRunTwice(t *testing.T) {
	site, paths := crawlerMixedSite(t)
	c, err := crawl.New(crawl.WithWorkers(4))
	if err != nil {
		t.Fatal(err)
	}
	var stats [2]*crawl.Stats
	for i := range stats {
		stats[i], err = c.Run(crawlerCtx(t), site.URL+"/")
		if err != nil {
			t.Fatalf("Run %d: got %v, want nil", i, err)
		}
	}
	a, b := *stats[0], *stats[1]
	a.Elapsed, b.Elapsed = 0, 0
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Errorf("second Run's Stats: got %+v, want %+v as the first's", b, a)
	}
	if a.Done != len(paths) || a.HTML != 5 || a.Redirects != 1 || a.Errors != 1 || a.Other != 1 {
		t.Errorf("Stats: got Done %d HTML %d Redirects %d Errors %d Other %d, want %d 5 1 1 1",
			a.Done, a.HTML, a.Redirects, a.Errors, a.Other, len(paths))
	}
	for _, p := range paths {
		if got := site.Hits(p); got != 2 {
			t.Errorf("server hits for %s: got %d, want 2", p, got)
		}
	}
}

func TestCrawlDepth(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/{$}", htmlPage(crawlerLinks("/a", "/r")))
	mux.HandleFunc("/a", htmlPage(crawlerLinks("/b", "/r2")))
	mux.HandleFunc("/b", htmlPage(crawlerLinks("/c")))
	mux.HandleFunc("/r", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/r-mid", http.StatusFound)
	})
	mux.HandleFunc("/r-mid", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/target", http.StatusTemporaryRedirect)
	})
	mux.HandleFunc("/r2", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/target2", http.StatusMovedPermanently)
	})
	mux.HandleFunc("/", htmlPage("leaf"))
	site := newSite(t, mux)

	_, res, err := crawlSite(t, crawlerCtx(t), []string{site.URL + "/"})
	if err != nil {
		t.Fatalf("Run: got %v, want nil", err)
	}
	want := map[string]int{
		"/": 0, "/a": 1, "/b": 2, "/c": 3,
		// A redirect keeps the depth of the URL that redirected, along
		// the whole chain.
		"/r": 1, "/r-mid": 1, "/target": 1,
		"/r2": 2, "/target2": 2,
	}
	if got := len(res); got != len(want) {
		t.Errorf("got %d Results (%v), want %d", got, crawlerURIs(t, site.URL, res), len(want))
	}
	for p, d := range want {
		r, ok := res[site.URL+p]
		if !ok {
			t.Errorf("no Result for %s", p)
			continue
		}
		if r.Depth != d {
			t.Errorf("%s Depth: got %d, want %d", p, r.Depth, d)
		}
	}
}

func TestCrawlUserAgent(t *testing.T) {
	tests := []struct {
		name string
		opts []crawl.Option
		want func(ua string) bool
		desc string
	}{
		{"set", []crawl.Option{crawl.WithUserAgent("testbot/1.0 (+http://test)")},
			func(ua string) bool { return ua == "testbot/1.0 (+http://test)" }, `"testbot/1.0 (+http://test)"`},
		{"default", nil,
			func(ua string) bool { return ua == crawl.DefaultUserAgent && strings.Contains(ua, "asyncrawl") },
			"DefaultUserAgent, naming asyncrawl"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			site, paths := crawlerMixedSite(t)
			if _, _, err := crawlSite(t, crawlerCtx(t), []string{site.URL + "/"}, tt.opts...); err != nil {
				t.Fatalf("Run: got %v, want nil", err)
			}
			for _, p := range paths {
				if ua := site.Header(p).Get("User-Agent"); !tt.want(ua) {
					t.Errorf("User-Agent of %s: got %q, want %s", p, ua, tt.desc)
				}
			}
		})
	}
}

func TestCrawlPageHook(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "Text/HTML; Charset=UTF-8")
		w.Header().Set("X-Page", "root")
		fmt.Fprint(w, crawlerLinks("/missing", "/img.png", "/redir"))
	})
	mux.HandleFunc("/missing", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Page", "missing")
		http.NotFound(w, r)
	})
	mux.HandleFunc("/img.png", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "IMAGE/PNG")
		w.Header().Set("X-Page", "img")
		w.Write([]byte("\x89PNG\r\n\x1a\n"))
	})
	mux.HandleFunc("/redir", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Page", "redir")
		http.Redirect(w, r, "/final", http.StatusFound)
	})
	mux.HandleFunc("/final", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Page", "final")
		htmlPage("final")(w, r)
	})
	site := newSite(t, mux)

	type seen struct {
		status      int
		contentType string
		xPage       string
		depth       int
		body        string
	}
	var mu sync.Mutex
	pages := map[string][]seen{}
	hook := func(p *crawl.Page) {
		mu.Lock()
		defer mu.Unlock()
		pages[p.URL.Path] = append(pages[p.URL.Path], seen{p.Status, p.ContentType, p.Header.Get("X-Page"), p.Depth, string(p.Body)})
	}
	_, res, err := crawlSite(t, crawlerCtx(t), []string{site.URL + "/"}, crawl.WithPageHook(hook))
	if err != nil {
		t.Fatalf("Run: got %v, want nil", err)
	}
	want := map[string]seen{
		"/":        {200, "text/html", "root", 0, crawlerLinks("/missing", "/img.png", "/redir")},
		"/missing": {404, "text/plain", "missing", 1, "404 page not found\n"},
		"/img.png": {200, "image/png", "img", 1, "\x89PNG\r\n\x1a\n"},
		"/final":   {200, "text/html", "final", 1, "final"},
	}
	mu.Lock()
	defer mu.Unlock()
	for p, w := range want {
		got := pages[p]
		if len(got) != 1 {
			t.Errorf("page hook calls for %s: got %d, want 1", p, len(got))
			continue
		}
		if got[0] != w {
			t.Errorf("page hook for %s: got %+v, want %+v", p, got[0], w)
		}
	}
	if got := pages["/redir"]; len(got) != 0 {
		t.Errorf("page hook calls for the redirect /redir: got %d, want 0", len(got))
	}
	if len(pages) != len(want) {
		t.Errorf("page hook saw %d URLs, want %d", len(pages), len(want))
	}
	// The Result's content type is normalised the same way.
	if ct := res[site.URL+"/"].ContentType; ct != "text/html" {
		t.Errorf("root Result ContentType: got %q, want text/html", ct)
	}
}

func TestCrawlResultHookOncePerURL(t *testing.T) {
	site, paths := crawlerMixedSite(t)
	var calls atomic.Int64
	var got results
	defer checkNoLeak(t)()
	c, err := crawl.New(crawl.WithWorkers(4), crawl.WithResultHook(func(r crawl.Result) {
		calls.Add(1)
		got.hook(r)
	}))
	if err != nil {
		t.Fatal(err)
	}
	stats, err := c.Run(crawlerCtx(t), site.URL+"/")
	if err != nil {
		t.Fatalf("Run: got %v, want nil", err)
	}
	res := got.byURL(t) // fails on a second Result for one URL
	if n := int(calls.Load()); n != len(res) || n != stats.Done {
		t.Errorf("result hook calls: got %d, want %d (distinct URLs) and %d (Stats.Done)", n, len(res), stats.Done)
	}
	requested := site.Requested()
	if !slices.Equal(requested, paths) {
		t.Errorf("server saw %v, want %v", requested, paths)
	}
	if got := crawlerURIs(t, site.URL, res); !slices.Equal(got, requested) {
		t.Errorf("URLs with Results %v, want the URLs requested %v", got, requested)
	}
	if site.Total() != len(requested) {
		t.Errorf("server saw %d requests for %d URLs, want one each", site.Total(), len(requested))
	}
}

func TestStatsWriteReport(t *testing.T) {
	const (
		rootBody = `<a href="/a">a</a> <a href="/missing">m</a> <a href="/old">o</a> <a href="/img.png">i</a>`
		aBody    = `<p>page a</p>`
		imgBody  = "\x89PNG\r\n\x1a\nimage"
		notFound = "404 page not found\n" // http.NotFound's body
	)
	mux := http.NewServeMux()
	mux.HandleFunc("/{$}", htmlPage(rootBody))
	mux.HandleFunc("/a", htmlPage(aBody))
	mux.HandleFunc("/old", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/a", http.StatusFound)
	})
	mux.HandleFunc("/img.png", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		fmt.Fprint(w, imgBody)
	})
	mux.HandleFunc("/missing", http.NotFound)
	site := newSite(t, mux)

	stats, _, err := crawlSite(t, crawlerCtx(t), []string{site.URL + "/"}, crawl.WithWorkers(3))
	if err != nil {
		t.Fatalf("Run: got %v, want nil", err)
	}
	var buf bytes.Buffer
	if err := stats.WriteReport(&buf); err != nil {
		t.Fatalf("WriteReport: got %v, want nil", err)
	}
	report := buf.String()

	lines := strings.Split(strings.TrimSuffix(report, "\n"), "\n")
	if len(lines) < 4 {
		t.Fatalf("report has %d lines, want at least 4:\n%s", len(lines), report)
	}
	finished := regexp.MustCompile(`^Finished (\d+) urls in \d+\.\d{3} secs \(max_tasks=(\d+)\) \(\d+\.\d{3} urls/sec/task\)$`)
	m := finished.FindStringSubmatch(lines[0])
	if m == nil {
		t.Errorf("first line: got %q, want Finished N urls in S secs (max_tasks=N) (R urls/sec/task)", lines[0])
	} else if m[1] != "5" || m[2] != "3" {
		t.Errorf("first line: got %s urls, max_tasks=%s, want 5 and 3", m[1], m[2])
	}

	counter := regexp.MustCompile(`^ *(\d+) ([a-z0-9_]+)$`)
	got := map[string]int{}
	var names []string
	var tail []string
	sc := bufio.NewScanner(strings.NewReader(strings.Join(lines[1:], "\n")))
	for sc.Scan() {
		line := sc.Text()
		if m := counter.FindStringSubmatch(line); m != nil {
			if len(tail) > 0 {
				t.Errorf("counter line %q after %q", line, tail[0])
			}
			if len(line) < 11 || line[10] != ' ' {
				t.Errorf("counter line %q: want the count right-aligned in 10 columns", line)
			}
			n, _ := strconv.Atoi(m[1])
			got[m[2]] = n
			names = append(names, m[2])
			continue
		}
		tail = append(tail, line)
	}
	want := map[string]int{
		"html":        2,
		"html_bytes":  len(rootBody) + len(aBody),
		"other":       1,
		"other_bytes": len(imgBody),
		"redirect":    1,
		"error":       1,
		"error_bytes": len(notFound),
		"status_200":  3,
		"status_302":  1,
		"status_404":  1,
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("counter %s: got %d, want %d", k, got[k], v)
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("unexpected counter %s = %d", k, v)
		}
	}
	if !sort.StringsAreSorted(names) {
		t.Errorf("counters in order %v, want sorted by name", names)
	}
	if len(tail) != 3 {
		t.Fatalf("lines after the counters: got %q, want Todo, Done and Date", tail)
	}
	if tail[0] != "Todo: 0" {
		t.Errorf("Todo line: got %q, want %q", tail[0], "Todo: 0")
	}
	if tail[1] != "Done: 5" {
		t.Errorf("Done line: got %q, want %q", tail[1], "Done: 5")
	}
	if !strings.HasPrefix(tail[2], "Date: ") || !strings.HasSuffix(tail[2], " local time") {
		t.Errorf("Date line: got %q, want Date: ... local time", tail[2])
	}
}

// Spellings of one URL are fetched once: percent-encoding of unreserved
// characters, hex case, dot segments, fragments, default port, host case.
func TestCrawlNormalisedDedupe(t *testing.T) {
	mux := http.NewServeMux()
	var spellings []string
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) {
		htmlPage(crawlerLinks(spellings...))(w, r)
	})
	mux.HandleFunc("/~user/caf%C3%A9", htmlPage("<p>page</p>"))
	site := newSite(t, mux)
	host := strings.TrimPrefix(site.URL, "http://")
	spellings = []string{
		"/~user/caf%C3%A9",
		"/%7Euser/caf%c3%a9",
		"/%7euser/café",
		"/a/../~user/./caf%C3%A9",
		"/~user/caf%C3%A9#section",
		"HTTP://" + strings.ToUpper(host) + "/~user/caf%C3%A9",
	}
	_, res, err := crawlSite(t, crawlerCtx(t), []string{site.URL + "/"})
	if err != nil {
		t.Fatalf("Run: got %v, want nil", err)
	}
	want := site.URL + "/~user/caf%C3%A9"
	r, ok := res[want]
	if !ok {
		t.Fatalf("no Result for %s; got Results for %v", want, crawlerURIs(t, site.URL, res))
	}
	if r.Status != http.StatusOK {
		t.Errorf("Status: got %d, want 200", r.Status)
	}
	if len(res) != 2 {
		t.Errorf("got %d Results, want 2 (root and one page): %v", len(res), crawlerURIs(t, site.URL, res))
	}
	if n := site.Total(); n != 2 {
		t.Errorf("server saw %d requests, want 2: %v", n, site.Requested())
	}
	if root := res[site.URL+"/"]; root.NumURLs != 1 || root.NumNewURLs != 1 {
		t.Errorf("root NumURLs/NumNewURLs: got %d/%d, want 1/1", root.NumURLs, root.NumNewURLs)
	}
}

// The logger gets a warning for every failed URL and, at debug level, a
// record for every fetch.
func TestCrawlLogger(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/{$}", htmlPage(crawlerLinks("/ok", "/loop")))
	mux.HandleFunc("/ok", htmlPage("<p>ok</p>"))
	mux.Handle("/loop", http.RedirectHandler("/loop2", http.StatusFound))
	mux.Handle("/loop2", http.RedirectHandler("/loop", http.StatusFound))
	site := newSite(t, mux)
	var buf safeBuffer
	logger := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	_, _, err := crawlSite(t, crawlerCtx(t), []string{site.URL + "/"},
		crawl.WithLogger(logger), crawl.WithMaxRedirects(1))
	if err != nil {
		t.Fatalf("Run: got %v, want nil", err)
	}
	levels := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var rec struct {
			Level string `json:"level"`
			URL   string `json:"url"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		levels[rec.Level] = append(levels[rec.Level], strings.TrimPrefix(rec.URL, site.URL))
	}
	sort.Strings(levels["DEBUG"])
	if got, want := levels["WARN"], []string{"/loop2"}; !slices.Equal(got, want) {
		t.Errorf("WARN records for %v, want %v", got, want)
	}
	if got, want := levels["DEBUG"], []string{"/", "/loop", "/ok"}; !slices.Equal(got, want) {
		t.Errorf("DEBUG records for %v, want %v", got, want)
	}
}

// safeBuffer is a bytes.Buffer for concurrent writers.
type safeBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *safeBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *safeBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// ParseRoot reads a root as Run does: a bare host gets http://, a path is
// an error wrapping ErrBadRoot.
func TestParseRoot(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"example.com", "http://example.com/"},
		{"Example.COM/docs/", "http://example.com/docs/"},
		{"https://example.com:443/a#b", "https://example.com/a"},
		{"/relative/path", ""},
		{"./x", ""},
		{"mailto:a@b", ""},
		// A scheme with fewer slashes than two, or none, is still a
		// URL, as the URL Standard reads it: not a host named "http".
		{"http:/h.example/x", "http://h.example/x"},
		{"HTTP:/H.example", "http://h.example/"},
		{`http:/\h.example/x`, "http://h.example/x"},
		{"http:h.example/x", "http://h.example/x"},
		{"http:example.com", "http://example.com/"},
		{`https:\h.example`, "https://h.example/"},
		{"localhost:8080/x", "http://localhost:8080/x"},
	} {
		got, err := crawl.ParseRoot(tt.in)
		if tt.want == "" {
			if !errors.Is(err, crawl.ErrBadRoot) || !strings.Contains(fmt.Sprint(err), strconv.Quote(tt.in)) {
				t.Errorf("ParseRoot(%q) = %q, %v; want an error wrapping ErrBadRoot that names it", tt.in, got, err)
			}
			continue
		}
		if got != tt.want || err != nil {
			t.Errorf("ParseRoot(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

// A page said to be UTF-8 whose href holds a byte that is not (a raw
// 0xE9): a browser decodes it as U+FFFD before it parses the URL, and so
// requests /p%EF%BF%BD; the crawler too, not /p%E9.
func TestCrawlInvalidUTF8Href(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte("<a href=\"/p\xE9\">x</a><a href=\"/q?x=\xE2\x82\">y</a>"))
	})
	mux.HandleFunc("/", htmlPage("<p>page</p>"))
	site := newSite(t, mux)
	if _, _, err := crawlSite(t, crawlerCtx(t), []string{site.URL + "/"}); err != nil {
		t.Fatalf("Run: got %v, want nil", err)
	}
	got := site.Requested()
	for _, want := range []string{"/p%EF%BF%BD", "/q?x=%EF%BF%BD"} {
		if !slices.Contains(got, want) {
			t.Errorf("the server was not sent %s; it was sent %q", want, got)
		}
	}
}

// A page in windows-1252 (its meta tag says so): a browser encodes the
// query of a link in the page's encoding, and its path in UTF-8, and a
// code point the encoding lacks as "%26%23N%3B"; the crawler sends the
// same. The links' typed and plain extractions agree.
func TestCrawlLegacyEncodingQuery(t *testing.T) {
	mux := http.NewServeMux()
	page := "<meta charset=\"windows-1252\"><a href=\"/q1?x=\xE9\">a</a><a href=\"/q2?y=\x80\">b</a>" +
		"<a href=\"/p\xE9\">c</a><a href=\"/q3?z=&#x4E2D;\">d</a>"
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(page))
	})
	mux.HandleFunc("/", htmlPage("<p>page</p>"))
	site := newSite(t, mux)
	_, res, err := crawlSite(t, crawlerCtx(t), []string{site.URL + "/"})
	if err != nil {
		t.Fatalf("Run: got %v, want nil", err)
	}
	got := site.Requested()
	want := []string{"/q1?x=%E9", "/q2?y=%80", "/p%C3%A9", "/q3?z=%26%2320013%3B"}
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("the server was not sent %s; it was sent %q", w, got)
		}
	}
	if root := res[site.URL+"/"]; root.Encoding != "windows-1252" {
		t.Errorf("root's Encoding %q, want windows-1252", root.Encoding)
	}
	u, _ := url.Parse(site.URL + "/")
	// The page as the crawler hands it to a hook: decoded to UTF-8.
	p := &crawl.Page{URL: u, ContentType: "text/html", Encoding: "windows-1252", Body: []byte(`<a href="/q1?x=é">a</a>`)}
	links, err := crawl.ExtractLinks(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	var plain []string
	for _, l := range links {
		plain = append(plain, l.RequestURI())
	}
	if !slices.Contains(plain, "/q1?x=%E9") {
		t.Errorf("ExtractLinks of the page decoded, Encoding windows-1252: %q, want /q1?x=%%E9 among them", plain)
	}
}

// The URLs of pages in legacy encodings, as a browser makes them, where
// golang.org/x/text's encodings alone would not: a byte windows-1252
// leaves undefined is its C1 control (a raw 0x81 in a path is
// /p%C2%81, &#129; in a query is %81), a <base href>'s query is in the
// page's encoding as a link's is, and a Shift_JIS page's ¥ is 0x5C.
// Page.Resolve encodes as the crawl does.
func TestCrawlLegacyEncodingBrowserBytes(t *testing.T) {
	mux := http.NewServeMux()
	pages := map[string]string{
		"/w/": "<meta charset=\"windows-1252\"><a href=\"/p\x81\">a</a><a href=\"/q?x=&#129;\">b</a>",
		"/b/": "<meta charset=\"windows-1252\"><base href=\"/base/?q=\xe9\"><a href=\"#f\">a</a>",
		"/s/": "<meta charset=\"shift_jis\"><a href=\"/s?y=&yen;&minus;\">a</a>",
		// An iframe's srcdoc document is UTF-8, whatever its page's.
		"/d/": "<meta charset=\"windows-1252\"><iframe srcdoc=\"<a href=/in-doc?q=\xe9>i</a>\"></iframe><a href=\"/out-doc?q=\xe9\">o</a>",
	}
	mux.HandleFunc("/{dir}/{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(pages[r.URL.Path]))
	})
	mux.HandleFunc("/", htmlPage("<p>page</p>"))
	site := newSite(t, mux)
	roots := []string{site.URL + "/w/", site.URL + "/b/", site.URL + "/s/", site.URL + "/d/"}
	if _, _, err := crawlSite(t, crawlerCtx(t), roots); err != nil {
		t.Fatalf("Run: got %v, want nil", err)
	}
	got := site.Requested()
	for _, want := range []string{"/p%C2%81", "/q?x=%81", "/base/?q=%E9", `/s?y=\%81|`, "/in-doc?q=%C3%A9", "/out-doc?q=%E9"} {
		if !slices.Contains(got, want) {
			t.Errorf("the server was not sent %s; it was sent %q", want, got)
		}
	}
	u, _ := url.Parse(site.URL + "/b/")
	p := &crawl.Page{URL: u, ContentType: "text/html", Encoding: "windows-1252"}
	r, err := p.Resolve("x?q=é")
	if err != nil || r.RequestURI() != "/b/x?q=%E9" {
		t.Errorf("Page.Resolve in a windows-1252 page: %v, %v; want /b/x?q=%%E9", r, err)
	}
}

// A Location header's bytes that are not UTF-8 are sent percent-encoded as
// they came, as browsers send them (the web-platform-tests'
// redirect-location-escape); UTF-8 as UTF-8.
func TestCrawlLocationBytes(t *testing.T) {
	mux := http.NewServeMux()
	locs := map[string]string{"/r1": "/t1?\xff", "/r2": "/t2?\xe2\x98\x83", "/r3": "/t3?%\xe2\x98\x83"}
	for from, to := range locs {
		mux.HandleFunc(from, func(w http.ResponseWriter, r *http.Request) {
			w.Header()["Location"] = []string{to}
			w.WriteHeader(http.StatusFound)
		})
	}
	mux.HandleFunc("/", htmlPage("<p>page</p>"))
	site := newSite(t, mux)
	if _, _, err := crawlSite(t, crawlerCtx(t), []string{site.URL + "/r1", site.URL + "/r2", site.URL + "/r3"}); err != nil {
		t.Fatalf("Run: got %v, want nil", err)
	}
	got := site.Requested()
	for _, want := range []string{"/t1?%FF", "/t2?%E2%98%83", "/t3?%%E2%98%83"} {
		if !slices.Contains(got, want) {
			t.Errorf("the server was not sent %s; it was sent %q", want, got)
		}
	}
}

// A <base> in <svg> or in a <template> sets no base URL, as in a browser;
// an empty href of <a> under a <base href> leads to the base.
func TestBaseHrefPlacement(t *testing.T) {
	u, _ := url.Parse("http://h.example/c/page")
	for _, tt := range []struct{ body, want string }{
		{`<svg><base href="/svg/"></svg><a href="x">a</a>`, "http://h.example/c/x"},
		{`<template><base href="/tpl/"></template><a href="x">a</a>`, "http://h.example/c/x"},
		{`<template><base href="/tpl/"></template><base href="/b/"><a href="x">a</a>`, "http://h.example/b/x"},
		{`<base href="/b/"><a href="">a</a>`, "http://h.example/b/"},
	} {
		p := &crawl.Page{URL: u, ContentType: "text/html", Body: []byte(tt.body)}
		links, err := crawl.ExtractTypedLinks(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		var nav []string
		for _, l := range links {
			if l.Role == crawl.Navigation {
				nav = append(nav, l.URL.String())
			}
		}
		if !slices.Equal(nav, []string{tt.want}) {
			t.Errorf("%s: navigation links %q, want [%s]", tt.body, nav, tt.want)
		}
	}
}
