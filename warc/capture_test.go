package warc

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/http/httputil"
	"testing"

	"github.com/asyncrawl/crawl/warc/warctest"
)

// FuzzDechunker checks the dechunker against net/http's chunked reader, fed
// in pieces of every size: where net/http reads a body, the dechunker gives
// the same bytes and finds the end of the body at the same place.
func FuzzDechunker(f *testing.F) {
	f.Add([]byte("5\r\nhello\r\n0\r\n\r\n"), 1)
	f.Add([]byte("3;ext=1\r\nabc\r\n2\r\nde\r\n0\r\nTrailer: x\r\n\r\nnext"), 2)
	f.Add([]byte("a\nabcdefghij\n0\n\n"), 3)
	f.Add([]byte("000A ;n=1\r\nabcdefghij\r\n0\r\n\r\n"), 4)
	f.Add([]byte("5\nhello\n0\n\n"), 1)
	f.Fuzz(func(t *testing.T, in []byte, step int) {
		if step <= 0 || step > len(in)+1 {
			step = 1
		}
		cr := bytes.NewReader(in)
		want, err := io.ReadAll(httputil.NewChunkedReader(cr))
		if err != nil {
			// Framing net/http refuses: the dechunker must not read a
			// whole body of it (the archive would hold as whole a
			// response the crawler failed to read).
			var d dechunker
			var got bytes.Buffer
			for i := 0; i < len(in); i += step {
				_, end, derr := d.feed(in[i:min(i+step, len(in))], &got)
				if derr != nil {
					return
				}
				if end {
					t.Fatalf("dechunker read a whole body %q of %q, which net/http refuses: %v", got.Bytes(), in, err)
				}
			}
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

// heldConn is a connection whose response is read from the socket at
// once, then held (got) until release: a read under way while another
// goroutine closes the connection, or the Writer.
type heldConn struct {
	net.Conn     // nil: only what the recorder calls is implemented
	resp         []byte
	got, release chan struct{}
}

func (h *heldConn) Read(p []byte) (int, error) {
	n := copy(p, h.resp)
	h.resp = h.resp[n:]
	close(h.got)
	<-h.release
	return n, nil
}

func (h *heldConn) Write(p []byte) (int, error) { return len(p), nil }
func (h *heldConn) Close() error                { return nil }
func (h *heldConn) RemoteAddr() net.Addr        { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 80} }

// A read that got a response from the socket as its connection was
// closed, by the transport or by the Writer, returns none of it: its
// exchange was not recorded, and net/http hands a response that raced the
// close of its connection to the caller (persistConn.roundTrip: "Use the
// response"), which would count a URL done that the archive does not
// have. The transport closes a connection so when the request's context
// ends as its response comes (a crawl stopped by a write error), and the
// response read here is the whole of a small page.
func TestReadRacingCloseIsRefused(t *testing.T) {
	tests := []struct {
		name  string
		close func(w *Writer, c net.Conn)
		want  error
	}{
		{"transport closes the connection", func(_ *Writer, c net.Conn) { c.Close() }, net.ErrClosed},
		{"Writer closes", func(w *Writer, _ net.Conn) { w.Close() }, ErrClosed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWriter(t, Options{})
			hc := &heldConn{
				resp:    []byte("HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\npage"),
				got:     make(chan struct{}),
				release: make(chan struct{}),
			}
			c, err := w.record(hc, "http")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.WriteString(c, "GET /p HTTP/1.1\r\nHost: example.com\r\n\r\n"); err != nil {
				t.Fatal(err)
			}
			type read struct {
				n   int
				err error
			}
			done := make(chan read, 1)
			go func() {
				n, err := c.Read(make([]byte, 4096))
				done <- read{n, err}
			}()
			<-hc.got
			tt.close(w, c)
			close(hc.release)
			if r := <-done; r.n != 0 || !errors.Is(r.err, tt.want) {
				t.Errorf("Read racing the close: %d bytes, error %v; want 0 bytes, an error wrapping %v", r.n, r.err, tt.want)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if n := len(warctest.ByType(readAll(t, w), "response")); n != 0 {
				t.Errorf("got %d response records, want none", n)
			}
		})
	}
}
