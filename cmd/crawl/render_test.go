package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// needChromium skips a test of -render where no chromium is installed,
// unless CI=true (.ci/run installs it), where it fails.
func needChromium(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("chromium"); err == nil {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no chromium on PATH: .ci/run installs Debian's chromium")
	}
	t.Skip("no chromium on PATH")
}

// TestRenderWARC: with -render -warc, what the browser asked for is
// recorded as transferred, like any exchange of the crawl, each URL once,
// and warcio reads the file.
func TestRenderWARC(t *testing.T) {
	needChromium(t)
	s := startSite(t)
	s.Body("/", "text/html; charset=utf-8", `<!doctype html><body><div id="app"></div><script src="/app.js"></script></body>`)
	s.Body("/app.js", "text/javascript", `
fetch("/" + ["api", "x"].join("/")).then(r => r.text()).then(() => {
  const a = document.createElement("a"); a.href = "/" + ["built", "page"].join("/"); document.body.appendChild(a);
});`)
	s.Body("/api/x", "application/json", `{}`)
	s.Body("/built/page", "text/html; charset=utf-8", `<!doctype html><p>built</p>`)
	file := filepath.Join(t.TempDir(), "site.warc.gz")
	r := runCrawl(t, "-q", "-render", "-robots=false", "-warc", file, "-format", "jsonl", s.base+"/")
	if r.code != 0 {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, s.base+"/built/page") {
		t.Errorf("the page the script links to was not crawled: stdout %q", r.stdout)
	}
	for _, p := range []string{"/", "/app.js", "/api/x", "/built/page"} {
		if n := s.Count(p); n != 1 {
			t.Errorf("%s: the server got %d requests, want 1", p, n)
		}
	}
	archive := readWARC(t, file)
	for _, p := range []string{"/", "/app.js", "/api/x", "/built/page"} {
		if n := strings.Count(archive, "WARC-Target-URI: "+s.base+p+"\r\n"); n != 2 {
			t.Errorf("%s: %d records, want 2 (a request and a response)", p, n)
		}
	}
	warcioReads(t, file)
}
