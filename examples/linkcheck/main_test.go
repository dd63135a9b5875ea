package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// elsewhere starts another site, reached as "localhost" so that it is
// another host, which answers broken with code and every other path
// "ok"; it returns its URL and that of a port nothing listens on, where a
// connection is refused.
func elsewhere(t *testing.T, broken string, code int) (otherURL, closed string) {
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == broken {
			http.Error(w, http.StatusText(code), code)
			return
		}
		fmt.Fprint(w, "ok")
	}))
	t.Cleanup(other.Close)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed = "http://" + l.Addr().String()
	l.Close()
	return strings.Replace(other.URL, "127.0.0.1", "localhost", 1), closed
}

// A small documentation tree with breaks planted in it: every one is
// reported, with the page and the anchor text that named it, and nothing
// else is.
func TestLinkcheckFindsPlantedBreaks(t *testing.T) {
	// Another site, one page fine, one gone; and a port nothing listens on.
	otherURL, closed := elsewhere(t, "/gone", http.StatusNotFound)

	html := func(body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, "<!DOCTYPE html><html><head><link rel=stylesheet href=/style.css></head><body>"+body+"</body></html>")
		}
	}
	mux := http.NewServeMux()
	mux.Handle("/{$}", html(`<h1>Docs</h1><a href="/guide/">Guide</a> <a href="/api/">API</a> <a href="`+otherURL+`/spec">The spec</a>`))
	mux.Handle("/guide/{$}", html(`<a href="install">Install</a> <a href="../faq">FAQ</a> <img src="/img/diagram.png" alt="diagram">`))
	mux.Handle("/guide/install", html(`<a href="/guide/">Back</a> <a href="`+otherURL+`/gone">Upstream notes</a>`))
	mux.Handle("/api/{$}", html(`<a href="/api/v1">v1</a> <a href="/api/v2">v2</a> <script src="/js/search.js"></script>`))
	mux.Handle("/api/v1", html(`<a href="/old">Old docs</a>`))
	mux.Handle("/api/v2", html(`<a href="`+closed+`/x">Mirror</a>`))
	mux.Handle("/old", http.RedirectHandler("/removed", http.StatusMovedPermanently))
	mux.HandleFunc("/style.css", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/css")
		fmt.Fprint(w, `body { background: url(/img/bg.png) }`)
	})
	mux.HandleFunc("/img/bg.png", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "png") })
	mux.HandleFunc("/js/search.js", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "boom", http.StatusInternalServerError)
	})
	// Planted: /faq (404, via "../faq" from /guide/), /img/diagram.png (404),
	// /js/search.js (500), /removed (404 behind a redirect), the other
	// site's /gone (404), the closed port (refused).
	site := httptest.NewServer(mux)
	defer site.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var out bytes.Buffer
	code := check(ctx, &out, site.URL+"/")
	report := out.String()
	if code != 1 {
		t.Fatalf("exit %d, want 1; report:\n%s", code, report)
	}
	for _, want := range []string{
		site.URL + "/faq: 404\n\ton " + site.URL + `/guide/ "FAQ"`,
		site.URL + "/img/diagram.png: 404\n\ton " + site.URL + `/guide/ ""`,
		site.URL + "/js/search.js: 500\n\ton " + site.URL + `/api/ ""`,
		site.URL + "/removed: 404\n\tfrom " + site.URL + "/old",
		otherURL + "/gone: 404\n\ton " + site.URL + `/guide/install "Upstream notes"`,
		closed + "/x: ",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("the report lacks %q; report:\n%s", want, report)
		}
	}
	if got := strings.Count(report, "\n") - strings.Count(report, "\n\t") - 1; got != 6 {
		t.Errorf("%d broken URLs reported, want 6:\n%s", got, report)
	}
}

// An image on a host whose robots.txt answers 500 is not requested: it is
// reported apart as not checked, and is not broken.
func TestLinkcheckNotChecked(t *testing.T) {
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.Error(w, "busy", http.StatusInternalServerError)
			return
		}
		t.Errorf("the other host was sent %s, want only robots.txt", r.URL.Path)
	}))
	defer other.Close()
	otherURL := strings.Replace(other.URL, "127.0.0.1", "localhost", 1)
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<img src="`+otherURL+`/img.png" alt="">`)
	}))
	defer site.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var out bytes.Buffer
	code := check(ctx, &out, site.URL+"/")
	report := out.String()
	want := otherURL + "/img.png: not checked: fetch " + otherURL + "/img.png: robots.txt unavailable: " + otherURL + "/robots.txt: status 500\n\ton " + site.URL + `/ ""` + "\n"
	if code != 0 || !strings.HasPrefix(report, want) || !strings.HasSuffix(report, ", 0 broken, 1 not checked (robots.txt unavailable)\n") {
		t.Errorf("exit %d, report:\n%s\nwant 0, and a report that starts\n%s", code, report, want)
	}
}
