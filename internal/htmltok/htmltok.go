// Package htmltok is an HTML tokenizer over a whole document in memory,
// for the crawler's link extractor: it gives the tokens, raw bytes, text
// and attributes that golang.org/x/net/html's Tokenizer gives for the
// same bytes, read through bytes.NewReader, at a fraction of the cost.
//
// x/net/html reads its input a byte at a time through a buffer, and
// copies and lower-cases every attribute name to drop duplicates; a page
// is mostly text and attributes nobody asks for. This tokenizer skips
// text with bytes.IndexByte, reads a tag where it lies, and returns
// slices of the document itself, copying only what must change (an upper-
// case name, a value with a character reference, a carriage return or a
// NUL). Its output is checked token by token against x/net/html's by
// FuzzSameTokens.
//
// One thing it hands to x/net/html rather than repeat: the script data
// states, entered only by a "<!--" inside a <script> (from there to the
// end of the document, x/net/html tokenizes, started where this one
// stopped). An attribute value that needs converting, a character
// reference decoded or a carriage return or NUL replaced, is converted
// here as x/net/html converts it, each reference decoded by
// html.UnescapeString by the rules for attributes.
//
// Its work is linear in the document, whatever the markup: a tag's
// attribute names past its eighth are looked up in a set to drop
// duplicates, not compared with each earlier one.
package htmltok

import (
	"bytes"
	"io"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html"
)

// span is a range b[start:end] of the document.
type span struct{ start, end int }

// Tokenizer returns the tokens of an HTML document. Its zero value is
// ready for Reset. The slices its methods return may be slices of the
// document, and must not be modified; they hold until the next call to
// Next. It is not safe for concurrent use.
type Tokenizer struct {
	b   []byte
	p   int // read position: the end of the current token's raw bytes
	raw int // start of the current token's raw bytes
	tt  html.TokenType

	data       span   // the current token's text, or its tag name
	rawTag     string // the element whose raw text comes next, or ""
	textIsRaw  bool   // the text is not unescaped
	convertNUL bool   // NULs in the text become U+FFFD

	attrs [][2]span // the current start tag's attributes, first of a name only
	nAttr int       // attributes returned by TagAttr

	scratch []byte // converted text and names, for the current token

	cmps  int                 // attribute names compared or looked up since Reset: the work of dropping duplicates
	names map[string]struct{} // the current tag's attribute names, lower case, past scanAttrs of them
	lower []byte              // a name in lower case, to look up in names

	slow *html.Tokenizer // tokenizes the rest of the document
}

// Reset makes z tokenize doc from its start.
func (z *Tokenizer) Reset(doc []byte) {
	z.clearNames()
	*z = Tokenizer{b: doc, attrs: z.attrs[:0], scratch: z.scratch[:0], names: z.names, lower: z.lower[:0]}
}

// clearNames empties z.names for the next tag, or lets it go if a tag of
// many attributes made it large: clearing a map costs its capacity, which
// a tag of a few attributes must not pay again and again.
func (z *Tokenizer) clearNames() {
	switch {
	case len(z.names) > 64:
		z.names = nil
	case len(z.names) > 0:
		clear(z.names)
	}
}

// Release lets go of the document, keeping z's buffers for the next Reset
// unless a document made them large.
func (z *Tokenizer) Release() {
	if cap(z.scratch) > 64<<10 {
		z.scratch = nil
	}
	if cap(z.attrs) > 1024 {
		z.attrs = nil
	}
	if cap(z.lower) > 1024 {
		z.lower = nil
	}
	z.Reset(nil)
}

// Next scans the next token and returns its type, as
// html.Tokenizer.Next does.
func (z *Tokenizer) Next() html.TokenType {
	if z.slow != nil {
		z.tt = z.slow.Next()
		return z.tt
	}
	z.raw = z.p
	z.data = span{z.p, z.p}
	z.attrs, z.nAttr = z.attrs[:0], 0
	z.clearNames()
	z.scratch = z.scratch[:0]
	z.tt = z.next()
	return z.tt
}

