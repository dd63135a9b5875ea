package crawl

import (
	"context"
	"errors"
	"strings"
	"time"
)

// Errors a Frontier returns; test for them with errors.Is.
var (
	// ErrLeaseLost means a lease is no longer its holder's: it expired
	// and was taken back (and maybe given to another worker or process),
	// or it was already acked or put back. The holder must abandon the
	// URL: its fetch, if any, is somebody else's now.
	ErrLeaseLost = errors.New("lease lost")
	// ErrFrontierClosed means the Frontier was closed.
	ErrFrontierClosed = errors.New("frontier closed")
)

// RequestKind says what a Request's URL is fetched for.
type RequestKind uint8

const (
	// PageRequest is a page of the crawl: it gets a Result, and its links
	// are followed.
	PageRequest RequestKind = iota
	// SitemapRequest is a sitemap file: it gets a Result, and the URLs it
	// lists are queued as pages (or, for a sitemap index, as sitemaps).
	SitemapRequest
	// RobotsRequest is a host's /robots.txt, which a Frontier hands out
	// before any other URL of a new host when Policy.Robots is set. It
	// gets no Result and is not counted as pending: acking it with
	// Outcome.Rules opens the host.
	RobotsRequest
	// ResourceRequest is a requisite of a page (WithRequisites) or a
	// reference (WithReferences): it gets a Result, and its links are not
	// followed, but for the requisites a stylesheet imports.
	ResourceRequest
	// CheckRequest is a link the crawl does not follow (another host, out
	// of scope), fetched only to learn its status (WithCheckExternal):
	// HEAD, or GET with the body discarded where HEAD is refused.
	CheckRequest
)

// Request is a URL as a Frontier keeps it, from the moment it is admitted
// until it is finished: the chapter's (url, max_redirect) queue item, with
// what the crawl has done to it so far. A durable Frontier keeps every
// field.
type Request struct {
	// URL is the absolute URL, normalised by the crawler; it is also the
	// key the seen set dedupes on, and HostKey(URL) is its host's key.
	URL string
	// Wire is the URL as the crawler sends it, when that differs from
	// URL: the URL Standard's serialisation of the first spelling the
	// crawl met (URL is its RFC 3986 section 6.2.2 normal form, so that
	// "/%7Euser" and "/~user" are one URL). Empty means URL is sent as
	// it is. A Frontier keeps it with the Request and hands it back as
	// it was admitted; it never dedupes on it.
	Wire      string
	Kind      RequestKind
	Depth     int  // 0 for roots, one more per link followed
	Redirects int  // redirects still allowed from here
	CrossHost bool // a redirect chain from another host led here
	Tries     int  // attempts already made
	// First is when the first attempt started; zero before it.
	First time.Time
	// Referrer is the URL of the page (or sitemap, or redirect) where the
	// crawl found this URL; empty for roots and added URLs.
	Referrer string
}

// Lease is a Request taken from a Frontier by Take. It is its holder's
// until it is ended by Ack or Retry, or until the Frontier takes it back
// after Policy.LeaseTerm without an Extend.
type Lease struct {
	Request
	// ID is the Frontier's handle of the lease, unique among the leases
	// it has given out.
	ID string
	// Rules is what the robots.txt of the URL's host said, as it was
	// acked with Outcome.Rules; nil when robots.txt is not obeyed. The
	// crawler checks the URL against it before it fetches anything.
	Rules *HostRules
}

// HostRules is what a host's robots.txt said, as the crawler found it
// when it fetched it: what a Frontier keeps for the host and hands back
// with each Lease of the host.
type HostRules struct {
	// Robots is the body of the robots.txt (at most 500 KiB); nil when
	// the host has none, which allows every URL.
	Robots []byte
	// Denied, when not empty, says why the robots.txt could not be
	// fetched (a 5xx, a 429 or a network error after every try): every
	// URL of the host is disallowed, with this reason.
	Denied string
	// Delay is the host's Crawl-delay, capped at MaxCrawlDelay: the
	// Frontier spaces the starts of the host's requests by the larger of
	// Delay and Policy.HostDelay.
	Delay time.Duration
}

// crawlDelay returns the Crawl-delay of h, 0 for none (h nil: robots.txt
// not obeyed, or none).
func (h *HostRules) crawlDelay() time.Duration {
	if h == nil {
		return 0
	}
	return h.Delay
}

