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
//   - A body sent with Transfer-Encoding: chunked (from HTTP/1.1 on: in
//     an HTTP/1.0 response net/http ignores the field, and so does the
//     recorder) is recorded de-chunked
//     (the chunk framing and any trailer fields are dropped) and its
//     Transfer-Encoding header line is renamed X-Crawler-Transfer-Encoding,
//     its value kept; no Content-Length is added: the body runs to the end
//     of the record block. A Content-Length the response had too, which
//     chunked framing overrides, is renamed X-Crawler-Content-Length.
//   - Interim 1xx responses (100 Continue, 103 Early Hints) are not
//     recorded; the final response is.
//
// WARC-Payload-Digest covers the body so recorded (transfer coding removed,
// content coding kept), WARC-Block-Digest the whole block. A record is
// written when its response has been read to its end; a response whose
// connection was closed before its end (a caller that stopped reading, as a
// crawler does at its body size limit) is recorded as far as it was read
// from the network and marked WARC-Truncated: length, and one cut by the
// server (an early EOF or a read error) WARC-Truncated: disconnect; but
// one whose request's context was done when it was cut is marked
// WARC-Truncated: time if its deadline had passed (a request timeout),
// unspecified if it was cancelled (a crawl stopped by Ctrl-C). An
// exchange that got no complete status line and header (a refused
// connection, a reset, a timeout before the response) writes no record at
// all, neither request nor response; each attempt at a URL that got a
// response is recorded. The recorder finds the end of a head and of a body
// as net/http's client does (a head of any size the client reads, lines
// ended by a bare line feed or folded, repeated identical Content-Length
// fields taken as one, Transfer-Encoding before Content-Length, no body
// after HEAD, 1xx, 204 and 304; chunk lines ended by CRLF alone, a chunk
// size of hex digits alone before any extension), so every response the
// client accepts is recorded, and so is every exchange after it on its
// connection, and a body whose chunked framing the client refuses is
// recorded as far as it went, WARC-Truncated "unspecified", not as whole.
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
// An exchange is held in memory until its records are made (the digests
// and lengths precede the block), so a body costs its size in memory while
// it is read; a crawler's body size limit bounds it.
//
// # How records are written
//
// The records of an exchange are made, digested and compressed in the
// goroutine that read the end of its response, so that exchanges on
// different connections are compressed in parallel, and handed whole to
// the Writer's one writing goroutine, which writes them in the order they
// come (the request record right after its response, a revisit after the
// response it refers to), what has come while it wrote the last (up to 1
// MiB) in one write: a busy crawl's records go out many to a write, and
// none waits for a timer. Each write holds whole records only.
//
// The end of a response reaches the caller only once its records are in
// the file: the read that would return the last bytes of its body (or
// the response itself, for one with no body) waits for the write, and
// Close of a body closed before its end waits for the write of what was
// read. If the records could not be written (a write error, or the
// Writer stopped first), that read, or that Close, or RoundTrip, returns
// the error instead. So a crawler that counts a URL done once its body
// is read (or closed) without an error never counts one whose exchange
// is not in the archive, whatever stops the Writer, and a crawl resumed
// later fetches the URL again. The crawler of this module does so, and
// treats a body whose Close fails as a failed fetch. A write costs the
// exchange the time of one write(2), not a sync: a process killed (kill
// -9) loses no record whose read returned, a machine that loses power may.
//
// A write that fails part way (a full disk) is cut back to the end of
// the last whole exchange (both its records: a response is never left
// without its request) when the file can be truncated (an *os.File can,
// and so can a Create's file with a Truncate(int64) error method), and the
// Writer stops: every record in the files is whole, and every exchange.
// A process killed in the middle of a write (kill -9) may leave the last
// exchange of the file it was writing cut short: the kernel stops a
// write between two of its pages (1 of 60 kill -9s of the crawl command
// did); that exchange was never counted written, and the next Writer with
// Options.Resume cuts it off (see Options.Resume).
//
// A record of under 1 KiB (a request, a redirect, a revisit) and a
// response whose body is compressed already (a content coding, JPEG, PNG,
// WOFF2, ...) are stored in their gzip member rather than deflated:
// deflate costs some 15µs a member however small, for a few hundred bytes
// saved, and saves nothing on compressed bytes.
//
// Close first stops admitting exchanges (a request not yet written fails
// with ErrClosed), then cuts the exchanges still in progress on the
// transport's connections: one whose response head has come is recorded
// as far as it was read, marked WARC-Truncated: unspecified, one without
// is not recorded, and nothing more read on a cut connection reaches the
// caller (the rest of a body, or a response that comes after, fails with
// ErrClosed); then it waits for the exchanges being made, writes them,
// and closes the file. A body the caller closed before its end
// (resp.Body.Close) is recorded by that Close, before it returns, marked
// WARC-Truncated: length (or time, or unspecified, as above), so that a
// Close of the Writer after it finds it.
//
// # The CDXJ index
//
// With Options.Index set, the Writer also writes a CDXJ index of the
// files, the sorted "urlkey timestamp {json}" lines that pywb replays an
// archive from, so that it needs no indexing of its own. The index is built
// as the records are written, not by reading the files back: each response
// and revisit record adds a line in memory, saying where the record was
// placed, and Close sorts the lines bytewise (as LC_ALL=C sort does, and as
// pywb requires) and writes them. The lines, about 250 bytes a response,
// are held in memory up to 8 MiB, then spilled, sorted, to files in the
// temporary directory ($TMPDIR), which Close merges and removes, as sort(1)
// does: an archive of millions of pages does not hold its index in memory.
// A process that ends without Close
// leaves the WARC files without the records of its last few
// milliseconds (and, rarely, its last exchange cut short: see above), and
// the index empty, or with Options.Resume as it was; the next Writer with
// Options.Resume indexes those files at its Close (see Options.Resume).
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
	"bufio"
	"bytes"
	"cmp"
	"compress/gzip"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base32"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asyncrawl/crawl/internal/extsort"
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
	// next exchange starts a new one (so a file passes MaxSize by at most
	// the records of one exchange, which are never split between files).
	// 0 means DefaultMaxSize; negative means no limit.
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
	// overwrites an existing file, but with Resume, which replaces it
	// with an index of its lines and the new ones. "" writes no index.
	Index string
	// Resume continues the archive of an earlier Writer with the same
	// File (or Dir and Prefix) and Index, as a crawl resumed after an
	// interruption does, rather than refusing its files: the first file
	// is the first name of the series that does not exist (after
	// site.warc.gz and site-00001.warc.gz, site-00002.warc.gz), and an
	// existing Index is kept, then replaced at Close by the index of its
	// lines and the new ones, sorted, written to a new file in its
	// directory (Index plus a random part and ".tmp") renamed over it;
	// those a run killed before its Close left are removed.
	// NewWriter starts reading the last file of the series, in the
	// background (Close waits for it; an error reading it is one of
	// Close's), and if its last record runs past its end (a run killed in
	// the middle of a write), cuts it back to the end of its last whole
	// exchange, unless the file holds more record starts after that end
	// than the exchange cut short can (damage elsewhere, which it leaves
	// as it is), or what follows that end is not the start of a WARC
	// record (a file of the series that no Writer wrote, left as it is).
	// The exchange cut off was never counted written.
	// A run that ends without Close (kill -9), or whose Close could not
	// write the index, leaves it as it was, without that run's records;
	// so Close also reads each earlier file of the series that no line of
	// the index it replaces names (all of them when there is no index)
	// and adds the lines of its response and revisit records, those the
	// Writer that wrote them would have written, up to the first record
	// that is not whole (the end of a file a kill cut short, which it
	// cuts back as above). So the index covers every file of the series.
	// Without an earlier archive, Resume starts one as NewWriter would.
	Resume bool
	// OnError, if set, is called once, with the first error that stops
	// the Writer (a write that failed: a full disk), as it happens, so
	// that a crawl can stop at once rather than fail every request after
	// it. It is called from the Writer's writing goroutine with the
	// Writer's lock held: it must not call the Writer. A context's cancel
	// function is what it is for.
	OnError func(error)
	// Create opens a new file for writing, the index included; nil means
	// os.OpenFile with O_CREATE|O_EXCL. Tests use it to fail writes (a
	// full disk).
	Create func(name string) (io.WriteCloser, error)
}

