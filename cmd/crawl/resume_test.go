package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/asyncrawl/crawl/warc/warctest"
)

// Ctrl-C, then the same command again: with -state the second run goes on
// with the archive in the next numbered file, leaving the first as it
// was, and the index covers every file; every page of the crawl has its
// response in one of them. Without -state an existing archive is refused
// with a new name to use.
func TestWARCResume(t *testing.T) {
	s, dir, file, index, args := warcResumeSite(t, 2*time.Millisecond)
	if r := stopAt(t, s, 40, syscall.SIGINT, args...); r.code != 130 {
		t.Fatalf("after Ctrl-C: exit %d, want 130; stderr %q", r.code, r.stderr)
	}
	first, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}

	// Without -state, the archive and the index are refused, with a name
	// that is free; nothing is fetched.
	before := s.total.Load()
	for _, tt := range [][]string{
		{"-q", "-warc", file, s.URL + "/p/0"},
		{"-q", "-warc", filepath.Join(dir, "other.warc.gz"), "-warc_index", index, s.URL + "/p/0"},
	} {
		r := runCrawl(t, tt...)
		if r.code != 1 || !strings.Contains(r.stderr, "exists") || !strings.Contains(r.stderr, "-2.") || s.total.Load() != before {
			t.Errorf("crawl %q: exit %d, stderr %q, %d requests; want 1, a message that it exists suggesting a new name, none", tt, r.code, r.stderr, s.total.Load()-before)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "other.warc.gz")); err == nil {
		t.Errorf("a refused crawl left other.warc.gz")
	}

	// With -state, a crawl of another root is refused by the state, and
	// leaves the archive as it was: its last file, which ends in a
	// record a kill cut short (a resumed crawl cuts such a tail back),
	// the index, and no new file. Before, the archive was opened, and
	// its tail cut, before the state refused the crawl.
	cut := append(slices.Clone(first), first[:100]...)
	if err := os.WriteFile(file, cut, 0o644); err != nil {
		t.Fatal(err)
	}
	indexBefore, _ := os.ReadFile(index)
	other := append(slices.Clone(args[:len(args)-1]), s.URL+"/p/1")
	if r := runCrawl(t, other...); r.code != 1 || !strings.Contains(r.stderr, "roots") || s.total.Load() != before {
		t.Errorf("crawl %q: exit %d, stderr %q, %d requests; want 1, the roots refused, none", other, r.code, r.stderr, s.total.Load()-before)
	}
	if now, _ := os.ReadFile(file); !bytes.Equal(now, cut) {
		t.Errorf("a crawl the state refused changed the archive's last file: %d bytes, was %d", len(now), len(cut))
	}
	if now, _ := os.ReadFile(index); !bytes.Equal(now, indexBefore) {
		t.Errorf("a crawl the state refused changed the index")
	}
	if got, _ := filepath.Glob(filepath.Join(dir, "site*.warc.gz")); len(got) != 1 {
		t.Errorf("a crawl the state refused left archive files %q, want only %s", got, file)
	}
	if err := os.WriteFile(file, first, 0o644); err != nil {
		t.Fatal(err)
	}

	// The same command again, to the end; then once more, with nothing
	// left to fetch.
	for run := 2; run <= 3; run++ {
		if r := runCrawl(t, args...); r.code != 0 {
			t.Fatalf("run %d: exit %d, want 0; stderr %q", run, r.code, r.stderr)
		}
	}
	if now, err := os.ReadFile(file); err != nil || !bytes.Equal(now, first) {
		t.Errorf("the first run's archive changed (%v)", err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "site*.warc.gz"))
	slices.SortFunc(files, func(a, b string) int { return len(a) - len(b) }) // site.warc.gz first
	slices.Sort(files[1:])
	want := []string{file, filepath.Join(dir, "site-00001.warc.gz"), filepath.Join(dir, "site-00002.warc.gz")}
	if !slices.Equal(files, want) {
		t.Fatalf("archive files %q, want %q", files, want)
	}

	responses := checkIndexed(t, files, index, files[:2])
	for i := range warcPages {
		if u := fmt.Sprintf("%s/p/%d", s.URL, i); !responses[u] {
			t.Errorf("%s: no response record in the archive", u)
		}
	}
}

