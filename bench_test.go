package crawl_test

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/asyncrawl/crawl"
	"github.com/asyncrawl/crawl/crawltest"
	"github.com/asyncrawl/crawl/warc"
)

const (
	benchPages = 10000 // pages of the benchmark site
	benchLinks = 20    // links per page
)

// benchSite is the benchmark's in-process site: benchPages pre-rendered
// pages under /p/N.html, each with benchLinks links in every form a page
// uses, and redirects /r/N -> /p/N.html. Page N links to page N+1, so every
// page is reachable from /p/0.html.
type benchSite struct {
	srv       *httptest.Server
	pages     [][]byte
	redirects map[int]bool // N with a /r/N link somewhere
}

func newBenchSite(b *testing.B) *benchSite {
	b.Helper()
	s := &benchSite{redirects: map[int]bool{}}
	// The bodies hold the server's address, so the listener comes first;
	// the server starts once they are written, which orders the writes
	// before every handler's reads.
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	host := s.srv.Listener.Addr().String()
	s.pages = make([][]byte, benchPages)
	for n := range s.pages {
		s.pages[n] = s.render(n, host)
	}
	s.srv.Start()
	b.Cleanup(s.srv.Close)
	return s
}

// render returns the body of page n, the same for every run: its links come
// from a generator seeded with n.
func (s *benchSite) render(n int, host string) []byte {
	rng := rand.New(rand.NewPCG(uint64(n), 0x5eed))
	var sb strings.Builder
	fmt.Fprintf(&sb, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Page %d</title>\n", n)
	sb.WriteString(`<link rel="stylesheet" href="/static/site.css"></head><body>` + "\n")
	fmt.Fprintf(&sb, "<h1>Page %d</h1>\n<ul>\n", n)
	fmt.Fprintf(&sb, "<li><a href=\"%d.html\">next</a></li>\n", (n+1)%benchPages)
	for i := 1; i < benchLinks; i++ {
		to := rng.IntN(benchPages)
		var href string
		switch rng.IntN(20) {
		case 0:
			href = "/r/" + strconv.Itoa(to)
			s.redirects[to] = true
		case 1, 2, 3, 4:
			href = strconv.Itoa(to) + ".html"
		case 5, 6, 7, 8, 9:
			href = "/p/" + strconv.Itoa(to) + ".html"
		case 10, 11, 12, 13, 14:
			href = "http://" + host + "/p/" + strconv.Itoa(to) + ".html"
		default:
			href = "/p/" + strconv.Itoa(to) + ".html#s" + strconv.Itoa(rng.IntN(10))
		}
		fmt.Fprintf(&sb, "<li><a class=\"item\" href=\"%s\">Item %d of page %d</a></li>\n", href, i, n)
	}
	sb.WriteString("</ul>\n<p>Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua.</p>\n</body></html>\n")
	return []byte(sb.String())
}

func (s *benchSite) serve(w http.ResponseWriter, r *http.Request) {
	if rest, ok := strings.CutPrefix(r.URL.Path, "/r/"); ok {
		http.Redirect(w, r, "/p/"+rest+".html", http.StatusMovedPermanently)
		return
	}
	name, ok := strings.CutPrefix(r.URL.Path, "/p/")
	if !ok {
		http.NotFound(w, r)
		return
	}
	n, err := strconv.Atoi(strings.TrimSuffix(name, ".html"))
	if err != nil || n < 0 || n >= benchPages {
		http.NotFound(w, r)
		return
	}
	h := w.Header()
	h["Content-Type"] = []string{"text/html; charset=utf-8"}
	h["Content-Length"] = []string{strconv.Itoa(len(s.pages[n]))}
	w.Write(s.pages[n])
}

// BenchmarkCrawl crawls the whole benchmark site with 16 workers per
// iteration. Its allocation figures count the in-process server's
// allocations as well as the crawler's.
func BenchmarkCrawl(b *testing.B) {
	s := newBenchSite(b)
	c, err := crawl.New(crawl.WithWorkers(16), crawl.WithHostWorkers(16))
	if err != nil {
		b.Fatal(err)
	}
	root := s.srv.URL + "/p/0.html"
	var ms0, ms1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms0)
	b.ResetTimer()
	for b.Loop() {
		stats, err := c.Run(context.Background(), root)
		if err != nil {
			b.Fatal(err)
		}
		if stats.HTML != benchPages || stats.Redirects != len(s.redirects) || stats.Failures != 0 || stats.Errors != 0 {
			b.Fatalf("got %d pages, %d redirects, %d failures, %d errors; want %d pages, %d redirects, none failed",
				stats.HTML, stats.Redirects, stats.Failures, stats.Errors, benchPages, len(s.redirects))
		}
	}
	b.StopTimer()
	runtime.ReadMemStats(&ms1)
	pages := float64(benchPages) * float64(b.N)
	b.ReportMetric(pages/b.Elapsed().Seconds(), "pages/s")
	b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/pages, "allocs/page")
	b.ReportMetric(float64(ms1.TotalAlloc-ms0.TotalAlloc)/pages, "B/page")
}

