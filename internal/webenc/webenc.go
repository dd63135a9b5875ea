// Package webenc mends the legacy encodings of golang.org/x/text where
// they differ from the WHATWG Encoding Standard's, which browsers follow:
// for the bodies the crawler decodes and the queries it encodes in a
// page's encoding (the URL Standard's "encoding-parse").
//
// What it mends:
//
//   - The single-byte encodings (windows-1252, ISO-8859-2, KOI8-R, ...):
//     a byte of 0x80 to 0x9F their table leaves undefined (0x81, 0x8D,
//     0x8F, 0x90 and 0x9D in windows-1252) is the C1 control of the same
//     number, both ways, where x/text makes it U+FFFD and cannot encode it.
//   - GB18030: U+1E3F is 0xA8BC and U+E7C7 is 0x8135F437 (GB18030-2005's
//     mapping), where x/text has no code point for 0xA8BC and makes
//     0x8135F437 U+1E3F.
//   - Shift_JIS, EUC-JP and ISO-2022-JP encode U+00A5 as 0x5C, U+203E as
//     0x7E (in ISO-2022-JP in its Roman state) and U+2212 as U+FF0D does;
//     EUC-JP and ISO-2022-JP encode nothing of JIS X 0212 (x/text's EUC-JP
//     does), and ISO-2022-JP encodes a half-width katakana as its
//     full-width form, where x/text switches to JIS X 0201 katakana, which
//     the Standard's encoder never does, and encodes a run of text as one
//     stateful sequence.
//
// Not mended: the GB18030-2022 changes the Standard took in 2024 for 18
// code points of the private use area, and the choice among duplicate
// JIS X 0208 code points in Shift_JIS's encoder.
package webenc

import (
	"bytes"
	"sync"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/htmlindex"
	"golang.org/x/text/width"
)

// Decode returns body decoded to UTF-8 from the encoding named name (a
// canonical name, as charset.Lookup gives it), as the Encoding Standard's
// decoder does; ok is false for a name it does not know.
func Decode(body []byte, name string) (_ []byte, ok bool) {
	enc, canonical := lookup(name)
	if enc == nil {
		return body, false
	}
	if cm, isCM := enc.(*charmap.Charmap); isCM {
		t := singleByte(cm)
		out := make([]byte, 0, len(body)+len(body)/4)
		for _, c := range body {
			if c < utf8.RuneSelf {
				out = append(out, c)
				continue
			}
			out = utf8.AppendRune(out, t.decode[c-0x80])
		}
		return out, true
	}
	if canonical == "gb18030" || canonical == "gbk" {
		return decodeGB(enc, body)
	}
	out, err := enc.NewDecoder().Bytes(body)
	if err != nil {
		return body, false
	}
	return out, true
}

// lookup returns x/text's encoding of an Encoding Standard label, unwrapped
// (x/net/html/charset's write a character an encoder lacks as "&#N;"), and
// its canonical name.
func lookup(label string) (encoding.Encoding, string) {
	enc, err := htmlindex.Get(label)
	if err != nil {
		return nil, ""
	}
	name, err := htmlindex.Name(enc)
	if err != nil {
		return nil, ""
	}
	return enc, name
}

// Encoder returns what encodes text in the encoding named name, as the
// Encoding Standard's encoder does: it fails (ok false) when a code point
// of s has no bytes there, and a run of text comes out whole, a stateful
// encoding's (ISO-2022-JP) back in its first state at the end. It
// returns nil for a name it does not know and for UTF-8, UTF-16 and
// replacement, whose queries are encoded in UTF-8.
func Encoder(name string) func(s string) (_ []byte, ok bool) {
	enc, canonical := lookup(name)
	if enc == nil {
		return nil
	}
	switch {
	case canonical == "utf-8", canonical == "utf-16be", canonical == "utf-16le", canonical == "replacement":
		return nil
	case canonical == "iso-2022-jp":
		return iso2022JP(enc)
	}
	if cm, ok := enc.(*charmap.Charmap); ok {
		t := singleByte(cm)
		return func(s string) ([]byte, bool) {
			out := make([]byte, 0, len(s))
			for _, r := range s {
				if r < utf8.RuneSelf {
					out = append(out, byte(r))
					continue
				}
				c, ok := t.encode[r]
				if !ok {
					return nil, false
				}
				out = append(out, c)
			}
			return out, true
		}
	}
	japanese := canonical == "shift_jis" || canonical == "euc-jp"
	gb := canonical == "gb18030" || canonical == "gbk"
	coder := enc.NewEncoder()
	return func(s string) ([]byte, bool) {
		if japanese {
			var b []byte
			for _, r := range s {
				switch {
				case japanese && r == 0xA5:
					r = 0x5C
				case japanese && r == 0x203E:
					r = 0x7E
				case japanese && r == 0x2212:
					r = 0xFF0D
				}
				b = utf8.AppendRune(b, r)
			}
			s = string(b)
		}
		if gb {
			return encodeGB(coder, s, canonical == "gbk")
		}
		out, err := coder.Bytes([]byte(s))
		if err != nil {
			return nil, false
		}
		if canonical == "euc-jp" && bytes.IndexByte(out, 0x8F) >= 0 && has0212(out) {
			return nil, false
		}
		return out, true
	}
}

// has0212 reports whether EUC-JP bytes hold a JIS X 0212 character (0x8F
// then two bytes), which the Standard's EUC-JP encoder never makes.
func has0212(b []byte) bool {
	for i := 0; i < len(b); {
		switch c := b[i]; {
		case c == 0x8F:
			return true
		case c == 0x8E || c >= 0xA1:
			i += 2
		default:
			i++
		}
	}
	return false
}