// TestWARCResumeAfterKill is TestWARCResume with kill -9 for Ctrl-C: the
// killed run wrote no index, and the next run's index covers its file all
// the same (the next run reads it to index it).
func TestWARCResumeAfterKill(t *testing.T) {
	s, dir, file, index, args := warcResumeSite(t, 2*time.Millisecond)
	stopAt(t, s, 60, syscall.SIGKILL, args...)
	if b, err := os.ReadFile(index); err != nil || len(b) != 0 {
		t.Fatalf("the killed run's index: %d bytes (%v), want an empty file", len(b), err)
	}
	if r := runCrawl(t, args...); r.code != 0 {
		t.Fatalf("after kill -9: exit %d, want 0; stderr %q", r.code, r.stderr)
	}
	files := []string{file, filepath.Join(dir, "site-00001.warc.gz")}
	if got, _ := filepath.Glob(filepath.Join(dir, "site*.warc.gz")); len(got) != len(files) {
		t.Fatalf("archive files %q, want %q", got, files)
	}
	responses := checkIndexed(t, files, index, files)
	for i := range warcPages {
		if u := fmt.Sprintf("%s/p/%d", s.URL, i); !responses[u] {
			t.Errorf("%s: no response record in the archive", u)
		}
	}
}

// checkIndexed checks that index has a line for each response and revisit
// record of files, and no other, each naming its record's file, offset,
// length and URL, sorted; and that each of named has a line. It returns
// the target URIs of the responses.
func checkIndexed(t *testing.T, files []string, index string, named []string) map[string]bool {
	t.Helper()
	// Every record in its file, every response and revisit indexed.
	at := make(map[string]*warctest.Record) // "file offset length"
	responses := make(map[string]bool)      // target URIs
	for _, f := range files {
		for _, r := range warctest.Read(t, f) {
			switch r.Get("WARC-Type") {
			case "response":
				responses[r.Get("WARC-Target-URI")] = true
				fallthrough
			case "revisit":
				at[fmt.Sprint(filepath.Base(f), " ", r.Offset, " ", r.Length)] = r
			}
		}
	}
	b, err := os.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if !slices.IsSorted(lines) {
		t.Errorf("%s: lines not sorted", index)
	}
	if len(lines) != len(at) {
		t.Errorf("%s: %d lines, want one per response and revisit of the %d files, %d", index, len(lines), len(files), len(at))
	}
	indexed := make(map[string]int) // lines by file
	for _, line := range lines {
		f := strings.SplitN(line, " ", 3)
		var e struct{ URL, Offset, Length, Filename string }
		if len(f) != 3 || json.Unmarshal([]byte(f[2]), &e) != nil {
			t.Fatalf("%s: line %q", index, line)
		}
		if r, ok := at[e.Filename+" "+e.Offset+" "+e.Length]; !ok || r.Get("WARC-Target-URI") != e.URL {
			t.Errorf("%s: line %q names no record for that URL", index, line)
		}
		indexed[e.Filename]++
	}
	for _, f := range named {
		if indexed[filepath.Base(f)] == 0 {
			t.Errorf("no index line names %s", filepath.Base(f))
		}
	}
	return responses
}

