package warc

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/asyncrawl/crawl/warc/warctest"
)

// A run killed before its Close (kill -9) leaves the index without its
// records: as it was before the run (a resumed one), or empty (the
// first run, whose NewWriter created it), or gone. The next resumed
// Writer's index covers the killed run's files all the same, with the
// very lines the killed run's Close would have written, but for a record
// the kill cut short; and a file the index names already is not read
// again.
func TestResumeIndexesKilledRun(t *testing.T) {
	_, srv := newSite(t)
	for _, plain := range []bool{false, true} {
		for _, killed := range []string{"first run", "resumed run", "index removed"} {
			t.Run(fmt.Sprintf("NoGzip=%v,%s", plain, killed), func(t *testing.T) {
				dir := t.TempDir()
				file := filepath.Join(dir, "site.warc.gz")
				if plain {
					file = filepath.Join(dir, "site.warc")
				}
				opts := Options{File: file, Index: filepath.Join(dir, "site.cdxj"), MaxSize: 3 << 10, Resume: true}
				// run fetches what a crawl would, and a POST, through a
				// new Writer, closes it, and returns the index then.
				run := func() []string {
					t.Helper()
					w := newWriter(t, opts)
					crawlLike(t, w, srv)
					client := &http.Client{Transport: w.Transport(routeAll(srv))}
					resp, err := client.Post(srv.URL+"/plain?form", "application/x-www-form-urlencoded", strings.NewReader("a=1&b=two"))
					if err != nil {
						t.Fatal(err)
					}
					resp.Body.Close()
					if err := w.Close(); err != nil {
						t.Fatal(err)
					}
					lines, _ := readIndex(t, opts.Index)
					return lines
				}
				var before []byte // the index as the killed run found it
				if killed == "resumed run" {
					run()
					var err error
					if before, err = os.ReadFile(opts.Index); err != nil {
						t.Fatal(err)
					}
				}
				full := run() // the killed run's, as its Close wrote it
				if !slices.ContainsFunc(full, func(l string) bool { return strings.Contains(l, `"method":"POST","requestBody":"__wb_post_data=`) }) {
					t.Fatalf("no line of the POST in %q", full)
				}
				switch killed {
				case "index removed":
					os.Remove(opts.Index)
				default:
					if err := os.WriteFile(opts.Index, before, 0o644); err != nil {
						t.Fatal(err)
					}
				}
				// The kill cut the last file's last indexed record short:
				// its line goes.
				files, _ := filepath.Glob(filepath.Join(dir, "site*.warc*"))
				// site.warc.gz, then site-00001.warc.gz, ...
				last := slices.MaxFunc(files, func(a, b string) int { return cmp.Or(len(a)-len(b), strings.Compare(a, b)) })
				var cut cdxjLine
				want := slices.Clone(full)
				for _, l := range parsedLines(t, full) {
					if l.fields["filename"] == filepath.Base(last) && (cut.fields == nil || atoi(l.fields["offset"]) > atoi(cut.fields["offset"])) {
						cut = l
					}
				}
				if cut.fields == nil {
					t.Fatalf("no line names %s, the last file", last)
				}
				if err := os.Truncate(last, int64(atoi(cut.fields["offset"])+10)); err != nil {
					t.Fatal(err)
				}
				want = slices.DeleteFunc(want, func(l string) bool {
					return strings.Contains(l, `"offset":"`+cut.fields["offset"]+`","filename":"`+filepath.Base(last)+`"`)
				})
				if len(want) != len(full)-1 {
					t.Fatalf("the cut record's line not found once in %q", full)
				}
				earlier := make(map[string]bool)
				for _, f := range files {
					earlier[filepath.Base(f)] = true
				}

				got := run()
				var kept []string
				for i, l := range parsedLines(t, got) {
					indexedRecord(t, dir, l)
					if earlier[l.fields["filename"]] {
						kept = append(kept, got[i])
					}
				}
				if !slices.Equal(kept, want) {
					t.Errorf("the lines of the earlier files:\n%s\nwant those of the killed run's Close, but the cut record's:\n%s", strings.Join(kept, "\n"), strings.Join(want, "\n"))
				}
				if left, _ := filepath.Glob(filepath.Join(dir, "*.tmp")); len(left) != 0 {
					t.Errorf("%q left in the directory", left)
				}
			})
		}
	}
}

// parsedLines parses index lines as readIndex does.
func parsedLines(t *testing.T, lines []string) []cdxjLine {
	t.Helper()
	name := filepath.Join(t.TempDir(), "lines.cdxj")
	data := strings.Join(lines, "\n")
	if len(lines) > 0 {
		data += "\n"
	}
	if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	_, parsed := readIndex(t, name)
	return parsed
}

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		panic(err)
	}
	return n
}

