package extsort

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// urlKey is the text report's key: the record up to its first space.
func urlKey(rec []byte) []byte {
	if i := bytes.IndexByte(rec, ' '); i >= 0 {
		return rec[:i]
	}
	return rec
}

// records returns n records "KEY SEQ\n...", keys drawn from few enough
// values that many repeat (to check the order of equal keys), some holding
// newlines and bytes of every value.
func records(rng *rand.Rand, n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		key := fmt.Sprintf("http://h%d.test/p/%d", rng.IntN(5), rng.IntN(n/3+1))
		rec := fmt.Appendf(nil, "%s %d", key, i)
		for range rng.IntN(4) {
			rec = append(rec, byte(rng.IntN(256)), '\n')
		}
		out[i] = rec
	}
	return out
}

// collect returns what Each gives, copied.
func collect(t *testing.T, s *Sorter) [][]byte {
	t.Helper()
	var got [][]byte
	if err := s.Each(func(rec []byte) error {
		got = append(got, bytes.Clone(rec))
		return nil
	}); err != nil {
		t.Fatalf("Each: %v", err)
	}
	return got
}

// Every record comes back once, in key order, equal keys in the order
// added, whether the records stay in memory, spill to a few runs, or to so
// many that the runs are merged before the end.
func TestSorted(t *testing.T) {
	for _, tc := range []struct {
		name     string
		n, limit int
		key      func([]byte) []byte
		runs     bool // some records must have been spilled
	}{
		{"in memory", 2000, 0, urlKey, false},
		{"under the limit", 2000, 1 << 20, urlKey, false},
		{"a few runs", 2000, 8 << 10, urlKey, true},
		{"runs merged before the end", 20000, 4 << 10, urlKey, true},
		{"whole record as key", 20000, 4 << 10, nil, true},
		{"one record a run", 300, 1, urlKey, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, uint64(tc.n)))
			recs := records(rng, tc.n)
			parent := t.TempDir()
			t.Setenv("TMPDIR", parent)
			s := New(tc.limit, tc.key)
			for i, r := range recs {
				if i%2 == 0 {
					s.Add(r)
				} else {
					s.AddString(string(r))
				}
				// The memory bound: the arena the records are held in
				// is within the limit (or one record), but for the
				// allocator's rounding up; not twice it, as append's
				// doubling would make it.
				bound := max(tc.limit, len(r))
				if held := cap(s.arena); tc.limit > 0 && held > bound+bound/8+64 {
					t.Fatalf("after %d records: %d bytes held, over the limit of %d", i+1, held, tc.limit)
				}
			}
			if err := s.SpillErr(); err != nil {
				t.Fatalf("SpillErr: %v", err)
			}
			if spilled := s.Runs() > 0; spilled != tc.runs {
				t.Errorf("runs %d: spilled %v, want %v", s.Runs(), spilled, tc.runs)
			}
			if s.Runs() > maxRuns {
				t.Errorf("%d runs left to merge at the end, want at most %d", s.Runs(), maxRuns)
			}
			key := tc.key
			if key == nil {
				key = func(r []byte) []byte { return r }
			}
			want := slices.Clone(recs)
			slices.SortStableFunc(want, func(a, b []byte) int { return bytes.Compare(key(a), key(b)) })
			got := collect(t, s)
			if len(got) != len(want) {
				t.Fatalf("got %d records, want %d", len(got), len(want))
			}
			for i := range want {
				if !bytes.Equal(got[i], want[i]) {
					t.Fatalf("record %d: got %q, want %q", i, got[i], want[i])
				}
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if left, _ := os.ReadDir(parent); len(left) != 0 {
				t.Errorf("after Close, %s holds %d entries, want none", parent, len(left))
			}
		})
	}
}

// A Sorter that cannot write its runs keeps every record in memory and
// says why.
func TestSpillFails(t *testing.T) {
	t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "missing"))
	s := New(1<<10, urlKey)
	defer s.Close()
	recs := records(rand.New(rand.NewPCG(2, 2)), 500)
	for _, r := range recs {
		s.Add(r)
	}
	if err := s.SpillErr(); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("SpillErr: got %v, want one wrapping os.ErrNotExist", err)
	}
	got := collect(t, s)
	if len(got) != len(recs) {
		t.Errorf("got %d records, want all %d", len(got), len(recs))
	}
	if !slices.IsSortedFunc(got, func(a, b []byte) int { return bytes.Compare(urlKey(a), urlKey(b)) }) {
		t.Error("records not in key order")
	}
}

// A run damaged on disk is an error of Each's, not records made up.
func TestDamagedRun(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	s := New(1<<10, urlKey)
	defer s.Close()
	for _, r := range records(rand.New(rand.NewPCG(3, 3)), 500) {
		s.Add(r)
	}
	if len(s.runs) == 0 {
		t.Fatal("no run written")
	}
	fi, err := os.Stat(s.runs[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(s.runs[0], fi.Size()-3); err != nil {
		t.Fatal(err)
	}
	err = s.Each(func([]byte) error { return nil })
	if err == nil {
		t.Fatal("Each over a cut run: got nil, want an error")
	}
}

// Each stops at f's first error and returns it.
func TestEachStops(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	for _, limit := range []int{0, 1 << 10} {
		s := New(limit, urlKey)
		for _, r := range records(rand.New(rand.NewPCG(4, 4)), 500) {
			s.Add(r)
		}
		stop := errors.New("stop")
		calls := 0
		err := s.Each(func([]byte) error {
			calls++
			if calls == 10 {
				return stop
			}
			return nil
		})
		if err != stop || calls != 10 {
			t.Errorf("limit %d: got %v after %d calls, want stop after 10", limit, err, calls)
		}
		if err := s.Each(func([]byte) error { return nil }); err == nil {
			t.Errorf("limit %d: a second Each: got nil, want an error", limit)
		}
		s.Close()
	}
}

// BenchmarkSorter adds and reads back report lines through runs on disk,
// as a crawl's report of b.N URLs does.
func BenchmarkSorter(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 5))
	recs := make([][]byte, 100000)
	for i := range recs {
		recs[i] = fmt.Appendf(nil, "http://h%d.test/p/%d.html 200 text/html utf-8 5512 3/21\n", rng.IntN(100), rng.IntN(1e6))
	}
	b.Setenv("TMPDIR", b.TempDir())
	b.ReportAllocs()
	for b.Loop() {
		s := New(1<<20, urlKey)
		for _, r := range recs {
			s.Add(r)
		}
		if err := s.Each(func([]byte) error { return nil }); err != nil {
			b.Fatal(err)
		}
		s.Close()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(recs)), "ns/record")
}
