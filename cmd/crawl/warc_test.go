package main

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
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
