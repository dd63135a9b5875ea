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
// Run checks, each in a subtest named as below:
//
//   - Dedupe: a URL seen before (earlier in the same Push, in another Push,
//     while leased, after it was acked, among an Ack's Links) is not
//     admitted again; the admitted counts, Result.NumNewURLs and Counts are
//     right; a Take gives the Request back as it was pushed.
//   - Join: Join blocks while a Request is queued, leased or waiting to be
//     retried, and while the children an Ack admitted are pending; it
//     returns once the last lease is acked; Counts are right at each step.
//   - JoinContext: Join and a blocked Take return ctx.Err() when their ctx
//     is done.
//   - Concurrent: 64 goroutines take, put back and ack at once (run it with
//     -race): every URL is acked exactly once, no URL is leased to two
//     holders at once, no host has more than Policy.HostWorkers leases
//     out, Join returns after the last Ack, and Counts end at the number
//     of URLs.
//   - Retry: a Request put back comes back as it was put back (its Tries
//     counted by the caller), not before its time, at once for a zero
//     time, and stays pending meanwhile.
//   - LeaseLost: Ack, Retry and Extend of a lease already acked or put back
//     return ErrLeaseLost and change nothing, except that such an Ack
//     admits its Links all the same.
//   - HostWorkers: never more than Policy.HostWorkers leases of a host out,
//     and a Take is served by another host meanwhile; slot by slot, as
//     leases are acked.
//   - LeaseIDs: no lease's ID is one handed out before, across Starts too.
//   - Turns: hosts take turns: a host with many URLs queued does not hold
//     back another host's.
//   - Order: a host's new Requests are handed out in the order they were
//     admitted (by one Push, by several, by an Ack's Links; a URL pushed
//     again keeps its place), other hosts' URLs and a retry of the host
//     going between; its retries due at once, by their times. How retries
//     and new Requests interleave is not checked: the contract does not
//     say.
//   - HostDelay: the starts of a host's requests are at least half of
//     Policy.HostDelay apart (its pauses are drawn from [d/2, 3d/2]).
//   - Pause: Pause holds a host back until its time.
//   - RobotsNilRules: a host whose robots.txt was acked with nil Rules
//     stays open: its robots.txt is not asked for again in the Run, and at
//     most once more after a new Start.
//   - PauseUnsent: a Pause made while a lease of the host is out still
//     holds it back after that lease is acked Unsent (which gives back the
//     delay its Take charged, not the pause).
//   - Unsent: an Unsent ack does not charge the host's delay (a host with a
//     10s delay gives out URL after URL acked Unsent) nor count in
//     Counts.Pages.
//   - Robots: under Policy.Robots a new host's RobotsRequest goes first and
//     alone; Counts count it neither queued nor pending (JoinRobots
//     checks that Join does not wait for it); its Retry brings it back,
//     not before its time; once acked, every Lease of the host carries the
//     HostRules it was acked with.
//   - JoinRobots: Join does not return while a robots.txt lease is the
//     only lease out and its host's URLs wait for it (a Join with a
//     deadline gets context.DeadlineExceeded), nor once it is acked and
//     they are still queued; and it does not wait for a robots.txt lease
//     itself: with the page budget spent and no other lease out, it
//     returns while one is out.
//   - RobotsMaxAge: under Policy.RobotsMaxAge a host's robots.txt is
//     asked for again once its rules are that old, counted from the first
//     URL that went by them: not before (neither at once after its ack nor
//     at a Take 300ms short of the age), and at the first Take begun 300ms
//     past the age; and alone (none of the host's other URLs goes until it
//     is acked); its URLs then carry the new rules. An age off by less than
//     300ms is not caught.
//   - RobotsDelay: the Delay of a host's HostRules spaces its requests,
//     no two starts closer than it (a Crawl-delay is a floor).
//   - PageBudget: no more than Policy.MaxPages first attempts are handed
//     out, retries still are, and Join returns once they are acked, URLs
//     still queued.
//   - PageBudgetUnsent: Unsent acks do not count towards Policy.MaxPages.
//   - PageBudgetPassedOver: a host passed over while the budget was spent
//     is served again once an Unsent ack gives a page back.
//   - LeaseExpiry: a lease not extended is handed out again after
//     Policy.LeaseTerm, and its old holder's Ack, Retry and Extend return
//     ErrLeaseLost, its Ack's Links still admitted.
//   - LeaseExtend: a lease extended every third of its term is kept.
//   - Close: a Take and a Join blocked when Close is called (a lease out,
//     so that the Take has nothing to hand out and the Join a Request
//     pending) each return ErrFrontierClosed within 10 s of Close, and
//     every method called after Close returns it.
//   - Results: a crawl.ResultStore gives back every Result acked (skipped
//     for a Frontier that is not one).
//
// Timing is checked by lower bounds (a request not handed out before its
// time) and, for Policy.RobotsMaxAge, by what a Take begun well past the
// age hands out; what should happen at once is given several seconds, so
// that a loaded machine does not fail a correct Frontier; a Frontier that
// blocks for good fails the check instead of hanging the test. Run takes
// about fifteen seconds with the race detector.
//
// # Fuzz
//
// Fuzz checks what falls between those cases: random sequences of Push,
// Take, Ack (with Links, Unsent, Refused and a Result; for a
// crawl.AckTaker, AckTake in place of half of the Acks run alone and not
// cut by their ctx, its lease, if any, checked as Take's), Retry, Extend,
// Pause, Join and Counts, under a random Policy (one to three
// HostWorkers, with or without robots.txt, a page budget, a LeaseTerm of
// 20 to 80ms, a HostDelay), on random URLs (of one to three hosts of 4 to
// 11 paths, at most 33 in a run; or, for one seed in eight, those
// divisible by 8, of five to eight hosts of 30 to 60 paths, with Pushes of
// up to 12 Requests and Acks of up to 8 Links, so that a run admits some
// 40 to 110 distinct URLs and a defect that shows only once a Frontier
// holds a few dozen is met), some of them run on several goroutines at
// once, some with a context done before the call or a few
// hundred microseconds into it, a holder's own edits of its Lease, waits
// past the lease term, the end of a Run (its leases put back) and the
// Start of another under another Policy, and, for a durable Frontier,
// Close and a new opening (FuzzOptions.Restart may restart a server
// meanwhile, FuzzOptions.Crash drop the Frontier without Close as a crash
// would, and FuzzOptions.Save and Rollback bring back an older state).
// After each step it compares the Frontier with a reference
// model of the contract:
//
//   - Push and an Ack's Links admit exactly the URLs never admitted, even
//     when the Ack's lease was lost, and Result.NumNewURLs says how many;
//   - Take hands out only admitted URLs, never one acked, never to two
//     holders at once (a URL is handed out again only once its lease's
//     term may have passed), the Request as pushed or put back, Wire
//     included (a lease taken back comes back as it was leased, not as
//     its holder has edited it since), not before its Retry's time nor
//     before its host's Pause ends, with at most Policy.HostWorkers of a
//     host out, its host's robots.txt first and alone under
//     Policy.Robots, each lease with the host's Rules, no first attempt
//     while the budget is spent (and then a robots.txt only for a host
//     with a retry), each lease with an ID new in the run, a host's new
//     Requests in the order they were admitted and its retries by their
//     times (but for URLs admitted, or handed out, by calls made at once,
//     whose order is not known, retry times less than 3ms apart, and,
//     under a lease term, the URLs queued when a Take was cut by its
//     ctx: one of them may have been leased for it and come back taken
//     back, a retry);
//   - Take hands something out within 10 s whenever the model is sure
//     that something may be fetched at once, and nothing when it is sure
//     that nothing may;
//   - Ack, Retry and Extend succeed on a lease held and return
//     ErrLeaseLost for one ended (acked, put back, taken back, or held at
//     a Close);
//   - Join returns when nothing is left (or the budget's rule holds,
//     robots.txt leases out or not: a RobotsRequest is never pending) and
//     blocks otherwise;
//   - Counts: Done exactly, Queued and Leased exactly but for the leases
//     that may have been taken back, Pages exactly between new Runs and
//     openings;
//   - a call cut by its context leaves the state as if it had not been
//     made or had completed: a Push, Ack or Retry made again tells which
//     (a split one fails), and Counts shows a Take that returned an error
//     leaving no lease out;
//   - at the end, everything left is taken and acked until Join returns
//     (robots.txt leases kept, when leases never expire, while Takes
//     still hand something out, so that Join is tried with only them out),
//     a ResultStore gives back exactly one Result for each URL acked with
//     one, and after Close every method returns ErrFrontierClosed.
//
// A backend's test calls it as RunDurable is called, with FuzzOptions:
//
//	frontiertest.Fuzz(t, func(t *testing.T, path string) crawl.Frontier {
//		return openMineAt(t, path)
//	}, &frontiertest.FuzzOptions{Durable: true})
//
// It runs seeds 1 to DefaultFuzzSeeds (40), each a run of 60 operations;
// FRONTIERTEST_SEEDS=N in the environment runs seeds 1 to N, and
// FRONTIERTEST_SEED=S runs seed S alone; FRONTIERTEST_FIRST_SEED=F starts
// the N seeds at F instead of 1, so that several processes can share a
// long run. Seeds gives a randomized test of your own the seeds these
// variables choose (the repository's TestAheadRandom and
// TestMemoryFrontierBudgetRandom take theirs so).
//
// A failing run prints its seed, the failure, and the shortest list of
// operations found (by removing operations from the list of the seed
// while it still fails the same check) that fails it. A run is a
// function of its seed, but the Frontier's answers depend on timing, so a
// failure may not come back on every run of its seed.
//
// What Fuzz cannot check: timing other than by lower bounds (a delay's
// length, turns between hosts and Policy.RobotsMaxAge, which it never
// sets, are Run's);
// lease terms other than on the real clock (there is no fake clock: the
// model accepts either answer once a term may have passed, and cuts no
// Ack or Retry under a LeaseTerm, where a cut and a lost lease look
// alike); a crash that may lose calls the Frontier answered for (Crash
// expects none lost: a backend that commits its acks later, as
// boltfrontier does, is only closed and opened anew), and a kill -9 of
// the test's own process; what a reopening need not keep (pauses,
// a robots.txt's time and tries, which Requests count towards the budget
// again); Policy.Robots turned off by a new Run (it is only turned on); a
// StatsStore's Stats; a defect that shows only once a Frontier holds more
// than about a hundred URLs; calls blocked when Close is called (Run's
// Close checks a Take and a Join).
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
	{"LeaseIDs", checkLeaseIDs},
	{"Turns", checkTurns},
	{"Order", checkOrder},
	{"HostDelay", checkHostDelay},
	{"Pause", checkPause},
	{"PauseUnsent", checkPauseUnsent},
	{"RobotsNilRules", checkRobotsNilRules},
	{"RobotsMaxAge", checkRobotsMaxAge},
	{"Unsent", checkUnsent},
	{"Robots", checkRobots},
	{"JoinRobots", checkJoinRobots},
	{"RobotsDelay", checkRobotsDelay},
	{"PageBudget", checkPageBudget},
	{"PageBudgetUnsent", checkPageBudgetUnsent},
	{"PageBudgetPassedOver", checkPageBudgetPassedOver},
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
