package render_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/asyncrawl/crawl"
	"github.com/asyncrawl/crawl/crawltest"
	"github.com/asyncrawl/crawl/render"
)

// needBrowser skips the test when no chromium is installed, unless CI=true
// (.ci/run installs it), where it fails.
func needBrowser(t testing.TB) {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if _, err := exec.LookPath(name); err == nil {
			return
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no chromium on PATH: .ci/run installs Debian's chromium")
	}
	t.Skip("no chromium on PATH")
}

// crawlRendered crawls root (roots separated by spaces) on site with the renderer and opts, and returns
// the Results by URL and the typed links each page hook saw, by page.
func crawlRendered(t *testing.T, site *crawltest.Site, ro render.Options, root string, opts ...crawl.Option) (map[string]crawl.Result, map[string][]crawl.Link, *crawl.Stats) {
	t.Helper()
	var mu sync.Mutex
	res := map[string]crawl.Result{}
	links := map[string][]crawl.Link{}
	if ro.Quiet == 0 {
		ro.Quiet = 200 * time.Millisecond
	}
	if ro.Timeout == 0 {
		ro.Timeout = 20 * time.Second
	}
	base := []crawl.Option{
		crawl.WithHTTPClient(site.Client()),
		crawl.WithRenderer(render.New(ro), crawl.RenderAll),
		crawl.WithResultHook(func(r crawl.Result) {
			mu.Lock()
			defer mu.Unlock()
			if _, dup := res[r.URL]; dup {
				t.Errorf("%s: a second Result", r.URL)
			}
			res[r.URL] = r
		}),
		crawl.WithPageHook(func(p *crawl.Page) {
			mu.Lock()
			defer mu.Unlock()
			links[p.URL.String()] = append([]crawl.Link(nil), p.Links...)
		}),
	}
	c, err := crawl.New(append(base, opts...)...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	stats, err := c.Run(ctx, strings.Fields(root)...) // roots, separated by spaces
	if err != nil {
		t.Fatalf("Run(%s): %v", root, err)
	}
	return res, links, stats
}

// appJS builds the page's links at run time, from pieces no static parse
// joins: a link in the DOM, a fetch, a history entry, a click handler that
// navigates, a window.open, a dynamic script.
const appJS = `
const p = (...xs) => "/" + xs.join("/");
const a = document.createElement("a");
a.href = p("dom", "link");
a.textContent = "built";
document.getElementById("app").appendChild(a);
fetch(p("api", "data")).then(r => r.json()).then(d => {
  const b = document.createElement("a");
  b.href = d.next;
  document.getElementById("app").appendChild(b);
});
history.pushState({}, "", p("route", "one"));
// Another origin's URL: the browser refuses it (SecurityError), and it is
// in no history.
try { history.replaceState({}, "", "http://spa.example:1" + p("refused", "state")); } catch (e) {}
const btn = document.createElement("button");
btn.textContent = "go";
btn.addEventListener("click", () => { location.href = p("clicked", "here"); });
document.body.appendChild(btn);
setTimeout(() => window.open(p("popup", "win")), 50);
const s = document.createElement("script");
s.src = p("lazy", "mod.js");
document.head.appendChild(s);
`

func TestRenderFindsWhatScriptsBuild(t *testing.T) {
	needBrowser(t)
	site := crawltest.Start(t)
	h := site.Host("spa.example")
	h.Body("/", "text/html", `<!doctype html><html><head><title>app</title></head><body><div id="app"></div><script src="/app.js"></script></body></html>`)
	h.Body("/app.js", "text/javascript", appJS)
	h.Body("/api/data", "application/json", `{"next": "/from/api"}`)
	h.Body("/lazy/mod.js", "text/javascript", `document.title = "lazy";`)
	for _, p := range []string{"/dom/link", "/from/api", "/route/one", "/clicked/here", "/popup/win"} {
		h.Page(p)
	}
	res, links, _ := crawlRendered(t, site, render.Options{}, "http://spa.example/", crawl.WithRobots(false))
	for _, p := range []string{"/dom/link", "/from/api", "/route/one", "/clicked/here", "/popup/win"} {
		u := "http://spa.example" + p
		r, ok := res[u]
		if !ok || r.Err != nil || r.Status != 200 {
			t.Errorf("%s: got Result %+v (present %v), want 200 without Err", u, r, ok)
		}
		if n := h.Count(p); n != 1 {
			t.Errorf("%s: the server got %d requests, want 1", p, n)
		}
	}
	// The browser's requisites went through the crawler, once each; the
	// document was not fetched again for the browser.
	for _, p := range []string{"/", "/app.js", "/api/data", "/lazy/mod.js"} {
		if n := h.Count(p); n != 1 {
			t.Errorf("%s: the server got %d requests, want 1", p, n)
		}
	}
	sources := map[string]string{}
	for _, l := range links["http://spa.example/"] {
		sources[l.URL.String()] = l.Source
	}
	for u, want := range map[string]string{
		"http://spa.example/dom/link":     "render dom",
		"http://spa.example/api/data":     "render request",
		"http://spa.example/route/one":    "render history",
		"http://spa.example/clicked/here": "render click",
		"http://spa.example/popup/win":    "render navigation",
	} {
		if got := sources[u]; got != want {
			t.Errorf("link %s: got Source %q, want %q (links %v)", u, got, want, sources)
		}
	}
	if s, ok := sources["http://spa.example:1/refused/state"]; ok {
		t.Errorf("a replaceState the browser refused was recorded (Source %q)", s)
	}
	for _, r := range h.Requests() {
		if r.Header.Get("User-Agent") != crawl.DefaultUserAgent {
			t.Errorf("%s: User-Agent %q, want the crawler's %q", r.URI, r.Header.Get("User-Agent"), crawl.DefaultUserAgent)
		}
	}
}

// TestRenderObeysPolicy: the browser's requests that robots.txt disallows,
// that the exclude patterns exclude, that are out of scope, or that are not
// GET never reach a server.
func TestRenderObeysPolicy(t *testing.T) {
	needBrowser(t)
	site := crawltest.Start(t)
	h := site.Host("spa.example")
	other := site.Host("other.example")
	h.Robots("User-agent: *\nDisallow: /private/\n")
	h.Body("/", "text/html", `<!doctype html><body><div id="app"></div><script>
const j = (...xs) => "/" + xs.join("/");
fetch(j("private", "data"));
fetch(j("skip", "me"));
fetch(j("ok", "data"));
fetch("http://other" + ".example" + j("x"));
fetch(j("post", "it"), {method: "POST", body: "secret"});
const i = new Image(); i.src = j("private", "img.png");
</script></body></html>`)
	for _, p := range []string{"/private/data", "/private/img.png", "/skip/me", "/ok/data", "/post/it"} {
		h.Body(p, "text/plain", "x")
	}
	other.Body("/x", "text/plain", "x")
	res, links, _ := crawlRendered(t, site, render.Options{Clicks: -1}, "http://spa.example/", crawl.WithExclude("/skip/"))
	if r := res["http://spa.example/"]; r.Err != nil {
		t.Errorf("root: got Err %v", r.Err)
	}
	for _, p := range []string{"/private/data", "/private/img.png", "/skip/me", "/post/it"} {
		if n := h.Count(p); n != 0 {
			t.Errorf("%s: the server got %d requests, want 0", p, n)
		}
	}
	if n := h.Count("/ok/data"); n != 1 {
		t.Errorf("/ok/data: the server got %d requests, want 1", n)
	}
	if n := len(other.Requests()); n != 0 {
		t.Errorf("other.example: got %d requests (%v), want 0: out of scope without WithRequisites", n, other.Requests())
	}
	var post crawl.Link
	for _, l := range links["http://spa.example/"] {
		if l.URL.Path == "/post/it" {
			post = l
		}
	}
	if post.Role != crawl.Reference || post.Source != "render request" {
		t.Errorf("POST link: got %+v, want a Reference from \"render request\"", post)
	}
}

// TestRenderBlockPrivate: with WithBlockPrivateNetworks, the browser's
// requests for a private address or a name that resolves to one are
// refused before anything is sent.
func TestRenderBlockPrivate(t *testing.T) {
	needBrowser(t)
	site := crawltest.Start(t)
	h := site.Host("spa.example")
	h.Body("/", "text/html", `<!doctype html><body><script>
fetch("http://127.0.0.1:" + "`+strings.Split(site.Addr(), ":")[1]+`" + "/loop");
fetch("http://10.0.0.7/" + "intranet");
fetch("http://metadata" + ".example/latest");
fetch("/" + "fine");
</script></body></html>`)
	h.Body("/fine", "text/plain", "x")
	site.Body("/loop", "text/plain", "x")
	site.Body("/latest", "text/plain", "x")
	var dials sync.Map // host -> dials
	res, _, _ := crawlRendered(t, site, render.Options{Clicks: -1}, "http://spa.example/",
		crawl.WithHTTPClient(publicClient(site, map[string]string{"metadata.example": "169.254.169.254"}, &dials)),
		crawl.WithBlockPrivateNetworks(true), crawl.WithRequisites(true), crawl.WithRobots(false))
	if r := res["http://spa.example/"]; r.Err != nil {
		t.Errorf("root: got Err %v", r.Err)
	}
	for _, uri := range []string{"/loop", "/intranet", "/latest"} {
		if n := site.Count(uri); n != 0 {
			t.Errorf("%s: the server got %d requests, want 0", uri, n)
		}
	}
	if n := h.Count("/fine"); n < 1 {
		t.Errorf("/fine: the server got %d requests, want at least 1", n)
	}
	// Queued as requisites, each blocked again when the crawl fetches it.
	for _, u := range []string{"http://127.0.0.1:" + strings.Split(site.Addr(), ":")[1] + "/loop", "http://10.0.0.7/intranet", "http://metadata.example/latest"} {
		if r, ok := res[u]; !ok || !errors.Is(r.Err, crawl.ErrBlockedAddress) {
			t.Errorf("%s: got Result %+v (present %v), want one wrapping ErrBlockedAddress", u, r, ok)
		}
	}
	// An address literal is refused before any dial.
	for _, host := range []string{"127.0.0.1", "10.0.0.7"} {
		if n, _ := dials.Load(host); n != nil {
			t.Errorf("%s: dialled %v times, want 0", host, n)
		}
	}
}

func TestNeedsRenderCases(t *testing.T) {
	for _, c := range []struct {
		name string
		body string
		want bool
	}{
		{"app root", `<html><body><div id="root"></div><script src="/main.js"></script></body></html>`, true},
		{"noscript", `<html><body><noscript>You need to enable JavaScript to run this app.</noscript><p>` + strings.Repeat("word ", 60) + `</p><script src=x.js></script></body></html>`, true},
		{"docs", `<html><body><nav><a href="/a">A</a><a href="/b">B</a><a href="/c">C</a></nav><p>` + strings.Repeat("documentation text ", 100) + `</p><script src="/search.js"></script></body></html>`, false},
		{"no script", `<html><body><div id="app"></div></body></html>`, false},
		// Scripts that do not run: data, or inside a template.
		{"JSON-LD only", `<html><body><p>Hi</p><script type="application/ld+json">{"@type": "Thing"}</script></body></html>`, false},
		{"script in a template", `<html><body><div id="app"></div><template><script src="/x.js"></script></template></body></html>`, false},
		{"a module", `<html><body><div id="app"></div><script type="module" src="/main.js"></script></body></html>`, true},
		{"a JavaScript type", `<html><body><div id="app"></div><script type=" Text/JavaScript ">go()</script></body></html>`, true},
		{"after a template", `<html><body><template><p></p></template><div id="app"></div><script src="/main.js"></script></body></html>`, true},
	} {
		if got := crawl.NeedsRender([]byte(c.body)); got != c.want {
			t.Errorf("%s: NeedsRender = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestRenderHangCut: a page whose script never ends is cut at the render
// deadline with a Result wrapping ErrRender, its static links followed;
// the next page renders in a fresh tab; no browser process outlives Run.
func TestRenderHangCut(t *testing.T) {
	needBrowser(t)
	site := crawltest.Start(t)
	h := site.Host("spa.example")
	var tree map[int]string // this test's browser
	h.Handle("/static", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tree = browserTree(t, os.Getpid())
		w.Header().Set("Content-Type", "text/html")
	}))
	h.Body("/", "text/html", `<!doctype html><body><a href="/hang">hang</a><script>
const a = document.createElement("a"); a.href = "/" + ["ok", "page"].join("/"); document.body.appendChild(a);
</script></body></html>`)
	h.Body("/hang", "text/html", `<!doctype html><body><a href="/static">s</a><script>for (;;) {}</script></body></html>`)
	h.Body("/ok/page", "text/html", `<!doctype html><body><script>
const a = document.createElement("a"); a.href = "/" + ["after", "hang"].join("/"); document.body.appendChild(a);
</script></body></html>`)
	h.Page("/after/hang")
	res, _, _ := crawlRendered(t, site, render.Options{Tabs: 1, Timeout: 3 * time.Second, Clicks: -1}, "http://spa.example/",
		crawl.WithRobots(false), crawl.WithWorkers(1))
	if r := res["http://spa.example/hang"]; !errors.Is(r.Err, crawl.ErrRender) || r.Status != 200 || r.Broken() || crawl.FailKind(r.Err) != "render" {
		t.Errorf("/hang: got Status %d, Err %v (kind %q), Broken %v, want 200, ErrRender (kind \"render\"), not broken", r.Status, r.Err, crawl.FailKind(r.Err), r.Broken())
	}
	for _, p := range []string{"/static", "/ok/page"} {
		if r, ok := res["http://spa.example"+p]; !ok || r.Err != nil {
			t.Errorf("%s: got Result %+v (present %v), want one without Err", p, r, ok)
		}
	}
	// Rendered after the hung page, in the one tab's stead.
	if r, ok := res["http://spa.example/after/hang"]; !ok || r.Err != nil {
		t.Errorf("/after/hang: got Result %+v (present %v), want one without Err", r, ok)
	}
	if len(tree) < 2 {
		t.Fatalf("got the browser processes %v while the crawl ran, want its main process and its helpers", tree)
	}
	if pids := alive(tree); len(pids) > 0 {
		t.Errorf("browser processes after Run returned: %v", pids)
	}
}

// TestRenderCancel: a Run cancelled while a page renders returns, the
// page goes back unfinished (no Result, no page hook call), and no browser
// process remains.
func TestRenderCancel(t *testing.T) {
	needBrowser(t)
	site := crawltest.Start(t)
	h := site.Host("spa.example")
	h.Body("/", "text/html", `<!doctype html><body><script src="/slow.js"></script></body></html>`)
	started := make(chan struct{})
	var once sync.Once
	var tree map[int]string // this test's browser
	h.Handle("/slow.js", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() {
			tree = browserTree(t, os.Getpid())
			close(started)
		})
		select {
		case <-r.Context().Done():
		case <-time.After(30 * time.Second):
		}
	}))
	var mu sync.Mutex
	res := map[string]crawl.Result{}
	c, err := crawl.New(crawl.WithHTTPClient(site.Client()), crawl.WithRobots(false),
		crawl.WithRenderer(render.New(render.Options{Timeout: time.Minute}), crawl.RenderAll),
		crawl.WithResultHook(func(r crawl.Result) { mu.Lock(); res[r.URL] = r; mu.Unlock() }),
		crawl.WithPageHook(func(p *crawl.Page) { t.Errorf("the page hook saw %s, a page given back unfinished", p.URL) }))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		select {
		case <-started:
		case <-time.After(time.Minute):
		}
		cancel()
	}()
	stats, err := c.Run(ctx, "http://spa.example/")
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Run: got %v, want context.Canceled", err)
	}
	if r, ok := res["http://spa.example/"]; ok {
		t.Errorf("root: got Result %+v, want none (given back unfinished)", r)
	}
	if stats.Todo != 1 {
		t.Errorf("Stats.Todo: got %d, want 1", stats.Todo)
	}
	if len(tree) < 2 {
		t.Fatalf("got the browser processes %v while the crawl ran, want its main process and its helpers", tree)
	}
	if pids := alive(tree); len(pids) > 0 {
		t.Errorf("browser processes after Run returned: %v", pids)
	}
}

