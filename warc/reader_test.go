package warc

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha1"
	"encoding/base32"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// record is a WARC record as the test reader reads it.
type record struct {
	offset int64             // of the record (its gzip member) in the file
	fields map[string]string // by name as written
	order  []string          // field names in order
	block  []byte
}

func (r *record) get(name string) string { return r.fields[name] }

// httpParts splits the block of an application/http record into its head
// (through the empty line) and its body.
func (r *record) httpParts() (head, body []byte) {
	i := bytes.Index(r.block, []byte("\r\n\r\n"))
	if i < 0 {
		return r.block, nil
	}
	return r.block[:i+4], r.block[i+4:]
}

var (
	idPattern   = regexp.MustCompile(`^<urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}>$`)
	datePattern = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?Z$`)
)

// readWARC reads every record of a .warc or .warc.gz file, checking each
// against WARC 1.1 as it goes: the version line, the named fields, the
// mandatory ones and their forms, the block's length and the end of the
// record, the digests recomputed, and (in a .warc.gz) one gzip member per
// record.
func readWARC(t *testing.T, name string) []*record {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var recs []*record
	if strings.HasSuffix(name, ".gz") {
		br := bytes.NewReader(data)
		for br.Len() > 0 {
			off := int64(len(data) - br.Len())
			// A bytes.Reader is an io.ByteReader, so the gzip reader
			// reads no further than the member's end.
			zr, err := gzip.NewReader(br)
			if err != nil {
				t.Fatalf("%s: gzip member at %d: %v", name, off, err)
			}
			zr.Multistream(false)
			member, err := io.ReadAll(zr)
			if err != nil {
				t.Fatalf("%s: gzip member at %d: %v", name, off, err)
			}
			rs := parseRecords(t, name, member)
			if len(rs) != 1 {
				t.Fatalf("%s: gzip member at %d holds %d records, want 1", name, off, len(rs))
			}
			rs[0].offset = off
			recs = append(recs, rs[0])
		}
	} else {
		recs = parseRecords(t, name, data)
	}
	for _, r := range recs {
		checkRecord(t, name, r)
	}
	return recs
}

// parseRecords parses the records of an uncompressed WARC stream.
func parseRecords(t *testing.T, name string, data []byte) []*record {
	t.Helper()
	var recs []*record
	r := bufio.NewReader(bytes.NewReader(data))
	for {
		line, err := r.ReadString('\n')
		if err == io.EOF && line == "" {
			return recs
		}
		if line != "WARC/1.1\r\n" {
			t.Fatalf("%s: record %d starts %q, want %q", name, len(recs), line, "WARC/1.1\r\n")
		}
		rec := &record{fields: make(map[string]string)}
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				t.Fatalf("%s: record %d: header: %v", name, len(recs), err)
			}
			if !strings.HasSuffix(line, "\r\n") {
				t.Fatalf("%s: record %d: header line %q does not end in CRLF", name, len(recs), line)
			}
			line = strings.TrimSuffix(line, "\r\n")
			if line == "" {
				break
			}
			k, v, ok := strings.Cut(line, ": ")
			if !ok || k == "" || strings.ContainsAny(k, " \t") {
				t.Fatalf("%s: record %d: bad header line %q", name, len(recs), line)
			}
			if _, dup := rec.fields[k]; dup {
				t.Fatalf("%s: record %d: field %s repeated", name, len(recs), k)
			}
			rec.fields[k] = v
			rec.order = append(rec.order, k)
		}
		n, err := strconv.ParseInt(rec.get("Content-Length"), 10, 64)
		if err != nil || n < 0 {
			t.Fatalf("%s: record %d: Content-Length %q", name, len(recs), rec.get("Content-Length"))
		}
		rec.block = make([]byte, n)
		if _, err := io.ReadFull(r, rec.block); err != nil {
			t.Fatalf("%s: record %d: block of %d bytes: %v", name, len(recs), n, err)
		}
		end := make([]byte, 4)
		if _, err := io.ReadFull(r, end); err != nil || string(end) != "\r\n\r\n" {
			t.Fatalf("%s: record %d: got %q after the block, want CRLF CRLF", name, len(recs), end)
		}
		recs = append(recs, rec)
	}
}

// checkRecord checks the fields of one record.
func checkRecord(t *testing.T, name string, r *record) {
	t.Helper()
	typ := r.get("WARC-Type")
	for _, f := range []string{"WARC-Type", "WARC-Record-ID", "WARC-Date", "Content-Length"} {
		if r.get(f) == "" {
			t.Errorf("%s: %s record without %s", name, typ, f)
		}
	}
	if id := r.get("WARC-Record-ID"); !idPattern.MatchString(id) {
		t.Errorf("%s: WARC-Record-ID %q is not a <urn:uuid:…> of a version 4 UUID", name, id)
	}
	if d := r.get("WARC-Date"); !datePattern.MatchString(d) {
		t.Errorf("%s: WARC-Date %q is not UTC RFC 3339", name, d)
	} else if _, err := time.Parse(time.RFC3339Nano, d); err != nil {
		t.Errorf("%s: WARC-Date %q: %v", name, d, err)
	}
	if got, want := r.get("WARC-Block-Digest"), sha1Digest(r.block); got != want {
		t.Errorf("%s: %s %s: WARC-Block-Digest %s, want %s", name, typ, r.get("WARC-Target-URI"), got, want)
	}
	switch typ {
	case "warcinfo":
		if got, want := r.get("Content-Type"), "application/warc-fields"; got != want {
			t.Errorf("%s: warcinfo Content-Type %q, want %q", name, got, want)
		}
	case "request", "response", "revisit":
		uri := r.get("WARC-Target-URI")
		if uri == "" || strings.HasPrefix(uri, "<") || !strings.Contains(uri, "://") {
			t.Errorf("%s: %s WARC-Target-URI %q, want an absolute URI without angle brackets", name, typ, uri)
		}
		msg := "response"
		if typ == "request" {
			msg = "request"
			if !idPattern.MatchString(r.get("WARC-Concurrent-To")) {
				t.Errorf("%s: request of %s: WARC-Concurrent-To %q", name, uri, r.get("WARC-Concurrent-To"))
			}
		}
		if got, want := r.get("Content-Type"), "application/http;msgtype="+msg; got != want {
			t.Errorf("%s: %s of %s: Content-Type %q, want %q", name, typ, uri, got, want)
		}
		if typ == "response" {
			_, body := r.httpParts()
			if got, want := r.get("WARC-Payload-Digest"), sha1Digest(body); got != want {
				t.Errorf("%s: response of %s: WARC-Payload-Digest %s, want %s", name, uri, got, want)
			}
		}
		if typ == "revisit" {
			if got, want := r.get("WARC-Profile"), RevisitProfile; got != want {
				t.Errorf("%s: revisit of %s: WARC-Profile %q, want %q", name, uri, got, want)
			}
			for _, f := range []string{"WARC-Refers-To", "WARC-Refers-To-Target-URI", "WARC-Refers-To-Date", "WARC-Payload-Digest"} {
				if r.get(f) == "" {
					t.Errorf("%s: revisit of %s without %s", name, uri, f)
				}
			}
		}
	default:
		t.Errorf("%s: unexpected WARC-Type %q", name, typ)
	}
}

func sha1Digest(b []byte) string {
	s := sha1.Sum(b)
	return "sha1:" + base32.StdEncoding.EncodeToString(s[:])
}

// readAll reads the records of every file of w, checking that each file
// starts with its own warcinfo record and that record ids are unique.
func readAll(t *testing.T, w *Writer) []*record {
	t.Helper()
	var all []*record
	ids := make(map[string]bool)
	for _, name := range w.Files() {
		recs := readWARC(t, name)
		if len(recs) == 0 || recs[0].get("WARC-Type") != "warcinfo" {
			t.Fatalf("%s: first record is not warcinfo", name)
		}
		for _, r := range recs {
			id := r.get("WARC-Record-ID")
			if ids[id] {
				t.Errorf("%s: WARC-Record-ID %s used twice", name, id)
			}
			ids[id] = true
		}
		all = append(all, recs...)
	}
	return all
}

// byType returns the records of type typ.
func byType(recs []*record, typ string) []*record {
	var out []*record
	for _, r := range recs {
		if r.get("WARC-Type") == typ {
			out = append(out, r)
		}
	}
	return out
}

// errFull is the error of a writer that fails like a full disk.
var errFull = errors.New("no space left on device (test)")

// fullFile fails once more than room bytes were written.
type fullFile struct{ room int }

func (f *fullFile) Write(p []byte) (int, error) {
	if len(p) > f.room {
		n := f.room
		f.room = 0
		return n, fmt.Errorf("write: %w", errFull)
	}
	f.room -= len(p)
	return len(p), nil
}

func (f *fullFile) Close() error { return nil }