func (z *Tokenizer) next() html.TokenType {
	b := z.b
	if z.rawTag != "" {
		end := len(b)
		switch z.rawTag {
		case "plaintext":
			z.textIsRaw = true
		case "script":
			end = z.rawEnd()
			if bytes.Contains(b[z.p:end], []byte("<!--")) {
				// The script data escape states: x/net/html goes on
				// from here, in the state it would have come here in,
				// after a <script> of its own. (NewTokenizerFragment
				// would read a script as plaintext.)
				z.slow = html.NewTokenizer(io.MultiReader(strings.NewReader("<script>"), bytes.NewReader(b[z.p:])))
				z.slow.Next()
				return z.slow.Next()
			}
			z.textIsRaw = true
			z.rawTag = ""
		default:
			end = z.rawEnd()
			z.textIsRaw = z.rawTag != "textarea" && z.rawTag != "title"
			z.rawTag = ""
		}
		if end > z.p {
			z.data = span{z.p, end}
			z.p = end
			z.convertNUL = true
			return html.TextToken
		}
	}
	z.textIsRaw, z.convertNUL = false, false

	// Text runs to the first "<" that opens markup: a letter, "/", "!"
	// or "?" after it.
	i := z.p
	for {
		j := bytes.IndexByte(b[i:], '<')
		if j < 0 || i+j+1 >= len(b) {
			i = len(b)
			break
		}
		i += j
		if c := b[i+1]; isLetter(c) || c == '/' || c == '!' || c == '?' {
			break
		}
		i++
	}
	if i > z.p || i == len(b) {
		z.data = span{z.p, i}
		z.p = i
		if i == z.raw {
			return html.ErrorToken
		}
		return html.TextToken
	}

	switch c := b[i+1]; {
	case isLetter(c):
		return z.startTag()
	case c == '/':
		if i+2 >= len(b) {
			// "</" at the end is text.
			z.data = span{i, len(b)}
			z.p = len(b)
			return html.TextToken
		}
		switch c := b[i+2]; {
		case c == '>':
			// "</>" is no token: an empty comment stands for it.
			z.p = i + 3
			return html.CommentToken
		case isLetter(c):
			z.p = i + 3
			if !z.tag(i+2, false) {
				z.p = len(b)
				return html.ErrorToken
			}
			return html.EndTagToken
		}
		z.untilCloseAngle(i + 2)
		return html.CommentToken
	case c == '?':
		z.untilCloseAngle(i + 1)
		return html.CommentToken
	default: // '!'
		return z.markupDeclaration(i + 2)
	}
}

// rawEnd returns where the raw text starting at z.p ends: at the first
// "</" followed by z.rawTag, in any case, and white space, "/" or ">",
// or at the end of the document.
func (z *Tokenizer) rawEnd() int {
	b, tag := z.b, z.rawTag
	for i := z.p; ; {
		j := bytes.Index(b[i:], []byte("</"))
		if j < 0 {
			return len(b)
		}
		i += j + 2
		k := 0
		for k < len(tag) && i+k < len(b) && b[i+k]|0x20 == tag[k] {
			k++
		}
		if k == len(tag) && i+k < len(b) {
			switch b[i+k] {
			case ' ', '\n', '\r', '\t', '\f', '/', '>':
				return i - 2
			}
		}
	}
}

// rawTags are the elements whose text is read raw, to their end tag.
var rawTags = [...]string{"iframe", "noembed", "noframes", "noscript", "plaintext", "script", "style", "textarea", "title", "xmp"}

// startTag reads a start tag whose name starts at z.p+1.
func (z *Tokenizer) startTag() html.TokenType {
	name := z.p + 1
	z.p += 2
	if !z.tag(name, true) {
		z.p = len(z.b)
		return html.ErrorToken
	}
	if n := z.data.end - z.data.start; n >= 3 && n <= 9 {
		var buf [9]byte
		for i, c := range z.b[z.data.start:z.data.end] {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			buf[i] = c
		}
		for _, tag := range rawTags {
			if string(buf[:n]) == tag {
				z.rawTag = tag
				break
			}
		}
	}
	// "/" before ">" makes a tag self-closing, unless it is the last
	// byte of an unquoted value (<a href=/>).
	end := z.p - 2
	if z.b[end] == '/' && (len(z.attrs) == 0 || end != z.attrs[len(z.attrs)-1][1].end-1) {
		return html.SelfClosingTagToken
	}
	return html.StartTagToken
}

