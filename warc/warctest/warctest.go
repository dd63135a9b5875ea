// Package warctest reads WARC files in tests, checking every record
// against WARC 1.1 (ISO 28500:2017) as it goes, independently of the
// writer: package warc's tests and the command's read what was written
// through it. It imports nothing of the crawl, so that warc's own tests
// may use it.
package warctest

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha1"
	"encoding/base32"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// TB is what the reader reports to: a *testing.T or *testing.B, or any
// value with these methods of testing.TB.
type TB interface {
	Helper()
	Errorf(format string, args ...any)
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

// RevisitProfile is WARC 1.1's identical-payload-digest profile, the one a
// revisit record must name.
const RevisitProfile = "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"

// Record is a WARC record as read.
type Record struct {
	// Offset is where the record starts in its file; in a .warc.gz,
	// where its gzip member starts, and Length is the member's length
	// (0 in a .warc).
	Offset, Length int64
	Fields         map[string]string // by name as written
	Order          []string          // the field names in order
	Block          []byte
}

// Get returns the field name, or "".
func (r *Record) Get(name string) string { return r.Fields[name] }

// HTTPParts splits the block of an application/http record into its head
// (through the empty line) and its body. The head ends as net/http reads
// one: at the first empty line, lines ending in a line feed with or
// without a carriage return before it.
func (r *Record) HTTPParts() (head, body []byte) {
	b := r.Block
	for i := 0; ; {
		j := bytes.IndexByte(b[i:], '\n')
		if j < 0 {
			return b, nil
		}
		i += j + 1
		switch {
		case i < len(b) && b[i] == '\n':
			return b[:i+1], b[i+1:]
		case i+1 < len(b) && b[i] == '\r' && b[i+1] == '\n':
			return b[:i+2], b[i+2:]
		}
	}
}

// Digest returns b's digest as WARC-Block-Digest and WARC-Payload-Digest
// write it: "sha1:" and the SHA-1 in base32.
func Digest(b []byte) string {
	s := sha1.Sum(b)
	return "sha1:" + base32.StdEncoding.EncodeToString(s[:])
}

var (
	idPattern   = regexp.MustCompile(`^<urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}>$`)
	datePattern = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?Z$`)
	// uriPattern is an RFC 3986 URI with an authority, as ISO 28500 wants
	// WARC-Target-URI: after the authority, only the octets RFC 3986
	// allows in a path, query and fragment, and "%" only before two hex
	// digits.
	uriPattern = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*://[^/?#]*([A-Za-z0-9\-._~!$&'()*+,;=:@/?]|%[0-9A-Fa-f]{2})*(#([A-Za-z0-9\-._~!$&'()*+,;=:@/?]|%[0-9A-Fa-f]{2})*)?$`)
)

// Read reads every record of a .warc or .warc.gz file, failing t unless
// each is right: the version line, the named fields, the mandatory ones
// and their forms, the block's length and the end of the record, the
// digests recomputed, and (in a .warc.gz) one gzip member per record.
func Read(t TB, name string) []*Record {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var recs []*Record
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
			rs := Parse(t, name, member)
			if len(rs) != 1 {
				t.Fatalf("%s: gzip member at %d holds %d records, want 1", name, off, len(rs))
			}
			rs[0].Offset, rs[0].Length = off, int64(len(data)-br.Len())-off
			recs = append(recs, rs[0])
		}
	} else {
		recs = Parse(t, name, data)
	}
	for _, r := range recs {
		Check(t, name, r)
	}
	return recs
}

// ReadFiles reads the files of one crawl as Read does, and fails t
// unless each starts with its own warcinfo record, no record ID is used
// twice, and each request's WARC-Concurrent-To names a record of them.
func ReadFiles(t TB, names ...string) []*Record {
	t.Helper()
	var all []*Record
	ids := make(map[string]bool)
	for _, name := range names {
		recs := Read(t, name)
		if len(recs) == 0 || recs[0].Get("WARC-Type") != "warcinfo" {
			t.Fatalf("%s: the first record is not warcinfo", name)
		}
		for _, r := range recs {
			id := r.Get("WARC-Record-ID")
			if ids[id] {
				t.Errorf("%s: WARC-Record-ID %s used twice", name, id)
			}
			ids[id] = true
		}
		all = append(all, recs...)
	}
	for _, r := range all {
		if r.Get("WARC-Type") == "request" && !ids[r.Get("WARC-Concurrent-To")] {
			t.Errorf("request of %s: WARC-Concurrent-To %s names no record of %q", r.Get("WARC-Target-URI"), r.Get("WARC-Concurrent-To"), names)
		}
	}
	return all
}

// ByType returns the records of type typ.
func ByType(recs []*Record, typ string) []*Record {
	var out []*Record
	for _, r := range recs {
		if r.Get("WARC-Type") == typ {
			out = append(out, r)
		}
	}
	return out
}

