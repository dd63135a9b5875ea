package crawl_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/asyncrawl/crawl"
	"github.com/asyncrawl/crawl/boltfrontier"
	"github.com/asyncrawl/crawl/crawltest"
)

// scaleURL returns the URL of item i on host h, of a typical length (52
// bytes for h < 10,000 and i < 10,000,000).
func scaleURL(h, i int) string {
	return "http://h" + strconv.Itoa(h) + ".test/articles/item-" + strconv.Itoa(i) + "/index.html"
}

// BenchmarkFrontier measures one URL's way through a MemoryFrontier: an Ack
// that pushes one new URL, and the Take of another, with a queue of 100,000
// URLs spread over the hosts, at 1 to 10,000 hosts. The time per URL must
// not grow with the number of hosts: a Take does not scan them. One of the
// allocations per URL is the benchmark's own (the new URL's string).
func BenchmarkFrontier(b *testing.B) {
	for _, hosts := range []int{1, 10, 1000, 10000} {
		b.Run("hosts="+strconv.Itoa(hosts), func(b *testing.B) {
			ctx := context.Background()
			f := crawl.NewMemoryFrontier()
			defer f.Close()
			if err := f.Start(ctx, crawl.Policy{HostWorkers: 1}); err != nil {
				b.Fatal(err)
			}
			const queued = 100_000
			next := 0
			req := func() crawl.Request {
				next++
				return crawl.Request{URL: scaleURL(next%hosts, next), Depth: 1, Redirects: 10, Referrer: "http://h0.test/"}
			}
			for range queued {
				if _, err := f.Push(ctx, req()); err != nil {
					b.Fatal(err)
				}
			}
			links := make([]crawl.Request, 1)
			b.ReportAllocs()
			for b.Loop() {
				l, err := f.Take(ctx)
				if err != nil {
					b.Fatal(err)
				}
				links[0] = req()
				if n, err := f.Ack(ctx, l, crawl.Outcome{Links: links}); n != 1 || err != nil {
					b.Fatalf("ack: %d new, %v; want 1, nil", n, err)
				}
			}
		})
	}
}

// liveMemory returns the process's resident memory after a collection
// that gives the heap's free pages back to the system: the live heap and
// memory mapped outside it, such as MemoryFrontier's large tables.
func liveMemory() uint64 {
	runtime.GC()
	debug.FreeOSMemory()
	return procStatus("VmRSS")
}

// BenchmarkFrontierMemory measures the live heap a MemoryFrontier holds per
// URL, over 1,000,000 URLs on 1,000 hosts, pushed 20 at a time with one
// referrer and host, as a page's links are: "queued-B/URL" with every
// URL queued (the seen set and the queue), "seen-B/URL" once every URL was
// taken and acked (the seen set alone, and the hosts). The bytes are the
// resident memory after a collection that gives the free heap back to the
// system (the live heap, and the memory the frontier maps outside it),
// which does not depend on the machine's load; the time is that of the
// pushes, takes and acks.
func BenchmarkFrontierMemory(b *testing.B) {
	const n, hosts, perPage = 1_000_000, 1000, 20
	ctx := context.Background()
	var queued, seen float64
	for b.Loop() {
		base := liveMemory()
		f := crawl.NewMemoryFrontier()
		if err := f.Start(ctx, crawl.Policy{HostWorkers: 1 << 20}); err != nil {
			b.Fatal(err)
		}
		batch := make([]crawl.Request, 0, perPage)
		var ref string
		for i := range n {
			if i%perPage == 0 {
				ref = scaleURL(i/perPage%hosts, i) + "?from"
				if _, err := f.Push(ctx, batch...); err != nil {
					b.Fatal(err)
				}
				batch = batch[:0]
			}
			batch = append(batch, crawl.Request{URL: scaleURL(i/perPage%hosts, i), Depth: 3, Redirects: 10, Referrer: ref})
		}
		if _, err := f.Push(ctx, batch...); err != nil {
			b.Fatal(err)
		}
		batch, ref = nil, ""
		queued = float64(liveMemory()-base) / n
		for range n {
			l, err := f.Take(ctx)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := f.Ack(ctx, l, crawl.Outcome{}); err != nil {
				b.Fatal(err)
			}
		}
		seen = float64(liveMemory()-base) / n
		if c, _ := f.Counts(ctx); c.Done != n || c.Queued != 0 {
			b.Fatalf("got %+v, want %d done, none queued", c, n)
		}
		runtime.KeepAlive(f)
		f.Close()
	}
	b.ReportMetric(queued, "queued-B/URL")
	b.ReportMetric(seen, "seen-B/URL")
}

// scaleSite serves a tree of pages from memory through its RoundTrip, with
// no socket: page n of the one host links to pages n*links+1 to
// n*links+links, each URL seen once, so that a crawl with a page budget
// sees links times more URLs than it fetches and leaves most of them
// queued. Robots.txt is a 404.
type scaleSite struct {
	links int
}

