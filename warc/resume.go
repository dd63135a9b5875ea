package warc

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// What a resumed Writer (Options.Resume) does with the files of earlier
// runs: NewWriter has the last one read in the background and cut back to
// its last whole exchange if a kill cut a write short (repairTail); Close
// reads each one that no line of the index it replaces names, those of a
// run killed before its Close, and indexes its records as a Writer would
// have (indexEarlier). Both read the files with scanRecords.

// lineFile returns the file name of an index line, as the JSON string the
// line gives it (quotes and escapes as written).
func lineFile(line []byte) (string, bool) {
	const key = `"filename":`
	i := bytes.LastIndex(line, []byte(key))
	if i < 0 {
		return "", false
	}
	rest := line[i+len(key):]
	if len(rest) == 0 || rest[0] != '"' {
		return "", false
	}
	// The string ends at the first quote no backslash escapes.
	for j := 1; j < len(rest); j++ {
		switch rest[j] {
		case '\\':
			j++
		case '"':
			return string(rest[:j+1]), true
		}
	}
	return "", false
}

// indexEarlier adds to the index the lines of the records of the files of
// earlier runs (those NewWriter found, Options.Resume) that named, the
// files the kept index's lines name, lacks; and cuts back a file whose
// last exchange a kill cut short (see cutBack), whose line it leaves out.
func (w *Writer) indexEarlier(named map[string]bool) error {
	for n := range w.first {
		name := w.fileName(n)
		fname := jsonString(filepath.Base(name))
		if named[fname] {
			continue
		}
		end, cut, err := scanFile(name, fname, w.lines.AddString)
		if err == nil && cut {
			_, err = cutBack(name, end)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// scanFile reads the WARC file name as scanRecords does, fname being its
// base name as a JSON string, and returns what scanRecords does. Its
// errors, of opening and reading the file, name it.
func scanFile(name, fname string, add func(string)) (end int64, cut bool, err error) {
	f, err := os.Open(name)
	if err != nil {
		return 0, false, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, false, err
	}
	end, cut, err = scanRecords(f, fi.Size(), fname, add)
	if err != nil {
		return 0, false, fmt.Errorf("read %s: %w", name, err)
	}
	return end, cut, nil
}

// errCut marks a record that runs past the end of its file: the end of a
// file whose writing a kill cut short.
var errCut = errors.New("a record cut short by the end of the file")

// scanRecords reads the records of the WARC file of size bytes read from r
// (plain, or a gzip member a record, as a Writer writes them) and, if add
// is not nil, calls it with the index line of each response and revisit
// record, fname being the file's base name as a JSON string: a response
// or revisit is indexed with the request record after it, as a Writer
// writes them. The reading stops, without an error, at the first record
// that is not whole or not WARC (the end of a file cut by a kill, or
// damaged), so that what comes before it is indexed. It returns the end of
// the last whole exchange (a response or revisit record and the request
// record after it; a record of another kind, the warcinfo, stands alone),
// whether the reading stopped at a record cut short by the end of the
// file, rather than at its end or at a damaged record, and only the
// errors of r's reading.
func scanRecords(r io.Reader, size int64, fname string, add func(string)) (wholeEnd int64, cut bool, err error) {
	cr := &countingReader{r: bufio.NewReaderSize(r, 64<<10)}
	// A record's block is never longer than the file, nor, decompressed,
	// than deflate's most (1032 to 1) of it: a damaged Content-Length or
	// member is not allowed to exhaust memory.
	maxBlock := 1100*size + 1<<20
	magic, err := cr.r.Peek(2)
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			// Empty, or a byte: a cut first record, if anything.
			return 0, size > 0, nil
		}
		return 0, false, err
	}
	gz := magic[0] == 0x1f && magic[1] == 0x8b
	var zr *gzip.Reader
	// next reads the next record, and where it is: its offset and length
	// as the index gives them. Its error is io.EOF at the end of the file,
	// errCut for a record the end of the file cuts, a readError, or
	// another for a damaged record.
	next := func() (*record, int64, int64, error) {
		start := cr.n
		if !gz {
			rec, err := readRecord(cr, size-start)
			if err != nil {
				return nil, 0, 0, err
			}
			return rec, start, cr.n - start - int64(len(recordEnd)), nil
		}
		var err error
		if zr == nil {
			zr, err = gzip.NewReader(cr)
		} else {
			err = zr.Reset(cr)
		}
		if err == nil {
			zr.Multistream(false)
			var data []byte
			data, err = io.ReadAll(io.LimitReader(zr, maxBlock+1))
			if err == nil {
				if int64(len(data)) > maxBlock {
					return nil, 0, 0, errors.New("a gzip member larger than deflate makes")
				}
				rec, err := parseRecord(data)
				if err != nil {
					// The member is whole: its record is damaged.
					return nil, 0, 0, fmt.Errorf("damaged: %w", err)
				}
				return rec, start, cr.n - start, nil
			}
		}
		if err == io.ErrUnexpectedEOF {
			err = errCut
		}
		return nil, 0, 0, err
	}
	var pending *record // a response or revisit, waiting for its request
	var offset, length int64
	for {
		rec, off, n, err := next()
		if err != nil {
			if ioErr := (*readError)(nil); errors.As(err, &ioErr) {
				return wholeEnd, false, ioErr.err
			}
			// The end of the file, or a record not whole.
			return wholeEnd, err == errCut, nil
		}
		t := rec.get("WARC-Type")
		if pending != nil && t == "request" && rec.get("WARC-Concurrent-To") == pending.get("WARC-Record-ID") {
			if line, ok := pending.indexLine(rec.block); ok && add != nil {
				add(line.format(offset, length, fname))
			}
		}
		pending = nil
		if t == "response" || t == "revisit" {
			pending, offset, length = rec, off, n
		} else {
			wholeEnd = off + n
			if !gz {
				wholeEnd += int64(len(recordEnd))
			}
		}
	}
}

// record is a WARC record as scanRecords reads it: its named fields and
// its block.
type record struct {
	fields map[string]string
	block  []byte
}

func (r *record) get(name string) string { return r.fields[strings.ToLower(name)] }

// indexLine returns the index line of r, a response or revisit record of
// a Writer's, whose request's block is request, as the Writer made it
// (newIndexLine); false if r is not one a Writer writes.
func (r *record) indexLine(request []byte) (*indexLine, bool) {
	date, err := time.Parse(time.RFC3339Nano, r.get("WARC-Date"))
	if err != nil {
		return nil, false
	}
	end := headEnd(r.block, 0)
	if end < 0 {
		return nil, false
	}
	h, ok := parseHead(r.block[:end])
	if !ok {
		return nil, false
	}
	// A file of another writer (or damaged) may hold a target that is no
	// URI (a space, a control character, an octet past ASCII): indexed as
	// the recorder would have written it.
	x := &exchange{targetURI: rfc3986URI(r.get("WARC-Target-URI")), date: date, request: request,
		status: h.status, payload: r.get("WARC-Payload-Digest")}
	if h.hasType {
		mime, _, _ := strings.Cut(h.mediaType, ";")
		x.mediaType = strings.TrimSpace(mime)
	}
	return newIndexLine(x, r.get("WARC-Type") == "revisit"), true
}

// readError is an error of the file's reading, not of its contents.
type readError struct{ err error }

func (e *readError) Error() string { return e.err.Error() }

// maxRecordHead bounds the named fields of a record scanRecords reads: a
// Writer's are below 10 KiB (a URL of a few KiB).
const maxRecordHead = 1 << 20

// parseRecord parses data as one WARC record, as readRecord reads one, and
// nothing after it; its block is a part of data.
func parseRecord(data []byte) (*record, error) {
	i := bytes.Index(data, []byte("\r\n\r\n"))
	if i < 0 || i > maxRecordHead {
		return nil, errors.New("no end of the named fields")
	}
	rec, n, err := parseFields(string(data[:i+2]))
	if err != nil {
		return nil, err
	}
	body := data[i+4:]
	if int64(len(body)) != n+int64(len(recordEnd)) || string(body[n:]) != recordEnd {
		return nil, errors.New("a record not ended by CRLF CRLF, or more after it")
	}
	rec.block = body[:n]
	return rec, nil
}

// parseFields parses the head of a record, "WARC/1.1" and its named fields,
// each line with its CRLF, and returns the record without its block, and
// its Content-Length.
func parseFields(head string) (*record, int64, error) {
	first, rest, _ := strings.Cut(head, "\r\n")
	if first != "WARC/1.1" && first != "WARC/1.0" {
		return nil, 0, errors.New("not a WARC record")
	}
	rec := &record{fields: make(map[string]string)}
	for line := range strings.Lines(rest) {
		k, v, ok := strings.Cut(strings.TrimSuffix(line, "\r\n"), ":")
		if !ok {
			return nil, 0, errors.New("a named field without a colon")
		}
		rec.fields[strings.ToLower(strings.TrimSpace(k))] = strings.TrimSpace(v)
	}
	n, err := strconv.ParseInt(rec.get("Content-Length"), 10, 64)
	if err != nil || n < 0 {
		return nil, 0, errors.New("no Content-Length")
	}
	return rec, n, nil
}

// readRecord reads a WARC record, as a Writer writes it: "WARC/1.1", named
// fields ending in Content-Length, an empty line, the block, and an empty
// line twice (CRLF CRLF); one of at most max bytes. The end of the file
// before the record is io.EOF; within it, errCut.
func readRecord(cr *countingReader, max int64) (*record, error) {
	var head strings.Builder
	for {
		line, err := cr.readLine(maxRecordHead - head.Len())
		if err == io.EOF && head.Len() > 0 {
			err = errCut
		}
		if err != nil {
			return nil, err
		}
		if line == "\r\n" {
			break
		}
		head.WriteString(line)
	}
	rec, n, err := parseFields(head.String())
	if err != nil {
		return nil, err
	}
	if n+int64(len(recordEnd)) > max-int64(head.Len()+2) {
		return nil, errCut // past the end
	}
	rec.block = make([]byte, n)
	if _, err := io.ReadFull(cr, rec.block); err != nil {
		return nil, cutAtEOF(err)
	}
	var end [len(recordEnd)]byte
	if _, err := io.ReadFull(cr, end[:]); err != nil {
		return nil, cutAtEOF(err)
	}
	if string(end[:]) != recordEnd {
		return nil, errors.New("a record not ended by CRLF CRLF")
	}
	return rec, nil
}

// cutAtEOF returns errCut for the end of the file within a record.
func cutAtEOF(err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return errCut
	}
	return err
}

