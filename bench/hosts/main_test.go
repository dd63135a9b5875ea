package main

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/asyncrawl/crawl"
)

// A crawl from every host's root, every name dialled to the one server,
// fetches every page and root once, and each host its own share.
func TestCrawlEveryHost(t *testing.T) {
	const hosts, pages = 7, 100 // 15 pages on the first two hosts, 14 on the others
	s, err := newSite(hosts, pages, 3, 0, "bench")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	defer srv.Close()
	dial := func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, srv.Listener.Addr().String())
	}
	client := &http.Client{Transport: &http.Transport{DialContext: dial}}
	var roots []string
	for k := range hosts {
		roots = append(roots, "http://"+s.name(k)+"/")
	}
	c, err := crawl.New(crawl.WithHTTPClient(client), crawl.WithWorkers(8))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Run(context.Background(), roots...); err != nil {
		t.Fatal(err)
	}
	resp, err := client.Get(srv.URL + "/__stats")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st struct {
		Requests, Pages, Duplicates int64
		PerHost                     []int64 `json:"per_host"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	if st.Pages != pages+hosts || st.Duplicates != 0 {
		t.Errorf("got %d page and root requests, %d duplicates; want %d, 0", st.Pages, st.Duplicates, pages+hosts)
	}
	// Each host: its pages, its root and its robots.txt.
	want := []int64{17, 17, 16, 16, 16, 16, 16}
	if !slices.Equal(st.PerHost, want) || st.Requests != pages+2*hosts {
		t.Errorf("got %d requests, per host %v; want %d, %v", st.Requests, st.PerHost, pages+2*hosts, want)
	}
}

// Names that are not the site's hosts, and paths that are not its pages,
// get 404.
func TestNotFound(t *testing.T) {
	s, err := newSite(3, 9, 2, 0, "bench")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		host, path string
		want       int
	}{
		{"h0.bench", "/", 200},
		{"H2.Bench:80", "/p/2.html", 200},
		{"h2.bench", "/p/3.html", 404},
		{"h3.bench", "/", 404},
		{"h01.bench", "/", 404},
		{"h-1.bench", "/", 404},
		{"x.bench", "/", 404},
		{"h0.example", "/", 404},
		{"h0.bench", "/p/01.html", 404},
		{"h0.bench", "/robots.txt", 404},
	} {
		req := httptest.NewRequest("GET", "http://"+tt.host+tt.path, nil)
		w := httptest.NewRecorder()
		s.ServeHTTP(w, req)
		if w.Code != tt.want {
			t.Errorf("%s%s: got %d, want %d", tt.host, tt.path, w.Code, tt.want)
		}
	}
	if _, err := newSite(3, 2, 1, 0, "bench"); err == nil {
		t.Error("newSite(3, 2, ...): 2 pages for 3 hosts, got no error, want one")
	}
}
