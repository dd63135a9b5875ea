// Package extsort sorts more records than memory should hold: the command's
// text report (a line per URL, sorted by URL) and the WARC writer's CDXJ
// index (a line per record, sorted bytewise), which a ten-million-URL crawl
// would otherwise keep whole until its end. Records are held in memory up
// to a bound, then sorted and written to a file of their own (a run), and
// the runs are merged when the records are read back, as sort(1) does.
package extsort

import (
	"bufio"
	"bytes"
	"container/heap"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
)

// Sorter sorts records, byte strings that may hold any byte, by a key of
// each. Records with equal keys come out in the order they were added.
// Records are held in memory until they pass the Sorter's limit, then
// spilled to a run file in a directory of their own in os.TempDir ($TMPDIR
// on Unix); Close removes it. A Sorter is not safe for concurrent use.
type Sorter struct {
	limit int // bytes of records held at most; 0: no spill
	key   func(rec []byte) []byte

	arena []byte // the records held, one after another
	recs  []span // each record's place in arena, in the order added
	dir   string // made at the first spill
	runs  []string
	err   error // why a spill failed; records are then kept in memory
	done  bool
}

type span struct{ start, end int }

// maxRuns is how many runs are merged at once. When there are as many, they
// are merged into one run first, which bounds the files open and the
// buffers read through at the end.
const maxRuns = 64

// readBuffer is the buffer each run is read through when runs are merged.
const readBuffer = 32 << 10

// New returns a Sorter that holds up to limit bytes of records in memory
// (and 16 bytes a record for its place; limit <= 0 holds them all, and a
// record longer than limit is held on its own) and spills the rest to a
// temporary directory. key returns a record's sort key, a part of the
// record; nil sorts by the whole record.
func New(limit int, key func(rec []byte) []byte) *Sorter {
	if key == nil {
		key = func(rec []byte) []byte { return rec }
	}
	return &Sorter{limit: max(limit, 0), key: key}
}

// Add adds a copy of rec. A spill that fails is not an error of Add's: the
// Sorter keeps every record in memory from then on, and SpillErr says why,
// so that no record is lost.
func (s *Sorter) Add(rec []byte) { add(s, rec) }

// AddString is Add for a record held in a string, which it copies without
// making a []byte of it first.
func (s *Sorter) AddString(rec string) { add(s, rec) }

func add[R string | []byte](s *Sorter, rec R) {
	if s.done {
		panic("extsort: Add after Each")
	}
	if s.limit > 0 && len(s.recs) > 0 && len(s.arena)+len(rec) > s.limit {
		s.spill()
	}
	if need := len(s.arena) + len(rec); need > cap(s.arena) {
		// Doubling, but not past the limit, as append would.
		c := max(2*cap(s.arena), 4<<10)
		if s.limit > 0 {
			c = min(c, s.limit)
		}
		c = max(c, need)
		a := make([]byte, len(s.arena), c) // slices.Grow would double
		copy(a, s.arena)
		s.arena = a
	}
	start := len(s.arena)
	s.arena = append(s.arena, rec...)
	s.recs = append(s.recs, span{start, len(s.arena)})
}

// Runs returns the number of run files on disk: 0 while every record is
// held in memory.
func (s *Sorter) Runs() int { return len(s.runs) }

// SpillErr returns the error of the spill that failed, if one did; the
// records are all there all the same, in memory.
func (s *Sorter) SpillErr() error { return s.err }

// Each calls f with each record, in order of their keys. It stops at the
// first error, f's or one reading a run back, and returns it. rec is valid
// only during the call. Each may be called once; Close must still be
// called after it.
func (s *Sorter) Each(f func(rec []byte) error) error {
	if s.done {
		return errors.New("extsort: Each called twice")
	}
	s.done = true
	s.sortHeld()
	if len(s.runs) == 0 {
		for _, r := range s.recs {
			if err := f(s.arena[r.start:r.end]); err != nil {
				return err
			}
		}
		return nil
	}
	return s.merge(f)
}

// Close removes the runs and their directory, and lets go of the records
// in memory.
func (s *Sorter) Close() error {
	s.arena, s.recs, s.runs = nil, nil, nil
	if s.dir == "" {
		return nil
	}
	err := os.RemoveAll(s.dir)
	s.dir = ""
	return err
}

// sortHeld sorts the records in memory by key, equal keys in the order
// added.
func (s *Sorter) sortHeld() {
	slices.SortStableFunc(s.recs, func(a, b span) int {
		return bytes.Compare(s.key(s.arena[a.start:a.end]), s.key(s.arena[b.start:b.end]))
	})
}

