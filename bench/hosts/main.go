// Command hosts serves a benchmark site of many hosts from one loopback
// port: hosts h0.DOMAIN to h(N-1).DOMAIN, the site's pages split between
// them, each page linking to pages of its own host and to one page of
// another host. A crawler reaches the hosts by their names through a
// mapping of every name under DOMAIN to the port, such as the command's
// -resolve:
//
//	go run ./bench/hosts -hosts 300 -pages 10000 -latency 20ms &
//	# it prints http://127.0.0.1:PORT/ first
//	crawl -q -resolve '*.bench:80:127.0.0.1:PORT' $(for i in $(seq 0 299); do echo http://h$i.bench/; done)
//
// Host hK serves / (linking to /p/0.html), /p/0.html to /p/(n-1).html,
// where n is its share of -pages, and 404 for anything else, robots.txt
// included; a name that is not one of the hosts gets 404 for everything.
// Page j links to -links pages of its host, numbered so that every page is
// reachable from /, and to page j of the next host (or its last page).
// Each response waits -latency first.
//
// GET /__stats on any name returns, in JSON, the requests it was sent
// (requests), those of pages and roots (pages), the pages and roots sent
// more than once (duplicates: the requests beyond the first of each) and
// the requests each host was sent (per_host).
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen on `host:port`")
	hosts := flag.Int("hosts", 300, "serve `N` hosts, h0.DOMAIN to h(N-1).DOMAIN")
	pages := flag.Int("pages", 10000, "`N` pages in all, split between the hosts (at least one each)")
	links := flag.Int("links", 20, "links of each page to pages of its own host")
	latency := flag.Duration("latency", 20*time.Millisecond, "wait `D` before each response")
	domain := flag.String("domain", "bench", "the hosts' parent domain")
	flag.Parse()
	s, err := newSite(*hosts, *pages, *links, *latency, *domain)
	if err != nil {
		fmt.Fprintln(os.Stderr, "hosts:", err)
		os.Exit(2)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "hosts:", err)
		os.Exit(1)
	}
	fmt.Printf("http://%s/\n", ln.Addr())
	if err := http.Serve(ln, s); err != nil {
		fmt.Fprintln(os.Stderr, "hosts:", err)
		os.Exit(1)
	}
}

// site is the benchmark site. It is safe for concurrent use.
type site struct {
	hosts, links int
	latency      time.Duration
	suffix       string         // "." and the domain
	first        []int          // host k's pages are first[k] to first[k+1]-1, in counts
	counts       []atomic.Int32 // requests of each page, then of each root
	perHost      []atomic.Int64
	requests     atomic.Int64
}

func newSite(hosts, pages, links int, latency time.Duration, domain string) (*site, error) {
	if hosts < 1 || pages < hosts || links < 1 {
		return nil, fmt.Errorf("want -hosts at least 1, -pages at least -hosts, -links at least 1; got %d, %d, %d", hosts, pages, links)
	}
	s := &site{
		hosts: hosts, links: links, latency: latency, suffix: "." + domain,
		first:   make([]int, hosts+1),
		counts:  make([]atomic.Int32, pages+hosts),
		perHost: make([]atomic.Int64, hosts),
	}
	for k := range hosts {
		n := pages / hosts
		if k < pages%hosts {
			n++
		}
		s.first[k+1] = s.first[k] + n
	}
	return s, nil
}

// host returns the number of the host a Host header names, and false if
// it names none of the site's.
func (s *site) host(h string) (int, bool) {
	if name, _, err := net.SplitHostPort(h); err == nil {
		h = name
	}
	rest, ok := strings.CutSuffix(strings.ToLower(h), s.suffix)
	num, ok2 := strings.CutPrefix(rest, "h")
	k, err := strconv.Atoi(num)
	if !ok || !ok2 || err != nil || k < 0 || k >= s.hosts || num != strconv.Itoa(k) {
		return 0, false
	}
	return k, true
}

// name returns the name of host k.
func (s *site) name(k int) string { return "h" + strconv.Itoa(k) + s.suffix }

func (s *site) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/__stats" {
		s.stats(w)
		return
	}
	s.requests.Add(1)
	if s.latency > 0 {
		t := time.NewTimer(s.latency)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return
		}
	}
	k, ok := s.host(r.Host)
	if !ok {
		http.NotFound(w, r)
		return
	}
	s.perHost[k].Add(1)
	n := s.first[k+1] - s.first[k]
	if r.URL.Path == "/" {
		s.counts[len(s.counts)-s.hosts+k].Add(1)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<!doctype html><title>%s</title><a href=\"/p/0.html\">start</a>\n", s.name(k))
		return
	}
	num, ok := strings.CutPrefix(r.URL.Path, "/p/")
	num, ok2 := strings.CutSuffix(num, ".html")
	j, err := strconv.Atoi(num)
	if !ok || !ok2 || err != nil || j < 0 || j >= n || num != strconv.Itoa(j) {
		http.NotFound(w, r)
		return
	}
	s.counts[s.first[k]+j].Add(1)
	var b strings.Builder
	fmt.Fprintf(&b, "<!doctype html><title>%s page %d</title><ul>\n", s.name(k), j)
	// Page j links to pages j*links+1 to j*links+links of its host, which
	// makes a tree of every page under page 0, then to the pages around it.
	for i := 1; i <= s.links; i++ {
		fmt.Fprintf(&b, "<li><a href=\"/p/%d.html\">link</a>\n", (j*s.links+i)%n)
	}
	next := (k + 1) % s.hosts
	fmt.Fprintf(&b, "<li><a href=\"http://%s/p/%d.html\">elsewhere</a></ul>\n", s.name(next), min(j, s.first[next+1]-s.first[next]-1))
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write([]byte(b.String()))
}

// stats writes the counters of /__stats.
func (s *site) stats(w http.ResponseWriter) {
	var st struct {
		Requests   int64   `json:"requests"`
		Pages      int64   `json:"pages"`
		Duplicates int64   `json:"duplicates"`
		PerHost    []int64 `json:"per_host"`
	}
	st.Requests = s.requests.Load()
	for i := range s.counts {
		c := int64(s.counts[i].Load())
		st.Pages += c
		st.Duplicates += max(0, c-1)
	}
	for i := range s.perHost {
		st.PerHost = append(st.PerHost, s.perHost[i].Load())
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(st)
}