// Writer writes WARC records into a series of files. It is safe for
// concurrent use. NewWriter starts its writing goroutine; Close must be
// called to write what is queued and end it. After a write error every
// later write returns that error; Err reports it.
type Writer struct {
	opts      Options
	maxSize   int64
	gzip      bool
	ownCreate bool // opts.Create is the Writer's own: files it may remove

	closing atomic.Bool  // set by Close: no exchange starts any more
	next    atomic.Int64 // number of the next file
	items   chan *item   // to loop
	done    chan struct{}
	once    sync.Once // of Close

	mu      sync.Mutex
	err     error               // sticky
	closed  bool                // no exchange is admitted any more
	digests map[string]original // payload digest → first response
	conns   map[*conn]struct{}  // the live connections of the Transport
	pending sync.WaitGroup      // exchanges admitted and not yet queued

	// Owned by loop, and by NewWriter before it and Close after it.
	werr   error           // the first error loop met
	f      io.WriteCloser  // nil between a rotation and the next exchange
	name   string          // of f
	fname  string          // of f, as the index's JSON gives it
	size   int64           // bytes written to f
	out    []byte          // whole records not yet written to f
	ends   []int           // of each exchange (and warcinfo record) in out
	placed []placedLine    // index lines of the records in out
	held   []heldItem      // the items whose records are in out
	index  io.WriteCloser  // nil without Options.Index
	lines  *extsort.Sorter // of the index, unsorted until Close
	// indexRuns is the number of files on disk the index's lines were
	// in when Close came (0: all in memory), set by Close.
	indexRuns int
	// indexTmp is the name of index when it replaces an existing
	// Options.Index at Close (Options.Resume); "" when index is that.
	indexTmp string
	// indexErr is why Close could not write the index, if it could not.
	indexErr error
	// first is the number of files of earlier runs NewWriter found
	// (Options.Resume).
	first int
	// repaired is closed once the last of those is read, and cut back if
	// a kill cut its last exchange short; repairErr is why it could not
	// be read. Nil with no earlier file.
	repaired  chan struct{}
	repairErr error
}

