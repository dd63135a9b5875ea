package warc

import (
	"errors"
	"fmt"
	"testing"

	"github.com/asyncrawl/crawl/warc/warctest"
)

// readAll reads the records of every file of w with warctest.ReadFiles.
func readAll(t *testing.T, w *Writer) []*warctest.Record {
	t.Helper()
	return warctest.ReadFiles(t, w.Files()...)
}

// errFull is the error of a writer that fails like a full disk.
var errFull = errors.New("no space left on device (test)")

// fullFile fails once more than room bytes were written.
type fullFile struct{ room int }

func (f *fullFile) Write(p []byte) (int, error) {
	if len(p) > f.room {
		n := f.room
		f.room = 0
		return n, fmt.Errorf("write: %w", errFull)
	}
	f.room -= len(p)
	return len(p), nil
}

func (f *fullFile) Close() error { return nil }

// The revisit profile the writer names is the one WARC 1.1 defines, as
// the test reader knows it.
func TestRevisitProfile(t *testing.T) {
	if RevisitProfile != warctest.RevisitProfile {
		t.Errorf("RevisitProfile %q, want WARC 1.1's %q", RevisitProfile, warctest.RevisitProfile)
	}
}
