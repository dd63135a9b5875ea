package crawl_test

// Tests of issue 11's defects that live in the crawler's own stages: user
// code called outside the recovery point, sitemap-index chains, the page
// budget's report, link extractors and hooks that see or keep the URLs.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/asyncrawl/crawl"
)

// A filter that panics on a sitemap URL is recovered: the process does not
// crash, with robots.txt obeyed (the sitemaps are queued from a worker) or
// not (from Run itself).
func TestEdgeFilterPanicOnSitemap(t *testing.T) {
	for _, robots := range []bool{false, true} {
		t.Run(fmt.Sprint("robots=", robots), func(t *testing.T) {
			mux := http.NewServeMux()
			mux.Handle("/{$}", htmlPage(crawlerLinks("/a")))
			mux.Handle("/a", htmlPage("leaf"))
			mux.Handle("/sitemap.xml", xmlPage(`<urlset><url><loc>http://x/</loc></url></urlset>`))
			s := newSite(t, mux)
			s.setRobots("User-agent: *\nSitemap: "+s.URL+"/sitemap.xml\n", nil)
			panicky := crawl.WithFilter(func(u *url.URL) bool {
				if strings.Contains(u.Path, "sitemap") {
					panic("filter bug")
				}
				return true
			})
			stats, res, err := crawlSite(t, crawlerCtx(t), []string{s.URL + "/"},
				crawl.WithSitemaps(true), crawl.WithRobots(robots), panicky)
			if err != nil {
				t.Fatalf("Run: got %v, want nil", err)
			}
			if r, ok := res[s.URL+"/a"]; !ok || r.Err != nil {
				t.Errorf("/a: got %+v, want a Result without Err (the crawl goes on)", r)
			}
			if s.Hits("/sitemap.xml") != 0 {
				t.Errorf("/sitemap.xml fetched %d times, want 0 (its filter panicked)", s.Hits("/sitemap.xml"))
			}
			// Without robots.txt obeyed, it is fetched for its Sitemap
			// lines as a sitemap is: a Result of its own.
			want := 2
			if !robots {
				want = 3
			}
			if stats.Done != want {
				t.Errorf("Done %d, want %d", stats.Done, want)
			}
		})
	}
}

// A filter that panics on a redirect target or a link ends that page with
// an ErrPanic Result, and nothing else.
func TestEdgeFilterPanicOnLink(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("/{$}", htmlPage(crawlerLinks("/boom", "/ok")))
	mux.Handle("/ok", http.RedirectHandler("/boom2", http.StatusFound))
	s := newSite(t, mux)
	_, res, err := crawlSite(t, crawlerCtx(t), []string{s.URL + "/"}, crawl.WithFilter(func(u *url.URL) bool {
		if strings.HasPrefix(u.Path, "/boom2") {
			panic("filter bug")
		}
		return true
	}))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if r := res[s.URL+"/ok"]; !errors.Is(r.Err, crawl.ErrPanic) {
		t.Errorf("/ok (redirect to a URL whose filter panics): got Err %v, want ErrPanic", r.Err)
	}
}

// A log handler that panics does not crash the crawl.
func TestEdgeLoggerPanics(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("/{$}", htmlPage(crawlerLinks("/loop")))
	mux.Handle("/loop", http.RedirectHandler("/loop", http.StatusFound))
	s := newSite(t, mux)
	logger := slog.New(panicHandler{})
	stats, _, err := crawlSite(t, crawlerCtx(t), []string{s.URL + "/"}, crawl.WithLogger(logger), crawl.WithMaxRedirects(0))
	if err != nil || stats.Done != 2 || stats.Failures != 1 {
		t.Errorf("got err %v, Done %d, Failures %d; want nil, 2, 1 (the redirect past the limit is logged, and the handler panics)", err, stats.Done, stats.Failures)
	}
}

type panicHandler struct{}

func (panicHandler) Enabled(context.Context, slog.Level) bool  { return true }
func (panicHandler) Handle(context.Context, slog.Record) error { panic("log handler bug") }
func (h panicHandler) WithAttrs([]slog.Attr) slog.Handler      { return h }
func (h panicHandler) WithGroup(string) slog.Handler           { return h }

