package frontiertest

import (
	"errors"
	"os"
	"testing"

	"github.com/asyncrawl/crawl"
)

// TestRandomMemory runs Fuzz on crawl.MemoryFrontier, over 200 seeds
// unless $FRONTIERTEST_SEEDS says otherwise: its runs are quick, and a
// bug the checker meets in 2% of seeds passes 40 of them one time in
// two.
func TestRandomMemory(t *testing.T) {
	o := &FuzzOptions{}
	if os.Getenv("FRONTIERTEST_SEEDS") == "" {
		o.Seeds = 200
	}
	Fuzz(t, func(t *testing.T, path string) crawl.Frontier {
		f := crawl.NewMemoryFrontier()
		t.Cleanup(func() { f.Close() }) // ErrFrontierClosed if the run closed it
		return f
	}, o)
}

// TestRandomReference runs Fuzz on the reference Frontier, durable, its
// state file saved and rolled back: the model accepts a Frontier written
// to be plainly correct.
func TestRandomReference(t *testing.T) {
	Fuzz(t, func(t *testing.T, path string) crawl.Frontier { return openRefT(t, path, "") }, refRollback())
}

// refRollback returns the FuzzOptions of a durable reference Frontier
// whose state file is copied by Save and put back by Rollback.
func refRollback() *FuzzOptions {
	return &FuzzOptions{
		Durable:  true,
		Save:     func(t *testing.T, path string) { copyFile(t, path, path+".saved") },
		Rollback: func(t *testing.T, path string) { copyFile(t, path+".saved", path) },
	}
}

// copyFile copies the file at from to to, failing t on an error.
func copyFile(t *testing.T, from, to string) {
	b, err := os.ReadFile(from)
	if errors.Is(err, os.ErrNotExist) {
		os.Remove(to) // nothing saved yet: no state
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
