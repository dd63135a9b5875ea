package htmltok

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// same checks that z gives doc's tokens as x/net/html does, calling
// Text on every text, comment and doctype token, reading every attribute
// of every start tag, and, as the link extractor does, making the text
// after <noscript> and <noframes> (and after some self-closing tags)
// markup.
func same(t *testing.T, z *Tokenizer, doc []byte) {
	t.Helper()
	orig := bytes.Clone(doc)
	want := html.NewTokenizer(bytes.NewReader(doc))
	z.Reset(doc)
	for n := 0; ; n++ {
		wt, gt := want.Next(), z.Next()
		if wt != gt {
			t.Fatalf("token %d of %.200q: got %v (%q), want %v (%q)", n, doc, gt, z.Raw(), wt, want.Raw())
		}
		if wt == html.ErrorToken {
			break
		}
		// Raw first: x/net/html's Text and TagAttr change its buffer.
		if w, g := string(want.Raw()), string(z.Raw()); g != w {
			t.Fatalf("token %d (%v) of %.200q: Raw got %q, want %q", n, wt, doc, g, w)
		}
		switch wt {
		case html.TextToken, html.CommentToken, html.DoctypeToken:
			if w, g := string(want.Text()), string(z.Text()); g != w {
				t.Fatalf("token %d (%v) of %.200q: Text got %q, want %q", n, wt, doc, g, w)
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			name, _ := want.TagName()
			var w, g []string
			for more := true; more; {
				k, v, m := want.TagAttr()
				w = append(w, fmt.Sprintf("%q=%q more=%v", k, v, m))
				more = m
			}
			for more := true; more; {
				k, v, m := z.TagAttr()
				g = append(g, fmt.Sprintf("%q=%q more=%v", k, v, m))
				more = m
			}
			if strings.Join(g, " ") != strings.Join(w, " ") {
				t.Fatalf("token %d (%v) of %.200q: TagAttr got %v, want %v", n, wt, doc, g, w)
			}
			if k, v, m := z.TagAttr(); k != nil || v != nil || m {
				t.Fatalf("token %d of %.200q: TagAttr after the last gave %q=%q, %v", n, doc, k, v, m)
			}
			if s := string(name); s == "noscript" || s == "noframes" || wt == html.SelfClosingTagToken && (n+len(doc))%2 == 0 {
				want.NextIsNotRawText()
				z.NextIsNotRawText()
			}
		}
	}
	if z.Next() != html.ErrorToken {
		t.Fatalf("%.200q: a token after the end", doc)
	}
	if !bytes.Equal(doc, orig) {
		t.Fatalf("the document was changed: %q, was %q", doc, orig)
	}
}

// cases are markup that takes each path of the tokenizer, and the
// corners where x/net/html has its own ways.
var cases = []string{
	``,
	`plain text`,
	`<`, `<<`, `a<`, `a<3 b`, `</`, `</>`, `a</>b`, `</ x>`, `</3>`, `<?xml version="1.0"?>`, `<?x`,
	`<!`, `<!>`, `<!x`, `<!-`, `<!-x>`, `<!--`, `<!-->`, `<!--->`, `<!---->`, `<!--x-->`, `<!--x--->`,
	`<!--x--!>y-->`, `<!--a--!-->`, `<!--a--!x-->`, `<!--a--!`, `<!--a--`, `<!--a-`, `<!--a- ->b-->`,
	`<!-- <!-- x -- y -->`, `<!--[if IE]><a href=x>y</a><![endif]-->`, `<!---x->y-->`,
	`<!DOCTYPE html>`, `<!doctype`, `<!DOC`, `<!DOCTYPE`, `<!DOCTYPE `, `<!DOCTYPEhtml>`, `<!DoCtYpE html SYSTEM "about:legacy-compat">`,
	`<![CDATA[x<a href=y>]]>`, `<!ELEMENT x>`,
	`<a>`, `</a`, `</a b='`, `</a b=c d`, `<a b=c d`, `<A HREF="/x" Href=y>t</A>`, `<a href=x>`, `<a href="x`, `<a href='x'`, `<a href=x`, `<a href`, `<a href=`, `<a `,
	`<a href=/>`, `<a href="/"/>`, `<br/>`, `<br />`, `<br/ >`, `<a / href=x>`, `<a =x>`, `<a ==x>`, `<a x= = y>`,
	`<a href = "x" title='y' data-z=w>`, `<a href="a&amp;b&lt;c&copy=d&copy;e&#65;&#x42;&notit;">`,
	"<a href=\"a\rb\r\nc\x00d\">", "<a\x00b=c>", "<A\tHREF\n=\f'x'\r>", `<a href="x" href="y" HREF=z>`,
	`<a b c d=e f>`, `<a"b=c>`, `<a 'b'=c>`, `<a b='c'd>`, `<a b="c"/d>`, `<a b=c/>`, `<a b=c/ >`,
	`<p>a &amp; b &lt; c &notit; &copy 2024 &#0; &#x110000; &#128;</p>`, "text\r\nwith\rreturns", "t\x00ext",
	`<script>if (a < b) { x("</scr" + "ipt>") }</script><a href=x>`, `<script>a</script`, `<script>a</scriptx>b</script >`,
	`<script><!-- document.write("<script></script>") --></script><a href=after>`, `<script><!--`, `<SCRIPT>x</SCRIPT>`,
	`<script/>x</script>`, `<style>a{background:url(x)}</style><b>`, `<style>`, `<STYLE>x</Style/>`,
	`<title>a &amp; <b></title>`, `<textarea>x &lt; y</textarea >`, `<xmp><a href=x></xmp>`, `<iframe><a href=y></iframe>`,
	`<noscript><a href=z></noscript>`, `<noframes><a href=z></noframes>`, `<noembed>x</noembed>`,
	`<plaintext><a href=x></plaintext>`, `<title></title>`, `<title>x`, "<style>a\x00b\r\nc</style>",
	`<svg><script/><a xlink:href="x"/></svg>`, `<math><mi/></math>`,
	`<div style="background:url(a)" background=b datasrc=c>`, `<img srcset="a 1x, b 2x" src=c>`,
	`<meta http-equiv=refresh content="0; url=/x">`, `<base href="/b/">`, `<form action=/f method=post>`,
	"<a href=x>\xff\xfe</a>", "<\xffa>", "<a\xff=\xff>",
	// Past the eight attributes whose names are compared, the names are
	// looked up: duplicates before and after the eighth, in any case.
	`<a a=1 b=2 c=3 d=4 e=5 f=6 g=7 h=8 A=9 i=10 B=11 I=12 j k J=x h=y><b a=1 b=2 c=3 d=4 e=5 f=6 g=7 h=8 i=9 a=x I=y><i x=1 X=2>`,
	`<a a=1 b=2 c=3 d=4 e=5 f=6 g=7 H=8 h=9 É=1 é=2 a=&amp; h=z>`,
	// Character references in values, decoded by the rules for
	// attributes.
	`<a b="&notit; &notin; &amp= &amp;= &ampx &AMP &#x; &#; &#0; &#x110000; &#128; &fjlig; &NotEqualTilde; &lt&gt &am & &&amp;" c='&#65&#x42&#X4a;' d=&copy=1 e=&copy f=&zz; g="&Aacute&Aacutex&aacute;" h="a&b=c&d">`,
	"<a b=\"x\x00&amp\x00y\\r\\n&lt;\r&gt\" C\x00D=1>",
}

func TestSameTokens(t *testing.T) {
	var z Tokenizer
	for _, c := range cases {
		same(t, &z, []byte(c))
	}
}

// TestSameTokensFiles runs the HTML files under the directories named by
// $HTMLTOK_CORPUS (separated by the path list separator), or else under
// /usr/share/doc, real pages from many generators; it is skipped where
// there are none.
func TestSameTokensFiles(t *testing.T) {
	dirs := filepath.SplitList(os.Getenv("HTMLTOK_CORPUS"))
	if len(dirs) == 0 {
		dirs = []string{"/usr/share/doc"}
	}
	var z Tokenizer
	n := 0
	for _, dir := range dirs {
		filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			switch filepath.Ext(path) {
			case ".html", ".htm", ".xhtml", ".svg", ".xml":
			default:
				return nil
			}
			doc, err := os.ReadFile(path)
			if err != nil {
				return nil
			}
			n++
			t.Run(path, func(t *testing.T) { same(t, &z, doc) })
			return nil
		})
	}
	if n == 0 {
		t.Skipf("no HTML files under %q", dirs)
	}
	t.Logf("%d files", n)
}