// A sitemap index that lists indexes, each listing more, is read one level
// down and no further: the crawl ends by itself.
func TestEdgeSitemapIndexChain(t *testing.T) {
	var mu sync.Mutex
	fetched := 0
	mux := http.NewServeMux()
	mux.Handle("/{$}", htmlPage("home"))
	var base string
	mux.HandleFunc("/idx/", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		fetched++
		n := fetched
		mu.Unlock()
		w.Header().Set("Content-Type", "application/xml")
		fmt.Fprintf(w, `<sitemapindex><sitemap><loc>%s/idx/%da</loc></sitemap><sitemap><loc>%s/idx/%db</loc></sitemap></sitemapindex>`, base, n, base, n)
	})
	mux.Handle("/sitemap.xml", http.RedirectHandler("/idx/0", http.StatusFound))
	s := newSite(t, mux)
	base = s.URL
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	stats, _, err := crawlSite(t, ctx, []string{s.URL + "/"}, crawl.WithSitemaps(true), crawl.WithRobots(false))
	if err != nil {
		t.Fatalf("Run: got %v, want nil (the chain must end by itself)", err)
	}
	// /sitemap.xml redirects to /idx/0 (depth 0), which lists two
	// indexes (depth 1), whose entries are left unread.
	if fetched != 3 {
		t.Errorf("%d sitemap indexes fetched, want 3 (Done %d)", fetched, stats.Done)
	}
}

// WithMaxDepth bounds the sitemaps an index lists: at depth 0 none of them
// is read.
func TestEdgeSitemapDepth(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("/{$}", htmlPage("home"))
	var base string
	mux.HandleFunc("/sitemap.xml", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/xml")
		fmt.Fprintf(w, `<sitemapindex><sitemap><loc>%s/pages.xml</loc></sitemap></sitemapindex>`, base)
	})
	mux.HandleFunc("/pages.xml", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/xml")
		fmt.Fprintf(w, `<urlset><url><loc>%s/p</loc></url></urlset>`, base)
	})
	s := newSite(t, mux)
	base = s.URL
	for _, tt := range []struct{ depth, pagesXML, p int }{{1, 1, 0}, {2, 1, 1}} {
		_, _, err := crawlSite(t, crawlerCtx(t), []string{s.URL + "/"}, crawl.WithSitemaps(true), crawl.WithRobots(false), crawl.WithMaxDepth(tt.depth))
		if err != nil {
			t.Fatal(err)
		}
		s.wantHits(t, "/pages.xml", tt.pagesXML)
		s.wantHits(t, "/p", tt.p)
		s.mu.Lock()
		clear(s.hits)
		s.mu.Unlock()
	}
}

// A crawl that simply had exactly WithMaxPages pages was not cut short by
// the budget.
func TestEdgeBudgetExact(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("/{$}", htmlPage(crawlerLinks("/a", "/b")))
	mux.Handle("/a", htmlPage("a"))
	mux.Handle("/b", htmlPage("b"))
	s := newSite(t, mux)
	for _, tt := range []struct {
		max    int
		budget string
		todo   int
	}{{3, "", 0}, {4, "", 0}, {2, "max_pages", 1}} {
		stats, _, err := crawlSite(t, crawlerCtx(t), []string{s.URL + "/"}, crawl.WithMaxPages(tt.max), crawl.WithWorkers(1))
		if err != nil {
			t.Fatal(err)
		}
		if stats.Budget != tt.budget || stats.Todo != tt.todo {
			t.Errorf("WithMaxPages(%d) on 3 pages: Budget %q, Todo %d; want %q, %d", tt.max, stats.Budget, stats.Todo, tt.budget, tt.todo)
		}
	}
}

