package warctest

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recorder is a TB that keeps what it is told; Fatal ends the read with
// a panic that read recovers.
type recorder struct{ errs []string }

type fatal struct{}

func (r *recorder) Helper()                   {}
func (r *recorder) Errorf(f string, a ...any) { r.errs = append(r.errs, fmt.Sprintf(f, a...)) }
func (r *recorder) Fatal(a ...any)            { r.errs = append(r.errs, fmt.Sprint(a...)); panic(fatal{}) }
func (r *recorder) Fatalf(f string, a ...any) { r.Errorf(f, a...); panic(fatal{}) }
func (r *recorder) read(names ...string) (n int) {
	defer func() {
		if p := recover(); p != nil {
			if _, ok := p.(fatal); !ok {
				panic(p)
			}
		}
	}()
	return len(ReadFiles(r, names...))
}

const (
	infoID = "<urn:uuid:6b1f3c52-1b0e-4c3a-9e4f-0a1b2c3d4e5f>"
	reqID  = "<urn:uuid:7c2a4d63-2c1f-4d4b-8f50-1b2c3d4e5f60>"
	respID = "<urn:uuid:8d3b5e74-3d2a-4e5c-a061-2c3d4e5f6071>"
)

// record writes one WARC/1.1 record with the fields given (name, value
// pairs) and the digest and length of block.
func record(block string, fields ...string) string {
	var b strings.Builder
	b.WriteString("WARC/1.1\r\n")
	for i := 0; i < len(fields); i += 2 {
		fmt.Fprintf(&b, "%s: %s\r\n", fields[i], fields[i+1])
	}
	fmt.Fprintf(&b, "WARC-Block-Digest: %s\r\nContent-Length: %d\r\n\r\n%s\r\n\r\n", Digest([]byte(block)), len(block), block)
	return b.String()
}

// exchange returns a warcinfo, a request and its response, the response's
// payload digest given (right unless told otherwise).
func exchange(payloadDigest string) []string {
	const date = "2026-11-23T10:00:00Z"
	req := "GET / HTTP/1.1\r\nHost: example.com\r\n\r\n"
	resp := "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi"
	if payloadDigest == "" {
		payloadDigest = Digest([]byte("hi"))
	}
	return []string{
		record("software: test\r\n", "WARC-Type", "warcinfo", "WARC-Record-ID", infoID, "WARC-Date", date, "Content-Type", "application/warc-fields"),
		record(req, "WARC-Type", "request", "WARC-Record-ID", reqID, "WARC-Date", date, "WARC-Target-URI", "http://example.com/",
			"WARC-Concurrent-To", respID, "Content-Type", "application/http;msgtype=request"),
		record(resp, "WARC-Type", "response", "WARC-Record-ID", respID, "WARC-Date", date, "WARC-Target-URI", "http://example.com/",
			"WARC-Payload-Digest", payloadDigest, "Content-Type", "application/http;msgtype=response"),
	}
}

// write writes recs to a file: a .warc, or with gz a .warc.gz of one gzip
// member per record unless members says how many records each holds.
func write(t *testing.T, recs []string, gz bool, members ...int) string {
	t.Helper()
	name := filepath.Join(t.TempDir(), "a.warc")
	var out bytes.Buffer
	if !gz {
		out.WriteString(strings.Join(recs, ""))
	} else {
		name += ".gz"
		if members == nil {
			for range recs {
				members = append(members, 1)
			}
		}
		for _, n := range members {
			zw := gzip.NewWriter(&out)
			zw.Write([]byte(strings.Join(recs[:n], "")))
			zw.Close()
			recs = recs[n:]
		}
	}
	if err := os.WriteFile(name, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return name
}

// A right file reads with no complaint, its records' fields and offsets
// as written; each fault is named.
func TestRead(t *testing.T) {
	for _, gz := range []bool{false, true} {
		var r recorder
		if n := r.read(write(t, exchange(""), gz)); n != 3 || len(r.errs) > 0 {
			t.Errorf("gz %v: read %d records, complaints %q; want 3 and none", gz, n, r.errs)
		}
	}
	recs := Read(t, write(t, exchange(""), true))
	if recs[1].Offset != recs[0].Length || recs[2].Offset != recs[1].Offset+recs[1].Length {
		t.Errorf("gzip members at %d+%d, %d+%d, %d: want each where the one before ends",
			recs[0].Offset, recs[0].Length, recs[1].Offset, recs[1].Length, recs[2].Offset)
	}
	if got := recs[2].Get("WARC-Target-URI"); got != "http://example.com/" {
		t.Errorf("response's WARC-Target-URI %q", got)
	}
	if _, body := recs[2].HTTPParts(); string(body) != "hi" {
		t.Errorf("response body %q, want %q", body, "hi")
	}

	bad := exchange(Digest([]byte("other")))
	noInfo := exchange("")[1:]
	cut := exchange("")
	cut[2] = strings.TrimSuffix(cut[2], "\r\n\r\n")
	for _, tt := range []struct {
		name, file, want string
	}{
		{"payload digest", write(t, bad, true), "WARC-Payload-Digest"},
		{"no warcinfo first", write(t, noInfo, true), "not warcinfo"},
		{"two records in a member", write(t, exchange(""), true, 1, 2), "holds 2 records"},
		{"record cut short", write(t, cut, false), "after the block"},
		{"a request naming no record", write(t, exchange("")[:2], true), "names no record"},
	} {
		var r recorder
		r.read(tt.file)
		if !strings.Contains(strings.Join(r.errs, "\n"), tt.want) {
			t.Errorf("%s: complaints %q, want one naming %q", tt.name, r.errs, tt.want)
		}
	}
}