// TestRenderPoliteness: the browser's requests to a host are at most
// WithHostWorkers at once, and every request to the host, the crawl's own
// (the page, other roots fetched by another worker meanwhile, the page's
// static links) and the browser's, starts at least half of WithHostDelay
// after the one before.
func TestRenderPoliteness(t *testing.T) {
	needBrowser(t)
	site := crawltest.Start(t)
	h := site.Host("spa.example")
	h.Latency(30 * time.Millisecond)
	roots := busyHost(h, `<a href="/s/1">1</a><a href="/s/2">2</a><a href="/s/3">3</a>`)
	for i := 1; i <= 3; i++ {
		h.Body(fmt.Sprintf("/s/%d", i), "text/plain", "x")
	}
	const d = 60 * time.Millisecond
	res, _, _ := crawlRendered(t, site, render.Options{Clicks: -1}, roots,
		crawl.WithRobots(false), crawl.WithWorkers(2), crawl.WithHostWorkers(2), crawl.WithHostDelay(d))
	if _, ok := res["http://spa.example/done"]; !ok {
		var uris []string
		for _, r := range h.Requests() {
			uris = append(uris, r.URI)
		}
		t.Fatalf("/done not found: the fetches did not all end; root %+v; requests %v", res["http://spa.example/"], uris)
	}
	if p := h.Peak(); p > 2 {
		t.Errorf("peak requests in flight to the host: got %d, want at most 2", p)
	}
	reqs := h.Requests()
	slices.SortFunc(reqs, func(a, b crawltest.Request) int { return a.Time.Compare(b.Time) })
	browser := 0
	for i, r := range reqs {
		if strings.HasPrefix(r.URI, "/r/") {
			browser++
		}
		if i == 0 {
			continue
		}
		// Each pause is drawn from [d/2, 3d/2]; 10 ms for a loaded
		// machine's scheduling.
		if gap := r.Time.Sub(reqs[i-1].Time); gap < d/2-10*time.Millisecond {
			t.Errorf("%s and %s started %v apart, want at least %v (WithHostDelay %v)", reqs[i-1].URI, r.URI, gap, d/2, d)
		}
	}
	if browser != 8 {
		t.Fatalf("got %d browser requests, want 8", browser)
	}
}