// stopAt runs the command with args, sends it sig once the site s has
// answered n page requests, and returns what it left.
func stopAt(t *testing.T, s *graphSite, n int64, sig os.Signal, args ...string) ran {
	t.Helper()
	cmd := crawlCmd(t, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s.waitFor(t, n)
	cmd.Process.Signal(sig)
	return wait(t, cmd, &stdout, &stderr, cmd.Wait())
}

// warcPages is the number of pages of warcResumeSite.
const warcPages = 200

// warcResumeSite starts a site of warcPages pages, each answered after
// latency, and returns it, a directory,
// the archive's and the index's paths there, and the arguments of a crawl
// of the site kept in a state file there, archived with its index.
func warcResumeSite(t *testing.T, latency time.Duration) (s *graphSite, dir, file, index string, args []string) {
	s = newGraphSite(t, warcPages, latency)
	dir = t.TempDir()
	file, index, state := filepath.Join(dir, "site.warc.gz"), filepath.Join(dir, "site.cdxj"), filepath.Join(dir, "crawl.state")
	args = []string{"-q", "-workers", "4", "-state", state, "-warc", file, "-warc_index", index, s.URL + "/p/0"}
	return s, dir, file, index, args
}

// finishedRE matches the Finished line of a resumed crawl's report.
var finishedRE = regexp.MustCompile(`^Finished (\d+) urls \((\d+) in this run\) in (\d+\.\d{3}) secs \(max_tasks=(\d+)\) \((\d+\.\d{3}) urls/sec/task in this run\)$`)

// A resumed crawl's report counts the whole crawl, and says how many URLs
// this run finished: its rate is of those, over this run's time, not the
// whole crawl's count over it.
func TestResumedRate(t *testing.T) {
	const pages = 300
	s := newGraphSite(t, pages, 2*time.Millisecond)
	state := filepath.Join(t.TempDir(), "crawl.state")
	args := []string{"-q", "-workers", "4", "-state", state, s.URL + "/p/0"}
	r := stopAt(t, s, 100, syscall.SIGINT, args...)
	if r.code != 130 {
		t.Fatalf("after Ctrl-C: exit %d, want 130; stderr %q", r.code, r.stderr)
	}
	_, _, _, _, doneS := splitReport(t, r.stdout)
	first, _ := strconv.Atoi(doneS)
	r = runCrawl(t, args...)
	if r.code != 0 {
		t.Fatalf("run 2: exit %d; stderr %q", r.code, r.stderr)
	}
	_, finished, _, _, doneS := splitReport(t, r.stdout)
	m := finishedRE.FindStringSubmatch(finished)
	if m == nil {
		t.Fatalf("run 2: Finished line %q, want one that says how many URLs this run finished", finished)
	}
	done, _ := strconv.Atoi(m[1])
	own, _ := strconv.Atoi(m[2])
	secs, _ := strconv.ParseFloat(m[3], 64)
	workers, _ := strconv.Atoi(m[4])
	rate, _ := strconv.ParseFloat(m[5], 64)
	if done != 2*pages || doneS != m[1] || own != done-first || first == 0 {
		t.Errorf("run 2: %q after %d URLs done in run 1; want %d urls, %d in this run", finished, first, 2*pages, 2*pages-first)
	}
	// The rate as printed, from the figures as printed.
	if want := float64(own) / secs / float64(workers); secs > 0 && math.Abs(rate-want) > 0.001+want*0.01 {
		t.Errorf("run 2: %q: rate %.3f, want %d/%.3f/%d = %.3f", finished, rate, own, secs, workers, want)
	}
}

// -state in a directory that does not exist is an error that names the
// state file and the directory, nothing else.
func TestStateMissingDir(t *testing.T) {
	s := newGraphSite(t, 3, 0)
	dir := filepath.Join(t.TempDir(), "no-such-dir")
	state := filepath.Join(dir, "crawl.state")
	r := runCrawl(t, "-q", "-state", state, s.URL+"/p/0")
	want := "crawl: -state " + state + ": the directory " + dir + " does not exist\n"
	if r.code != 1 || r.stderr != want || s.total.Load() != 0 {
		t.Errorf("exit %d, stderr %q, %d requests; want 1, %q, none", r.code, r.stderr, s.total.Load(), want)
	}
}

// A crawl that does not begin leaves no archive file in the way of the
// command run again: a bad -exclude, or a -state of another crawl.
func TestWARCNotBegun(t *testing.T) {
	s := newGraphSite(t, 3, 0)
	dir := t.TempDir()
	file, index, state := filepath.Join(dir, "site.warc.gz"), filepath.Join(dir, "site.cdxj"), filepath.Join(dir, "crawl.state")
	r := runCrawl(t, "-q", "-exclude", "(", "-warc", file, "-warc_index", index, s.URL+"/p/0")
	if left, _ := os.ReadDir(dir); r.code != 1 || len(left) != 0 {
		t.Errorf("-exclude '(': exit %d, %d files left (%v); want 1, none", r.code, len(left), left)
	}
	args := []string{"-q", "-state", state, "-warc", file, "-warc_index", index}
	if r := runCrawl(t, append(args, s.URL+"/p/0")...); r.code != 0 {
		t.Fatalf("crawl: exit %d; stderr %q", r.code, r.stderr)
	}
	before, _ := os.ReadFile(index)
	r = runCrawl(t, append(args, s.URL+"/p/1")...) // another crawl's state
	if r.code != 1 {
		t.Errorf("another root on the state: exit %d, want 1; stderr %q", r.code, r.stderr)
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "site*.warc.gz")); len(files) != 1 {
		t.Errorf("after a refused resume, archive files %q, want only %s", files, file)
	}
	if after, _ := os.ReadFile(index); !bytes.Equal(after, before) {
		t.Errorf("a refused resume changed the index")
	}
	// The state of another crawl, with an archive and an index of new
	// names: neither is left, or the index would be in the way of the
	// command run again ("exists: give a new name").
	file2, index2 := filepath.Join(dir, "other.warc.gz"), filepath.Join(dir, "other.cdxj")
	r = runCrawl(t, "-q", "-state", state, "-warc", file2, "-warc_index", index2, s.URL+"/p/1")
	if r.code != 1 {
		t.Errorf("another root on the state, new archive: exit %d, want 1; stderr %q", r.code, r.stderr)
	}
	for _, f := range []string{file2, index2} {
		if _, err := os.Stat(f); err == nil {
			t.Errorf("after a refused resume, %s is left, want it removed", f)
		}
	}
}

