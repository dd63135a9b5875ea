package warc

import (
	"bytes"
	"context"
	"crypto/sha1"
	"crypto/tls"
	"errors"
	"fmt"
	"hash"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
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
// with that error, so that a crawl stops rather than lose records. A
// response's body ends (io.EOF), or its Close returns, only once the
// exchange's records are written, and returns the error instead when they
// could not be (see "How records are written"). The returned RoundTripper
// is safe for concurrent use.
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
		return w.record(c, "http")
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
		return w.record(c, "https")
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
	// Which connection the response comes on, and the number its
	// exchange has there (the connection is idle when it is got: its
	// last exchange has ended), so that a body closed before its end is
	// recorded by its Close, and an exchange that ended before the
	// response reached us is checked for its records.
	var (
		used    atomic.Pointer[conn]
		usedGen atomic.Uint64
	)
	trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) {
		if c, ok := info.Conn.(*conn); ok {
			usedGen.Store(c.serve(req.Context()))
			used.Store(c)
		}
	}}
	traced := req.WithContext(httptrace.WithClientTrace(req.Context(), trace))
	resp, err := t.t.RoundTrip(traced)
	if err != nil {
		return resp, err
	}
	if resp.Request == traced {
		resp.Request = req
	}
	if c := used.Load(); c != nil {
		gen := usedGen.Load()
		switch cur, reading := c.reading(); {
		case cur == gen && reading:
			resp.Body = &body{ReadCloser: resp.Body, c: c, gen: gen}
		case cur > gen:
			// Ended already: in the read of its head (a response with
			// no body), or cut as the response came (the request
			// cancelled, the connection closed). If its records were
			// lost, so is the response.
			it, werr := c.outcome(gen)
			if it != nil {
				werr = it.wait()
			}
			if werr != nil {
				resp.Body.Close()
				return nil, werr
			}
		default:
			// Not recorded by design: a tunnel, an upgrade. A head
			// read as c was closed (the request cancelled, the Writer
			// closed) never gets here: conn.Read refuses its bytes.
		}
	}
	return resp, nil
}

// body is a response body whose exchange is recorded, cut, when it is
// closed before its end.
type body struct {
	io.ReadCloser
	c   *conn
	gen uint64 // of the exchange on c
}

