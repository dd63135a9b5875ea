package redisfrontier

import (
	"testing"
	"time"

	"github.com/asyncrawl/crawl"
)

// TestEncodeRequest: decodeRequest reverses encodeRequest, Wire included,
// and reads the encodings of earlier versions, which had no Wire.
func TestEncodeRequest(t *testing.T) {
	for _, r := range []crawl.Request{
		{URL: "https://a.example/"},
		{URL: "https://a.example/~u", Wire: "https://a.example/%7Eu"},
		{URL: "https://a.example/x y", Wire: "https://a.example/x%20y", Referrer: "https://b.example/ 1", Kind: crawl.CheckRequest,
			Depth: 3, Redirects: 2, CrossHost: true, Tries: 4, First: time.Unix(1700000000, 5)},
		{URL: "w1 ", Wire: "w2 ", Referrer: "w3 "},
	} {
		enc := encodeRequest(&r)
		got, err := decodeRequest(enc)
		if err != nil {
			t.Errorf("decodeRequest(%q): %v", enc, err)
			continue
		}
		if !got.First.Equal(r.First) {
			t.Errorf("decodeRequest(%q): First %v, want %v", enc, got.First, r.First)
		}
		got.First = r.First
		if got != r {
			t.Errorf("decodeRequest(encodeRequest(%+v)) = %+v", r, got)
		}
	}
	// As the versions before Wire wrote them.
	for enc, want := range map[string]crawl.Request{
		"0 0 5 0 0 0 0 https://a.example/":                                       {URL: "https://a.example/", Redirects: 5},
		"2 1 5 1 3 1700000000000000000 18 https://b.example/https://a.example/x": {URL: "https://a.example/x", Kind: crawl.RequestKind(2), Depth: 1, Redirects: 5, CrossHost: true, Tries: 3, First: time.Unix(1700000000, 0), Referrer: "https://b.example/"},
	} {
		got, err := decodeRequest(enc)
		if err != nil {
			t.Errorf("decodeRequest(%q): %v", enc, err)
			continue
		}
		if !got.First.Equal(want.First) {
			t.Errorf("decodeRequest(%q): First %v, want %v", enc, got.First, want.First)
		}
		got.First = want.First
		if got != want {
			t.Errorf("decodeRequest(%q) = %+v, want %+v", enc, got, want)
		}
	}
	for _, enc := range []string{"", "0 0 0", "x 0 0 0 0 0 0 u", "0 0 0 0 0 0 9 u", "w", "w5 0 0 0 0 0 0 0 u", "w-1 0 0 0 0 0 0 0 u"} {
		if _, err := decodeRequest(enc); err == nil {
			t.Errorf("decodeRequest(%q): no error, want errCorrupt", enc)
		}
	}
}