func FuzzSameTokens(f *testing.F) {
	for _, c := range cases {
		f.Add([]byte(c))
	}
	var z Tokenizer
	f.Fuzz(func(t *testing.T, doc []byte) {
		same(t, &z, doc)
	})
}

// page is a page like the benchmark site's: a head, twenty links and
// text.
var page = []byte(`<!DOCTYPE html><html><head><title>Page 7</title><link rel=stylesheet href="/static/site.css"></head><body><h1>Page 7</h1><ul>` +
	strings.Repeat(`<li><a href="/p/1234.html">link</a></li><li><a href="56.html#s3">link</a></li>`, 10) +
	`</ul><img src="/img/7.png"><p>` + strings.Repeat("lorem ipsum dolor sit amet consectetur ", 100) + `</p></body></html>`)

// BenchmarkTokenize reads every token of a page, the text of each and
// the attributes of each start tag, with this package and with
// x/net/html.
func BenchmarkTokenize(b *testing.B) {
	b.Run("htmltok", func(b *testing.B) {
		var z Tokenizer
		b.SetBytes(int64(len(page)))
		b.ReportAllocs()
		for b.Loop() {
			z.Reset(page)
			readAll(&z)
		}
	})
	b.Run("x-net-html", func(b *testing.B) {
		b.SetBytes(int64(len(page)))
		b.ReportAllocs()
		for b.Loop() {
			readAll(html.NewTokenizer(bytes.NewReader(page)))
		}
	})
}

// readAll reads the text of every text token and the attributes of every
// start tag.
func readAll(z interface {
	Next() html.TokenType
	Text() []byte
	TagAttr() (key, val []byte, more bool)
}) {
	for tt := z.Next(); tt != html.ErrorToken; tt = z.Next() {
		switch tt {
		case html.TextToken:
			z.Text()
		case html.StartTagToken:
			for more := true; more; {
				_, _, more = z.TagAttr()
			}
		}
	}
}
