package warc

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/asyncrawl/crawl/warc/warctest"
)

// gzipped returns b compressed with gzip.
func gzipped(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// site is a test server's pages: the bytes each sends as its body.
type site struct {
	plain, chunked, html []byte
	gz                   []byte // gzip of html
}

func newSite(t *testing.T) (*site, *httptest.Server) {
	t.Helper()
	s := &site{
		plain:   []byte("plain text body\n"),
		chunked: bytes.Repeat([]byte("chunk of a streamed body\n"), 300),
		html:    bytes.Repeat([]byte("<p>compressible html</p>\n"), 200),
	}
	s.gz = gzipped(t, s.html)
	mux := http.NewServeMux()
	mux.HandleFunc("/plain", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Write(s.plain)
	})
	mux.HandleFunc("/chunked", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		for part := range bytes.SplitAfterSeq(s.chunked, []byte("\n")) {
			w.Write(part)
			w.(http.Flusher).Flush()
		}
	})
	mux.HandleFunc("/gzip", func(w http.ResponseWriter, r *http.Request) {
		if !strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			t.Errorf("GET /gzip: Accept-Encoding %q, want gzip", r.Header.Get("Accept-Encoding"))
		}
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Set("Content-Length", fmt.Sprint(len(s.gz)))
		w.Write(s.gz)
	})
	mux.HandleFunc("/same/", func(w http.ResponseWriter, r *http.Request) {
		w.Write(s.plain)
	})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/plain", http.StatusFound)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return s, srv
}

