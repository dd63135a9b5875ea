package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/asyncrawl/crawl/warc/warctest"
)

// checkIndex checks that each line of a CDXJ index the command wrote names
// the gzip member of a response or revisit record of archive, and that
// there is a line for each.
func checkIndex(t *testing.T, index, archive string, recs []*warctest.Record) {
	t.Helper()
	b, err := os.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if !slices.IsSorted(lines) {
		t.Errorf("%s: lines not sorted", index)
	}
	at := make(map[string]*warctest.Record)
	want := 0
	for _, r := range recs {
		if typ := r.Get("WARC-Type"); typ == "response" || typ == "revisit" {
			at[fmt.Sprint(r.Offset, " ", r.Length)] = r
			want++
		}
	}
	if len(lines) != want {
		t.Errorf("%s: %d lines, want one per response and revisit, %d", index, len(lines), want)
	}
	for _, line := range lines {
		f := strings.SplitN(line, " ", 3)
		var e struct{ URL, Offset, Length, Filename string }
		if len(f) != 3 || json.Unmarshal([]byte(f[2]), &e) != nil {
			t.Fatalf("%s: line %q", index, line)
		}
		r, ok := at[e.Offset+" "+e.Length]
		if !ok || r.Get("WARC-Target-URI") != e.URL || e.Filename != filepath.Base(archive) {
			t.Errorf("%s: line %q names no record of %s for that URL", index, line, archive)
		}
	}
}

// Ctrl-C in the middle of a crawl that archives leaves an archive whose
// every record is whole, the responses being read then recorded as far as
// they came and marked truncated, and the index of it. Each of the four
// workers is in the middle of a page's body when the signal comes.
func TestWARCInterrupt(t *testing.T) {
	const pages = 20
	whole := bytes.Repeat([]byte("<p>a page streamed slowly</p>\n"), 2000)
	s := startSite(t)
	var links []string
	for i := range pages {
		links = append(links, fmt.Sprintf("/p/%d", i))
	}
	s.Page("/", links...)
	hits := make(chan string, pages)
	s.Handle("/p/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Half the body, then nothing until the request is cancelled.
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Content-Length", strconv.Itoa(len(whole)))
		w.Write(whole[:len(whole)/2])
		w.(http.Flusher).Flush()
		hits <- r.URL.Path
		<-r.Context().Done()
	}))
	dir := t.TempDir()
	file, index := filepath.Join(dir, "site.warc.gz"), filepath.Join(dir, "site.cdxj")
	cmd := crawlCmd(t, "-q", "-workers", "4", "-warc", file, "-warc_index", index, s.base+"/")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for range 4 {
		select {
		case <-hits:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			t.Fatal("no page requested within 20s")
		}
	}
	// The heads and half bodies sent are read (and so recorded as far
	// as they came) once no byte waits on the command's connections.
	port := s.base[strings.LastIndex(s.base, ":")+1:]
	_, _, known := unread(port)
	for deadline := time.Now().Add(20 * time.Second); known; time.Sleep(5 * time.Millisecond) {
		if n, waiting, _ := unread(port); n >= 4 && !waiting {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("the command did not read what the site sent within 20s")
		}
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	r := wait(t, cmd, &stdout, &stderr, cmd.Wait())
	if r.code != 130 {
		t.Fatalf("exit %d after SIGINT, want 130; stderr %q", r.code, r.stderr)
	}
	recs := warctest.ReadFiles(t, file)
	checkIndex(t, index, file, recs)
	cut := 0
	for _, rec := range recs {
		if rec.Get("WARC-Type") != "response" || !strings.Contains(rec.Get("WARC-Target-URI"), "/p/") {
			continue
		}
		_, body := rec.HTTPParts()
		if rec.Get("WARC-Truncated") != "unspecified" || len(body) == len(whole) || !bytes.HasPrefix(whole, body) {
			t.Errorf("%s: WARC-Truncated %q, a payload of %d bytes; want it marked truncated, unspecified (a crawl stopped), a prefix of the %d sent",
				rec.Get("WARC-Target-URI"), rec.Get("WARC-Truncated"), len(body), len(whole))
		}
		cut++
	}
	if cut != 4 && known {
		t.Errorf("%d responses of pages cut by Ctrl-C archived, want the 4 under way", cut)
	}
	resp := 0
	for _, rec := range recs {
		if rec.Get("WARC-Type") == "response" && rec.Get("WARC-Target-URI") == s.base+"/" {
			resp++
		}
	}
	if resp != 1 {
		t.Errorf("%d responses of the root, want 1", resp)
	}
}

