package warc

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Transport returns a copy of rt whose every HTTP exchange is recorded in
// w; rt nil means http.DefaultTransport's settings without its proxy. rt must be an *http.Transport
// (the crawler's default client has one; a RoundTripper wrapping one, such
// as the crawler's redirect guard, wraps the returned transport instead):
// the recording sits on its connections. Any other RoundTripper makes every
// request fail with an error saying so, rather than archive nothing
// silently.
//
// The copy dials with rt's DialContext (or a net.Dialer), so a dialer that
// guards addresses still applies, and wraps each connection to record what
// is written to it and read from it. It makes its TLS connections itself,
// with rt's TLSClientConfig and TLSHandshakeTimeout, offering HTTP/1.1
// only; a DialTLSContext of rt is used instead when set, and must then not
// negotiate HTTP/2. A proxy (rt.Proxy) is not supported for HTTPS, whose
// tunnelled bytes the transport encrypts itself: a request that would go
// through one fails with an error saying so.
//
// A response through the copy has no TLS connection state (Response.TLS
// is nil): the transport sees the recording wrapper, not the *tls.Conn.
//
// Once w has failed to write, or is closed, requests through the copy fail
// with that error, so that a crawl stops rather than lose records. The
// returned RoundTripper is safe for concurrent use.
func (w *Writer) Transport(rt http.RoundTripper) http.RoundTripper {
	if rt == nil {
		// As the crawler's own: no proxy from the environment.
		dt := http.DefaultTransport.(*http.Transport).Clone()
		dt.Proxy = nil
		rt = dt
	}
	t, ok := rt.(*http.Transport)
	if !ok {
		err := fmt.Errorf("warc: the Transport is a %T, not an *http.Transport: its connections cannot be recorded", rt)
		return failing{err}
	}
	t = t.Clone()
	dial := t.DialContext
	if dial == nil {
		dial = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	}
	t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return w.record(c, "http"), nil
	}
	dialTLS := t.DialTLSContext
	if dialTLS == nil {
		cfg := t.TLSClientConfig
		timeout := t.TLSHandshakeTimeout
		dialTLS = func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := dial(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			var tc *tls.Config
			if cfg != nil {
				tc = cfg.Clone()
			} else {
				tc = &tls.Config{}
			}
			if tc.ServerName == "" {
				host, _, err := net.SplitHostPort(addr)
				if err != nil {
					host = addr
				}
				tc.ServerName = host
			}
			tc.NextProtos = []string{"http/1.1"}
			if timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, timeout)
				defer cancel()
			}
			conn := tls.Client(c, tc)
			if err := conn.HandshakeContext(ctx); err != nil {
				c.Close()
				return nil, err
			}
			return conn, nil
		}
	}
	t.DialTLSContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dialTLS(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return w.record(c, "https"), nil
	}
	// HTTP/2 has no text form to record; the TLS dialer above never
	// offers it, and this keeps the transport from trying.
	t.ForceAttemptHTTP2 = false
	t.TLSNextProto = make(map[string]func(string, *tls.Conn) http.RoundTripper)
	t.Protocols = new(http.Protocols)
	t.Protocols.SetHTTP1(true)
	return &transport{w: w, t: t}
}

// transport is what Writer.Transport returns.
type transport struct {
	w *Writer
	t *http.Transport
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := t.w.stopped(); err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	if t.t.Proxy != nil && req.URL.Scheme == "https" {
		if u, err := t.t.Proxy(req); err == nil && u != nil {
			if req.Body != nil {
				req.Body.Close()
			}
			return nil, fmt.Errorf("warc: %s through the proxy %s: HTTPS through a proxy cannot be recorded", req.URL, u.Redacted())
		}
	}
	return t.t.RoundTrip(req)
}

// CloseIdleConnections closes the idle connections of the transport, so
// that http.Client.CloseIdleConnections reaches it.
func (t *transport) CloseIdleConnections() { t.t.CloseIdleConnections() }

// stopped returns the error that ends recording, if any.
func (w *Writer) stopped() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	if w.closed {
		return ErrClosed
	}
	return nil
}

// failing is a RoundTripper that fails every request with err.
type failing struct{ err error }

func (f failing) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		req.Body.Close()
	}
	return nil, f.err
}

// record wraps c so that the HTTP/1.1 exchanges on it are written to w.
func (w *Writer) record(c net.Conn, scheme string) net.Conn {
	rc := &conn{Conn: c, w: w, scheme: scheme}
	if a, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		rc.ip = a.IP.String()
	}
	return rc
}

// conn records the HTTP/1.1 exchanges on a connection. The transport
// writes a request, then reads its response, and only then writes the
// next (net/http does not pipeline), so the bytes written since the last
// response ended are the request of the response being read.
type conn struct {
	net.Conn
	w      *Writer
	scheme string
	ip     string

	mu     sync.Mutex
	off    bool // recording stopped: a CONNECT tunnel, an upgrade, bad framing
	req    bytes.Buffer
	start  time.Time // of req
	head   bytes.Buffer
	body   bytes.Buffer
	inBody bool
	mode   bodyMode
	left   int64 // bytes of body still expected, in modeLength
	chunk  dechunker
}