// Parse parses the records of an uncompressed WARC stream, failing t at
// the first that is not well formed; it does not Check them.
func Parse(t TB, name string, data []byte) []*Record {
	t.Helper()
	var recs []*Record
	r := bufio.NewReader(bytes.NewReader(data))
	for {
		line, err := r.ReadString('\n')
		if err == io.EOF && line == "" {
			return recs
		}
		if line != "WARC/1.1\r\n" {
			t.Fatalf("%s: record %d starts %q, want %q", name, len(recs), line, "WARC/1.1\r\n")
		}
		rec := &Record{Fields: make(map[string]string)}
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
			if _, dup := rec.Fields[k]; dup {
				t.Fatalf("%s: record %d: field %s repeated", name, len(recs), k)
			}
			rec.Fields[k] = v
			rec.Order = append(rec.Order, k)
		}
		n, err := strconv.ParseInt(rec.Get("Content-Length"), 10, 64)
		if err != nil || n < 0 {
			t.Fatalf("%s: record %d: Content-Length %q", name, len(recs), rec.Get("Content-Length"))
		}
		rec.Block = make([]byte, n)
		if _, err := io.ReadFull(r, rec.Block); err != nil {
			t.Fatalf("%s: record %d: block of %d bytes: %v", name, len(recs), n, err)
		}
		end := make([]byte, 4)
		if _, err := io.ReadFull(r, end); err != nil || string(end) != "\r\n\r\n" {
			t.Fatalf("%s: record %d: got %q after the block, want CRLF CRLF", name, len(recs), end)
		}
		recs = append(recs, rec)
	}
}

// Check fails t unless the fields of r are as WARC 1.1 wants them for
// its type, and its digests are right.
func Check(t TB, name string, r *Record) {
	t.Helper()
	typ := r.Get("WARC-Type")
	for _, f := range []string{"WARC-Type", "WARC-Record-ID", "WARC-Date", "Content-Length"} {
		if r.Get(f) == "" {
			t.Errorf("%s: %s record without %s", name, typ, f)
		}
	}
	if id := r.Get("WARC-Record-ID"); !idPattern.MatchString(id) {
		t.Errorf("%s: WARC-Record-ID %q is not a <urn:uuid:…> of a version 4 UUID", name, id)
	}
	if d := r.Get("WARC-Date"); !datePattern.MatchString(d) {
		t.Errorf("%s: WARC-Date %q is not UTC RFC 3339", name, d)
	} else if _, err := time.Parse(time.RFC3339Nano, d); err != nil {
		t.Errorf("%s: WARC-Date %q: %v", name, d, err)
	}
	if got, want := r.Get("WARC-Block-Digest"), Digest(r.Block); got != want {
		t.Errorf("%s: %s %s: WARC-Block-Digest %s, want %s", name, typ, r.Get("WARC-Target-URI"), got, want)
	}
	switch typ {
	case "warcinfo":
		if got, want := r.Get("Content-Type"), "application/warc-fields"; got != want {
			t.Errorf("%s: warcinfo Content-Type %q, want %q", name, got, want)
		}
	case "request", "response", "revisit":
		uri := r.Get("WARC-Target-URI")
		if uri == "" || strings.HasPrefix(uri, "<") || !strings.Contains(uri, "://") {
			t.Errorf("%s: %s WARC-Target-URI %q, want an absolute URI without angle brackets", name, typ, uri)
		}
		if !uriPattern.MatchString(uri) {
			t.Errorf("%s: %s WARC-Target-URI %q is not an RFC 3986 URI", name, typ, uri)
		}
		msg := "response"
		if typ == "request" {
			msg = "request"
			if !idPattern.MatchString(r.Get("WARC-Concurrent-To")) {
				t.Errorf("%s: request of %s: WARC-Concurrent-To %q", name, uri, r.Get("WARC-Concurrent-To"))
			}
		}
		if got, want := r.Get("Content-Type"), "application/http;msgtype="+msg; got != want {
			t.Errorf("%s: %s of %s: Content-Type %q, want %q", name, typ, uri, got, want)
		}
		if typ == "response" {
			_, body := r.HTTPParts()
			if got, want := r.Get("WARC-Payload-Digest"), Digest(body); got != want {
				t.Errorf("%s: response of %s: WARC-Payload-Digest %s, want %s", name, uri, got, want)
			}
		}
		if typ == "revisit" {
			if got, want := r.Get("WARC-Profile"), RevisitProfile; got != want {
				t.Errorf("%s: revisit of %s: WARC-Profile %q, want %q", name, uri, got, want)
			}
			for _, f := range []string{"WARC-Refers-To", "WARC-Refers-To-Target-URI", "WARC-Refers-To-Date", "WARC-Payload-Digest"} {
				if r.Get(f) == "" {
					t.Errorf("%s: revisit of %s without %s", name, uri, f)
				}
			}
		}
	default:
		t.Errorf("%s: unexpected WARC-Type %q", name, typ)
	}
}
