package warc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/asyncrawl/crawl/warc/warctest"
)

// warcioVersion is the warcio.js release the tests read archives with; .ci/run
// installs it.
const warcioVersion = "2.4.11"

// warcioDir returns the directory where warcio.js is installed
// (node_modules/warcio under it): $WARCIO_DIR, or the one .ci/run uses. The
// test is skipped when node or the package is missing, but fails in CI
// (CI=true), where .ci/run installs both.
func warcioDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("WARCIO_DIR")
	if dir == "" {
		if home, err := os.UserHomeDir(); err == nil {
			dir = filepath.Join(home, ".cache", "asyncrawl-warcio")
		}
	}
	missing := ""
	if _, err := exec.LookPath("node"); err != nil {
		missing = "node is not installed"
	} else if b, err := os.ReadFile(filepath.Join(dir, "node_modules", "warcio", "package.json")); err != nil {
		missing = fmt.Sprintf("warcio is not installed in %s (WARCIO_DIR): %v", dir, err)
	} else if !bytes.Contains(b, []byte(`"version": "`+warcioVersion+`"`)) {
		missing = fmt.Sprintf("warcio in %s is not version %s", dir, warcioVersion)
	}
	if missing != "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s; .ci/run installs it", missing)
		}
		t.Skipf("%s; .ci/run installs it", missing)
	}
	return dir
}

// warcioRecord is a record as testdata/warcio_check.mjs prints it.
type warcioRecord struct {
	File, Type, URI, ID, ConcurrentTo string
	Status                            int
	PayloadDigest, BlockDigest        string
	PayloadSHA1                       string
	PayloadLength                     int
}

// TestWarcio reads archives with warcio.js, an independent reader: every
// record is read, in the order written, with the fields written, and the
// payload it reads is the one the payload digest covers.
func TestWarcio(t *testing.T) {
	dir := warcioDir(t)
	for _, plain := range []bool{false, true} {
		t.Run(fmt.Sprintf("NoGzip=%v", plain), func(t *testing.T) {
			s, srv := newSite(t)
			w := newWriter(t, Options{NoGzip: plain, MaxSize: 4 << 10})
			client := &http.Client{Transport: w.Transport(nil)}
			for _, p := range []string{"/plain", "/gzip", "/chunked", "/redirect", "/missing", "/same/x"} {
				get(t, client, srv.URL+p)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			ours := readAll(t, w)

			args := append([]string{filepath.Join("testdata", "warcio_check.mjs"), dir}, w.Files()...)
			var stderr bytes.Buffer
			cmd := exec.Command("node", args...)
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil || stderr.Len() > 0 {
				t.Fatalf("warcio: %v\n%s", err, stderr.Bytes())
			}
			var theirs []warcioRecord
			dec := json.NewDecoder(bytes.NewReader(out))
			for dec.More() {
				var r warcioRecord
				if err := dec.Decode(&r); err != nil {
					t.Fatalf("warcio output: %v\n%s", err, out)
				}
				theirs = append(theirs, r)
			}
			if len(theirs) != len(ours) {
				t.Fatalf("warcio read %d records, want the %d written", len(theirs), len(ours))
			}
			for i, r := range theirs {
				o := ours[i]
				if r.ID != o.Get("WARC-Record-ID") || r.Type != o.Get("WARC-Type") || r.URI != o.Get("WARC-Target-URI") ||
					r.ConcurrentTo != o.Get("WARC-Concurrent-To") || r.BlockDigest != o.Get("WARC-Block-Digest") {
					t.Errorf("record %d: warcio read %+v, want the record %v", i, r, o.Fields)
				}
				if r.Type == "response" {
					_, payload := o.HTTPParts()
					if r.PayloadSHA1 != r.PayloadDigest || r.PayloadLength != len(payload) {
						t.Errorf("%s: warcio read a payload of %d bytes, %s, want %d bytes, %s",
							r.URI, r.PayloadLength, r.PayloadSHA1, len(payload), r.PayloadDigest)
					}
				}
				wantStatus := map[string]int{"/redirect": 302, "/missing": 404, "/gzip": 200}[strings.TrimPrefix(r.URI, srv.URL)]
				if r.Type == "response" && wantStatus != 0 && r.Status != wantStatus {
					t.Errorf("%s: warcio read status %d, want %d", r.URI, r.Status, wantStatus)
				}
				if r.Type == "response" && r.URI == srv.URL+"/gzip" && r.PayloadLength != len(s.gz) {
					t.Errorf("/gzip: warcio read a payload of %d bytes, want the %d gzip bytes sent", r.PayloadLength, len(s.gz))
				}
			}

			// warcio's own indexer reads the files without a word on
			// standard error.
			idx := exec.Command("node", append([]string{filepath.Join(dir, "node_modules", "warcio", "dist", "cli.js"), "cdx-index"}, w.Files()...)...)
			stderr.Reset()
			idx.Stderr = &stderr
			cdx, err := idx.Output()
			if err != nil || stderr.Len() > 0 {
				t.Fatalf("warcio cdx-index: %v\n%s", err, stderr.Bytes())
			}
			if got, want := bytes.Count(cdx, []byte("\n")), len(warctest.ByType(ours, "response"))+len(warctest.ByType(ours, "revisit")); got != want {
				t.Errorf("warcio cdx-index: %d lines, want one per response and revisit, %d:\n%s", got, want, cdx)
			}
		})
	}
}