// busyHost serves on h a page "/" whose script fetches /r/0 to /r/7 at
// once, then links to /done, after the markup extra; and 12 other pages,
// /o/1 to /o/12. It returns the roots of a crawl of them all, separated by
// spaces: while one worker renders "/", the others fetch the host's other
// roots.
func busyHost(h *crawltest.Host, extra string) string {
	h.Body("/", "text/html", `<!doctype html><body>`+extra+`<script>
Promise.all(Array.from({length: 8}, (_, i) => fetch("/" + ["r", i].join("/")))).then(() => {
  const a = document.createElement("a"); a.href = "/" + ["done"].join(""); document.body.appendChild(a);
});
</script></body></html>`)
	for i := range 8 {
		h.Body(fmt.Sprintf("/r/%d", i), "text/plain", "x")
	}
	roots := "http://" + h.Name() + "/"
	for i := 1; i <= 12; i++ {
		h.Body(fmt.Sprintf("/o/%d", i), "text/plain", "x")
		roots += fmt.Sprintf(" http://%s/o/%d", h.Name(), i)
	}
	h.Page("/done")
	return roots
}

// TestRenderInteraction: the page's GET form is submitted with its default
// values, its POST form is not, and a click handler's navigation is
// recorded without leaving the page.
func TestRenderInteraction(t *testing.T) {
	needBrowser(t)
	site := crawltest.Start(t)
	h := site.Host("spa.example")
	h.Body("/", "text/html", `<!doctype html><body>
<form id="g" method="get" action="/search"><input name="q" value="default"><input type="hidden" name="lang" value="en"></form>
<form id="g2" action="/filter"><input name="tag" value="go"></form>
<form id="p" method="post" action="/order"><input name="card" value="4111"><button type="submit">buy</button></form>
<div id="menu">menu</div>
<div id="md">md</div><div id="mu">mu</div><div id="pd">pd</div>
<script>
document.getElementById("menu").addEventListener("click", () => {
  const a = document.createElement("a"); a.href = "/" + ["menu", "open"].join("/"); document.body.appendChild(a);
  location.assign("/" + ["menu", "nav"].join("/"));
});
for (const [id, ev] of [["md", "mousedown"], ["mu", "mouseup"], ["pd", "pointerdown"]]) {
  document.getElementById(id).addEventListener(ev, () => {
    const a = document.createElement("a"); a.href = "/" + ["from", ev].join("/"); document.body.appendChild(a);
  });
}
</script></body></html>`)
	for _, ev := range []string{"mousedown", "mouseup", "pointerdown"} {
		h.Page("/from/" + ev)
	}
	h.Page("/search")
	h.Page("/filter")
	h.Page("/menu/open")
	h.Page("/menu/nav")
	h.Page("/order")
	_, links, _ := crawlRendered(t, site, render.Options{}, "http://spa.example/", crawl.WithRobots(false))
	for _, uri := range []string{"/search?q=default&lang=en", "/filter?tag=go"} {
		if n := h.Count(uri); n != 1 {
			t.Errorf("GET form with its defaults, %s: got %d requests, want 1 (requests %v)", uri, n, h.Requests())
		}
	}
	for _, r := range h.Requests() {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			t.Errorf("%s %s: the crawl sent a %s", r.Method, r.URI, r.Method)
		}
		if strings.HasPrefix(r.URI, "/order") && r.Method != http.MethodGet {
			t.Errorf("the POST form was submitted: %s %s", r.Method, r.URI)
		}
	}
	src := map[string]string{}
	for _, l := range links["http://spa.example/"] {
		src[l.URL.RequestURI()] = l.Source
	}
	// An element picked for a mousedown, mouseup or pointerdown listener
	// gets the events of a real click (el.click() fired click alone).
	for uri, want := range map[string]string{"/menu/open": "render dom", "/menu/nav": "render click", "/search?q=default&lang=en": "render form", "/filter?tag=go": "render form",
		"/from/mousedown": "render dom", "/from/mouseup": "render dom", "/from/pointerdown": "render dom"} {
		if src[uri] != want {
			t.Errorf("%s: got Source %q, want %q (links %v)", uri, src[uri], want, src)
		}
	}
}

