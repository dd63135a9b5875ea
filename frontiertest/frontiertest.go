// Package frontiertest checks that a crawl.Frontier keeps the contract
// documented on crawl.Frontier, the way testing/fstest.TestFS checks an
// fs.FS and golang.org/x/net/nettest.TestConn checks a net.Conn.
//
// The author of a backend calls Run from a test of the backend's package,
// with a function that opens a fresh, empty Frontier:
//
//	func TestMyFrontier(t *testing.T) {
//		frontiertest.Run(t, func(t *testing.T) crawl.Frontier {
//			f := myfrontier.Open(...)
//			t.Cleanup(func() { f.Close() })
//			return f
//		})
//	}
//
// A durable backend's author calls RunDurable as well, which closes a
// Frontier, opens it anew on the same state and checks what it kept.
//
// Run checks, each in a subtest of its own:
//
//   - Dedupe: a URL seen before (earlier in the same Push, in another Push,
//     after it was acked, among Ack's Links) is not admitted again, and
//     the admitted counts and Result.NumNewURLs are right.
//   - Join: Join blocks while a Request is queued, leased or waiting to be
//     retried, and while the children admitted by an Ack are; it returns
//     once the last lease is acked, and returns ctx.Err() when its ctx is
//     done; Counts are right at each step.
//   - Concurrent: 64 goroutines take and ack at once (run it with -race):
//     every URL is acked exactly once, no lease is held by two at once,
//     no host has more than Policy.HostWorkers leases out, Join returns
//     and Counts end at the number of URLs.
//   - Retry: a Request put back is not handed out before its time, comes
//     back as it was put back (Tries counted by the caller), stays
//     pending, and comes back at once for a zero time; Ack, Retry and
//     Extend of a lease already ended return ErrLeaseLost, and an Ack of
//     one admits its Links all the same.
//   - HostWorkers, Turns, HostDelay, Pause, Unsent: the per-host schedule.
//     Never more than Policy.HostWorkers leases of a host out, while the
//     other hosts are served; hosts take turns; the starts of a host's
//     requests are at least half of Policy.HostDelay apart (the delay is
//     drawn from [d/2, 3d/2]); Pause holds a host back; an Unsent ack
//     does not charge the host's delay.
//   - Robots: under Policy.Robots a host's RobotsRequest goes first and
//     alone, its Retry brings it back later, its Outcome.Rules come back
//     with every Lease of the host (and their Delay spaces its requests),
//     and it is never pending.
//   - PageBudget: no more than Policy.MaxPages first attempts are handed
//     out (Unsent ones aside), retries still are, and Join returns once
//     they are acked with URLs still queued.
//   - LeaseExpiry: a lease not extended is handed out again after
//     Policy.LeaseTerm, and its old holder's Ack, Retry and Extend return
//     ErrLeaseLost; a lease extended every third of its term is kept.
//   - Close: a Take blocked in Close returns ErrFrontierClosed, and so
//     does every method after Close.
//   - Results: for a crawl.ResultStore, every Result acked is given back.
//
// Timing is checked only by lower bounds (a request not handed out before
// its time) and by deadlines of several seconds for what should happen at
// once, so that a loaded machine does not fail a correct Frontier. The
// whole of Run takes a few seconds.
package frontiertest

import (
	"testing"

	"github.com/asyncrawl/crawl"
)

// Run checks that the Frontiers open returns keep the crawl.Frontier
// contract, in subtests of t named after what they check (see the package
// documentation); a failure says what was done, what the Frontier did and
// what it should have done.
//
// Each subtest calls open once, with its own *testing.T, for a fresh,
// empty Frontier, which it starts with a Policy of its own. open must
// register with t.Cleanup whatever releases the Frontier (and, for a
// durable one, its state). The subtest that checks Close calls Close
// itself, once; no other calls it. So the cleanup may find the Frontier
// closed already, and must ignore the ErrFrontierClosed a second Close
// returns. open may call t.Fatal (or t.Skip) if it cannot make a Frontier.
//
// Run calls open from one subtest at a time; the subtests are not
// parallel.
func Run(t *testing.T, open func(t *testing.T) crawl.Frontier) {
	t.Helper()
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			f := open(t)
			if f == nil {
				t.Fatal("open returned a nil Frontier")
			}
			c.check(t, f)
		})
	}
}

// RunDurable checks that a durable Frontier keeps its state across Close
// and a new opening, as the crawl.Frontier contract says: the seen set,
// the queue, the Requests leased at Close (queued again), the retries
// with their times and tries, the rules of each host, Counts.Done, and,
// for a crawl.ResultStore, every Result acked, with its error still
// matching its sentinel error (crawl.ErrDisallowed, ...) under errors.Is;
// and that Start refuses other Roots or Scope and leaves the state as it
// was. It checks nothing else: call Run for the rest.
//
// Each subtest makes a state path in a t.TempDir of its own, and calls open
// several times with it: open must open the Frontier kept at path,
// creating an empty one if path does not exist (path names a file or a
// directory, as the backend likes; its parent directory exists). The
// subtest calls Close on each Frontier it opened, once, before it opens
// the next; open's cleanup, as for Run, must tolerate a Frontier closed
// already.
func RunDurable(t *testing.T, open func(t *testing.T, path string) crawl.Frontier) {
	t.Helper()
	for _, c := range durableChecks {
		t.Run(c.name, func(t *testing.T) {
			c.check(t, open)
		})
	}
}

// checks are Run's subtests, in the order Run runs them.
var checks = []struct {
	name  string
	check func(t *testing.T, f crawl.Frontier)
}{
	{"Dedupe", checkDedupe},
	{"Join", checkJoin},
	{"JoinContext", checkJoinContext},
	{"Concurrent", checkConcurrent},
	{"Retry", checkRetry},
	{"LeaseLost", checkLeaseLost},
	{"HostWorkers", checkHostWorkers},
	{"Turns", checkTurns},
	{"HostDelay", checkHostDelay},
	{"Pause", checkPause},
	{"Unsent", checkUnsent},
	{"Robots", checkRobots},
	{"RobotsDelay", checkRobotsDelay},
	{"PageBudget", checkPageBudget},
	{"PageBudgetUnsent", checkPageBudgetUnsent},
	{"LeaseExpiry", checkLeaseExpiry},
	{"LeaseExtend", checkLeaseExtend},
	{"Close", checkClose},
	{"Results", checkResults},
}

// durableChecks are RunDurable's subtests.
var durableChecks = []struct {
	name  string
	check func(t *testing.T, open func(t *testing.T, path string) crawl.Frontier)
}{
	{"Reopen", checkReopen},
	{"OtherRootsOrScope", checkOtherRootsOrScope},
}
