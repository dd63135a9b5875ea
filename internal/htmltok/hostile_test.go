package htmltok

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// hostile returns a document of about n bytes of the named shape: markup
// that a hostile or broken page may send to make a parser work harder
// than its size.
func hostile(shape string, n int) []byte {
	var b bytes.Buffer
	rep := func(prefix, unit, suffix string) {
		b.WriteString(prefix)
		for b.Len() < n-len(suffix) {
			b.WriteString(unit)
		}
		b.WriteString(suffix)
	}
	switch shape {
	case "attrs": // many attributes of distinct names in one tag
		b.WriteString("<a")
		for i := 0; b.Len() < n; i++ {
			fmt.Fprintf(&b, " a%d=x", i)
		}
		b.WriteString(">")
	case "attrs-case": // distinct names in one tag, upper case
		b.WriteString("<a")
		for i := 0; b.Len() < n; i++ {
			fmt.Fprintf(&b, " A%dB=x", i)
		}
		b.WriteString(">")
	case "dup-attrs": // one name again and again, in both cases
		rep("<a", " x=1 X=2", ">")
	case "dup-attrs-many": // a few hundred names, each many times
		b.WriteString("<a")
		for i := 0; b.Len() < n; i++ {
			fmt.Fprintf(&b, " n%d=x", i%300)
		}
		b.WriteString(">")
	case "entity-attrs": // many attributes with a character reference
		b.WriteString("<a")
		for i := 0; b.Len() < n; i++ {
			fmt.Fprintf(&b, " a%d=&amp;", i)
		}
		b.WriteString(">")
	case "nesting":
		rep("", "<div>", "")
	case "tags":
		rep("", `<a href="/x">y</a>`, "")
	case "entity-tags": // each tag read again by x/net/html
		rep("", `<a title="&amp;">`, "")
	case "comment":
		rep("<!--", "x", "-->")
	case "comment-dashes":
		rep("<!--", "a-", "-->")
	case "comments":
		rep("", "<!---->", "")
	case "long-value":
		rep(`<a href="`, "x", `">`)
	case "long-unquoted":
		rep(`<a href=`, "x", `>`)
	case "long-name":
		rep(`<a`, "x", `>`)
	case "unclosed-quote":
		rep(`<a href="`, "x", ``)
	case "lt":
		rep("", "< ", "")
	case "rawtext-ends": // near misses of the end tag of a <title>
		rep("<title>", "</titl", "</title>")
	case "script-escape": // x/net/html tokenizes the rest
		rep("<script><!--", "<script>x</script>", "")
	case "doctype":
		rep("<!DOCTYPE", " x", ">")
	case "end-tags":
		rep("", "</a b=c>", "")
	default:
		panic("no shape " + shape)
	}
	return b.Bytes()
}

var hostileShapes = []string{
	"attrs", "attrs-case", "dup-attrs", "dup-attrs-many", "entity-attrs",
	"nesting", "tags", "entity-tags", "comment", "comment-dashes", "comments",
	"long-value", "long-unquoted", "long-name", "unclosed-quote", "lt",
	"rawtext-ends", "script-escape", "doctype", "end-tags",
}

// BenchmarkHostile reads every token, text and attribute of 1 MiB
// documents of hostile shapes: many attributes in one tag (of distinct
// names, of one name, of names needing conversion), deep nesting, long
// comments, many tags, long names and values, near misses of an end tag.
// Each reports ns/byte. The bound: every shape is linear in its size, at
// no more than about 200 ns/byte on one core (a tag of many distinct
// names, whose set outgrows the caches, about 100; the rest under 50, the
// page of BenchmarkTokenize about 4), about the same at 4 MiB as at 1
// MiB; a shape whose ns/byte grows with the size is superlinear (before
// the name set, attrs took 42,000 ns/byte at 1 MiB; before values were
// converted here, not by x/net/html reading the tag again, entity-tags
// took 250).
// TestHostileLinear checks the attribute shapes without a clock.
func BenchmarkHostile(b *testing.B) {
	for _, size := range []int{1 << 20, 4 << 20} {
		for _, shape := range hostileShapes {
			doc := hostile(shape, size)
			b.Run(fmt.Sprintf("%s/%dMiB", shape, size>>20), func(b *testing.B) {
				var z Tokenizer
				b.SetBytes(int64(len(doc)))
				for b.Loop() {
					z.Reset(doc)
					readAll(&z)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(doc)), "ns/byte")
			})
		}
	}
}

// TestHostileLinear counts the attribute name comparisons the tokenizer
// makes on documents of each hostile shape, of n and of 2n bytes: they are
// at most a few per byte, and double at most when the document does.
func TestHostileLinear(t *testing.T) {
	const n = 256 << 10
	for _, shape := range hostileShapes {
		var z Tokenizer
		work := func(doc []byte) int {
			z.Reset(doc)
			readAll(&z)
			return z.cmps
		}
		small, large := hostile(shape, n), hostile(shape, 2*n)
		w1, w2 := work(small), work(large)
		if w1 > 2*len(small) || w2 > 2*len(large) {
			t.Errorf("%s: got %d comparisons for %d bytes and %d for %d, want at most 2 a byte", shape, w1, len(small), w2, len(large))
		}
		if w2 > 2*w1+16 {
			t.Errorf("%s: got %d comparisons for %d bytes, %d for twice as many, want at most twice", shape, w1, len(small), w2)
		}
	}
}

// TestManyAttributes reads a tag of 100,000 attributes of distinct names,
// as x/net/html does, and counts the name comparisons it took.
func TestManyAttributes(t *testing.T) {
	var b strings.Builder
	b.WriteString("<a")
	const n = 100_000
	for i := range n {
		fmt.Fprintf(&b, " a%d=x", i)
	}
	b.WriteString(" A7=dup>")
	doc := []byte(b.String())
	var z Tokenizer
	z.Reset(doc)
	if tt := z.Next(); tt.String() != "StartTag" {
		t.Fatalf("got %v, want a start tag", tt)
	}
	got := 0
	for more := true; more; got++ {
		_, _, more = z.TagAttr()
	}
	if got != n {
		t.Errorf("got %d attributes, want %d", got, n)
	}
	if z.cmps > 4*n {
		t.Errorf("got %d name comparisons for %d attributes, want at most %d", z.cmps, n, 4*n)
	}
	same(t, &z, doc)
}

// TestSameTokensManyAttributes compares tags of up to 60 attributes drawn
// from a few names, in random case, some needing conversion, with
// x/net/html's: the names past the eighth, looked up in a set, are
// dropped as x/net/html drops them.
func TestSameTokensManyAttributes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	names := []string{"a", "B", "href", "HREF", "Href", "src", "x-y", "data-z", "=q", "\x00n", "é", "É"}
	values := []string{"", "=v", "=\"v\"", "='&amp;'", "=\"a\rb\"", "=/", "=&notit;", "='&amp=x'", "=\"&#x41;&#65\"", "=&copy", "=&fjlig;", "=\"&ltx&gt;\x00\""}
	var z Tokenizer
	for range 3000 {
		var b strings.Builder
		for range 1 + rng.IntN(3) {
			b.WriteString("<p")
			for range rng.IntN(60) {
				b.WriteString(" " + names[rng.IntN(len(names))] + values[rng.IntN(len(values))])
			}
			b.WriteString(">t")
		}
		same(t, &z, []byte(b.String()))
	}
}
