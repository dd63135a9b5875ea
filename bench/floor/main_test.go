//go:build unix

package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
)

// Both loops GET each page of the site once and count it.
func TestLoop(t *testing.T) {
	for _, parse := range []bool{false, true} {
		t.Run(fmt.Sprint("parse=", parse), func(t *testing.T) {
			var mu sync.Mutex
			got := map[string]int{}
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				got[r.URL.Path]++
				mu.Unlock()
				fmt.Fprint(w, `<a href="/p/1.html">a</a> <a href="x.html#f">b</a> <a href="`)
			}))
			defer srv.Close()
			var fetched atomic.Int64
			loop(parse, srv.URL+"/", 3, 5, &fetched)
			if fetched.Load() != 5 {
				t.Errorf("fetched %d, want 5", fetched.Load())
			}
			for i := range 5 {
				if p := fmt.Sprintf("/p/%d.html", i); got[p] != 1 {
					t.Errorf("%s requested %d times, want once", p, got[p])
				}
			}
			if len(got) != 5 {
				t.Errorf("requested %v, want the 5 pages only", got)
			}
		})
	}
}