// tag reads the rest of a tag whose name starts at name; z.p is past the
// name's first byte. With save, it keeps the attributes, the first of
// each name. It reports false if the document ends inside the tag.
func (z *Tokenizer) tag(name int, save bool) bool {
	b := z.b
	// The name runs to white space (left behind), "/" or ">".
	i := z.p
	for i < len(b) && !isSpace(b[i]) && b[i] != '/' && b[i] != '>' {
		i++
	}
	z.data = span{name, i}
	if i == len(b) {
		return false
	}
	if isSpace(b[i]) {
		i++
	}
	for {
		i = skipSpace(b, i)
		if i >= len(b) {
			return false
		}
		if b[i] == '>' {
			z.p = i + 1
			return true
		}
		// The name: an "=" first is part of it.
		k0 := i
		if b[i] == '=' {
			i++
		}
		for i < len(b) && !isSpace(b[i]) && b[i] != '/' && b[i] != '>' && b[i] != '=' {
			i++
		}
		k := span{k0, i}
		v := span{i, i}
		i = skipSpace(b, i)
		if i >= len(b) {
			return false
		}
		switch b[i] {
		case '/':
			i++
		case '=':
			i = skipSpace(b, i+1)
			if i >= len(b) {
				return false
			}
			switch q := b[i]; q {
			case '>':
			case '"', '\'':
				j := bytes.IndexByte(b[i+1:], q)
				if j < 0 {
					return false
				}
				v = span{i + 1, i + 1 + j}
				i += j + 2
			default:
				j := i
				for j < len(b) && !isSpace(b[j]) && b[j] != '>' {
					j++
				}
				if j == len(b) {
					return false
				}
				v = span{i, j}
				i = j
				if b[j] != '>' {
					i++
				}
			}
		}
		if save && k.end > k.start {
			z.keep(k, v)
		}
	}
}

// scanAttrs is how many attributes a tag has before the names seen are
// kept in a set: below it, a new name is compared with each earlier one.
const scanAttrs = 8

// keep adds the attribute k=v to the tag's unless it has one of that name
// already, in any ASCII case. Up to scanAttrs it compares names; past
// them it looks each up in z.names, so that a tag of n attributes costs
// O(n), not the O(n²) of comparing every name with every other.
func (z *Tokenizer) keep(k, v span) {
	key := z.b[k.start:k.end]
	if len(z.attrs) < scanAttrs {
		for _, a := range z.attrs {
			z.cmps++
			if asciiFold(z.b[a[0].start:a[0].end], key) {
				return
			}
		}
		z.attrs = append(z.attrs, [2]span{k, v})
		return
	}
	if len(z.names) == 0 {
		if z.names == nil {
			z.names = make(map[string]struct{})
		}
		for _, a := range z.attrs {
			z.names[string(z.lowerName(a[0]))] = struct{}{}
		}
	}
	z.cmps++
	lower := z.lowerName(k)
	if _, ok := z.names[string(lower)]; ok {
		return
	}
	z.names[string(lower)] = struct{}{}
	z.attrs = append(z.attrs, [2]span{k, v})
}

// lowerName returns the name k in lower case, in z.lower.
func (z *Tokenizer) lowerName(k span) []byte {
	z.lower = z.lower[:0]
	for _, c := range z.b[k.start:k.end] {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		z.lower = append(z.lower, c)
	}
	return z.lower
}

// untilCloseAngle ends a comment at the first ">" from i, or at the end
// of the document; its text starts at i.
func (z *Tokenizer) untilCloseAngle(i int) {
	j := bytes.IndexByte(z.b[i:], '>')
	if j < 0 {
		z.data = span{i, len(z.b)}
		z.p = len(z.b)
		return
	}
	z.data = span{i, i + j}
	z.p = i + j + 1
}

// markupDeclaration reads what follows "<!", from i: a comment, a
// doctype, or a bogus comment to the next ">".
func (z *Tokenizer) markupDeclaration(i int) html.TokenType {
	b := z.b
	switch {
	case i >= len(b):
		z.data = span{i, i}
		z.p = len(b)
		return html.CommentToken
	case i+1 >= len(b):
		z.data = span{i, len(b)}
		if b[i] == '>' {
			z.data.end--
		}
		z.p = len(b)
		return html.CommentToken
	case b[i] == '-' && b[i+1] == '-':
		z.comment(i + 2)
		return html.CommentToken
	}
	const doctype = "doctype"
	k := 0
	for k < len(doctype) && i+k < len(b) && b[i+k]|0x20 == doctype[k] {
		k++
	}
	if k < len(doctype) {
		z.untilCloseAngle(i)
		return html.CommentToken
	}
	j := skipSpace(b, i+k)
	if j >= len(b) {
		z.data = span{len(b), len(b)}
		z.p = len(b)
		return html.DoctypeToken
	}
	z.untilCloseAngle(j)
	return html.DoctypeToken
}

