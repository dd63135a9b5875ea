package crawl_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/asyncrawl/crawl"
)

// gzipped returns body compressed with gzip.
func gzipped(t *testing.T, body string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := io.WriteString(zw, body); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func xmlPage(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/xml")
		io.WriteString(w, body)
	}
}

func TestSitemaps(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("/{$}", anchors(0))
	mux.Handle("/", anchors(0))
	s := newSite(t, mux)
	index := `<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <sitemap><loc>` + s.URL + `/maps/pages.xml.gz</loc></sitemap>
  <sitemap><loc>http://elsewhere.example/maps/theirs.xml</loc></sitemap>
</sitemapindex>`
	pages := gzipped(t, `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <url><loc>`+s.URL+`/from-sitemap/1</loc></url>
  <url><loc>`+s.URL+`/from-sitemap/2?a=1&amp;b=2</loc></url>
  <url><loc>http://elsewhere.example/out-of-scope</loc></url>
</urlset>`)
	mux.Handle("/sitemap.xml", http.NotFoundHandler())
	mux.Handle("/maps/index.xml", xmlPage(index))
	mux.Handle("/maps/pages.xml.gz", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/gzip")
		w.Write(pages)
	}))
	s.setRobots("User-agent: *\nSitemap: "+s.URL+"/maps/index.xml\n", nil)

	stats, res, err := crawlSite(t, context.Background(), []string{s.URL},
		crawl.WithSitemaps(true), crawl.WithHTTPClient(routeAll(t, s.Server)))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	want := []string{"127.0.0.1/", "127.0.0.1/from-sitemap/1", "127.0.0.1/from-sitemap/2",
		"127.0.0.1/maps/index.xml", "127.0.0.1/maps/pages.xml.gz", "127.0.0.1/sitemap.xml"}
	for i := range want {
		want[i] = strings.Replace(want[i], "127.0.0.1", s.Listener.Addr().String(), 1)
	}
	if got := s.HostPaths(); !slices.Equal(got, want) {
		t.Errorf("requested %v, want %v (nothing of elsewhere.example)", got, want)
	}
	// The index robots.txt names is at depth 0, the sitemap it lists at
	// depth 1, and that sitemap's pages at depth 2.
	for _, p := range []string{"/from-sitemap/1", "/from-sitemap/2?a=1&b=2"} {
		if r := res[s.URL+p]; r.Depth != 2 || r.Status != 200 {
			t.Errorf("%s: Depth %d, status %d; want 2, 200", p, r.Depth, r.Status)
		}
	}
	if r := res[s.URL+"/maps/pages.xml.gz"]; r.NumURLs != 2 || r.NumNewURLs != 2 || r.Err != nil {
		t.Errorf("pages.xml.gz: NumURLs %d, NumNewURLs %d, Err %v; want 2, 2, nil", r.NumURLs, r.NumNewURLs, r.Err)
	}
	if r := res[s.URL+"/sitemap.xml"]; r.Status != 404 {
		t.Errorf("/sitemap.xml: status %d, want 404 (a Result like any URL)", r.Status)
	}
	if stats.Done != 6 {
		t.Errorf("Done: got %d, want 6", stats.Done)
	}
}

func TestSitemapsOff(t *testing.T) {
	s := newSite(t, robotsSite())
	s.setRobots("Sitemap: "+s.URL+"/maps/index.xml\n", nil)
	if _, _, err := crawlSite(t, context.Background(), []string{s.URL}); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if got := s.Requested(); !slices.Equal(got, []string{"/"}) {
		t.Errorf("requested %v, want [/] (sitemaps are off by default)", got)
	}
}

func TestSitemapsWithoutRobots(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("/{$}", anchors(0))
	mux.Handle("/page", anchors(0))
	s := newSite(t, mux)
	mux.Handle("/sitemap.xml", xmlPage(`<urlset><url><loc>`+s.URL+`/page</loc></url></urlset>`))
	if _, _, err := crawlSite(t, context.Background(), []string{s.URL}, crawl.WithSitemaps(true), crawl.WithRobots(false)); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if got := s.Requested(); !slices.Equal(got, []string{"/", "/page", "/sitemap.xml"}) {
		t.Errorf("requested %v, want [/ /page /sitemap.xml]", got)
	}
}