// bodyMode is how the end of a response body is found (RFC 9112 §6.3).
type bodyMode int

const (
	modeNone   bodyMode = iota // no body: HEAD, 204, 304
	modeLength                 // Content-Length
	modeChunked
	modeClose // until the server closes
)

// maxHead bounds the response head kept while looking for its end.
const maxHead = 1 << 20

func (c *conn) Write(p []byte) (int, error) {
	// The bytes are taken before they are sent: the response to them may
	// be read before this Write returns.
	c.mu.Lock()
	if !c.off {
		if c.req.Len() == 0 {
			c.start = time.Now()
		}
		c.req.Write(p)
	}
	c.mu.Unlock()
	n, err := c.Conn.Write(p)
	if n < len(p) {
		c.mu.Lock()
		if !c.off && c.req.Len() >= len(p)-n {
			c.req.Truncate(c.req.Len() - (len(p) - n))
		}
		c.mu.Unlock()
	}
	return n, err
}

func (c *conn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.off {
		return n, err
	}
	if n > 0 {
		c.feed(p[:n])
	}
	if err != nil && c.inBody {
		// The server closed, or the connection broke: the end of a body
		// read until close, or a body cut short.
		c.finish(c.mode != modeClose)
	}
	return n, err
}

// Close records a response cut short by the client (a caller that closed
// the body before its end makes the transport close the connection).
func (c *conn) Close() error {
	c.mu.Lock()
	if !c.off && c.inBody {
		c.emit("length")
	}
	c.off = true
	c.mu.Unlock()
	return c.Conn.Close()
}

// feed takes bytes read from the connection. c.mu is held.
func (c *conn) feed(p []byte) {
	for len(p) > 0 && !c.off {
		if !c.inBody {
			p = c.feedHead(p)
			continue
		}
		switch c.mode {
		case modeLength:
			n := min(int64(len(p)), c.left)
			c.body.Write(p[:n])
			c.left -= n
			p = p[n:]
			if c.left == 0 {
				c.finish(false)
			}
		case modeChunked:
			n, done, err := c.chunk.feed(p, &c.body)
			p = p[n:]
			if err != nil {
				// Framing net/http will refuse too: record what came.
				c.emit("unspecified")
				c.off = true
			} else if done {
				c.finish(false)
			}
		case modeClose:
			c.body.Write(p)
			p = nil
		}
	}
}

// feedHead takes bytes of a response head and returns those left over
// after it. c.mu is held.
func (c *conn) feedHead(p []byte) []byte {
	had := c.head.Len()
	c.head.Write(p)
	b := c.head.Bytes()
	// The head ends at the first empty line; look from a little before
	// the new bytes, in case its end straddles two reads.
	from := max(had-3, 0)
	end := -1
	if i := bytes.Index(b[from:], []byte("\r\n\r\n")); i >= 0 {
		end = from + i + 4
	}
	if i := bytes.Index(b[from:], []byte("\n\n")); i >= 0 && (end < 0 || from+i+2 < end) {
		end = from + i + 2
	}
	if end < 0 {
		if c.head.Len() > maxHead {
			c.off = true
		}
		return nil
	}
	rest := p[len(p)-(len(b)-end):]
	c.head.Truncate(end)
	status, hdr, ok := parseHead(c.head.Bytes())
	if !ok {
		c.off = true
		return nil
	}
	method := requestMethod(c.req.Bytes())
	switch {
	case method == "CONNECT" || status == http.StatusSwitchingProtocols:
		// What follows is not HTTP: a tunnel or another protocol.
		c.off = true
		return nil
	case status >= 100 && status < 200:
		// An interim response; the final one follows.
		c.head.Reset()
		return rest
	}
	c.inBody = true
	c.mode = modeClose
	te := hdr["transfer-encoding"]
	cl, hasCL := hdr["content-length"]
	switch {
	case method == "HEAD" || status == http.StatusNoContent || status == http.StatusNotModified:
		c.mode = modeNone
	case te != "":
		if codings := strings.Split(te, ","); strings.EqualFold(strings.TrimSpace(codings[len(codings)-1]), "chunked") {
			c.mode = modeChunked
			c.chunk = dechunker{}
			c.head = *bytes.NewBuffer(renameTransferEncoding(c.head.Bytes()))
		}
	case hasCL:
		n, err := strconv.ParseInt(strings.TrimSpace(cl), 10, 64)
		if err != nil || n < 0 {
			c.off = true
			return nil
		}
		c.mode, c.left = modeLength, n
	}
	if c.mode == modeNone || c.mode == modeLength && c.left == 0 {
		c.finish(false)
	}
	return rest
}

// finish records the response read so far, cut if cut is set (by the
// server), and readies c for the next exchange. c.mu is held.
func (c *conn) finish(cut bool) {
	reason := ""
	if cut {
		reason = "disconnect"
	}
	c.emit(reason)
}

