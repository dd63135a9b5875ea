package sitemap

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// limitURLs and limitBytes are the limits of sitemaps.org, which the
// crawler parses with (crawl.MaxSitemapURLs, crawl.MaxSitemapBytes).
const (
	limitURLs  = 50_000
	limitBytes = 50 << 20
)

// errAnySitemap stands in a sitemapCase for an error that is not a
// sentinel: any error will do.
var errAnySitemap = errors.New("any error")

// sitemapCase is one input of Parse and what it must return. It
// serves TestParseSitemap and seeds FuzzParseSitemap.
type sitemapCase struct {
	name     string
	body     []byte
	maxURLs  int   // 0 for 10
	maxBytes int64 // 0 for 1 MiB
	urls     []string
	sitemaps []string
	err      error // nil, a sentinel for errors.Is, or errAnySitemap
}

func (c sitemapCase) limits() (int, int64) {
	maxURLs, maxBytes := c.maxURLs, c.maxBytes
	if maxURLs == 0 {
		maxURLs = 10
	}
	if maxBytes == 0 {
		maxBytes = 1 << 20
	}
	return maxURLs, maxBytes
}

const (
	smNS   = "http://www.sitemaps.org/schemas/sitemap/0.9"
	imgNS  = "http://www.google.com/schemas/sitemap-image/1.1"
	xmlDec = `<?xml version="1.0" encoding="UTF-8"?>` + "\n"
)

// urlsetXML is a urlset in the sitemaps.org namespace of one <url> per
// URL, with the optional elements besides <loc>.
func urlsetXML(urls ...string) string {
	var b strings.Builder
	b.WriteString(xmlDec + `<urlset xmlns="` + smNS + `">` + "\n")
	for _, u := range urls {
		b.WriteString("  <url>\n    <loc>" + u + "</loc>\n    <lastmod>2024-01-02</lastmod>\n" +
			"    <changefreq>daily</changefreq>\n    <priority>0.8</priority>\n  </url>\n")
	}
	b.WriteString("</urlset>\n")
	return b.String()
}

// sitemapIndexXML is a sitemapindex in the sitemaps.org namespace.
func sitemapIndexXML(urls ...string) string {
	var b strings.Builder
	b.WriteString(xmlDec + `<sitemapindex xmlns="` + smNS + `">` + "\n")
	for _, u := range urls {
		b.WriteString("  <sitemap><loc>" + u + "</loc><lastmod>2024-01-02T03:04:05Z</lastmod></sitemap>\n")
	}
	b.WriteString("</sitemapindex>\n")
	return b.String()
}

