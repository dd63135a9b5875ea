package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/asyncrawl/crawl/warc/warctest"
)

// startNginx serves root with nginx, gzip on for HTML, CSS and JavaScript
// (so that those bodies come gzip-coded and chunked), on a free loopback
// port, until the test ends, and returns its base URL. The test is skipped
// where nginx is not installed.
func startNginx(t *testing.T, root string) string {
	t.Helper()
	bin, err := exec.LookPath("nginx")
	if err != nil {
		if _, err := os.Stat("/usr/sbin/nginx"); err != nil {
			t.Skip("nginx is not installed")
		}
		bin = "/usr/sbin/nginx"
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	dir := t.TempDir()
	conf := fmt.Sprintf(`daemon off;
worker_processes 1;
error_log %[1]s/error.log;
pid %[1]s/nginx.pid;
events { worker_connections 64; }
http {
	types { text/html html; text/css css; application/javascript js; image/png png; }
	access_log off;
	client_body_temp_path %[1]s;
	proxy_temp_path %[1]s;
	fastcgi_temp_path %[1]s;
	uwsgi_temp_path %[1]s;
	scgi_temp_path %[1]s;
	gzip on;
	gzip_min_length 20;
	gzip_types text/css application/javascript;
	server { listen %[2]s; root %[3]s; }
}
`, dir, addr, root)
	file := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(file, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-c", file, "-p", dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Skipf("nginx: %v", err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(dir, "error.log"))
			t.Skipf("nginx did not start: %s %s", stderr.Bytes(), log)
		}
	}
	return "http://" + addr
}