func (b *body) Close() error {
	// Before the transport learns of it: once it has, the connection
	// may carry the next exchange.
	it, werr := b.c.stop(b.gen)
	if it == nil && werr == nil {
		// Ended before: by a read the caller may not have seen the
		// error of (net/http reads ahead, and a caller that stops
		// reading, as the crawler does a redirect's body, ignores it).
		it, werr = b.c.outcome(b.gen)
	}
	err := b.ReadCloser.Close()
	if it != nil {
		werr = it.wait()
	}
	if werr != nil {
		return werr
	}
	return err
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
	if w.closing.Load() {
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

// record wraps c so that the HTTP/1.1 exchanges on it are written to w,
// unless w is closing, when it closes c.
func (w *Writer) record(c net.Conn, scheme string) (net.Conn, error) {
	rc := &conn{Conn: c, w: w, scheme: scheme}
	if a, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		rc.ip = a.IP.String()
	}
	w.mu.Lock()
	if w.closing.Load() {
		w.mu.Unlock()
		c.Close()
		return nil, ErrClosed
	}
	w.conns[rc] = struct{}{}
	w.mu.Unlock()
	return rc, nil
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

	mu  sync.Mutex
	off bool   // recording stopped: a CONNECT tunnel, an upgrade, bad framing
	gen uint64 // exchanges ended on c
	// closed is the error of every Write and Read once c is closed, by
	// the transport (net.ErrClosed) or by the Writer (ErrClosed): no
	// exchange starts on c, and no byte read from it passes unrecorded.
	closed error
	// status and mediaType (without parameters) of the response head,
	// and whether its body is compressed already.
	status     int
	mediaType  string
	compressed bool
	req        bytes.Buffer
	start      time.Time // of req
	head       bytes.Buffer
	body       sink
	inBody     bool
	mode       bodyMode
	left       int64 // bytes of body still expected, in modeLength
	chunk      dechunker
	// emitted is the exchange the last emit queued, and werr the error
	// that kept it from the queue: Read and stop wait for it to be
	// written before they return the end of its response.
	emitted *item
	werr    error
	ctx     context.Context // of the request the connection carries
	// last is the number of the last exchange emitted, and lastItem and
	// lastErr what emitted and werr were for it, for a body closed after
	// its exchange ended to learn whether it was written.
	last     uint64
	lastItem *item
	lastErr  error
}

// sink takes a response body as it is read: it keeps it and digests it,
// alone (the payload) and after the head (the block).
type sink struct {
	buf            bytes.Buffer
	payload, block hash.Hash
}

func (s *sink) Write(p []byte) (int, error) {
	s.buf.Write(p)
	s.payload.Write(p)
	s.block.Write(p)
	return len(p), nil
}

// begin readies s for the body that follows head.
func (s *sink) begin(head []byte) {
	if s.payload == nil {
		s.payload, s.block = sha1.New(), sha1.New()
	}
	s.buf.Reset()
	s.payload.Reset()
	s.block.Reset()
	s.block.Write(head)
}

// bodyMode is how the end of a response body is found (RFC 9112 §6.3).
type bodyMode int

const (
	modeNone   bodyMode = iota // no body: HEAD, 204, 304
	modeLength                 // Content-Length
	modeChunked
	modeClose // until the server closes
)

func (c *conn) Write(p []byte) (int, error) {
	// The bytes are taken before they are sent: the response to them may
	// be read before this Write returns.
	c.mu.Lock()
	if c.req.Len() == 0 && !c.inBody && c.w.closing.Load() && c.closed == nil {
		c.closed = ErrClosed
	}
	if err := c.closed; err != nil {
		c.mu.Unlock()
		return 0, err
	}
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
	if err := c.closed; err != nil {
		// Closed while the bytes came: they were not recorded, and may
		// be a whole response, which net/http, when the close raced it,
		// still hands to its caller (the transport closes the connection
		// of a request whose context ends as its head comes).
		c.mu.Unlock()
		return 0, err
	}
	if c.off {
		c.mu.Unlock()
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
	it, werr := c.taken()
	c.mu.Unlock()
	// The end of a response reaches its reader once its records are in
	// the file: a crawler that counts a URL done when its body ends
	// never counts one the archive lost. A record lost fails the read.
	if it != nil {
		werr = it.wait()
	}
	if werr != nil {
		return 0, werr
	}
	return n, err
}

// outcome returns the item of exchange gen, once emitted, and the error
// that kept it from the queue; nothing for another exchange.
func (c *conn) outcome(gen uint64) (*item, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen == gen+1 && c.last == gen {
		return c.lastItem, c.lastErr
	}
	return nil, nil
}

// taken returns what the last emit queued, and the error that kept it
// from the queue, and forgets them. c.mu is held.
func (c *conn) taken() (*item, error) {
	it, err := c.emitted, c.werr
	c.emitted, c.werr = nil, nil
	return it, err
}

// Close records a response cut short by the client (a caller that closed
// the body before its end makes the transport close the connection), and
// fails a read under way that has not yet passed its bytes on.
func (c *conn) Close() error {
	c.mu.Lock()
	if !c.off && c.inBody {
		c.emit(c.cutReason("length"))
	}
	c.off = true
	if c.closed == nil {
		c.closed = net.ErrClosed
	}
	c.mu.Unlock()
	c.w.mu.Lock()
	delete(c.w.conns, c)
	c.w.mu.Unlock()
	return c.Conn.Close()
}

// serve notes that c carries a request of ctx now, and returns the number
// of the exchange under way on c, or of the next if none is.
func (c *conn) serve(ctx context.Context) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ctx = ctx
	return c.gen
}

// cutReason returns the WARC-Truncated reason of a response cut short:
// "time" if its request's deadline passed, "unspecified" if it was
// cancelled (a crawl stopped), else def. c.mu is held.
func (c *conn) cutReason(def string) string {
	if c.ctx != nil {
		switch err := c.ctx.Err(); {
		case errors.Is(err, context.DeadlineExceeded):
			return "time"
		case err != nil:
			return "unspecified"
		}
	}
	return def
}

// reading reports whether a response body is being read on c, and the
// number of its exchange.
func (c *conn) reading() (uint64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen, c.inBody && !c.off
}

// stop records exchange gen, if its body is still being read, as far as
// it was read, marked WARC-Truncated: length (its caller closed the
// body), or time or unspecified when its request's context was done.
// It returns the item to wait on for the records, or the error that kept
// them from the queue.
func (c *conn) stop(gen uint64) (*item, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen == gen && c.inBody && !c.off {
		c.emit(c.cutReason("length"))
		// The transport closes the connection: what it still reads
		// is not a response.
		c.off = true
		return c.taken()
	}
	return nil, nil
}

// cut ends recording on c for Writer.Close: a response being read is
// recorded as far as it was read, marked WARC-Truncated: unspecified; no
// exchange starts on c after it, and no byte read from c is passed on
// (a response whose head had not come fails with ErrClosed).
func (c *conn) cut() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.off && c.inBody {
		c.emit("unspecified")
	}
	c.off = true
	if c.closed == nil {
		c.closed = ErrClosed
	}
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
	// the new bytes, in case its end straddles two reads. There is no
	// bound here: the client reads a head only up to its
	// MaxResponseHeaderBytes, and fails the request past them.
	end := headEnd(b, max(had-2, 0))
	if end < 0 {
		return nil
	}
	rest := p[len(p)-(len(b)-end):]
	c.head.Truncate(end)
	hdr, ok := parseHead(c.head.Bytes())
	if !ok {
		c.off = true
		return nil
	}
	status := hdr.status
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
	mode, left, ok := hdr.framing(method)
	if !ok {
		// Framing net/http refuses: the client fails the request and
		// closes the connection.
		c.off = true
		return nil
	}
	c.inBody = true
	c.mode, c.left = mode, left
	c.status, c.mediaType = status, ""
	if hdr.hasType {
		mime, _, _ := strings.Cut(hdr.mediaType, ";")
		c.mediaType = strings.TrimSpace(mime)
	}
	c.compressed = compressed(hdr.contentEncoding, c.mediaType)
	if mode == modeChunked {
		c.chunk = dechunker{}
		renamed := renameTransferEncoding(c.head.Bytes())
		c.head.Reset()
		c.head.Write(renamed)
	}
	c.body.begin(c.head.Bytes())
	if c.mode == modeNone || c.mode == modeLength && c.left == 0 {
		c.finish(false)
	}
	return rest
}