// Without robots.txt obeyed, it is still read for what it lists: the
// sitemaps of its Sitemap lines, and, with WithSpeculative, the paths of
// its Allow and Disallow lines, those it disallows included.
func TestSitemapsRobotsTxtWithoutRobots(t *testing.T) {
	for _, spec := range []bool{false, true} {
		t.Run(fmt.Sprint("speculative=", spec), func(t *testing.T) {
			mux := http.NewServeMux()
			mux.Handle("/{$}", anchors(0))
			mux.Handle("/page", anchors(0))
			mux.Handle("/private/", anchors(0))
			mux.Handle("/open", anchors(0))
			s := newSite(t, mux)
			mux.Handle("/maps/a.xml", xmlPage(`<urlset><url><loc>`+s.URL+`/page</loc></url></urlset>`))
			s.setRobots("User-agent: *\nDisallow: /private/\nDisallow: /wild*card\nAllow: /open$\nSitemap: "+s.URL+"/maps/a.xml\n", nil)
			_, res, err := crawlSite(t, context.Background(), []string{s.URL},
				crawl.WithSitemaps(true), crawl.WithRobots(false), crawl.WithSpeculative(spec))
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			want := []string{"/", "/maps/a.xml", "/page", "/sitemap.xml"}
			if spec {
				want = []string{"/", "/maps/a.xml", "/open", "/page", "/private/", "/sitemap.xml"}
			}
			if got := s.Requested(); !slices.Equal(got, want) {
				t.Errorf("requested %v, want %v", got, want)
			}
			if r, ok := res[s.URL+"/robots.txt"]; !ok || r.Depth != 0 || r.Status != 200 || r.Err != nil {
				t.Errorf("robots.txt: %+v; want a Result at depth 0, 200, without Err", r)
			}
			if r := res[s.URL+"/maps/a.xml"]; r.Depth != 0 {
				t.Errorf("/maps/a.xml: Depth %d, want 0, as if robots.txt were obeyed", r.Depth)
			}
		})
	}
}

func TestSitemapTooLarge(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("/{$}", anchors(0))
	mux.Handle("/", anchors(0))
	s := newSite(t, mux)
	mux.Handle("/sitemap.xml", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		for i := range crawl.MaxSitemapURLs + 10 {
			fmt.Fprintf(w, "%s/p/%d\n", s.URL, i)
		}
	}))
	stats, res, err := crawlSite(t, context.Background(), []string{s.URL},
		crawl.WithSitemaps(true), crawl.WithMaxPages(5))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	r := res[s.URL+"/sitemap.xml"]
	if !errors.Is(r.Err, crawl.ErrSitemapTooLarge) || r.NumNewURLs != crawl.MaxSitemapURLs {
		t.Errorf("/sitemap.xml: Err %v, NumNewURLs %d; want ErrSitemapTooLarge and the first %d URLs queued", r.Err, r.NumNewURLs, crawl.MaxSitemapURLs)
	}
	if stats.Budget != "max_pages" || s.Total() != 5 {
		t.Errorf("Budget %q, server saw %d; want max_pages, 5", stats.Budget, s.Total())
	}
}

// TestSitemapTooManyBytes: a sitemap over MaxSitemapBytes is read up to
// it, its Result Truncated with Size the cap (not the octet past it that
// tells the parser the file went on).
func TestSitemapTooManyBytes(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("/{$}", anchors(0))
	mux.Handle("/", anchors(0))
	s := newSite(t, mux)
	pad := bytes.Repeat([]byte("\n"), 1<<20)
	mux.Handle("/sitemap.xml", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprintf(w, "%s/p/1\n", s.URL)
		for range crawl.MaxSitemapBytes>>20 + 1 {
			w.Write(pad)
		}
	}))
	_, res, err := crawlSite(t, context.Background(), []string{s.URL}, crawl.WithSitemaps(true))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	r := res[s.URL+"/sitemap.xml"]
	if !errors.Is(r.Err, crawl.ErrSitemapTooLarge) || !r.Truncated || r.Size != crawl.MaxSitemapBytes || r.NumNewURLs != 1 {
		t.Errorf("/sitemap.xml: Err %v, Truncated %v, Size %d, NumNewURLs %d; want ErrSitemapTooLarge, true, %d, 1", r.Err, r.Truncated, r.Size, r.NumNewURLs, crawl.MaxSitemapBytes)
	}
}