// A crawl in JSON lines resumed with -state: each run's output holds the
// lines of the whole crawl, the URLs earlier runs finished first, so the
// last run's file has every URL once, as its summary counts; and a crawl
// whose root failed fails again when run once more.
func TestJSONLinesResume(t *testing.T) {
	const pages = 200
	s := newGraphSite(t, pages, 2*time.Millisecond)
	dir := t.TempDir()
	out, state := filepath.Join(dir, "out.jsonl"), filepath.Join(dir, "crawl.state")
	args := []string{"-q", "-workers", "4", "-format", "jsonl", "-o", out, "-state", state, s.URL + "/p/0"}
	if r := stopAt(t, s, 40, syscall.SIGINT, args...); r.code != 130 {
		t.Fatalf("after Ctrl-C: exit %d, want 130; stderr %q", r.code, r.stderr)
	}
	for run := 2; run <= 3; run++ {
		if r := runCrawl(t, args...); r.code != 0 {
			t.Fatalf("run %d: exit %d, want 0; stderr %q", run, r.code, r.stderr)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		urls := map[string]int{}
		var done int
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			var o struct {
				Type string
				URL  string
				Done int
			}
			if err := json.Unmarshal([]byte(line), &o); err != nil {
				t.Fatalf("run %d: line %q: %v", run, line, err)
			}
			if o.Type == "summary" {
				done = o.Done
			} else {
				urls[o.URL]++
			}
		}
		for u, n := range urls {
			if n != 1 {
				t.Errorf("run %d: %s has %d lines, want 1", run, u, n)
			}
		}
		if len(urls) != done || done < pages {
			t.Errorf("run %d: %d URLs in the lines, summary done %d; want the same, at least %d", run, len(urls), done, pages)
		}
	}

	// A crawl whose one root got no response: 1 each time it is run.
	dead := []string{"-q", "-format", "jsonl", "-max_tries", "1", "-o", filepath.Join(dir, "dead.jsonl"), "-state", filepath.Join(dir, "dead.state"), "http://" + deadAddr(t) + "/"}
	for run := 1; run <= 2; run++ {
		if r := runCrawl(t, dead...); r.code != 1 || !strings.Contains(r.stderr, "no root got a response") {
			t.Errorf("run %d of a crawl whose root failed: exit %d, stderr %q; want 1, no root got a response", run, r.code, r.stderr)
		}
	}
}

