// Package warc writes web archives in the WARC 1.1 format (ISO 28500:2017),
// the format of the Internet Archive, national libraries and the crawlers
// they use.
//
// A Writer writes numbered files (prefix-00000.warc.gz, prefix-00001, ...),
// each starting with a warcinfo record and closed for the next once it
// reaches Options.MaxSize. Its Transport method wraps an *http.Transport so
// that every HTTP exchange it carries is recorded as transferred, in a
// request and a response record linked by WARC-Concurrent-To:
//
//	w, err := warc.NewWriter(warc.Options{Dir: "archive", Prefix: "site"})
//	if err != nil { ... }
//	defer w.Close()
//	client := &http.Client{Transport: w.Transport(nil)}
//
// # What is recorded
//
// The bytes are taken from the connection itself, below net/http: a
// request record holds the request exactly as written to the connection
// (request line, header fields in the order and case sent, including those
// the transport adds, such as Accept-Encoding: gzip, and any body); a
// response record holds the status line and header fields byte for byte as
// received and the body as the server sent it, still in its content coding
// (a gzip body stays gzip, whatever the transport or the caller then
// decodes). Two things differ from the wire, as WARC 1.1 defines the
// payload and as Common Crawl writes its archives:
//
//   - A body sent with Transfer-Encoding: chunked is recorded de-chunked
//     (the chunk framing and any trailer fields are dropped) and its
//     Transfer-Encoding header line is renamed X-Crawler-Transfer-Encoding,
//     its value kept; no Content-Length is added: the body runs to the end
//     of the record block.
//   - Interim 1xx responses (100 Continue, 103 Early Hints) are not
//     recorded; the final response is.
//
// WARC-Payload-Digest covers the body so recorded (transfer coding removed,
// content coding kept), WARC-Block-Digest the whole block. A record is
// written when its response has been read to its end; a response whose
// connection was closed before its end (a caller that stopped reading, as a
// crawler does at its body size limit) is recorded as far as it was read
// from the network and marked WARC-Truncated: length, and one cut by the
// server (an early EOF or a read error) WARC-Truncated: disconnect. An
// exchange that got no complete status line and header (a refused
// connection, a reset, a timeout before the response) writes no record at
// all, neither request nor response; each attempt at a URL that got a
// response is recorded.
//
// HTTPS is recorded in plain text: the wrapped transport's TLS handshakes
// are made by the Writer, offering HTTP/1.1 only, so that every exchange
// has a text form. HTTP/2 has none; a Writer never negotiates it.
//
// A response whose payload digest was already recorded by this Writer is
// written as a revisit record (profile identical-payload-digest) holding
// the status line and header fields but not the body, unless
// Options.NoRevisits is set. Only a whole, non-empty payload is
// deduplicated, and only within one Writer.
//
// An exchange is held in memory until its records are written (the digests
// and lengths precede the block), so a body costs its size in memory while
// it is read; a crawler's body size limit bounds it.
//
// # The CDXJ index
//
// With Options.Index set, the Writer also writes a CDXJ index of the
// files, the sorted "urlkey timestamp {json}" lines that pywb replays an
// archive from, so that it needs no indexing of its own. The index is built
// as the records are written, not by reading the files back: each response
// and revisit record adds a line in memory, saying where the record was
// placed, and Close sorts the lines bytewise (as LC_ALL=C sort does, and as
// pywb requires) and writes them. A line costs its length in memory until
// Close, about 250 bytes per response; a process that ends without Close
// leaves the WARC files valid but the index empty (warcio's cdx-index or
// pywb's cdxj-indexer rebuild it from the files).
//
// Each line is the one warcio.js's cdx-index and pywb's cdxj-indexer write
// for the same record:
//
//	com,example)/a?x=1&y=2 20260102150405 {"url":"https://www.example.com/a?y=2&x=1","mime":"text/html","status":"200","digest":"BASE32…","length":"1234","offset":"567","filename":"site.warc.gz"}
//
// The urlkey is SURT of the target URI and the timestamp the first 14
// digits of WARC-Date; the JSON object holds, in this order, url
// (WARC-Target-URI), mime (the response's Content-Type without its
// parameters, absent when it has none; "warc/revisit" for a revisit),
// status, digest (WARC-Payload-Digest without its "sha1:" label), length
// and offset (of the record's gzip member in a .warc.gz file; of the record
// itself in a .warc, its length without the CRLF CRLF that ends it, as both
// indexers count it) and filename (the base name of the WARC file); numbers
// are JSON strings, as both indexers write them. Request and warcinfo
// records are not indexed, as neither indexer does by default. A request
// other than GET adds method and requestBody fields, and
// __wb_method=METHOD&__wb_post_data=BASE64-OF-THE-BODY to the urlkey's
// query, as warcio does for a body it does not parse; unlike warcio, a
// form, JSON or multipart body is not turned into query arguments.
package warc