// comment reads a comment whose text starts at i, after "<!--". It ends
// at "-->" (two or more dashes), at "--!>", at a ">" right after "<!--"
// or "<!---", or at the end of the document.
func (z *Tokenizer) comment(i int) {
	b := z.b
	z.data.start = i
	dashes := 0
	first := true // nothing but dashes read yet
	for i < len(b) {
		c := b[i]
		i++
		switch c {
		case '-':
			dashes++
			continue
		case '>':
			if dashes >= 2 || first {
				z.p = i
				z.data.end = max(i-3, z.data.start)
				return
			}
		case '!':
			if dashes >= 2 {
				if i >= len(b) {
					break
				}
				c = b[i]
				i++
				if c == '>' {
					z.p = i
					z.data.end = max(i-4, z.data.start)
					return
				}
				if c == '-' {
					dashes, first = 1, false
					continue
				}
			}
		default:
			if dashes == 0 && !first {
				// Until a dash, nothing can end the comment.
				j := bytes.IndexByte(b[i:], '-')
				if j < 0 {
					i = len(b)
				} else {
					i += j
				}
				continue
			}
		}
		dashes, first = 0, false
	}
	z.abruptComment()
}

// abruptComment ends a comment at the end of the document, without the
// dashes (and "!") that would have begun its end.
func (z *Tokenizer) abruptComment() {
	end := len(z.b)
	if body := z.b[z.raw:]; len(body) >= len("<!--") {
		body = body[len("<!--"):]
		switch {
		case bytes.HasSuffix(body, []byte("--!")):
			end -= 3
		case bytes.HasSuffix(body, []byte("--")):
			end -= 2
		case bytes.HasSuffix(body, []byte("-")):
			end--
		}
	}
	z.p = len(z.b)
	z.data.end = max(end, z.data.start)
}

// Raw returns the bytes of the current token, as html.Tokenizer.Raw does.
func (z *Tokenizer) Raw() []byte {
	if z.slow != nil {
		return z.slow.Raw()
	}
	return z.b[z.raw:z.p]
}

// NextIsNotRawText makes the next token be read as markup, whatever the
// current start tag, as html.Tokenizer.NextIsNotRawText does.
func (z *Tokenizer) NextIsNotRawText() {
	if z.slow != nil {
		z.slow.NextIsNotRawText()
	}
	z.rawTag = ""
}

var (
	nul         = []byte{0}
	replacement = []byte("\ufffd")
)

// Text returns the text of a text, comment or doctype token, unescaped,
// as html.Tokenizer.Text does. A second call returns nothing.
func (z *Tokenizer) Text() []byte {
	if z.slow != nil {
		return z.slow.Text()
	}
	switch z.tt {
	case html.TextToken, html.CommentToken, html.DoctypeToken:
	default:
		return nil
	}
	s := z.b[z.data.start:z.data.end]
	z.data = span{z.p, z.p}
	nuls := (z.convertNUL || z.tt == html.CommentToken) && bytes.IndexByte(s, 0) >= 0
	refs := !z.textIsRaw && bytes.IndexByte(s, '&') >= 0
	if !nuls && !refs && bytes.IndexByte(s, '\r') < 0 {
		return s
	}
	start := len(z.scratch)
	z.scratch = appendNewlines(z.scratch, s)
	s = z.scratch[start:]
	if nuls {
		s = bytes.ReplaceAll(s, nul, replacement)
	}
	if refs {
		s = []byte(html.UnescapeString(string(s)))
	}
	return s
}

// TagAttr returns the lower-case name and the unescaped value of the next
// attribute of a start tag, and whether another follows, as
// html.Tokenizer.TagAttr does.
func (z *Tokenizer) TagAttr() (key, val []byte, more bool) {
	if z.slow != nil {
		return z.slow.TagAttr()
	}
	if z.tt != html.StartTagToken && z.tt != html.SelfClosingTagToken {
		return nil, nil, false
	}
	if z.nAttr >= len(z.attrs) {
		return nil, nil, false
	}
	a := z.attrs[z.nAttr]
	z.nAttr++
	key = z.b[a[0].start:a[0].end]
	if bytes.IndexByte(key, 0) >= 0 || hasUpper(key) {
		start := len(z.scratch)
		for _, c := range bytes.ReplaceAll(key, nul, replacement) {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			z.scratch = append(z.scratch, c)
		}
		key = z.scratch[start:]
	}
	val = z.b[a[1].start:a[1].end]
	if bytes.IndexByte(val, '&') >= 0 || bytes.IndexByte(val, '\r') >= 0 || bytes.IndexByte(val, 0) >= 0 {
		// As x/net/html converts a value: NULs, then line ends, then
		// character references, by the rules for attributes.
		v := appendNewlines(nil, bytes.ReplaceAll(val, nul, replacement))
		start := len(z.scratch)
		z.scratch = appendUnescapedAttr(z.scratch, v)
		val = z.scratch[start:]
	}
	return key, val, z.nAttr < len(z.attrs)
}

