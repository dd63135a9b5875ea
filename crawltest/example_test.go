package crawltest_test

import (
	"bufio"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/asyncrawl/crawl/crawltest"
)

// fetch gets raw without following redirects and prints the status line,
// the named headers and the body's first line.
func fetch(client *http.Client, raw string, headers ...string) {
	resp, err := client.Transport.RoundTrip(mustRequest(raw))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	fmt.Println(resp.Status)
	for _, h := range headers {
		fmt.Printf("%s: %q\n", h, resp.Header.Get(h))
	}
	if line, _ := bufio.NewReader(resp.Body).ReadString('\n'); line != "" {
		fmt.Printf("%q\n", line)
	}
}

// hrefs returns the links of an HTML body that crawltest wrote.
func hrefs(body string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`<a href="([^"]*)"`).FindAllStringSubmatch(body, -1) {
		out = append(out, m[1])
	}
	return out
}

// Crawl a small site offline, as a crawler's test would, and check what
// the site was sent.
func Example() {
	site := crawltest.New()
	defer site.Close()
	site.Robots("User-agent: *\nDisallow: /private/\n")
	site.Page("/", "/about", "/blog/", "http://www.example.com/about#team")
	site.Page("/about", "/")
	site.Page("/blog/", "/old-post")
	site.Redirect("/old-post", http.StatusMovedPermanently, "/blog/")

	// A toy crawler: breadth first, redirects followed by the client.
	client := site.Client()
	getAll(client, "http://www.example.com/robots.txt")
	seen := map[string]bool{"http://www.example.com/": true}
	queue := []string{"http://www.example.com/"}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		resp, err := client.Get(u)
		if err != nil {
			fmt.Println(err)
			continue
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		for _, h := range hrefs(string(body)) {
			next, _ := resp.Request.URL.Parse(h)
			next.Fragment = ""
			if !seen[next.String()] {
				seen[next.String()] = true
				queue = append(queue, next.String())
			}
		}
	}
	fmt.Println(site.Counts())
	fmt.Println("pages fetched:", site.TotalExceptRobots())
	// Output:
	// map[/:1 /about:1 /blog/:2 /old-post:1 /robots.txt:1]
	// pages fetched: 5
}

func ExampleNew() {
	site := crawltest.New()
	defer site.Close()
	site.Page("/", "/a")
	resp, err := http.Get(site.URL("/"))
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()
	fmt.Println(resp.Status, resp.Header.Get("Content-Type"))
	// Output: 200 OK text/html; charset=utf-8
}

// Start is for tests: the Site closes when the test ends.
func ExampleStart() {
	testCrawl := func(t *testing.T) {
		site := crawltest.Start(t)
		site.Page("/", "/a")
		site.Page("/a")
		// ... crawl http://www.example.com/ with site.Client() ...
		if got := site.Count("/a"); got != 1 {
			t.Errorf("/a fetched %d times, want 1", got)
		}
	}
	_ = testCrawl
}