import (
	"bytes"
	"compress/gzip"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base32"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DefaultMaxSize is the size at which a Writer starts its next file unless
// Options.MaxSize says otherwise: 1 GiB, as Heritrix and wget use.
const DefaultMaxSize = 1 << 30

// RevisitProfile is the WARC-Profile of the revisit records a Writer writes.
const RevisitProfile = "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"

// ErrClosed is returned for a record written, or a request sent through a
// Writer's Transport, after Close.
var ErrClosed = errors.New("warc: writer closed")

// Options configures a Writer. The zero value is usable: gzip-compressed
// files named crawl-00000.warc.gz, ... in the current directory, rotated at
// 1 GiB, with revisit records.
type Options struct {
	// Dir is the directory the files are written in; "" is the current
	// directory. It must exist.
	Dir string
	// Prefix starts each file name; "" means "crawl". Files are named
	// Prefix-NNNNN.warc.gz (.warc with NoGzip), numbered from 00000.
	// An existing file is never overwritten: NewWriter, or the rotation
	// to it, fails instead.
	Prefix string
	// File, when set, names the first file exactly, as a command line's
	// -warc site.warc.gz does, and Dir and Prefix are not used; the files
	// a rotation starts insert -00001, -00002, ... before its extension
	// (".warc.gz" or ".warc": site-00001.warc.gz). A name ending in ".gz"
	// is gzip, any other plain, whatever NoGzip says.
	File string
	// MaxSize is the size in bytes from which a file is closed and the
	// next record starts a new one (so a file passes MaxSize by at most
	// one record). 0 means DefaultMaxSize; negative means no limit.
	MaxSize int64
	// NoGzip writes plain .warc files. By default each record is a gzip
	// member of its own in a .warc.gz file, so that a reader can seek to
	// any record's offset and decompress it alone.
	NoGzip bool
	// NoRevisits writes every response in full. By default a response
	// whose payload digest was already written is recorded as a revisit
	// record referring to the first.
	NoRevisits bool
	// Software is the warcinfo record's software field; "" means
	// "github.com/asyncrawl/crawl/warc".
	Software string
	// Info holds further fields of every warcinfo record (operator,
	// isPartOf, description, robots, http-header-user-agent, ...), written
	// in the order of their names. Names and values must not contain
	// line breaks.
	Info map[string]string
	// Index, when set, is the path of a CDXJ index of the response and
	// revisit records that Close writes (see "The CDXJ index" above). It
	// is created by NewWriter, so that an unwritable path is reported
	// before anything is fetched, and, as the WARC files, never
	// overwrites an existing file. "" writes no index.
	Index string
	// OnError, if set, is called once, with the first error that stops
	// the Writer (a write that failed: a full disk), as it happens, so
	// that a crawl can stop at once rather than fail every request after
	// it. It is called with the Writer's lock held: it must not call the
	// Writer. A context's cancel function is what it is for.
	OnError func(error)
	// Create opens a new file for writing, the index included; nil means
	// os.OpenFile with O_CREATE|O_EXCL. Tests use it to fail writes (a
	// full disk).
	Create func(name string) (io.WriteCloser, error)
}

// Writer writes WARC records into a series of files. It is safe for
// concurrent use: each record is written whole, one at a time. After a
// write error every later write returns that error; Err reports it.
type Writer struct {
	opts    Options
	maxSize int64

	mu      sync.Mutex
	f       io.WriteCloser // nil between a rotation and the next record
	name    string         // of f
	size    int64          // bytes written to f
	next    int            // number of the next file
	infoID  string         // WARC-Record-ID of f's warcinfo record
	err     error          // sticky
	closed  bool
	digests map[string]original // payload digest → first response
	gz      *gzip.Writer
	buf     bytes.Buffer
	index   io.WriteCloser // nil without Options.Index
	lines   []string       // of the index, unsorted
}

// original is what a revisit record refers to.
type original struct {
	id, uri, date string
}

// NewWriter creates the first file and writes its warcinfo record, so that
// an unwritable directory is reported before anything is fetched.
func NewWriter(opts Options) (*Writer, error) {
	if opts.Prefix == "" {
		opts.Prefix = "crawl"
	}
	if opts.File != "" {
		opts.NoGzip = !strings.HasSuffix(opts.File, ".gz")
	}
	if opts.Software == "" {
		opts.Software = "github.com/asyncrawl/crawl/warc"
	}
	for k, v := range opts.Info {
		if k == "" || strings.ContainsAny(k, ":\r\n") || strings.ContainsAny(v, "\r\n") {
			return nil, fmt.Errorf("warc: Info field %q: name empty or with a colon, or a line break in name or value", k)
		}
	}
	ownCreate := opts.Create == nil
	if ownCreate {
		opts.Create = func(name string) (io.WriteCloser, error) {
			return os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		}
	}
	w := &Writer{opts: opts, maxSize: opts.MaxSize, digests: make(map[string]original)}
	if w.maxSize == 0 {
		w.maxSize = DefaultMaxSize
	}
	// BestSpeed: a crawl writes as fast as it fetches; the archive is
	// about a tenth larger than at the default level.
	w.gz, _ = gzip.NewWriterLevel(io.Discard, gzip.BestSpeed)
	if opts.Index != "" {
		f, err := opts.Create(opts.Index)
		if err != nil {
			return nil, fmt.Errorf("warc: index: %w", err)
		}
		w.index = f
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.open(); err != nil {
		if w.index != nil {
			w.index.Close()
			if ownCreate {
				// Created empty just now; nothing will fill it.
				os.Remove(opts.Index)
			}
		}
		return nil, err
	}
	return w, nil
}

// setErr records err as the error that stops the Writer, unless one
// already does, and tells Options.OnError. w.mu is held.
func (w *Writer) setErr(err error) {
	if w.err != nil {
		return
	}
	w.err = err
	if w.opts.OnError != nil {
		w.opts.OnError(err)
	}
}

// Err returns the first write error the Writer met, or nil.
func (w *Writer) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// Close closes the current file and writes the index (Options.Index),
// even after a write error, of the records written whole. It returns the
// first error the Writer met, if any. Records arriving after Close are
// dropped, and requests through its Transport fail with ErrClosed.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return w.err
	}
	w.closed = true
	if w.f != nil {
		if err := w.f.Close(); err != nil && w.err == nil {
			w.setErr(fmt.Errorf("warc: close %s: %w", w.name, err))
		}
		w.f = nil
	}
	if w.index != nil {
		if err := writeIndex(w.index, w.lines); err != nil && w.err == nil {
			w.setErr(fmt.Errorf("warc: index %s: %w", w.opts.Index, err))
		}
		w.index, w.lines = nil, nil
	}
	return w.err
}