// TestRenderBodyCapAndTimeout: the browser's requests get the crawl's body
// cap and request timeout: a fetch of a body past WithMaxBodySize gets at
// most the cap, a fetch of a server that stalls fails at
// WithRequestTimeout.
func TestRenderBodyCapAndTimeout(t *testing.T) {
	needBrowser(t)
	site := crawltest.Start(t)
	h := site.Host("spa.example")
	h.Body("/", "text/html", `<!doctype html><body><script>
const add = (p) => { const a = document.createElement("a"); a.href = p; document.body.appendChild(a); };
fetch("/" + "big").then(r => r.text()).then(t => add("/len/" + t.length), () => add("/len/failed"));
fetch("/" + "stall").then(() => add("/stall/answered"), () => add("/stall/failed"));
</script></body></html>`)
	h.Body("/big", "text/plain", strings.Repeat("x", 200<<10))
	h.Handle("/stall", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(20 * time.Second):
		}
	}))
	res, _, _ := crawlRendered(t, site, render.Options{Clicks: -1}, "http://spa.example/",
		crawl.WithRobots(false), crawl.WithMaxBodySize(64<<10), crawl.WithRequestTimeout(time.Second), crawl.WithMaxTries(1))
	var lens []string
	for u := range res {
		if strings.Contains(u, "/len/") || strings.Contains(u, "/stall/") {
			lens = append(lens, strings.TrimPrefix(u, "http://spa.example"))
		}
	}
	slices.Sort(lens)
	if want := []string{"/len/65536", "/stall/failed"}; !slices.Equal(lens, want) {
		t.Errorf("what the page's fetches got: %v, want %v", lens, want)
	}
}

// TestRenderPerRun: cookies and storage are a Run's own: what a page
// stores in one Run, the same page does not find in the next, with the
// same Renderer.
func TestRenderPerRun(t *testing.T) {
	needBrowser(t)
	site := crawltest.Start(t)
	h := site.Host("spa.example")
	h.Body("/", "text/html", `<!doctype html><body><script>
const add = (p) => { const a = document.createElement("a"); a.href = p; document.body.appendChild(a); };
if (document.cookie.includes("seen=1")) add("/" + "cookie/kept");
if (localStorage.getItem("seen")) add("/" + "storage/kept");
document.cookie = "seen=1; max-age=3600";
localStorage.setItem("seen", "1");
</script></body></html>`)
	r := render.New(render.Options{Clicks: -1, Quiet: 200 * time.Millisecond})
	for run := range 2 {
		c, err := crawl.New(crawl.WithHTTPClient(site.Client()), crawl.WithRobots(false), crawl.WithRenderer(r, crawl.RenderAll))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Run(context.Background(), "http://spa.example/"); err != nil {
			t.Fatalf("Run %d: %v", run, err)
		}
	}
	if n := h.Count("/"); n != 2 {
		t.Fatalf("/ fetched %d times, want 2 (once a Run)", n)
	}
	for _, p := range []string{"/cookie/kept", "/storage/kept"} {
		if n := h.Count(p); n != 0 {
			t.Errorf("%s: got %d requests, want 0: the second Run saw the first's", p, n)
		}
	}
}