func newWriter(t *testing.T, opts Options) *Writer {
	t.Helper()
	if opts.Dir == "" {
		opts.Dir = t.TempDir()
	}
	w, err := NewWriter(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

// get fetches url with client and returns the body the caller reads.
func get(t *testing.T, client *http.Client, url string) []byte {
	t.Helper()
	resp, err := client.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: body: %v", url, err)
	}
	return b
}

// responses returns the response records by target URI, failing if a URI
// has more than one.
func responses(t *testing.T, recs []*warctest.Record) map[string]*warctest.Record {
	t.Helper()
	m := make(map[string]*warctest.Record)
	for _, r := range warctest.ByType(recs, "response") {
		u := r.Get("WARC-Target-URI")
		if m[u] != nil {
			t.Errorf("two responses for %s", u)
		}
		m[u] = r
	}
	return m
}

func TestRecordsAsTransferred(t *testing.T) {
	for _, plain := range []bool{false, true} {
		t.Run(fmt.Sprintf("NoGzip=%v", plain), func(t *testing.T) {
			s, srv := newSite(t)
			w := newWriter(t, Options{NoGzip: plain, Info: map[string]string{"operator": "test", "isPartOf": "unit"}})
			client := &http.Client{Transport: w.Transport(nil)}
			if got := get(t, client, srv.URL+"/gzip"); !bytes.Equal(got, s.html) {
				t.Errorf("GET /gzip: the caller got %d bytes, want the %d decompressed", len(got), len(s.html))
			}
			get(t, client, srv.URL+"/plain")
			get(t, client, srv.URL+"/chunked")
			get(t, client, srv.URL+"/redirect") // and /plain again: a revisit
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			recs := readAll(t, w)

			info := recs[0]
			body := string(info.Block)
			for _, want := range []string{"software: ", "format: WARC File Format 1.1\r\n", "conformsTo: ", "operator: test\r\n", "isPartOf: unit\r\n"} {
				if !strings.Contains(body, want) {
					t.Errorf("warcinfo block %q lacks %q", body, want)
				}
			}
			if got, want := info.Get("WARC-Filename"), filepath.Base(w.Files()[0]); got != want {
				t.Errorf("warcinfo WARC-Filename %q, want %q", got, want)
			}

			resp := responses(t, recs)
			host := strings.TrimPrefix(srv.URL, "http://")
			for path, want := range map[string][]byte{"/gzip": s.gz, "/plain": s.plain, "/chunked": s.chunked, "/redirect": nil} {
				r := resp[srv.URL+path]
				if r == nil {
					t.Errorf("no response record for %s", path)
					continue
				}
				head, payload := r.HTTPParts()
				if want != nil && !bytes.Equal(payload, want) {
					t.Errorf("%s: payload of %d bytes, want the %d the server sent", path, len(payload), len(want))
				}
				if !bytes.HasPrefix(head, []byte("HTTP/1.1 ")) {
					t.Errorf("%s: head starts %q, want the status line", path, head[:min(len(head), 20)])
				}
				if got, want := r.Get("WARC-IP-Address"), "127.0.0.1"; got != want {
					t.Errorf("%s: WARC-IP-Address %q, want %q", path, got, want)
				}
			}
			if r := resp[srv.URL+"/gzip"]; r != nil {
				head, _ := r.HTTPParts()
				if !bytes.Contains(head, []byte("\r\nContent-Encoding: gzip\r\n")) {
					t.Errorf("/gzip: head %q lacks Content-Encoding: gzip", head)
				}
			}
			if r := resp[srv.URL+"/chunked"]; r != nil {
				head, _ := r.HTTPParts()
				if !bytes.Contains(head, []byte("\r\nX-Crawler-Transfer-Encoding: chunked\r\n")) || bytes.Contains(head, []byte("\r\nTransfer-Encoding")) {
					t.Errorf("/chunked: head %q, want Transfer-Encoding renamed X-Crawler-Transfer-Encoding", head)
				}
			}

			// Each response has one request, linked, as written.
			reqs := warctest.ByType(recs, "request")
			all := append(warctest.ByType(recs, "response"), warctest.ByType(recs, "revisit")...)
			if len(reqs) != len(all) || len(all) != 5 {
				t.Errorf("got %d requests and %d responses and revisits, want 5 of each", len(reqs), len(all))
			}
			ids := make(map[string]*warctest.Record)
			for _, r := range all {
				ids[r.Get("WARC-Record-ID")] = r
			}
			for _, q := range reqs {
				r := ids[q.Get("WARC-Concurrent-To")]
				if r == nil {
					t.Errorf("request of %s: WARC-Concurrent-To %s names no response", q.Get("WARC-Target-URI"), q.Get("WARC-Concurrent-To"))
					continue
				}
				if q.Get("WARC-Target-URI") != r.Get("WARC-Target-URI") {
					t.Errorf("request of %s is concurrent to the response of %s", q.Get("WARC-Target-URI"), r.Get("WARC-Target-URI"))
				}
				path := strings.TrimPrefix(q.Get("WARC-Target-URI"), srv.URL)
				want := "GET " + path + " HTTP/1.1\r\nHost: " + host + "\r\n"
				if !bytes.HasPrefix(q.Block, []byte(want)) || !bytes.HasSuffix(q.Block, []byte("\r\n\r\n")) {
					t.Errorf("request block %q, want it to start %q and end with an empty line", q.Block, want)
				}
				if !bytes.Contains(q.Block, []byte("\r\nAccept-Encoding: gzip\r\n")) {
					t.Errorf("request block %q lacks the Accept-Encoding the transport sent", q.Block)
				}
			}
			if n := len(warctest.ByType(recs, "revisit")); n != 1 {
				t.Errorf("got %d revisit records, want 1 (the second /plain)", n)
			}
		})
	}
}

func TestGzipMembersSeekable(t *testing.T) {
	_, srv := newSite(t)
	w := newWriter(t, Options{})
	client := &http.Client{Transport: w.Transport(nil)}
	for _, p := range []string{"/plain", "/gzip", "/chunked"} {
		get(t, client, srv.URL+p)
	}
	w.Close()
	name := w.Files()[0]
	recs := warctest.Read(t, name)
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 7 {
		t.Fatalf("got %d records, want 7 (warcinfo and 3 exchanges)", len(recs))
	}
	// From each member's offset alone, the record decompresses whole.
	for i := len(recs) - 1; i >= 0; i-- {
		r := recs[i]
		zr, err := gzip.NewReader(bytes.NewReader(data[r.Offset:]))
		if err != nil {
			t.Fatalf("record %d at offset %d: %v", i, r.Offset, err)
		}
		zr.Multistream(false)
		b, err := io.ReadAll(zr)
		if err != nil {
			t.Fatalf("record %d at offset %d: %v", i, r.Offset, err)
		}
		got := warctest.Parse(t, name, b)
		if len(got) != 1 || got[0].Get("WARC-Record-ID") != r.Get("WARC-Record-ID") {
			t.Errorf("member at offset %d: got %d records, want the one record %s", r.Offset, len(got), r.Get("WARC-Record-ID"))
		}
	}
}

func TestRotation(t *testing.T) {
	_, srv := newSite(t)
	for _, plain := range []bool{false, true} {
		t.Run(fmt.Sprintf("NoGzip=%v", plain), func(t *testing.T) {
			const maxSize = 1500
			w := newWriter(t, Options{Prefix: "rot", MaxSize: maxSize, NoGzip: plain, NoRevisits: true})
			client := &http.Client{Transport: w.Transport(nil)}
			const n = 12
			for i := range n {
				get(t, client, fmt.Sprintf("%s/same/%d", srv.URL, i))
			}
			w.Close()
			files := w.Files()
			if len(files) < 3 {
				t.Fatalf("got %d files, want several at a %d byte limit", len(files), maxSize)
			}
			ext := ".warc.gz"
			if plain {
				ext = ".warc"
			}
			for i, f := range files {
				if want := fmt.Sprintf("rot-%05d%s", i, ext); filepath.Base(f) != want {
					t.Errorf("file %d is %s, want %s", i, filepath.Base(f), want)
				}
				st, err := os.Stat(f)
				if err != nil {
					t.Fatal(err)
				}
				if i < len(files)-1 && st.Size() < maxSize {
					t.Errorf("%s: %d bytes, closed under the %d limit", f, st.Size(), maxSize)
				}
				recs := warctest.Read(t, f)
				if got := recs[0].Get("WARC-Filename"); got != filepath.Base(f) {
					t.Errorf("%s: warcinfo WARC-Filename %q", f, got)
				}
				if len(warctest.ByType(recs, "warcinfo")) != 1 {
					t.Errorf("%s: %d warcinfo records, want 1", f, len(warctest.ByType(recs, "warcinfo")))
				}
			}
			recs := readAll(t, w)
			if got := len(warctest.ByType(recs, "response")); got != n {
				t.Errorf("got %d responses over %d files, want %d", got, len(files), n)
			}
		})
	}
}

func TestRevisit(t *testing.T) {
	s, srv := newSite(t)
	for _, noRevisits := range []bool{false, true} {
		t.Run(fmt.Sprintf("NoRevisits=%v", noRevisits), func(t *testing.T) {
			w := newWriter(t, Options{NoRevisits: noRevisits})
			client := &http.Client{Transport: w.Transport(nil)}
			get(t, client, srv.URL+"/same/a")
			get(t, client, srv.URL+"/same/b")
			get(t, client, srv.URL+"/same/a")
			w.Close()
			recs := readAll(t, w)
			resps, revisits := warctest.ByType(recs, "response"), warctest.ByType(recs, "revisit")
			if noRevisits {
				if len(resps) != 3 || len(revisits) != 0 {
					t.Fatalf("got %d responses and %d revisits, want 3 and 0", len(resps), len(revisits))
				}
				return
			}
			if len(resps) != 1 || len(revisits) != 2 {
				t.Fatalf("got %d responses and %d revisits, want 1 and 2", len(resps), len(revisits))
			}
			first := resps[0]
			_, payload := first.HTTPParts()
			if !bytes.Equal(payload, s.plain) {
				t.Errorf("first response payload %q, want %q", payload, s.plain)
			}
			for _, r := range revisits {
				if got, want := r.Get("WARC-Refers-To"), first.Get("WARC-Record-ID"); got != want {
					t.Errorf("revisit WARC-Refers-To %s, want %s", got, want)
				}
				if got, want := r.Get("WARC-Refers-To-Target-URI"), srv.URL+"/same/a"; got != want {
					t.Errorf("revisit WARC-Refers-To-Target-URI %s, want %s", got, want)
				}
				if got, want := r.Get("WARC-Refers-To-Date"), first.Get("WARC-Date"); got != want {
					t.Errorf("revisit WARC-Refers-To-Date %s, want %s", got, want)
				}
				if got, want := r.Get("WARC-Payload-Digest"), first.Get("WARC-Payload-Digest"); got != want {
					t.Errorf("revisit WARC-Payload-Digest %s, want %s", got, want)
				}
				head, body := r.HTTPParts()
				if len(body) != 0 || !bytes.HasPrefix(head, []byte("HTTP/1.1 200 OK\r\n")) {
					t.Errorf("revisit block %q, want the response head and no body", r.Block)
				}
			}
			if got, want := revisits[0].Get("WARC-Target-URI"), srv.URL+"/same/b"; got != want {
				t.Errorf("first revisit of %s, want %s", got, want)
			}
		})
	}
}

// rawServer serves each connection with handle, on a loopback listener.
func rawServer(t *testing.T, handle func(c net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer c.Close()
				handle(c)
			})
		}
	})
	return "http://" + ln.Addr().String()
}