// spill sorts the records in memory and writes them to a new run, then
// forgets them. When the run cannot be written, the records stay, and so
// does every record after them.
func (s *Sorter) spill() {
	s.sortHeld()
	name, err := s.writeRun(func(w *bufio.Writer) error {
		for _, r := range s.recs {
			if err := writeRecord(w, s.arena[r.start:r.end]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		s.err, s.limit = err, 0
		return
	}
	s.runs = append(s.runs, name)
	s.arena, s.recs = s.arena[:0], s.recs[:0]
	if len(s.runs) == maxRuns {
		// One run of them all, read through one buffer at the end
		// instead of maxRuns.
		name, err := s.writeRun(func(w *bufio.Writer) error {
			return s.merge(func(rec []byte) error { return writeRecord(w, rec) })
		})
		if err != nil {
			// The runs are whole; the next spills add more of them.
			return
		}
		for _, r := range s.runs {
			os.Remove(r)
		}
		s.runs = append(s.runs[:0], name)
	}
}

// writeRun writes a new run file with fill, and returns its name. A run
// not written whole is removed.
func (s *Sorter) writeRun(fill func(*bufio.Writer) error) (string, error) {
	if s.dir == "" {
		dir, err := os.MkdirTemp("", "crawl-sort-*")
		if err != nil {
			return "", fmt.Errorf("extsort: %w", err)
		}
		s.dir = dir
	}
	f, err := os.CreateTemp(s.dir, "run-*")
	if err != nil {
		return "", fmt.Errorf("extsort: %w", err)
	}
	w := bufio.NewWriterSize(f, 64<<10)
	err = fill(w)
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("extsort: write %s: %w", filepath.Base(f.Name()), err)
	}
	return f.Name(), nil
}

// writeRecord writes rec as a run holds it: its length, then its bytes.
// The length is a uvarint, as binary.PutUvarint writes it, written a byte
// at a time: a buffer for it would escape through w.Write.
func writeRecord(w *bufio.Writer, rec []byte) error {
	v := uint64(len(rec))
	for ; v >= 0x80; v >>= 7 {
		w.WriteByte(byte(v) | 0x80)
	}
	w.WriteByte(byte(v))
	_, err := w.Write(rec) // the first error of the Writer's, if any
	return err
}

// merge calls f with the records of the runs, and those held in memory
// (sorted, and newer than any run's), in order of their keys; equal keys in
// the order they were added.
func (s *Sorter) merge(f func(rec []byte) error) error {
	h := &cursors{key: s.key}
	defer func() {
		for _, c := range h.all {
			if c.f != nil {
				c.f.Close()
			}
		}
	}()
	for i, name := range s.runs {
		fh, err := os.Open(name)
		if err != nil {
			return fmt.Errorf("extsort: %w", err)
		}
		c := &cursor{order: i, f: fh, r: bufio.NewReaderSize(fh, readBuffer)}
		h.all = append(h.all, c)
		if err := h.start(c); err != nil {
			return err
		}
	}
	if len(s.recs) > 0 {
		c := &cursor{order: len(s.runs), held: s}
		h.all = append(h.all, c)
		if err := h.start(c); err != nil {
			return err
		}
	}
	for h.Len() > 0 {
		c := h.items[0]
		if err := f(c.rec); err != nil {
			return err
		}
		ok, err := c.next()
		switch {
		case err != nil:
			return err
		case ok:
			heap.Fix(h, 0)
		default:
			heap.Pop(h)
		}
	}
	return nil
}

// cursor reads the records of one run, or of those held in memory.
type cursor struct {
	order int // runs older first; breaks ties between equal keys
	f     *os.File
	r     *bufio.Reader
	held  *Sorter // the records in memory, read from next
	pos   int
	buf   []byte
	rec   []byte // the current record
}

// next moves c to its next record; false at the end of its records.
func (c *cursor) next() (bool, error) {
	if c.held != nil {
		if c.pos == len(c.held.recs) {
			return false, nil
		}
		r := c.held.recs[c.pos]
		c.pos++
		c.rec = c.held.arena[r.start:r.end]
		return true, nil
	}
	n, err := binary.ReadUvarint(c.r)
	if err == io.EOF {
		return false, nil
	}
	if err == nil {
		if n > uint64(maxRecord) {
			err = fmt.Errorf("a record of %d bytes", n)
		} else {
			c.buf = slices.Grow(c.buf[:0], int(n))[:n]
			_, err = io.ReadFull(c.r, c.buf)
		}
	}
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return false, fmt.Errorf("extsort: read %s: %w", filepath.Base(c.f.Name()), err)
	}
	c.rec = c.buf
	return true, nil
}

// maxRecord bounds a record's length as read back from a run, so that a
// damaged run cannot ask for any amount of memory.
const maxRecord = 1 << 30

// cursors is a heap of the cursors that have a record, the least key
// first.
type cursors struct {
	key   func([]byte) []byte
	all   []*cursor // every cursor opened, to close
	items []*cursor
}

// start reads c's first record and puts c on the heap if it has one.
func (h *cursors) start(c *cursor) error {
	ok, err := c.next()
	if ok {
		heap.Push(h, c)
	}
	return err
}

func (h *cursors) Len() int { return len(h.items) }
func (h *cursors) Less(i, j int) bool {
	a, b := h.items[i], h.items[j]
	if c := bytes.Compare(h.key(a.rec), h.key(b.rec)); c != 0 {
		return c < 0
	}
	return a.order < b.order
}
func (h *cursors) Swap(i, j int) { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *cursors) Push(x any)    { h.items = append(h.items, x.(*cursor)) }
func (h *cursors) Pop() any {
	c := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return c
}
