package urlstd

import "testing"

// The Encoding Standard's UTF-8 decoder, as browsers decode a page said
// to be UTF-8: each maximal subpart of an ill-formed sequence is one
// U+FFFD (the cases of its examples, and of Unicode's Table 3-8).
func TestValidUTF8(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"/p?x=é", "/p?x=é"},
		{"/p\xE9", "/p\uFFFD"},
		{"/p\xE9\xE9", "/p\uFFFD\uFFFD"},
		{"a\xE2\x82b", "a\uFFFDb"},                 // cut short: one
		{"a\xF0\x9F\x98b", "a\uFFFDb"},             // cut short: one
		{"a\xE0\x80\x80b", "a\uFFFD\uFFFD\uFFFDb"}, // E0 80: 80 never follows E0
		{"a\xED\xA0\x80b", "a\uFFFD\uFFFD\uFFFDb"}, // a surrogate
		{"a\xF4\x90\x80\x80b", "a\uFFFD\uFFFD\uFFFD\uFFFDb"},
		{"a\xC0\xAFb", "a\uFFFD\uFFFDb"}, // an overlong form
		{"a\x80b", "a\uFFFDb"},
		{"a\xF1\x80\x80", "a\uFFFD"}, // cut short at the end
		{"\xFF", "\uFFFD"},
	} {
		if got := ValidUTF8(tt.in); got != tt.want {
			t.Errorf("ValidUTF8(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// EncodeQuery with the percent-encoding cases of the web-platform-tests
// (url/resources/percent-encoding.json) for windows-1252 and for an
// encoding without the code point, in a query; the path and fragment are
// left to Parse.
func TestEncodeQuery(t *testing.T) {
	// windows-1252's bytes for the few code points the cases need.
	cp1252 := map[rune]byte{'\u2020': 0x86, 'é': 0xE9, '€': 0x80}
	w1252 := func(s string) ([]byte, bool) {
		var b []byte
		for _, r := range s {
			c, ok := cp1252[r]
			if r < 0x80 {
				c, ok = byte(r), true
			}
			if !ok {
				return nil, false
			}
			b = append(b, c)
		}
		return b, true
	}
	for _, tt := range []struct{ in, want string }{
		{"/p?x=\u2020", "/p?x=%86"},
		{"/p?x=é&y=€", "/p?x=%E9&y=%80"},
		{"/p?x=\u4E2D", "/p?x=%26%2320013%3B"},
		{"/pé?x=é#é", "/pé?x=%E9#é"},
		{"/p#é?x=é", "/p#é?x=é"},
		{"/p?x=a", "/p?x=a"},
		{"/p?x=\xE9", "/p?x=%26%2365533%3B"}, // ill-formed: U+FFFD, which 1252 lacks
	} {
		if got := EncodeQuery(tt.in, w1252); got != tt.want {
			t.Errorf("EncodeQuery(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// A Location's bytes: UTF-8 kept, every other byte percent-encoded as it
// is, one by one (not as U+FFFD).
func TestEscapeIllFormed(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"/a?b", "/a?b"},
		{"/t?\xe2\x98\x83", "/t?\xe2\x98\x83"},
		{"/t?\xff", "/t?%FF"},
		{"/t?\xe2\x98", "/t?%E2%98"},
		{"/\xc3\xa9\xe9", "/\xc3\xa9%E9"},
	} {
		if got := EscapeIllFormed(tt.in); got != tt.want {
			t.Errorf("EscapeIllFormed(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