// Files returns the names of the files written so far, in order; the last
// may still be open.
func (w *Writer) Files() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	names := make([]string, w.next)
	for i := range names {
		names[i] = w.fileName(i)
	}
	return names
}

func (w *Writer) fileName(n int) string {
	if f := w.opts.File; f != "" {
		if n == 0 {
			return f
		}
		base, ext := f, ""
		for _, e := range []string{".warc.gz", ".warc", ".gz"} {
			if strings.HasSuffix(f, e) {
				base, ext = strings.TrimSuffix(f, e), e
				break
			}
		}
		return fmt.Sprintf("%s-%05d%s", base, n, ext)
	}
	ext := ".warc.gz"
	if w.opts.NoGzip {
		ext = ".warc"
	}
	return filepath.Join(w.opts.Dir, fmt.Sprintf("%s-%05d%s", w.opts.Prefix, n, ext))
}

// open starts the next file with its warcinfo record. w.mu is held.
func (w *Writer) open() error {
	name := w.fileName(w.next)
	f, err := w.opts.Create(name)
	if err != nil {
		w.setErr(fmt.Errorf("warc: %w", err))
		return w.err
	}
	w.next++
	w.f, w.name, w.size = f, name, 0
	var info bytes.Buffer
	fmt.Fprintf(&info, "software: %s\r\n", w.opts.Software)
	fmt.Fprintf(&info, "format: WARC File Format 1.1\r\n")
	fmt.Fprintf(&info, "conformsTo: http://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/\r\n")
	keys := make([]string, 0, len(w.opts.Info))
	for k := range w.opts.Info {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(&info, "%s: %s\r\n", k, w.opts.Info[k])
	}
	id := newID()
	w.infoID = id
	h := []field{
		{"WARC-Type", "warcinfo"},
		{"WARC-Record-ID", id},
		{"WARC-Date", formatDate(time.Now())},
		{"WARC-Filename", filepath.Base(name)},
		{"Content-Type", "application/warc-fields"},
		{"WARC-Block-Digest", digest(info.Bytes())},
	}
	_, err = w.writeRaw(h, info.Bytes())
	return err
}