// emit writes the exchange and resets c for the next. c.mu is held.
func (c *conn) emit(truncated string) {
	host := requestHost(c.req.Bytes())
	target := requestTarget(c.req.Bytes())
	uri := target
	if !strings.Contains(target, "://") {
		uri = c.scheme + "://" + host + target
	}
	x := &exchange{
		targetURI: uri,
		ip:        c.ip,
		date:      c.start,
		request:   bytes.Clone(c.req.Bytes()),
		head:      bytes.Clone(c.head.Bytes()),
		body:      bytes.Clone(c.body.Bytes()),
		truncated: truncated,
	}
	// A write error is kept by the Writer; its Transport then refuses
	// further requests.
	c.w.writeExchange(x)
	c.req.Reset()
	c.head.Reset()
	c.body.Reset()
	c.inBody = false
	c.mode = modeNone
}

// parseHead reads the status code and the header fields (names lower case,
// repeated fields joined with commas) of a response head.
func parseHead(b []byte) (int, map[string]string, bool) {
	lines := strings.Split(strings.ReplaceAll(string(b), "\r\n", "\n"), "\n")
	f := strings.Fields(lines[0])
	if len(f) < 2 || !strings.HasPrefix(f[0], "HTTP/") {
		return 0, nil, false
	}
	status, err := strconv.Atoi(f[1])
	if err != nil || len(f[1]) != 3 {
		return 0, nil, false
	}
	hdr := make(map[string]string)
	for _, l := range lines[1:] {
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		k = strings.ToLower(strings.TrimSpace(k))
		v = strings.TrimSpace(v)
		if old, ok := hdr[k]; ok {
			v = old + ", " + v
		}
		hdr[k] = v
	}
	return status, hdr, true
}

// renameTransferEncoding returns head with its Transfer-Encoding field
// names changed to X-Crawler-Transfer-Encoding, the line otherwise as
// received.
func renameTransferEncoding(head []byte) []byte {
	var out bytes.Buffer
	for line := range bytes.Lines(head) {
		name, _, ok := bytes.Cut(line, []byte(":"))
		if ok && strings.EqualFold(string(bytes.TrimSpace(name)), "transfer-encoding") {
			out.WriteString("X-Crawler-")
		}
		out.Write(line)
	}
	return out.Bytes()
}

// requestLine returns the fields of the request line of a request.
func requestLine(req []byte) []string {
	line, _, _ := bytes.Cut(req, []byte("\n"))
	return strings.Fields(string(line))
}

func requestMethod(req []byte) string {
	if f := requestLine(req); len(f) > 0 {
		return f[0]
	}
	return ""
}

func requestTarget(req []byte) string {
	if f := requestLine(req); len(f) > 1 {
		return f[1]
	}
	return ""
}

// requestHost returns the Host field of a request's head.
func requestHost(req []byte) string {
	head, _, _ := bytes.Cut(req, []byte("\r\n\r\n"))
	for line := range bytes.Lines(head) {
		name, v, ok := bytes.Cut(line, []byte(":"))
		if ok && strings.EqualFold(string(name), "host") {
			return string(bytes.TrimSpace(v))
		}
	}
	return ""
}

// dechunker removes the chunked transfer coding (RFC 9112 §7.1) from a
// body fed to it in pieces of any size.
type dechunker struct {
	state int
	line  []byte // of the size line or a trailer line being read
	left  int64  // bytes left in the current chunk
}

const (
	chunkSize    = iota // reading a chunk-size line
	chunkData           // reading chunk data
	chunkEnd            // reading the CRLF after chunk data
	chunkTrailer        // reading trailer lines, up to an empty one
)

// feed appends the data of p to body and returns how many bytes of p it
// took, and whether the body ended.
func (d *dechunker) feed(p []byte, body *bytes.Buffer) (int, bool, error) {
	i := 0
	for i < len(p) {
		switch d.state {
		case chunkData:
			n := int(min(int64(len(p)-i), d.left))
			body.Write(p[i : i+n])
			i += n
			if d.left -= int64(n); d.left == 0 {
				d.state = chunkEnd
			}
		default:
			j := bytes.IndexByte(p[i:], '\n')
			if j < 0 {
				d.line = append(d.line, p[i:]...)
				if len(d.line) > 4096 {
					return len(p), false, fmt.Errorf("chunk line too long")
				}
				return len(p), false, nil
			}
			d.line = append(d.line, p[i:i+j]...)
			i += j + 1
			line := strings.TrimSpace(string(d.line))
			d.line = d.line[:0]
			switch d.state {
			case chunkSize:
				size, _, _ := strings.Cut(line, ";")
				n, err := strconv.ParseInt(strings.TrimSpace(size), 16, 64)
				if err != nil || n < 0 {
					return i, false, fmt.Errorf("bad chunk size %q", line)
				}
				if n == 0 {
					d.state = chunkTrailer
				} else {
					d.state, d.left = chunkData, n
				}
			case chunkEnd:
				if line != "" {
					return i, false, fmt.Errorf("no line end after chunk data")
				}
				d.state = chunkSize
			case chunkTrailer:
				if line == "" {
					return i, true, nil
				}
			}
		}
	}
	return i, false, nil
}