func ExampleSite_Close() {
	site := crawltest.New()
	site.Handle("/stall", crawltest.Stall())
	client := site.Client()
	done := make(chan error)
	go func() {
		resp, err := client.Get(site.URL("/stall"))
		if err == nil {
			_, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		done <- err
	}()
	for site.InFlight() == 0 {
		time.Sleep(time.Millisecond)
	}
	site.Close() // ends the stalled request: the client sees an error
	fmt.Println(<-done != nil)
	// Output: true
}

func ExampleSite_Addr() {
	site := crawltest.New()
	defer site.Close()
	host, _, _ := strings.Cut(site.Addr(), ":")
	fmt.Println(host)
	// Output: 127.0.0.1
}

func ExampleSite_URL() {
	site := crawltest.New()
	defer site.Close()
	site.Page("/docs/", "intro")
	u, _ := url.Parse(site.URL("/docs/?lang=en"))
	fmt.Println(u.RequestURI())
	fetch(site.Client(), u.String())
	// Output:
	// /docs/?lang=en
	// 200 OK
	// "<!DOCTYPE html>\n"
}

func ExampleSite_DialContext() {
	site := crawltest.New()
	defer site.Close()
	site.Page("/", "/a")
	// A transport of the test's own: every host name reaches the Site.
	tr := &http.Transport{DialContext: site.DialContext}
	defer tr.CloseIdleConnections()
	fetch(&http.Client{Transport: tr}, "http://www.example.org:8080/")
	fmt.Println(site.Requests()[0].Host)
	// Output:
	// 200 OK
	// "<!DOCTYPE html>\n"
	// www.example.org:8080
}

func ExampleSite_Client() {
	site := crawltest.New()
	defer site.Close()
	site.Page("/", "/a")
	client := site.Client()
	for _, u := range []string{"http://www.example.com/", "https://www.example.com/"} {
		resp, err := client.Get(u)
		if err != nil {
			fmt.Println("error:", u)
			continue
		}
		resp.Body.Close()
		fmt.Println(resp.Status, u)
	}
	// Output:
	// 200 OK http://www.example.com/
	// error: https://www.example.com/
}

func ExampleSite_Host() {
	site := crawltest.New()
	defer site.Close()
	site.Page("/", "/shared")                   // every host
	site.Host("a.example").Page("/", "/a-only") // a.example first
	client := site.Client()
	for _, u := range []string{"http://a.example/", "http://b.example/"} {
		resp, _ := client.Get(u)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Println(u, hrefs(string(body)))
	}
	// Output:
	// http://a.example/ [/a-only]
	// http://b.example/ [/shared]
}

func ExampleSite_Latency() {
	site := crawltest.New()
	defer site.Close()
	site.Page("/")
	site.Latency(time.Hour)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, site.URL("/"), nil)
	_, err := site.Client().Do(req)
	fmt.Println(errors.Is(err, context.DeadlineExceeded))
	// Output: true
}

func ExampleSite_Page() {
	site := crawltest.New()
	defer site.Close()
	site.Page("/", "/a", "b.html", "http://other.example/?x=1&y=2")
	resp, _ := http.Get(site.URL("/"))
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Print(string(body))
	// Output:
	// <!DOCTYPE html>
	// <html><head><meta charset="utf-8"><title>/</title></head><body>
	// <a href="/a">/a</a>
	// <a href="b.html">b.html</a>
	// <a href="http://other.example/?x=1&amp;y=2">http://other.example/?x=1&amp;y=2</a>
	// </body></html>
}

func ExampleSite_Body() {
	site := crawltest.New()
	defer site.Close()
	// "café" in windows-1252: é is the byte 0xe9.
	site.Body("/cafe", "text/html; charset=windows-1252", "<p>caf\xe9</p>")
	site.Body("/sniff", "", "<html>no Content-Type</html>")
	resp, _ := http.Get(site.URL("/cafe"))
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Printf("%s %q\n", resp.Header.Get("Content-Type"), body)
	fetch(site.Client(), site.URL("/sniff"), "Content-Type")
	// Output:
	// text/html; charset=windows-1252 "<p>caf\xe9</p>"
	// 200 OK
	// Content-Type: ""
	// "<html>no Content-Type</html>"
}

func ExampleSite_Redirect() {
	site := crawltest.New()
	defer site.Close()
	site.Redirect("/old", http.StatusMovedPermanently, "/new")
	site.Redirect("/nowhere", http.StatusFound, "")                   // no Location at all
	site.Redirect("/broken", http.StatusFound, crawltest.BadLocation) // a Location that does not parse
	client := site.Client()
	for _, p := range []string{"/old", "/nowhere", "/broken"} {
		fetch(client, site.URL(p), "Location")
	}
	_, err := client.Get(site.URL("/broken"))
	fmt.Println(err != nil)
	// Output:
	// 301 Moved Permanently
	// Location: "/new"
	// 302 Found
	// Location: ""
	// 302 Found
	// Location: "http://[::1/broken"
	// true
}