// countingReader counts the bytes read through it, for scanRecords to know
// where each record starts; as an io.ByteReader, it is read by gzip
// without a buffer of gzip's own, which would read past a member's end.
// An error of the file's reading comes out as a readError.
type countingReader struct {
	r *bufio.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, wrapRead(err)
}

func (c *countingReader) ReadByte() (byte, error) {
	b, err := c.r.ReadByte()
	if err == nil {
		c.n++
	}
	return b, wrapRead(err)
}

// readLine reads a line of at most max bytes, with its line feed. The end
// of the file before any byte is io.EOF; after one, errCut.
func (c *countingReader) readLine(max int) (string, error) {
	var b []byte
	for {
		part, err := c.r.ReadSlice('\n')
		c.n += int64(len(part))
		if len(b)+len(part) > max {
			return "", errors.New("a line too long")
		}
		b = append(b, part...)
		switch {
		case err == nil:
			return string(b), nil
		case err == bufio.ErrBufferFull:
			continue
		case len(b) > 0:
			return "", cutAtEOF(wrapRead(err))
		default:
			return "", wrapRead(err)
		}
	}
}

// wrapRead marks an error of the file's reading, but io.EOF, which ends
// the file, and io.ErrUnexpectedEOF.
func wrapRead(err error) error {
	if err == nil || err == io.EOF || err == io.ErrUnexpectedEOF {
		return err
	}
	return &readError{err}
}