// headEnd returns the end of the head in b, past its first empty line, or
// -1: as net/http reads a head, lines end at a line feed, a carriage
// return before it dropped, so "\n\n" and "\n\r\n" both end it. It looks
// from b[from:], the line feeds before from having been looked at
// already.
func headEnd(b []byte, from int) int {
	for i := from; ; {
		j := bytes.IndexByte(b[i:], '\n')
		if j < 0 {
			return -1
		}
		i += j + 1
		switch {
		case i < len(b) && b[i] == '\n':
			return i + 1
		case i+1 < len(b) && b[i] == '\r' && b[i+1] == '\n':
			return i + 2
		}
	}
}

// finish records the response read so far, cut if cut is set (by the
// server), and readies c for the next exchange. c.mu is held.
func (c *conn) finish(cut bool) {
	reason := ""
	if cut {
		reason = c.cutReason("disconnect")
	}
	c.emit(reason)
}

// emit writes the exchange and resets c for the next. c.mu is held.
func (c *conn) emit(truncated string) {
	req := c.req.Bytes()
	host := requestHost(req)
	target := requestTarget(req)
	// A target in origin form ("/path?query", whatever the path holds:
	// "/web/2020/http://x" is one) is the URL's path; one in absolute
	// form (a request to a proxy) is the URL.
	uri := target
	if strings.HasPrefix(target, "/") || !strings.Contains(target, "://") {
		uri = c.scheme + "://" + host + target
	}
	uri = rfc3986URI(uri)
	var sum [sha1.Size]byte
	x := &exchange{
		targetURI: uri,
		ip:        c.ip,
		date:      c.start,
		request:   req,
		head:      c.head.Bytes(),
		body:      c.body.buf.Bytes(),
		truncated: truncated,
		status:    c.status,
		mediaType: c.mediaType,
		stored:    c.compressed,
		payload:   sumString(c.body.payload.Sum(sum[:0])),
		block:     sumString(c.body.block.Sum(sum[:0])),
	}
	// A write error is kept by the Writer; its Transport then refuses
	// further requests. Only the last exchange emitted is waited for:
	// net/http does not pipeline, so a Read ends one at most.
	c.emitted, c.werr = c.w.write(x)
	c.last, c.lastItem, c.lastErr = c.gen, c.emitted, c.werr
	c.req.Reset()
	c.head.Reset()
	c.body.buf.Reset()
	if c.body.buf.Cap() > 1<<20 {
		c.body.buf = bytes.Buffer{} // a large body's: not kept
	}
	c.inBody = false
	c.mode = modeNone
	c.gen++
}

