package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/asyncrawl/crawl/crawltest"
)

// crawlBin is the command, built once by TestMain, with the race detector
// when the tests have it.
var crawlBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "crawl-cmd-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	crawlBin = filepath.Join(dir, "crawl")
	args := []string{"build", "-o", crawlBin}
	if raceEnabled() {
		args = append(args, "-race")
	}
	build := exec.Command("go", append(args, ".")...)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build the command:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// raceEnabled reports whether the test binary was built with -race.
func raceEnabled() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}

// ran is what one run of the command left.
type ran struct {
	stdout, stderr string
	code           int
}

// crawlCmd returns the command with args, bounded by the test's life.
func crawlCmd(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	return crawlCmdFor(t, 30*time.Second, args...)
}

// crawlCmdFor is crawlCmd for a command killed after limit.
func crawlCmdFor(t *testing.T, limit time.Duration, args ...string) *exec.Cmd {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, crawlBin, args...)
	// A race-enabled binary sleeps a second at exit unless told not to; a
	// race it finds still makes it exit with status 66.
	cmd.Env = append(os.Environ(), "TERM=xterm", "GORACE=atexit_sleep_ms=0")
	return cmd
}

// runCrawl runs the command with args to its end.
func runCrawl(t *testing.T, args ...string) ran {
	t.Helper()
	cmd := crawlCmd(t, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	return wait(t, cmd, &stdout, &stderr, cmd.Run())
}

// wait returns what cmd left, given the error of its Run or Wait.
func wait(t *testing.T, cmd *exec.Cmd, stdout, stderr *bytes.Buffer, err error) ran {
	t.Helper()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("run %v: %v", cmd.Args, err)
	}
	return ran{stdout: stdout.String(), stderr: stderr.String(), code: cmd.ProcessState.ExitCode()}
}

// site is a fake site of package crawltest, which records what it is sent,
// with its base URL, which the report's lines start with.
type site struct {
	*crawltest.Site
	base string // "http://127.0.0.1:PORT"
}

func startSite(t *testing.T) *site {
	s := crawltest.Start(t)
	return &site{Site: s, base: strings.TrimSuffix(s.URL("/"), "/")}
}

// agent returns how many requests the site got with the User-Agent ua.
func (s *site) agent(ua string) int {
	n := 0
	for _, r := range s.Requests() {
		if r.Header.Get("User-Agent") == ua {
			n++
		}
	}
	return n
}

// The known site of the report, JSON and graph tests. Its bodies are
// constants so that the tests can compute sizes.
const (
	homeBody  = `<h1>Home</h1><a href="/about">About</a> <a href="/blog/">Blog</a> <a href="https://elsewhere.example/">Elsewhere</a> <a href="/old">Old blog</a>`
	aboutBody = `<p>About. <a href="/">Home</a> <a href="/logo.png">Logo</a> <a href="/missing">Gone</a></p>`
	blogBody  = `<a href="first">First</a> <a href="/broken">Broken</a> <a href="/about#team">Team</a> <a href="/blog/">Blog</a>`
	firstBody = `<p>First post, no links.</p>`
	logoBody  = "\x89PNG\r\n\x1a\n"
	goneBody  = "gone\n"
)

// knownSite serves the known site: four pages, a redirect, an image, a 404,
// a link to another host and a URL whose connection breaks.
func knownSite(t *testing.T) *site {
	s := startSite(t)
	html := "text/html; charset=utf-8"
	s.Body("/", html, homeBody)
	s.Body("/about", html, aboutBody)
	s.Body("/blog/", html, blogBody)
	s.Body("/blog/first", html, firstBody)
	s.Body("/logo.png", "image/png", logoBody)
	s.Body("/missing", "text/plain; charset=utf-8", goneBody).Status(http.StatusNotFound)
	s.Redirect("/old", http.StatusMovedPermanently, "/blog/")
	s.Handle("/broken", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close() // no response at all: a network failure
		}
	}))
	return s
}

// knownLines returns the report's lines for the URLs of the known site at
// base, sorted by URL, but for /broken, whose error text is the network's.
func knownLines(base string) []string {
	return []string{
		fmt.Sprintf("%s/ 200 text/html utf-8 %d 3/3", base, len(homeBody)),
		fmt.Sprintf("%s/about 200 text/html utf-8 %d 2/3", base, len(aboutBody)),
		fmt.Sprintf("%s/blog/ 200 text/html utf-8 %d 2/4", base, len(blogBody)),
		fmt.Sprintf("%s/blog/first 200 text/html utf-8 %d 0/0", base, len(firstBody)),
		fmt.Sprintf("%s/logo.png 200 image/png ? %d 0/0", base, len(logoBody)),
		fmt.Sprintf("%s/missing 404 text/plain utf-8 %d 0/0", base, len(goneBody)),
		fmt.Sprintf("%s/old 301 redirect %s/blog/", base, base),
	}
}
