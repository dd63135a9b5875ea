package urlstd

import (
	"bytes"
	"strings"
)

// NormalizePercent returns s, a path or a query as the URL Standard
// serialises it, in the normal form of RFC 3986, section 6.2.2.2: the
// percent-encoded unreserved characters (letters, digits, "-", ".", "_",
// "~") decoded and the hex digits of the other escapes upper-cased, so
// that "%7euser" and "~user" have one form, as do "%c3%a9" and "%C3%A9".
// A "%" not followed by two hex digits ("100%", "%zz") is not an escape:
// it is no "%25" either, so that "/a%zz" and "/a%25zz" keep two forms.
// It stays a "%", and decoding never makes an escape of it: after such a
// "%", of two hex digits the second is written as its escape ("%0%61" and
// "%%30a" are both "%0%61", never "%0a", the escape of a newline). The
// result is its own normal form. It allocates only when it changes s.
func NormalizePercent(s string) string {
	i := strings.IndexByte(s, '%')
	if i < 0 {
		return s
	}
	var buf [256]byte
	b := append(buf[:0], s[:i]...)
	// lone counts the characters still to be written that could make
	// an escape of the last "%" written alone: 2 right after it, 1 after
	// a hex digit that followed it.
	lone := 0
	for i < len(s) {
		c, n := s[i], 1
		if c == '%' {
			if i+2 >= len(s) || !IsHex(s[i+1]) || !IsHex(s[i+2]) {
				b = append(b, '%')
				i, lone = i+1, 2
				continue
			}
			v := Unhex(s[i+1])<<4 | Unhex(s[i+2])
			if !IsUnreserved(v) {
				b = append(b, '%', UpperHex(s[i+1]), UpperHex(s[i+2]))
				i, lone = i+3, 0
				continue
			}
			c, n = v, 3
		}
		switch {
		case lone == 1 && IsHex(c):
			// The second hex digit after a lone "%".
			b = append(b, '%', "0123456789ABCDEF"[c>>4], "0123456789ABCDEF"[c&15])
			lone = 0
		case lone == 2 && IsHex(c):
			b = append(b, c)
			lone = 1
		default:
			b = append(b, c)
			lone = 0
		}
		i += n
	}
	if string(b) == s {
		return s
	}
	return string(b)
}

// WriteNormalEscape writes the escape "%" h1 h2, hex digits, in its
// normal form: the octet itself if it is an unreserved character, else the
// escape with upper-case hex digits.
func WriteNormalEscape(b *strings.Builder, h1, h2 byte) {
	if v := Unhex(h1)<<4 | Unhex(h2); IsUnreserved(v) {
		b.WriteByte(v)
		return
	}
	b.WriteByte('%')
	b.WriteByte(UpperHex(h1))
	b.WriteByte(UpperHex(h2))
}

// IsHex reports whether c is a hex digit.
func IsHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// Unhex returns the value of the hex digit c.
func Unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	default:
		return c - 'a' + 10
	}
}

// UpperHex returns the hex digit c in upper case.
func UpperHex(c byte) byte {
	if 'a' <= c && c <= 'f' {
		return c - 'a' + 'A'
	}
	return c
}

// IsUnreserved reports whether c is an unreserved character of RFC 3986.
func IsUnreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

// PercentDecode decodes the %XX escapes of b in place, leaving malformed
// ones as they are, and returns the decoded bytes (b's prefix).
func PercentDecode(b []byte) []byte {
	if bytes.IndexByte(b, '%') < 0 {
		return b
	}
	out := b[:0]
	for i := 0; i < len(b); i++ {
		if b[i] == '%' && i+2 < len(b) && IsHex(b[i+1]) && IsHex(b[i+2]) {
			out = append(out, Unhex(b[i+1])<<4|Unhex(b[i+2]))
			i += 2
			continue
		}
		out = append(out, b[i])
	}
	return out
}
