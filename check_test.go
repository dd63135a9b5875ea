package crawl_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/asyncrawl/crawl"
)

// WithCheckExternal checks the links the crawl does not follow: each once,
// with HEAD (GET where HEAD is refused), without following their links.
func TestCheckExternal(t *testing.T) {
	var mu sync.Mutex
	var methods []string
	ext := newSite(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		methods = append(methods, r.Method+" "+r.URL.Path)
		mu.Unlock()
		switch r.URL.Path {
		case "/ok":
			htmlPage(`<a href="/deeper">deeper</a>`)(w, r)
		case "/nohead":
			if r.Method == http.MethodHead {
				w.WriteHeader(http.StatusMethodNotAllowed)
				return
			}
			htmlPage("fine")(w, r)
		default:
			http.NotFound(w, r)
		}
	}))
	// Another host name for the crawl's scope, on the same loopback.
	extURL := strings.Replace(ext.URL, "127.0.0.1", "localhost", 1)
	mux := http.NewServeMux()
	mux.Handle("/{$}", htmlPage(crawlerLinks(extURL+"/ok", extURL+"/missing", extURL+"/nohead", "/away")))
	mux.Handle("/away", http.RedirectHandler(extURL+"/ok", http.StatusFound))
	s := newSite(t, mux)
	for _, on := range []bool{false, true} {
		mu.Lock()
		methods = nil
		mu.Unlock()
		_, res, err := crawlSite(t, crawlerCtx(t), []string{s.URL + "/"}, crawl.WithCheckExternal(on))
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		got := strings.Join(sortedCopy(methods), ", ")
		mu.Unlock()
		if !on {
			if got != "" {
				t.Errorf("without WithCheckExternal the other host got %q, want nothing", got)
			}
			continue
		}
		if want := "GET /nohead, HEAD /missing, HEAD /nohead, HEAD /ok"; got != want {
			t.Errorf("the other host got %q, want %q (each once, HEAD first, nothing followed)", got, want)
		}
		for path, broken := range map[string]bool{"/ok": false, "/missing": true, "/nohead": false} {
			r, ok := res[extURL+path]
			if !ok || r.Broken() != broken {
				t.Errorf("%s: Result %+v (found %v), want Broken() %v", path, r, ok, broken)
			}
		}
	}
}

// A requisite on a host whose robots.txt answers 500 is not requested, so
// not broken: Broken is true only for what was tried and failed.
func TestBrokenRobotsUnavailable(t *testing.T) {
	ext := newSite(t, htmlPage("fine"))
	ext.setRobots("", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "busy", http.StatusInternalServerError)
	}))
	extURL := strings.Replace(ext.URL, "127.0.0.1", "localhost", 1)
	s := newSite(t, htmlPage(`<img src="`+extURL+`/a.png"><img src="`+extURL+`/b.png">`))
	_, res, err := crawlSite(t, crawlerCtx(t), []string{s.URL + "/"}, crawl.WithRequisites(true), crawl.WithMaxTries(1))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/a.png", "/b.png"} {
		r, ok := res[extURL+p]
		if !ok || !errors.Is(r.Err, crawl.ErrRobotsUnavailable) || r.Broken() {
			t.Errorf("%s: Result %+v (found %v), want robots.txt unavailable and Broken() false", p, r, ok)
		}
	}
	if got := ext.Requested(); len(got) != 0 || ext.robotsHits.Load() == 0 {
		t.Errorf("the other host was sent %v and robots.txt %d times, want only robots.txt", got, ext.robotsHits.Load())
	}
}

// TestCheckExternalGetAfterHead: where a host refuses HEAD, the GET a
// check sends then is a request of its own: it waits the host's delay
// after the HEAD, and counts in Result.Tries.
func TestCheckExternalGetAfterHead(t *testing.T) {
	type hit struct {
		method string
		at     time.Time
	}
	var mu sync.Mutex
	hits := map[string][]hit{}
	ext := newSite(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits[r.URL.Path] = append(hits[r.URL.Path], hit{r.Method, time.Now()})
		mu.Unlock()
		if r.Method == http.MethodHead {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		htmlPage("fine")(w, r)
	}))
	extURL := strings.Replace(ext.URL, "127.0.0.1", "localhost", 1)
	s := newSite(t, htmlPage(crawlerLinks(extURL+"/x0", extURL+"/x1")))
	const d = 300 * time.Millisecond
	_, res, err := crawlSite(t, crawlerCtx(t), []string{s.URL + "/"}, crawl.WithCheckExternal(true), crawl.WithHostDelay(d))
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, p := range []string{"/x0", "/x1"} {
		h := hits[p]
		if len(h) != 2 || h[0].method != http.MethodHead || h[1].method != http.MethodGet {
			t.Errorf("%s: got %v, want HEAD then GET", p, h)
			continue
		}
		// Each pause is drawn from [d/2, 3d/2]; 20 ms for a loaded
		// machine's scheduling.
		if gap := h[1].at.Sub(h[0].at); gap < d/2-20*time.Millisecond {
			t.Errorf("%s: the GET came %v after the HEAD, want at least %v (WithHostDelay %v)", p, gap, d/2, d)
		}
		if r := res[extURL+p]; r.Tries != 2 || r.Status != 200 {
			t.Errorf("%s: Result Tries %d, status %d; want 2 (HEAD and GET), 200", p, r.Tries, r.Status)
		}
	}
}

// TestCheckExternalCancelBeforeGet: a Run cancelled while a check waits
// the host's delay between its refused HEAD and its GET returns at once;
// the GET is not sent, and the URL goes back unfinished, without a Result.
func TestCheckExternalCancelBeforeGet(t *testing.T) {
	headed := make(chan struct{}, 1)
	var gets atomic.Int64
	ext := newSite(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodHead {
			select {
			case headed <- struct{}{}:
			default:
			}
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		gets.Add(1)
		htmlPage("fine")(w, r)
	}))
	extURL := strings.Replace(ext.URL, "127.0.0.1", "localhost", 1)
	s := newSite(t, htmlPage(crawlerLinks(extURL+"/x")))
	ctx, cancel := context.WithCancel(crawlerCtx(t))
	defer cancel()
	go func() { <-headed; cancel() }()
	began := time.Now()
	stats, res, err := crawlSite(t, ctx, []string{s.URL + "/"}, crawl.WithCheckExternal(true), crawl.WithHostDelay(20*time.Second), crawl.WithRobots(false))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: %v, want context.Canceled", err)
	}
	if d := time.Since(began); d > 5*time.Second {
		t.Errorf("Run returned %v after its start, want at once after the cancel (the pause is 10 to 30 s)", d)
	}
	if r, ok := res[extURL+"/x"]; ok {
		t.Errorf("%s: a Result %+v, want none: cut short, it goes back", extURL+"/x", r)
	}
	if n := gets.Load(); n != 0 || stats.Todo < 1 {
		t.Errorf("%d GETs sent, Todo %d; want none, and the URL left", n, stats.Todo)
	}
}