// unread reports, from /proc/net/tcp, how many established IPv4
// connections go to the local port (given in decimal) and whether bytes
// wait unread on any of them; ok is false where /proc/net/tcp cannot be
// read (not Linux).
func unread(port string) (n int, waiting, ok bool) {
	b, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		return 0, false, false
	}
	p, _ := strconv.Atoi(port)
	want := fmt.Sprintf(":%04X", p)
	for _, line := range strings.Split(string(b), "\n")[1:] {
		f := strings.Fields(line)
		// sl local_address rem_address st tx_queue:rx_queue ...
		if len(f) < 5 || !strings.HasSuffix(f[2], want) || f[3] != "01" {
			continue
		}
		n++
		if _, rx, _ := strings.Cut(f[4], ":"); strings.Trim(rx, "0") != "" {
			waiting = true
		}
	}
	return n, waiting, true
}

// A disk that fills (writes past a size fail with EFBIG under ulimit -f,
// as they fail with ENOSPC on a full disk) stops the crawl with an error
// naming the archive, which holds whole records only; the report is still
// written (here JSON lines on stdout, a pipe, which the limit leaves be),
// its summary line last, interrupted.
func TestWARCDiskFull(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh to set ulimit -f with")
	}
	const pages = 400
	s := startSite(t)
	var links []string
	for i := range pages {
		links = append(links, fmt.Sprintf("/p/%d", i))
	}
	s.Page("/", links...)
	body := strings.Repeat("<p>a page of the site</p>\n", 200)
	for i := range pages {
		s.Body(fmt.Sprintf("/p/%d", i), "text/html", fmt.Sprintf("<h1>%d</h1>%s", i, body)).Latency(5 * time.Millisecond)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "site.warc.gz")
	// 64 blocks (of 512 bytes in a POSIX sh such as dash, of 1024 in
	// bash): 32 or 64 KiB, far less than the crawl's archive. SIGXFSZ is
	// ignored, so that the write fails rather than kill the command.
	cmd := crawlCmd(t)
	cmd.Path = sh
	cmd.Args = []string{sh, "-c", `trap "" XFSZ; ulimit -f 64 || exit 99; exec "$0" "$@"`,
		crawlBin, "-q", "-format", "jsonl", "-workers", "2", "-warc", file, s.base + "/"}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	r := wait(t, cmd, &stdout, &stderr, cmd.Run())
	if r.code == 99 {
		t.Skip("ulimit -f refused")
	}
	if r.code != 1 || !strings.Contains(r.stderr, "-warc") || !strings.Contains(r.stderr, file) || !strings.Contains(r.stderr, "file too large") {
		t.Errorf("exit %d, stderr %q; want 1 and an error naming -warc, the file and the failed write", r.code, r.stderr)
	}
	if got := s.Total(); got >= pages {
		t.Errorf("the site got %d requests, want the crawl stopped well before its %d pages", got, pages)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	var sum struct {
		Type        string `json:"type"`
		Interrupted bool   `json:"interrupted"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &sum); err != nil || sum.Type != "summary" || !sum.Interrupted {
		t.Errorf("last line of the report %q (%v); want the summary, interrupted", lines[len(lines)-1], err)
	}
	st, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() > 64*1024 {
		t.Errorf("the archive has %d bytes, more than the %d the limit allows", st.Size(), 64*1024)
	}
	recs := warctest.ReadFiles(t, file)
	if n := len(recs); n < 3 {
		t.Errorf("%d records kept, want the warcinfo and the exchanges written before the disk filled", n)
	}
}

// The archive holds what the crawl fetched however the crawl fared with
// it: a sitemap (-sitemaps), a page whose gzip body does not decompress,
// and one over the body size limit (-max_body), as far as it was read (the
// crawl stops at its Content-Length).
func TestWARCWhateverTheCrawlMadeOfIt(t *testing.T) {
	s := startSite(t)
	s.Robots("User-agent: *\nAllow: /\nSitemap: " + s.base + "/sitemap.xml\n")
	s.Body("/sitemap.xml", "application/xml", `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>`+s.base+`/listed</loc></url></urlset>`)
	s.Body("/listed", "text/html", "<p>listed in the sitemap</p>")
	s.Page("/", "/bad", "/big")
	const notGzip = "this is not gzip at all, whatever the header says"
	s.Body("/bad", "text/html", notGzip).Header("Content-Encoding", "gzip")
	big := strings.Repeat("<p>a large page</p>\n", 10000) // 200 kB
	s.Body("/big", "text/html", big)
	file := filepath.Join(t.TempDir(), "site.warc.gz")
	r := runCrawl(t, "-q", "-sitemaps", "-max_body", "64k", "-warc", file, s.base+"/")
	if r.code != 0 {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	resp := make(map[string]*warctest.Record)
	for _, rec := range warctest.ReadFiles(t, file) {
		if rec.Get("WARC-Type") == "response" {
			resp[strings.TrimPrefix(rec.Get("WARC-Target-URI"), s.base)] = rec
		}
	}
	for _, p := range []string{"/robots.txt", "/sitemap.xml", "/listed", "/", "/bad", "/big"} {
		if _, ok := resp[p]; !ok {
			t.Errorf("%s: no response record", p)
		}
	}
	if rec, ok := resp["/bad"]; ok {
		if _, body := rec.HTTPParts(); string(body) != notGzip || rec.Get("WARC-Truncated") != "" {
			t.Errorf("/bad: payload %q, WARC-Truncated %q; want the bytes sent, whole", body, rec.Get("WARC-Truncated"))
		}
	}
	if rec, ok := resp["/big"]; ok {
		_, body := rec.HTTPParts()
		if rec.Get("WARC-Truncated") != "length" || len(body) == 0 || len(body) >= len(big) || !strings.HasPrefix(big, string(body)) {
			t.Errorf("/big: WARC-Truncated %q, payload of %d bytes; want length, a prefix of the %d sent", rec.Get("WARC-Truncated"), len(body), len(big))
		}
	}
}

// A -state file whose write fails (ulimit -f, as a full disk) stops the
// crawl with an error naming it; the summary says the crawl was
// interrupted and that what is left is not known (todo -1), not 0.
func TestStateDiskFull(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh to set ulimit -f with")
	}
	const pages = 3000
	s := startSite(t)
	var links []string
	for i := range pages {
		links = append(links, fmt.Sprintf("/p/%d?%s", i, strings.Repeat("x", 200)))
	}
	s.Page("/", links...)
	state := filepath.Join(t.TempDir(), "crawl.state")
	cmd := crawlCmd(t)
	cmd.Path = sh
	cmd.Args = []string{sh, "-c", `trap "" XFSZ; ulimit -f 600 || exit 99; exec "$0" "$@"`,
		crawlBin, "-q", "-format", "jsonl", "-workers", "2", "-state", state, s.base + "/"}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	r := wait(t, cmd, &stdout, &stderr, cmd.Run())
	if r.code == 99 {
		t.Skip("ulimit -f refused")
	}
	if r.code != 1 || !strings.Contains(r.stderr, "-state") {
		t.Fatalf("exit %d, stderr %q; want 1 and an error naming -state", r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	var sum struct {
		Type        string `json:"type"`
		Interrupted bool   `json:"interrupted"`
		Todo        int    `json:"todo"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &sum); err != nil || sum.Type != "summary" || !sum.Interrupted || sum.Todo != -1 {
		t.Errorf("last line of the report %q (%v); want the summary, interrupted, todo -1", lines[len(lines)-1], err)
	}
}