// Outcome is how a leased Request ended, as Ack records it.
type Outcome struct {
	// Result is the URL's Result; nil for a RobotsRequest. A Frontier
	// that keeps Results (see ResultStore) stores it in the same step as
	// the ack.
	Result *Result
	// Links are the new Requests the URL led to: the links of a page,
	// the URLs of a sitemap, a redirect's target, a host's sitemaps.
	// They are admitted as Push admits them, before or atomically with
	// the ack, so that Join never sees the crawl idle while a page's
	// children are on their way.
	Links []Request
	// Rules, for a RobotsRequest, opens its host: the host's URLs are
	// handed out from now on, each Lease with these rules.
	Rules *HostRules
	// Unsent means that no request was sent for the lease (robots.txt
	// disallowed the URL): the host's delay is not charged for it, and
	// it does not count towards Policy.MaxPages.
	Unsent bool
	// Refused counts the links (and redirect target) of the URL that a
	// limit kept out of the queue, by the names of Stats.Refused, for a
	// StatsStore to add to the crawl's Stats; the crawler sets it only
	// for a StatsStore, and leaves it nil when there were none.
	Refused map[string]int
}

// Policy is what a Run asks of its Frontier: the per-host politeness the
// Frontier enforces (across processes, for a shared one), the page budget,
// and what identifies the crawl.
type Policy struct {
	// HostWorkers is the most leases of one host out at once, robots.txt
	// included; at least 1.
	HostWorkers int
	// HostDelay is the least time between the starts of two requests to
	// one host (each pause drawn from [d/2, 3d/2], d the larger of it and
	// the host's HostRules.Delay, and never under that Crawl-delay: a
	// site gets the delay it asked for in full); 0 for none.
	HostDelay time.Duration
	// Robots means that a RobotsRequest is handed out first for each new
	// host, and no other URL of the host until it is acked.
	Robots bool
	// RobotsMaxAge, under Robots, is how long a host's rules are kept:
	// once they are that old (counted from the first lease of the host's
	// that went by them, so that each RobotsRequest lets one go, whatever
	// the host's delay), the host's next lease is its RobotsRequest once
	// more, as for a new host,
	// and no other URL of the host goes until it is acked (RFC 9309,
	// section 2.4, has a day at most). 0 keeps them for the whole Run (a
	// shared Frontier, for the whole crawl).
	RobotsMaxAge time.Duration
	// MaxPages is the budget of requests: once MaxPages Requests of any
	// kind but RobotsRequest (pages, sitemaps, requisites, references,
	// external checks) have been taken for their first attempt and not
	// acked Unsent, no new one is handed out (retries are); 0 for no
	// budget.
	MaxPages int
	// LeaseTerm is how long a lease lasts without an Extend before the
	// Frontier takes it back and hands its Request out again; 0 means
	// leases never expire. The crawler extends the leases it holds every
	// LeaseTerm/3.
	LeaseTerm time.Duration
	// Roots are the Run's roots, normalised, and Scope the options that
	// decide which URLs the crawl admits. A durable Frontier refuses to
	// resume a crawl started with other Roots or Scope.
	Roots []string
	Scope string
}

// Counts is a snapshot of a Frontier.
type Counts struct {
	// Queued is the number of Requests admitted and not taken, those
	// waiting to be retried included.
	Queued int
	// Leased is the number of leases out.
	Leased int
	// Done is the number of Requests acked, over the whole crawl for a
	// durable Frontier (earlier Runs on its state included).
	Done int
	// Pages is the number of Requests of any kind but RobotsRequest
	// taken for their first attempt and not acked Unsent: what
	// Policy.MaxPages counts. A
	// Request put back (by Retry or the take-back of an expired lease)
	// and taken again is not counted again.
	Pages int
}

