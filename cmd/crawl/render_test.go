package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/asyncrawl/crawl/crawltest"
)

// runCrawlFor is runCrawl for a command killed after limit.
func runCrawlFor(t *testing.T, limit time.Duration, args ...string) ran {
	t.Helper()
	cmd := crawlCmdFor(t, limit, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	return wait(t, cmd, &stdout, &stderr, cmd.Run())
}

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

// TestRenderMaze runs the command with -render and every other means of
// discovery on crawltest's FullMaze: it finds every one of the 27 cases
// that need a script and still every one of the 64 that do not; with
// -render auto, the same.
func TestRenderMaze(t *testing.T) {
	needChromium(t)
	all := []string{"navigation", "requisite", "reference", "speculative", "sitemap"}
	for _, mode := range []string{"-render", "-render=auto"} {
		t.Run(mode, func(t *testing.T) {
			maze := crawltest.NewFullMaze()
			srv := httptest.NewServer(maze)
			defer srv.Close()
			flags := []string{"-q", mode, "-requisites", "-references", "-speculative", "-robots=false", "-sitemaps"}
			r := runCrawlFor(t, 3*time.Minute, append(flags, srv.URL+"/")...)
			if r.code != 0 {
				t.Fatalf("crawl %v: exit %d, stderr:\n%s", flags, r.code, r.stderr)
			}
			if missed, extra := maze.Compare(all...); len(missed) > 0 || len(extra) > 0 {
				t.Errorf("crawl %v: found %d of %d cases\nmissed:\n\t%s\nnot of %v:\n\t%s", flags, len(maze.Found()),
					len(crawltest.FullMazeCases()), strings.Join(missed, "\n\t"), all, strings.Join(extra, "\n\t"))
			}
		})
	}
}

// browserTree returns the processes of the browsers that descend from the
// process root, by PID, with their command lines: a test's own browsers,
// whatever the browsers of other tests beside it.
func browserTree(t testing.TB, root int) map[int]string {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	parent := map[int]int{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if len(f) > 1 {
			parent[pid], _ = strconv.Atoi(f[1])
		}
	}
	tree := map[int]string{}
	for pid := range parent {
		p := pid
		for p > 1 && p != root {
			p = parent[p]
		}
		if p != root || pid == root {
			continue
		}
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		if err == nil && strings.Contains(string(b), "chrom") {
			tree[pid] = string(b)
		}
	}
	return tree
}

// alive returns the PIDs of tree that still run the same command line.
func alive(tree map[int]string) []int {
	var pids []int
	for pid, cmdline := range tree {
		if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline"); err == nil && string(b) == cmdline {
			pids = append(pids, pid)
		}
	}
	return pids
}

// TestRenderKilled: the command killed with SIGKILL while a page renders
// leaves no browser process behind.
func TestRenderKilled(t *testing.T) {
	needChromium(t)
	s := startSite(t)
	s.Body("/", "text/html; charset=utf-8", `<!doctype html><body><script src="/slow.js"></script></body>`)
	started := make(chan struct{})
	var once sync.Once
	s.Handle("/slow.js", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() { close(started) })
		select {
		case <-r.Context().Done():
		case <-time.After(20 * time.Second):
		}
	}))
	cmd := crawlCmd(t, "-q", "-render", "-robots=false", s.base+"/")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-started:
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatal("the browser never asked for the page's script")
	}
	tree := browserTree(t, cmd.Process.Pid)
	cmd.Process.Kill()
	cmd.Wait()
	if len(tree) < 2 {
		t.Fatalf("got the browser processes %v while the command rendered, want its main process and its helpers", tree)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		pids := alive(tree)
		if len(pids) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("browser processes 10 s after the command was killed: %v", pids)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestRenderNoChromium: -render where no chromium is on PATH exits 1 at
// once, with one line saying what to install, before anything is fetched.
func TestRenderNoChromium(t *testing.T) {
	s := startSite(t)
	s.Page("/")
	cmd := crawlCmd(t, "-render", s.base)
	cmd.Env = append(os.Environ(), "PATH="+t.TempDir())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	r := wait(t, cmd, &stdout, &stderr, cmd.Run())
	if r.code != 1 || !strings.Contains(r.stderr, "-render: no chromium on PATH: install Debian's chromium package") || strings.Contains(r.stderr, "Options.Exec") {
		t.Errorf("exit %d, stderr %q; want 1 and a line saying to install chromium", r.code, r.stderr)
	}
	if n := s.Total(); n != 0 {
		t.Errorf("the site got %d requests, want 0", n)
	}
}
