package crawl

import (
	"net/url"
	"testing"
)

var benchBase = "https://www.example.com/docs/guide/index.html?x=1"
var benchRefs = []string{
	"/", "/about", "page2.html", "../api/reference.html", "https://other.example.org/path/to/page?q=1&r=2",
	"/search?q=a b&lang=en", "#top", "?page=3", "//cdn.example.net/x/y.html", "/caf\u00e9/men\u00fc",
	"/a/b/c/d/e/f.html", "mailto:a@b.example", "/products/12345?color=red&size=m", "./sibling.html",
	"http://www.example.com:80/docs/", "/%7Euser/home",
}

// BenchmarkResolveRef measures resolveRef's cost per href on a mix of
// references, against the base pre-parsed, as pageLinks.link resolves.
func BenchmarkResolveRef(b *testing.B) {
	base, err := parseStd(benchBase, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, r := range benchRefs {
			if u, err := parseStd(r, &base); err == nil {
				_ = u.urlValue()
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(benchRefs)), "ns/href")
}

// BenchmarkNetURLParse measures what links were resolved with before:
// url.URL.Parse against the page's URL, then normalize.
func BenchmarkNetURLParse(b *testing.B) {
	base, err := url.Parse(benchBase)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, r := range benchRefs {
			if u, err := base.Parse(r); err == nil {
				_ = u.String()
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(benchRefs)), "ns/href")
}