// original is what a revisit record refers to.
type original struct {
	id, uri, date string
	at            *origin
}

// origin tells loop whether a response was written, for the revisits of
// its payload that must come after it. Only loop reads or writes it.
type origin struct {
	written bool
	waiting []*item
}

// item is the records of one exchange, made and compressed, as loop
// receives them.
type item struct {
	buf  *bytes.Buffer // the records, each whole
	ends [2]int        // of each record in buf: the response, the request
	// line, when indexed, is the response's index line but for where
	// the record is.
	line  *indexLine
	after *origin // set for a revisit: written after that response
	self  *origin // set for a response revisits may refer to
	// done is closed once the records are in the file, or failed to get
	// there (err says why), for the reader of the exchange to wait on.
	done chan struct{}
	err  error
}

// wait waits until the records of it are written, and returns the error
// that kept them out of the file, if any.
func (it *item) wait() error {
	<-it.done
	return it.err
}

// settle tells the reader of it that its records are written (err nil) or
// lost. Only loop calls it.
func (it *item) settle(err error) {
	it.err = err
	close(it.done)
}

// placedLine is an index line and the end, in Writer.out, of the record it
// indexes.
type placedLine struct {
	end  int
	line string
}

// heldItem is an item whose records are in Writer.out, and their end there.
type heldItem struct {
	end int
	it  *item
}

// queued is how many exchanges may wait for the writing goroutine while it
// writes: exchanges finish without waiting for the disk, and the records
// they queue meanwhile go out in one write.
const queued = 256

// flushSize is the size from which loop writes what it holds at once.
const flushSize = 1 << 20

