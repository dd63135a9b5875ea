package crawl

import (
	"fmt"
	"testing"
)

// After a page of 50,000 links (a sitemap's worth), a worker keeps none of
// its scratch past the kept sizes, nor the strings of what it keeps.
func TestWorkerTrim(t *testing.T) {
	w := &worker{keys: make(map[string]struct{})}
	for i := range 50_000 {
		u := fmt.Sprintf("http://example.com/%d", i)
		w.batch = append(w.batch, Request{URL: u})
		w.keys[u] = struct{}{}
		w.links = append(w.links, Link{Page: u})
	}
	w.buf = make([]byte, 2*maxKeptBuf)
	w.trim()
	if cap(w.batch) > maxKeptRefs || cap(w.links) > maxKeptRefs || len(w.keys) != 0 || cap(w.buf) > maxKeptBuf {
		t.Errorf("after trim: batch cap %d, links cap %d, keys %d, buf cap %d; want at most %d, %d, 0, %d",
			cap(w.batch), cap(w.links), len(w.keys), cap(w.buf), maxKeptRefs, maxKeptRefs, maxKeptBuf)
	}
	// A small page's scratch is kept, emptied.
	w.batch = append(w.batch, Request{URL: "http://example.com/x"})
	w.links = append(w.links, Link{Page: "x"})
	w.trim()
	if cap(w.batch) == 0 || len(w.batch) != 0 || w.batch[:1][0].URL != "" || w.links[:1][0].Page != "" {
		t.Errorf("a small batch: cap %d, len %d, first %q; want kept, empty, cleared", cap(w.batch), len(w.batch), w.batch[:1][0].URL)
	}
}