// FuzzIndexRecords reads damaged and hostile files as a resumed Writer
// reads an earlier run's: whatever the bytes, no panic, no allocation past
// what the file could hold, and each line made is a CDXJ line (urlkey,
// 14-digit timestamp, a JSON object naming the file).
func FuzzIndexRecords(f *testing.F) {
	record := func(fields, block string) string {
		return "WARC/1.1\r\n" + fields + "Content-Length: " + strconv.Itoa(len(block)) + "\r\n\r\n" + block + "\r\n\r\n"
	}
	resp := record("WARC-Type: response\r\nWARC-Record-ID: <urn:uuid:1>\r\nWARC-Date: 2026-01-02T03:04:05.000000Z\r\nWARC-Target-URI: http://a.example/x?b=1&a=2\r\nWARC-Payload-Digest: sha1:AAAA\r\n",
		"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\r\n<p>hi</p>")
	req := record("WARC-Type: request\r\nWARC-Record-ID: <urn:uuid:2>\r\nWARC-Concurrent-To: <urn:uuid:1>\r\nWARC-Date: 2026-01-02T03:04:05.000000Z\r\nWARC-Target-URI: http://a.example/x?b=1&a=2\r\n",
		"POST /x?b=1&a=2 HTTP/1.1\r\nHost: a.example\r\n\r\nq=1")
	plain := resp + req
	var gz bytes.Buffer
	for _, r := range []string{resp, req} {
		zw := gzip.NewWriter(&gz)
		zw.Write([]byte(r))
		zw.Close()
	}
	f.Add([]byte(plain))
	f.Add(gz.Bytes())
	f.Add([]byte("WARC/1.1\r\nWARC-Type: response\r\nContent-Length: 99999999999\r\n\r\nHTTP/1.1 200 OK\r\n\r\n"))
	f.Add(gz.Bytes()[:len(gz.Bytes())-7])
	f.Fuzz(func(t *testing.T, data []byte) {
		var lines []string
		end, _, err := scanRecords(bytes.NewReader(data), int64(len(data)), `"f.warc"`, func(l string) { lines = append(lines, l) })
		if err != nil {
			t.Fatalf("scanRecords of bytes in memory: %v", err)
		}
		if end < 0 || end > int64(len(data)) {
			t.Fatalf("the last whole exchange ends at %d, in %d bytes", end, len(data))
		}
		for _, l := range lines {
			p := strings.SplitN(l, " ", 3)
			var obj map[string]string
			if len(p) != 3 || len(p[1]) != 14 || json.Unmarshal([]byte(p[2]), &obj) != nil || obj["filename"] != "f.warc" {
				t.Fatalf("line %q: not urlkey, timestamp, JSON naming f.warc", l)
			}
		}
		if bytes.Equal(data, []byte(plain)) || bytes.Equal(data, gz.Bytes()) {
			if len(lines) != 1 || !strings.Contains(lines[0], `"method":"POST"`) {
				t.Fatalf("lines %q, want the POST's", lines)
			}
		}
	})
}

// A kill in a write of several pages leaves the file's last record cut
// short (the kernel stops the write between two pages: 1 of 60 kill -9s
// of the command did). A resumed Writer cuts the file back to the end of
// its last whole exchange, so that every record in it is whole again; a
// file that ends whole, or is damaged elsewhere than at its end, is left
// as it is.
func TestResumeCutsTail(t *testing.T) {
	_, srv := newSite(t)
	for _, plain := range []bool{false, true} {
		t.Run(fmt.Sprintf("NoGzip=%v", plain), func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, "site.warc.gz")
			if plain {
				file = filepath.Join(dir, "site.warc")
			}
			opts := Options{File: file, Resume: true}
			whole := archived(t, srv, opts)
			// Where each exchange starts (a response or revisit), and
			// where the warcinfo ends.
			var starts, offsets []int
			recs := warctest.Read(t, file)
			for i, r := range recs {
				off := int(r.Offset) // a gzip member's
				if plain {
					// warctest gives no offset in a .warc: the record
					// after the i-th end of a record.
					off = 0
					for range i {
						off += bytes.Index(whole[off:], []byte(recordEnd+"WARC/1.1")) + len(recordEnd)
					}
				}
				offsets = append(offsets, off)
				if typ := r.Get("WARC-Type"); typ == "response" || typ == "revisit" {
					starts = append(starts, off)
				}
			}
			if len(starts) < 3 {
				t.Fatalf("%d exchanges, want several", len(starts))
			}
			last := starts[len(starts)-1]
			mid := starts[len(starts)/2]
			reqOfLast := offsets[len(offsets)-1] // the last record: the last exchange's request
			for _, tc := range []struct {
				name   string
				size   int // the file cut there
				want   int // its size after
				damage int // a record damaged there, if not 0
			}{
				{"in the last response", last + 20, last, 0},
				{"in the last request", reqOfLast + 30, last, 0},
				{"a byte before the end", len(whole) - 1, last, 0},
				{"in an exchange in the middle", mid + 100, mid, 0},
				{"in the warcinfo", 10, 0, 0},
				{"whole", len(whole), len(whole), 0},
				{"at the end of an exchange", last, last, 0},
				// A record in the middle damaged: its Content-Length,
				// or a byte of its gzip member.
				{"damaged in the middle, cut at the end", len(whole) - 1, len(whole) - 1, mid + 60},
			} {
				data := slices.Clone(whole[:tc.size])
				if tc.damage != 0 {
					if plain {
						// A Content-Length that runs past the end.
						i := bytes.Index(data[mid:], []byte("Content-Length: ")) + mid + len("Content-Length: ")
						data = slices.Insert(data, i, []byte("99999")...)
						tc.want = len(data)
					} else {
						data[tc.damage] ^= 0xff
					}
				}
				if err := os.WriteFile(file, data, 0o644); err != nil {
					t.Fatal(err)
				}
				after, files := resumeOnce(t, opts)
				if len(after) != tc.want || !bytes.Equal(after, data[:min(len(data), tc.want)]) {
					t.Errorf("%s: the file of %d bytes is %d after, want %d, the bytes before unchanged", tc.name, tc.size, len(after), tc.want)
				}
				if tc.damage == 0 && len(after) > 0 {
					warctest.Read(t, file) // every record whole
				}
				for _, f := range files[1:] {
					os.Remove(f) // the next case resumes from file again
				}
			}
			// A file of the series this package did not write (left
			// there by hand) is left as it is, as Options.Prefix
			// promises: before, a text file with no CRLF read as a
			// record cut short at its start, and was emptied.
			text := bytes.Repeat([]byte("a line of a file left by hand\n"), 4000)
			var gz bytes.Buffer
			zw := gzip.NewWriter(&gz)
			zw.Write(text)
			zw.Close()
			for _, tc := range []struct {
				name string
				data []byte
			}{
				{"a text file", text},
				{"a gzip file of text", gz.Bytes()},
				{"an archive with text after its last exchange", append(slices.Clone(whole), text...)},
				{"an archive with a gzip member of text after its last exchange", append(slices.Clone(whole), gz.Bytes()...)},
			} {
				if err := os.WriteFile(file, tc.data, 0o644); err != nil {
					t.Fatal(err)
				}
				after, files := resumeOnce(t, opts)
				if !bytes.Equal(after, tc.data) {
					t.Errorf("%s: the file of %d bytes is %d after, want it as it was", tc.name, len(tc.data), len(after))
				}
				for _, f := range files[1:] {
					os.Remove(f)
				}
			}
		})
	}
}