// NewWriter creates the first file and writes its warcinfo record, so that
// an unwritable directory is reported before anything is fetched, and
// starts the goroutine that writes the records.
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
	w := &Writer{
		opts:      opts,
		ownCreate: ownCreate,
		maxSize:   opts.MaxSize,
		gzip:      !opts.NoGzip,
		digests:   make(map[string]original),
		conns:     make(map[*conn]struct{}),
		items:     make(chan *item, queued),
		done:      make(chan struct{}),
	}
	if w.maxSize == 0 {
		w.maxSize = DefaultMaxSize
	}
	if opts.Resume {
		n := 0
		for exists(w.fileName(n)) {
			n++
		}
		w.next.Store(int64(n))
		w.first = n
	}
	if opts.Index != "" {
		name := opts.Index
		if opts.Resume && exists(opts.Index) {
			// A name of its own, so that a stale one a killed run left
			// is not in the way; and those stale ones go.
			removeStaleIndexes(opts.Index)
			name = opts.Index + "." + rand.Text() + ".tmp"
			w.indexTmp = name
		}
		f, err := opts.Create(name)
		if err != nil {
			return nil, fmt.Errorf("warc: index: %w", err)
		}
		w.index = f
		w.lines = extsort.New(indexMemory, nil)
	}
	if err := w.open(); err == nil {
		w.flush()
	}
	if w.werr != nil {
		if w.f != nil {
			w.f.Close()
		}
		if w.index != nil {
			w.index.Close()
			if ownCreate {
				// Created empty just now; nothing will fill it.
				os.Remove(cmp.Or(w.indexTmp, opts.Index))
			}
		}
		return nil, w.werr
	}
	if w.first > 0 {
		// The file a run killed was writing may end in a record cut
		// short: read in the background, as the crawl goes on in new
		// files; Close waits for it.
		w.repaired = make(chan struct{})
		go func() {
			defer close(w.repaired)
			if _, err := repairTail(w.fileName(w.first - 1)); err != nil {
				w.repairErr = fmt.Errorf("warc: resume: %w", err)
			}
		}()
	}
	go w.loop()
	return w, nil
}

// removeStaleIndexes removes the temporary indexes a resumed Writer
// killed before its Close left beside index: index + "." + 26 characters
// of rand.Text + ".tmp".
func removeStaleIndexes(index string) {
	names, _ := filepath.Glob(index + ".*.tmp")
	for _, n := range names {
		mid := strings.TrimSuffix(strings.TrimPrefix(n, index+"."), ".tmp")
		if len(mid) == 26 && strings.Trim(mid, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567") == "" {
			os.Remove(n)
		}
	}
}

// setErr records err as the error that stops the Writer, unless one
// already does, and tells Options.OnError.
func (w *Writer) setErr(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
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

// Close stops the Writer, as "How records are written" above says: it
// stops admitting exchanges, cuts those in progress, writes every record
// made, closes the current file and writes the index (Options.Index),
// even after a write error, of the records written whole. It returns the
// first error the Writer met, if any, joined (errors.Join) with the
// index's when an earlier error was first and the index could not be
// written either (a full disk): an index that could not be written whole
// is removed; and with the error of reading the earlier file a resumed
// Writer reads in the background (Options.Resume), which it waits for.
// Requests through its Transport then fail with ErrClosed. A second Close
// waits for the first and returns the same.
func (w *Writer) Close() error {
	w.once.Do(w.close)
	err := w.Err()
	if w.indexErr != nil && err != w.indexErr {
		err = errors.Join(err, w.indexErr)
	}
	if w.repairErr != nil {
		err = errors.Join(err, w.repairErr)
	}
	return err
}

func (w *Writer) close() {
	w.mu.Lock()
	w.closing.Store(true)
	conns := make([]*conn, 0, len(w.conns))
	for c := range w.conns {
		conns = append(conns, c)
	}
	w.mu.Unlock()
	// No exchange starts now; those under way are ended here, and those
	// ending on their own meanwhile are still admitted.
	for _, c := range conns {
		c.cut()
	}
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	w.pending.Wait()
	close(w.items)
	<-w.done
	if w.repaired != nil {
		<-w.repaired
	}
	if w.f != nil {
		if err := w.f.Close(); err != nil {
			w.fail(fmt.Errorf("warc: close %s: %w", w.name, err))
		}
		w.f = nil
	}
	if w.index != nil {
		err := w.keepIndex()
		if err == nil {
			w.indexRuns = w.lines.Runs()
			err = writeIndex(w.index, w.lines)
		} else {
			w.index.Close()
		}
		if err == nil && w.indexTmp != "" {
			err = os.Rename(w.indexTmp, w.opts.Index)
		}
		if err != nil {
			// An index cut short is no index: one sorted file missing
			// lines anywhere. A resumed Writer's leaves the one it was
			// to replace as it was.
			os.Remove(cmp.Or(w.indexTmp, w.opts.Index))
			w.indexErr = fmt.Errorf("warc: index %s: %w", w.opts.Index, err)
			w.fail(w.indexErr)
		}
		w.lines.Close()
		w.index, w.lines = nil, nil
	}
}

// keepIndex adds, for a resumed Writer, the lines of the index it
// replaces, if any, and those of the records of the earlier files that
// index names none of (see indexEarlier).
func (w *Writer) keepIndex() error {
	if !w.opts.Resume {
		return nil
	}
	named := make(map[string]bool)
	if w.indexTmp != "" {
		f, err := os.Open(w.opts.Index)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, maxIndexLine)
		for sc.Scan() {
			if line := sc.Bytes(); len(line) > 0 {
				w.lines.Add(line)
				if fname, ok := lineFile(line); ok {
					named[fname] = true
				}
			}
		}
		if err := sc.Err(); err != nil {
			return err
		}
	}
	return w.indexEarlier(named)
}

