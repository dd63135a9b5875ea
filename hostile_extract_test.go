package crawl_test

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/asyncrawl/crawl"
)

// hostilePage returns an HTML page of about n bytes of the named shape:
// markup a hostile or broken site may send to make the link extractors
// work harder than its size.
func hostilePage(shape string, n int) []byte {
	var b bytes.Buffer
	rep := func(prefix, unit, suffix string) {
		b.WriteString(prefix)
		for b.Len() < n-len(suffix) {
			b.WriteString(unit)
		}
		b.WriteString(suffix)
	}
	switch shape {
	case "attrs": // one <a> of many attributes of distinct names
		b.WriteString("<a href=/x")
		for i := 0; b.Len() < n; i++ {
			fmt.Fprintf(&b, " a%d=x", i)
		}
		b.WriteString(">")
	case "dup-attrs":
		rep("<img", " src=/a.png SRC=/b.png srcset=/c.png", ">")
	case "nesting":
		rep("", "<div><a href=/x>", "")
	case "comment":
		rep("<!--", "<a href=/x>", "-->")
	case "conditional-comments":
		rep("", "<!--[if IE]><a href=/x>y</a><![endif]-->", "")
	case "tags":
		rep("", `<a href="/p/1234.html">link</a>`, "")
	case "long-href":
		rep(`<a href="/`, "x", `">`)
	case "long-href-segments": // a path of many dot segments and escapes
		rep(`<a href="/`, "a/../b/./%41%zz/", `">`)
	case "long-href-query":
		rep(`<a href="/?`, "a=%7E&b=|", `">`)
	case "long-href-host":
		rep(`<a href="http://`, "a.", `/">`)
	case "long-text": // the anchor text of one link
		rep(`<a href=/x>`, "word ", `</a>`)
	case "srcset": // one huge srcset
		rep(`<img srcset="`, "/a.png 1x, ", `">`)
	case "srcset-parens":
		rep(`<img srcset="/a.png (`, "x,", `)">`)
	case "style-attr":
		rep(`<div style="`, "background:url(/a.png);", `">`)
	case "style":
		rep(`<style>`, "a{background:url(/a.png)} @import '/b.css'; ", `</style>`)
	case "css-comment-open":
		rep(`<style>`, "/* url(/a.png) ", `</style>`)
	case "bases":
		rep("", "<base href=/b/>", "")
	case "metas":
		rep("", `<meta name=robots content="noindex, nofollow">`, "")
	case "meta-refresh":
		rep("", `<meta http-equiv=refresh content="0; url=/x">`, "")
	case "meta-refresh-long":
		rep(`<meta http-equiv=refresh content="0; url=`, "x", `">`)
	case "meta-markup": // a meta whose content is read as markup
		rep("", `<meta name=description content="&lt;a href=/x&gt;">`, "")
	case "srcdoc":
		rep(`<iframe srcdoc="`, "&lt;iframe srcdoc=&quot;&amp;lt;a href=/x&amp;gt;&quot;&gt;", `">`)
	case "data-uri":
		rep("", `<iframe src="data:text/html,%3Ca%20href=http://h.example/x%3E"></iframe>`, "")
	case "entity-tags":
		rep("", `<a href="/x?a=1&amp;b=2">`, "")
	case "script":
		rep("<script>", `var u = "/a/b.js"; // x`+"\n", "</script>")
	default:
		panic("no shape " + shape)
	}
	return b.Bytes()
}

var hostilePages = []string{
	"attrs", "dup-attrs", "nesting", "comment", "conditional-comments", "tags",
	"long-href", "long-href-segments", "long-href-query", "long-href-host", "long-text",
	"srcset", "srcset-parens", "style-attr", "style", "css-comment-open",
	"bases", "metas", "meta-refresh", "meta-refresh-long", "meta-markup",
	"srcdoc", "data-uri", "entity-tags", "script",
}

// BenchmarkHostile runs ExtractTypedLinks and ExtractLinks on 1 MiB and
// 4 MiB pages of hostile shapes (see hostilePage): many attributes in one
// tag, deep nesting, long comments, many tags, long attribute values and
// hrefs, a huge srcset, many <base> and <meta>, nested documents. Each
// reports ns/byte. The bound: every shape is linear in its size, its
// ns/byte about the same at 4 MiB as at 1 MiB, and under about 1,000 on
// one core (a page that is all links, each resolved to a URL, is the
// dearest; markup that names no URL costs under 50).
func BenchmarkHostile(b *testing.B) {
	u, _ := url.Parse("https://example.com/dir/page.html")
	for _, size := range []int{1 << 20, 4 << 20} {
		for _, shape := range hostilePages {
			body := hostilePage(shape, size)
			p := &crawl.Page{URL: u, Status: 200, ContentType: "text/html", Body: body}
			for _, ex := range []struct {
				name string
				f    func()
			}{
				{"typed", func() { crawl.ExtractTypedLinks(context.Background(), p) }},
				{"urls", func() { crawl.ExtractLinks(context.Background(), p) }},
			} {
				b.Run(fmt.Sprintf("%s/%s/%dMiB", shape, ex.name, size>>20), func(b *testing.B) {
					b.SetBytes(int64(len(body)))
					for b.Loop() {
						ex.f()
					}
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(body)), "ns/byte")
				})
			}
		}
	}
}

// TestHostileLinear compares the allocations of ExtractTypedLinks and
// ExtractLinks on each hostile page of n and of 2n bytes: twice the page
// costs at most about twice the allocations, whatever its shape. (The
// tokenizer's own work is counted in internal/htmltok's
// TestHostileLinear.)
func TestHostileLinear(t *testing.T) {
	u, _ := url.Parse("https://example.com/dir/page.html")
	const n = 64 << 10
	for _, shape := range hostilePages {
		allocs := func(size int, typed bool) float64 {
			p := &crawl.Page{URL: u, Status: 200, ContentType: "text/html", Body: hostilePage(shape, size)}
			return testing.AllocsPerRun(3, func() {
				if typed {
					crawl.ExtractTypedLinks(context.Background(), p)
				} else {
					crawl.ExtractLinks(context.Background(), p)
				}
			})
		}
		for _, typed := range []bool{true, false} {
			a1, a2 := allocs(n, typed), allocs(2*n, typed)
			if a2 > 2.2*a1+64 {
				t.Errorf("%s (typed %v): %.0f allocations for %d bytes, %.0f for twice as many, want at most about twice", shape, typed, a1, n, a2)
			}
		}
	}
}

// TestHostilePages checks that each hostile page still gives the links
// it names.
func TestHostilePages(t *testing.T) {
	u, _ := url.Parse("https://example.com/dir/page.html")
	for _, shape := range hostilePages {
		body := hostilePage(shape, 64<<10)
		p := &crawl.Page{URL: u, Status: 200, ContentType: "text/html", Body: body}
		links, err := crawl.ExtractTypedLinks(context.Background(), p)
		if err != nil {
			t.Errorf("%s: %v", shape, err)
		}
		if strings.Contains(string(body), "/x") && shape != "comment" && shape != "long-href" && len(links) == 0 {
			t.Errorf("%s: no links", shape)
		}
	}
}