// readRequest reads a request head from c.
func readRequest(c net.Conn) {
	var head []byte
	buf := make([]byte, 1)
	for !bytes.HasSuffix(head, []byte("\r\n\r\n")) {
		if _, err := c.Read(buf); err != nil {
			return
		}
		head = append(head, buf[0])
	}
}

func TestFailedConnectionWritesNothing(t *testing.T) {
	// A port with nothing listening.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + ln.Addr().String()
	ln.Close()
	cases := map[string]string{
		"refused":       refused,
		"closed":        rawServer(t, func(c net.Conn) {}),
		"after request": rawServer(t, func(c net.Conn) { readRequest(c) }),
		"mid-head": rawServer(t, func(c net.Conn) {
			readRequest(c)
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n")
		}),
	}
	for name, url := range cases {
		t.Run(name, func(t *testing.T) {
			w := newWriter(t, Options{})
			client := &http.Client{Transport: w.Transport(nil)}
			if resp, err := client.Get(url); err == nil {
				resp.Body.Close()
				t.Fatalf("GET %s: no error", url)
			}
			w.Close()
			if recs := readAll(t, w); len(recs) != 1 {
				t.Errorf("got %d records, want only the warcinfo", len(recs))
			}
		})
	}
}

func TestTruncated(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	t.Run("by the caller", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", fmt.Sprint(len(big)))
			w.Write(big)
		}))
		defer srv.Close()
		w := newWriter(t, Options{})
		client := &http.Client{Transport: w.Transport(nil)}
		resp, err := client.Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		io.CopyN(io.Discard, resp.Body, 10<<10)
		resp.Body.Close()
		w.Close()
		resps := warctest.ByType(readAll(t, w), "response")
		if len(resps) != 1 {
			t.Fatalf("got %d responses, want 1", len(resps))
		}
		r := resps[0]
		_, payload := r.HTTPParts()
		if got, want := r.Get("WARC-Truncated"), "length"; got != want {
			t.Errorf("WARC-Truncated %q, want %q (payload %d of %d bytes)", got, want, len(payload), len(big))
		}
		if len(payload) < 10<<10 || len(payload) >= len(big) || !bytes.Equal(payload, big[:len(payload)]) {
			t.Errorf("payload of %d bytes, want a prefix of the %d sent, at least the 10240 read", len(payload), len(big))
		}
	})
	t.Run("by the server", func(t *testing.T) {
		url := rawServer(t, func(c net.Conn) {
			readRequest(c)
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly this")
		})
		w := newWriter(t, Options{})
		client := &http.Client{Transport: w.Transport(nil)}
		resp, err := client.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadAll(resp.Body); err == nil {
			t.Errorf("reading a body cut short: no error")
		}
		resp.Body.Close()
		w.Close()
		resps := warctest.ByType(readAll(t, w), "response")
		if len(resps) != 1 {
			t.Fatalf("got %d responses, want 1", len(resps))
		}
		_, payload := resps[0].HTTPParts()
		if got, want := resps[0].Get("WARC-Truncated"), "disconnect"; got != want || string(payload) != "only this" {
			t.Errorf("WARC-Truncated %q, payload %q; want %q, %q", got, payload, want, "only this")
		}
	})
}