// maxIndexLine bounds a line of an index a resumed Writer reads: the
// lines it writes are below 10 KiB (a URL of a few KiB, a request body
// cut at maxQueryBody).
const maxIndexLine = 1 << 20

// exists reports whether a file of that name exists.
func exists(name string) bool {
	_, err := os.Lstat(name)
	return err == nil
}

// Files returns the names of the files written so far, in order, with
// Options.Resume those of the earlier Writers first; the last may still
// be open.
func (w *Writer) Files() []string {
	names := make([]string, w.next.Load())
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

// loop is the writing goroutine: it writes the items queued, in order,
// until Close closes the queue. It takes what is queued, up to flushSize,
// and writes it in one write: while a write is under way the next records
// gather, so a busy crawl's go out many to a write (a group commit), and
// the reader of each exchange waits for one write at most.
func (w *Writer) loop() {
	defer close(w.done)
	for {
		it, ok := <-w.items
		for ok {
			w.place(it)
			if len(w.out) >= flushSize {
				break
			}
			select {
			case it, ok = <-w.items:
				continue
			default:
			}
			break
		}
		w.flush()
		if !ok {
			w.orphans()
			return
		}
	}
}

// orphans settles the revisits still waiting for a response that never
// came to be placed, which write's queueing every exchange it admits
// rules out: no reader waits for good. Only loop calls it, at its end.
func (w *Writer) orphans() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, o := range w.digests {
		if o.at != nil {
			for _, it := range o.at.waiting {
				putBuffer(it.buf)
				it.settle(ErrClosed)
			}
			o.at.waiting = nil
		}
	}
}

// place puts it after the records held, unless it is a revisit of a
// response not yet placed, which it then waits for. Only loop calls it.
func (w *Writer) place(it *item) {
	if a := it.after; a != nil && !a.written {
		a.waiting = append(a.waiting, it)
		return
	}
	w.add(it)
	if s := it.self; s != nil {
		s.written = true
		waiting := s.waiting
		s.waiting = nil
		for _, r := range waiting {
			w.add(r)
		}
	}
}

// add appends the records of it to those held, opening the next file
// first if the last was closed at its size limit, and closes the file once
// it reaches that limit. Only loop calls it, and NewWriter before it.
func (w *Writer) add(it *item) {
	defer putBuffer(it.buf)
	if w.werr != nil {
		it.settle(w.werr)
		return
	}
	if w.f == nil {
		if w.open() != nil {
			it.settle(w.werr)
			return
		}
	}
	start := len(w.out)
	offset := w.size + int64(start)
	w.out = append(w.out, it.buf.Bytes()...)
	// The file may be cut after the exchange, not between its records:
	// a response without its request is not an exchange archived.
	w.ends = append(w.ends, len(w.out))
	if it.line != nil && it.ends[0] > 0 {
		length := int64(it.ends[0])
		if !w.gzip {
			// As pywb's and warcio's indexers count a record of a
			// plain file: without the empty lines that end it.
			length -= int64(len(recordEnd))
		}
		w.placed = append(w.placed, placedLine{end: start + it.ends[0], line: it.line.format(offset, length, w.fname)})
	}
	w.held = append(w.held, heldItem{end: len(w.out), it: it})
	if w.maxSize > 0 && w.size+int64(len(w.out)) >= w.maxSize {
		w.flush()
		if w.f != nil {
			err := w.f.Close()
			w.f = nil
			if err != nil {
				w.fail(fmt.Errorf("warc: close %s: %w", w.name, err))
			}
		}
	}
}

