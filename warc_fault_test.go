package crawl_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/asyncrawl/crawl"
	"github.com/asyncrawl/crawl/warc"
	"github.com/asyncrawl/crawl/warc/warctest"
)

// errDiskFull is the error of a file that fills, as a full disk does.
var errDiskFull = errors.New("no space left on device (test)")

// fillingFile writes what fits in room bytes, then fails.
type fillingFile struct {
	*os.File
	room int
}

func (f *fillingFile) Write(p []byte) (int, error) {
	if len(p) > f.room {
		n, _ := f.File.Write(p[:f.room])
		f.room = 0
		return n, fmt.Errorf("write: %w", errDiskFull)
	}
	f.room -= len(p)
	return f.File.Write(p)
}

// A crawl archived through warc.Writer.Transport, whose disk fills part
// way: every URL the crawl counts done (a Result without an error) has
// its response record in the file, pages read to their end and redirects
// whose bodies the crawler closes early alike, and the URLs whose records
// were lost are left for a later run (Stats.Todo), not counted done.
func TestWARCDiskFullCountsOnlyRecorded(t *testing.T) {
	const pages = 400
	filler := bytes.Repeat([]byte("<p>filler</p>\n"), 150)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n, ok := strings.CutPrefix(r.URL.Path, "/r/"); ok {
			// A redirect with a body larger than the crawler reads of it.
			w.Header().Set("Location", "/p/"+n)
			w.WriteHeader(http.StatusFound)
			w.Write(bytes.Repeat([]byte("r"), 20000))
			return
		}
		i, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/p/"))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, "<html><body>")
		for k := 1; k <= 3; k++ {
			if j := i*3 + k; j < pages {
				if j%2 == 0 {
					fmt.Fprintf(w, `<a href="/r/%d">r</a>`, j)
				} else {
					fmt.Fprintf(w, `<a href="/p/%d">p</a>`, j)
				}
			}
		}
		w.Write(filler)
		fmt.Fprintf(w, "%d</body></html>", i)
	}))
	t.Cleanup(srv.Close)
	for round := range 6 {
		dir := t.TempDir()
		ctx, cancel := context.WithCancel(context.Background())
		w, err := warc.NewWriter(warc.Options{
			Dir: dir, NoGzip: true,
			OnError: func(error) { cancel() },
			Create: func(name string) (io.WriteCloser, error) {
				f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
				if err != nil {
					return f, err
				}
				return &fillingFile{File: f, room: 300000 + 50000*round}, nil
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		var (
			mu   sync.Mutex
			done []string
		)
		c, err := crawl.New(crawl.WithWorkers(16), crawl.WithHostWorkers(16),
			crawl.WithTransportWrapper(w.Transport),
			crawl.WithResultHook(func(r crawl.Result) {
				if r.Err == nil {
					mu.Lock()
					done = append(done, r.URL)
					mu.Unlock()
				}
			}))
		if err != nil {
			t.Fatal(err)
		}
		stats, err := c.Run(ctx, srv.URL+"/p/0")
		cancel()
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("round %d: Run: %v, want the crawl cancelled by the write error", round, err)
		}
		if werr := w.Close(); !errors.Is(werr, errDiskFull) {
			t.Fatalf("round %d: Close: %v, want %v", round, werr, errDiskFull)
		}
		recorded := map[string]bool{}
		for _, r := range warctest.ReadFiles(t, w.Files()...) {
			// A revisit stands for a response whose payload came before.
			if typ := r.Get("WARC-Type"); typ == "response" || typ == "revisit" {
				recorded[r.Get("WARC-Target-URI")] = true
			}
		}
		if len(done) == 0 || stats.Todo == 0 {
			t.Fatalf("round %d: %d URLs done, %d left: want the disk to fill part way", round, len(done), stats.Todo)
		}
		lost := 0
		for _, u := range done {
			if !recorded[u] {
				lost++
				t.Errorf("round %d: %s counted done, and not in the archive", round, u)
			}
		}
		if lost > 0 {
			t.Logf("round %d: %d of %d URLs counted done have no record; %d records", round, lost, len(done), len(recorded))
		}
	}
}