func ExampleSite_Handle() {
	site := crawltest.New()
	defer site.Close()
	site.Handle("/echo/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "you asked for %s on %s\n", r.URL.Path, r.Host)
	}))
	fetch(site.Client(), "http://www.example.com/echo/x/y")
	// Output:
	// 200 OK
	// "you asked for /echo/x/y on www.example.com\n"
}

func ExampleSite_Robots() {
	site := crawltest.New()
	defer site.Close()
	site.Robots("User-agent: *\nDisallow: /private/\n")
	fetch(site.Client(), "http://www.example.com/robots.txt", "Content-Type")
	// Output:
	// 200 OK
	// Content-Type: "text/plain; charset=utf-8"
	// "User-agent: *\n"
}

// getAll is what the examples of the recording methods fetch with.
func getAll(client *http.Client, urls ...string) {
	for _, u := range urls {
		if resp, err := client.Get(u); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}
}

func ExampleSite_Requests() {
	site := crawltest.New()
	defer site.Close()
	site.Page("/")
	req, _ := http.NewRequest(http.MethodGet, "http://www.example.com/?q=1", nil)
	req.Header.Set("User-Agent", "mybot/1.0")
	if resp, err := site.Client().Do(req); err == nil {
		resp.Body.Close()
	}
	for _, r := range site.Requests() {
		fmt.Println(r.Method, r.Host, r.URI, r.Header.Get("User-Agent"), !r.Time.IsZero())
	}
	// Output: GET www.example.com /?q=1 mybot/1.0 true
}

func ExampleRequest() {
	site := crawltest.New()
	defer site.Close()
	getAll(site.Client(), "http://a.example/x", "http://b.example:8080/y?z")
	for _, r := range site.Requests() {
		fmt.Printf("%s %s%s\n", r.Method, r.Host, r.URI)
	}
	// Output:
	// GET a.example/x
	// GET b.example:8080/y?z
}

func ExampleSite_Count() {
	site := crawltest.New()
	defer site.Close()
	site.Page("/a")
	getAll(site.Client(), site.URL("/a"), site.URL("/a"), site.URL("/a?x=1"))
	fmt.Println(site.Count("/a"), site.Count("/a?x=1"), site.Count("/b"))
	// Output: 2 1 0
}

func ExampleSite_Counts() {
	site := crawltest.New()
	defer site.Close()
	getAll(site.Client(), "http://a.example/", "http://b.example/", "http://a.example/x")
	fmt.Println(site.Counts())
	// Output: map[/:2 /x:1]
}

func ExampleSite_Total() {
	site := crawltest.New()
	defer site.Close()
	getAll(site.Client(), site.URL("/robots.txt"), site.URL("/"), site.URL("/missing"))
	fmt.Println(site.Total())
	// Output: 3
}

func ExampleSite_TotalExceptRobots() {
	site := crawltest.New()
	defer site.Close()
	getAll(site.Client(), "http://a.example/robots.txt", "http://b.example/robots.txt", "http://a.example/")
	fmt.Println(site.TotalExceptRobots())
	// Output: 1
}

// Measure how many requests a crawler runs at once: hold them open with a
// latency until as many as expected are in flight.
func ExampleSite_Peak() {
	site := crawltest.New()
	defer site.Close()
	site.Page("/slow").Latency(time.Hour)
	client := site.Client()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, site.URL("/slow"), nil)
			if resp, err := client.Do(req); err == nil {
				resp.Body.Close()
			}
		})
	}
	for site.InFlight() < 3 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	wg.Wait()
	fmt.Println(site.Peak())
	// Output: 3
}

func ExampleSite_InFlight() {
	site := crawltest.New()
	defer site.Close()
	site.Handle("/held", crawltest.NoResponse())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, site.URL("/held"), nil)
		if resp, err := site.Client().Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	for site.InFlight() == 0 {
		time.Sleep(time.Millisecond)
	}
	fmt.Println(site.InFlight())
	cancel() // the client gives up; the handler ends
	<-done
	for site.InFlight() != 0 {
		time.Sleep(time.Millisecond)
	}
	fmt.Println(site.InFlight())
	// Output:
	// 1
	// 0
}

