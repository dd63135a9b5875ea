package crawl

import (
	"net/url"
	"testing"

	"github.com/asyncrawl/crawl/internal/urlstd"
)

// BenchmarkNormalizeLink measures what the crawl does to each href it
// extracts before the frontier sees it: resolve it against the page's URL
// as the URL Standard does (normalising it on the way) and make its key.
// One op is one link; the links are of the forms a page uses.
func BenchmarkNormalizeLink(b *testing.B) {
	page, err := url.Parse("https://blog.example.com/2024/05/async-crawlers")
	if err != nil {
		b.Fatal(err)
	}
	hrefs := []string{
		"/archive/",
		"../04/goroutines-are-cheap",
		"https://www.rfc-editor.org/rfc/rfc3986#section-6",
		"/2023/11/url-normalisation#rules",
		"HTTP://Blog.Example.COM:443/tags/go/",
		"related.html?page=2&sort=new",
		"//cdn.example.net/static/%7euser/a%3bb",
		"https://blog.example.com/2024/05/./async-crawlers/../feed.xml",
	}
	b.ReportAllocs()
	i := 0
	var n int
	for b.Loop() {
		u, err := urlstd.Resolve(page, hrefs[i%len(hrefs)])
		if err != nil {
			b.Fatal(err)
		}
		n += len(u.String())
		i++
	}
	if n == 0 {
		b.Fatal("no keys")
	}
}