// WithLinkExtractor(ExtractLinks) crawls what the default extractor does:
// rel=nofollow links are followed when robots.txt is not obeyed, and left
// out when it is.
func TestEdgeExtractLinksAsDefault(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("/{$}", htmlPage(`<a href="/plain">p</a><a rel="nofollow" href="/nf">n</a>`))
	mux.Handle("/plain", htmlPage("p"))
	mux.Handle("/nf", htmlPage("n"))
	s := newSite(t, mux)
	for _, robots := range []bool{false, true} {
		var want []string
		for _, ext := range []crawl.LinkExtractor{nil, crawl.ExtractLinks} {
			var got results
			c, err := crawl.New(crawl.WithRobots(robots), crawl.WithLinkExtractor(ext), crawl.WithResultHook(got.hook))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Run(crawlerCtx(t), s.URL+"/"); err != nil {
				t.Fatal(err)
			}
			if ext == nil {
				want = got.urls()
				continue
			}
			if g := got.urls(); strings.Join(g, " ") != strings.Join(want, " ") {
				t.Errorf("robots=%v: WithLinkExtractor(ExtractLinks) crawled %v, the default %v; want the same", robots, g, want)
			}
		}
		if n := len(want); robots && n != 2 || !robots && n != 3 {
			t.Errorf("robots=%v: the default crawled %v", robots, want)
		}
	}
}

// A custom extractor is called for pages of every content type, not for
// sitemaps, as its doc says.
func TestEdgeExtractorCalledFor(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("/{$}", htmlPage("home"))
	mux.HandleFunc("/data.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{}`)
	})
	var base string
	mux.HandleFunc("/sitemap.xml", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/xml")
		fmt.Fprintf(w, `<urlset><url><loc>%s/data.json</loc></url></urlset>`, base)
	})
	s := newSite(t, mux)
	base = s.URL
	var mu sync.Mutex
	var called []string
	ext := func(ctx context.Context, p *crawl.Page) ([]*url.URL, error) {
		mu.Lock()
		called = append(called, p.URL.Path)
		mu.Unlock()
		return nil, nil
	}
	if _, _, err := crawlSite(t, crawlerCtx(t), []string{s.URL + "/"}, crawl.WithSitemaps(true), crawl.WithLinkExtractor(ext)); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(sortedCopy(called), " ")
	if got != "/ /data.json" {
		t.Errorf("extractor called for %q, want %q", got, "/ /data.json")
	}
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// The URLs a custom extractor returns are resolved and normalised in place,
// relative ones included, so that a program that keeps them (to join its
// links to Results) holds the URLs queued.
func TestEdgeExtractorURLsInPlace(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("/{$}", htmlPage("home"))
	mux.Handle("/a/c/d", htmlPage("d"))
	s := newSite(t, mux)
	var mu sync.Mutex
	var kept []*url.URL
	ext := func(ctx context.Context, p *crawl.Page) ([]*url.URL, error) {
		if p.URL.Path != "/" {
			return nil, nil
		}
		u, _ := url.Parse("a/c/./d#frag")
		mu.Lock()
		kept = append(kept, u)
		mu.Unlock()
		return []*url.URL{u}, nil
	}
	_, res, err := crawlSite(t, crawlerCtx(t), []string{s.URL + "/"}, crawl.WithLinkExtractor(ext))
	if err != nil {
		t.Fatal(err)
	}
	if len(kept) != 1 {
		t.Fatalf("extractor kept %d URLs, want 1", len(kept))
	}
	if _, ok := res[kept[0].String()]; !ok || kept[0].String() != s.URL+"/a/c/d" {
		t.Errorf("the URL the extractor kept reads %q after the crawl; want %q, a Result's URL", kept[0], s.URL+"/a/c/d")
	}
}

// A page hook that changes p.URL does not change what the page's links
// resolve against.
func TestEdgePageHookMutatesURL(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("/a/{$}", htmlPage(`<a href="b">b</a>`))
	mux.Handle("/a/b", htmlPage("b"))
	s := newSite(t, mux)
	_, res, err := crawlSite(t, crawlerCtx(t), []string{s.URL + "/a/"}, crawl.WithPageHook(func(p *crawl.Page) {
		p.URL.Path = "/elsewhere/"
	}))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := res[s.URL+"/a/b"]; !ok {
		t.Errorf("got Results for %v, want %s/a/b (the link resolved against the URL fetched)", keys(res), s.URL)
	}
}