// TestSitemapsExcluded: exclude patterns and filters apply to sitemaps as
// to any URL, with robots.txt and without.
func TestSitemapsExcluded(t *testing.T) {
	for _, robots := range []bool{true, false} {
		t.Run(fmt.Sprint("robots=", robots), func(t *testing.T) {
			s := newSite(t, robotsSite())
			s.setRobots("Sitemap: "+s.URL+"/maps/index.xml\n", nil)
			if _, _, err := crawlSite(t, context.Background(), []string{s.URL},
				crawl.WithSitemaps(true), crawl.WithRobots(robots), crawl.WithExclude(`\.xml$`)); err != nil {
				t.Fatalf("Run: %v", err)
			}
			if got := s.Requested(); !slices.Equal(got, []string{"/"}) {
				t.Errorf("requested %v, want [/] (sitemaps excluded by pattern)", got)
			}
		})
	}
}

// TestSitemapProbeNotBroken: the /sitemap.xml the crawler tries on its own
// is no link: its 404 has no Referrer and is not broken, in the Result
// delivered and in the one a ResultStore keeps; a sitemap robots.txt
// names that is missing is a broken link of robots.txt.
func TestSitemapProbeNotBroken(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("/{$}", htmlPage("home")) // and nothing else
	s := newSite(t, mux)
	named := s.URL + "/named.xml"
	s.setRobots("User-agent: *\nSitemap: "+named+"\n", nil)
	_, res, err := crawlSite(t, context.Background(), []string{s.URL + "/"}, crawl.WithSitemaps(true))
	if err != nil {
		t.Fatal(err)
	}
	probe, ok := res[s.URL+"/sitemap.xml"]
	if !ok || probe.Status != 404 || probe.Referrer != "" || probe.Broken() {
		t.Errorf("/sitemap.xml, tried on the crawler's own: %+v, Broken %v; want 404, no Referrer, not broken", probe, probe.Broken())
	}
	b, err := probe.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var kept crawl.Result
	if err := kept.UnmarshalBinary(b); err != nil || kept.Broken() {
		t.Errorf("/sitemap.xml as a ResultStore keeps it: Broken %v (%v), want false", kept.Broken(), err)
	}
	if r, ok := res[named]; !ok || r.Referrer != s.URL+"/robots.txt" || !r.Broken() {
		t.Errorf("%s, named by robots.txt: %+v, Broken %v; want robots.txt its Referrer, broken", named, r, r.Broken())
	}
}

// With WithSitemaps, a root host whose robots.txt is unavailable has its
// /sitemap.xml fail as its other URLs do: a Result of its own
// (ErrRobotsUnavailable, a probe, not broken), never requested.
func TestSitemapRobotsUnavailable(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("/{$}", htmlPage("home"))
	s := newSite(t, mux)
	s.setRobots("", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "busy", http.StatusInternalServerError)
	}))
	stats, res, err := crawlSite(t, context.Background(), []string{s.URL + "/"}, crawl.WithSitemaps(true), crawl.WithMaxTries(1))
	if err != nil {
		t.Fatal(err)
	}
	probe, ok := res[s.URL+"/sitemap.xml"]
	if !ok || !errors.Is(probe.Err, crawl.ErrRobotsUnavailable) || !probe.Probe() || probe.Broken() {
		t.Errorf("/sitemap.xml of a host whose robots.txt answers 500: %+v (in the Results: %v), Probe %v, Broken %v; want a Result failing with ErrRobotsUnavailable, a probe, not broken",
			probe, ok, probe.Probe(), probe.Broken())
	}
	if root := res[s.URL+"/"]; root.Probe() || !errors.Is(root.Err, crawl.ErrRobotsUnavailable) {
		t.Errorf("the root: %+v, Probe %v; want ErrRobotsUnavailable, no probe", root, root.Probe())
	}
	if stats.Done != 2 || len(res) != 2 {
		t.Errorf("Done %d, %d Results, want 2: the root and /sitemap.xml", stats.Done, len(res))
	}
	s.wantHits(t, "/sitemap.xml", 0)
}