// fail records err, met by loop (or NewWriter, or Close after loop), as
// the error that stops the Writer, unless one already does.
func (w *Writer) fail(err error) {
	if w.werr == nil {
		w.werr = err
	}
	w.setErr(err)
}

// flush writes the records held in one write. A write that fails part way
// is cut back to the end of the last whole exchange in it, where the file
// can be truncated, and only the index lines of the exchanges written
// whole are kept. Only loop calls it, and NewWriter before it.
func (w *Writer) flush() {
	if len(w.out) == 0 {
		return
	}
	n, err := w.f.Write(w.out)
	if err != nil {
		whole := 0
		for _, end := range w.ends {
			if end <= n {
				whole = end
			}
		}
		if whole < n {
			if t, ok := w.f.(interface{ Truncate(int64) error }); ok && t.Truncate(w.size+int64(whole)) == nil {
				n = whole
			}
		}
		for _, p := range w.placed {
			if p.end <= whole {
				w.lines.AddString(p.line)
			}
		}
		w.size += int64(n)
		if w.size == 0 && w.ownCreate && os.Remove(w.name) == nil {
			// Not even its warcinfo is whole (a disk that filled as
			// the file began): no WARC file, gone as if never made.
			w.next.Add(-1)
		}
		if _, ok := errors.AsType[*fs.PathError](err); ok {
			w.fail(fmt.Errorf("warc: %w", err)) // it names the file
		} else {
			w.fail(fmt.Errorf("warc: write %s: %w", w.name, err))
		}
		// After fail, which tells OnError: a crawl stopping sees its
		// context done before a reader sees its exchange lost.
		for _, h := range w.held {
			if h.end <= n {
				h.it.settle(nil)
			} else {
				h.it.settle(w.werr)
			}
		}
	} else {
		w.size += int64(n)
		for _, p := range w.placed {
			w.lines.AddString(p.line)
		}
		for _, h := range w.held {
			h.it.settle(nil)
		}
	}
	clear(w.held)
	w.out, w.ends, w.placed, w.held = w.out[:0], w.ends[:0], w.placed[:0], w.held[:0]
	if cap(w.out) > 4*flushSize {
		w.out = nil // one huge record: not kept for the next
	}
}

// open starts the next file with its warcinfo record. Only loop calls it,
// and NewWriter before it.
func (w *Writer) open() error {
	n := int(w.next.Load())
	name := w.fileName(n)
	f, err := w.opts.Create(name)
	if err != nil {
		w.fail(fmt.Errorf("warc: %w", err))
		return err
	}
	w.next.Store(int64(n + 1))
	w.f, w.name, w.size = f, name, 0
	w.fname = jsonString(filepath.Base(name))
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
	var ids [2][idLen]byte
	newIDs(&ids)
	var h header
	h = h.add("WARC-Type", "warcinfo")
	h = h.addBytes("WARC-Record-ID", ids[0][:])
	h = h.add("WARC-Date", formatDate(time.Now()))
	h = h.add("WARC-Filename", filepath.Base(name))
	h = h.add("Content-Type", "application/warc-fields")
	h = h.add("WARC-Block-Digest", digest(info.Bytes()))
	buf := getBuffer()
	end := w.encode(buf, false, h, info.Bytes())
	w.out = append(w.out, buf.Bytes()...)
	w.ends = append(w.ends, len(w.out)-buf.Len()+end)
	putBuffer(buf)
	return nil
}

// header is the named fields of a record, each ending in CRLF, without
// Content-Length.
type header []byte

func (h header) add(name, value string) header {
	h = append(h, name...)
	h = append(h, ": "...)
	h = append(h, value...)
	return append(h, "\r\n"...)
}

