package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
)

// parseJSONLines returns the results and the summary of -format jsonl.
func parseJSONLines(t *testing.T, out string) ([]jsonResult, jsonSummary) {
	t.Helper()
	var results []jsonResult
	var summary jsonSummary
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	for i, l := range lines {
		if i == len(lines)-1 {
			if err := json.Unmarshal([]byte(l), &summary); err != nil || summary.Type != "summary" {
				t.Fatalf("last line %q: %v; want the summary", l, err)
			}
			break
		}
		var r jsonResult
		if err := json.Unmarshal([]byte(l), &r); err != nil || r.Type != "result" {
			t.Fatalf("line %q: %v; want a result", l, err)
		}
		results = append(results, r)
	}
	return results, summary
}

func TestDemo(t *testing.T) {
	site, err := newDemoSite("http://demo.test", 0)
	if err != nil {
		t.Fatal(err)
	}
	want := site.linkedPaths()
	if len(want) < 200 {
		t.Fatalf("the demo site links %d paths, want a few hundred", len(want))
	}
	for _, tt := range []struct {
		robots      string
		privateKind string // robots.txt disallows /private/
	}{
		{"true", "fail"},
		{"false", "html"},
	} {
		t.Run("robots="+tt.robots, func(t *testing.T) {
			r := runCrawl(t, "-demo", "-demo_latency", "0", "-format", "jsonl", "-robots="+tt.robots)
			if r.code != 0 {
				t.Fatalf("crawl -demo: exit %d, want 0; stderr %q", r.code, r.stderr)
			}
			results, summary := parseJSONLines(t, r.stdout)
			var got []string
			kinds := map[string]int{}
			for _, res := range results {
				u, err := url.Parse(res.URL)
				if err != nil || u.Hostname() != "127.0.0.1" {
					t.Errorf("result for %q: not on the loopback demo site", res.URL)
					continue
				}
				got = append(got, u.Path)
				if u.Path == "/private/" {
					if res.Kind != tt.privateKind {
						t.Errorf("/private/ with -robots=%s: kind %s, want %s", tt.robots, res.Kind, tt.privateKind)
					}
					continue
				}
				kinds[res.Kind]++
				if res.Kind == "fail" {
					t.Errorf("%s failed: %s", res.URL, res.Error)
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("crawl -demo fetched %d paths, want the %d the site links:\ngot  %q\nwant %q", len(got), len(want), got, want)
			}
			if summary.Done != len(want) || summary.Todo != 0 {
				t.Errorf("summary done %d, todo %d; want %d and 0", summary.Done, summary.Todo, len(want))
			}
			// What the demo is there to show, besides /private/.
			if kinds["redirect"] != 6 || kinds["other"] != 2 || kinds["error"] != 1 || kinds["html"] != len(want)-10 {
				t.Errorf("kinds %v, want 6 redirects, 2 other (image, feed), 1 error (the 404), the rest html", kinds)
			}
		})
	}
}

// slowSite serves a root that links to n pages, each of which answers
// only when its request is cancelled. Each page request is sent on hits.
func slowSite(t *testing.T, n int) (*site, <-chan string) {
	hits := make(chan string, n)
	s := startSite(t)
	var links []string
	for i := range n {
		links = append(links, fmt.Sprintf("/p/%d", i))
	}
	s.Page("/", links...)
	s.Handle("/p/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits <- r.URL.Path
		<-r.Context().Done()
	}))
	return s, hits
}

func TestInterrupt(t *testing.T) {
	const pages = 50
	for _, tt := range []struct {
		sig    syscall.Signal
		code   int
		format string
	}{
		{syscall.SIGINT, 130, "text"},
		{syscall.SIGTERM, 143, "jsonl"},
	} {
		t.Run(tt.sig.String(), func(t *testing.T) {
			s, hits := slowSite(t, pages)
			cmd := crawlCmd(t, "-workers", "2", "-format", tt.format, s.base)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// Once a page is being fetched, the root is done.
			select {
			case <-hits:
			case <-time.After(20 * time.Second):
				cmd.Process.Kill()
				t.Fatal("no page requested within 20s")
			}
			if err := cmd.Process.Signal(tt.sig); err != nil {
				t.Fatal(err)
			}
			r := wait(t, cmd, &stdout, &stderr, cmd.Wait())
			if r.code != tt.code {
				t.Errorf("exit %d after %v, want %d; stderr %q", r.code, tt.sig, tt.code, r.stderr)
			}
			if !strings.Contains(r.stderr, "interrupted") {
				t.Errorf("stderr %q, want it to say the crawl was interrupted", r.stderr)
			}
			var done, todo int
			if tt.format == "jsonl" {
				results, summary := parseJSONLines(t, r.stdout)
				if !summary.Interrupted || len(results) != summary.Done {
					t.Errorf("summary %+v after %d results: want interrupted and done %d", summary, len(results), len(results))
				}
				done, todo = summary.Done, summary.Todo
			} else {
				urls, finished, _, todoS, doneS := splitReport(t, r.stdout)
				root := regexp.MustCompile(`^` + regexp.QuoteMeta(s.base) + `/ 200 text/html utf-8 \d+ 50/50$`)
				if finished == "" || !slices.ContainsFunc(urls, root.MatchString) {
					t.Errorf("report:\n%s\nwant the root's line, 50/50 links, and a Finished line", r.stdout)
				}
				done, _ = strconv.Atoi(doneS)
				todo, _ = strconv.Atoi(todoS)
			}
			requested := s.Total()
			if done < 1 || todo < 1 || done+todo > pages+1 {
				t.Errorf("Done %d, Todo %d; want the root done and pages left, %d URLs at most", done, todo, pages+1)
			}
			if requested > 1+2+1 { // root, two workers' pages, robots.txt
				t.Errorf("the site got %d requests, want at most 4 with 2 workers stopped at the first page", requested)
			}
		})
	}
}