// responseHead is what the recorder reads of a response head: the status
// code and version, the values of the fields that frame the body, and
// those of the fields that are indexed, joined with commas when repeated.
type responseHead struct {
	status, major, minor       int
	transferEncoding, length   []string
	mediaType, contentEncoding string
	hasType                    bool
}

// parseHead reads a response head as net/http's client does: the status
// line split at its first space, lines ended by a line feed, a line that
// starts with a space or tab continuing the one before it (obs-fold),
// names in any case, values trimmed of spaces and tabs. It reports false
// for a head net/http refuses.
func parseHead(b []byte) (responseHead, bool) {
	var h responseHead
	first, rest, _ := bytes.Cut(b, []byte("\n"))
	proto, status, ok := strings.Cut(string(trimLine(first)), " ")
	if !ok {
		return h, false
	}
	code, _, _ := strings.Cut(strings.TrimLeft(status, " "), " ")
	n, err := strconv.Atoi(code)
	if len(code) != 3 || err != nil || n < 0 {
		return h, false
	}
	h.status = n
	if h.major, h.minor, ok = http.ParseHTTPVersion(proto); !ok {
		return h, false
	}
	if h.major == 0 && h.minor == 0 {
		h.major, h.minor = 1, 1 // as net/http takes it
	}
	var field []byte // the field being read, its continuation lines joined
	take := func() {
		k, v, ok := bytes.Cut(field, []byte(":"))
		if !ok {
			return
		}
		k, v = bytes.TrimSpace(k), bytes.TrimLeft(v, " \t")
		switch {
		case bytes.EqualFold(k, []byte("transfer-encoding")):
			h.transferEncoding = append(h.transferEncoding, string(v))
		case bytes.EqualFold(k, []byte("content-length")):
			h.length = append(h.length, string(v))
		case bytes.EqualFold(k, []byte("content-encoding")):
			join(&h.contentEncoding, v)
		case bytes.EqualFold(k, []byte("content-type")):
			join(&h.mediaType, v)
			h.hasType = true
		}
	}
	for line := range bytes.Lines(rest) {
		if line[0] == ' ' || line[0] == '\t' {
			field = append(append(field, ' '), trimLine(line)...)
			continue
		}
		take()
		field = append(field[:0], trimLine(line)...)
	}
	take()
	return h, true
}