func gzipBytes(t testing.TB, b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// sitemapCases returns the table of TestParseSitemap.
func sitemapCases(t testing.TB) []sitemapCase {
	abc := []string{"http://example.com/a", "http://example.com/b", "https://example.com/c?x=1"}
	plain := urlsetXML(abc...)
	gz := gzipBytes(t, []byte(plain))
	badSum := bytes.Clone(gz)
	badSum[len(badSum)-5] ^= 0xff // the last byte of the CRC-32
	text := "http://example.com/a\nhttp://example.com/b\n"
	many := make([]string, 20)
	for i := range many {
		many[i] = "http://example.com/page/" + strings.Repeat("x", i)
	}
	deep := strings.Repeat("<a>", 100) + strings.Repeat("</a>", 100)
	return []sitemapCase{
		{name: "urlset with namespace", body: []byte(plain), urls: abc},
		{
			name: "urlset without namespace",
			body: []byte(`<urlset><url><loc>http://example.com/a</loc></url><url><loc>http://example.com/b</loc></url></urlset>`),
			urls: abc[:2],
		},
		{
			name: "urlset with prefixed namespace",
			body: []byte(`<?xml version="1.0"?><sm:urlset xmlns:sm="` + smNS + `"><sm:url><sm:loc>http://example.com/a</sm:loc></sm:url>` +
				`<sm:url><sm:loc>http://example.com/b</sm:loc></sm:url></sm:urlset>`),
			urls: abc[:2],
		},
		{
			name:     "sitemapindex",
			body:     []byte(sitemapIndexXML("https://example.com/s1.xml", "https://example.com/s2.xml.gz")),
			sitemaps: []string{"https://example.com/s1.xml", "https://example.com/s2.xml.gz"},
		},
		{name: "gzip urlset", body: gz, urls: abc},
		{
			name:     "gzip sitemapindex",
			body:     gzipBytes(t, []byte(sitemapIndexXML("https://example.com/s1.xml"))),
			sitemaps: []string{"https://example.com/s1.xml"},
		},
		{name: "text", body: []byte(text), urls: abc[:2]},
		{
			name: "text with BOM, CRLF, blank lines, spaces and no final newline",
			body: []byte("\ufeff\r\n  http://example.com/a \r\n\r\n\t\r\nhttp://example.com/b\t\r\n\n https://example.com/c?x=1"),
			urls: abc,
		},
		{name: "gzip text", body: gzipBytes(t, []byte(text)), urls: abc[:2]},
		{
			name: "text with entries not absolute http(s) URLs left out",
			body: []byte("http://example.com/a\n/relative\nftp://example.com/f\nmailto:a@example.com\nhttp://example.com/b\nhttp://:80/nohost\n"),
			urls: abc[:2],
			err:  errAnySitemap,
		},
		{
			name: "text with a line longer than 64 KiB left out",
			body: []byte("http://example.com/a\nhttp://example.com/" + strings.Repeat("y", 70<<10) + "\nhttp://example.com/b\n"),
			urls: abc[:2],
			err:  errAnySitemap,
		},
		{
			name: "loc longer than 64 KiB left out",
			body: []byte("<urlset><url><loc>http://example.com/" + strings.Repeat("y", 70<<10) + "</loc></url>" +
				"<url><loc>http://example.com/a</loc></url></urlset>"),
			urls: abc[:1],
			err:  errAnySitemap,
		},
		{
			name: "entities decoded, a bare & kept",
			body: []byte(`<urlset><url><loc>http://example.com/?a=1&amp;b=2</loc></url><url><loc>http://example.com/&#x3f;a=1&#38;b=2</loc></url>` +
				`<url><loc>http://example.com/?a=1&b=2&nbsp;</loc></url></urlset>`),
			urls: []string{"http://example.com/?a=1&b=2", "http://example.com/?a=1&b=2", "http://example.com/?a=1&b=2&nbsp;"},
		},
		{
			name: "white space around loc trimmed, CDATA read",
			body: []byte("<urlset>\n<url><loc>\n\t  http://example.com/a \r\n\t</loc></url>\n<url><loc> <![CDATA[http://example.com/b]]> </loc></url></urlset>"),
			urls: abc[:2],
		},
		{
			name: "image:loc ignored",
			body: []byte(`<urlset xmlns="` + smNS + `" xmlns:image="` + imgNS + `">` +
				`<url><loc>http://example.com/a</loc><image:image><image:loc>http://example.com/img1.jpg</image:loc></image:image>` +
				`<image:loc>http://example.com/img2.jpg</image:loc></url>` +
				`<url><image:loc>http://example.com/img3.jpg</image:loc><loc>http://example.com/b</loc><foo><loc>http://example.com/nested</loc></foo></url>` +
				`<url><undeclared:loc>http://example.com/img4.jpg</undeclared:loc></url>` +
				`</urlset>`),
			urls: abc[:2],
		},
		{
			name: "loc outside its entry ignored",
			body: []byte(`<urlset><loc>http://example.com/top</loc><sitemap><loc>http://example.com/s.xml</loc></sitemap>` +
				`<url><loc>http://example.com/a</loc></url></urlset>`),
			urls: abc[:1],
		},
		{
			name:     "url in a sitemapindex ignored",
			body:     []byte(`<sitemapindex><url><loc>http://example.com/a</loc></url><sitemap><loc>http://example.com/s.xml</loc></sitemap></sitemapindex>`),
			sitemaps: []string{"http://example.com/s.xml"},
		},
		{
			name: "relative and empty loc left out",
			body: []byte(`<urlset><url><loc>/relative</loc></url><url><loc>http://example.com/a</loc></url><url><loc/></url>` +
				`<url><loc>  </loc></url><url><loc>http://example.com/b</loc></url></urlset>`),
			urls: abc[:2],
			err:  errAnySitemap,
		},
		{
			name: "XML with BOM and leading white space",
			body: []byte("\ufeff \n" + urlsetXML(abc[:1]...)),
			urls: abc[:1],
		},
		{name: "US-ASCII declared", body: []byte(`<?xml version="1.0" encoding="us-ascii"?><urlset><url><loc>http://example.com/a</loc></url></urlset>`), urls: abc[:1]},
		{name: "UTF-8 declared as utf8", body: []byte(`<?xml version="1.0" encoding="utf8"?><urlset><url><loc>http://example.com/a</loc></url></urlset>`), urls: abc[:1]},
		{name: "Latin-1 declared", body: []byte(`<?xml version="1.0" encoding="ISO-8859-1"?><urlset><url><loc>http://example.com/a</loc></url></urlset>`), err: errAnySitemap},
		{name: "invalid UTF-8", body: []byte("<urlset><url><loc>http://example.com/\xe9</loc></url></urlset>"), err: errAnySitemap},
		{name: "RSS root", body: []byte(`<rss version="2.0"><channel><item><link>http://example.com/a</link></item></channel></rss>`), err: errAnySitemap},
		{name: "HTML root", body: []byte("<!DOCTYPE html>\n<html><body>Not found</body></html>"), err: errAnySitemap},
		{name: "XML without root", body: []byte(xmlDec + "<!-- nothing -->\n"), err: errAnySitemap},
		{name: "nesting too deep", body: []byte("<urlset>" + deep + "</urlset>"), err: errAnySitemap},
		{
			name: "element after the root",
			body: []byte(`<urlset><url><loc>http://example.com/a</loc></url></urlset><urlset><url><loc>http://example.com/b</loc></url></urlset>`),
			urls: abc[:1],
			err:  errAnySitemap,
		},
		{
			name: "comment and white space after the root",
			body: []byte(`<urlset><url><loc>http://example.com/a</loc></url></urlset>` + "\n<!-- generated -->\n<?pi x?>\n"),
			urls: abc[:1],
		},
		{
			name: "text after the root",
			body: []byte(`<urlset><url><loc>http://example.com/a</loc></url></urlset>junk`),
			urls: abc[:1],
			err:  errAnySitemap,
		},
		{
			name: "truncated XML",
			body: []byte(`<urlset><url><loc>http://example.com/a</loc></url><url><loc>http://example.com/b</loc></url><url><loc>http://example.com/c`),
			urls: abc[:2],
			err:  errAnySitemap,
		},
		{
			name: "malformed XML",
			body: []byte(`<urlset><url><loc>http://example.com/a</loc></url><url><loc>http://example.com/b</loc></url><url <loc>http://example.com/c</loc></url></urlset>`),
			urls: abc[:2],
			err:  errAnySitemap,
		},
		{
			name: "end tag without start",
			body: []byte(`<urlset><url><loc>http://example.com/a</loc></url></url></urlset>`),
			urls: abc[:1],
			err:  errAnySitemap,
		},
		{name: "empty", body: nil},
		{name: "white space only", body: []byte(" \r\n\t\n")},
		{name: "gzip of nothing", body: gzipBytes(t, nil)},
		{name: "gzip truncated in its trailer", body: gz[:len(gz)-4], urls: abc, err: io.ErrUnexpectedEOF},
		{name: "gzip checksum wrong", body: badSum, urls: abc, err: gzip.ErrChecksum},
		{name: "gzip header truncated", body: gz[:5], err: io.ErrUnexpectedEOF},
		{name: "gzip magic only", body: []byte{0x1f, 0x8b}, err: io.ErrUnexpectedEOF},
		{name: "URL cap hit", body: []byte(urlsetXML(many...)), maxURLs: 5, urls: many[:5], err: ErrTooLarge},
		{name: "URL cap just met", body: []byte(urlsetXML(many[:5]...)), maxURLs: 5, urls: many[:5]},
		{name: "URL cap hit in text", body: []byte(strings.Join(many, "\n")), maxURLs: 5, urls: many[:5], err: ErrTooLarge},
		{
			name:     "URL cap hit in sitemapindex",
			body:     []byte(sitemapIndexXML(many...)),
			maxURLs:  3,
			sitemaps: many[:3],
			err:      ErrTooLarge,
		},
		{name: "byte cap just met", body: []byte(text), maxBytes: int64(len(text)), urls: abc[:2]},
		{name: "byte cap hit in text", body: []byte(text), maxBytes: int64(len(text)) - 1, urls: abc[:1], err: ErrTooLarge},
		{
			name:     "byte cap hit in XML",
			body:     []byte(plain),
			maxBytes: int64(strings.Index(plain, "http://example.com/b")) + 5,
			urls:     abc[:1],
			err:      ErrTooLarge,
		},
		{name: "byte cap hit after the root", body: []byte(plain + "  "), maxBytes: int64(len(plain)) + 1, urls: abc, err: ErrTooLarge},
		{name: "byte cap counts decompressed bytes", body: gz, maxBytes: int64(len(plain)) - 1, urls: abc, err: ErrTooLarge},
		{name: "byte cap below zero", body: []byte(text), maxBytes: -1, err: ErrTooLarge},
		{
			name: "XML token too long",
			body: []byte("<urlset>" + strings.Repeat(" ", 512<<10) + "</urlset>"),
			err:  errAnySitemap,
		},
		{
			// Each attribute costs the decoder many times its size.
			name: "XML start tag too long",
			body: []byte("<urlset" + strings.Repeat(` a=""`, 100<<10) + "></urlset>"),
			err:  errAnySitemap,
		},
	}
}

func TestParseSitemap(t *testing.T) {
	for _, tc := range sitemapCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			maxURLs, maxBytes := tc.limits()
			urls, sitemaps, err := Parse(tc.body, maxURLs, maxBytes)
			switch {
			case tc.err == nil && err != nil:
				t.Errorf("got error %v, want none", err)
			case tc.err == errAnySitemap && err == nil:
				t.Errorf("got no error, want one")
			case tc.err != nil && tc.err != errAnySitemap && !errors.Is(err, tc.err):
				t.Errorf("got error %v, want one wrapping %v", err, tc.err)
			}
			if errors.Is(err, ErrTooLarge) != errors.Is(tc.err, ErrTooLarge) {
				t.Errorf("got error %v, want ErrTooLarge: %v", err, errors.Is(tc.err, ErrTooLarge))
			}
			if !slices.Equal(urls, tc.urls) {
				t.Errorf("got urls %q, want %q", urls, tc.urls)
			}
			if !slices.Equal(sitemaps, tc.sitemaps) {
				t.Errorf("got sitemaps %q, want %q", sitemaps, tc.sitemaps)
			}
		})
	}
}

