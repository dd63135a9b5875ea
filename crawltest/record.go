package crawltest

import (
	"maps"
	"net/http"
	"slices"
	"time"
)

// Request is one request a Site was sent, as it reached the server.
type Request struct {
	Method string
	Host   string      // the Host header, with its port if it had one
	URI    string      // path and query, as sent: "/search?q=a"
	Header http.Header // the request's headers, a copy
	Time   time.Time   // when the request reached the Site
}

// recorder is what a Site measures. Site.mu guards it.
type recorder struct {
	off      bool // the log and counts are not kept (Record(false))
	log      []Request
	counts   map[string]int // by URI
	total    int
	robots   int // requests for /robots.txt, on any host
	inflight int
	peak     int
	hosts    map[string]*gauge // by hostKey
}

// gauge is a number of requests in flight and its peak.
type gauge struct{ cur, peak int }

func (g *gauge) up() {
	g.cur++
	g.peak = max(g.peak, g.cur)
}

func (rc *recorder) init() {
	rc.counts = map[string]int{}
	rc.hosts = map[string]*gauge{}
}

// begin records the arrival of r at the host key.
func (s *Site) begin(r *http.Request, key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rc := &s.rec
	rc.total++
	if r.URL.Path == "/robots.txt" {
		rc.robots++
	}
	rc.inflight++
	rc.peak = max(rc.peak, rc.inflight)
	g := rc.hosts[key]
	if g == nil {
		g = &gauge{}
		rc.hosts[key] = g
	}
	g.up()
	if rc.off {
		return
	}
	uri := r.URL.RequestURI()
	rc.counts[uri]++
	rc.log = append(rc.log, Request{
		Method: r.Method,
		Host:   r.Host,
		URI:    uri,
		Header: r.Header.Clone(),
		Time:   time.Now(),
	})
}

// end records that a request to the host key was answered.
func (s *Site) end(key string) {
	s.mu.Lock()
	s.rec.inflight--
	s.rec.hosts[key].cur--
	s.mu.Unlock()
}

// Requests returns the requests the Site was sent, on every host, in the
// order they arrived (Time never decreases along it).
func (s *Site) Requests() []Request { return s.requests("") }

// requests returns the log, or the part of it for one host key.
func (s *Site) requests(key string) []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	if key == "" {
		return slices.Clone(s.rec.log)
	}
	var out []Request
	for _, r := range s.rec.log {
		if hostKey(r.Host) == key {
			out = append(out, r)
		}
	}
	return out
}

// Count returns how many requests for the request URI the Site was sent,
// on every host. The URI is the path and query as the client sent them,
// percent-encoding included, and matches whole: Count("/a") does not count
// "/a?x=1".
func (s *Site) Count(uri string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rec.counts[uri]
}

// Counts returns how many requests the Site was sent for each request URI,
// on every host, in a new map.
func (s *Site) Counts() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.rec.counts)
}

// Total returns how many requests the Site was sent, on every host,
// whether or not it records them (see Record).
func (s *Site) Total() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rec.total
}

// TotalExceptRobots returns Total less the requests for /robots.txt: the
// pages a crawler fetched.
func (s *Site) TotalExceptRobots() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rec.total - s.rec.robots
}

// InFlight returns how many requests the Site is answering now, on every
// host: zero once a crawler is done and every handler has returned.
func (s *Site) InFlight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rec.inflight
}

// Peak returns the largest number of requests the Site has had in flight
// at once, on all hosts together. A request is in flight from its arrival
// to the return of its handler, latency included.
func (s *Site) Peak() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rec.peak
}

// peakOf returns the peak in flight of one host key.
func (s *Site) peakOf(key string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if g := s.rec.hosts[key]; g != nil {
		return g.peak
	}
	return 0
}

// Record turns the log of requests (Requests, Count, Counts) on or off;
// it is on when a Site starts. Total, InFlight and the peaks count in
// either case. Turning it off keeps a benchmark of a large crawl from
// measuring the log's memory instead of the crawler's.
func (s *Site) Record(on bool) {
	s.mu.Lock()
	s.rec.off = !on
	s.mu.Unlock()
}

// Reset forgets the requests recorded so far: the log, the counts, the
// totals and the peaks, which start again from the requests in flight.
// Routes are kept, and so is the count of requests a Route.First uses.
func (s *Site) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	rc := &s.rec
	rc.log = nil
	rc.counts = map[string]int{}
	rc.total, rc.robots = 0, 0
	rc.peak = rc.inflight
	for _, g := range rc.hosts {
		g.peak = g.cur
	}
}
