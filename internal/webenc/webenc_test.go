package webenc

import (
	"fmt"
	"testing"
)

// Decoding as the Encoding Standard's decoders do, where x/text's differ.
func TestDecode(t *testing.T) {
	for _, tt := range []struct {
		name string
		in   string
		want string
	}{
		// Bytes windows-1252 leaves undefined are C1 controls.
		{"windows-1252", "a\x81\x8d\x8f\x90\x9d\x80\xe9", "a\u0081\u008d\u008f\u0090\u009d\u20ac\u00e9"},
		{"iso-8859-2", "\x81\x9f\xa1", "\u0081\u009f\u0104"},
		{"windows-874", "\x81\xa1", "\u0081\u0e01"},
		// GB18030-2005's mapping of these two, as the Standard has it.
		{"gb18030", "\xa8\xbc", "\u1e3f"},
		{"gb18030", "\x81\x35\xf4\x37", "\ue7c7"},
		{"gbk", "\xa8\xbc", "\u1e3f"},
		{"shift_jis", "\x5c\x7e\x82\xa0", "\\~\u3042"},
	} {
		got, ok := Decode([]byte(tt.in), tt.name)
		if !ok || string(got) != tt.want {
			t.Errorf("Decode(%q, %s) = %+q, %v; want %+q", tt.in, tt.name, got, ok, tt.want)
		}
	}
	if _, ok := Decode([]byte("x"), "no-such-encoding"); ok {
		t.Error("Decode of an unknown encoding: ok, want not")
	}
}

// Encoding as the Encoding Standard's encoders do: the bytes each gives,
// or none for a code point the encoding lacks.
func TestEncoder(t *testing.T) {
	const fail = "FAIL"
	for _, tt := range []struct {
		name string
		in   string
		want string
	}{
		{"windows-1252", "\u0081é€", "\x81\xe9\x80"},
		{"windows-1252", "\u4e2d", fail},
		{"windows-1252", "\u0080", fail}, // 0x80 is €: no byte is U+0080
		{"iso-8859-2", "\u0085Ą", "\x85\xa1"},
		{"shift_jis", "\u00a5\u203e\u2212", "\x5c\x7e\x81\x7c"},
		{"shift_jis", "\uff71あ", "\xb1\x82\xa0"},
		{"euc-jp", "\u00a5\u2212", "\x5c\xa1\xdd"},
		{"euc-jp", "\u4e02", fail}, // JIS X 0212 only: 0x8FB0A1 in x/text
		{"gb18030", "\u1e3f", "\xa8\xbc"},
		{"gb18030", "\ue7c7", "\x81\x35\xf4\x37"},
		{"gb18030", "€", "\xa2\xe3"},
		{"gbk", "€", "\x80"},
		// ISO-2022-JP: one stateful run, back in ASCII at its end; the
		// Roman state for ¥ and ‾; half-width katakana as full-width.
		{"iso-2022-jp", "日本", "\x1b$BF|K\\\x1b(B"},
		{"iso-2022-jp", "a日b本c", "a\x1b$BF|\x1b(Bb\x1b$BK\\\x1b(Bc"},
		{"iso-2022-jp", "¥a‾\\", "\x1b(J\x5ca\x7e\x1b(B\\"},
		{"iso-2022-jp", "\uff71\uff9e", "\x1b$B%\"!+\x1b(B"},
		{"iso-2022-jp", "\u2212", "\x1b$B!]\x1b(B"},
		{"iso-2022-jp", "\x1b", fail},
		{"iso-2022-jp", "\u4e02", fail},
	} {
		enc := Encoder(tt.name)
		if enc == nil {
			t.Fatalf("Encoder(%s) = nil", tt.name)
		}
		got, ok := enc(tt.in)
		g := string(got)
		if !ok {
			g = fail
		}
		if g != tt.want {
			t.Errorf("%s: encode %+q = %+q, want %+q", tt.name, tt.in, g, tt.want)
		}
	}
	for _, name := range []string{"utf-8", "utf-16le", "utf-16be", "replacement", "no-such-encoding"} {
		if Encoder(name) != nil {
			t.Errorf("Encoder(%s) is not nil", name)
		}
	}
}

// Every single-byte encoding decodes and encodes each byte back to itself,
// but for the bytes it leaves undefined above 0x9F.
func TestSingleByteRoundTrip(t *testing.T) {
	for _, name := range []string{"ibm866", "iso-8859-2", "iso-8859-3", "iso-8859-4", "iso-8859-5", "iso-8859-6", "iso-8859-7", "iso-8859-8", "iso-8859-10", "iso-8859-13", "iso-8859-14", "iso-8859-15", "iso-8859-16", "koi8-r", "koi8-u", "macintosh", "windows-874", "windows-1250", "windows-1251", "windows-1252", "windows-1253", "windows-1254", "windows-1255", "windows-1256", "windows-1257", "windows-1258", "x-mac-cyrillic"} {
		enc := Encoder(name)
		if enc == nil {
			t.Errorf("%s: no encoder", name)
			continue
		}
		for c := 0x80; c <= 0xFF; c++ {
			d, ok := Decode([]byte{byte(c)}, name)
			if !ok {
				t.Fatalf("%s: Decode failed", name)
			}
			if string(d) == "\uFFFD" {
				if c <= 0x9F {
					t.Errorf("%s: byte %#x decodes to U+FFFD, want its C1 control", name, c)
				}
				continue
			}
			e, ok := enc(string(d))
			if !ok || len(e) != 1 || e[0] != byte(c) {
				t.Errorf("%s: byte %#x decodes to %+q, which encodes to %x, %v", name, c, d, e, ok)
			}
		}
	}
}

func ExampleEncoder() {
	enc := Encoder("shift_jis")
	b, ok := enc("¥")
	fmt.Printf("%x %v\n", b, ok)
	// Output: 5c true
}