func ExampleSite_Record() {
	site := crawltest.New()
	defer site.Close()
	site.Record(false) // a benchmark keeps the log out of its memory
	getAll(site.Client(), site.URL("/"), site.URL("/"))
	fmt.Println(len(site.Requests()), site.Count("/"), site.Total())
	// Output: 0 0 2
}

func ExampleSite_Reset() {
	site := crawltest.New()
	defer site.Close()
	client := site.Client()
	getAll(client, site.URL("/"))
	site.Reset() // forget the warm-up
	getAll(client, site.URL("/a"))
	fmt.Println(site.Counts(), site.Total())
	// Output: map[/a:1] 1
}

func ExampleHost() {
	site := crawltest.New()
	defer site.Close()
	a := site.Host("a.example")
	a.Robots("User-agent: *\nDisallow: /\n")
	a.Page("/", "/x")
	a.Body("/x", "text/plain", "x")
	a.Redirect("/old", http.StatusFound, "/")
	a.Handle("/gone", crawltest.Status(http.StatusGone))
	client := site.Client()
	for _, p := range []string{"/robots.txt", "/", "/x", "/old", "/gone"} {
		resp, _ := client.Transport.RoundTrip(mustRequest("http://a.example" + p))
		resp.Body.Close()
		fmt.Println(p, resp.StatusCode)
	}
	// b.example has none of them.
	resp, _ := client.Get("http://b.example/x")
	resp.Body.Close()
	fmt.Println("b.example/x", resp.StatusCode)
	// Output:
	// /robots.txt 200
	// / 200
	// /x 200
	// /old 302
	// /gone 410
	// b.example/x 404
}

func ExampleHost_Name() {
	site := crawltest.New()
	defer site.Close()
	fmt.Println(site.Host("WWW.Example.COM:8080").Name())
	// Output: www.example.com
}

func ExampleHost_URL() {
	site := crawltest.New()
	defer site.Close()
	a := site.Host("a.example")
	a.Page("/", "/x")
	fmt.Println(a.URL("/"))
	fetch(site.Client(), a.URL("/"))
	// Output:
	// http://a.example/
	// 200 OK
	// "<!DOCTYPE html>\n"
}

func ExampleHost_Page() {
	site := crawltest.New()
	defer site.Close()
	site.Host("a.example").Page("/", "http://b.example/")
	site.Host("b.example").Page("/", "http://a.example/")
	resp, _ := site.Client().Get("http://a.example/")
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(hrefs(string(body)))
	// Output: [http://b.example/]
}

func ExampleHost_Body() {
	site := crawltest.New()
	defer site.Close()
	// "日本" in Shift_JIS.
	site.Host("jp.example").Body("/", "text/html; charset=Shift_JIS", "\x93\xfa\x96\x7b")
	fetch(site.Client(), "http://jp.example/", "Content-Type")
	// Output:
	// 200 OK
	// Content-Type: "text/html; charset=Shift_JIS"
	// "\x93\xfa\x96{"
}

func ExampleHost_Redirect() {
	site := crawltest.New()
	defer site.Close()
	site.Host("example.com").Redirect("/", http.StatusMovedPermanently, "http://www.example.com/")
	site.Host("www.example.com").Page("/")
	resp, _ := site.Client().Get("http://example.com/")
	resp.Body.Close()
	fmt.Println(resp.Request.URL, resp.Status)
	// Output: http://www.example.com/ 200 OK
}

func ExampleHost_Handle() {
	site := crawltest.New()
	defer site.Close()
	site.Host("trap.example").Handle("/calendar/", crawltest.Calendar())
	fetch(site.Client(), "http://trap.example/calendar/")
	fetch(site.Client(), "http://other.example/calendar/")
	// Output:
	// 200 OK
	// "<!DOCTYPE html>\n"
	// 404 Not Found
	// "404 page not found\n"
}