// The same command run while the crawl runs in another process (its -state
// held) is refused before it touches the archive: the running crawl's
// files, and the index it will replace, are left to it, and its index in
// the end covers every file. (Before, the refused run had removed the
// running one's new index, whose end then failed.)
func TestWARCStateHeldByAnother(t *testing.T) {
	s, dir, file, index, args := warcResumeSite(t, 100*time.Millisecond)
	if r := stopAt(t, s, 20, syscall.SIGINT, args...); r.code != 130 {
		t.Fatalf("after Ctrl-C: exit %d, want 130; stderr %q", r.code, r.stderr)
	}

	// Resumed: it replaces the index at its end, with a new file now.
	running := crawlCmd(t, args...)
	var stdout, stderr bytes.Buffer
	running.Stdout, running.Stderr = &stdout, &stderr
	if err := running.Start(); err != nil {
		t.Fatal(err)
	}
	s.waitFor(t, 40)
	tmp, _ := filepath.Glob(index + ".*.tmp")
	if len(tmp) != 1 {
		t.Fatalf("the resumed run's new index: %q, want one", tmp)
	}
	before, _ := filepath.Glob(filepath.Join(dir, "*"))
	if r := runCrawl(t, args...); r.code != 1 || !strings.Contains(r.stderr, "-state") {
		t.Errorf("the same command while the crawl runs: exit %d, stderr %q; want 1, a message naming -state", r.code, r.stderr)
	}
	if after, _ := filepath.Glob(filepath.Join(dir, "*")); !slices.Equal(after, before) {
		t.Errorf("the refused run changed the directory: %q, then %q", before, after)
	}
	if r := wait(t, running, &stdout, &stderr, running.Wait()); r.code != 0 {
		t.Fatalf("the resumed run: exit %d, want 0; stderr %q", r.code, r.stderr)
	}
	files := []string{file, filepath.Join(dir, "site-00001.warc.gz")}
	responses := checkIndexed(t, files, index, files)
	for i := range warcPages {
		if u := fmt.Sprintf("%s/p/%d", s.URL, i); !responses[u] {
			t.Errorf("%s: no response record in the archive", u)
		}
	}
}

// A -warc that cannot be made (its directory missing) fails the command
// before any fetch, and the -state file the run made, which it opens
// first, is removed: the command given a good -warc then is a new crawl,
// not a resumed one.
func TestWARCUnwritableLeavesNoState(t *testing.T) {
	s := newGraphSite(t, 5, 0)
	dir := t.TempDir()
	state := filepath.Join(dir, "crawl.state")
	r := runCrawl(t, "-q", "-state", state, "-warc", filepath.Join(dir, "missing", "site.warc.gz"), s.URL+"/p/0")
	if r.code != 1 || !strings.Contains(r.stderr, "-warc") {
		t.Errorf("exit %d, stderr %q; want 1 and a line naming -warc", r.code, r.stderr)
	}
	if _, err := os.Stat(state); !os.IsNotExist(err) {
		t.Errorf("the state file the run made: %v, want it removed", err)
	}
	if n := s.total.Load(); n != 0 {
		t.Errorf("%d requests, want none", n)
	}
}