func TestRetriesEachRecorded(t *testing.T) {
	var mu sync.Mutex
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls++
		n := calls
		mu.Unlock()
		if n == 1 {
			http.Error(w, "try again", http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	w := newWriter(t, Options{})
	client := &http.Client{Transport: w.Transport(nil)}
	get(t, client, srv.URL+"/x")
	get(t, client, srv.URL+"/x")
	w.Close()
	resps := warctest.ByType(readAll(t, w), "response")
	if len(resps) != 2 {
		t.Fatalf("got %d responses, want one per attempt, 2", len(resps))
	}
	for i, want := range []string{"HTTP/1.1 503 ", "HTTP/1.1 200 "} {
		if !bytes.HasPrefix(resps[i].Block, []byte(want)) {
			t.Errorf("response %d starts %q, want %q", i, resps[i].Block[:20], want)
		}
	}
}

func TestConcurrent(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "page %s\n", r.URL.Path)
	}))
	defer srv.Close()
	w := newWriter(t, Options{MaxSize: 8 << 10})
	tr := w.Transport(&http.Transport{MaxIdleConnsPerHost: 4})
	client := &http.Client{Transport: tr}
	const workers, each = 8, 25
	getConcurrently(t, client, srv.URL, workers, each)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	recs := readAll(t, w)
	resp := responses(t, recs)
	if len(resp) != workers*each || len(warctest.ByType(recs, "request")) != workers*each {
		t.Errorf("got %d responses and %d requests, want %d of each", len(resp), len(warctest.ByType(recs, "request")), workers*each)
	}
	for u, r := range resp {
		_, payload := r.HTTPParts()
		if want := "page " + strings.TrimPrefix(u, srv.URL) + "\n"; string(payload) != want {
			t.Errorf("%s: payload %q, want %q", u, payload, want)
		}
	}
}