// join appends v to the comma-separated list *old.
func join(old *string, v []byte) {
	if *old != "" {
		*old += ", "
	}
	*old += string(v)
}

// trimLine trims the spaces, tabs, carriage returns and line feeds around
// a line, as net/textproto does.
func trimLine(b []byte) []byte {
	return bytes.Trim(b, " \t\r\n")
}

// framing returns how the body after h ends, in a response to method, as
// net/http's client finds it (RFC 9112 §6.3, and net/http's own rules):
// no body for HEAD, 1xx, 204 and 304; Transfer-Encoding, from HTTP/1.1
// on only, and then only one field saying "chunked"; Content-Length, its
// fields one value if all the same (left is that value); otherwise until
// the server closes. It reports false for framing net/http refuses, so
// that no exchange follows on the connection.
func (h *responseHead) framing(method string) (mode bodyMode, left int64, ok bool) {
	chunked := false
	if len(h.transferEncoding) > 0 && (h.major > 1 || h.major == 1 && h.minor >= 1) {
		if len(h.transferEncoding) != 1 || !strings.EqualFold(h.transferEncoding[0], "chunked") {
			return 0, 0, false
		}
		chunked = true
	}
	length := int64(-1)
	if len(h.length) > 0 {
		first := strings.Trim(h.length[0], " \t")
		for _, v := range h.length[1:] {
			if strings.Trim(v, " \t") != first {
				return 0, 0, false
			}
		}
		// An empty value is refused, unless GODEBUG=httplaxcontentlength=1
		// makes it none; a response the client refuses is not recorded
		// either way.
		if first != "" {
			n, err := strconv.ParseUint(first, 10, 63)
			if err != nil {
				return 0, 0, false
			}
			length = int64(n)
		}
	}
	switch {
	case method == "HEAD" || h.status/100 == 1 || h.status == http.StatusNoContent || h.status == http.StatusNotModified:
		return modeNone, 0, true
	case chunked:
		return modeChunked, 0, true
	case length >= 0:
		return modeLength, length, true
	}
	return modeClose, 0, true
}

// compressed reports whether a body of the content coding and media type
// given is compressed already, so that deflate would spend its time for a
// few bytes: a content coding other than identity (gzip, br, zstd), or a
// compressed format of image, audio, video, font or archive.
func compressed(coding, mediaType string) bool {
	if c := strings.TrimSpace(coding); c != "" && !strings.EqualFold(c, "identity") {
		return true
	}
	t := strings.ToLower(mediaType)
	switch {
	case strings.HasPrefix(t, "video/"), strings.HasPrefix(t, "audio/") && t != "audio/wav" && t != "audio/x-wav":
		return true
	}
	switch t {
	case "image/jpeg", "image/png", "image/gif", "image/webp", "image/avif", "image/heic",
		"font/woff", "font/woff2", "application/font-woff",
		"application/zip", "application/gzip", "application/x-gzip", "application/zstd",
		"application/x-bzip2", "application/x-xz", "application/x-7z-compressed", "application/x-rar-compressed":
		return true
	}
	return false
}