// benchLinksPage returns a realistic article page of about 6 KB with 25
// links: navigation, body text, a footer, with head resources, a script
// and a comment that hold no links.
func benchLinksPage() []byte {
	var sb strings.Builder
	sb.WriteString(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Understanding asynchronous crawlers &mdash; The Example Blog</title>
<link rel="stylesheet" href="/static/css/main.3f9a2c.css">
<link rel="icon" href="/favicon.ico">
<link rel="preload" href="/static/fonts/inter.woff2" as="font" crossorigin>
<link rel="canonical" href="https://blog.example.com/2024/05/async-crawlers">
<link rel="alternate" type="application/rss+xml" href="/feed.xml">
<script async src="https://analytics.example.net/tag.js"></script>
<script>
  window.dataLayer = window.dataLayer || [];
  function track(e) { dataLayer.push({event: e, html: '<a href="/not-a-link">'}); }
</script>
</head>
<body class="post">
<!-- <a href="/old-nav">old navigation</a> -->
<header><nav class="top">
<a href="/" class="logo"><img src="/static/logo.svg" alt="The Example Blog" width="120" height="32"></a>
<ul>
<li><a href="/archive/">Archive</a></li>
<li><a href="/tags/">Tags</a></li>
<li><a href="/about/">About</a></li>
<li><a href="/contact/">Contact</a></li>
</ul>
</nav></header>
<main><article>
<h1>Understanding asynchronous crawlers</h1>
<p class="meta">Posted on <time datetime="2024-05-14">14 May 2024</time> in <a href="/tags/go/">go</a>, <a href="/tags/networking/">networking</a></p>
`)
	paras := []string{
		`A web crawler spends nearly all of its time waiting: for DNS, for a connection, for the first byte, for the last. The classic answer is many threads; the asyncio answer is one thread and an event loop. In Go the scheduler gives us both at once, as the <a href="/2024/04/goroutines-are-cheap">previous post</a> explained.`,
		`Our crawler keeps a fixed pool of workers that pull URLs from a joinable queue, the design of <a href="https://aosabook.org/en/500L/a-web-crawler-with-asyncio-coroutines.html">the 500 Lines chapter</a>. Each worker fetches a page, extracts its links with a tokenizer rather than a regular expression, and puts the new ones back on the queue before marking its own task done.`,
		`Normalising URLs matters more than it seems. <code>HTTP://Example.COM:80/</code> and <code>http://example.com/#top</code> are the same page; without care the crawler fetches both. See <a href="/2023/11/url-normalisation#rules">the rules we apply</a> and <a href="https://www.rfc-editor.org/rfc/rfc3986#section-6">RFC 3986, section 6</a>.`,
		`Politeness is the other half. A crawler that opens sixteen connections to one small server is a denial of service with good intentions. We cap workers per host, honour <a href="/2024/02/retry-after">Retry-After</a>, and back off exponentially with jitter on 429 and 503 responses.`,
		`Benchmarks on a laptop show the tokenizer is rarely the bottleneck: at several hundred megabytes per second it outruns any network. The <a href="/2024/03/profiling-crawlers">profiling notes</a> have the flame graphs, and the <a href="https://github.com/asyncrawl/crawl">source is on GitHub</a>.`,
		`Questions and corrections are welcome on the <a href="/contact/">contact page</a> or by <a href="mailto:editor@example.com">email</a>; older posts are in the <a href="/archive/2023/">2023 archive</a>.`,
	}
	for _, p := range paras {
		sb.WriteString("<p>" + p + "</p>\n")
	}
	sb.WriteString(`<figure><img src="/static/img/queue.png" alt="Workers pulling from a queue"><figcaption>The worker pool.</figcaption></figure>
<aside class="related"><h2>Related</h2><ul>
<li><a href="/2024/04/goroutines-are-cheap">Goroutines are cheap</a></li>
<li><a href="/2024/01/html-tokenizers">HTML tokenizers compared</a></li>
<li><a href="/2023/09/joinable-queues">Joinable queues in Go</a></li>
</ul></aside>
</article></main>
<footer><p>&copy; 2024 The Example Blog. <a href="/privacy/">Privacy</a> &middot; <a href="/terms/">Terms</a> &middot; <a href="/feed.xml">RSS</a></p>
<p><a href="#top">Back to top</a></p></footer>
<script src="/static/js/main.8c1d.js"></script>
</body>
</html>
`)
	// Pad with text, not links, to a typical article size.
	body := sb.String()
	for len(body) < 6000 {
		body = strings.Replace(body, "</article>", "<p>Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua.</p>\n</article>", 1)
	}
	return []byte(body)
}

func BenchmarkExtractLinks(b *testing.B) {
	body := benchLinksPage()
	u, err := url.Parse("https://blog.example.com/2024/05/async-crawlers")
	if err != nil {
		b.Fatal(err)
	}
	p := &crawl.Page{URL: u, Status: 200, ContentType: "text/html", Body: body}
	links, err := crawl.ExtractLinks(context.Background(), p)
	if err != nil {
		b.Fatal(err)
	}
	if len(links) != 25 {
		b.Fatalf("page has %d links, want 25", len(links))
	}
	var n atomic.Int64 // keeps the result alive
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		links, _ := crawl.ExtractLinks(context.Background(), p)
		n.Add(int64(len(links)))
	}
}

