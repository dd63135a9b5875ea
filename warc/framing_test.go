package warc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/asyncrawl/crawl/warc/warctest"
)

// framingCases are responses whose framing net/http's client reads in its
// own way, by the path they answer: the recorder must find the end of
// each where the client does, and record it.
var framingCases = []struct{ path, response string }{
	{"/dup-length", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhello"},
	{"/dup-length-spaces", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\ncontent-length:  5 \r\n\r\nhello"},
	{"/big-head", "HTTP/1.1 200 OK\r\n" + strings.Repeat("X-Filler: "+strings.Repeat("a", 1000)+"\r\n", 2200) + "Content-Length: 5\r\n\r\nhello"},
	{"/bare-lf", "HTTP/1.1 200 OK\nContent-Length: 5\n\nhello"},
	{"/lf-then-crlf", "HTTP/1.1 200 OK\nContent-Length: 5\n\r\nhello"},
	{"/folded-length", "HTTP/1.1 200 OK\r\nContent-Length:\r\n 5\r\n\r\nhello"},
	{"/folded-chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding:\r\n\tchunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"},
	{"/chunked-over-length", "HTTP/1.1 200 OK\r\nContent-Length: 100\r\nTransfer-Encoding: chunked\r\n\r\n5;x=y\r\nhello\r\n0\r\n\r\n"},
	{"/http10-chunked", "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\nhello"},
	{"/long-trailer", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\nX-Trailer: " + strings.Repeat("t", 8000) + "\r\n\r\n"},
	{"/early-hints", "HTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\nHTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"},
	{"/204-length", "HTTP/1.1 204 No Content\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n"},
	{"/304-chunked", "HTTP/1.1 304 Not Modified\r\nTransfer-Encoding: chunked\r\n\r\n"},
	{"/no-reason", "HTTP/1.1  200\r\nContent-Length: 5\r\n\r\nhello"},
	{"/head", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n"},
	{"/last", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"},
}

// TestFramingAsNetHTTP sends each of framingCases, then another response,
// on one keep-alive connection, and then all of them on one: every
// exchange the client accepts is recorded, with the body the client read
// as its payload, and none after it is lost.
func TestFramingAsNetHTTP(t *testing.T) {
	for _, c := range framingCases[:len(framingCases)-1] {
		t.Run(c.path, func(t *testing.T) {
			framing(t, []string{c.path, "/last"})
		})
	}
	t.Run("all", func(t *testing.T) {
		var paths []string
		for _, c := range framingCases {
			paths = append(paths, c.path)
		}
		framing(t, paths)
	})
}

// framing requests paths in turn, on one connection to a server that
// answers each with its response in framingCases, and checks the archive.
func framing(t *testing.T, paths []string) {
	canned := make(map[string]string)
	for _, c := range framingCases {
		canned[c.path] = c.response
	}
	var conns atomic.Int32
	base := rawServer(t, func(c net.Conn) {
		conns.Add(1)
		br := bufio.NewReader(c)
		for {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			io.Copy(io.Discard, req.Body)
			if _, err := io.WriteString(c, canned[req.URL.Path]); err != nil {
				return
			}
		}
	})
	// Each response in full: most bodies are the same.
	w := newWriter(t, Options{NoRevisits: true})
	// The client reads a trailer only as far as its read buffer goes.
	rt := &http.Transport{ReadBufferSize: 64 << 10, DisableCompression: true}
	client := &http.Client{Transport: w.Transport(rt)}
	t.Cleanup(client.CloseIdleConnections) // before the server waits for its connection
	read := make(map[string][]byte)
	for _, p := range paths {
		method := http.MethodGet
		if p == "/head" {
			method = http.MethodHead
		}
		req, _ := http.NewRequest(method, base+p, nil)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, p, err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("%s %s: body: %v", method, p, err)
		}
		read[p] = body
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("the client opened %d connections, want 1", n)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	recs := readAll(t, w)
	got := responses(t, recs)
	for _, p := range paths {
		r := got[base+p]
		if r == nil {
			t.Errorf("%s: no response record, want one (the client read %q)", p, read[p])
			continue
		}
		if d, want := r.Get("WARC-Payload-Digest"), warctest.Digest(read[p]); d != want || !bytes.HasSuffix(r.Block, read[p]) {
			t.Errorf("%s: payload digest %s, block %.100q; want %s, the %q the client read", p, d, r.Block, want, read[p])
		}
		if tr := r.Get("WARC-Truncated"); tr != "" {
			t.Errorf("%s: WARC-Truncated %q, want none", p, tr)
		}
		// A body recorded de-chunked has no Content-Length a replay
		// would read it by (chunked framing overrides one sent too).
		if head, _ := r.HTTPParts(); bytes.Contains(head, []byte("X-Crawler-Transfer-Encoding")) {
			for line := range bytes.Lines(head) {
				if name, _, ok := bytes.Cut(line, []byte(":")); ok && strings.EqualFold(string(bytes.TrimSpace(name)), "content-length") {
					t.Errorf("%s: de-chunked, and the head keeps %q", p, bytes.TrimSpace(line))
				}
			}
		}
	}
	if len(paths) < len(framingCases) {
		return // warcio reads the archive of all of them
	}
	t.Run("warcio", func(t *testing.T) {
		dir := warcioDir(t)
		cmd := exec.Command("node", append([]string{filepath.Join("testdata", "warcio_check.mjs"), dir}, w.Files()...)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil || stderr.Len() > 0 {
			t.Fatalf("warcio: %v\n%s", err, stderr.Bytes())
		}
		n := 0
		for dec := json.NewDecoder(bytes.NewReader(out)); dec.More(); n++ {
			var r warcioRecord
			if err := dec.Decode(&r); err != nil {
				t.Fatalf("warcio output: %v\n%s", err, out)
			}
		}
		if n != len(recs) {
			t.Errorf("warcio read %d records, want the %d written", n, len(recs))
		}
	})
}

// TestBigHead sends heads of 3 MiB through Transport(nil), whose client
// reads heads up to net/http's default of 10 MiB, then one past that
// limit: the first two are recorded, and the third is an error the caller
// sees, not a silent gap in the archive.
func TestBigHead(t *testing.T) {
	head := func(mib int) string {
		return "HTTP/1.1 200 OK\r\n" + strings.Repeat("X-Filler: "+strings.Repeat("a", 1014)+"\r\n", mib<<10) + "Content-Length: 2\r\n\r\n"
	}
	base := rawServer(t, func(c net.Conn) {
		br := bufio.NewReader(c)
		for {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			resp := head(3) + req.URL.Path[1:3]
			if req.URL.Path == "/huge" {
				resp = head(11) + "hu"
			}
			if _, err := io.WriteString(c, resp); err != nil {
				return
			}
		}
	})
	w := newWriter(t, Options{})
	client := &http.Client{Transport: w.Transport(nil)}
	t.Cleanup(client.CloseIdleConnections)
	for _, p := range []string{"/ab", "/cd"} {
		if got := string(get(t, client, base+p)); got != p[1:] {
			t.Errorf("GET %s: got %q, want %q", p, got, p[1:])
		}
	}
	if resp, err := client.Get(base + "/huge"); err == nil {
		resp.Body.Close()
		t.Errorf("GET /huge, an 11 MiB head: no error, want the client's")
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got := responses(t, readAll(t, w))
	for _, p := range []string{"/ab", "/cd"} {
		r := got[base+p]
		if r == nil {
			t.Errorf("%s: no response record, want one", p)
			continue
		}
		if head, body := r.HTTPParts(); len(head) < 3<<20 || string(body) != p[1:] {
			t.Errorf("%s: recorded a head of %d bytes and body %q, want over 3 MiB and %q", p, len(head), body, p[1:])
		}
	}
	if r := got[base+"/huge"]; r != nil {
		t.Errorf("/huge: a response record, want none for a response the client refused")
	}
}