func (h header) addBytes(name string, value []byte) header {
	h = append(h, name...)
	h = append(h, ": "...)
	h = append(h, value...)
	return append(h, "\r\n"...)
}

// recordEnd is the two empty lines that end a record.
const recordEnd = "\r\n\r\n"

// gzipWriters are reused: a flate compressor costs about a megabyte to
// make, and each exchange compresses two records.
var gzipWriters = sync.Pool{New: func() any {
	// BestSpeed: a crawl writes as fast as it fetches; the archive is
	// about a tenth larger than at the default level.
	zw, _ := gzip.NewWriterLevel(io.Discard, gzip.BestSpeed)
	return zw
}}

// storeUnder is the record size under which a record's gzip member holds
// it stored, not compressed, as it holds a response whose body is
// compressed already (gzip, JPEG, ...), which deflate would not shrink. Compressing a record costs some 15µs however
// small it is (deflate builds its Huffman codes for each member), more
// than the crawl spends on a small page, and saves a few hundred bytes: a
// request, a redirect, a revisit. Measured on the benchmark site (2 KiB
// pages), storing them made archiving cost a third of what it did, and
// the archive a fifth larger.
const storeUnder = 1 << 10

var storingWriters = sync.Pool{New: func() any {
	zw, _ := gzip.NewWriterLevel(io.Discard, gzip.NoCompression)
	return zw
}}

// buffers holds the buffers records are made in.
var buffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

func getBuffer() *bytes.Buffer { return buffers.Get().(*bytes.Buffer) }

func putBuffer(b *bytes.Buffer) {
	if b.Cap() > 1<<20 {
		return // a large body's: not kept
	}
	b.Reset()
	buffers.Put(b)
}

// encode appends to buf the record of header h and the block made of
// parts, as a gzip member of its own unless the files are plain, and
// returns the end of the record in buf. The member is compressed unless
// store is set (the block is compressed already) or the record is small
// (storeUnder). It is safe for concurrent use.
func (w *Writer) encode(buf *bytes.Buffer, store bool, h header, block ...[]byte) int {
	var n int
	for _, b := range block {
		n += len(b)
	}
	var out io.Writer = buf
	var zw *gzip.Writer
	pool := &gzipWriters
	if store || len(h)+n < storeUnder {
		pool = &storingWriters
	}
	if w.gzip {
		zw = pool.Get().(*gzip.Writer)
		zw.Reset(buf)
		out = zw
	}
	var line [64]byte
	head := append(line[:0], "WARC/1.1\r\n"...)
	out.Write(head)
	out.Write(h)
	head = append(line[:0], "Content-Length: "...)
	head = strconv.AppendInt(head, int64(n), 10)
	head = append(head, "\r\n\r\n"...)
	out.Write(head)
	for _, b := range block {
		out.Write(b)
	}
	io.WriteString(out, recordEnd)
	if zw != nil {
		zw.Close() // to a bytes.Buffer: no error
		zw.Reset(io.Discard)
		pool.Put(zw)
	}
	return buf.Len()
}

// exchange is one HTTP exchange as it was transferred. Its slices are the
// connection's buffers, valid until write returns.
type exchange struct {
	targetURI string
	ip        string    // "" when unknown
	date      time.Time // when the request started
	request   []byte    // as written
	head      []byte    // status line and header fields, with the empty line
	body      []byte    // transfer coding removed
	truncated string    // WARC-Truncated reason, "" if whole
	status    int       // of head
	mediaType string    // of head's Content-Type, without parameters
	stored    bool      // body compressed already: the record is stored
	// payload and block are the digests of body and of head and body,
	// computed as they were read.
	payload, block string
}