func ExampleHost_Robots() {
	site := crawltest.New()
	defer site.Close()
	site.Robots("User-agent: *\nDisallow:\n")
	site.Host("private.example").Robots("User-agent: *\nDisallow: /\n")
	for _, h := range []string{"public.example", "private.example"} {
		resp, _ := site.Client().Get("http://" + h + "/robots.txt")
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Printf("%s %q\n", h, body)
	}
	// Output:
	// public.example "User-agent: *\nDisallow:\n"
	// private.example "User-agent: *\nDisallow: /\n"
}

func ExampleHost_Latency() {
	site := crawltest.New()
	defer site.Close()
	site.Page("/")
	site.Host("slow.example").Latency(time.Hour)
	client := site.Client()
	for _, h := range []string{"fast.example", "slow.example"} {
		ctx, cancel := context.WithCancel(context.Background())
		if h == "slow.example" {
			time.AfterFunc(20*time.Millisecond, cancel)
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+h+"/", nil)
		resp, err := client.Do(req)
		cancel()
		if err != nil {
			fmt.Println(h, errors.Is(err, context.Canceled))
			continue
		}
		resp.Body.Close()
		fmt.Println(h, resp.Status)
	}
	// Output:
	// fast.example 200 OK
	// slow.example true
}

// Check a per-host limit: two hosts, each request held until four are in
// flight, then the peak of each host.
func ExampleHost_Peak() {
	site := crawltest.New()
	defer site.Close()
	site.Page("/").Latency(time.Hour)
	client := site.Client()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, h := range []string{"a.example", "a.example", "a.example", "b.example"} {
		wg.Go(func() {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+h+"/", nil)
			if resp, err := client.Do(req); err == nil {
				resp.Body.Close()
			}
		})
	}
	for site.InFlight() < 4 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	wg.Wait()
	fmt.Println(site.Host("a.example").Peak(), site.Host("b.example").Peak(), site.Peak())
	// Output: 3 1 4
}

func ExampleHost_Requests() {
	site := crawltest.New()
	defer site.Close()
	getAll(site.Client(), "http://a.example/1", "http://b.example/2", "http://A.example:81/3")
	for _, r := range site.Host("a.example").Requests() {
		fmt.Println(r.Host, r.URI)
	}
	// Output:
	// a.example /1
	// A.example:81 /3
}

func ExampleHost_Count() {
	site := crawltest.New()
	defer site.Close()
	getAll(site.Client(), "http://a.example/", "http://b.example/", "http://a.example/")
	fmt.Println(site.Host("a.example").Count("/"), site.Host("b.example").Count("/"))
	// Output: 2 1
}

func ExampleRoute() {
	site := crawltest.New()
	defer site.Close()
	site.Page("/old", "/").
		Status(http.StatusGone).
		Header("X-Robots-Tag", "noindex").
		Latency(time.Millisecond)
	fetch(site.Client(), site.URL("/old"), "X-Robots-Tag")
	// Output:
	// 410 Gone
	// X-Robots-Tag: "noindex"
	// "<!DOCTYPE html>\n"
}

func ExampleRoute_Status() {
	site := crawltest.New()
	defer site.Close()
	site.Page("/error", "/").Status(http.StatusInternalServerError)
	fetch(site.Client(), site.URL("/error"), "Content-Type")
	// Output:
	// 500 Internal Server Error
	// Content-Type: "text/html; charset=utf-8"
	// "<!DOCTYPE html>\n"
}

func ExampleRoute_Header() {
	site := crawltest.New()
	defer site.Close()
	site.Page("/").Header("Content-Type", "application/xhtml+xml").Header("Retry-After", "120")
	fetch(site.Client(), site.URL("/"), "Content-Type", "Retry-After")
	// Output:
	// 200 OK
	// Content-Type: "application/xhtml+xml"
	// Retry-After: "120"
	// "<!DOCTYPE html>\n"
}