func (s scaleSite) RoundTrip(r *http.Request) (*http.Response, error) {
	resp := &http.Response{Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Request: r, Header: http.Header{}}
	name, ok := strings.CutPrefix(r.URL.Path, "/articles/item-")
	n, err := strconv.Atoi(strings.TrimSuffix(name, ".html"))
	if !ok || err != nil {
		resp.StatusCode, resp.Status = 404, "404 Not Found"
		resp.Body = http.NoBody
		return resp, nil
	}
	body := make([]byte, 0, 200+s.links*60)
	body = append(body, "<!DOCTYPE html><html><head><title>Item "...)
	body = strconv.AppendInt(body, int64(n), 10)
	body = append(body, "</title></head><body><ul>\n"...)
	for k := 1; k <= s.links; k++ {
		body = append(body, `<li><a href="/articles/item-`...)
		body = strconv.AppendInt(body, int64(n*s.links+k), 10)
		body = append(body, `.html">item</a></li>`+"\n"...)
	}
	body = append(body, "</ul></body></html>\n"...)
	resp.StatusCode, resp.Status = 200, "200 OK"
	resp.Header.Set("Content-Type", "text/html; charset=utf-8")
	resp.ContentLength = int64(len(body))
	resp.Body = io.NopCloser(bytes.NewReader(body))
	return resp, nil
}

// procStatus returns a field of /proc/self/status in bytes (VmHWM, VmRSS),
// or 0 where there is none.
func procStatus(field string) uint64 {
	fh, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// BenchmarkCrawlSeen crawls scaleSite (50 links a page, 16 workers, no
// socket) with a page budget that makes the crawl see CRAWL_SCALE_URLS URLs
// (1,000,000 unless set), nearly all of them still queued when the budget
// is spent: the frontier at its largest for that many URLs. It reports the
// process's peak RSS (VmHWM) and that peak less the RSS before the crawl,
// per URL seen; the peak is the process's, so run this benchmark alone:
//
//	go test -run '^$' -bench 'CrawlSeen$' -benchtime 1x .
//
// With CRAWL_SCALE_FRONTIER=bolt the frontier is a boltfrontier file in a
// temporary directory (the queue on disk), whose mapped pages the RSS
// counts when they are resident.
func BenchmarkCrawlSeen(b *testing.B) {
	urls := 1_000_000
	if s := os.Getenv("CRAWL_SCALE_URLS"); s != "" {
		var err error
		if urls, err = strconv.Atoi(s); err != nil {
			b.Fatalf("CRAWL_SCALE_URLS=%q: %v", s, err)
		}
	}
	bolt := false
	switch fr := os.Getenv("CRAWL_SCALE_FRONTIER"); fr {
	case "", "memory":
	case "bolt":
		bolt = true
	default:
		b.Fatalf("CRAWL_SCALE_FRONTIER=%q: want memory or bolt", fr)
	}
	const links, workers = 50, 16
	pages := urls / links
	for b.Loop() {
		runtime.GC()
		base := procStatus("VmRSS")
		opts := []crawl.Option{crawl.WithWorkers(workers), crawl.WithHostWorkers(workers), crawl.WithMaxPages(pages),
			crawl.WithHTTPClient(&http.Client{Transport: scaleSite{links: links}})}
		if bolt {
			f, err := boltfrontier.Open(filepath.Join(b.TempDir(), "frontier.db"), nil)
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			opts = append(opts, crawl.WithFrontier(f))
		}
		c, err := crawl.New(opts...)
		if err != nil {
			b.Fatal(err)
		}
		stats, err := c.Run(context.Background(), "http://www.example.test/articles/item-0.html")
		if err != nil {
			b.Fatal(err)
		}
		if stats.HTML != pages {
			b.Fatalf("got %d pages, want %d", stats.HTML, pages)
		}
		seen := float64(stats.HTML*links + 1)
		peak := procStatus("VmHWM")
		if bolt {
			// The file's pages the process has mapped count in its RSS
			// too; they are the kernel's page cache, given up under
			// memory pressure, unlike the anonymous memory.
			b.ReportMetric(float64(procStatus("RssFile"))/1e6, "end-RssFile-MB")
			b.ReportMetric(float64(procStatus("RssAnon"))/1e6, "end-RssAnon-MB")
		}
		b.ReportMetric(float64(peak)/1e6, "peak-RSS-MB")
		b.ReportMetric(float64(peak-base)/seen, "RSS-B/URL")
		b.ReportMetric(seen, "URLs")
		b.ReportMetric(float64(stats.HTML)/b.Elapsed().Seconds(), "pages/s")
	}
}

// hostsPage serves page n of host h of BenchmarkManyHosts's site: it links
// to the next page of its host, to page 0 of the next host (so that every
// page is reachable from any root), and to three pages of other hosts.
func hostsPage(hosts, perHost int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		name, _, _ := strings.Cut(r.Host, ".")
		h, err1 := strconv.Atoi(strings.TrimPrefix(name, "h"))
		n, err2 := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/p/"))
		if err1 != nil || err2 != nil || h < 0 || h >= hosts || n < 0 || n >= perHost {
			http.NotFound(w, r)
			return
		}
		var sb strings.Builder
		fmt.Fprintf(&sb, "<!DOCTYPE html>\n<html><head><title>Host %d page %d</title></head><body><ul>\n", h, n)
		fmt.Fprintf(&sb, "<li><a href=\"/p/%d\">next</a></li>\n", (n+1)%perHost)
		fmt.Fprintf(&sb, "<li><a href=\"http://h%d.test/p/0\">next host</a></li>\n", (h+1)%hosts)
		for k := 1; k <= 3; k++ {
			to := (h*7919 + n*104729 + k*15485863) % hosts
			fmt.Fprintf(&sb, "<li><a href=\"http://h%d.test/p/%d\">elsewhere</a></li>\n", to, (n+k)%perHost)
		}
		sb.WriteString("</ul></body></html>\n")
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Length", strconv.Itoa(sb.Len()))
		io.WriteString(w, sb.String())
	}
}