// TestParseSitemapGzipTruncated cuts a gzip stream in the middle of its
// data: the URLs inflated before the cut are returned, with the error.
func TestParseSitemapGzipTruncated(t *testing.T) {
	all := make([]string, 2000) // enough data for the inflater to flush some before the cut
	for i := range all {
		all[i] = fmt.Sprintf("http://example.com/page/%d", i)
	}
	gz := gzipBytes(t, []byte(urlsetXML(all...)))
	urls, _, err := Parse(gz[:len(gz)/2], limitURLs, limitBytes)
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("got error %v, want io.ErrUnexpectedEOF", err)
	}
	if len(urls) == 0 || len(urls) == len(all) || !slices.Equal(urls, all[:len(urls)]) {
		t.Errorf("got %d urls %.80q..., want a proper, non-empty prefix of %d", len(urls), urls, len(all))
	}
}

// TestParseSitemapGzipBomb feeds Parse a gzip stream of 20 KiB that
// inflates to 20 MiB of blanks, with a limit of 1 MiB: it must stop at the
// limit, keep the URL before the blanks, and allocate about what the limit
// allows, not what the stream inflates to.
func TestParseSitemapGzipBomb(t *testing.T) {
	const inflated, limit = 20 << 20, 1 << 20
	for _, tc := range []struct {
		name       string
		head, tail string
		blanks     string // 64 KiB, repeated
	}{
		// A comment breaks the white space into runs shorter than
		// maxSitemapToken, so that the limit on bytes is what stops it.
		{"XML", `<urlset><url><loc>http://example.com/a</loc></url>`, `</urlset>`, strings.Repeat(" ", 64<<10-7) + "<!---->"},
		{"text", "http://example.com/a\n", "http://example.com/b\n", strings.Repeat("\n", 64<<10)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
			zw.Write([]byte(tc.head))
			for n := 0; n < inflated; n += len(tc.blanks) {
				zw.Write([]byte(tc.blanks))
			}
			zw.Write([]byte(tc.tail))
			if err := zw.Close(); err != nil {
				t.Fatal(err)
			}
			bomb := buf.Bytes()

			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			urls, _, err := Parse(bomb, limitURLs, limit)
			runtime.ReadMemStats(&after)

			if !errors.Is(err, ErrTooLarge) {
				t.Errorf("%d-byte gzip of %d bytes, limit %d: got error %v, want ErrTooLarge", len(bomb), inflated, limit, err)
			}
			if want := []string{"http://example.com/a"}; !slices.Equal(urls, want) {
				t.Errorf("got urls %q, want %q", urls, want)
			}
			// Reading the whole stream would allocate at least 20 MiB.
			alloc := after.TotalAlloc - before.TotalAlloc
			if alloc > 2*limit {
				t.Errorf("got %d bytes allocated, want at most %d", alloc, 2*limit)
			}
		})
	}
}

