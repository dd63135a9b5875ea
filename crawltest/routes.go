package crawltest

import (
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// BadLocation is a Location that net/url cannot parse (the host's IPv6
// bracket is never closed), for a redirect a client cannot follow:
//
//	site.Redirect("/broken", http.StatusFound, crawltest.BadLocation)
const BadLocation = "http://[::1/broken"

// Host is one virtual host of a Site: the routes declared through it
// serve the requests whose Host header names it, and it reports the
// requests it was sent. Paths and routes are as for the Site's methods of
// the same names. A Host is safe for concurrent use.
type Host struct {
	site    *Site
	name    string // hostKey form; "" for the Site's routes for every host
	routes  map[string]*Route
	latency time.Duration
}

// Name returns the host name as the Site compares it: lower case, without
// a port.
func (h *Host) Name() string { return h.name }

// URL returns the URL of path on this host name, such as
// "http://a.example/x". Only a client that dials through the Site's
// DialContext (Site.Client) reaches it.
func (h *Host) URL(path string) string {
	name := h.name
	if strings.Contains(name, ":") {
		name = "[" + name + "]"
	}
	return "http://" + name + path
}

// Latency makes every request to this host wait d before it is answered,
// on top of the Site's and the Route's latency. Zero removes it.
func (h *Host) Latency(d time.Duration) {
	h.site.mu.Lock()
	h.latency = d
	h.site.mu.Unlock()
}

// Page declares an HTML page at path on this host linking to each of
// links; see Site.Page.
func (h *Host) Page(path string, links ...string) *Route {
	return h.Handle(path, page(path, links))
}

// Body declares a response at path on this host with the given
// Content-Type and body; see Site.Body.
func (h *Host) Body(path, contentType, body string) *Route {
	return h.Handle(path, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if contentType != "" {
			setDefault(w.Header(), "Content-Type", contentType)
		} else if _, ok := w.Header()["Content-Type"]; !ok {
			w.Header()["Content-Type"] = nil // a nil value stops net/http sniffing one
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, body)
	}))
}

// Redirect declares a redirect at path on this host; see Site.Redirect.
func (h *Host) Redirect(path string, code int, location string) *Route {
	return h.Handle(path, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if location != "" {
			w.Header().Set("Location", location)
		}
		w.Header().Set("Content-Length", "0")
		w.WriteHeader(code)
	}))
}

// Robots declares /robots.txt on this host; see Site.Robots.
func (h *Host) Robots(body string) *Route {
	return h.Body("/robots.txt", "text/plain; charset=utf-8", body)
}

// Handle declares handler as the handler of path on this host; see
// Site.Handle.
func (h *Host) Handle(path string, handler http.Handler) *Route {
	if !strings.HasPrefix(path, "/") {
		panic(fmt.Sprintf("crawltest: path %q does not start with /", path))
	}
	rt := &Route{site: h.site, h: handler}
	h.site.mu.Lock()
	h.routes[path] = rt
	h.site.mu.Unlock()
	return rt
}

// Peak returns the largest number of requests to this host the Site has
// had in flight at once since it started or was Reset.
func (h *Host) Peak() int { return h.site.peakOf(h.name) }

// Requests returns the requests sent to this host, in the order they
// arrived; see Site.Requests.
func (h *Host) Requests() []Request { return h.site.requests(h.name) }

// Count returns how many requests for the request URI (path and query, as
// in Site.Count) this host was sent.
func (h *Host) Count(uri string) int {
	n := 0
	for _, r := range h.Requests() {
		if r.URI == uri {
			n++
		}
	}
	return n
}

// match returns the route for u, or nil: the exact request URI, then the
// exact path, then the longest subtree pattern ("/dir/") holding the path;
// "/" is not a subtree.
// The caller holds site.mu.
func (h *Host) match(u *url.URL) *Route {
	if u.RawQuery != "" {
		if rt := h.routes[u.Path+"?"+u.RawQuery]; rt != nil {
			return rt
		}
	}
	if rt := h.routes[u.Path]; rt != nil {
		return rt
	}
	var best *Route
	bestLen := 0
	for p, rt := range h.routes {
		if p != "/" && strings.HasSuffix(p, "/") && strings.HasPrefix(u.Path, p) && len(p) > bestLen {
			best, bestLen = rt, len(p)
		}
	}
	return best
}