// frameRE matches one drawing of the progress line.
var frameRE = regexp.MustCompile(`\r(\d+) done, ≥?(\d+) queued, (\d+) in flight, \d+ errors?, \d+ pages/s, \d+\.\ds\x1b\[K`)

// ptyOutput collects what is written to a pseudo-terminal.
type ptyOutput struct {
	ch  chan []byte // each read
	buf []byte
}

func readPTY(t *testing.T, r io.Reader) *ptyOutput {
	o := &ptyOutput{ch: make(chan []byte)}
	go func() {
		defer close(o.ch)
		for {
			b := make([]byte, 4096)
			n, err := r.Read(b)
			if n > 0 {
				o.ch <- b[:n]
			}
			if err != nil { // EIO once the command and the test closed the terminal
				return
			}
		}
	}()
	return o
}

// until reads until ok holds for what was read, and fails the test if the
// terminal closes first or nothing more comes for 20s.
func (o *ptyOutput) until(t *testing.T, what string, ok func([]byte) bool) {
	t.Helper()
	for !ok(o.buf) {
		select {
		case b, open := <-o.ch:
			if !open {
				t.Fatalf("terminal closed before %s; it got %q", what, o.buf)
			}
			o.buf = append(o.buf, b...)
		case <-time.After(20 * time.Second):
			t.Fatalf("no %s within 20s; the terminal got %q", what, o.buf)
		}
	}
}

// rest reads until the terminal closes.
func (o *ptyOutput) rest() []byte {
	for b := range o.ch {
		o.buf = append(o.buf, b...)
	}
	return o.buf
}

func TestProgressTerminal(t *testing.T) {
	for _, quiet := range []bool{false, true} {
		t.Run(fmt.Sprintf("quiet=%v", quiet), func(t *testing.T) {
			// The page /slow answers when the test says, so that the crawl
			// lasts until the test has seen the line redrawn.
			release := make(chan struct{})
			started := make(chan struct{}, 1)
			s := startSite(t)
			s.Page("/", "/slow", "/fast")
			s.Page("/fast")
			s.Handle("/slow", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				started <- struct{}{}
				select {
				case <-release:
				case <-r.Context().Done():
				}
				w.Header().Set("Content-Type", "text/html")
				fmt.Fprint(w, "done")
			}))

			ptmx, tty, err := pty.Open()
			if err != nil {
				t.Skipf("no pseudo-terminal: %v", err)
			}
			defer ptmx.Close()
			args := []string{s.base}
			if quiet {
				args = append(args, "-q")
			}
			cmd := crawlCmd(t, args...)
			var stdout bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, tty
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			tty.Close() // the command has its own
			out := readPTY(t, ptmx)

			if quiet {
				<-started
			} else {
				// Two drawings while /slow is in flight: the line is redrawn.
				out.until(t, "two drawings with /slow in flight", func(b []byte) bool {
					n := 0
					for _, m := range frameRE.FindAllSubmatch(b, -1) {
						if string(m[3]) == "1" && string(m[1]) == "2" && string(m[2]) == "0" {
							n++
						}
					}
					return n >= 2
				})
			}
			close(release)
			if err := cmd.Wait(); err != nil {
				t.Fatalf("crawl: %v", err)
			}
			got := out.rest()
			if quiet {
				if len(got) != 0 {
					t.Errorf("terminal got %q with -q, want nothing", got)
				}
			} else {
				if !bytes.HasSuffix(got, []byte("\r\x1b[K")) {
					t.Errorf("terminal ends with %q, want the line cleared (\\r\\x1b[K)", got[max(0, len(got)-80):])
				}
				if n := len(frameRE.FindAll(got, -1)); n < 2 {
					t.Errorf("%d drawings of the progress line in %q, want 2 or more", n, got)
				}
			}
			if !strings.Contains(stdout.String(), "\nDone: 3\n") {
				t.Errorf("stdout %q, want the report with Done: 3", stdout.String())
			}
		})
	}
}

func TestInterruptBeforeStart(t *testing.T) {
	s := knownSite(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var stdout, stderr bytes.Buffer
	code := run(ctx, []string{s.base}, &stdout, &stderr, terminals{})
	if code != 130 || !strings.Contains(stderr.String(), "interrupted") {
		t.Errorf("run with a cancelled context: exit %d, stderr %q; want 130 and interrupted", code, stderr.String())
	}
	if n := s.Total(); n != 0 {
		t.Errorf("the site got %d requests, want 0", n)
	}
}

// linkedPaths returns the paths a crawl from / reaches, sorted.
func (s *demoSite) linkedPaths() []string {
	var out []string
	for p, r := range s.routes {
		if r.linked {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// -cpuprofile writes a CPU profile of the crawl that go tool pprof reads:
// a gzip-compressed profile.proto naming the crawler's functions.
func TestCPUProfile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cpu.pprof")
	r := runCrawl(t, "-demo", "-demo_latency", "0", "-q", "-cpuprofile", path)
	if r.code != 0 {
		t.Fatalf("crawl -demo -cpuprofile: exit %d, stderr %q", r.code, r.stderr)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("the profile is not gzip-compressed, as pprof writes it: %v", err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("reading the profile: %v", err)
	}
	// The string table holds the sample types (a short crawl may leave
	// no sample, and so no function name).
	for _, want := range []string{"samples", "cpu", "nanoseconds"} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("the profile (%d bytes) does not name %q", len(b), want)
		}
	}
}