func ExampleRoute_Latency() {
	site := crawltest.New()
	defer site.Close()
	site.Page("/slow").Latency(time.Hour)
	site.Page("/fast")
	client := site.Client()
	for _, p := range []string{"/fast", "/slow"} {
		ctx, cancel := context.WithCancel(context.Background())
		if p == "/slow" {
			time.AfterFunc(20*time.Millisecond, cancel)
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, site.URL(p), nil)
		resp, err := client.Do(req)
		cancel()
		if err != nil {
			fmt.Println(p, errors.Is(err, context.Canceled))
			continue
		}
		resp.Body.Close()
		fmt.Println(p, resp.Status)
	}
	// Output:
	// /fast 200 OK
	// /slow true
}

func ExampleRoute_First() {
	site := crawltest.New()
	defer site.Close()
	site.Page("/flaky", "/").First(2, crawltest.Status(http.StatusServiceUnavailable))
	for range 3 {
		resp, _ := site.Client().Get(site.URL("/flaky"))
		resp.Body.Close()
		fmt.Println(resp.Status)
	}
	// Output:
	// 503 Service Unavailable
	// 503 Service Unavailable
	// 200 OK
}

func ExampleStatus() {
	site := crawltest.New()
	defer site.Close()
	site.Handle("/teapot", crawltest.Status(http.StatusTeapot))
	fetch(site.Client(), site.URL("/teapot"))
	// Output:
	// 418 I'm a teapot
	// "418 I'm a teapot\n"
}

func ExampleCalendar() {
	site := crawltest.New()
	defer site.Close()
	site.Handle("/calendar/", crawltest.Calendar())
	u := "http://www.example.com/calendar/2024-02-28"
	for range 3 {
		resp, _ := site.Client().Get(u)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		links := hrefs(string(body))
		fmt.Println(links)
		u = "http://www.example.com" + links[0]
	}
	// Output:
	// [/calendar/2024-02-29 /calendar/2024-03-28]
	// [/calendar/2024-03-01 /calendar/2024-03-29]
	// [/calendar/2024-03-02 /calendar/2024-04-01]
}

func ExampleRepeater() {
	site := crawltest.New()
	defer site.Close()
	site.Handle("/a/", crawltest.Repeater())
	u := "http://www.example.com/a/"
	for range 3 {
		resp, _ := site.Client().Get(u)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		u = "http://www.example.com" + hrefs(string(body))[0]
		fmt.Println(u)
	}
	// Output:
	// http://www.example.com/a/a/
	// http://www.example.com/a/a/a/
	// http://www.example.com/a/a/a/a/
}

func ExampleManyLinks() {
	site := crawltest.New()
	defer site.Close()
	site.Handle("/big", crawltest.ManyLinks(100000, "/p/%d"))
	resp, _ := site.Client().Get(site.URL("/big"))
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(strings.Count(string(body), "<a href="), strings.Contains(string(body), `<a href="/p/99999">`))
	// Output: 100000 true
}

func ExampleRedirectLoop() {
	site := crawltest.New()
	defer site.Close()
	site.Handle("/loop/", crawltest.RedirectLoop(http.StatusFound, 2))
	client := site.Client()
	u := site.URL("/loop/0")
	for range 3 {
		resp, _ := client.Transport.RoundTrip(mustRequest(u))
		resp.Body.Close()
		fmt.Println(resp.StatusCode, resp.Header.Get("Location"))
		u = site.URL(resp.Header.Get("Location"))
	}
	_, err := client.Get(site.URL("/loop/0")) // gives up after 10 redirects
	fmt.Println(err != nil)
	// Output:
	// 302 /loop/1
	// 302 /loop/0
	// 302 /loop/1
	// true
}

func ExampleRedirectChain() {
	site := crawltest.New()
	defer site.Close()
	site.Handle("/chain/", crawltest.RedirectChain(http.StatusMovedPermanently))
	client := site.Client()
	var hops []string
	client.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		hops = append(hops, req.URL.Path)
		if len(via) == 4 {
			return http.ErrUseLastResponse
		}
		return nil
	}
	resp, _ := client.Get(site.URL("/chain/"))
	resp.Body.Close()
	fmt.Println(hops, resp.Header.Get("Location"))
	// Output: [/chain/1 /chain/2 /chain/3 /chain/4] /chain/4
}