// A file cut short that is no longer the last of the series (its run was
// killed, then the next one too, before it had read it) is cut back by
// the Close of a later resumed Writer, which reads it for the index.
func TestResumeIndexCutsEarlierTail(t *testing.T) {
	_, srv := newSite(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "site.warc.gz")
	opts := Options{File: file, Index: filepath.Join(dir, "site.cdxj"), Resume: true}
	whole := archived(t, srv, opts)
	recs := warctest.Read(t, file)
	last := int(recs[len(recs)-2].Offset) // the last exchange's response
	// Killed in its last write; and the next run killed before it read
	// the file, leaving a file of its own (a copy of a whole one).
	if err := os.WriteFile(file, whole[:last+30], 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "site-00001.warc.gz"), whole, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(opts.Index, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	after, _ := resumeOnce(t, opts)
	if !bytes.Equal(after, whole[:last]) {
		t.Errorf("the file cut short: %d bytes after, want %d, the end of its last whole exchange", len(after), last)
	}
	warctest.Read(t, file) // every record whole
	_, lines := readIndex(t, opts.Index)
	for _, l := range lines {
		indexedRecord(t, dir, l)
	}
}

// archived fetches what crawlLike does through a new Writer of opts,
// closes it, and returns its file (opts.File).
func archived(t *testing.T, srv *httptest.Server, opts Options) []byte {
	t.Helper()
	w := newWriter(t, opts)
	crawlLike(t, w, srv)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(opts.File)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// resumeOnce makes a Writer of opts and closes it, and returns its file
// (opts.File) then, and the Writer's files.
func resumeOnce(t *testing.T, opts Options) ([]byte, []string) {
	t.Helper()
	w := newWriter(t, opts)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(opts.File)
	if err != nil {
		t.Fatal(err)
	}
	return data, w.Files()
}

// An earlier file a resumed Writer cannot read (here a directory in its
// place) does not stop the archive: the new files are written, and
// Close returns the error of reading it, naming it, and the index's.
func TestResumeUnreadableEarlierFile(t *testing.T) {
	_, srv := newSite(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "site.warc.gz")
	if err := os.Mkdir(file, 0o755); err != nil {
		t.Fatal(err)
	}
	w := newWriter(t, Options{File: file, Index: filepath.Join(dir, "site.cdxj"), Resume: true})
	crawlLike(t, w, srv)
	err := w.Close()
	if err == nil || !strings.Contains(err.Error(), "warc: resume: read "+file) || !strings.Contains(err.Error(), "warc: index") {
		t.Errorf("Close: %v; want the error of reading %s, and the index's", err, file)
	}
	if files := w.Files(); len(files) != 2 || len(warctest.Read(t, files[1])) == 0 {
		t.Errorf("files %q: want the new one after %s, with its records", files, file)
	}
}
