package crawl

import (
	"bytes"
	"strings"
	"testing"
)

// TestDecodeOrder: the charset comes from a byte order mark, then the
// header's label, then a <meta> tag (HTML only), then the XML declaration
// (XML types only), then UTF-8 validity.
func TestDecodeOrder(t *testing.T) {
	pad := strings.Repeat("a", 1100)
	for _, tc := range []struct {
		name, body, mediaType, label string
		enc, want                    string
	}{
		{"BOM beats label", "\xef\xbb\xbfcaf\xc3\xa9", "text/html", "iso-8859-1", "utf-8", "café"},
		{"label beats meta", `<meta charset="koi8-r">caf` + "\xe9", "text/html", "latin1", "windows-1252", `<meta charset="koi8-r">café`},
		{"unknown label, meta", `<meta charset="koi8-r">` + "\xf0", "text/html", "bogus", "koi8-r", `<meta charset="koi8-r">П`},
		{"script charset is no meta", `<script charset="latin1"></script>` + pad + "café", "text/html", "", "utf-8", `<script charset="latin1"></script>` + pad + "café"},
		{"meta in a script is no meta", `<script>"<meta charset=latin1>"</script>` + pad + "café", "text/html", "", "utf-8", `<script>"<meta charset=latin1>"</script>` + pad + "café"},
		{"http-equiv", `<meta content="text/html; charset='koi8-r'" http-equiv=content-type>` + "\xf0", "text/html", "", "koi8-r", `<meta content="text/html; charset='koi8-r'" http-equiv=content-type>П`},
		{"content without http-equiv", `<meta content="text/html; charset=koi8-r">` + pad + "café", "text/html", "", "utf-8", `<meta content="text/html; charset=koi8-r">` + pad + "café"},
		{"unknown meta, then a known one", `<meta charset="bogus"><meta charset="koi8-r">` + "\xf0", "text/html", "", "koi8-r", `<meta charset="bogus"><meta charset="koi8-r">П`},
		{"meta utf-16 is utf-8", `<meta charset="utf-16">café`, "text/html", "", "utf-8", `<meta charset="utf-16">café`},
		{"meta past the first KiB", "<p>" + pad + `</p><meta charset="koi8-r">café`, "text/html", "", "utf-8", "<p>" + pad + `</p><meta charset="koi8-r">café`},
		{"no meta in text/plain", `<meta charset="koi8-r">café`, "text/plain", "", "utf-8", `<meta charset="koi8-r">café`},
		{"meta beats declaration", `<?xml version="1.0" encoding="koi8-r"?><meta charset="latin1"/>caf` + "\xe9", "application/xhtml+xml", "", "windows-1252", `<?xml version="1.0" encoding="UTF-8"?><meta charset="latin1"/>café`},
		{"declaration", `<?xml version="1.0" encoding="koi8-r"?><a>` + "\xf0</a>", "application/atom+xml", "", "koi8-r", `<?xml version="1.0" encoding="UTF-8"?><a>П</a>`},
		{"declaration in text/html", `<?xml version="1.0" encoding="koi8-r"?><p>café</p>`, "text/html", "", "utf-8", `<?xml version="1.0" encoding="UTF-8"?><p>café</p>`},
		{"declaration utf-16 is utf-8", `<?xml version="1.0" encoding="UTF-16"?><a>café</a>`, "application/xml", "", "utf-8", `<?xml version="1.0" encoding="UTF-8"?><a>café</a>`},
		{"declaration not at the start", ` <?xml version="1.0" encoding="koi8-r"?><a>café</a>`, "application/xml", "", "utf-8", ` <?xml version="1.0" encoding="koi8-r"?><a>café</a>`},
		{"utf-16 BOM and declaration", "\xff\xfe<\x00?\x00x\x00m\x00l\x00 \x00e\x00n\x00c\x00o\x00d\x00i\x00n\x00g\x00=\x00'\x00U\x00T\x00F\x00-\x001\x006\x00'\x00?\x00>\x00", "application/xml", "", "utf-16le", `<?xml encoding='UTF-8'?>`},
		{"undeclared invalid utf-8", "caf\xe9 caf\xc3\xa9", "application/xml", "", "windows-1252", "café cafÃ©"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := []byte(tc.body)
			got, enc := decode(body, tc.mediaType, tc.label)
			if string(got) != tc.want || enc != tc.enc {
				t.Errorf("decode(%q, %q, %q): got %q, %q, want %q, %q", tc.body, tc.mediaType, tc.label, got, enc, tc.want, tc.enc)
			}
			if string(body) != tc.body {
				t.Errorf("decode changed its input: got %q, want %q", body, tc.body)
			}
		})
	}
}

// FuzzXMLDeclaration: xmlDeclaration never panics and points inside its
// input, and after declareUTF8 a declaration names UTF-8.
func FuzzXMLDeclaration(f *testing.F) {
	for _, s := range []string{
		`<?xml version="1.0" encoding="Shift_JIS"?><a/>`,
		`<?xml version='1.0' encoding = 'koi8-r' standalone="yes"?>`,
		`<?xml encoding="utf-8"?>`,
		`<?xml version="1.0"?>`,
		`<?xml encoding="x`,
		`<?xml =`,
		`<?xmlencoding="x"?>`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		label, start, end, ok := xmlDeclaration(b)
		if !ok {
			if got := declareUTF8(b); !bytes.Equal(got, b) {
				t.Fatalf("declareUTF8(%q): got %q, want it unchanged (no declaration)", b, got)
			}
			return
		}
		if start < 0 || start > end || end > len(b) || string(b[start:end]) != label {
			t.Fatalf("xmlDeclaration(%q): got %q at [%d:%d], want the label's place in the input", b, label, start, end)
		}
		got := declareUTF8(b)
		if label, _, _, ok := xmlDeclaration(got); !ok || !strings.EqualFold(label, "utf-8") {
			t.Fatalf("declareUTF8(%q): got %q, declaring %q, want UTF-8", b, got, label)
		}
	})
}
