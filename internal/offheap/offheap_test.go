package offheap

import (
	"runtime"
	"testing"
)

// TestTables checks that a large table is mapped where the system allows
// and given back by PutTable, that a small one is the heap's, and that
// Release gives back what is left.
func TestTables(t *testing.T) {
	var m Tables
	small := m.Table(bigTable/8 - 1)
	if len(m.maps) != 0 {
		t.Errorf("table of %d bytes: got %d mappings, want none", 8*len(small), len(m.maps))
	}
	m.PutTable(small)
	want := 0
	if runtime.GOOS == "linux" {
		want = 1
	}
	big := m.Table(bigTable / 8)
	if len(big) != bigTable/8 || len(m.maps) != want {
		t.Fatalf("table of %d slots: got %d slots, %d mappings; want %d, %d", bigTable/8, len(big), len(m.maps), bigTable/8, want)
	}
	for i := range big {
		if big[i] != 0 {
			t.Fatalf("slot %d: got %d, want 0", i, big[i])
		}
		big[i] = uint64(i)
	}
	m.PutTable(big)
	if len(m.maps) != 0 {
		t.Errorf("after PutTable: got %d mappings, want none", len(m.maps))
	}
	m.Table(bigTable / 8)
	m.Table(bigTable / 4)
	m.Release()
	if len(m.maps) != 0 {
		t.Errorf("after Release: got %d mappings, want none", len(m.maps))
	}
}