// getConcurrently gets base/I/J for each I of workers and J of each, the
// workers at once, each reading its bodies to their end.
func getConcurrently(t *testing.T, client *http.Client, base string, workers, each int) {
	t.Helper()
	var wg sync.WaitGroup
	for i := range workers {
		wg.Go(func() {
			for j := range each {
				url := fmt.Sprintf("%s/%d/%d", base, i, j)
				resp, err := client.Get(url)
				if err != nil {
					t.Errorf("GET %s: %v", url, err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
}

// TestHTTPS checks that HTTPS is recorded in plain text, and over HTTP/1.1
// from a server and a client transport that would both speak HTTP/2.
func TestHTTPS(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor != 1 {
			t.Errorf("request over %s, want HTTP/1.1", r.Proto)
		}
		io.WriteString(w, "secret")
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	w := newWriter(t, Options{})
	base := srv.Client().Transport.(*http.Transport)
	if !base.ForceAttemptHTTP2 {
		t.Fatal("the test server's client transport does not attempt HTTP/2")
	}
	client := &http.Client{Transport: w.Transport(base)}
	if got := string(get(t, client, srv.URL+"/s")); got != "secret" {
		t.Fatalf("GET /s: %q", got)
	}
	w.Close()
	resp := responses(t, readAll(t, w))
	r := resp[srv.URL+"/s"]
	if r == nil || !strings.HasPrefix(srv.URL, "https://") {
		t.Fatalf("no response record for %s/s: %v", srv.URL, resp)
	}
	if _, payload := r.HTTPParts(); string(payload) != "secret" {
		t.Errorf("payload %q, want %q", payload, "secret")
	}
}

func TestWriteErrorStopsRequests(t *testing.T) {
	_, srv := newSite(t)
	told := make(chan error, 2)
	w := newWriter(t, Options{NoGzip: true, Create: func(string) (io.WriteCloser, error) {
		return &fullFile{room: 2000}, nil
	}, OnError: func(err error) { told <- err }})
	client := &http.Client{Transport: w.Transport(nil)}
	// More than the room: the records are written after the exchanges,
	// and the error is told when the write fails.
	for i := 0; i < 10; i++ {
		resp, err := client.Get(fmt.Sprintf("%s/same/%d", srv.URL, i))
		if err != nil {
			break
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	select {
	case err := <-told:
		if !errors.Is(err, errFull) {
			t.Errorf("OnError was told %v, want an error wrapping %v", err, errFull)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("OnError not called within 10s of filling the disk")
	}
	resp, err := client.Get(srv.URL + "/same/after")
	if err == nil {
		resp.Body.Close()
	}
	if !errors.Is(err, errFull) {
		t.Fatalf("GET after the disk filled: error %v, want one wrapping %v", err, errFull)
	}
	if !errors.Is(w.Err(), errFull) || !errors.Is(w.Close(), errFull) {
		t.Errorf("Err %v, Close %v; want both wrapping %v", w.Err(), w.Close(), errFull)
	}
	if len(told) != 0 {
		t.Errorf("OnError was told again: %v; want once", <-told)
	}
}

func TestUnwritableDir(t *testing.T) {
	_, err := NewWriter(Options{Dir: filepath.Join(t.TempDir(), "missing")})
	if err == nil {
		t.Fatal("NewWriter in a missing directory: no error")
	}
}

func TestNotATransport(t *testing.T) {
	w := newWriter(t, Options{})
	rt := w.Transport(roundTripFunc(func(*http.Request) (*http.Response, error) { return nil, nil }))
	req, _ := http.NewRequest("GET", "http://example.invalid/", nil)
	if _, err := rt.RoundTrip(req); err == nil {
		t.Error("RoundTrip through a Transport of a non-*http.Transport: no error")
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestNoBody checks the responses that have no body whatever their header
// says: to HEAD, 204 and 304.
func TestNoBody(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/204":
			w.WriteHeader(http.StatusNoContent)
		case "/304":
			w.WriteHeader(http.StatusNotModified)
		default:
			w.Header().Set("Content-Length", "5")
			io.WriteString(w, "hello")
		}
	}))
	defer srv.Close()
	w := newWriter(t, Options{})
	client := &http.Client{Transport: w.Transport(nil)}
	resp, err := client.Head(srv.URL + "/head")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	get(t, client, srv.URL+"/204")
	get(t, client, srv.URL+"/304")
	get(t, client, srv.URL+"/after") // on the same connection
	w.Close()
	resp2 := responses(t, readAll(t, w))
	for _, p := range []string{"/head", "/204", "/304", "/after"} {
		r := resp2[srv.URL+p]
		if r == nil {
			t.Errorf("no response record for %s", p)
			continue
		}
		_, payload := r.HTTPParts()
		want := ""
		if p == "/after" {
			want = "hello"
		}
		if string(payload) != want || r.Get("WARC-Truncated") != "" {
			t.Errorf("%s: payload %q, WARC-Truncated %q; want %q, none", p, payload, r.Get("WARC-Truncated"), want)
		}
	}
}

func TestHTTPSProxyRefused(t *testing.T) {
	w := newWriter(t, Options{})
	proxy, _ := url.Parse("http://127.0.0.1:1")
	client := &http.Client{Transport: w.Transport(&http.Transport{Proxy: http.ProxyURL(proxy)})}
	if resp, err := client.Get("https://example.invalid/"); err == nil {
		resp.Body.Close()
		t.Fatal("GET https through a proxy: no error")
	}
}

// Close stops admitting exchanges and cuts those under way: a response
// being read is recorded as far as it was read, marked WARC-Truncated:
// unspecified; one whose head had not come is not recorded, and its
// request fails with ErrClosed when it comes; a request after Close fails
// with ErrClosed.
func TestCloseCutsExchanges(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<12) // 64 KiB
	release := make(chan struct{})
	waiting := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/slow":
			w.Header().Set("Content-Length", fmt.Sprint(len(big)))
			w.Write(big[:len(big)/2])
			w.(http.Flusher).Flush()
		case "/nohead":
			waiting <- struct{}{}
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	var once sync.Once
	answer := func() { once.Do(func() { close(release) }) }
	defer answer()
	w := newWriter(t, Options{})
	client := &http.Client{Transport: w.Transport(nil)}
	resp, err := client.Get(srv.URL + "/slow")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if _, err := io.ReadFull(resp.Body, make([]byte, 1000)); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		resp, err := client.Get(srv.URL + "/nohead")
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	<-waiting // its request was sent; no response yet
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Get(srv.URL + "/slow"); !errors.Is(err, ErrClosed) {
		t.Errorf("GET after Close: error %v, want one wrapping ErrClosed", err)
	}
	// The response to /nohead comes now, after Close: it is not passed on
	// unrecorded.
	answer()
	if err := <-done; !errors.Is(err, ErrClosed) {
		t.Errorf("/nohead answered after Close: error %v, want one wrapping ErrClosed", err)
	}
	recs := readAll(t, w)
	resps := warctest.ByType(recs, "response")
	if len(resps) != 1 || resps[0].Get("WARC-Target-URI") != srv.URL+"/slow" {
		t.Fatalf("got %d responses, want only that of /slow (none for /nohead, whose head had not come)", len(resps))
	}
	_, payload := resps[0].HTTPParts()
	if got := resps[0].Get("WARC-Truncated"); got != "unspecified" || len(payload) < 1000 || len(payload) >= len(big) || !bytes.HasPrefix(big, payload) {
		t.Errorf("/slow: WARC-Truncated %q, payload of %d bytes; want unspecified, a prefix of the %d sent, at least the 1000 read", got, len(payload), len(big))
	}
	if n := len(warctest.ByType(recs, "request")); n != 1 {
		t.Errorf("got %d request records, want 1", n)
	}
}

// limitedFile is a file that fills after room bytes: the write that
// passes it writes what fits and fails, as a full disk does.
type limitedFile struct {
	*os.File
	room int
}

func (f *limitedFile) Write(p []byte) (int, error) {
	if len(p) > f.room {
		n, _ := f.File.Write(p[:f.room])
		f.room = 0
		return n, fmt.Errorf("write: %w", errFull)
	}
	f.room -= len(p)
	return f.File.Write(p)
}

// A write that fails part way is cut back to the last whole exchange: the
// file and its index hold whole records only, and no response without its
// request, wherever in an exchange the disk fills.
func TestFailedWriteKeepsWholeRecords(t *testing.T) {
	_, srv := newSite(t)
	for _, plain := range []bool{false, true} {
		for room := 5000; room < 6500; room += 53 {
			failedWriteKeepsWholeExchanges(t, srv, plain, room)
		}
	}
}

func failedWriteKeepsWholeExchanges(t *testing.T, srv *httptest.Server, plain bool, room int) {
	{
		t.Run(fmt.Sprintf("NoGzip=%v,room=%d", plain, room), func(t *testing.T) {
			dir := t.TempDir()
			index := filepath.Join(dir, "crawl.cdxj")
			w := newWriter(t, Options{Dir: dir, NoGzip: plain, Index: index, NoRevisits: true, Create: func(name string) (io.WriteCloser, error) {
				f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
				if err != nil || name == index {
					return f, err
				}
				return &limitedFile{File: f, room: room}, nil
			}})
			client := &http.Client{Transport: w.Transport(nil)}
			for i := 0; i < 20; i++ {
				resp, err := client.Get(fmt.Sprintf("%s/same/%d", srv.URL, i))
				if err != nil {
					break
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			if err := w.Close(); !errors.Is(err, errFull) {
				t.Fatalf("Close: %v, want an error wrapping %v", err, errFull)
			}
			recs := readAll(t, w) // fails on a record cut short
			st, err := os.Stat(w.Files()[0])
			if err != nil {
				t.Fatal(err)
			}
			if len(recs) < 3 || st.Size() > int64(room) {
				t.Errorf("%d records in %d bytes, want the warcinfo and the whole exchanges that fit in %d", len(recs), st.Size(), room)
			}
			requested := map[string]bool{}
			for _, r := range warctest.ByType(recs, "request") {
				requested[r.Get("WARC-Concurrent-To")] = true
			}
			resps := warctest.ByType(recs, "response")
			for _, r := range resps {
				if !requested[r.Get("WARC-Record-ID")] {
					t.Errorf("response %s without its request record", r.Get("WARC-Target-URI"))
				}
			}
			if n := len(warctest.ByType(recs, "request")); n != len(resps) {
				t.Errorf("%d requests, %d responses: want whole exchanges", n, len(resps))
			}
			_, lines := readIndex(t, index)
			if want := len(resps); len(lines) != want {
				t.Errorf("%d index lines, want one per response kept, %d", len(lines), want)
			}
		})
	}
}

// Exchanges finishing at once on many connections, all with one payload:
// the response comes first in the file, every revisit after it.
func TestRevisitOrder(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "the same payload for every URL\n")
	}))
	defer srv.Close()
	w := newWriter(t, Options{})
	client := &http.Client{Transport: w.Transport(&http.Transport{MaxIdleConnsPerHost: 8})}
	const workers, each = 8, 25
	getConcurrently(t, client, srv.URL, workers, each)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	recs := readAll(t, w)
	if r, v := len(warctest.ByType(recs, "response")), len(warctest.ByType(recs, "revisit")); r != 1 || v != workers*each-1 {
		t.Fatalf("got %d responses and %d revisits, want 1 and %d", r, v, workers*each-1)
	}
	for _, r := range recs {
		switch r.Get("WARC-Type") {
		case "revisit":
			t.Fatalf("revisit of %s before the response it refers to", r.Get("WARC-Target-URI"))
		case "response":
			return
		}
	}
}

// A request's target in origin form is the path and query of the URL,
// whatever they hold: a path with a scheme's "://" in it (a web archive's
// "/web/2020/http://...") is recorded under the URL fetched, not as a URL
// of its own, for both the request and the response.
func TestTargetURIPathWithScheme(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(r.RequestURI)) // a payload of its own: no revisit
	}))
	t.Cleanup(srv.Close)
	w := newWriter(t, Options{})
	client := &http.Client{Transport: w.Transport(nil)}
	paths := []string{"/web/2020/http://x.example/a?b=c", "/v3/ht!tp://x", "/v7/xy://z", "/plain?u=https://x.example/"}
	for _, p := range paths {
		get(t, client, srv.URL+p)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	recs := readAll(t, w)
	for _, typ := range []string{"request", "response"} {
		got := map[string]bool{}
		for _, r := range warctest.ByType(recs, typ) {
			got[r.Get("WARC-Target-URI")] = true
		}
		for _, p := range paths {
			if !got[srv.URL+p] {
				t.Errorf("no %s record for %s; the records' WARC-Target-URI: %v", typ, srv.URL+p, slices.Sorted(maps.Keys(got)))
			}
		}
	}
}

// TestTargetURIIsRFC3986: a request target holding octets RFC 3986 does
// not allow in a URI, as a browser sends them ("|", "^", "{", "}", "`",
// "[", "]", a lone "%"), is recorded with them percent-encoded in
// WARC-Target-URI (ISO 28500 wants an RFC 3986 URI there), in the request
// and response records and the index; the request record keeps the
// request line as sent, and the server got it as sent.
func TestTargetURIIsRFC3986(t *testing.T) {
	var mu sync.Mutex
	var sent []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		sent = append(sent, r.RequestURI)
		mu.Unlock()
		w.Write([]byte(r.RequestURI)) // a payload of its own: no revisit
	}))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	w := newWriter(t, Options{Dir: dir, Index: filepath.Join(dir, "t.cdxj")})
	client := &http.Client{Transport: w.Transport(nil)}
	host := strings.TrimPrefix(srv.URL, "http://")
	cases := []struct{ target, uri string }{
		{"/a|b^c{d}`e[f]g?h|i=[j]", "/a%7Cb%5Ec%7Bd%7D%60e%5Bf%5Dg?h%7Ci=%5Bj%5D"},
		{"/100%zz/%41%4", "/100%25zz/%41%254"},
		{"/ok/p;q=1?a=b&c=d:e@f!$'()*+,~", "/ok/p;q=1?a=b&c=d:e@f!$'()*+,~"},
		{"/x\"y", "/x%22y"},
	}
	for _, c := range cases {
		req, err := http.NewRequest("GET", srv.URL, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.URL = &url.URL{Scheme: "http", Host: host, Opaque: c.target} // sent as it is
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", c.target, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	for _, c := range cases {
		// net/http's server answers 400 to a lone "%" without calling
		// the handler: that exchange is recorded all the same.
		if !strings.Contains(c.target, "%zz") && !slices.Contains(sent, c.target) {
			t.Errorf("the server got %q, not %q as sent", sent, c.target)
		}
	}
	mu.Unlock()
	recs := readAll(t, w)
	index, err := os.ReadFile(filepath.Join(dir, "t.cdxj"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		want := srv.URL + c.uri
		for _, typ := range []string{"request", "response"} {
			found := false
			for _, r := range warctest.ByType(recs, typ) {
				if r.Get("WARC-Target-URI") == want {
					found = true
					if typ == "request" && !bytes.HasPrefix(r.Block, []byte("GET "+c.target+" HTTP/1.1\r\n")) {
						t.Errorf("the request record of %s starts %q, want the request line as sent", want, r.Block[:min(len(r.Block), 60)])
					}
				}
			}
			if !found {
				t.Errorf("no %s record with WARC-Target-URI %s", typ, want)
			}
		}
		if !bytes.Contains(index, []byte(`"url":"`+want+`"`)) {
			t.Errorf("the index has no line of %s:\n%s", want, index)
		}
	}
}

// An exchange whose body a client read to its end, and closed, without an
// error, is in the file: the end of a response reaches its reader only
// once its records are written, and a write that fails fails the reads
// waiting on it. So a crawler that counts a URL done when its body ends
// never counts one the archive lost to a full disk. Bodies read to the
// end and bodies closed early (truncated) are checked, on 8 connections
// at once.
func TestBodyEndsAfterRecord(t *testing.T) {
	page := bytes.Repeat([]byte("x"), 3000)
	big := bytes.Repeat([]byte("y"), 100000)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		if strings.HasPrefix(r.URL.Path, "/big/") {
			w.Write(big)
			return
		}
		w.Write(page)
	}))
	t.Cleanup(srv.Close)
	for round := range 5 {
		dir := t.TempDir()
		w := newWriter(t, Options{Dir: dir, NoGzip: true, NoRevisits: true, Create: func(name string) (io.WriteCloser, error) {
			f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
			if err != nil {
				return f, err
			}
			return &limitedFile{File: f, room: 60000 + 7000*round}, nil
		}})
		client := &http.Client{Transport: w.Transport(&http.Transport{MaxIdleConnsPerHost: 8})}
		var (
			mu     sync.Mutex
			ok     []string // read to the end, or as far as wanted, and closed without an error
			failed int
			wg     sync.WaitGroup
		)
		for i := range 8 {
			wg.Go(func() {
				for j := range 30 {
					url := fmt.Sprintf("%s/%d/%d", srv.URL, i, j)
					if j%3 == 0 {
						url = fmt.Sprintf("%s/big/%d/%d", srv.URL, i, j)
					}
					resp, err := client.Get(url)
					if err != nil {
						mu.Lock()
						failed++
						mu.Unlock()
						continue
					}
					if j%3 == 0 {
						// Closed early: recorded by its Close, truncated.
						_, err = io.CopyN(io.Discard, resp.Body, 100)
					} else {
						_, err = io.Copy(io.Discard, resp.Body)
					}
					if cerr := resp.Body.Close(); err == nil {
						err = cerr
					}
					mu.Lock()
					if err == nil {
						ok = append(ok, url)
					} else {
						failed++
					}
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if err := w.Close(); !errors.Is(err, errFull) {
			t.Fatalf("Close: %v, want an error wrapping %v", err, errFull)
		}
		got := map[string]bool{}
		for _, r := range warctest.ByType(readAll(t, w), "response") {
			got[r.Get("WARC-Target-URI")] = true
		}
		if len(ok) == 0 || failed == 0 {
			t.Fatalf("round %d: %d exchanges ended well and %d failed: want the disk to fill part way", round, len(ok), failed)
		}
		for _, u := range ok {
			if !got[u] {
				t.Errorf("round %d: %s was read to its end without an error, and has no response record (%d of %d read well are recorded)", round, u, len(got), len(ok))
			}
		}
	}
}

// A response cut short is marked by why (ISO 28500 §5.13): "length" when
// its reader closed it early, "time" when its request's deadline passed,
// "unspecified" when its request was cancelled (a crawl stopped), whether
// the transport or the reader's Close ends it.
func TestTruncatedReason(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<12) // 64 KiB
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", fmt.Sprint(len(big)))
		w.Write(big[:len(big)/2])
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer srv.Close()
	w := newWriter(t, Options{})
	client := &http.Client{Transport: w.Transport(nil)}
	get := func(path string, ctx context.Context, cancel func(), read int) {
		req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+path, nil)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(resp.Body, make([]byte, read)); err != nil {
			t.Fatal(err)
		}
		if cancel != nil {
			cancel()
			io.Copy(io.Discard, resp.Body) // fails: the request is done
		}
		resp.Body.Close()
	}
	get("/length", context.Background(), nil, 1000)
	ctx, cancel := context.WithCancel(context.Background())
	get("/cancelled", ctx, cancel, 1000)
	tctx, tcancel := context.WithTimeout(context.Background(), time.Hour)
	defer tcancel()
	dctx, dcancel := context.WithDeadline(tctx, time.Now().Add(300*time.Millisecond))
	defer dcancel()
	get("/deadline", dctx, func() { <-dctx.Done() }, 1000)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range warctest.ByType(readAll(t, w), "response") {
		got[strings.TrimPrefix(r.Get("WARC-Target-URI"), srv.URL)] = r.Get("WARC-Truncated")
	}
	want := map[string]string{"/length": "length", "/cancelled": "unspecified", "/deadline": "time"}
	if !maps.Equal(got, want) {
		t.Errorf("WARC-Truncated by path: %v, want %v", got, want)
	}
}

// A file whose warcinfo could not be written whole (its disk full as it
// began: at NewWriter, or at a rotation) is removed, and Files does not
// list it: a reader finds no WARC file of 0 bytes, and a resumed Writer
// makes it again. On a real full disk: a tmpfs, mounted where the test may
// (root); a file of the Writer's own making only (Options.Create nil).
func TestNoEmptyFileOnFullDisk(t *testing.T) {
	_, srv := newSite(t)
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("mount tmpfs: %v: %s", err, out)
	}
	defer exec.Command("umount", dir).Run()
	fill := func(room int) {
		t.Helper()
		os.Remove(filepath.Join(dir, "fill"))
		var fs syscall.Statfs_t
		if err := syscall.Statfs(dir, &fs); err != nil {
			t.Fatal(err)
		}
		free := int(fs.Bavail) * int(fs.Bsize)
		if err := os.WriteFile(filepath.Join(dir, "fill"), make([]byte, max(0, free-room)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, plain := range []bool{false, true} {
		// At NewWriter: no room at all.
		fill(0)
		file := filepath.Join(dir, fmt.Sprintf("first-%v.warc.gz", plain))
		if w, err := NewWriter(Options{File: file, NoGzip: plain}); err == nil {
			w.Close()
			t.Fatalf("NewWriter on a full disk: no error")
		}
		if _, err := os.Stat(file); !os.IsNotExist(err) {
			t.Errorf("NoGzip=%v: the first file after NewWriter failed: %v, want none", plain, err)
		}
		// At a rotation: room for the first file, none for the
		// second's warcinfo.
		fill(12 << 10)
		file = filepath.Join(dir, fmt.Sprintf("rot-%v.warc.gz", plain))
		w, err := NewWriter(Options{File: file, NoGzip: plain, MaxSize: 1})
		if err != nil {
			t.Fatal(err)
		}
		client := &http.Client{Transport: w.Transport(routeAll(srv))}
		for i := range 20 {
			resp, err := client.Get(fmt.Sprintf("%s/same/%d", srv.URL, i))
			if err != nil {
				break
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		if err := w.Close(); err == nil || !strings.Contains(err.Error(), "no space left") {
			t.Fatalf("NoGzip=%v: Close: %v, want the disk full", plain, err)
		}
		files := w.Files()
		for _, f := range files {
			st, err := os.Stat(f)
			if err != nil || st.Size() == 0 {
				t.Errorf("NoGzip=%v: %s listed by Files: %v, size %d; want a file with its warcinfo", plain, f, err, st.Size())
			}
		}
		if next := w.fileName(len(files)); exists(next) {
			t.Errorf("NoGzip=%v: %s, which Files does not list, exists", plain, next)
		}
		for _, f := range files {
			os.Remove(f)
		}
	}
}