// Frontier is where a crawl's URLs wait: the seen set, the queue and the
// per-host schedule together, so that "is it new?" and "queue it" are one
// step, and "whose turn is it?" is decided where every worker (of every
// process, for a shared Frontier) asks it. The in-memory Frontier that Run
// uses by default is one; WithFrontier installs another, such as a
// persistent one whose crawl survives a crash, and the package frontiertest
// checks that a Frontier keeps this contract.
//
// The accounting is the chapter's joinable queue's: pending is the number
// of Requests admitted and not acked, whether queued, leased or waiting to
// be retried (robots.txt requests aside), and Join waits for it to be 0.
// Push and Ack's Links raise it by the Requests that are new; Ack lowers it
// by one; Retry and the take-back of an expired lease leave it as it is.
//
// What a Frontier decides and what the crawler does: the Frontier dedupes,
// queues, leases, and enforces Policy (host workers, host delay, pauses,
// robots.txt first, the page budget) at Take, so that a shared Frontier
// holds them across processes; it keeps the robots.txt rules of each host
// and hands them out with the leases. The crawler normalises URLs, decides
// scope, fetches, checks each URL against its lease's Rules, decides
// retries and their times, and extends the leases it holds.
//
// Every method is safe for concurrent use, from many goroutines and, for a
// shared Frontier, many processes. A method that waits (Take, Join, and a
// durable or shared Frontier's calls that wait for a disk or a server)
// returns promptly with ctx.Err() when ctx is done; a durable Frontier's
// state is then as if the call had not been made or had completed, never
// between. A shared Frontier may first complete a call it had already sent,
// within a bound it documents (redisfrontier: up to 5 s past ctx's end), and
// a Take whose lease the server made by then returns it rather than
// ctx.Err(), so that no lease is left out with no holder. The crawler ends
// its leases with a ctx that outlives the Run's by 5 s, so that a cancelled
// Run still records what its workers did, and a frontier that cannot answer
// then does not hold the Run's end for good. After Close, every method
// returns ErrFrontierClosed, and a Take or Join blocked when Close is called
// returns it too.
//
// Within a host, new Requests are handed out in the order they were
// admitted; retries by their time. A RobotsRequest is never pending: it is
// not in Counts.Queued nor Counts.Done (it is in Counts.Leased while out),
// and Join does not wait for it.
//
// A durable Frontier keeps, across Close and a crash of its process: the
// seen set, the queue, the Requests leased (queued again when the Frontier
// is opened anew, or, by a shared Frontier, at its Close), the retries with their times and tries, the rules of
// each host, and, if it is a ResultStore, every Result acked.
type Frontier interface {
	// Start readies the Frontier for a Run under p, before any other
	// call of the Run. A durable Frontier whose state was made under
	// other Roots or Scope returns an error that says so, and is left as
	// it was. Under p.Robots, a Frontier may then ask each host whose
	// rules it keeps for its robots.txt once more, before the host's
	// next Request, as for a new host: MemoryFrontier and boltfrontier
	// do, so that each Run goes by the robots.txt of its own time (and
	// one found unavailable is tried again); a shared Frontier, whose
	// Start is one process's joining the crawl, may keep them.
	Start(ctx context.Context, p Policy) error

	// Push admits each Request whose URL was never admitted before (nor
	// earlier in the same call) and returns how many were new. Admitted
	// Requests are pending at once. Pushing a URL seen before is not an
	// error, and does nothing.
	Push(ctx context.Context, reqs ...Request) (admitted int, err error)

	// Take leases a Request that may be fetched now, blocking until
	// there is one or ctx is done: one whose host has fewer than
	// Policy.HostWorkers leases out and whose delay or pause has passed,
	// and, for a new host under Policy.Robots (or one whose rules are
	// Policy.RobotsMaxAge old), its RobotsRequest first.
	// A Request waiting to be retried is not handed out before its time.
	// Hosts take turns (the crawl's frontiers in runs, as the
	// repository's docs/politeness-and-safety.md says). While the page
	// budget is spent, only retries (and
	// Requests taken back from expired leases) are handed out, with the
	// robots.txt of a host that has such a Request and no rules yet.
	Take(ctx context.Context) (*Lease, error)

	// Ack ends a lease with o: the Request is finished (unless it is a
	// RobotsRequest, which was never pending), o.Links are admitted and
	// o.Result stored, in one step. It returns how many of o.Links were
	// new, and sets o.Result.NumNewURLs to that number before the Result
	// is stored (the crawler counts each of o.Links in o.Result.NumURLs,
	// a redirect's target as its one link, so the one never exceeds the
	// other). A lease that is no longer its holder's returns
	// ErrLeaseLost; its o.Links are admitted all the same (and
	// o.Result.NumNewURLs set), and nothing else changes: no Result is
	// stored. A RobotsRequest acked with a nil o.Rules opens its host
	// with no rules: its leases carry nil Rules, which allows every URL.
	Ack(ctx context.Context, l *Lease, o Outcome) (admitted int, err error)

	// Retry ends a lease by putting its Request back, as l.Request is now
	// (the caller has counted its tries), to be taken again no earlier
	// than at. A zero at puts it back to be taken at once: so a Run that
	// is cancelled gives back the leases it holds, unfinished. It returns
	// ErrLeaseLost as Ack does.
	Retry(ctx context.Context, l *Lease, at time.Time) error

	// Extend renews a lease for another Policy.LeaseTerm (with a term of
	// 0, leases never expire and Extend only checks that the lease is
	// out). It returns ErrLeaseLost when the lease was taken back or
	// ended: its holder must then abandon the URL.
	Extend(ctx context.Context, l *Lease) error

	// Pause holds back every request to the host whose HostKey is host
	// until the given time (a 429 or 503 with Retry-After).
	Pause(ctx context.Context, host string, until time.Time) error

	// Join blocks until nothing is pending, or until the budget of
	// Policy.MaxPages is spent and no lease but a RobotsRequest's is out
	// and no Request waits to be retried (what is left is Counts.Queued, never taken); or until ctx
	// is done.
	Join(ctx context.Context) error

	// Counts returns a snapshot of the Frontier's counters.
	Counts(ctx context.Context) (Counts, error)

	// Close releases the Frontier's resources; a durable Frontier
	// commits what it holds first. Leases still out stay leased: they
	// are handed out again when the Frontier is opened anew. A shared
	// Frontier may instead put them back at Close, for the other
	// processes to take at once (redisfrontier does).
	Close() error
}

