package fpset

import "testing"

// splitmix returns the i-th of a sequence of well-mixed fingerprints.
func splitmix(i uint64) uint64 {
	z := i*0x9e3779b97f4a7c15 + 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// countingTables is the heap's tables, counting those out.
type countingTables struct{ out int }

func (c *countingTables) Table(n int) []uint64 { c.out++; return make([]uint64, n) }
func (c *countingTables) PutTable(t []uint64) {
	if len(t) > 0 {
		c.out--
	}
}

// TestSet adds fingerprints across several growths of the tables and
// checks that each is new once and seen after, that no table is more than
// three quarters full, and that every table replaced is given back.
func TestSet(t *testing.T) {
	for _, tc := range []struct {
		name   string
		tables *countingTables
	}{{"heap", nil}, {"tables", &countingTables{}}} {
		t.Run(tc.name, func(t *testing.T) {
			var s Set
			if tc.tables != nil {
				s = New(tc.tables)
			} else {
				s = New(nil)
			}
			const n = 300000
			for i := range uint64(n) {
				if !s.Add(splitmix(i)) {
					t.Fatalf("Add(%d): got seen, want new", i)
				}
				if i%7 == 0 && s.Add(splitmix(i/2)) {
					t.Fatalf("Add(%d) again: got new, want seen", i/2)
				}
			}
			for i := range uint64(n) {
				if s.Add(splitmix(i)) {
					t.Fatalf("Add(%d) again: got new, want seen", i)
				}
			}
			if s.Len() != n {
				t.Errorf("got Len %d, want %d", s.Len(), n)
			}
			for i, sh := range s.shards {
				if sh.n*4 > len(sh.slots)*3 {
					t.Errorf("table %d: %d fingerprints in %d slots, want a load of at most 3/4", i, sh.n, len(sh.slots))
				}
			}
			if tc.tables != nil && tc.tables.out != Shards {
				t.Errorf("got %d tables out, want %d (one a shard)", tc.tables.out, Shards)
			}
		})
	}
}

// TestSetZero checks that the fingerprint 0, which marks an empty slot,
// is stored (as 1) and found again.
func TestSetZero(t *testing.T) {
	s := New(nil)
	if !s.Add(0) {
		t.Fatal("Add(0): got seen, want new")
	}
	if s.Add(0) || s.Add(1) {
		t.Errorf("Add(0), Add(1) after Add(0): got new, want seen")
	}
	if s.Len() != 1 {
		t.Errorf("got Len %d, want 1", s.Len())
	}
}

// TestHas checks that Has reports the fingerprints added, 0 as 1, and
// adds nothing.
func TestHas(t *testing.T) {
	s := New(nil)
	if s.Has(splitmix(0)) || s.Has(0) {
		t.Fatalf("empty set: Has true, want false")
	}
	const n = 10000
	for i := range uint64(n) {
		s.Add(splitmix(2 * i))
	}
	for i := range uint64(n) {
		if !s.Has(splitmix(2 * i)) {
			t.Fatalf("Has(added %d): got false, want true", 2*i)
		}
		if s.Has(splitmix(2*i + 1)) {
			t.Fatalf("Has(not added %d): got true, want false", 2*i+1)
		}
	}
	if s.Len() != n {
		t.Errorf("Len after Has: got %d, want %d", s.Len(), n)
	}
	s.Add(1)
	if !s.Has(0) {
		t.Errorf("Has(0) after Add(1): got false, want true (0 and 1 are one)")
	}
}
