package crawltest_test

import (
	"context"
	"errors"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/asyncrawl/crawl/crawltest"
)

// response is what a test reads of an HTTP response.
type response struct {
	status int
	header http.Header
	body   string
}

// get fetches raw with the transport of client and reads the whole body,
// without following redirects (even to a Location that does not parse),
// failing the test on any error.
func get(t *testing.T, client *http.Client, raw string) response {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, raw, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Transport.RoundTrip(req)
	if err != nil {
		t.Fatalf("GET %s: %v", raw, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: read body: %v", raw, err)
	}
	return response{resp.StatusCode, resp.Header, string(body)}
}

// waitFor polls cond until it holds, failing the test after a generous
// deadline: a wait for a state, not a measure of time.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestRoutes(t *testing.T) {
	tests := []struct {
		name    string
		declare func(s *crawltest.Site)
		uri     string
		status  int
		header  map[string]string // "" means absent
		body    string            // a substring of the body
	}{
		{
			name:    "page with links",
			declare: func(s *crawltest.Site) { s.Page("/", "/a", "b?x=1&y=2", "http://other.example/") },
			uri:     "/",
			status:  200,
			header:  map[string]string{"Content-Type": "text/html; charset=utf-8"},
			body:    `<a href="/a">/a</a>` + "\n" + `<a href="b?x=1&amp;y=2">b?x=1&amp;y=2</a>` + "\n" + `<a href="http://other.example/">`,
		},
		{
			name:    "page without links",
			declare: func(s *crawltest.Site) { s.Page("/empty") },
			uri:     "/empty",
			status:  200,
			body:    "<title>/empty</title>",
		},
		{
			name:    "body in windows-1252",
			declare: func(s *crawltest.Site) { s.Body("/cafe", "text/html; charset=windows-1252", "<p>caf\xe9</p>") },
			uri:     "/cafe",
			status:  200,
			header:  map[string]string{"Content-Type": "text/html; charset=windows-1252", "Content-Length": "11"},
			body:    "<p>caf\xe9</p>",
		},
		{
			name:    "body without content type",
			declare: func(s *crawltest.Site) { s.Body("/raw", "", "<html>sniff me</html>") },
			uri:     "/raw",
			status:  200,
			header:  map[string]string{"Content-Type": ""},
			body:    "sniff me",
		},
		{
			name:    "redirect",
			declare: func(s *crawltest.Site) { s.Redirect("/old", http.StatusMovedPermanently, "/new") },
			uri:     "/old",
			status:  301,
			header:  map[string]string{"Location": "/new"},
		},
		{
			name:    "redirect without location",
			declare: func(s *crawltest.Site) { s.Redirect("/nowhere", http.StatusFound, "") },
			uri:     "/nowhere",
			status:  302,
			header:  map[string]string{"Location": ""},
		},
		{
			name:    "redirect to a bad location",
			declare: func(s *crawltest.Site) { s.Redirect("/bad", http.StatusFound, crawltest.BadLocation) },
			uri:     "/bad",
			status:  302,
			header:  map[string]string{"Location": crawltest.BadLocation},
		},
		{
			name:    "robots",
			declare: func(s *crawltest.Site) { s.Robots("User-agent: *\nDisallow: /private/\n") },
			uri:     "/robots.txt",
			status:  200,
			header:  map[string]string{"Content-Type": "text/plain; charset=utf-8"},
			body:    "Disallow: /private/",
		},
		{
			name:    "no robots",
			declare: func(s *crawltest.Site) {},
			uri:     "/robots.txt",
			status:  404,
		},
		{
			name:    "undeclared path",
			declare: func(s *crawltest.Site) { s.Page("/") },
			uri:     "/missing",
			status:  404,
		},
		{
			name:    "undeclared path under a subtree",
			declare: func(s *crawltest.Site) { s.Page("/"); s.Page("/a/") },
			uri:     "/b/c",
			status:  404,
		},
		{
			name: "status and header",
			declare: func(s *crawltest.Site) {
				s.Page("/gone", "/").Status(http.StatusGone).Header("X-Robots-Tag", "noindex")
			},
			uri:    "/gone",
			status: 410,
			header: map[string]string{"X-Robots-Tag": "noindex", "Content-Type": "text/html; charset=utf-8"},
			body:   `<a href="/">`,
		},
		{
			name:    "header replaces the content type",
			declare: func(s *crawltest.Site) { s.Page("/sjis").Header("Content-Type", "text/html; charset=Shift_JIS") },
			uri:     "/sjis",
			status:  200,
			header:  map[string]string{"Content-Type": "text/html; charset=Shift_JIS"},
		},
		{
			name:    "status on a handler",
			declare: func(s *crawltest.Site) { s.Handle("/h", crawltest.Status(http.StatusOK)).Status(http.StatusTeapot) },
			uri:     "/h",
			status:  418,
			body:    "200 OK",
		},
		{
			name:    "status handler",
			declare: func(s *crawltest.Site) { s.Handle("/busy", crawltest.Status(http.StatusServiceUnavailable)) },
			uri:     "/busy",
			status:  503,
			body:    "503 Service Unavailable",
		},
		{
			name:    "subtree",
			declare: func(s *crawltest.Site) { s.Page("/docs/", "/") },
			uri:     "/docs/a/b",
			status:  200,
			body:    "<title>/docs/</title>",
		},
		{
			name: "longest subtree wins",
			declare: func(s *crawltest.Site) {
				s.Page("/", "/root")
				s.Page("/docs/", "/docs")
				s.Page("/docs/api/", "/api")
			},
			uri:    "/docs/api/x",
			status: 200,
			body:   "<title>/docs/api/</title>",
		},
		{
			name: "exact path beats subtree",
			declare: func(s *crawltest.Site) {
				s.Page("/docs/", "/docs")
				s.Page("/docs/index", "/index")
			},
			uri:    "/docs/index",
			status: 200,
			body:   "<title>/docs/index</title>",
		},
		{
			name:    "a path without slash is not a subtree",
			declare: func(s *crawltest.Site) { s.Page("/docs") },
			uri:     "/docs/a",
			status:  404,
		},
		{
			name: "exact query beats path",
			declare: func(s *crawltest.Site) {
				s.Page("/search", "/plain")
				s.Page("/search?q=a", "/with-query")
			},
			uri:    "/search?q=a",
			status: 200,
			body:   `<a href="/with-query">`,
		},
		{
			name: "other query gets the path",
			declare: func(s *crawltest.Site) {
				s.Page("/search", "/plain")
				s.Page("/search?q=a", "/with-query")
			},
			uri:    "/search?q=b",
			status: 200,
			body:   `<a href="/plain">`,
		},
		{
			name: "declaring again replaces",
			declare: func(s *crawltest.Site) {
				s.Page("/p", "/first")
				s.Page("/p", "/second")
			},
			uri:    "/p",
			status: 200,
			body:   `<a href="/second">`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			site := crawltest.Start(t)
			tt.declare(site)
			got := get(t, site.Client(), site.URL(tt.uri))
			if got.status != tt.status {
				t.Errorf("GET %s: status %d, want %d", tt.uri, got.status, tt.status)
			}
			for k, want := range tt.header {
				if v, ok := got.header[k]; want == "" && ok {
					t.Errorf("GET %s: header %s: %q, want none", tt.uri, k, v)
				} else if g := got.header.Get(k); g != want {
					t.Errorf("GET %s: header %s: %q, want %q", tt.uri, k, g, want)
				}
			}
			if !strings.Contains(got.body, tt.body) {
				t.Errorf("GET %s: body %q, want it to hold %q", tt.uri, got.body, tt.body)
			}
		})
	}
}