// counting is a Renderer that counts the pages its sessions render.
type counting struct {
	crawl.Renderer
	n *atomic.Int64
}

func (c counting) Open(ctx context.Context) (crawl.RenderSession, error) {
	s, err := c.Renderer.Open(ctx)
	if err != nil {
		return nil, err
	}
	return countingSession{s, c.n}, nil
}

type countingSession struct {
	crawl.RenderSession
	n *atomic.Int64
}

func (s countingSession) Render(ctx context.Context, p *crawl.RenderPage) (*crawl.Rendered, error) {
	s.n.Add(1)
	return s.RenderSession.Render(ctx, p)
}

// TestRenderAutoDocs crawls a real documentation tree, Go's own (GOROOT/doc:
// the spec, the memory model, the assembler guide), served as files: with
// RenderAuto no page is rendered; with RenderAll every HTML page is.
func TestRenderAutoDocs(t *testing.T) {
	needBrowser(t)
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Skipf("go env GOROOT: %v", err)
	}
	srv := httptest.NewServer(http.FileServer(http.Dir(filepath.Join(strings.TrimSpace(string(out)), "doc"))))
	defer srv.Close()
	for _, tt := range []struct {
		policy crawl.RenderPolicy
		name   string
	}{{crawl.RenderAuto, "auto"}, {crawl.RenderAll, "all"}} {
		var n atomic.Int64
		html := 0
		var mu sync.Mutex
		c, err := crawl.New(crawl.WithRobots(false),
			crawl.WithRenderer(counting{render.New(render.Options{Clicks: -1, Quiet: 100 * time.Millisecond}), &n}, tt.policy),
			crawl.WithPageHook(func(p *crawl.Page) {
				if p.ContentType == "text/html" && p.Status == 200 {
					mu.Lock()
					html++
					mu.Unlock()
				}
			}))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Run(context.Background(), srv.URL+"/"); err != nil {
			t.Fatal(err)
		}
		want := 0
		if tt.policy == crawl.RenderAll {
			want = html
		}
		if html < 4 || int(n.Load()) != want {
			t.Errorf("%s: rendered %d of %d HTML pages, want %d (and at least 4 pages)", tt.name, n.Load(), html, want)
		}
	}
}

// TestRenderBrowserCrash: the browser killed mid-crawl (as the OOM killer
// would) is started anew, the page it died under rendered again in it, and
// the crawl finds what the later pages' scripts build; no process of
// either browser outlives Run, nor any file of theirs: Chromium killed
// leaves a directory in TMPDIR, which the browsers' TMPDIR of their own
// takes (448 such directories were left in /tmp before, one a browser).
func TestRenderBrowserCrash(t *testing.T) {
	needBrowser(t)
	// Short: Chromium's socket path must fit a Unix socket's 108 bytes.
	tmp, err := os.MkdirTemp("", "rt")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	t.Setenv("TMPDIR", tmp)
	site := crawltest.Start(t)
	h := site.Host("spa.example")
	build := func(next string) string {
		return `<!doctype html><body><script>
const a = document.createElement("a"); a.href = "/" + ` + next + `; document.body.appendChild(a);
</script></body></html>`
	}
	h.Body("/", "text/html", build(`["one"].join("")`))
	trees := []map[int]string{}
	h.Handle("/one", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The crawler fetches the page, then has it rendered: the
		// browser is killed in between.
		tree := browserTree(t, os.Getpid())
		trees = append(trees, tree)
		for pid, cmdline := range tree {
			if !strings.Contains(cmdline, "--type=") {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, build(`["two"].join("")`))
	}))
	h.Handle("/two", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		trees = append(trees, browserTree(t, os.Getpid()))
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, build(`["three"].join("")`))
	}))
	h.Page("/three")
	res, _, _ := crawlRendered(t, site, render.Options{Tabs: 1, Clicks: -1}, "http://spa.example/",
		crawl.WithRobots(false), crawl.WithWorkers(1))
	for _, p := range []string{"/", "/one", "/two", "/three"} {
		if r, ok := res["http://spa.example"+p]; !ok || r.Err != nil {
			t.Errorf("%s: got Result %+v (present %v), want one without Err", p, r, ok)
		}
	}
	if len(trees) != 2 || len(trees[0]) < 2 || len(trees[1]) < 2 {
		t.Fatalf("got the browser process trees %v, want two of at least 2 processes", trees)
	}
	for pid := range trees[1] {
		if _, ok := trees[0][pid]; ok {
			t.Errorf("process %d of the first browser is in the second", pid)
		}
	}
	for i, tree := range trees {
		if pids := alive(tree); len(pids) > 0 {
			t.Errorf("processes of browser %d after Run returned: %v", i+1, pids)
		}
	}
	if left, err := os.ReadDir(tmp); err != nil || len(left) > 0 {
		var names []string
		for _, e := range left {
			names = append(names, e.Name())
		}
		t.Errorf("TMPDIR after Run returned: %v (error %v), want it empty", names, err)
	}
}

// TestRenderHostWorkers: the browser's requests to a host and the crawl's
// own count together against WithHostWorkers: with 2, one worker renders
// a page whose script fetches 8 URLs at once while the other fetches 12
// other roots of the host, and the host never has more than 2 requests in
// flight.
func TestRenderHostWorkers(t *testing.T) {
	needBrowser(t)
	site := crawltest.Start(t)
	h := site.Host("spa.example")
	h.Latency(40 * time.Millisecond)
	roots := busyHost(h, "")
	res, _, _ := crawlRendered(t, site, render.Options{Clicks: -1}, roots,
		crawl.WithRobots(false), crawl.WithWorkers(2), crawl.WithHostWorkers(2))
	if _, ok := res["http://spa.example/done"]; !ok {
		t.Fatalf("/done not found: the fetches did not all end")
	}
	if p := h.Peak(); p > 2 {
		t.Errorf("peak requests in flight to the host: got %d, want at most 2", p)
	}
}