// repairTail cuts the file name back to the end of its last whole
// exchange when its last record runs past its end (see cutBack). It
// reports whether it cut.
func repairTail(name string) (bool, error) {
	end, cut, err := scanFile(name, "", nil)
	if err != nil || !cut {
		return false, err
	}
	return cutBack(name, end)
}

// cutBack cuts the file name, whose reading stopped at a record that runs
// past its end, back to end, the end of its last whole exchange: what a
// kill leaves of a write it stops between two pages is undone (the
// kernel stops a write of several pages so, for a process killed in it).
// The exchange cut short was never counted written (its reader waits for
// the whole write), so nothing the crawl counts done goes. A file with
// more record starts after end than the exchange cut short can have
// (its response, and the start of its request) is damaged elsewhere,
// which cutting would make worse: it is left as it is. It reports
// whether it cut.
func cutBack(name string, end int64) (bool, error) {
	f, err := os.Open(name)
	if err != nil {
		return false, err
	}
	defer f.Close()
	if _, err := f.Seek(end, io.SeekStart); err != nil {
		return false, err
	}
	head := make([]byte, 2)
	if _, err := io.ReadFull(f, head); err != nil {
		return false, nil // a byte or none: nothing to cut
	}
	if !recordStart(io.MultiReader(bytes.NewReader(head), f)) {
		// Not a WARC record's start, whole or cut: not a record this
		// package wrote (a file left by hand in the series, or not a
		// WARC at all), which it leaves as it is.
		return false, nil
	}
	if _, err := f.Seek(end+2, io.SeekStart); err != nil {
		return false, err
	}
	marker, most := []byte(recordEnd+"WARC/1."), 1
	if head[0] == 0x1f && head[1] == 0x8b {
		// A gzip member's start as Go's compress/gzip writes it, no
		// name nor time: the response's member, and the request's.
		// (A body stored as sent, gzip made so, holds it too: the file
		// is then left as it is.)
		marker, most = []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0}, 2
	}
	if n, err := count(io.MultiReader(bytes.NewReader(head), f), marker, most+1); err != nil || n > most {
		return false, err
	}
	if err := os.Truncate(name, end); err != nil {
		return false, err
	}
	return true, nil
}

// recordStart reports whether r starts as a WARC record, plain or in a
// gzip member, possibly cut short: its first octets, or those its member
// decompresses to, are "WARC/1." or the start of it.
func recordStart(r io.Reader) bool {
	br := bufio.NewReader(r)
	if magic, err := br.Peek(2); err == nil && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			// The member's header cut short (or damaged): a cut record
			// only if what there is of it is a header's start.
			return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)
		}
		defer zr.Close()
		r = zr
	} else {
		r = br
	}
	want := []byte("WARC/1.")
	got := make([]byte, len(want))
	n, _ := io.ReadFull(r, got)
	return bytes.HasPrefix(want, got[:n])
}

// count returns how many times marker occurs in r, up to limit.
func count(r io.Reader, marker []byte, limit int) (int, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	n := 0
	// window holds the last len(marker) bytes read.
	window := make([]byte, 0, len(marker))
	for n < limit {
		c, err := br.ReadByte()
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		if len(window) == len(marker) {
			copy(window, window[1:])
			window = window[:len(marker)-1]
		}
		window = append(window, c)
		if bytes.Equal(window, marker) {
			n++
		}
	}
	return n, nil
}