func TestBadLocationDoesNotParse(t *testing.T) {
	if u, err := url.Parse(crawltest.BadLocation); err == nil {
		t.Fatalf("url.Parse(%q) = %v, want an error", crawltest.BadLocation, u)
	}
	site := crawltest.Start(t)
	site.Redirect("/bad", http.StatusFound, crawltest.BadLocation)
	resp, err := site.Client().Get(site.URL("/bad"))
	if err == nil {
		resp.Body.Close()
		t.Fatalf("GET /bad followed %s, want an error", crawltest.BadLocation)
	}
}

func TestPathMustBeAbsolute(t *testing.T) {
	site := crawltest.Start(t)
	defer func() {
		if recover() == nil {
			t.Errorf("Page(%q) did not panic", "a")
		}
	}()
	site.Page("a")
}

func TestFirst(t *testing.T) {
	site := crawltest.Start(t)
	site.Page("/flaky", "/").First(2, crawltest.Status(http.StatusServiceUnavailable))
	client := site.Client()
	var got []int
	for range 4 {
		got = append(got, get(t, client, site.URL("/flaky")).status)
	}
	if want := []int{503, 503, 200, 200}; !slices.Equal(got, want) {
		t.Errorf("statuses of four GETs: %v, want %v", got, want)
	}
}

