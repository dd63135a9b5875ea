package crawl_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/asyncrawl/crawl"
	"github.com/asyncrawl/crawl/crawltest"
)

// numURLs crawls root on site with opts and returns each Result's
// NumURLs and NumNewURLs by path.
func numURLs(t *testing.T, site *crawltest.Site, root string, opts ...crawl.Option) map[string][2]int {
	t.Helper()
	var mu sync.Mutex
	got := map[string][2]int{}
	opts = append(opts, crawl.WithHTTPClient(site.Client()), crawl.WithWorkers(1),
		crawl.WithResultHook(func(r crawl.Result) {
			mu.Lock()
			got[strings.TrimPrefix(r.URL, "http://www.example.com")] = [2]int{r.NumURLs, r.NumNewURLs}
			mu.Unlock()
		}))
	c, err := crawl.New(opts...)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Run(context.Background(), root); err != nil {
		t.Fatal(err)
	}
	for path, n := range got {
		if n[1] > n[0] {
			t.Errorf("%s: NumNewURLs %d > NumURLs %d", path, n[1], n[0])
		}
	}
	return got
}

// A redirect's target is its one link: NumURLs 1 when it was queued (new
// or not), and NumNewURLs 1 only when it was new; 0 and 0 when it was
// excluded or refused.
func TestRedirectNumURLs(t *testing.T) {
	site := crawltest.Start(t)
	long := "/" + strings.Repeat("l", 80)
	site.Page("/", "/r1", "/r2", "/r3", "/r4", "/r5")
	site.Redirect("/r1", http.StatusFound, "/a")
	site.Redirect("/r2", http.StatusFound, "/a")
	site.Redirect("/r3", http.StatusFound, "/private/b")
	site.Redirect("/r4", http.StatusFound, long)
	site.Redirect("/r5", http.StatusFound, "/x/x/x/")
	site.Page("/a")
	got := numURLs(t, site, "http://www.example.com/", crawl.WithRobots(false),
		crawl.WithExclude("/private/"), crawl.WithMaxURLLength(60))
	for _, tt := range []struct {
		path string
		want [2]int
	}{
		{"/", [2]int{5, 5}},
		{"/r1", [2]int{1, 1}},
		{"/r2", [2]int{1, 0}},
		{"/r3", [2]int{0, 0}}, // excluded
		{"/r4", [2]int{0, 0}}, // url_length
		{"/r5", [2]int{0, 0}}, // segment_repeats
	} {
		if g := got[tt.path]; g != tt.want {
			t.Errorf("%s: got NumURLs, NumNewURLs %v, want %v", tt.path, g, tt.want)
		}
	}
}

// NumURLs leaves out the links that a trap limit refused, and those past
// WithMaxDepth, as Stats.Refused counts them.
func TestNumURLsRefused(t *testing.T) {
	site := crawltest.Start(t)
	long := "/" + strings.Repeat("l", 80)
	site.Page("/", "/a", long, "/x/x/x/", "/private/p")
	site.Page("/a", "/b", "/c")
	got := numURLs(t, site, "http://www.example.com/", crawl.WithRobots(false),
		crawl.WithExclude("/private/"), crawl.WithMaxURLLength(60), crawl.WithMaxDepth(1))
	for _, tt := range []struct {
		path string
		want [2]int
	}{
		{"/", [2]int{1, 1}},  // /a; the long one, /x/x/x/ refused, /private/ excluded
		{"/a", [2]int{0, 0}}, // /b and /c past max depth
	} {
		if g := got[tt.path]; g != tt.want {
			t.Errorf("%s: got NumURLs, NumNewURLs %v, want %v", tt.path, g, tt.want)
		}
	}
}

// A filter that panics partway through a page's links fails the page:
// none of its links are queued, and none are counted.
func TestNumURLsFilterPanic(t *testing.T) {
	for _, tt := range []struct {
		name string
		opt  func(panicky func(string) bool) crawl.Option
	}{
		{"WithFilter", func(p func(string) bool) crawl.Option {
			return crawl.WithFilter(func(u *url.URL) bool { return p(u.Path) })
		}},
		{"WithLinkFilter", func(p func(string) bool) crawl.Option {
			return crawl.WithLinkFilter(func(l *crawl.Link) bool { return p(l.URL.Path) })
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			site := crawltest.Start(t)
			site.Page("/", "/a", "/b", "/c")
			var res []crawl.Result
			c, err := crawl.New(crawl.WithHTTPClient(site.Client()), crawl.WithRobots(false),
				crawl.WithResultHook(func(r crawl.Result) { res = append(res, r) }),
				tt.opt(func(path string) bool {
					if path == "/c" {
						panic("boom")
					}
					return true
				}))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Run(context.Background(), "http://www.example.com/"); err != nil {
				t.Fatal(err)
			}
			if len(res) != 1 || res[0].NumURLs != 0 || res[0].NumNewURLs != 0 || !errors.Is(res[0].Err, crawl.ErrPanic) {
				t.Errorf("got %d Results, the root's %+v; want only the root's, NumURLs 0, NumNewURLs 0, Err wrapping ErrPanic", len(res), res)
			}
		})
	}
}