// TestRenderHostilePage: a page that builds a DOM of 20 million
// characters (hidden, so that laying it out does not take the browser
// minutes) is read up to MaxDOM, its Result without error, and the crawl
// goes on to the page after it.
func TestRenderHostilePage(t *testing.T) {
	needBrowser(t)
	for _, tt := range []struct {
		name, script string
		check        func(p *crawl.Page) string
	}{
		{"dom", `const p = document.createElement("p"); p.style.display = "none"; p.textContent = "x".repeat(20000000); document.body.appendChild(p);`,
			func(p *crawl.Page) string {
				if n := len(p.DOM); n < 1<<20 || n > render.MaxDOM*3 {
					return fmt.Sprintf("the DOM read: %d bytes, want over 1 MiB, and at most MaxDOM (%d) characters", n, render.MaxDOM)
				}
				return ""
			}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			site := crawltest.Start(t)
			h := site.Host("spa.example")
			h.Body("/", "text/html", `<!doctype html><body><a href="/after">after</a><script>`+tt.script+`</script></body></html>`)
			h.Page("/after")
			var mu sync.Mutex
			var problem string
			c, err := crawl.New(crawl.WithHTTPClient(site.Client()), crawl.WithRobots(false), crawl.WithMaxLinksPerPage(100),
				crawl.WithRenderer(render.New(render.Options{Clicks: -1, Quiet: 200 * time.Millisecond}), crawl.RenderAll),
				crawl.WithResultHook(func(r crawl.Result) {
					if r.Err != nil {
						t.Errorf("%s: %v", r.URL, r.Err)
					}
				}),
				crawl.WithPageHook(func(p *crawl.Page) {
					if p.URL.Path == "/" {
						mu.Lock()
						problem = tt.check(p)
						mu.Unlock()
					}
				}))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Run(context.Background(), "http://spa.example/"); err != nil {
				t.Fatal(err)
			}
			if problem != "" {
				t.Error(problem)
			}
			if n := h.Count("/after"); n != 1 {
				t.Errorf("/after: %d requests, want 1: the crawl did not go on", n)
			}
		})
	}
}

// TestRenderRobotsCut: a robots.txt that the browser's request needed, its
// fetch cut by the page's deadline, is not taken for an unavailable one:
// the next page's request to the host asks for it again, and is allowed.
func TestRenderRobotsCut(t *testing.T) {
	needBrowser(t)
	site := crawltest.Start(t)
	h := site.Host("spa.example")
	other := site.Host("other.example")
	var robotsAsked atomic.Int32
	other.Handle("/robots.txt", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if robotsAsked.Add(1) == 1 {
			select { // past the first page's render deadline
			case <-r.Context().Done():
			case <-time.After(20 * time.Second):
			}
			return
		}
		io.WriteString(w, "User-agent: *\nAllow: /\n")
	}))
	page := func(n string) string {
		return `<!doctype html><body><a href="/two">two</a><script>
const add = (p) => { const a = document.createElement("a"); a.href = p; document.body.appendChild(a); };
fetch("http://other" + ".example/x` + n + `", {mode: "no-cors"}).then(() => add("/ok` + n + `"), () => add("/failed` + n + `"));
</script></body></html>`
	}
	h.Body("/", "text/html", page("1"))
	h.Body("/two", "text/html", page("2"))
	for _, p := range []string{"/ok1", "/failed1", "/ok2", "/failed2"} {
		h.Page(p)
	}
	other.Body("/x1", "text/plain", "x")
	other.Body("/x2", "text/plain", "x")
	res, _, _ := crawlRendered(t, site, render.Options{Clicks: -1, Timeout: 2 * time.Second}, "http://spa.example/",
		crawl.WithWorkers(1), crawl.WithRequisites(true))
	if r := res["http://spa.example/"]; !errors.Is(r.Err, crawl.ErrRender) {
		t.Errorf("/: got Err %v, want ErrRender (its render cut while robots.txt stalled)", r.Err)
	}
	if _, ok := res["http://spa.example/ok2"]; !ok {
		t.Errorf("the second page's fetch of other.example failed: robots.txt asked %d times; Results %v", robotsAsked.Load(), slices.Collect(maps.Keys(res)))
	}
}

// TestRenderOpenFails: a Renderer whose browser does not start fails the
// Run at its start, before any request, with an error wrapping ErrRender;
// with no browser on PATH, wrapping render.ErrNoBrowser too.
func TestRenderOpenFails(t *testing.T) {
	// A program that starts and never answers.
	mute := filepath.Join(t.TempDir(), "chromium")
	if err := os.WriteFile(mute, []byte("#!/bin/sh\nexec sleep 120\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name      string
		opts      render.Options
		path      bool // PATH emptied
		noBrowser bool
	}{
		{"no such program", render.Options{Exec: filepath.Join(t.TempDir(), "chromium")}, false, false},
		{"none on PATH", render.Options{}, true, true},
		{"never answers", render.Options{Exec: mute, Timeout: 2 * time.Second}, false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.path {
				t.Setenv("PATH", t.TempDir())
			}
			site := crawltest.Start(t)
			site.Page("/")
			c, err := crawl.New(crawl.WithHTTPClient(site.Client()), crawl.WithRenderer(render.New(tt.opts), crawl.RenderAll))
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			_, err = c.Run(ctx, "http://spa.example/")
			if !errors.Is(err, crawl.ErrRender) || errors.Is(err, render.ErrNoBrowser) != tt.noBrowser {
				t.Errorf("Run: got %v, want an error wrapping ErrRender (and ErrNoBrowser: %v)", err, tt.noBrowser)
			}
			if n := site.Total(); n != 0 {
				t.Errorf("the site got %d requests, want 0", n)
			}
		})
	}
}

// TestRenderStuckBrowser: a page that keeps the browser busy past its
// deadline (100,000 history.pushState calls) is cut; the next
// page's tab does not open in time, so the browser is killed and a new one
// renders that page; Run returns, and nothing of the first browser is left.
func TestRenderStuckBrowser(t *testing.T) {
	needBrowser(t)
	site := crawltest.Start(t)
	h := site.Host("spa.example")
	var trees []map[int]string
	h.Body("/", "text/html", `<!doctype html><body><a href="/next">next</a><script>
for (let i = 0; i < 100000; i++) history.pushState({}, "", "/" + ["h", i].join("/"));
</script></body></html>`)
	h.Handle("/next", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		trees = append(trees, browserTree(t, os.Getpid()))
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, `<!doctype html><body><script>
const a = document.createElement("a"); a.href = "/" + ["after"].join(""); document.body.appendChild(a);
</script></body></html>`)
	}))
	h.Page("/after")
	res, _, _ := crawlRendered(t, site, render.Options{Tabs: 1, Clicks: -1, Timeout: 3 * time.Second}, "http://spa.example/",
		crawl.WithRobots(false), crawl.WithWorkers(1), crawl.WithMaxLinksPerPage(10))
	if r := res["http://spa.example/"]; !errors.Is(r.Err, crawl.ErrRender) {
		t.Errorf("/: got Err %v, want ErrRender", r.Err)
	}
	if _, ok := res["http://spa.example/after"]; !ok {
		t.Errorf("/after not found: /next was not rendered (Results %v)", slices.Collect(maps.Keys(res)))
	}
	for _, tree := range trees {
		if pids := alive(tree); len(pids) > 0 {
			t.Errorf("browser processes after Run returned: %v", pids)
		}
	}
}