func TestRecording(t *testing.T) {
	site := crawltest.Start(t)
	site.Page("/", "/a")
	site.Page("/a", "/")
	site.Robots("")
	client := site.Client()
	uris := []string{"/robots.txt", "/", "/a", "/a?x=1", "/", "/missing"}
	for _, u := range uris {
		req, _ := http.NewRequest(http.MethodGet, "http://www.example.com"+u, nil)
		req.Header.Set("User-Agent", "crawltest-test")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	reqs := site.Requests()
	var order []string
	for i, r := range reqs {
		order = append(order, r.URI)
		if r.Method != http.MethodGet || r.Host != "www.example.com" || r.Header.Get("User-Agent") != "crawltest-test" {
			t.Errorf("request %d: %s %s Host %s User-Agent %q, want GET, www.example.com, crawltest-test",
				i, r.Method, r.URI, r.Host, r.Header.Get("User-Agent"))
		}
		if i > 0 && r.Time.Before(reqs[i-1].Time) {
			t.Errorf("request %d at %v, before request %d at %v", i, r.Time, i-1, reqs[i-1].Time)
		}
	}
	if !slices.Equal(order, uris) {
		t.Errorf("Requests: %v, want %v", order, uris)
	}
	wantCounts := map[string]int{"/robots.txt": 1, "/": 2, "/a": 1, "/a?x=1": 1, "/missing": 1}
	if got := site.Counts(); !maps.Equal(got, wantCounts) {
		t.Errorf("Counts: %v, want %v", got, wantCounts)
	}
	if got := site.Count("/"); got != 2 {
		t.Errorf("Count(/) = %d, want 2", got)
	}
	if got := site.Total(); got != 6 {
		t.Errorf("Total = %d, want 6", got)
	}
	if got := site.TotalExceptRobots(); got != 5 {
		t.Errorf("TotalExceptRobots = %d, want 5", got)
	}

	site.Reset()
	if got, n := site.Counts(), site.Total(); len(got) != 0 || n != 0 || len(site.Requests()) != 0 {
		t.Errorf("after Reset: Counts %v, Total %d, %d Requests, want none", got, n, len(site.Requests()))
	}

	site.Record(false)
	get(t, client, site.URL("/"))
	if got := len(site.Requests()); got != 0 || site.Count("/") != 0 {
		t.Errorf("with Record(false): %d Requests, Count(/) %d, want 0", got, site.Count("/"))
	}
	if got := site.Total(); got != 1 {
		t.Errorf("with Record(false): Total = %d, want 1", got)
	}
	site.Record(true)
	get(t, client, site.URL("/"))
	if got := site.Count("/"); got != 1 {
		t.Errorf("with Record(true) again: Count(/) = %d, want 1", got)
	}
}

// TestPeak holds requests open on two hosts, on a route with a latency
// that never ends, and checks the peaks once they are all in flight.
func TestPeak(t *testing.T) {
	site := crawltest.Start(t)
	site.Page("/slow").Latency(time.Hour)
	site.Page("/fast")
	client := site.Client()
	ctx, cancel := context.WithCancel(context.Background())
	hosts := map[string]int{"a.example": 3, "b.example": 2}
	var wg sync.WaitGroup
	errs := make(chan error, 5)
	for host, n := range hosts {
		for range n {
			wg.Go(func() {
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+host+"/slow", nil)
				resp, err := client.Do(req)
				if err == nil {
					resp.Body.Close()
				}
				errs <- err
			})
		}
	}
	waitFor(t, "5 requests in flight", func() bool { return site.InFlight() == 5 })
	// A request that is answered goes through while the others wait.
	get(t, client, "http://c.example/fast")
	if got := site.Peak(); got != 6 {
		t.Errorf("Peak = %d, want 6", got)
	}
	for host, want := range hosts {
		if got := site.Host(host).Peak(); got != want {
			t.Errorf("Host(%s).Peak() = %d, want %d", host, got, want)
		}
	}
	if got := site.Host("c.example").Peak(); got != 1 {
		t.Errorf("Host(c.example).Peak() = %d, want 1", got)
	}
	cancel()
	wg.Wait()
	close(errs)
	for err := range errs {
		if !errors.Is(err, context.Canceled) {
			t.Errorf("GET /slow: %v, want context.Canceled", err)
		}
	}
	waitFor(t, "no request in flight", func() bool { return site.InFlight() == 0 })
	if got := site.Peak(); got != 6 {
		t.Errorf("Peak after the requests = %d, want 6", got)
	}
	site.Reset()
	if got := site.Peak(); got != 0 {
		t.Errorf("Peak after Reset = %d, want 0", got)
	}
}