func FuzzParseSitemap(f *testing.F) {
	for _, tc := range sitemapCases(f) {
		maxURLs, maxBytes := tc.limits()
		if len(tc.body) > 4<<10 {
			continue // long seeds slow every mutation down
		}
		f.Add(tc.body, false, uint8(maxURLs), uint16(min(maxBytes, 1<<16-1)))
	}
	// A gzip.Writer costs much more to make than to reset, and the fuzz
	// function is not called in parallel within a process.
	zw := gzip.NewWriter(io.Discard)
	f.Fuzz(func(t *testing.T, body []byte, compress bool, maxURLs uint8, maxBytes uint16) {
		input := body
		if compress {
			var buf bytes.Buffer
			zw.Reset(&buf)
			zw.Write(body)
			zw.Close()
			input = buf.Bytes()
		}
		urls, sitemaps, err := Parse(input, int(maxURLs), int64(maxBytes))
		if n := len(urls) + len(sitemaps); n > int(maxURLs) {
			t.Errorf("got %d URLs, want at most %d", n, maxURLs)
		}
		if len(urls) > 0 && len(sitemaps) > 0 {
			t.Errorf("got urls %q and sitemaps %q, want one kind", urls, sitemaps)
		}
		for _, s := range slices.Concat(urls, sitemaps) {
			if strings.TrimFunc(s, unicode.IsSpace) != s {
				t.Errorf("got %q, want no white space around it", s)
			}
			if !isAbsHTTP(s) {
				t.Errorf("got %q, want an absolute http(s) URL", s)
			}
		}
		// Compression is transparent: the same file gzipped gives the
		// same URLs and the same verdict on its size.
		if compress && !bytes.HasPrefix(body, []byte{0x1f, 0x8b}) {
			plainURLs, plainSitemaps, plainErr := Parse(body, int(maxURLs), int64(maxBytes))
			if !slices.Equal(urls, plainURLs) || !slices.Equal(sitemaps, plainSitemaps) ||
				(err == nil) != (plainErr == nil) || errors.Is(err, ErrTooLarge) != errors.Is(plainErr, ErrTooLarge) {
				t.Errorf("gzipped: got %q, %q, %v; plain: got %q, %q, %v; want the same", urls, sitemaps, err, plainURLs, plainSitemaps, plainErr)
			}
		}
	})
}

