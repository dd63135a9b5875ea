package urlstd

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// ValidUTF8 returns s with each ill-formed UTF-8 sequence replaced by
// U+FFFD, as the Encoding Standard's UTF-8 decoder replaces them: a
// sequence cut short counts once (its maximal subpart), a stray byte
// once each. A page whose body says it is UTF-8 but is not has its bytes
// read so by a browser before any URL is parsed from it: a raw 0xE9 in an
// href is sent as %EF%BF%BD, not %E9.
func ValidUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf {
			b.WriteByte(s[i])
			i++
			continue
		}
		if r, n := utf8.DecodeRuneInString(s[i:]); r != utf8.RuneError || n > 1 {
			b.WriteString(s[i : i+n])
			i += n
			continue
		}
		b.WriteString("\uFFFD")
		i += illFormed(s[i:])
	}
	return b.String()
}

// EscapeIllFormed returns s with each byte that is not part of a
// well-formed UTF-8 sequence percent-encoded ("%FF"), the rest as it is:
// how browsers read the bytes of a Location header (the web-platform-tests'
// redirect-location-escape), which a header's bytes are, not a decoded
// document's text.
func EscapeIllFormed(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		if r, n := utf8.DecodeRuneInString(s[i:]); r != utf8.RuneError || n > 1 {
			b.WriteString(s[i : i+n])
			i += n
			continue
		}
		b.WriteByte('%')
		b.WriteByte(upperHexDigits[s[i]>>4])
		b.WriteByte(upperHexDigits[s[i]&15])
		i++
	}
	return b.String()
}

// illFormed returns the length of the maximal subpart of the ill-formed
// sequence s starts with: its lead byte and the continuation bytes that
// could still have followed it.
func illFormed(s string) int {
	need, lo, hi := 0, byte(0x80), byte(0xBF)
	switch c := s[0]; {
	case 0xC2 <= c && c <= 0xDF:
		need = 1
	case c == 0xE0:
		need, lo = 2, 0xA0
	case c == 0xED:
		need, hi = 2, 0x9F
	case 0xE1 <= c && c <= 0xEF:
		need = 2
	case c == 0xF0:
		need, lo = 3, 0x90
	case c == 0xF4:
		need, hi = 3, 0x8F
	case 0xF1 <= c && c <= 0xF3:
		need = 3
	default:
		return 1 // not a lead byte
	}
	n := 1
	for ; n <= need && n < len(s); n++ {
		if c := s[n]; c < lo || c > hi {
			break
		}
		lo, hi = 0x80, 0xBF
	}
	return n
}

// EncodeQuery returns input with the query it has, if any, encoded as the
// URL Standard's parser encodes one with a document's encoding other than
// UTF-8: the query's text encoded by encode, and the bytes percent-encoded
// by the special-query set; a code point the encoding has none for
// becomes "%26%23N%3B", N its number in decimal ("&#N;" percent-encoded),
// as the Standard's "percent-encode after encoding" has it. encode takes
// a run of text and fails (false) if it has such a code point; each run
// between two such is encoded whole, so that a stateful encoding
// (ISO-2022-JP) switches state as its encoder does. The query is what
// follows the first "?" of input up to a "#" (in a special URL, the first
// "?" ends whatever came before it). Parse then keeps the result as it
// is. input is returned as it is when its query is all ASCII.
func EncodeQuery(input string, encode func(s string) ([]byte, bool)) string {
	q := strings.IndexByte(input, '?')
	if q < 0 {
		return input
	}
	end := len(input)
	if h := strings.IndexByte(input, '#'); h >= 0 {
		if h < q {
			return input // "#...?": a fragment's "?"
		}
		end = h
	}
	query := input[q+1 : end]
	ascii := true
	for i := 0; i < len(query); i++ {
		ascii = ascii && query[i] < utf8.RuneSelf
	}
	if ascii {
		return input
	}
	var b strings.Builder
	b.Grow(len(input) + 2*len(query))
	b.WriteString(input[:q+1])
	query = ValidUTF8(query)
	start := 0 // of the run of text encode has bytes for
	flush := func(to int) {
		if to == start {
			return
		}
		enc, ok := encode(query[start:to])
		if !ok {
			// Not if encode says of each code point what it says of
			// a run of them; as the Standard would, one at a time.
			for _, r := range query[start:to] {
				if e, ok := encode(string(r)); ok {
					putEscaped(&b, e)
				} else {
					b.WriteString("%26%23" + strconv.Itoa(int(r)) + "%3B")
				}
			}
			return
		}
		putEscaped(&b, enc)
	}
	for i, r := range query {
		if r < utf8.RuneSelf {
			continue
		}
		if _, ok := encode(string(r)); ok {
			continue
		}
		flush(i)
		b.WriteString("%26%23" + strconv.Itoa(int(r)) + "%3B")
		start = i + utf8.RuneLen(r)
	}
	flush(len(query))
	b.WriteString(input[end:])
	return b.String()
}

// putEscaped writes the bytes of an encoded query, percent-encoded by the
// special-query set and every byte past ASCII.
func putEscaped(b *strings.Builder, enc []byte) {
	for _, c := range enc {
		if c >= utf8.RuneSelf || inSet(c, setSpecialQ) {
			b.WriteByte('%')
			b.WriteByte(upperHexDigits[c>>4])
			b.WriteByte(upperHexDigits[c&15])
			continue
		}
		b.WriteByte(c)
	}
}

const upperHexDigits = "0123456789ABCDEF"