// TestLatency checks each level of latency holds its requests and only
// those: a request that must wait an hour times out, one that needs not is
// answered.
func TestLatency(t *testing.T) {
	tests := []struct {
		name    string
		declare func(s *crawltest.Site)
		slow    []string // URLs held
		fast    []string // URLs answered
	}{
		{
			name:    "route",
			declare: func(s *crawltest.Site) { s.Page("/p").Latency(time.Hour) },
			slow:    []string{"http://a.example/p"},
			fast:    []string{"http://a.example/q"},
		},
		{
			name:    "host",
			declare: func(s *crawltest.Site) { s.Host("a.example").Latency(time.Hour) },
			slow:    []string{"http://a.example/p", "http://a.example/q"},
			fast:    []string{"http://b.example/p"},
		},
		{
			name:    "site",
			declare: func(s *crawltest.Site) { s.Latency(time.Hour) },
			slow:    []string{"http://a.example/p", "http://b.example/q"},
		},
		{
			name: "removed",
			declare: func(s *crawltest.Site) {
				s.Latency(time.Hour)
				s.Latency(0)
			},
			fast: []string{"http://a.example/p"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			site := crawltest.Start(t)
			site.Page("/p")
			site.Page("/q")
			tt.declare(site)
			client := site.Client()
			for _, u := range tt.slow {
				ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
				resp, err := client.Do(req)
				cancel()
				if err == nil {
					resp.Body.Close()
					t.Errorf("GET %s answered %d, want it held until the timeout", u, resp.StatusCode)
				} else if !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("GET %s: %v, want context.DeadlineExceeded", u, err)
				}
			}
			for _, u := range tt.fast {
				if got := get(t, client, u); got.status != 200 {
					t.Errorf("GET %s: status %d, want 200", u, got.status)
				}
			}
		})
	}
}

func TestDialContext(t *testing.T) {
	site := crawltest.Start(t)
	site.Page("/", "/a")
	client := site.Client()
	for _, u := range []string{
		"http://www.example.com/",
		"http://example.com:8080/",
		"http://192.0.2.1/",
		"http://[2001:db8::1]:81/",
		site.URL("/"),
	} {
		if got := get(t, client, u); got.status != 200 || !strings.Contains(got.body, `<a href="/a">`) {
			t.Errorf("GET %s: %d %q, want the page /", u, got.status, got.body)
		}
	}
	var hosts []string
	for _, r := range site.Requests() {
		hosts = append(hosts, r.Host)
	}
	want := []string{"www.example.com", "example.com:8080", "192.0.2.1", "[2001:db8::1]:81", site.Addr()}
	if !slices.Equal(hosts, want) {
		t.Errorf("Host headers: %v, want %v", hosts, want)
	}

	// A transport of the test's own, with the dialer alone.
	tr := &http.Transport{DialContext: site.DialContext}
	defer tr.CloseIdleConnections()
	if got := get(t, &http.Client{Transport: tr}, "http://www.example.org/"); got.status != 200 {
		t.Errorf("GET http://www.example.org/ through DialContext: status %d, want 200", got.status)
	}

	if c, err := site.DialContext(context.Background(), "udp", "example.com:53"); err == nil {
		c.Close()
		t.Errorf("DialContext(udp) succeeded, want an error")
	}
}

func TestVirtualHosts(t *testing.T) {
	site := crawltest.Start(t)
	site.Page("/", "/shared")
	site.Robots("User-agent: *\nDisallow:\n")
	a := site.Host("a.example")
	a.Page("/", "/a-only")
	a.Page("/docs/", "/a-docs")
	site.Page("/docs/api", "/shared-api")
	client := site.Client()
	tests := []struct {
		url  string
		body string
	}{
		{"http://a.example/", `<a href="/a-only">`},
		{"http://A.Example:8080/", `<a href="/a-only">`},
		{"http://b.example/", `<a href="/shared">`},
		{"http://a.example/robots.txt", "Disallow:"},    // the Site's route, for every host
		{"http://a.example/docs/api", `href="/a-docs"`}, // the host's routes come first
		{"http://b.example/docs/api", `"/shared-api"`},  // other hosts get the Site's
		{"http://a.example/missing", "404 page not found"},
	}
	for _, tt := range tests {
		if got := get(t, client, tt.url); !strings.Contains(got.body, tt.body) {
			t.Errorf("GET %s: %q, want it to hold %q", tt.url, got.body, tt.body)
		}
	}
	if got := a.Name(); got != "a.example" {
		t.Errorf("Name() = %q, want a.example", got)
	}
	if got := site.Host("A.EXAMPLE:80"); got != a {
		t.Errorf("Host(A.EXAMPLE:80) is another Host than Host(a.example)")
	}
	if got := a.URL("/x"); got != "http://a.example/x" {
		t.Errorf("URL(/x) = %q, want http://a.example/x", got)
	}
	if got := site.Host("::1").URL("/"); got != "http://[::1]/" {
		t.Errorf("Host(::1).URL(/) = %q, want http://[::1]/", got)
	}
	if got := a.Count("/"); got != 2 {
		t.Errorf("a.Count(/) = %d, want 2", got)
	}
	if got := site.Host("b.example").Count("/"); got != 1 {
		t.Errorf("b.Count(/) = %d, want 1", got)
	}
	var aURIs []string
	for _, r := range a.Requests() {
		aURIs = append(aURIs, r.URI)
	}
	if want := []string{"/", "/", "/robots.txt", "/docs/api", "/missing"}; !slices.Equal(aURIs, want) {
		t.Errorf("a.Requests(): %v, want %v", aURIs, want)
	}
}