// write makes the request and response (or revisit) records of x and
// queues them for the writing goroutine. It returns once they are queued,
// with the item to wait on for them to be written, or at once with the
// error that stops the Writer (or ErrClosed). It is safe for concurrent
// use.
func (w *Writer) write(x *exchange) (*item, error) {
	var ids [2][idLen]byte
	newIDs(&ids)
	respID, reqID := ids[0][:], ids[1][:]
	date := formatDate(x.date)
	whole := len(x.body) > 0 && x.truncated == ""

	w.mu.Lock()
	if w.err != nil || w.closed {
		err := w.err
		w.mu.Unlock()
		if err == nil {
			err = ErrClosed
		}
		return nil, err
	}
	it := &item{done: make(chan struct{})}
	var orig original
	revisit := false
	if whole && !w.opts.NoRevisits {
		var seen bool
		orig, seen = w.digests[x.payload]
		if seen {
			revisit, it.after = true, orig.at
		} else {
			it.self = &origin{}
			w.digests[x.payload] = original{id: string(respID), uri: x.targetURI, date: date, at: it.self}
		}
	}
	w.pending.Add(1)
	w.mu.Unlock()
	defer w.pending.Done()

	h := make(header, 0, 640)
	common := func(typ string, id []byte) {
		h = h.add("WARC-Type", typ)
		h = h.addBytes("WARC-Record-ID", id)
		h = h.add("WARC-Date", date)
		h = h.add("WARC-Target-URI", x.targetURI)
		if x.ip != "" {
			h = h.add("WARC-IP-Address", x.ip)
		}
	}
	it.buf = getBuffer()
	if revisit {
		common("revisit", respID)
		h = h.add("WARC-Profile", RevisitProfile)
		h = h.add("WARC-Refers-To", orig.id)
		h = h.add("WARC-Refers-To-Target-URI", orig.uri)
		h = h.add("WARC-Refers-To-Date", orig.date)
		h = h.add("Content-Type", "application/http;msgtype=response")
		h = h.add("WARC-Payload-Digest", x.payload)
		h = h.add("WARC-Block-Digest", digest(x.head))
		it.ends[0] = w.encode(it.buf, false, h, x.head)
	} else {
		common("response", respID)
		h = h.add("Content-Type", "application/http;msgtype=response")
		h = h.add("WARC-Payload-Digest", x.payload)
		h = h.add("WARC-Block-Digest", x.block)
		if x.truncated != "" {
			h = h.add("WARC-Truncated", x.truncated)
		}
		it.ends[0] = w.encode(it.buf, x.stored, h, x.head, x.body)
	}
	if w.opts.Index != "" {
		it.line = newIndexLine(x, revisit)
	}
	h = h[:0]
	common("request", reqID)
	h = h.addBytes("WARC-Concurrent-To", respID)
	h = h.add("Content-Type", "application/http;msgtype=request")
	h = h.add("WARC-Block-Digest", digest(x.request))
	it.ends[1] = w.encode(it.buf, false, h, x.request)
	w.items <- it
	return it, nil
}

// formatDate gives t as WARC-Date: UTC, RFC 3339, to the microsecond, as
// WARC 1.1 allows.
func formatDate(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000000Z")
}

// idLen is the length of a WARC-Record-ID.
const idLen = len("<urn:uuid:") + 36 + len(">")

// newIDs fills ids with new WARC-Record-IDs: random (version 4) UUID URNs
// in angle brackets.
func newIDs(ids *[2][idLen]byte) {
	var r [32]byte
	rand.Read(r[:])
	for i := range ids {
		u := r[16*i : 16*i+16]
		u[6] = u[6]&0x0f | 0x40 // version 4
		u[8] = u[8]&0x3f | 0x80 // RFC 9562 variant
		b := ids[i][:0]
		b = append(b, "<urn:uuid:"...)
		b = hex.AppendEncode(b, u[0:4])
		b = append(b, '-')
		b = hex.AppendEncode(b, u[4:6])
		b = append(b, '-')
		b = hex.AppendEncode(b, u[6:8])
		b = append(b, '-')
		b = hex.AppendEncode(b, u[8:10])
		b = append(b, '-')
		b = hex.AppendEncode(b, u[10:16])
		b = append(b, '>')
	}
}

// digest returns the labelled SHA-1 of the concatenated parts, in base 32,
// as WARC digests are written.
func digest(parts ...[]byte) string {
	h := sha1.New()
	for _, p := range parts {
		h.Write(p)
	}
	return sumString(h.Sum(nil))
}

// sumString gives a SHA-1 sum as a WARC digest.
func sumString(sum []byte) string {
	return "sha1:" + base32.StdEncoding.EncodeToString(sum)
}