// BenchmarkManyHosts crawls a crawltest site of 10, 1,000 and 10,000 hosts
// (h0.test, h1.test, ..., all served on loopback by one server through
// crawltest's dialer) with 16 workers, 4 per host, robots.txt obeyed, all
// hosts' first pages as roots, and cross-host links. A host has 20 pages,
// but at 10 hosts, which have 2,000 each. It reports pages/s, requests/s
// (robots.txt included), and the peak heap in use and resident memory
// (memory mapped outside the heap included) during the crawl less those
// before it, sampled every 10ms: heap-B/host is the heap's per host.
func BenchmarkManyHosts(b *testing.B) {
	for _, hosts := range []int{10, 1000, 10000} {
		b.Run("hosts="+strconv.Itoa(hosts), func(b *testing.B) {
			perHost := max(20, 20000/hosts)
			site := crawltest.Start(b)
			site.Record(false)
			site.Handle("/p/", hostsPage(hosts, perHost))
			const workers = 16
			roots := make([]string, hosts)
			for h := range roots {
				roots[h] = "http://h" + strconv.Itoa(h) + ".test/p/0"
			}
			samples := []metrics.Sample{
				{Name: "/memory/classes/heap/objects:bytes"},
				{Name: "/memory/classes/heap/unused:bytes"},
			}
			var peak, peakRSS uint64
			var reqs int
			for b.Loop() {
				c, err := crawl.New(crawl.WithWorkers(workers), crawl.WithHostWorkers(4),
					crawl.WithTransportWrapper(func(rt http.RoundTripper) http.RoundTripper {
						// The crawler's own transport, dialing the site
						// whatever the host, and keeping 64 idle
						// connections in all: with no limit (the
						// default transport's) the 10,000 hosts'
						// connections outrun the open files allowed.
						if t, ok := rt.(*http.Transport); ok {
							t.DialContext = site.DialContext
							t.MaxIdleConns = 64
						}
						return rt
					}))
				if err != nil {
					b.Fatal(err)
				}
				runtime.GC()
				base := heapInUse(samples)
				rssBase := procStatus("VmRSS")
				stop := make(chan struct{})
				sampled := make(chan [2]uint64)
				go func() {
					var top, rss uint64
					tick := time.NewTicker(10 * time.Millisecond)
					defer tick.Stop()
					for {
						top = max(top, heapInUse(samples))
						rss = max(rss, procStatus("VmRSS"))
						select {
						case <-stop:
							sampled <- [2]uint64{top, rss}
							return
						case <-tick.C:
						}
					}
				}()
				stats, err := c.Run(context.Background(), roots...)
				close(stop)
				top := <-sampled
				if top[0] > base {
					peak = max(peak, top[0]-base)
				}
				if top[1] > rssBase {
					peakRSS = max(peakRSS, top[1]-rssBase)
				}
				if err != nil {
					b.Fatal(err)
				}
				if stats.HTML != hosts*perHost || stats.Failures != 0 {
					b.Fatalf("got %d pages, %d failures; want %d pages, none failed", stats.HTML, stats.Failures, hosts*perHost)
				}
				reqs += stats.HTML + hosts // and a robots.txt per host
			}
			b.ReportMetric(float64(hosts*perHost)*float64(b.N)/b.Elapsed().Seconds(), "pages/s")
			b.ReportMetric(float64(reqs)/b.Elapsed().Seconds(), "reqs/s")
			b.ReportMetric(float64(peak)/float64(hosts), "heap-B/host")
			b.ReportMetric(float64(peak)/1e6, "heap-MB")
			b.ReportMetric(float64(peakRSS)/1e6, "RSS-MB")
		})
	}
}