// TestRenderDialogs: an alert, or a confirm a click opens, is dismissed as
// a user would: the page's scripts go on, the render ends without waiting
// for its deadline, and what the scripts built is followed.
func TestRenderDialogs(t *testing.T) {
	needBrowser(t)
	site := crawltest.Start(t)
	h := site.Host("spa.example")
	h.Body("/", "text/html", `<!doctype html><body><a href="/confirm">next</a><script>
const a = document.createElement("a"); a.href = "/" + ["before", "alert"].join("-"); document.body.appendChild(a);
alert("Welcome!");
const b = document.createElement("a"); b.href = "/" + ["after", "alert"].join("-"); document.body.appendChild(b);
</script></body></html>`)
	h.Body("/confirm", "text/html", `<!doctype html><body><button onclick="if (confirm('Leave?')) location.href = '/' + ['left'].join('')">go</button><script>
const a = document.createElement("a"); a.href = "/" + ["by", "script"].join("-"); document.body.appendChild(a);
prompt("Your name?");
</script></body></html>`)
	for _, p := range []string{"/before-alert", "/after-alert", "/by-script", "/left"} {
		h.Page(p)
	}
	res, _, _ := crawlRendered(t, site, render.Options{Timeout: 15 * time.Second}, "http://spa.example/", crawl.WithRobots(false))
	for _, u := range []string{"http://spa.example/", "http://spa.example/confirm"} {
		if r, ok := res[u]; !ok || r.Err != nil {
			t.Errorf("%s: got %+v, want a Result without error (the dialog dismissed)", u, r)
		}
	}
	for _, p := range []string{"/before-alert", "/after-alert", "/by-script"} {
		if n := h.Count(p); n != 1 {
			t.Errorf("%s: %d requests, want 1: what the scripts built was followed", p, n)
		}
	}
	if n := h.Count("/left"); n != 0 {
		t.Errorf("/left: %d requests, want 0: the confirm was dismissed", n)
	}
}

// TestRenderNoWebRTC: a page's WebRTC, which sends UDP to literal
// addresses (a STUN server here, on loopback), reaches no address: the
// browser itself sends nothing.
func TestRenderNoWebRTC(t *testing.T) {
	needBrowser(t)
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	var packets atomic.Int64
	go func() {
		buf := make([]byte, 2048)
		for {
			if _, _, err := pc.ReadFrom(buf); err != nil {
				return
			}
			packets.Add(1)
		}
	}()
	site := crawltest.Start(t)
	h := site.Host("spa.example")
	h.Body("/", "text/html", `<!doctype html><body><script>
const c = new RTCPeerConnection({iceServers: [{urls: "stun:`+pc.LocalAddr().String()+`"}]});
c.createDataChannel("d");
c.createOffer().then((o) => c.setLocalDescription(o));
// Keep the render going while ICE gathers.
setTimeout(() => fetch("/" + ["later"].join("")), 300);
</script></body></html>`)
	h.Body("/later", "text/plain", "ok")
	crawlRendered(t, site, render.Options{Quiet: time.Second}, "http://spa.example/", crawl.WithRobots(false))
	if h.Count("/later") != 1 {
		t.Errorf("/later: %d requests, want 1: the page's scripts did not run on", h.Count("/later"))
	}
	time.Sleep(200 * time.Millisecond)
	if n := packets.Load(); n != 0 {
		t.Errorf("the STUN server got %d UDP packets from the page, want 0", n)
	}
}

// TestRenderDocumentURL: the DOM's relative links resolve against the
// document's URL as the browser had it when the DOM was read (a pushState
// moved it), and the links in open shadow roots, which the DOM's
// serialisation leaves out, are followed.
func TestRenderDocumentURL(t *testing.T) {
	needBrowser(t)
	site := crawltest.Start(t)
	h := site.Host("spa.example")
	h.Body("/spa/", "text/html", `<!doctype html><body><div id="host"></div><script>
history.pushState({}, "", "/spa/" + ["section", "list"].join("/"));
const a = document.createElement("a"); a.href = ["item1", "html"].join("."); document.body.appendChild(a);
const root = document.getElementById("host").attachShadow({mode: "open"});
root.innerHTML = '<a href="/' + ['open', 'shadow'].join('-') + '">in the shadow</a>';
</script></body></html>`)
	for _, p := range []string{"/spa/section/item1.html", "/spa/item1.html", "/spa/section/list", "/open-shadow"} {
		h.Page(p)
	}
	crawlRendered(t, site, render.Options{}, "http://spa.example/spa/", crawl.WithRobots(false), crawl.WithMaxDepth(1))
	for p, want := range map[string]int{"/spa/section/item1.html": 1, "/spa/item1.html": 0, "/open-shadow": 1} {
		if n := h.Count(p); n != want {
			t.Errorf("%s: %d requests, want %d", p, n, want)
		}
	}
}

// TestRenderRobotsThenDelay: on a host the crawl has no rules of, the
// robots.txt fetched for the browser's request is a request to the host:
// the browser's request waits the host's Crawl-delay after it, as a
// crawl's page does after its robots.txt.
func TestRenderRobotsThenDelay(t *testing.T) {
	needBrowser(t)
	site := crawltest.Start(t)
	h := site.Host("spa.example")
	h.Body("/", "text/html", `<!doctype html><body><img src="http://cdn.example/a.png"></body></html>`)
	cdn := site.Host("cdn.example")
	cdn.Robots("User-agent: *\nCrawl-delay: 1\n")
	cdn.Body("/a.png", "image/png", "png")
	const floor = time.Second
	crawlRendered(t, site, render.Options{Clicks: -1}, "http://spa.example/", crawl.WithRequisites(true), crawl.WithMaxDepth(0))
	reqs := cdn.Requests()
	slices.SortFunc(reqs, func(a, b crawltest.Request) int { return a.Time.Compare(b.Time) })
	if len(reqs) < 2 || reqs[0].URI != "/robots.txt" {
		t.Fatalf("cdn.example got %v, want its robots.txt then /a.png", reqs)
	}
	// 20 ms for a loaded machine's scheduling.
	if gap := reqs[1].Time.Sub(reqs[0].Time); gap < floor-20*time.Millisecond {
		t.Errorf("%s came %v after the robots.txt, want at least its Crawl-delay %v", reqs[1].URI, gap, floor)
	}
}