// mountFull mounts a tmpfs of size bytes at a new directory and returns
// it, unmounted at the end of the test; it skips the test where mount is
// refused (not root, or no CAP_SYS_ADMIN).
func mountFull(t *testing.T, size int) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d", size), "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("mount tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", dir).Run() })
	return dir
}

// An index that could not be written (its disk full) is said whatever
// stopped the crawl, after the error that stopped it: before, it was
// said before the archive's own write error, and not at all when the
// JSON lines (-o) had stopped the crawl (the archive was then closed
// with its error unread), nor when the index's was the archive's only
// error and -state had stopped the crawl.
func TestWARCIndexErrorSaid(t *testing.T) {
	s := newGraphSite(t, 300, 0)
	for _, tc := range []struct {
		name    string
		args    func(full string) []string
		stopped string // what stopped the crawl, said first
	}{
		{"-o on a full disk", func(full string) []string {
			// The JSON lines fill 32 KiB, a hundred lines or so, after
			// the index's lines have filled 4 KiB.
			out := filepath.Join(mountFull(t, 32<<10), "o.jsonl")
			return []string{"-format", "jsonl", "-o", out, "-warc", filepath.Join(t.TempDir(), "s.warc.gz"), "-warc_index", filepath.Join(full, "s.cdxj")}
		}, "-o "},
		{"the archive on the same full disk", func(full string) []string {
			return []string{"-o", os.DevNull, "-warc", filepath.Join(full, "s.warc.gz"), "-warc_index", filepath.Join(full, "s.cdxj")}
		}, "-warc: warc: write"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			size := 4 << 10
			if tc.stopped != "-o " {
				size = 256 << 10
			}
			full := mountFull(t, size)
			r := runCrawl(t, append(append([]string{"-q", "-workers", "4"}, tc.args(full)...), s.URL+"/p/0")...)
			lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
			if r.code != 1 || len(lines) != 2 || !strings.Contains(lines[0], tc.stopped) ||
				!strings.Contains(lines[1], "-warc: warc: index") || !strings.Contains(lines[1], "no space left on device") {
				t.Errorf("exit %d, stderr %q; want 1, a line naming %s, then one naming the index", r.code, r.stderr, tc.stopped)
			}
			if _, err := os.Stat(filepath.Join(full, "s.cdxj")); !os.IsNotExist(err) {
				t.Errorf("the index not written whole: %v, want it removed", err)
			}
		})
	}
}
