package warc

import (
	"bytes"
	"io"
	"net/http/httputil"
	"testing"
)

// FuzzDechunker checks the dechunker against net/http's chunked reader, fed
// in pieces of every size: where net/http reads a body, the dechunker gives
// the same bytes and finds the end of the body at the same place.
func FuzzDechunker(f *testing.F) {
	f.Add([]byte("5\r\nhello\r\n0\r\n\r\n"), 1)
	f.Add([]byte("3;ext=1\r\nabc\r\n2\r\nde\r\n0\r\nTrailer: x\r\n\r\nnext"), 2)
	f.Add([]byte("a\nabcdefghij\n0\n\n"), 3)
	f.Fuzz(func(t *testing.T, in []byte, step int) {
		if step <= 0 || step > len(in)+1 {
			step = 1
		}
		cr := bytes.NewReader(in)
		want, err := io.ReadAll(httputil.NewChunkedReader(cr))
		if err != nil {
			return
		}
		var d dechunker
		var got bytes.Buffer
		done := false
		for i := 0; i < len(in) && !done; i += step {
			_, end, err := d.feed(in[i:min(i+step, len(in))], &got)
			if err != nil {
				t.Fatalf("dechunker: %v on %q, which net/http reads as %q", err, in, want)
			}
			done = end
		}
		// net/http's reader stops after the last chunk's CRLF; the
		// dechunker reads the trailer section too, so it can only be
		// compared on the body.
		if !bytes.Equal(got.Bytes(), want) {
			t.Fatalf("dechunked %q as %q, net/http as %q", in, got.Bytes(), want)
		}
	})
}

// TestDechunkerLongTrailer feeds a chunked body whose trailer field is
// longer than a chunk-size line may be, a byte at a time: net/http's client
// reads a trailer as long as its read buffer, so the dechunker takes any.
func TestDechunkerLongTrailer(t *testing.T) {
	in := []byte("5\r\nhello\r\n0\r\nX-Trailer: " + string(bytes.Repeat([]byte("t"), 10000)) + "\r\n\r\nnext")
	var d dechunker
	var got bytes.Buffer
	for i := range in {
		n, end, err := d.feed(in[i:i+1], &got)
		if err != nil {
			t.Fatalf("byte %d: %v", i, err)
		}
		if end {
			if rest := string(in[i+n:]); rest != "next" || got.String() != "hello" {
				t.Errorf("got body %q and %q left, want %q and %q", got.Bytes(), rest, "hello", "next")
			}
			return
		}
	}
	t.Errorf("the body did not end; got %q", got.Bytes())
}