// largePages and largeLinks shape BenchmarkCrawlLarge's site: page N links
// to N+1, so that every page is reachable from page 0, and to largeLinks-1
// pages spread over the site, so that the frontier soon holds most of it.
const (
	largePages = 100_000
	largeLinks = 5
)

// largePage serves page N of BenchmarkCrawlLarge's site, made on the fly
// so that the site's memory is not the crawler's.
func largePage(w http.ResponseWriter, r *http.Request) {
	n, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/p/"))
	if err != nil || n < 0 || n >= largePages {
		http.NotFound(w, r)
		return
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Page %d</title></head><body>\n<h1>Page %d</h1>\n<ul>\n", n, n)
	fmt.Fprintf(&sb, "<li><a href=\"/p/%d\">next</a></li>\n", (n+1)%largePages)
	for k := 1; k < largeLinks; k++ {
		to := (n*7919 + k*104729) % largePages
		fmt.Fprintf(&sb, "<li><a href=\"/p/%d\">page %d</a></li>\n", to, to)
	}
	sb.WriteString("</ul>\n<p>Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua.</p>\n</body></html>\n")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(sb.Len()))
	io.WriteString(w, sb.String())
}

// heapInUse returns the bytes of heap spans in use, MemStats.HeapInuse,
// read through runtime/metrics, which does not stop the world.
func heapInUse(samples []metrics.Sample) uint64 {
	metrics.Read(samples)
	var n uint64
	for _, s := range samples {
		n += s.Value.Uint64()
	}
	return n
}

// BenchmarkCrawlLarge crawls a crawltest site of 100,000 pages with 16
// workers and reports the peak heap in use per page, sampled every 10ms
// during the crawl less the heap in use before it: the memory a crawl's
// seen set, queue and Results in flight take per URL, garbage not yet
// collected included (with the default GOGC, up to about twice the live
// heap). The in-process site's allocations count too, though it records
// no request.
func BenchmarkCrawlLarge(b *testing.B) {
	site := crawltest.Start(b)
	site.Record(false)
	site.Handle("/p/", http.HandlerFunc(largePage))
	const workers = 16
	c, err := crawl.New(crawl.WithWorkers(workers), crawl.WithHostWorkers(workers))
	if err != nil {
		b.Fatal(err)
	}
	samples := []metrics.Sample{
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/heap/unused:bytes"},
	}
	var peak uint64 // the largest growth of any iteration
	for b.Loop() {
		runtime.GC()
		base := heapInUse(samples)
		stop := make(chan struct{})
		sampled := make(chan uint64)
		go func() {
			var top uint64
			tick := time.NewTicker(10 * time.Millisecond)
			defer tick.Stop()
			for {
				top = max(top, heapInUse(samples))
				select {
				case <-stop:
					sampled <- top
					return
				case <-tick.C:
				}
			}
		}()
		stats, err := c.Run(context.Background(), site.URL("/p/0"))
		close(stop)
		if top := <-sampled; top > base {
			peak = max(peak, top-base)
		}
		if err != nil {
			b.Fatal(err)
		}
		if stats.HTML != largePages || stats.Failures != 0 {
			b.Fatalf("got %d pages, %d failures; want %d pages, none failed", stats.HTML, stats.Failures, largePages)
		}
	}
	b.ReportMetric(float64(peak)/largePages, "heap-B/page")
	b.ReportMetric(float64(largePages)*float64(b.N)/b.Elapsed().Seconds(), "pages/s")
}

// BenchmarkCrawlWARC crawls the benchmark site as BenchmarkCrawl does, once
// plain and once recording every exchange into a .warc.gz (with its CDXJ
// index) through crawl.WithTransportWrapper, in one run, so that their
// pages/s compare: what archiving costs.
func BenchmarkCrawlWARC(b *testing.B) {
	s := newBenchSite(b)
	root := s.srv.URL + "/p/0.html"
	for _, archive := range []bool{false, true} {
		name := "plain"
		if archive {
			name = "warc"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				opts := []crawl.Option{crawl.WithWorkers(16), crawl.WithHostWorkers(16)}
				var w *warc.Writer
				if archive {
					dir := b.TempDir()
					var err error
					w, err = warc.NewWriter(warc.Options{File: filepath.Join(dir, "bench.warc.gz"), Index: filepath.Join(dir, "bench.cdxj")})
					if err != nil {
						b.Fatal(err)
					}
					opts = append(opts, crawl.WithTransportWrapper(w.Transport))
				}
				c, err := crawl.New(opts...)
				if err != nil {
					b.Fatal(err)
				}
				stats, err := c.Run(context.Background(), root)
				if err != nil || stats.HTML != benchPages {
					b.Fatalf("got %d pages, err %v; want %d", stats.HTML, err, benchPages)
				}
				if w != nil {
					if err := w.Close(); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(benchPages)*float64(b.N)/b.Elapsed().Seconds(), "pages/s")
		})
	}
}