// TestRenderNewWindow: a new window the page opens past the hook on
// window.open (a link with a target, clicked by a handler; a frame's own
// window.open) is recorded as a navigation, and crawled.
func TestRenderNewWindow(t *testing.T) {
	needBrowser(t)
	site := crawltest.Start(t)
	h := site.Host("spa.example")
	h.Body("/", "text/html", `<!doctype html><body><iframe id="f" src="/frame"></iframe>
<button onclick="const a = document.createElement('a'); a.target = '_blank'; a.href = '/' + ['popup', 'target'].join('-'); document.body.appendChild(a); a.click(); a.remove()">go</button>
<script>
document.getElementById("f").addEventListener("load", () => {
  try { document.getElementById("f").contentWindow.open("/" + ["frame", "open"].join("-")); } catch (e) {}
});
</script></body></html>`)
	h.Body("/frame", "text/html", `<!doctype html><body>frame</body></html>`)
	h.Page("/popup-target")
	h.Page("/frame-open")
	res, _, _ := crawlRendered(t, site, render.Options{}, "http://spa.example/", crawl.WithRobots(false), crawl.WithMaxDepth(1))
	if _, ok := res["http://spa.example/popup-target"]; !ok {
		t.Errorf("/popup-target, opened in a new window by a click's link: not crawled (Results %v)", slices.Collect(maps.Keys(res)))
	}
	if _, ok := res["http://spa.example/frame-open"]; !ok {
		t.Errorf("/frame-open, a frame's window.open: not crawled (Results %v)", slices.Collect(maps.Keys(res)))
	}
}

// A page whose path holds an octet the crawler sends as it is and
// Chromium escapes ("|", which Chromium asks for as "%7C") is the page,
// served from the crawler's response: rendered, not taken for a
// navigation away (which failed its render and queued the escaped URL,
// fetched a second time).
func TestRenderEscapedPath(t *testing.T) {
	needBrowser(t)
	site := crawltest.Start(t)
	h := site.Host("spa.example")
	var mu sync.Mutex
	paths := map[string]int{}
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths[r.RequestURI]++
		mu.Unlock()
		switch r.URL.Path {
		case "/pipe|x":
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, `<!doctype html><body><script>
const a = document.createElement("a"); a.href = "/" + ["built"].join(""); document.body.appendChild(a);
</script></body></html>`)
		default:
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, "<p>a page</p>")
		}
	})
	h.Handle("/pipe|x", handler)
	h.Handle("/built", handler)
	res, _, _ := crawlRendered(t, site, render.Options{Clicks: -1}, "http://spa.example/pipe|x", crawl.WithRobots(false))
	if r, ok := res["http://spa.example/pipe|x"]; !ok || r.Err != nil {
		t.Errorf("/pipe|x: Result %+v (present %v), want one without Err", r, ok)
	}
	if _, ok := res["http://spa.example/built"]; !ok {
		t.Errorf("/built, which the page's script makes, not found: the page was not rendered (Results %v)", res)
	}
	mu.Lock()
	defer mu.Unlock()
	if paths["/pipe|x"] != 1 || paths["/pipe%7Cx"] != 0 {
		t.Errorf("requests by path %v; want /pipe|x once, /pipe%%7Cx never", paths)
	}
}

// Under a TMPDIR too deep for Chromium's socket (a Unix socket's path
// holds 108 bytes), the browser's directory is made in /tmp: the crawl
// renders, and leaves nothing in TMPDIR (before, a TMPDIR of 50 bytes
// kept a directory of Chromium's a Run, and one of 70 failed the start).
func TestRenderDeepTmpdir(t *testing.T) {
	needBrowser(t)
	deep, err := os.MkdirTemp("", "rt")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(deep) })
	deep = filepath.Join(deep, strings.Repeat("d", 80))
	if err := os.Mkdir(deep, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", deep)
	site := crawltest.Start(t)
	h := site.Host("spa.example")
	h.Body("/", "text/html", `<!doctype html><body><script>
const a = document.createElement("a"); a.href = "/" + ["built"].join(""); document.body.appendChild(a);
</script></body></html>`)
	h.Page("/built")
	res, _, _ := crawlRendered(t, site, render.Options{Clicks: -1}, "http://spa.example/", crawl.WithRobots(false))
	if _, ok := res["http://spa.example/built"]; !ok {
		t.Errorf("/built not found: the page was not rendered under a deep TMPDIR (Results %v)", res)
	}
	if left, _ := os.ReadDir(deep); len(left) > 0 {
		t.Errorf("%d entries left in TMPDIR, want none", len(left))
	}
}

// A cross-origin GET that needs a CORS preflight (a header of its own) is
// made: the preflight is answered in the browser, sent to no one, and the
// GET goes through the crawler; before, the OPTIONS was refused as any
// method but GET, and the GET never made (the link its JSON held lost).
func TestRenderCORSPreflight(t *testing.T) {
	needBrowser(t)
	site := crawltest.Start(t)
	h := site.Host("spa.example")
	h.Body("/", "text/html", `<!doctype html><body><script>
fetch("http://api.example/" + ["data"].join(""), {headers: {"X-Requested-With": "app"}})
  .then(r => r.json()).then(d => {
    const a = document.createElement("a"); a.href = d.next; document.body.appendChild(a);
  });
</script></body></html>`)
	h.Page("/from/cors")
	api := site.Host("api.example")
	api.Handle("/data", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Access-Control-Allow-Origin", "*")
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"next": "/from/cors"}`)
	}))
	res, _, _ := crawlRendered(t, site, render.Options{Clicks: -1}, "http://spa.example/",
		crawl.WithRobots(false), crawl.WithRequisites(true))
	if _, ok := res["http://spa.example/from/cors"]; !ok {
		t.Errorf("/from/cors, which the preflighted GET's JSON names, not found (Results %v)", res)
	}
	// The GET by the browser, through the crawler, and again as the
	// requisite WithRequisites queues (as docs/rendering.md says); no
	// OPTIONS.
	var methods []string
	for _, r := range api.Requests() {
		methods = append(methods, r.Method+" "+r.URI)
	}
	if !slices.Equal(methods, []string{"GET /data", "GET /data"}) {
		t.Errorf("api.example got %q, want GET /data twice and no OPTIONS", methods)
	}
}