// renameTransferEncoding returns head with its Transfer-Encoding field
// names changed to X-Crawler-Transfer-Encoding, and its Content-Length
// ones (which chunked framing overrides: RFC 9112 §6.3) to
// X-Crawler-Content-Length, so that no replay reads the de-chunked body
// by a length it does not have; the lines otherwise as received.
func renameTransferEncoding(head []byte) []byte {
	var out bytes.Buffer
	for line := range bytes.Lines(head) {
		name, _, ok := bytes.Cut(line, []byte(":"))
		if n := string(bytes.TrimSpace(name)); ok && (strings.EqualFold(n, "transfer-encoding") || strings.EqualFold(n, "content-length")) {
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
	line  []byte // of the size line being read
	text  bool   // the trailer line being read has more than white space
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
func (d *dechunker) feed(p []byte, body io.Writer) (int, bool, error) {
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
		case chunkTrailer:
			// A trailer line is not kept: net/http's client reads
			// trailers as long as its read buffer, and only whether
			// the line is empty matters here.
			j := bytes.IndexByte(p[i:], '\n')
			if j < 0 {
				d.text = d.text || len(bytes.TrimSpace(p[i:])) > 0
				return len(p), false, nil
			}
			empty := !d.text && len(bytes.TrimSpace(p[i:i+j])) == 0
			i += j + 1
			d.text = false
			if empty {
				return i, true, nil
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
			// As net/http's client reads them: a line ends with CRLF,
			// and has no other CR (RFC 9112, erratum 7633: no bare LF
			// in the chunked coding).
			raw := d.line
			d.line = d.line[:0]
			if len(raw) == 0 || raw[len(raw)-1] != '\r' {
				return i, false, fmt.Errorf("chunked line ends with bare LF")
			}
			if bytes.IndexByte(raw, '\r') != len(raw)-1 {
				return i, false, fmt.Errorf("invalid CR in chunked line")
			}
			line := raw[:len(raw)-1]
			switch d.state {
			case chunkSize:
				// Trailing white space, then the size up to any
				// extension, in 1 to 16 hex digits: no space before
				// the ";".
				line = bytes.TrimRight(line, " \t")
				size, _, _ := bytes.Cut(line, []byte(";"))
				n, err := strconv.ParseInt(string(size), 16, 64)
				if err != nil || n < 0 || len(size) > 16 || len(size) > 0 && (size[0] == '+' || size[0] == '-') {
					return i, false, fmt.Errorf("bad chunk size %q", line)
				}
				if n == 0 {
					d.state = chunkTrailer
				} else {
					d.state, d.left = chunkData, n
				}
			case chunkEnd:
				if len(line) != 0 {
					return i, false, fmt.Errorf("no line end after chunk data")
				}
				d.state = chunkSize
			}
		}
	}
	return i, false, nil
}

// rfc3986URI returns url, a URL as a request sent it, as the URI that
// WARC-Target-URI and WARC-Refers-To-Target-URI hold: ISO 28500 wants an
// RFC 3986 URI there, and a browser (and so the crawler) sends some octets
// RFC 3986 does not allow ("|", "^", "{", "}", "`", "[" and "]" in a path
// or query, "%" not followed by two hex digits, and any other a server
// sent in a Location). After the authority, each such octet is
// percent-encoded ("|" is %7C, a lone "%" is %25); the rest, and a URL
// that needs nothing, is returned as it is. The request record keeps the
// request line as it was sent.
func rfc3986URI(url string) string {
	start := 0
	if i := strings.Index(url, "://"); i >= 0 {
		start = i + 3
		if j := strings.IndexAny(url[start:], "/?#"); j >= 0 {
			start += j
		} else {
			return url
		}
	}
	for i := start; i < len(url); i++ {
		if !uriOctet(url, i) {
			return encodeFrom(url, start, uriOctet)
		}
	}
	return url
}

// encodeFrom returns s with each octet from start on for which keep(s, i)
// is false percent-encoded (rfc3986URI's and the index's urlkey's
// encoding).
func encodeFrom(s string, start int, keep func(s string, i int) bool) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:start])
	for i := start; i < len(s); i++ {
		c := s[i]
		if keep(s, i) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

// uriOctet reports whether the octet of url at i may stand in an RFC 3986
// URI's path, query or fragment as it is: unreserved, a sub-delim, ":",
// "@", "/", "?", or the "%" of two hex digits. The first "#" starts the
// fragment; one after it is encoded.
func uriOctet(url string, i int) bool {
	c := url[i]
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	case c == '%':
		return i+2 < len(url) && isHex(url[i+1]) && isHex(url[i+2])
	case c == '#':
		return strings.IndexByte(url[:i], '#') < 0
	}
	return strings.IndexByte("-._~!$&'()*+,;=:@/?", c) >= 0
}

// isHex reports whether c is a hex digit.
func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}