// Route is a declared path: its methods change how it is answered and
// return the Route, so that they chain:
//
//	site.Page("/slow", "/").Latency(time.Second).Header("Cache-Control", "no-store")
//
// A Route is safe for concurrent use; a change applies to the requests
// that arrive after it.
type Route struct {
	site    *Site
	h       http.Handler
	status  int
	header  http.Header
	latency time.Duration
	first   int          // requests answered by firstH before h
	firstH  http.Handler // nil when first is 0
	served  int          // requests answered so far
}

// Status makes the route answer with the status code instead of its own,
// keeping its body: site.Page("/gone").Status(http.StatusGone) is an HTML
// page with status 410.
func (rt *Route) Status(code int) *Route {
	rt.site.mu.Lock()
	rt.status = code
	rt.site.mu.Unlock()
	return rt
}

// Header adds a response header; several calls with one key send several
// values. A Content-Type given here replaces the one of Page or Body.
func (rt *Route) Header(key, value string) *Route {
	rt.site.mu.Lock()
	if rt.header == nil {
		rt.header = http.Header{}
	}
	rt.header.Add(key, value)
	rt.site.mu.Unlock()
	return rt
}

// Latency makes every request to the route wait d before it is answered,
// on top of the Site's and the Host's latency. Zero removes it.
func (rt *Route) Latency(d time.Duration) *Route {
	rt.site.mu.Lock()
	rt.latency = d
	rt.site.mu.Unlock()
	return rt
}

// First makes h answer the route's first n requests (those it answered
// before First count too), and the route's own response the ones after: a
// page that fails twice and then works, for a test of retries:
//
//	site.Page("/flaky", "/").First(2, crawltest.Status(http.StatusServiceUnavailable))
//
// The route's Status and Header do not apply to h; its Latency does.
func (rt *Route) First(n int, h http.Handler) *Route {
	rt.site.mu.Lock()
	rt.first, rt.firstH = n, h
	rt.site.mu.Unlock()
	return rt
}

// next returns the handler of the route's next request and its latency,
// and counts the request. The caller holds site.mu.
func (rt *Route) next() (http.Handler, time.Duration) {
	rt.served++
	if rt.served <= rt.first {
		return rt.firstH, rt.latency
	}
	if rt.status == 0 && rt.header == nil {
		return rt.h, rt.latency
	}
	status, header, h := rt.status, rt.header.Clone(), rt.h
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for k, v := range header {
			w.Header()[k] = v
		}
		if status != 0 {
			w = &statusWriter{ResponseWriter: w, code: status}
		}
		h.ServeHTTP(w, r)
	}), rt.latency
}

// statusWriter replaces the status code a handler writes.
type statusWriter struct {
	http.ResponseWriter
	code  int
	wrote bool
}

func (w *statusWriter) WriteHeader(int) {
	if !w.wrote {
		w.wrote = true
		w.ResponseWriter.WriteHeader(w.code)
	}
}

func (w *statusWriter) Write(p []byte) (int, error) {
	w.WriteHeader(0)
	return w.ResponseWriter.Write(p)
}

// Flush lets handlers that assert http.Flusher flush through the wrapper.
func (w *statusWriter) Flush() {
	w.WriteHeader(0)
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

// Unwrap lets http.ResponseController reach the connection (Hijack,
// deadlines) through the wrapper.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// page returns the handler of an HTML page titled path linking to links.
func page(path string, links []string) http.Handler {
	var b strings.Builder
	b.WriteString("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>")
	b.WriteString(html.EscapeString(path))
	b.WriteString("</title></head><body>\n")
	for _, l := range links {
		e := html.EscapeString(l)
		fmt.Fprintf(&b, "<a href=\"%s\">%s</a>\n", e, e)
	}
	b.WriteString("</body></html>\n")
	body := b.String()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		setDefault(w.Header(), "Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, body)
	})
}

// setDefault sets a header unless a Route's Header already did.
func setDefault(h http.Header, key, value string) {
	if _, ok := h[http.CanonicalHeaderKey(key)]; !ok {
		h.Set(key, value)
	}
}
