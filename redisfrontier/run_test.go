package redisfrontier_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/asyncrawl/crawl"
	"github.com/asyncrawl/crawl/crawltest"
	"github.com/asyncrawl/crawl/redisfrontier"
	"github.com/asyncrawl/crawl/redisfrontier/redistest"
)

// TestRunShared crawls a site of three hosts, 20 pages each, with
// crawl.Run in two crawlers at once, each on a Frontier of its own,
// unnamed: the crawl's name comes from the roots, so both share one crawl.
// Every page is fetched once, each robots.txt once, both Runs end when the
// crawl is done, and each reports the whole crawl.
func TestRunShared(t *testing.T) {
	s := redistest.Start(t)
	site := crawltest.Start(t)
	const perHost = 20
	names := []string{"a.example", "b.example", "c.example"}
	var roots []string
	for k, name := range names {
		h := site.Host(name)
		h.Robots("User-agent: *\nDisallow: /private/\n")
		next := site.Host(names[(k+1)%len(names)])
		for i := range perHost {
			h.Page(fmt.Sprintf("/%d", i), fmt.Sprintf("/%d", (i+1)%perHost), next.URL(fmt.Sprintf("/%d", (3*i)%perHost)), "/private/x")
		}
		roots = append(roots, h.URL("/0"))
	}
	const pages = perHost * 3
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		stats  []*crawl.Stats
		crawls []string
	)
	for range 2 {
		wg.Go(func() {
			f, err := redisfrontier.Open(context.Background(), s.URL(), nil)
			if err != nil {
				t.Error(err)
				return
			}
			defer f.Close()
			c, err := crawl.New(crawl.WithFrontier(f), crawl.WithHTTPClient(site.Client()), crawl.WithRobots(true),
				crawl.WithWorkers(4), crawl.WithLeaseTerm(10*time.Second))
			if err != nil {
				t.Error(err)
				return
			}
			st, err := c.Run(context.Background(), roots...)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			stats = append(stats, st)
			crawls = append(crawls, f.Name())
			mu.Unlock()
		})
	}
	wg.Wait()
	if len(crawls) == 2 && (crawls[0] != crawls[1] || crawls[0] == "") {
		t.Errorf("two Frontiers, no Name, same roots: crawls %q and %q, want one", crawls[0], crawls[1])
	}
	for _, st := range stats {
		// The pages, and each host's /private/x (disallowed, a Result).
		if want := pages + len(names); st.Done != want || st.HTML != pages {
			t.Errorf("a Run's Stats: Done %d, HTML %d; want the whole crawl's, %d and %d", st.Done, st.HTML, want, pages)
		}
	}
	for _, r := range site.Requests() {
		if strings.HasPrefix(r.URI, "/private/") {
			t.Errorf("%s%s fetched, robots.txt disallows it", r.Host, r.URI)
		}
	}
	fetched := 0
	for _, name := range names {
		h := site.Host(name)
		if n := h.Count("/robots.txt"); n != 1 {
			t.Errorf("%s/robots.txt fetched %d times, want 1", name, n)
		}
		for i := range perHost {
			n := h.Count(fmt.Sprintf("/%d", i))
			if n != 1 {
				t.Errorf("%s/%d fetched %d times, want 1", name, i, n)
			}
			fetched += n
		}
	}
	if fetched != pages {
		t.Errorf("%d pages fetched, want %d", fetched, pages)
	}
}

// TestRunSharedRobotsMaxAge: two crawlers share a crawl whose robots.txt
// changes; once its rules are WithRobotsMaxAge old, one of them fetches it
// again, and both go by the new rules: neither fetches a URL they
// disallow once they are out (each crawler parses the rules its leases
// carry anew when they change).
func TestRunSharedRobotsMaxAge(t *testing.T) {
	s := redistest.Start(t)
	var (
		mu      sync.Mutex
		v2At    time.Time // when the second version was first served
		robots  int
		late    []string // /secret/ requests well after v2 was served
		secrets int
	)
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		if r.URL.Path == "/robots.txt" {
			robots++
			if robots == 1 {
				mu.Unlock()
				io.WriteString(w, "User-agent: *\nDisallow: /nothing\n")
				return
			}
			if v2At.IsZero() {
				v2At = time.Now()
			}
			mu.Unlock()
			io.WriteString(w, "User-agent: *\nDisallow: /secret/\n")
			return
		}
		if strings.HasPrefix(r.URL.Path, "/secret/") {
			secrets++
			if !v2At.IsZero() && time.Since(v2At) > 200*time.Millisecond {
				late = append(late, r.URL.Path)
			}
		}
		mu.Unlock()
		var i int
		if _, err := fmt.Sscanf(r.URL.Path, "/p/%d", &i); err != nil {
			io.WriteString(w, "leaf")
			return
		}
		time.Sleep(40 * time.Millisecond)
		fmt.Fprintf(w, `<a href="/p/%d">next</a> <a href="/secret/%d">s</a>`, min(i+1, 40), i)
	}))
	defer site.Close()
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			f, err := redisfrontier.Open(context.Background(), s.URL(), &redisfrontier.Options{Name: "rage"})
			if err != nil {
				t.Error(err)
				return
			}
			defer f.Close()
			c, err := crawl.New(crawl.WithFrontier(f), crawl.WithWorkers(2), crawl.WithHostWorkers(2),
				crawl.WithRobotsMaxAge(300*time.Millisecond), crawl.WithLeaseTerm(10*time.Second))
			if err != nil {
				t.Error(err)
				return
			}
			if _, err := c.Run(context.Background(), site.URL+"/p/0"); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if robots < 2 || v2At.IsZero() {
		t.Fatalf("robots.txt fetched %d times over a crawl of 40 pages of 40ms, max age 300ms: want it fetched again", robots)
	}
	if len(late) > 0 {
		t.Errorf("%d of %d /secret/ URLs fetched well after robots.txt disallowed them: %v", len(late), secrets, late)
	}
}