// hostileSitemap returns a sitemap of about n bytes of the named shape.
func hostileSitemap(shape string, n int) []byte {
	var b bytes.Buffer
	rep := func(prefix, unit, suffix string) {
		b.WriteString(prefix)
		for b.Len() < n-len(suffix) {
			b.WriteString(unit)
		}
		b.WriteString(suffix)
	}
	const open, close = `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`, `</urlset>`
	switch shape {
	case "urls":
		rep(open, "<url><loc>https://example.com/a</loc></url>", close)
	case "comments":
		rep(open, "<!-- x --><url><!-- y --><loc>https://example.com/a</loc></url>", close)
	case "extensions": // elements that are not the sitemap's, with namespaces
		rep(open, `<x:a xmlns:x="urn:x" x:b="c"><x:d/></x:a>`, close)
	case "attrs": // many attributes on entries, each token under the token limit
		rep(open, `<url a="1" b="2" c="3" d="4" e="5" f="6" g="7" h="8"><loc>https://example.com/a</loc></url>`, close)
	case "long-locs": // each <loc> just past the entry limit, left out
		rep(open, "<url><loc>https://example.com/"+strings.Repeat("x", maxSitemapEntry)+"</loc></url>", close)
	case "text":
		rep("", "https://example.com/a\n", "")
	case "text-long-lines":
		rep("", strings.Repeat("x", maxSitemapEntry+10)+"\n", "")
	default:
		panic("no shape " + shape)
	}
	return b.Bytes()
}

