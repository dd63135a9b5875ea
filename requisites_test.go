package crawl_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/asyncrawl/crawl"
)

// requisiteSite serves a page with every kind of link: navigation,
// requisites (an image, a script, a stylesheet that imports another and
// names a font, an image on another host) and references (a ping, a POST
// form).
func requisiteSite(t *testing.T) (*site, *httptest.Server) {
	cdn := newSite(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		fmt.Fprint(w, "png")
	}))
	mux := http.NewServeMux()
	mux.Handle("/{$}", htmlPage(`<html><head><link rel="stylesheet" href="/s.css"><script src="/app.js"></script></head>
<body><a href="/next" ping="/ping">next</a><img src="/logo.png" srcset="/logo2x.png 2x"><img src="`+cdn.URL+`/cdn.png">
<form method="post" action="/submit"><input name="q"></form></body></html>`))
	mux.Handle("/next", htmlPage(`<img src="/logo.png">`))
	css := func(body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/css")
			fmt.Fprint(w, body)
		}
	}
	mux.Handle("/s.css", css(`@import "/base.css"; body { background: url(/bg.png) }`))
	mux.Handle("/base.css", css(`@font-face { font-family: x; src: url("/font.woff2") }`))
	mux.HandleFunc("/{file}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		fmt.Fprint(w, "data")
	})
	return newSite(t, mux), cdn.Server
}

func TestRequisites(t *testing.T) {
	for _, tt := range []struct {
		name      string
		opts      []crawl.Option
		fetched   []string // on the site, robots.txt aside
		cdn, refs bool
	}{
		{"default", nil, []string{"/", "/next"}, false, false},
		{"requisites", []crawl.Option{crawl.WithRequisites(true)},
			[]string{"/", "/app.js", "/base.css", "/bg.png", "/font.woff2", "/logo.png", "/logo2x.png", "/next", "/s.css"}, true, false},
		{"references", []crawl.Option{crawl.WithReferences(true)}, []string{"/", "/next", "/ping", "/submit"}, false, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, cdn := requisiteSite(t)
			var mu sync.Mutex
			var links []crawl.Link
			hook := crawl.WithPageHook(func(p *crawl.Page) {
				if p.URL.Path == "/" && strings.HasPrefix(p.URL.String(), s.URL) {
					mu.Lock()
					links = append(links, p.Links...)
					mu.Unlock()
				}
			})
			_, res, err := crawlSite(t, crawlerCtx(t), []string{s.URL + "/"}, append(tt.opts, hook)...)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range s.Requested() {
				got = append(got, p)
			}
			if g, w := strings.Join(sortedCopy(got), " "), strings.Join(tt.fetched, " "); g != w {
				t.Errorf("fetched %q, want %q", g, w)
			}
			for _, p := range got {
				if n := s.Hits(p); n != 1 {
					t.Errorf("%s fetched %d times, want once", p, n)
				}
			}
			if _, ok := res[cdn.URL+"/cdn.png"]; ok != tt.cdn {
				t.Errorf("the image on another host: got a Result %v, want %v", ok, tt.cdn)
			}
			if r, ok := res[s.URL+"/logo.png"]; tt.cdn && (!ok || r.Depth != 0 || r.Referrer != s.URL+"/") {
				t.Errorf("/logo.png: %+v; want a Result at the page's depth 0, referred by /", r)
			}
			roles := map[string]crawl.LinkRole{}
			for _, l := range links {
				roles[strings.TrimPrefix(l.URL.String(), s.URL)] = l.Role
			}
			for path, role := range map[string]crawl.LinkRole{"/next": crawl.Navigation, "/logo.png": crawl.Requisite, "/s.css": crawl.Requisite, "/ping": crawl.Reference, "/submit": crawl.Reference} {
				if got, ok := roles[path]; !ok || got != role {
					t.Errorf("Page.Links: %s is %v (found %v), want %v", path, got, ok, role)
				}
			}
		})
	}
}

// A URL a page names first as a requisite or a reference and then as a
// page (an <object data> and an <a href> to it, a POST form's action and a
// link to it) is followed as a page, with WithRequisites and
// WithReferences as without: it was fetched as a resource, at the page's
// depth, and its own links never followed, so that turning the options on
// crawled fewer pages.
func TestPageRoleWins(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("/{$}", htmlPage(`<object data="/embedded.html"></object>
<form method="post" action="/login"><input name="u"></form>
<a href="/embedded.html">e</a> <a href="/login">l</a>`))
	mux.Handle("/embedded.html", htmlPage(`<a href="/more">m</a>`))
	mux.Handle("/login", htmlPage(`<a href="/signup">s</a>`))
	mux.Handle("/more", htmlPage(`more`))
	mux.Handle("/signup", htmlPage(`signup`))
	s := newSite(t, mux)
	for _, tc := range []struct {
		name string
		opts []crawl.Option
	}{
		{"default", nil},
		{"requisites", []crawl.Option{crawl.WithRequisites(true)}},
		{"references", []crawl.Option{crawl.WithReferences(true)}},
		{"both", []crawl.Option{crawl.WithRequisites(true), crawl.WithReferences(true)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, res, err := crawlSite(t, crawlerCtx(t), []string{s.URL + "/"}, append(tc.opts, crawl.WithRobots(false))...)
			if err != nil {
				t.Fatal(err)
			}
			for p, depth := range map[string]int{"/embedded.html": 1, "/login": 1, "/more": 2, "/signup": 2} {
				if r, ok := res[s.URL+p]; !ok || r.Depth != depth {
					t.Errorf("%s: Result %v (present %v), want one at depth %d", p, r.Depth, ok, depth)
				}
			}
		})
	}
}

// A page whose robots directives say nofollow has none of its links
// followed, its references included (they were fetched); its requisites
// are, as a browser fetches them to show it.
func TestNofollowPageReferences(t *testing.T) {
	for _, how := range []string{"meta", "header"} {
		t.Run(how, func(t *testing.T) {
			mux := http.NewServeMux()
			mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) {
				meta := ""
				if how == "meta" {
					meta = `<meta name="robots" content="nofollow">`
				} else {
					w.Header().Set("X-Robots-Tag", "nofollow")
				}
				htmlPage(meta+`<img src="/pixel.png"><form method="post" action="/subscribe"></form><a href="/next">n</a>`)(w, r)
			})
			for _, p := range []string{"/pixel.png", "/subscribe", "/next"} {
				mux.Handle(p, htmlPage("x"))
			}
			s := newSite(t, mux)
			_, res, err := crawlSite(t, crawlerCtx(t), []string{s.URL + "/"}, crawl.WithRobots(false), crawl.WithRobotsDirectives(true),
				crawl.WithRequisites(true), crawl.WithReferences(true))
			if err != nil {
				t.Fatal(err)
			}
			for p, want := range map[string]bool{"/pixel.png": true, "/subscribe": false, "/next": false} {
				if _, got := res[s.URL+p]; got != want {
					t.Errorf("%s of a nofollow page: fetched %v, want %v", p, got, want)
				}
			}
		})
	}
}
