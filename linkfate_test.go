package crawl_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/asyncrawl/crawl"
)

// fates records, through the page hook, what became of each link of each
// page, as "page source url" -> fate.
type fates struct {
	mu sync.Mutex
	m  map[string]string
}

func (f *fates) hook(p *crawl.Page) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.m == nil {
		f.m = map[string]string{}
	}
	for _, l := range p.Links {
		f.m[p.URL.Path+" "+l.Source+" "+l.URL.String()] = l.Fate.String()
	}
}

func (f *fates) get(key string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.m[key]
}

// The page hook sees, for each typed link of a page, whether the crawl
// followed it and, if not, why not.
func TestLinkFates(t *testing.T) {
	long := "/" + strings.Repeat("l", 120)
	s := newSite(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			htmlPage(`<a href="/a">a</a><a href="/a">again</a>
				<a href="http://other.example/x">other</a>
				<a href="/private/p">private</a>
				<a href="/n" rel="nofollow">n</a>
				<img src="/i.png">
				<a href="`+long+`">long</a>
				<a href="/b">b</a><a href="/c">c</a><a href="/d">d</a>`)(w, r)
		case "/a":
			htmlPage(`<a href="/deep">deep</a>`)(w, r)
		default:
			htmlPage(`leaf`)(w, r)
		}
	}))
	var f fates
	_, _, err := crawlSite(t, context.Background(), []string{s.URL + "/"},
		crawl.WithRobots(false), crawl.WithRobotsDirectives(true), crawl.WithPageHook(f.hook),
		crawl.WithExclude(`/private/`), crawl.WithMaxDepth(1), crawl.WithMaxURLLength(100),
		crawl.WithMaxLinksPerPage(5))
	if err != nil {
		t.Fatal(err)
	}
	u := s.URL
	want := map[string]string{
		"/ a href http://other.example/x": "out_of_scope",
		"/ a href " + u + "/private/p":    "excluded",
		"/ a href " + u + "/n":            "nofollow",
		"/ img src " + u + "/i.png":       "not_followed",
		"/ a href " + u + long:            "url_length",
		"/ a href " + u + "/b":            "followed",
		"/ a href " + u + "/c":            "followed",
		"/ a href " + u + "/d":            "links_per_page",
		"/a a href " + u + "/deep":        "max_depth",
	}
	for k, v := range want {
		if got := f.get(k); got != v {
			t.Errorf("%s: fate %q, want %q", k, got, v)
		}
	}
	// The duplicate: one of the two is followed, the other is a duplicate;
	// the map keeps the last, the duplicate.
	if got := f.get("/ a href " + u + "/a"); got != "followed" && got != "duplicate" {
		t.Errorf("/a: %q", got)
	}
	s.wantHits(t, "/d", 0)
	s.wantHits(t, "/deep", 0)
}

// With WithCheckExternal, a link out of scope is checked.
func TestLinkFateChecked(t *testing.T) {
	s := newSite(t, htmlPage(`<a href="http://other.example/x">x</a>`))
	var f fates
	_, _, err := crawlSite(t, context.Background(), []string{"http://www.example.com/"},
		crawl.WithHTTPClient(routeAll(t, s.Server)),
		crawl.WithRobots(false), crawl.WithCheckExternal(true), crawl.WithPageHook(f.hook))
	if err != nil {
		t.Fatal(err)
	}
	if got := f.get("/ a href http://other.example/x"); got != "checked" {
		t.Errorf("fate %q, want checked", got)
	}
}

// A LinkFilter decides on what kind of link each is: here it keeps the
// requisites of scripts and drops those of images, and drops navigation
// links by their anchor text.
func TestWithLinkFilter(t *testing.T) {
	s := newSite(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/" {
			htmlPage(`<img src="/i.png"><script src="/s.js"></script>
				<a href="/keep">keep</a><a href="/logout">Log out</a>`)(w, r)
			return
		}
		w.Write([]byte("x"))
	}))
	var mu sync.Mutex
	seen := map[string]crawl.LinkRole{}
	filter := func(l *crawl.Link) bool {
		mu.Lock()
		seen[l.URL.Path] = l.Role
		mu.Unlock()
		return l.Source != "img src" && l.Text != "Log out"
	}
	var f fates
	_, _, err := crawlSite(t, context.Background(), []string{s.URL + "/"},
		crawl.WithRobots(false), crawl.WithRequisites(true), crawl.WithLinkFilter(filter), crawl.WithPageHook(f.hook))
	if err != nil {
		t.Fatal(err)
	}
	s.wantHits(t, "/i.png", 0)
	s.wantHits(t, "/logout", 0)
	s.wantHits(t, "/s.js", 1)
	s.wantHits(t, "/keep", 1)
	if seen["/i.png"] != crawl.Requisite || seen["/keep"] != crawl.Navigation {
		t.Errorf("the filter saw roles %v", seen)
	}
	if got := f.get("/ img src " + s.URL + "/i.png"); got != "excluded" {
		t.Errorf("/i.png fate %q, want excluded", got)
	}
}

// A typed link extractor's links are followed by their roles, resolved
// against the document base, and weighed for the page hook.
func TestWithTypedLinkExtractor(t *testing.T) {
	s := newSite(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/dir/" {
			htmlPage(`<base href="/base/"><p data-next="next" data-img="pic.png">`)(w, r)
			return
		}
		w.Write([]byte("x"))
	}))
	extract := func(ctx context.Context, p *crawl.Page) ([]crawl.Link, error) {
		links, err := crawl.ExtractTypedLinks(ctx, p)
		// A page that names its links in data attributes.
		links = append(links,
			crawl.Link{URL: &url.URL{Path: "next"}, Role: crawl.Navigation, Source: "p data-next"},
			crawl.Link{URL: &url.URL{Path: "pic.png"}, Role: crawl.Requisite, Source: "p data-img"},
			crawl.Link{URL: &url.URL{Scheme: "mailto", Opaque: "a@b"}, Role: crawl.Navigation, Source: "p data-mail"})
		return links, err
	}
	var f fates
	_, res, err := crawlSite(t, context.Background(), []string{s.URL + "/dir/"},
		crawl.WithRobots(false), crawl.WithRequisites(true), crawl.WithTypedLinkExtractor(extract), crawl.WithPageHook(f.hook))
	if err != nil {
		t.Fatal(err)
	}
	s.wantHits(t, "/base/next", 1)
	s.wantHits(t, "/base/pic.png", 1)
	if r := res[s.URL+"/base/next"]; r.Referrer != s.URL+"/dir/" {
		t.Errorf("referrer %q", r.Referrer)
	}
	if got := f.get("/dir/ p data-next " + s.URL + "/base/next"); got != "followed" {
		t.Errorf("fate %q, want followed", got)
	}
	if len(res) != 3 {
		t.Errorf("%d Results, want 3 (the mailto link is dropped)", len(res))
	}
}

// A page hook that panics keeps the page's links from being followed,
// though they were weighed before it ran.
func TestPageHookPanicFollowsNothing(t *testing.T) {
	s := newSite(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		htmlPage(`<a href="/a">a</a>`)(w, r)
	}))
	_, res, err := crawlSite(t, context.Background(), []string{s.URL + "/"},
		crawl.WithRobots(false), crawl.WithPageHook(func(*crawl.Page) { panic("boom") }))
	if err != nil {
		t.Fatal(err)
	}
	s.wantHits(t, "/a", 0)
	if r := res[s.URL+"/"]; r.NumURLs != 0 || r.Err == nil {
		t.Errorf("root: NumURLs %d, Err %v; want 0 and the panic", r.NumURLs, r.Err)
	}
}