// docTree writes a small documentation site: pages linking each other, a
// stylesheet with an image of its own, a script, images, a missing link.
func docTree(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{
		"style.css":  "body { font: 16px serif; background: url(img/bg.png) }\n" + strings.Repeat("p { margin: 0 }\n", 50),
		"site.js":    strings.Repeat("console.log('documentation');\n", 40),
		"img/a.png":  "\x89PNG\r\n\x1a\n" + strings.Repeat("\x00\x01", 300),
		"img/bg.png": "\x89PNG\r\n\x1a\n" + strings.Repeat("\x02", 100),
	}
	for i := range 12 {
		var b strings.Builder
		fmt.Fprintf(&b, "<!DOCTYPE html><html><head><title>Chapter %d</title><link rel=stylesheet href=\"/style.css\"><script src=\"/site.js\"></script></head><body>\n", i)
		fmt.Fprintf(&b, "<h1>Chapter %d</h1><img src=\"img/a.png\">\n", i)
		for j := range 12 {
			fmt.Fprintf(&b, "<p>See <a href=\"ch%d.html\">chapter %d</a>.</p>\n", j, j)
		}
		b.WriteString(strings.Repeat("<p>Text of the chapter, long enough to compress.</p>\n", 30))
		b.WriteString("<a href=\"missing.html\">a broken link</a></body></html>\n")
		files[fmt.Sprintf("ch%d.html", i)] = b.String()
	}
	files["index.html"] = files["ch0.html"]
	// nginx's workers may run as another user (nobody when started by
	// root): the tree must be readable to all.
	for _, d := range []string{filepath.Dir(root), root} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, body := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// Crawling a documentation site that nginx serves, with -requisites,
// archives every URL fetched, each payload byte for byte what nginx sends
// (gzip-coded and chunked as nginx sends it), with an index that points at
// each; warcio.js, where installed, reads the archive without a warning.
func TestWARCNginx(t *testing.T) {
	root := docTree(t)
	base := startNginx(t, root)
	dir := t.TempDir()
	file, index, report := filepath.Join(dir, "site.warc.gz"), filepath.Join(dir, "site.cdxj"), filepath.Join(dir, "report.jsonl")
	r := runCrawl(t, "-q", "-requisites", "-format", "jsonl", "-o", report, "-warc", file, "-warc_index", index, base+"/")
	if r.code != 0 {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	recs := warctest.ReadFiles(t, file)
	checkIndex(t, index, file, recs)

	// Every URL the crawl reports a status for has a response (or a
	// revisit, for a payload seen before), and so has robots.txt.
	b, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	archivedURL := make(map[string]bool)
	requests := make(map[string][]byte) // by the id of their response
	for _, rec := range recs {
		switch rec.Get("WARC-Type") {
		case "response", "revisit":
			archivedURL[rec.Get("WARC-Target-URI")] = true
		case "request":
			requests[rec.Get("WARC-Concurrent-To")] = rec.Block
		}
	}
	var fetched []string
	for line := range strings.Lines(string(b)) {
		var res struct {
			Type, URL string
			Status    int
		}
		if json.Unmarshal([]byte(line), &res) != nil || res.Type != "result" || res.Status == 0 {
			continue
		}
		fetched = append(fetched, res.URL)
		if !archivedURL[res.URL] {
			t.Errorf("%s: fetched (status %d), no response record", res.URL, res.Status)
		}
	}
	if !archivedURL[base+"/robots.txt"] {
		t.Error("/robots.txt: no response record")
	}
	for _, p := range []string{"/", "/ch11.html", "/style.css", "/site.js", "/img/a.png", "/img/bg.png", "/missing.html"} {
		if !slices.Contains(fetched, base+p) {
			t.Errorf("%s: not fetched; the report has %v", p, fetched)
		}
	}

	// Each payload is what nginx sends for the request recorded, sent
	// again: gzip-coded where it was, de-chunked.
	gzipped, chunked := 0, 0
	for _, rec := range recs {
		if rec.Get("WARC-Type") != "response" {
			continue
		}
		uri := rec.Get("WARC-Target-URI")
		head, payload := rec.HTTPParts()
		req := requests[rec.Get("WARC-Record-ID")]
		if rec.Get("WARC-Truncated") != "" || req == nil {
			t.Errorf("%s: WARC-Truncated %q, request recorded %t; want whole, with its request", uri, rec.Get("WARC-Truncated"), req != nil)
			continue
		}
		if got := resend(t, uri, req); !bytes.Equal(got, payload) {
			t.Errorf("%s: payload of %d bytes, nginx sends %d for the same request", uri, len(payload), len(got))
		}
		if bytes.Contains(head, []byte("\r\nContent-Encoding: gzip\r\n")) && bytes.HasPrefix(head, []byte("HTTP/1.1 200 ")) {
			gzipped++
			if bytes.Contains(head, []byte("\r\nX-Crawler-Transfer-Encoding: chunked\r\n")) {
				chunked++
			}
			zr, err := gzip.NewReader(bytes.NewReader(payload))
			if err != nil {
				t.Errorf("%s: gzip payload: %v", uri, err)
				continue
			}
			plain, err := io.ReadAll(zr)
			u, _ := url.Parse(uri)
			want, _ := os.ReadFile(filepath.Join(root, u.Path))
			if strings.HasSuffix(u.Path, "/") {
				want, _ = os.ReadFile(filepath.Join(root, u.Path, "index.html"))
			}
			if err != nil || !bytes.Equal(plain, want) {
				t.Errorf("%s: gzip payload decodes to %d bytes (%v), want the file's %d", uri, len(plain), err, len(want))
			}
		}
	}
	if gzipped < 3 || chunked < 3 {
		t.Errorf("%d gzip-coded payloads, %d of them chunked; want the pages, stylesheet and script, which nginx compresses as it sends", gzipped, chunked)
	}
	warcioReads(t, file)
}

// resend sends the request recorded for uri on a new connection and
// returns the body of the response as sent: de-chunked, still in its
// content coding.
func resend(t *testing.T, uri string, req []byte) []byte {
	t.Helper()
	u, err := url.Parse(uri)
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write(req); err != nil {
		t.Fatal(err)
	}
	parsed, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(req)))
	if err != nil {
		t.Fatalf("%s: the request recorded does not parse: %v", uri, err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), parsed)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return body
}

// warcioReads runs warcio.js's index and cdx-index on file, where node
// and warcio are installed (WARCIO_DIR, or where .ci/run puts it), and
// fails on any word on standard error.
func warcioReads(t *testing.T, file string) {
	t.Helper()
	dir := os.Getenv("WARCIO_DIR")
	if dir == "" {
		home, _ := os.UserHomeDir()
		dir = filepath.Join(home, ".cache", "asyncrawl-warcio")
	}
	cli := filepath.Join(dir, "node_modules", "warcio", "dist", "cli.js")
	if _, err := exec.LookPath("node"); err != nil {
		t.Log("node is not installed: warcio not run")
		return
	}
	if _, err := os.Stat(cli); err != nil {
		t.Logf("warcio is not installed in %s: not run", dir)
		return
	}
	for _, cmd := range []string{"index", "cdx-index"} {
		c := exec.Command("node", cli, cmd, file)
		var stderr bytes.Buffer
		c.Stderr = &stderr
		out, err := c.Output()
		if err != nil || stderr.Len() > 0 || len(out) == 0 {
			t.Errorf("warcio %s: %v, %d bytes out, stderr %q", cmd, err, len(out), stderr.Bytes())
		}
	}
}
