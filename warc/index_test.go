package warc

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/asyncrawl/crawl/warc/warctest"
)

func TestSURT(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"http://example.com/", "com,example)/"},
		{"http://example.com", "com,example)/"},
		{"https://www.Example.COM/Path/Page.html", "com,example)/path/page.html"},
		{"http://www2.example.com/a", "com,example)/a"},
		{"http://wwwexample.com/a", "com,wwwexample)/a"},
		{"http://sub.www.example.com/a", "com,example,www,sub)/a"},
		{"http://example.com:80/a", "com,example)/a"},
		{"https://example.com:443/a", "com,example)/a"},
		{"http://example.com:8080/a", "com,example:8080)/a"},
		{"https://example.com:80/a", "com,example:80)/a"},
		{"http://127.0.0.1:8080/a", "1,0,0,127:8080)/a"},
		{"http://[::1]:8080/a", "[::1]:8080)/a"},
		{"http://example.com/a?b=2&a=1&c", "com,example)/a?a=1&b=2&c"},
		{"http://example.com/a?", "com,example)/a"},
		{"http://example.com/a%2Fb?Q=%2F", "com,example)/a%2fb?q=%2f"},
		{"http://user:pw@example.com/a", "com,example)/a"},
		{"ftp://example.com/a", "ftp://example.com/a"},
		{"urn:x:y", "urn:x:y"},
		{"http://exa mple.com/", "http://exa mple.com/"},
	} {
		if got := SURT(tc.in); got != tc.want {
			t.Errorf("SURT(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func FuzzSURT(f *testing.F) {
	for _, s := range []string{"http://www.example.com:8080/a?b=1&a=2", "https://[::1]/", "http://a/%zz", "http://x.y/?&&"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, u string) {
		got := SURT(u)
		// A urlkey is the first field of a line: a target URI, which
		// has no white space, must not gain any.
		if !strings.ContainsAny(u, " \t\r\n") && strings.ContainsAny(got, " \t\r\n") {
			t.Errorf("SURT(%q) = %q, with white space", u, got)
		}
		if again := SURT(u); again != got {
			t.Errorf("SURT(%q) = %q, then %q", u, got, again)
		}
	})
}

// cdxjLine is a line of a CDXJ index, parsed.
type cdxjLine struct {
	urlkey, timestamp string
	fields            map[string]string
}

// readIndex reads a CDXJ file, failing on a line that is not
// "urlkey timestamp {json}" or lines not sorted bytewise.
func readIndex(t *testing.T, name string) (lines []string, parsed []cdxjLine) {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > 0 && !bytes.HasSuffix(data, []byte("\n")) {
		t.Errorf("%s does not end with a line end", name)
	}
	for line := range strings.Lines(string(data)) {
		line = strings.TrimSuffix(line, "\n")
		lines = append(lines, line)
		f := strings.SplitN(line, " ", 3)
		if len(f) != 3 || len(f[1]) != 14 {
			t.Fatalf("%s: line %q is not urlkey, 14-digit timestamp, JSON", name, line)
		}
		l := cdxjLine{urlkey: f[0], timestamp: f[1]}
		if err := json.Unmarshal([]byte(f[2]), &l.fields); err != nil {
			t.Fatalf("%s: line %q: JSON: %v", name, line, err)
		}
		parsed = append(parsed, l)
	}
	if !slices.IsSorted(lines) {
		t.Errorf("%s: lines not sorted bytewise:\n%s", name, data)
	}
	return lines, parsed
}

// indexedRecord reads the record an index line points at: length bytes
// at offset of the file, which must hold one record (decompressing alone,
// as one gzip member, in a .warc.gz).
func indexedRecord(t *testing.T, dir string, l cdxjLine) *warctest.Record {
	t.Helper()
	name := filepath.Join(dir, l.fields["filename"])
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatalf("line %s %s: %v", l.urlkey, l.timestamp, err)
	}
	var off, n int
	if _, err := fmt.Sscan(l.fields["offset"]+" "+l.fields["length"], &off, &n); err != nil || off < 0 || n <= 0 || off+n > len(data) {
		t.Fatalf("line %s %s: offset %q, length %q in a file of %d bytes", l.urlkey, l.timestamp, l.fields["offset"], l.fields["length"], len(data))
	}
	b := data[off : off+n]
	if !strings.HasSuffix(name, ".gz") {
		// The length stops short of the record's closing CRLF CRLF.
		if !bytes.HasPrefix(data[off+n:], []byte("\r\n\r\n")) {
			t.Fatalf("line %s %s: %d+%d is not followed by the CRLF CRLF that ends a record", l.urlkey, l.timestamp, off, n)
		}
		b = data[off : off+n+4]
	} else {
		br := bytes.NewReader(b)
		zr, err := gzip.NewReader(br)
		if err != nil {
			t.Fatalf("line %s %s: gzip member at %d: %v", l.urlkey, l.timestamp, off, err)
		}
		zr.Multistream(false)
		if b, err = io.ReadAll(zr); err != nil {
			t.Fatalf("line %s %s: gzip member at %d: %v", l.urlkey, l.timestamp, off, err)
		}
		if br.Len() != 0 {
			t.Fatalf("line %s %s: the gzip member at %d ends %d bytes before the length %d", l.urlkey, l.timestamp, off, br.Len(), n)
		}
	}
	recs := warctest.Parse(t, name, b)
	if len(recs) != 1 {
		t.Fatalf("line %s %s: %d records at %d+%d, want 1", l.urlkey, l.timestamp, len(recs), off, n)
	}
	warctest.Check(t, name, recs[0])
	return recs[0]
}