// AckTaker is a Frontier that acks a lease and leases the acker's next
// Request in one step: a shared Frontier, whose every call is a round trip
// to its server, makes the two one. The crawler's workers ack with
// AckTake when their Frontier has it, and call Take only when it returned
// no lease.
type AckTaker interface {
	// AckTake is Ack(ctx, l, o), then a Take that does not wait: it
	// returns a lease as Take would, or nil when it has none for the
	// caller in that step (none may start now, the Ack failed, take was
	// done before the lease was handed out, and a lease made then went
	// back as if never taken; or the Frontier does not lease in that
	// step, as redisfrontier's crawls on several shards do not). The
	// caller then calls Take.
	AckTake(ctx, take context.Context, l *Lease, o Outcome) (admitted int, next *Lease, err error)
}

// ResultStore is a Frontier that keeps the Result of every Request it
// acked, so that a crawl resumed from its state reports on the whole
// crawl, earlier Runs included.
type ResultStore interface {
	Frontier
	// Results calls yield for each stored Result, in no particular
	// order, until yield returns false or ctx is done. A Result comes
	// back as it was acked, its Err as Result.UnmarshalBinary restores
	// it: the same text, and errors.Is still matches the sentinel error
	// of its FailKind.
	Results(ctx context.Context, yield func(Result) bool) error
}

// StatsStore is a Frontier that keeps the Stats of the whole crawl, counted
// in the same step as each ack: a Frontier shared by several processes is
// one, so that each process's Run reports the whole crawl, not its own
// share of it. A Run on a StatsStore returns these Stats, with its own
// Todo, Budget, Workers and Elapsed.
type StatsStore interface {
	Frontier
	// Stats returns the counters of every Result acked over the whole
	// crawl, counted as (*Stats).Add counts them, and the refusals acked
	// with them (Outcome.Refused). Its Todo, Budget, Workers and Elapsed
	// are zero.
	Stats(ctx context.Context) (Stats, error)
}

// HostKey returns the key of the host of an absolute normalised URL, which
// per-host politeness applies to: its scheme, host and port
// ("https://example.com:8443").
func HostKey(url string) string {
	i := strings.Index(url, "://")
	if i < 0 {
		return url
	}
	if j := strings.IndexAny(url[i+3:], "/?#"); j >= 0 {
		return url[:i+3+j]
	}
	return url
}