// A request hook that rewrites req.URL (to send every request through a
// path prefix, say) does not change what links and redirects resolve
// against.
func TestEdgeRequestHookMutatesURL(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("/mirror/a/{$}", htmlPage(`<a href="b">b</a>`))
	mux.HandleFunc("/mirror/a/b", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", "c") // relative, as sent
		w.WriteHeader(http.StatusFound)
	})
	mux.Handle("/mirror/a/c", htmlPage("c"))
	s := newSite(t, mux)
	_, res, err := crawlSite(t, crawlerCtx(t), []string{s.URL + "/a/"}, crawl.WithRequestHook(func(r *http.Request) error {
		r.URL.Path = "/mirror" + r.URL.Path
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/a/", "/a/b", "/a/c"} {
		if r, ok := res[s.URL+p]; !ok || r.Err != nil {
			t.Errorf("%s: got %+v (all: %v), want a Result without Err", p, r, keys(res))
		}
	}
}

func keys(m map[string]crawl.Result) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return sortedCopy(out)
}

// A robots.txt whose host name does not exist is not retried: the name
// will not exist on the next try either.
func TestEdgeRobotsNoSuchHostNotRetried(t *testing.T) {
	var dials atomic.Int64
	client := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			dials.Add(1)
			return nil, &net.DNSError{Err: "no such host", Name: "nowhere.example", IsNotFound: true}
		},
	}}
	stats, res, err := crawlSite(t, crawlerCtx(t), []string{"http://nowhere.example/"},
		crawl.WithHTTPClient(client), crawl.WithMaxTries(4), crawl.WithBackoff(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	if n := dials.Load(); n != 1 {
		t.Errorf("%d dials, want 1 (robots.txt once, then the host is disallowed)", n)
	}
	var dns *net.DNSError
	r := res["http://nowhere.example/"]
	if !errors.Is(r.Err, crawl.ErrDisallowed) || !errors.Is(r.Err, crawl.ErrRobotsUnavailable) || !errors.As(r.Err, &dns) || stats.FailKinds["robots_unavailable"] != 1 {
		t.Errorf("root: Err %v, fail kinds %v; want ErrRobotsUnavailable (and ErrDisallowed) wrapping the DNS error, of kind robots_unavailable", r.Err, stats.FailKinds)
	}
}

// The frontier never matches robots.txt rules: it hands out the leases of
// an opened host with the host's rules, and the worker that took one
// checks it, outside any lock shared with other hosts. A host's rules,
// however slow to match, cost its own workers only.
func TestEdgeFrontierLeavesRobotsToWorkers(t *testing.T) {
	ctx := context.Background()
	f := crawl.NewMemoryFrontier()
	if err := f.Start(ctx, crawl.Policy{HostWorkers: 2, Robots: true}); err != nil {
		t.Fatal(err)
	}
	f.Push(ctx, crawl.Request{URL: "http://a.test/private/x"}, crawl.Request{URL: "http://b.test/"})
	var robotsA *crawl.Lease
	for range 2 {
		l, err := f.Take(ctx)
		if err != nil || l.Kind != crawl.RobotsRequest {
			t.Fatalf("Take: got %+v, %v; want the robots.txt of each host first", l, err)
		}
		if l.URL == "http://a.test/robots.txt" {
			robotsA = l
		} else if _, err := f.Ack(ctx, l, crawl.Outcome{Rules: &crawl.HostRules{}}); err != nil {
			t.Fatal(err)
		}
	}
	rules := &crawl.HostRules{Robots: []byte("User-agent: *\nDisallow: /private/\n")}
	if _, err := f.Ack(ctx, robotsA, crawl.Outcome{Rules: rules}); err != nil {
		t.Fatal(err)
	}
	got := map[string]*crawl.Lease{}
	for range 2 {
		l, err := f.Take(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got[l.URL] = l
	}
	l := got["http://a.test/private/x"]
	if l == nil || l.Rules != rules {
		t.Fatalf("leases %v: want the disallowed URL handed out with its host's rules, for the worker to check", got)
	}
	// The worker found it disallowed: no request was sent.
	if _, err := f.Ack(ctx, l, crawl.Outcome{Unsent: true}); err != nil {
		t.Fatal(err)
	}
	if c, _ := f.Counts(ctx); c.Pages != 1 {
		t.Errorf("Counts.Pages = %d, want 1 (the disallowed URL is not a page fetched)", c.Pages)
	}
}

// Hooks given twice compose, in the order given.
func TestEdgeHooksCompose(t *testing.T) {
	s := newSite(t, htmlPage("home"))
	var mu sync.Mutex
	var order []string
	note := func(what string) {
		mu.Lock()
		order = append(order, what)
		mu.Unlock()
	}
	_, _, err := crawlSite(t, crawlerCtx(t), []string{s.URL + "/"},
		crawl.WithRobots(false),
		crawl.WithRequestHook(func(r *http.Request) error { note("req1"); r.Header.Set("X-One", "1"); return nil }),
		crawl.WithRequestHook(func(r *http.Request) error { note("req2"); r.Header.Set("X-Two", "2"); return nil }),
		crawl.WithPageHook(func(*crawl.Page) { note("page1") }),
		crawl.WithPageHook(func(*crawl.Page) { note("page2") }),
		crawl.WithResultHook(func(crawl.Result) { note("result1") }),
	)
	if err != nil {
		t.Fatal(err)
	}
	// crawlSite adds its own result hook last.
	if got := strings.Join(order, " "); got != "req1 req2 page1 page2 result1" {
		t.Errorf("hooks ran as %q, want %q", got, "req1 req2 page1 page2 result1")
	}
	if h := s.Header("/"); h.Get("X-One") != "1" || h.Get("X-Two") != "2" {
		t.Errorf("request headers %v: want both hooks' headers", h)
	}
}

// A hook that panics does not keep the hooks given after it from their
// calls: each result hook is called for every URL, and each page hook for
// every page (the page whose hook panicked has that panic as its Err, the
// first one's, and its links are not followed).
func TestEdgeHookPanicOthersRun(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("/{$}", htmlPage(crawlerLinks("/a", "/b")))
	mux.Handle("/a", htmlPage(crawlerLinks("/a/next")))
	mux.Handle("/a/next", htmlPage("a next"))
	mux.Handle("/b", htmlPage("b"))
	s := newSite(t, mux)
	var pages2, results2 atomic.Int64
	stats, results, err := crawlSite(t, crawlerCtx(t), []string{s.URL + "/"},
		crawl.WithRobots(false),
		crawl.WithPageHook(func(p *crawl.Page) {
			if p.URL.Path == "/a" {
				panic("first page hook")
			}
		}),
		crawl.WithPageHook(func(p *crawl.Page) {
			pages2.Add(1)
			if p.URL.Path == "/a" {
				panic("second page hook")
			}
		}),
		crawl.WithResultHook(func(crawl.Result) { panic("first result hook") }),
		crawl.WithResultHook(func(crawl.Result) { results2.Add(1) }),
	)
	if err != nil {
		t.Fatal(err)
	}
	if stats.Done != 3 || results2.Load() != 3 || pages2.Load() != 3 {
		t.Errorf("Done %d, second result hook called %d times, second page hook %d; want 3 each (/, /a, /b; /a's links not followed)", stats.Done, results2.Load(), pages2.Load())
	}
	for _, r := range results {
		if strings.HasSuffix(r.URL, "/a") && (!errors.Is(r.Err, crawl.ErrPanic) || !strings.Contains(r.Err.Error(), "first page hook")) {
			t.Errorf("/a: Err %v, want the first page hook's panic", r.Err)
		}
	}
}

// The zero Crawler crawls with the defaults.
func TestEdgeZeroCrawler(t *testing.T) {
	s := newSite(t, htmlPage(crawlerLinks("/a")))
	var c crawl.Crawler
	stats, err := c.Run(crawlerCtx(t), s.URL+"/")
	if err != nil || stats.Done != 2 || stats.Workers != crawl.DefaultWorkers {
		t.Errorf("zero Crawler: got %+v, %v; want 2 URLs done with the default workers", stats, err)
	}
	var nilCrawler *crawl.Crawler
	if _, err := nilCrawler.Run(crawlerCtx(t), s.URL+"/"); err == nil {
		t.Error("nil *Crawler: got no error, want one saying to use New")
	}
}

// Obeying robots.txt and obeying a page's own robots directives are two
// switches: a link checker can obey the first and still check the links
// of a nofollow page.
func TestEdgeRobotsDirectivesSwitch(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("/{$}", htmlPage(`<meta name="robots" content="nofollow"><a href="/a">a</a> <a rel="nofollow" href="/b">b</a>`))
	mux.Handle("/a", htmlPage("a"))
	mux.Handle("/b", htmlPage("b"))
	s := newSite(t, mux)
	for _, tt := range []struct {
		opts []crawl.Option
		want int
	}{
		{nil, 1},
		{[]crawl.Option{crawl.WithRobotsDirectives(false)}, 3},
		{[]crawl.Option{crawl.WithRobots(false)}, 3},
		{[]crawl.Option{crawl.WithRobots(false), crawl.WithRobotsDirectives(true)}, 1},
	} {
		stats, _, err := crawlSite(t, crawlerCtx(t), []string{s.URL + "/"}, tt.opts...)
		if err != nil || stats.Done != tt.want {
			t.Errorf("%d options: Done %d, err %v; want %d", len(tt.opts), stats.Done, err, tt.want)
		}
	}
}

// robots.txt goes through the request hook, and a robots.txt redirect
// waits for the host's delay like any request.
func TestEdgeRobotsHookAndDelay(t *testing.T) {
	var mu sync.Mutex
	var times []time.Time
	var auth []string
	mux := http.NewServeMux()
	mux.Handle("/{$}", htmlPage("home"))
	mux.HandleFunc("/robots-moved.txt", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		times = append(times, time.Now())
		auth = append(auth, r.Header.Get("Authorization"))
		mu.Unlock()
		fmt.Fprint(w, "User-agent: *\nDisallow:\n")
	})
	s := newSite(t, mux)
	s.setRobots("", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		times = append(times, time.Now())
		auth = append(auth, r.Header.Get("Authorization"))
		mu.Unlock()
		http.Redirect(w, r, "/robots-moved.txt", http.StatusMovedPermanently)
	}))
	const delay = 200 * time.Millisecond
	_, _, err := crawlSite(t, crawlerCtx(t), []string{s.URL + "/"}, crawl.WithHostDelay(delay),
		crawl.WithRequestHook(func(r *http.Request) error { r.Header.Set("Authorization", "Bearer x"); return nil }))
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(times) != 2 {
		t.Fatalf("robots.txt requests: %d, want 2 (the redirect and its target)", len(times))
	}
	if gap := times[1].Sub(times[0]); gap < delay/2 {
		t.Errorf("the robots.txt redirect was followed %v after the first request, want at least %v (half the host delay)", gap, delay/2)
	}
	for i, a := range auth {
		if a != "Bearer x" {
			t.Errorf("robots.txt request %d: Authorization %q, want the request hook's", i, a)
		}
	}
}

