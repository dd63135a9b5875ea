package crawltest_test

import (
	"io"
	"net/http"
	"testing"

	"github.com/asyncrawl/crawl/crawltest"
)

// BenchmarkSite measures what a Site adds to each request a crawler's
// benchmark makes: a page fetched over a kept-alive connection, with the
// request log on and off.
func BenchmarkSite(b *testing.B) {
	for _, record := range []bool{true, false} {
		name := "record"
		if !record {
			name = "no-record"
		}
		b.Run(name, func(b *testing.B) {
			site := crawltest.Start(b)
			site.Record(record)
			site.Page("/", "/a", "/b", "/c")
			client := site.Client()
			req, err := http.NewRequest(http.MethodGet, "http://www.example.com/", nil)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				resp, err := client.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			if got := site.Total(); got < b.N {
				b.Errorf("Total = %d, want at least %d", got, b.N)
			}
		})
	}
}

// BenchmarkBomb measures building a 1 GiB bomb of each coding, which a
// test pays once per Bomb call.
func BenchmarkBomb(b *testing.B) {
	for _, coding := range []string{"gzip", "deflate", "zstd"} {
		b.Run(coding, func(b *testing.B) {
			for b.Loop() {
				crawltest.Bomb(coding, 1<<30)
			}
		})
	}
}
