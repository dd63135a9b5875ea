package frontiertest_test

import (
	"testing"

	"github.com/asyncrawl/crawl"
	"github.com/asyncrawl/crawl/frontiertest"
)

// openMyFrontier stands for a backend's constructor. Here it returns the
// in-memory Frontier, which keeps nothing; a durable backend would open
// (or create) the state kept at path.
func openMyFrontier(path string) (crawl.Frontier, error) {
	return crawl.NewMemoryFrontier(), nil
}

// A backend's tests run the suite on fresh Frontiers and the randomized
// checker against its model, and a durable backend's run RunDurable as
// well. In the backend's own _test.go file the three functions below are
// tests, func TestMyFrontier(t *testing.T), func TestMyFrontierRandom(t
// *testing.T) and func TestMyFrontierDurable(t *testing.T).
func Example() {
	testMyFrontier := func(t *testing.T) {
		frontiertest.Run(t, func(t *testing.T) crawl.Frontier {
			f, err := openMyFrontier(t.TempDir() + "/state")
			if err != nil {
				t.Fatal(err)
			}
			// The suite may have closed f already: a second Close
			// returns ErrFrontierClosed, which is of no concern here.
			t.Cleanup(func() { f.Close() })
			return f
		})
	}
	testMyFrontierRandom := func(t *testing.T) {
		// Random sequences of calls, some cancelled part way, checked
		// against a model of the contract (a durable backend passes
		// &frontiertest.FuzzOptions{Durable: true}: its Frontier is
		// then closed and opened again on path between steps too).
		frontiertest.Fuzz(t, func(t *testing.T, path string) crawl.Frontier {
			f, err := openMyFrontier(path)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { f.Close() })
			return f
		}, nil)
	}
	testMyFrontierDurable := func(t *testing.T) {
		frontiertest.RunDurable(t, func(t *testing.T, path string) crawl.Frontier {
			f, err := openMyFrontier(path)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { f.Close() })
			return f
		})
	}
	_, _, _ = testMyFrontier, testMyFrontierRandom, testMyFrontierDurable
}