// routeAll returns an *http.Transport that connects to srv whatever the
// host asked for.
func routeAll(srv *httptest.Server) *http.Transport {
	addr := srv.Listener.Addr().String()
	return &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}}
}

// crawlLike fetches through w what a crawl would: pages of several kinds,
// a redirect, a 404, the same payload under three URLs (revisits), a URL
// with unsorted query arguments on a www. host with a port, and a HEAD.
// It returns the URLs fetched.
func crawlLike(t *testing.T, w *Writer, srv *httptest.Server) []string {
	t.Helper()
	client := &http.Client{
		Transport:     w.Transport(routeAll(srv)),
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	urls := []string{
		srv.URL + "/plain", srv.URL + "/gzip", srv.URL + "/chunked",
		srv.URL + "/redirect", srv.URL + "/missing",
		srv.URL + "/same/a", srv.URL + "/same/b", srv.URL + "/same/a",
		"http://www.Example.com:" + port + "/same/Q?z=1&a=%2F&m",
		srv.URL + "/same/c?q=a|b^c{d}[e]`f%g", // sent as is: a URI percent-encodes them
	}
	for _, u := range urls {
		get(t, client, u)
	}
	resp, err := client.Head(srv.URL + "/plain?x=1")
	if err != nil {
		t.Fatalf("HEAD: %v", err)
	}
	resp.Body.Close()
	return append(urls, srv.URL+"/plain?x=1")
}

// The index has a line per response and revisit record, sorted, and each
// line points at its record: the offset and length hold that record alone,
// whose fields are those of the line.
// With spill, the index's lines are held in memory 256 bytes at a time,
// the rest spilled to $TMPDIR: the index is the same, and $TMPDIR is left
// empty.
func TestIndex(t *testing.T) {
	_, srv := newSite(t)
	for _, tc := range []struct{ plain, spill bool }{{false, false}, {true, false}, {false, true}} {
		t.Run(fmt.Sprintf("NoGzip=%v,spill=%v", tc.plain, tc.spill), func(t *testing.T) {
			plain := tc.plain
			tmp := t.TempDir()
			if tc.spill {
				t.Setenv("TMPDIR", tmp)
				defer func(m int) { indexMemory = m }(indexMemory)
				indexMemory = 256
			}
			dir := t.TempDir()
			index := filepath.Join(dir, "crawl.cdxj")
			w := newWriter(t, Options{Dir: dir, NoGzip: plain, MaxSize: 3 << 10, Index: index})
			crawlLike(t, w, srv)
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if spilled := w.indexRuns > 0; spilled != tc.spill {
				t.Errorf("the lines went to %d files on disk: spilled %v, want %v", w.indexRuns, spilled, tc.spill)
			}
			if left, _ := os.ReadDir(tmp); len(left) != 0 {
				t.Errorf("after Close, $TMPDIR holds %d entries, want none", len(left))
			}
			if n := len(w.Files()); n < 3 {
				t.Fatalf("%d files, want the rotation to make at least 3", n)
			}
			recs := readAll(t, w)
			want := append(warctest.ByType(recs, "response"), warctest.ByType(recs, "revisit")...)
			_, lines := readIndex(t, index)
			if len(lines) != len(want) {
				t.Fatalf("got %d index lines, want one per response and revisit, %d", len(lines), len(want))
			}
			revisits := 0
			at := make(map[string]bool)
			for _, l := range lines {
				r := indexedRecord(t, dir, l)
				where := l.fields["filename"] + "@" + l.fields["offset"]
				if at[where] {
					t.Errorf("two lines point at %s", where)
				}
				at[where] = true
				uri, typ := r.Get("WARC-Target-URI"), r.Get("WARC-Type")
				if got := l.fields["url"]; got != uri {
					t.Errorf("line %s %s: url %q, the record's WARC-Target-URI %q", l.urlkey, l.timestamp, got, uri)
				}
				if got, want := l.urlkey, SURT(uri); got != want && l.fields["method"] == "" {
					t.Errorf("line of %s: urlkey %q, want %q", uri, got, want)
				}
				if got, want := "sha1:"+l.fields["digest"], r.Get("WARC-Payload-Digest"); got != want {
					t.Errorf("line of %s: digest %s, the record's %s", uri, got, want)
				}
				date := strings.NewReplacer("-", "", ":", "", "T", "").Replace(r.Get("WARC-Date"))[:14]
				if l.timestamp != date {
					t.Errorf("line of %s: timestamp %s, want %s from WARC-Date %s", uri, l.timestamp, date, r.Get("WARC-Date"))
				}
				head, _ := r.HTTPParts()
				hdr, _ := parseHead(head)
				if got, want := l.fields["status"], fmt.Sprint(hdr.status); got != want {
					t.Errorf("line of %s: status %q, want %q", uri, got, want)
				}
				wantMime, _, _ := strings.Cut(hdr.mediaType, ";")
				if typ == "revisit" {
					wantMime = "warc/revisit"
					revisits++
				}
				if got := l.fields["mime"]; got != wantMime {
					t.Errorf("line of %s (%s): mime %q, want %q", uri, typ, got, wantMime)
				}
			}
			// /plain and /same/... send the same body: one response, five
			// revisits.
			if want := len(warctest.ByType(recs, "revisit")); revisits != want || want != 5 {
				t.Errorf("%d revisit lines for %d revisit records, want 5", revisits, want)
			}
		})
	}
}

// warcio.js's cdx-index, given the same files, writes the same lines, once
// sorted.
func TestIndexWarcio(t *testing.T) {
	wdir := warcioDir(t)
	_, srv := newSite(t)
	for _, plain := range []bool{false, true} {
		t.Run(fmt.Sprintf("NoGzip=%v", plain), func(t *testing.T) {
			dir := t.TempDir()
			index := filepath.Join(dir, "crawl.cdxj")
			w := newWriter(t, Options{Dir: dir, NoGzip: plain, MaxSize: 3 << 10, Index: index})
			crawlLike(t, w, srv)
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			ours, _ := readIndex(t, index)
			var names []string
			for _, f := range w.Files() {
				names = append(names, filepath.Base(f))
			}
			cli := filepath.Join(wdir, "node_modules", "warcio", "dist", "cli.js")
			cmd := exec.Command("node", append([]string{cli, "cdx-index", "--format", "cdxj"}, names...)...)
			cmd.Dir = dir
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil || stderr.Len() > 0 {
				t.Fatalf("warcio cdx-index: %v\n%s", err, stderr.Bytes())
			}
			theirs := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
			slices.Sort(theirs)
			if !slices.Equal(ours, theirs) {
				t.Errorf("got the index\n%s\nwant warcio's\n%s", strings.Join(ours, "\n"), strings.Join(theirs, "\n"))
			}
		})
	}
}

func TestIndexUnwritable(t *testing.T) {
	dir := t.TempDir()
	_, err := NewWriter(Options{Dir: dir, Index: filepath.Join(dir, "no", "such", "dir", "x.cdxj")})
	if err == nil {
		t.Fatal("NewWriter with an index in a missing directory: got no error, want one")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("NewWriter failed but left %v", entries)
	}

	// An existing file is not overwritten.
	index := filepath.Join(dir, "old.cdxj")
	if err := os.WriteFile(index, []byte("kept\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := NewWriter(Options{Dir: dir, Index: index}); !errors.Is(err, os.ErrExist) {
		t.Errorf("NewWriter with an existing index: got %v, want an error for an existing file", err)
	}
	if b, _ := os.ReadFile(index); string(b) != "kept\n" {
		t.Errorf("the existing index now holds %q, want %q", b, "kept\n")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("NewWriter failed but left %v", entries)
	}

	// A WARC file that cannot be created removes the index just made.
	if err := os.WriteFile(filepath.Join(dir, "crawl-00000.warc.gz"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := NewWriter(Options{Dir: dir, Index: filepath.Join(dir, "new.cdxj")}); err == nil {
		t.Error("NewWriter over an existing WARC file: got no error, want one")
	}
	if _, err := os.Stat(filepath.Join(dir, "new.cdxj")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the index of a failed NewWriter: %v, want it removed", err)
	}
}

// A failure to write the index is Close's error.
func TestIndexWriteError(t *testing.T) {
	_, srv := newSite(t)
	dir := t.TempDir()
	index := filepath.Join(dir, "crawl.cdxj")
	w := newWriter(t, Options{Dir: dir, Index: index, Create: func(name string) (io.WriteCloser, error) {
		if name == index {
			return &fullFile{room: 10}, nil
		}
		return os.Create(name)
	}})
	client := &http.Client{Transport: w.Transport(nil)}
	get(t, client, srv.URL+"/plain")
	if err := w.Close(); !errors.Is(err, errFull) {
		t.Errorf("Close with a full disk under the index: got %v, want %v", err, errFull)
	}
}

// SURT gives the urlkey warcio.js's getSurt gives, on target URIs as an
// HTTP client writes them.
func TestSURTWarcio(t *testing.T) {
	dir := warcioDir(t)
	urls := []string{
		"http://example.com", "http://example.com/", "https://www.example.com/a/b.html",
		"http://WWW.example.com/A", "http://www3.Example.com:8080/x?b=2&a=1&a=0",
		"https://example.com:443/", "http://example.com:80/p?", "https://example.com:80/p",
		"http://127.0.0.1:8080/a?q=%2F%20x", "http://[::1]:8080/a", "http://[2001:db8::1]/",
		"http://example.com/a%2Fb;p=1?x=%7E&y", "http://example.com/~user/?&&", "http://sub.www.example.co.uk/",
		"http://example.com/%E2%82%AC?q=%E2%82%AC", "ftp://example.com/a", "http://user:pw@example.com/",
		"http://example.com/a?b=1&B=2&a=3",
	}
	script := `const { getSurt } = await import(process.argv[1]);
for (const u of JSON.parse(process.argv[2])) console.log(getSurt(u));`
	js, err := json.Marshal(urls)
	if err != nil {
		t.Fatal(err)
	}
	mod := "file://" + filepath.Join(dir, "node_modules", "warcio", "dist", "index.js")
	cmd := exec.Command("node", "--input-type=module", "-e", script, mod, string(js))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil || stderr.Len() > 0 {
		t.Fatalf("node getSurt: %v\n%s", err, stderr.Bytes())
	}
	want := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(want) != len(urls) {
		t.Fatalf("node getSurt printed %d lines for %d URLs:\n%s", len(want), len(urls), out)
	}
	for i, u := range urls {
		if got := SURT(u); got != want[i] {
			t.Errorf("SURT(%q) = %q, want warcio's %q", u, got, want[i])
		}
	}
}

// FuzzJSONString checks the index's JSON strings against encoding/json's,
// without HTML escaping, as JSON.stringify writes them.
func FuzzJSONString(f *testing.F) {
	for _, s := range []string{"http://example.com/a?b=1&c=<d>", `q"\`, "tab\tnl\n", "é€\u2028", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		if got := jsonString(s); got != strings.TrimSuffix(want.String(), "\n") {
			t.Errorf("jsonString(%q) = %s, want %s", s, got, want.String())
		}
	})
}

// A Writer with Resume continues the archive and the index an earlier one
// left: its files come after the earlier ones, none is overwritten, and
// the index has a line for each response and revisit of every file,
// sorted, each pointing at its record. Without Resume the existing file
// is refused.
func TestResume(t *testing.T) {
	_, srv := newSite(t)
	dir := t.TempDir()
	opts := Options{File: filepath.Join(dir, "site.warc.gz"), Index: filepath.Join(dir, "site.cdxj"), MaxSize: 3 << 10}
	w := newWriter(t, opts)
	crawlLike(t, w, srv)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	first := w.Files()
	if len(first) < 2 {
		t.Fatalf("%d files, want the rotation to make at least 2", len(first))
	}
	before := make(map[string][]byte)
	for _, f := range first {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		before[f] = data
	}
	if _, err := NewWriter(opts); !errors.Is(err, fs.ErrExist) {
		t.Errorf("NewWriter of an existing file without Resume: got %v, want fs.ErrExist", err)
	}
	opts.Resume = true
	for run := 2; run <= 3; run++ {
		w := newWriter(t, opts)
		crawlLike(t, w, srv)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		files := w.Files()
		if len(files) <= len(first) || !slices.Equal(files[:len(first)], first) {
			t.Fatalf("run %d: files %q, want %q then new ones", run, files, first)
		}
		for f, data := range before {
			if now, err := os.ReadFile(f); err != nil || !bytes.Equal(now, data) {
				t.Errorf("run %d: %s changed (%v)", run, f, err)
			}
		}
		recs := readAll(t, w)
		want := len(warctest.ByType(recs, "response")) + len(warctest.ByType(recs, "revisit"))
		_, lines := readIndex(t, opts.Index)
		if len(lines) != want {
			t.Errorf("run %d: %d index lines, want one per response and revisit of the %d files, %d", run, len(lines), len(files), want)
		}
		named := make(map[string]bool)
		for _, l := range lines {
			indexedRecord(t, dir, l)
			named[l.fields["filename"]] = true
		}
		for _, f := range files {
			if !named[filepath.Base(f)] {
				t.Errorf("run %d: no index line points into %s", run, f)
			}
		}
		if left, _ := filepath.Glob(filepath.Join(dir, "*.tmp")); len(left) != 0 {
			t.Errorf("run %d: %q left in the directory", run, left)
		}
		first = files
		for _, f := range files {
			data, _ := os.ReadFile(f)
			before[f] = data
		}
	}
}

// The temporary index a resumed Writer killed before its Close left (kill
// -9) is removed by the next resumed Writer; other files beside the index
// are left alone.
func TestResumeRemovesStaleIndex(t *testing.T) {
	_, srv := newSite(t)
	dir := t.TempDir()
	opts := Options{File: filepath.Join(dir, "site.warc.gz"), Index: filepath.Join(dir, "site.cdxj"), Resume: true}
	w := newWriter(t, opts)
	crawlLike(t, w, srv)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	stale := opts.Index + ".ABCDEFGHIJKLMNOPQRSTUVWXYZ.tmp" // as a killed run's
	other := opts.Index + ".mine.tmp"
	for _, f := range []string{stale, other} {
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w = newWriter(t, opts)
	crawlLike(t, w, srv)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); err == nil {
		t.Errorf("%s left", stale)
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("%s removed: %v", other, err)
	}
}

// A disk full under the archive and the index: Close reports both (the
// index's was dropped behind the archive's, which came first), and the
// index, cut short, is removed rather than left as if whole.
func TestIndexWriteErrorAfterArchiveError(t *testing.T) {
	_, srv := newSite(t)
	dir := t.TempDir()
	index := filepath.Join(dir, "crawl.cdxj")
	w := newWriter(t, Options{Dir: dir, Index: index, Create: func(name string) (io.WriteCloser, error) {
		f, err := os.Create(name)
		if err != nil {
			return nil, err
		}
		room := 10
		if name != index {
			room = 2000 // the warcinfo, then the disk is full
		}
		return &fullOnDisk{f: f, fullFile: fullFile{room: room}}, nil
	}})
	client := &http.Client{Transport: w.Transport(nil)}
	for range 3 {
		client.Get(srv.URL + "/plain")
	}
	err := w.Close()
	if !errors.Is(err, errFull) || !strings.Contains(err.Error(), "warc: index "+index) || !strings.Contains(err.Error(), "warc: write") {
		t.Errorf("Close, the disk full under both: %v; want the archive's write error and the index's", err)
	}
	if _, err := os.Stat(index); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the index cut short: %v, want it removed", err)
	}
}

// fullOnDisk is a file on disk that fails like fullFile.
type fullOnDisk struct {
	f *os.File
	fullFile
}

func (d *fullOnDisk) Write(p []byte) (int, error) {
	n, err := d.fullFile.Write(p)
	d.f.Write(p[:n])
	return n, err
}

func (d *fullOnDisk) Close() error { return d.f.Close() }