var hostileSitemaps = []string{"urls", "comments", "extensions", "attrs", "long-locs", "text", "text-long-lines"}

// BenchmarkHostileSitemap parses 1 MiB and 4 MiB sitemaps of hostile
// shapes (entries, comments, extension elements, attributes, over-long
// locs and lines), with no URL limit, reporting ns/byte. The bound:
// linear, the same ns/byte at both sizes, under about 500 (encoding/xml
// is the most of it; a text sitemap is under 50).
func BenchmarkHostileSitemap(b *testing.B) {
	for _, size := range []int{1 << 20, 4 << 20} {
		for _, shape := range hostileSitemaps {
			body := hostileSitemap(shape, size)
			b.Run(fmt.Sprintf("%s/%dMiB", shape, size>>20), func(b *testing.B) {
				b.SetBytes(int64(len(body)))
				for b.Loop() {
					// Entries left out are an error; the work is what counts.
					Parse(body, 1<<30, 1<<30)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(body)), "ns/byte")
			})
		}
	}
}

// TestHostileSitemapLinear compares the allocations of Parse on
// each hostile shape of n and of 2n bytes: at most about twice as many.
func TestHostileSitemapLinear(t *testing.T) {
	const n = 256 << 10
	for _, shape := range hostileSitemaps {
		allocs := func(size int) float64 {
			body := hostileSitemap(shape, size)
			return testing.AllocsPerRun(2, func() { Parse(body, 1<<30, 1<<30) })
		}
		if a1, a2 := allocs(n), allocs(2*n); a2 > 2.2*a1+64 {
			t.Errorf("%s: %.0f allocations for %d bytes, %.0f for twice as many, want at most about twice", shape, a1, n, a2)
		}
	}
}

// TestParseSitemapGzipCut: a gzip sitemap longer than the limit as sent,
// which attempt cuts one byte past the limit, though it would inflate to
// less (stored, not compressed), is over the limit: the URLs before the
// cut are returned with ErrTooLarge, not a corrupt-stream error.
func TestParseSitemapGzipCut(t *testing.T) {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.NoCompression)
	var all []string
	for i := range 100 {
		u := "http://example.com/" + strings.Repeat("p", i)
		all = append(all, u)
		zw.Write([]byte(u + "\n"))
	}
	zw.Close()
	gz := buf.Bytes()
	limit := int64(len(gz) - 40) // less than the stream, more than the text
	for _, tc := range []struct {
		name     string
		body     []byte
		tooLarge bool
	}{
		{"cut past the limit", gz[:limit+1], true},
		{"cut within the limit", gz[:limit], false}, // a broken stream
	} {
		t.Run(tc.name, func(t *testing.T) {
			urls, _, err := Parse(tc.body, limitURLs, limit)
			if err == nil || errors.Is(err, ErrTooLarge) != tc.tooLarge {
				t.Errorf("Parse(%d of %d gzip bytes, limit %d): got error %v, want an error, wrapping ErrTooLarge: %v", len(tc.body), len(gz), limit, err, tc.tooLarge)
			}
			if len(urls) == 0 || len(urls) == len(all) || !slices.Equal(urls, all[:len(urls)]) {
				t.Errorf("got %d urls, want a proper, non-empty prefix of the %d", len(urls), len(all))
			}
		})
	}
}
