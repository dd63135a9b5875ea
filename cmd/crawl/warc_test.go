package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// -warc FILE records every exchange of the crawl in FILE: a request and a
// response record for each URL fetched, robots.txt included.
func TestWARC(t *testing.T) {
	s := knownSite(t)
	file := filepath.Join(t.TempDir(), "site.warc.gz")
	r := runCrawl(t, "-q", "-warc", file, s.base+"/")
	if r.code != 0 {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	f, err := os.Open(file)
	if err != nil {
		t.Fatalf("the WARC file: %v", err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f) // reads every member in turn
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte("WARC/1.1\r\nWARC-Type: warcinfo\r\n")) && !bytes.HasPrefix(b, []byte("WARC/1.1\r\n")) {
		t.Fatalf("the file starts %q, want a WARC/1.1 record", b[:min(len(b), 40)])
	}
	text := string(b)
	if !strings.Contains(text, "WARC-Type: warcinfo") {
		t.Error("no warcinfo record")
	}
	for _, p := range []string{"/robots.txt", "/", "/about", "/blog/", "/blog/first", "/logo.png", "/missing", "/old"} {
		if n := strings.Count(text, "WARC-Target-URI: "+s.base+p+"\r\n"); n != 2 {
			t.Errorf("%s: %d records, want 2 (its request and its response)", p, n)
		}
	}
	if strings.Count(text, "WARC-Type: response") < 8 {
		t.Errorf("%d response records, want at least 8", strings.Count(text, "WARC-Type: response"))
	}
	// An unwritable path is an error before anything is fetched.
	before := s.Total()
	r = runCrawl(t, "-q", "-warc", filepath.Join(t.TempDir(), "no", "such", "dir", "x.warc.gz"), s.base+"/")
	if r.code != 1 || !strings.Contains(r.stderr, "-warc") || s.Total() != before {
		t.Errorf("unwritable -warc: exit %d, stderr %q, %d requests; want 1, a message, none", r.code, r.stderr, s.Total()-before)
	}
}

// -warc_index FILE writes a CDXJ index of the archive: a sorted line per
// response, each pointing at a gzip member holding that response.
func TestWARCIndex(t *testing.T) {
	s := knownSite(t)
	dir := t.TempDir()
	file, index := filepath.Join(dir, "site.warc.gz"), filepath.Join(dir, "site.cdxj")
	r := runCrawl(t, "-q", "-warc", file, "-warc_index", index, s.base+"/")
	if r.code != 0 {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	archive, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("the WARC file: %v", err)
	}
	b, err := os.ReadFile(index)
	if err != nil {
		t.Fatalf("the index: %v", err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if !slices.IsSorted(lines) {
		t.Errorf("index lines not sorted:\n%s", b)
	}
	urls := make(map[string]bool)
	for _, line := range lines {
		f := strings.SplitN(line, " ", 3)
		var fields struct{ URL, Filename, Offset, Length string }
		if len(f) != 3 || json.Unmarshal([]byte(f[2]), &fields) != nil {
			t.Fatalf("index line %q, want urlkey timestamp {json}", line)
		}
		urls[fields.URL] = true
		if fields.Filename != "site.warc.gz" {
			t.Errorf("%s: filename %q, want %q", fields.URL, fields.Filename, "site.warc.gz")
		}
		off, err1 := strconv.Atoi(fields.Offset)
		n, err2 := strconv.Atoi(fields.Length)
		if err1 != nil || err2 != nil || off < 0 || n <= 0 || off+n > len(archive) {
			t.Fatalf("%s: offset %q, length %q in a file of %d bytes", fields.URL, fields.Offset, fields.Length, len(archive))
		}
		zr, err := gzip.NewReader(bytes.NewReader(archive[off : off+n]))
		if err != nil {
			t.Fatalf("%s: gzip member at %d: %v", fields.URL, off, err)
		}
		rec, err := io.ReadAll(zr)
		if err != nil {
			t.Fatalf("%s: gzip member at %d: %v", fields.URL, off, err)
		}
		if !bytes.Contains(rec, []byte("\r\nWARC-Target-URI: "+fields.URL+"\r\n")) || !bytes.Contains(rec, []byte("\r\nWARC-Type: response\r\n")) && !bytes.Contains(rec, []byte("\r\nWARC-Type: revisit\r\n")) {
			t.Errorf("%s: the member at %d holds %q, want the response of that URL", fields.URL, off, rec[:min(len(rec), 300)])
		}
	}
	for _, p := range []string{"/robots.txt", "/", "/about", "/blog/", "/blog/first", "/logo.png", "/missing", "/old"} {
		if !urls[s.base+p] {
			t.Errorf("%s: no index line", p)
		}
	}

	// An unwritable index is an error before anything is fetched, as is
	// an index without an archive.
	before := s.Total()
	bad := filepath.Join(t.TempDir(), "no", "such", "dir", "x.cdxj")
	r = runCrawl(t, "-q", "-warc", filepath.Join(t.TempDir(), "x.warc.gz"), "-warc_index", bad, s.base+"/")
	if r.code != 1 || !strings.Contains(r.stderr, bad) || s.Total() != before {
		t.Errorf("unwritable -warc_index: exit %d, stderr %q, %d requests; want 1, a message naming it, none", r.code, r.stderr, s.Total()-before)
	}
	r = runCrawl(t, "-q", "-warc_index", filepath.Join(t.TempDir(), "x.cdxj"), s.base+"/")
	if r.code != 1 || !strings.Contains(r.stderr, "-warc_index") || s.Total() != before {
		t.Errorf("-warc_index without -warc: exit %d, stderr %q, %d requests; want 1, a message, none", r.code, r.stderr, s.Total()-before)
	}
}

// With -requisites, the archive holds what a browser needs to render each
// page.
func TestWARCRequisites(t *testing.T) {
	s := startSite(t)
	s.Body("/", "text/html; charset=utf-8", `<link rel=stylesheet href="/s.css"><img src="/i.png"><a href="/p">p</a>`)
	s.Body("/p", "text/html; charset=utf-8", `<img src="/i.png">`)
	s.Body("/s.css", "text/css", `body { background: url(/bg.png) }`)
	s.Body("/i.png", "image/png", "\x89PNG")
	s.Body("/bg.png", "image/png", "\x89PNG")
	file := filepath.Join(t.TempDir(), "site.warc")
	r := runCrawl(t, "-q", "-requisites", "-warc", file, s.base+"/")
	if r.code != 0 {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/", "/p", "/s.css", "/i.png", "/bg.png"} {
		if n := strings.Count(string(b), "WARC-Target-URI: "+s.base+p+"\r\n"); n != 2 {
			t.Errorf("%s: %d records, want 2 (fetched once, request and response)", p, n)
		}
	}
}