// field is a WARC named field.
type field struct{ name, value string }

// writeRecord writes one record, opening the next file first if the last
// was closed at its size limit, and closes the file once it reaches that
// limit. It returns where the record was written. w.mu is held.
func (w *Writer) writeRecord(h []field, block ...[]byte) (placement, error) {
	if w.err != nil {
		return placement{}, w.err
	}
	if w.closed {
		return placement{}, ErrClosed
	}
	if w.f == nil {
		if err := w.open(); err != nil {
			return placement{}, err
		}
	}
	p, err := w.writeRaw(h, block...)
	if err != nil {
		return placement{}, err
	}
	if w.maxSize > 0 && w.size >= w.maxSize {
		err := w.f.Close()
		w.f = nil
		if err != nil {
			w.setErr(fmt.Errorf("warc: close %s: %w", w.name, err))
			return placement{}, w.err
		}
	}
	return p, nil
}

// writeRaw writes one record to the current file and returns where: the
// offset and length of its gzip member, or of the record in a plain file
// up to its closing CRLF CRLF.
// w.mu is held.
func (w *Writer) writeRaw(h []field, block ...[]byte) (placement, error) {
	var n int64
	for _, b := range block {
		n += int64(len(b))
	}
	w.buf.Reset()
	var out io.Writer = &w.buf
	if !w.opts.NoGzip {
		w.gz.Reset(&w.buf)
		out = w.gz
	}
	var head bytes.Buffer
	head.WriteString("WARC/1.1\r\n")
	for _, f := range h {
		head.WriteString(f.name)
		head.WriteString(": ")
		head.WriteString(f.value)
		head.WriteString("\r\n")
	}
	head.WriteString("Content-Length: ")
	head.WriteString(strconv.FormatInt(n, 10))
	head.WriteString("\r\n\r\n")
	out.Write(head.Bytes())
	for _, b := range block {
		out.Write(b)
	}
	out.Write([]byte("\r\n\r\n"))
	if !w.opts.NoGzip {
		w.gz.Close()
	}
	// One Write of the whole record: a record is in the file whole or,
	// after a failed write, the Writer stops.
	p := placement{file: w.name, offset: w.size, length: int64(w.buf.Len())}
	if w.opts.NoGzip {
		// As pywb's and warcio's indexers count a record of a plain
		// file: without the empty lines that end it.
		p.length -= int64(len("\r\n\r\n"))
	}
	m, err := w.f.Write(w.buf.Bytes())
	w.size += int64(m)
	if err != nil {
		w.setErr(fmt.Errorf("warc: write %s: %w", w.name, err))
		return placement{}, w.err
	}
	return p, nil
}