// Broken tells a link checker what is broken: failures and error statuses,
// an HTML 404 included; not a URL that was not requested, because
// robots.txt disallows it or is unavailable.
func TestEdgeResultBroken(t *testing.T) {
	for _, tt := range []struct {
		r    crawl.Result
		want bool
	}{
		{crawl.Result{Status: 200, ContentType: "text/html"}, false},
		{crawl.Result{Status: 301, NextURL: "http://x/"}, false},
		{crawl.Result{Status: 404, ContentType: "text/html"}, true},
		{crawl.Result{Status: 503}, true},
		{crawl.Result{Err: errors.New("reset")}, true},
		{crawl.Result{Err: fmt.Errorf("fetch x: %w", crawl.ErrDisallowed)}, false},
		{crawl.Result{Err: &crawl.RobotsUnavailableError{URL: "http://x/robots.txt", Status: 503}}, false},
		{crawl.Result{Err: fmt.Errorf("fetch x: %w", &crawl.RobotsUnavailableError{URL: "http://x/robots.txt", Err: errors.New("refused")})}, false},
	} {
		if got := tt.r.Broken(); got != tt.want {
			t.Errorf("%+v: Broken() = %v, want %v", tt.r, got, tt.want)
		}
	}
}

// A robots.txt in flight shows in Progress: a crawl waiting on a slow
// robots.txt does not look frozen.
func TestEdgeProgressCountsRobots(t *testing.T) {
	release := make(chan struct{})
	s := newSite(t, htmlPage("home"))
	s.setRobots("", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
		http.NotFound(w, r)
	}))
	var once sync.Once
	var mu sync.Mutex
	var shown *crawl.Progress
	progress := crawl.WithProgress(5*time.Millisecond, func(p crawl.Progress) {
		if p.InFlight > 0 {
			once.Do(func() {
				mu.Lock()
				shown = &p
				mu.Unlock()
				close(release)
			})
		}
	})
	timeout := time.AfterFunc(10*time.Second, func() { once.Do(func() { close(release) }) })
	defer timeout.Stop()
	stats, _, err := crawlSite(t, crawlerCtx(t), []string{s.URL + "/"}, progress)
	if err != nil || stats.Done != 1 {
		t.Fatalf("Done %d, err %v; want 1, nil", stats.Done, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if shown == nil {
		t.Fatal("no Progress showed the robots.txt in flight")
	}
	if shown.Done != 0 {
		t.Errorf("progress with the robots.txt in flight: Done %d, want 0", shown.Done)
	}
}

// Each Result names the page where the crawl first found its URL.
func TestEdgeReferrer(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("/{$}", htmlPage(crawlerLinks("/a", "/old")))
	mux.Handle("/a", htmlPage("a"))
	mux.Handle("/old", http.RedirectHandler("/new", http.StatusMovedPermanently))
	mux.Handle("/new", htmlPage("new"))
	s := newSite(t, mux)
	_, res, err := crawlSite(t, crawlerCtx(t), []string{s.URL + "/"})
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{"/": "", "/a": "/", "/old": "/", "/new": "/old"} {
		if want != "" {
			want = s.URL + want
		}
		if got := res[s.URL+path].Referrer; got != want {
			t.Errorf("%s: Referrer %q, want %q", path, got, want)
		}
	}
}

// WithTransportWrapper sees every request of a Run, robots.txt included,
// and the guard of WithBlockPrivateNetworks still holds under it.
func TestEdgeTransportWrapper(t *testing.T) {
	s := newSite(t, htmlPage(crawlerLinks("/a")))
	var mu sync.Mutex
	var seen []string
	wrap := func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			mu.Lock()
			seen = append(seen, r.URL.Path)
			mu.Unlock()
			return rt.RoundTrip(r)
		})
	}
	if _, _, err := crawlSite(t, crawlerCtx(t), []string{s.URL + "/"}, crawl.WithTransportWrapper(wrap)); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(sortedCopy(seen), " "); got != "/ /a /robots.txt" {
		t.Errorf("the wrapper saw %q, want %q", got, "/ /a /robots.txt")
	}
	_, res, err := crawlSite(t, crawlerCtx(t), []string{s.URL + "/"}, crawl.WithTransportWrapper(wrap), crawl.WithBlockPrivateNetworks(true))
	if err != nil {
		t.Fatal(err)
	}
	if r := res[s.URL+"/"]; !errors.Is(r.Err, crawl.ErrBlockedAddress) {
		t.Errorf("loopback root with the guard on, under a wrapper: Err %v, want ErrBlockedAddress", r.Err)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// Links left for WithMaxDepth are counted as refusals, as the other limits'
// are.
func TestEdgeDepthRefusals(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("/{$}", htmlPage(crawlerLinks("/a")))
	mux.Handle("/a", htmlPage(crawlerLinks("/b", "/c", "/")))
	s := newSite(t, mux)
	stats, _, err := crawlSite(t, crawlerCtx(t), []string{s.URL + "/"}, crawl.WithMaxDepth(1))
	if err != nil {
		t.Fatal(err)
	}
	if got := stats.Refused["max_depth"]; got != 3 || stats.Done != 2 {
		t.Errorf("Refused[max_depth] %d, Done %d; want 3 (the links of /a, seen or not), 2", got, stats.Done)
	}
}
