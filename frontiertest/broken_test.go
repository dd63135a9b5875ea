package frontiertest

import (
	"bytes"
	"maps"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/asyncrawl/crawl"
)

// bugEnv names the defect of the reference Frontier that TestBrokenFrontier
// runs the suite on, in a child process of TestSuiteFailsBrokenFrontiers.
const bugEnv = "FRONTIERTEST_BUG"

// TestBrokenFrontier runs the suite on a reference Frontier with the
// defect named by $FRONTIERTEST_BUG, or on the memoryMutants of that name. It is meant to fail: it runs only as
// the child process of TestSuiteFailsBrokenFrontiers.
func TestBrokenFrontier(t *testing.T) {
	bug := os.Getenv(bugEnv)
	if bug == "" {
		t.Skip("run by TestSuiteFailsBrokenFrontiers, with $" + bugEnv + " set")
	}
	if m, ok := memoryMutants[bug]; ok {
		Run(t, func(t *testing.T) crawl.Frontier {
			f := m.open()
			t.Cleanup(func() { f.Close() })
			return f
		})
		return
	}
	Run(t, func(t *testing.T) crawl.Frontier { return openRefT(t, "", bug) })
	RunDurable(t, func(t *testing.T, path string) crawl.Frontier { return openRefT(t, path, bug) })
}

// TestSuiteFailsBrokenFrontiers checks that the suite fails Frontiers that
// break the contract: for each deliberate defect of the reference
// Frontier, and each of memoryMutants, the subtest that checks that part
// of the contract must fail.
// testing has no way to run a test expecting it to fail, so each runs in
// a child process (the test binary run again), whose output is read.
func TestSuiteFailsBrokenFrontiers(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the suite once per defect, in child processes")
	}
	all := maps.Clone(bugs)
	for bug, m := range memoryMutants {
		all[bug] = m.checks
	}
	names := slices.Sorted(maps.Keys(all))
	for _, bug := range names {
		checks := all[bug]
		t.Run(bug, func(t *testing.T) {
			t.Parallel()
			run := "-test.run=^TestBrokenFrontier$/^(" + strings.Join(checks, "|") + ")$"
			cmd := exec.Command(os.Args[0], run, "-test.count=1", "-test.timeout=2m")
			cmd.Env = append(os.Environ(), bugEnv+"="+bug)
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("the suite passed a Frontier with defect %s, want failures of %v; output:\n%s", bug, checks, out)
			}
			if _, ok := err.(*exec.ExitError); !ok {
				t.Fatalf("running the suite on a Frontier with defect %s: %v", bug, err)
			}
			for _, check := range checks {
				fail := "--- FAIL: TestBrokenFrontier/" + check + " "
				if !bytes.Contains(out, []byte(fail)) {
					t.Errorf("the suite on a Frontier with defect %s: no %q in its output, want it to fail there; output:\n%s", bug, fail, out)
				}
			}
			t.Logf("defect %s: %s", bug, firstFailure(out))
		})
	}
}

// failLine matches a failure message of the testing package: "file.go:12: ...".
var failLine = regexp.MustCompile(`(?m)^\s+\w+\.go:\d+: .*$`)

// firstFailure returns the first failure message in a test's output.
func firstFailure(out []byte) string {
	return strings.TrimSpace(string(failLine.Find(out)))
}

// TestFuzzFailsBrokenFrontiers checks that Fuzz fails Frontiers that break
// the contract: for each deliberate defect of fuzzBugs, one of the first
// 40 seeds must fail on the reference Frontier with that defect.
func TestFuzzFailsBrokenFrontiers(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Fuzz once per defect")
	}
	const seeds = 40
	for _, bug := range fuzzBugs {
		t.Run(bug, func(t *testing.T) {
			t.Parallel()
			open := func(t *testing.T, path string) crawl.Frontier { return openRefT(t, path, bug) }
			seed, failure, ok := firstFailingSeed(t, open, FuzzOptions{Durable: true}, seeds)
			if !ok {
				t.Fatalf("Fuzz passed seeds 1 to %d on a Frontier with defect %s, want a failure", seeds, bug)
			}
			t.Logf("defect %s: seed %d: %s", bug, seed, strings.SplitN(failure, "\n", 2)[0])
		})
	}
}