// exchange is one HTTP exchange as it was transferred.
type exchange struct {
	targetURI string
	ip        string    // "" when unknown
	date      time.Time // when the request started
	request   []byte    // as written
	head      []byte    // status line and header fields, with the empty line
	body      []byte    // transfer coding removed
	truncated string    // WARC-Truncated reason, "" if whole
}

// writeExchange writes the request and response (or revisit) records of x.
func (w *Writer) writeExchange(x *exchange) error {
	date := formatDate(x.date)
	respID, reqID := newID(), newID()
	payload := digest(x.body)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	if w.closed {
		return ErrClosed
	}
	common := func(typ, id string) []field {
		h := []field{
			{"WARC-Type", typ},
			{"WARC-Record-ID", id},
			{"WARC-Date", date},
			{"WARC-Target-URI", x.targetURI},
		}
		if x.ip != "" {
			h = append(h, field{"WARC-IP-Address", x.ip})
		}
		return h
	}
	orig, seen := w.digests[payload]
	revisit := seen && !w.opts.NoRevisits && len(x.body) > 0 && x.truncated == ""
	var (
		p   placement
		err error
	)
	if revisit {
		h := append(common("revisit", respID),
			field{"WARC-Profile", RevisitProfile},
			field{"WARC-Refers-To", orig.id},
			field{"WARC-Refers-To-Target-URI", orig.uri},
			field{"WARC-Refers-To-Date", orig.date},
			field{"Content-Type", "application/http;msgtype=response"},
			field{"WARC-Payload-Digest", payload},
			field{"WARC-Block-Digest", digest(x.head)},
		)
		p, err = w.writeRecord(h, x.head)
	} else {
		h := append(common("response", respID),
			field{"Content-Type", "application/http;msgtype=response"},
			field{"WARC-Payload-Digest", payload},
			field{"WARC-Block-Digest", digest(x.head, x.body)},
		)
		if x.truncated != "" {
			h = append(h, field{"WARC-Truncated", x.truncated})
		}
		p, err = w.writeRecord(h, x.head, x.body)
		if err == nil && !seen && len(x.body) > 0 && x.truncated == "" {
			w.digests[payload] = original{id: respID, uri: x.targetURI, date: date}
		}
	}
	if err != nil {
		return err
	}
	if w.index != nil {
		line, err := indexLine(x, p, revisit, payload)
		if err != nil {
			w.setErr(fmt.Errorf("warc: index %s: %w", x.targetURI, err))
			return w.err
		}
		w.lines = append(w.lines, line)
	}
	h := append(common("request", reqID),
		field{"WARC-Concurrent-To", respID},
		field{"Content-Type", "application/http;msgtype=request"},
		field{"WARC-Block-Digest", digest(x.request)},
	)
	_, err = w.writeRecord(h, x.request)
	return err
}

// formatDate gives t as WARC-Date: UTC, RFC 3339, to the microsecond, as
// WARC 1.1 allows.
func formatDate(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000000Z")
}

// newID returns a new WARC-Record-ID: a random (version 4) UUID URN in
// angle brackets.
func newID() string {
	var u [16]byte
	rand.Read(u[:])
	u[6] = u[6]&0x0f | 0x40 // version 4
	u[8] = u[8]&0x3f | 0x80 // RFC 9562 variant
	return fmt.Sprintf("<urn:uuid:%x-%x-%x-%x-%x>", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}

// digest returns the labelled SHA-1 of the concatenated parts, in base 32,
// as WARC digests are written.
func digest(parts ...[]byte) string {
	h := sha1.New()
	for _, p := range parts {
		h.Write(p)
	}
	return "sha1:" + base32.StdEncoding.EncodeToString(h.Sum(nil))
}