// The two code points whose GB18030 bytes x/text has other than the
// Standard: U+1E3F is 0xA8BC (x/text: 0x8135F437, and no code point for
// 0xA8BC), U+E7C7 is 0x8135F437 (x/text: 0x8336D130).
const (
	gbA8BC = "\xa8\xbc"
	gb4    = "\x81\x35\xf4\x37"
)

// decodeGB decodes GB18030 (or GBK, whose decoder is the same) as the
// Standard does.
func decodeGB(enc encoding.Encoding, body []byte) ([]byte, bool) {
	if !bytes.Contains(body, []byte(gbA8BC)) && !bytes.Contains(body, []byte(gb4)) {
		// The usual page: no walk of its characters.
		d, err := enc.NewDecoder().Bytes(body)
		return d, err == nil
	}
	var out []byte
	from := 0 // of the bytes not yet decoded
	flush := func(to int) bool {
		if to == from {
			return true
		}
		d, err := enc.NewDecoder().Bytes(body[from:to])
		out = append(out, d...)
		return err == nil
	}
	for i := 0; i < len(body); {
		n := 1 // bytes of the character at i
		if c := body[i]; 0x81 <= c && c <= 0xFE && i+1 < len(body) {
			n = 2
			if t := body[i+1]; 0x30 <= t && t <= 0x39 {
				n = 4
			}
		}
		n = min(n, len(body)-i)
		var r string
		switch string(body[i : i+n]) {
		case gbA8BC:
			r = "\u1e3f"
		case gb4:
			r = "\ue7c7"
		}
		if r != "" {
			if !flush(i) {
				return body, false
			}
			out = append(out, r...)
			from = i + n
		}
		i += n
	}
	if from == 0 {
		d, err := enc.NewDecoder().Bytes(body)
		return d, err == nil
	}
	if !flush(len(body)) {
		return body, false
	}
	return out, true
}

// encodeGB encodes s in GB18030 (gbk: in GBK) as the Standard does.
func encodeGB(coder *encoding.Encoder, s string, gbk bool) ([]byte, bool) {
	var out []byte
	from := 0
	for i, r := range s {
		var b string
		switch r {
		case 0x1E3F:
			b = gbA8BC
		case 0xE7C7:
			if gbk {
				return nil, false
			}
			b = gb4
		default:
			continue
		}
		e, err := coder.Bytes([]byte(s[from:i]))
		if err != nil {
			return nil, false
		}
		out = append(append(out, e...), b...)
		from = i + utf8.RuneLen(r)
	}
	e, err := coder.Bytes([]byte(s[from:]))
	if err != nil {
		return nil, false
	}
	return append(out, e...), true
}

// table is a single-byte encoding as the Standard has it: the code points
// of bytes 0x80 to 0xFF, and the other way.
type table struct {
	decode [128]rune
	encode map[rune]byte
}

// tables holds the table of each charmap.Charmap singleByte was asked for.
var tables sync.Map // *charmap.Charmap → *table

// singleByte returns cm's table, with the C1 controls where cm leaves a
// byte of 0x80 to 0x9F undefined.
func singleByte(cm *charmap.Charmap) *table {
	if t, ok := tables.Load(cm); ok {
		return t.(*table)
	}
	t := &table{encode: make(map[rune]byte, 128)}
	for i := range 128 {
		c := byte(0x80 + i)
		r := cm.DecodeByte(c)
		if r == utf8.RuneError && c <= 0x9F {
			r = rune(c)
		}
		t.decode[i] = r
		if r != utf8.RuneError {
			t.encode[r] = c
		}
	}
	tables.Store(cm, t)
	return t
}

// iso2022JP returns the Standard's ISO-2022-JP encoder, its JIS X 0208
// bytes taken from enc, x/text's.
func iso2022JP(enc encoding.Encoding) func(s string) ([]byte, bool) {
	coder := enc.NewEncoder()
	const (
		ascii = iota
		roman
		jis0208
	)
	esc := [3][]byte{ascii: []byte("\x1b(B"), roman: []byte("\x1b(J"), jis0208: []byte("\x1b$B")}
	return func(s string) ([]byte, bool) {
		var out []byte
		state := ascii
		to := func(st int) {
			if state != st {
				out = append(out, esc[st]...)
				state = st
			}
		}
		for _, r := range s {
			switch {
			case r == 0x0E || r == 0x0F || r == 0x1B:
				return nil, false
			case r < utf8.RuneSelf:
				if state == roman && r != 0x5C && r != 0x7E {
					out = append(out, byte(r))
					continue
				}
				to(ascii)
				out = append(out, byte(r))
				continue
			case r == 0xA5 || r == 0x203E:
				to(roman)
				if r == 0xA5 {
					out = append(out, 0x5C)
				} else {
					out = append(out, 0x7E)
				}
				continue
			case r == 0x2212:
				r = 0xFF0D
			case r == 0xFF9E || r == 0xFF9F:
				// The voiced sound marks: their spacing full-width
				// forms, as index-iso-2022-jp-katakana has them.
				r = 0x309B + (r - 0xFF9E)
			case 0xFF61 <= r && r <= 0xFF9D:
				r, _ = utf8.DecodeRuneInString(width.Widen.String(string(r)))
			}
			b, err := coder.Bytes([]byte(string(r)))
			// x/text gives ESC $ B, two bytes, ESC ( B for JIS X 0208;
			// anything else (JIS X 0212) the Standard does not encode.
			if err != nil || len(b) != 8 || !bytes.HasPrefix(b, esc[jis0208]) {
				return nil, false
			}
			to(jis0208)
			out = append(out, b[3], b[4])
		}
		to(ascii)
		return out, true
	}
}