func hasUpper(b []byte) bool {
	for _, c := range b {
		if 'A' <= c && c <= 'Z' {
			return true
		}
	}
	return false
}

// appendUnescapedAttr appends to dst the attribute value v with its
// character references decoded as x/net/html decodes them in a value: a
// named reference without its semicolon is left as written when "="
// follows it, and is decoded only if the whole name is one (no shorter
// name in it is tried, as it is in text).
func appendUnescapedAttr(dst, v []byte) []byte {
	for {
		i := bytes.IndexByte(v, '&')
		if i < 0 {
			return append(dst, v...)
		}
		dst = append(dst, v[:i]...)
		v = v[i:]
		n, s := attrRef(v)
		if n == 0 {
			dst = append(dst, '&')
			v = v[1:]
			continue
		}
		dst = append(dst, s...)
		v = v[n:]
	}
}

// attrRef reads the character reference at the start of v, an "&", in an
// attribute value, and returns its length and what it stands for, or 0 if
// it is none. It reads the reference as x/net/html's unescapeEntity does
// and leaves decoding it to html.UnescapeString, which decodes one alone
// as unescapeEntity does but for a name that is not whole: in text, it
// decodes the longest name it starts with; in a value, that is no
// reference.
func attrRef(v []byte) (int, string) {
	if len(v) <= 1 {
		return 0, ""
	}
	i := 1
	if v[1] == '#' {
		if len(v) <= 2 {
			return 0, ""
		}
		i = 2
		hex := v[i] == 'x' || v[i] == 'X'
		if hex {
			i++
		}
		i0 := i
		for i < len(v) && ('0' <= v[i] && v[i] <= '9' || hex && ('a' <= v[i]|0x20 && v[i]|0x20 <= 'f')) {
			i++
		}
		if i == i0 {
			return 0, ""
		}
		if i < len(v) && v[i] == ';' {
			i++
		}
		return i, html.UnescapeString(string(v[:i]))
	}
	for i < len(v) && ('a' <= v[i]|0x20 && v[i]|0x20 <= 'z' || '0' <= v[i] && v[i] <= '9') {
		i++
	}
	semi := i < len(v) && v[i] == ';'
	if semi {
		i++
	}
	name := string(v[1:i])
	if name == "" || !semi && i < len(v) && v[i] == '=' {
		return 0, ""
	}
	ref := string(v[:i])
	s := html.UnescapeString(ref)
	if s == ref {
		return 0, ""
	}
	// A name not whole, decoded by a shorter one: the rune of that one,
	// then the rest of the name as written.
	if _, size := utf8.DecodeRuneInString(s); size < len(s) && strings.HasSuffix(name, s[size:]) {
		return 0, ""
	}
	return i, s
}

// appendNewlines appends s to dst with "\r\n" and "\r" made "\n".
func appendNewlines(dst, s []byte) []byte {
	for {
		i := bytes.IndexByte(s, '\r')
		if i < 0 {
			return append(dst, s...)
		}
		dst = append(dst, s[:i]...)
		dst = append(dst, '\n')
		s = s[i+1:]
		if len(s) > 0 && s[0] == '\n' {
			s = s[1:]
		}
	}
}

func isLetter(c byte) bool { return 'a' <= c|0x20 && c|0x20 <= 'z' }

func isSpace(c byte) bool {
	switch c {
	case ' ', '\n', '\r', '\t', '\f':
		return true
	}
	return false
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// asciiFold reports whether a and b are equal but for the case of ASCII
// letters.
func asciiFold(a, b []byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		c, d := a[i], b[i]
		if c != d {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if 'A' <= d && d <= 'Z' {
				d += 'a' - 'A'
			}
			if c != d {
				return false
			}
		}
	}
	return true
}
