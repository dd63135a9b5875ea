package fifo

import "testing"

// Values come out in the order they went in, through the compaction of a
// list that is never empty and the release of one drained.
func TestList(t *testing.T) {
	var l List[int]
	next, want := 0, 0
	for round := range 1000 {
		for range round%5 + 1 {
			l.Push(next)
			next++
		}
		for range round % 4 {
			if l.Len() == 0 {
				break
			}
			if got := l.Pop(); got != want {
				t.Fatalf("round %d: Pop = %d, want %d", round, got, want)
			}
			want++
		}
		if l.Len() != next-want {
			t.Fatalf("round %d: Len = %d, want %d", round, l.Len(), next-want)
		}
	}
	if len(l.items) > 2*l.Len()+64 {
		t.Errorf("%d values held in a slice of %d: the read part is not let go", l.Len(), len(l.items))
	}
	for l.Len() > 0 {
		if got := l.Pop(); got != want {
			t.Fatalf("draining: Pop = %d, want %d", got, want)
		}
		want++
	}
	if l.items != nil {
		t.Errorf("a drained large list keeps %d slots", cap(l.items))
	}
}