func mustRequest(u string) *http.Request {
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		panic(err)
	}
	return req
}

func ExampleBomb() {
	site := crawltest.New()
	defer site.Close()
	site.Handle("/bomb", crawltest.Bomb("gzip", 16<<20))
	// The caller asks for gzip, so the transport hands the body over as it
	// came; a crawler must cap what it inflates.
	req := mustRequest("http://www.example.com/bomb")
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := site.Client().Do(req)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	zr, err := gzip.NewReader(resp.Body)
	if err != nil {
		fmt.Println(err)
		return
	}
	n, err := io.Copy(io.Discard, zr)
	fmt.Println(resp.Header.Get("Content-Encoding"), resp.ContentLength < 100<<10, n, err)
	// Output: gzip true 16777216 <nil>
}

func ExampleTrickle() {
	site := crawltest.New()
	defer site.Close()
	site.Handle("/slow", crawltest.Trickle(time.Hour))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, site.URL("/slow"), nil)
	resp, err := site.Client().Do(req)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	// The first byte comes with the headers, the next one in an hour.
	time.AfterFunc(20*time.Millisecond, cancel)
	body, err := io.ReadAll(resp.Body)
	fmt.Printf("%s %q %v\n", resp.Status, body, errors.Is(err, context.Canceled))
	// Output: 200 OK "<" true
}

func ExampleStall() {
	site := crawltest.New()
	defer site.Close()
	site.Handle("/stall", crawltest.Stall())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, site.URL("/stall"), nil)
	resp, err := site.Client().Do(req)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	time.AfterFunc(20*time.Millisecond, cancel) // give up on the body
	body, err := io.ReadAll(resp.Body)
	fmt.Println(resp.Status, len(body), errors.Is(err, context.Canceled))
	// Output: 200 OK 0 true
}

func ExampleNoResponse() {
	site := crawltest.New()
	defer site.Close()
	site.Handle("/", crawltest.NoResponse())
	client := site.Client()
	client.Timeout = 20 * time.Millisecond
	_, err := client.Get("http://www.example.com/")
	var terr interface{ Timeout() bool }
	fmt.Println(errors.As(err, &terr) && terr.Timeout())
	// Output: true
}

func ExampleConnReset() {
	site := crawltest.New()
	defer site.Close()
	site.Handle("/reset", crawltest.ConnReset(100))
	resp, err := site.Client().Get(site.URL("/reset"))
	if err == nil {
		_, err = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	fmt.Println(errors.Is(err, syscall.ECONNRESET))
	// Output: true
}

func ExampleTruncated() {
	site := crawltest.New()
	defer site.Close()
	site.Handle("/cut", crawltest.Truncated(100))
	resp, err := site.Client().Get(site.URL("/cut"))
	if err != nil {
		fmt.Println(err)
		return
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(len(body), err == io.ErrUnexpectedEOF)
	// Output: 100 true
}

// A crawler is measured on the Maze by what it requested: here, a client
// that walks the listings to one case and requests its target.
func ExampleMaze() {
	maze := crawltest.NewMaze()
	srv := httptest.NewServer(maze)
	defer srv.Close()
	for _, p := range []string{"/", "/html/", "/html/body/", "/html/body/a/", "/html/body/a/href.html", "/test/html/body/a/href.found"} {
		resp, err := http.Get(srv.URL + p)
		if err != nil {
			fmt.Println(err)
			return
		}
		resp.Body.Close()
	}
	missed, extra := maze.Compare("navigation")
	fmt.Println(len(crawltest.MazeCases()), "cases, found:", maze.Found()[0].Name)
	fmt.Println(len(missed), "navigation cases missed,", len(extra), "of other roles found")
	// Output:
	// 64 cases, found: html/body/a/href
	// 14 navigation cases missed, 0 of other roles found
}
