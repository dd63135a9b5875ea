package main

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/asyncrawl/crawl"
)

// reach tells whether any root of the crawl got a response, so that a
// crawl of sites that are all down does not exit 0. A root got a response
// when it, or the URL its redirects led to, received an HTTP response of
// any status: a redirect the crawl did not follow (out of scope, past
// -max_redirect) is one. A root not requested because of robots.txt
// (unavailable, or disallowing it) got none. It is safe for concurrent
// use.
type reach struct {
	mu       sync.Mutex
	answered bool // some root got a response: nothing more to keep
	// Until then, what became of the URLs of the roots' redirect chains:
	// every Result is one of them, or of a sitemap, while no root
	// answered.
	roots     []string          // the URLs of the roots' Results, in order
	redirects map[string]string // URL → where it redirects
	fails     map[string]error  // URL → why it got no response
	// The statuses of the probes (a root host's /sitemap.xml the crawler
	// tried on its own; see crawl.Result.Probe) and of the checks
	// (-check_external; crawl.Result.Check), which are no root's
	// responses: taken out of the crawl's counters' statuses.
	probes map[int]int
}

func newReach() *reach {
	return &reach{redirects: map[string]string{}, fails: map[string]error{}, probes: map[int]int{}}
}

// result counts r.
func (a *reach) result(r *crawl.Result) {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case a.answered:
		return
	case r.Probe():
		// No root, and its response is none of a root's.
		if r.Status != 0 {
			a.probes[r.Status]++
		}
		return
	case r.Check():
		// Checked, not followed (-check_external): what came of it is
		// no root's answer; a root's redirect to it, not followed, was
		// (the chain ends at the redirect: see unanswered).
		if r.Status != 0 {
			a.probes[r.Status]++
		}
		return
	case r.Status != 0 && (r.NextURL == "" || r.Err != nil):
		a.answered = true
		a.roots, a.redirects, a.fails = nil, nil, nil
		return
	case r.NextURL != "":
		a.redirects[r.URL] = r.NextURL
	default:
		a.fails[r.URL] = r.Err
	}
	if r.Referrer == "" && r.Depth == 0 {
		a.roots = append(a.roots, r.URL)
	}
}

// unanswered returns, when no root got a response, a line naming each
// root and why; "" when one did, or when that cannot be told. stats are
// the crawl's: a response counted there that this process did not see (a
// crawl shared through -redis, or resumed with -state and -format jsonl)
// is one too. roots are the command line's, named when this process got
// no Result of a root (another process of a shared crawl did) and the
// crawl's counters hold no response at all.
func (a *reach) unanswered(stats *crawl.Stats, roots []string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.answered {
		return ""
	}
	if len(a.roots) == 0 {
		for status, n := range stats.StatusCounts {
			if n > a.probes[status] {
				return ""
			}
		}
		if stats.Done == 0 {
			return "" // nothing done: nothing to tell by
		}
		return strings.Join(roots, ", ") + ": no URL of the crawl got a response (another process, or an earlier run, took the roots: its report says why)"
	}
	for status, n := range stats.StatusCounts {
		if n > a.probes[status] && (status < 300 || status > 399) {
			return ""
		}
	}
	var b strings.Builder
	for i, root := range a.roots {
		u := root
		seen := map[string]bool{}
		for !seen[u] {
			seen[u] = true
			next, ok := a.redirects[u]
			if !ok {
				break
			}
			u = next
		}
		err, ok := a.fails[u]
		if !ok {
			// The chain ends in a redirect whose target got no
			// Result here: not followed, so the redirect was the
			// answer; or another process fetched it.
			return ""
		}
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(root)
		if u != root {
			b.WriteString(" (redirected to " + u + ")")
		}
		b.WriteString(": " + why(err))
	}
	return b.String()
}

// any reports whether some URL got a response: this process saw one, or
// the crawl's counters hold one.
func (a *reach) any(stats *crawl.Stats) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.answered {
		return true
	}
	for status, n := range stats.StatusCounts {
		if n > a.probes[status] {
			return true
		}
	}
	return false
}

// why says in a few words why a URL got no response.
func why(err error) string {
	var ru *crawl.RobotsUnavailableError
	switch {
	case errors.As(err, &ru) && ru.Status != 0:
		return fmt.Sprintf("robots.txt unavailable: status %d", ru.Status)
	case errors.As(err, &ru) && ru.Err != nil:
		return "robots.txt unavailable: " + innermost(ru.Err)
	case errors.Is(err, crawl.ErrRobotsUnavailable), crawl.FailKind(err) == "robots_unavailable":
		return "robots.txt unavailable"
	case crawl.FailKind(err) == "disallowed":
		return "disallowed by robots.txt"
	case err == nil:
		return "no response"
	}
	return innermost(err)
}

// innermost returns the text of the error at the end of err's chain,
// which says what went wrong without the URLs the wrappers add; for an
// address the private-network guard refused, the error that wraps
// crawl.ErrBlockedAddress, which names the address.
func innermost(err error) string {
	for {
		u := errors.Unwrap(err)
		if u == nil || u == crawl.ErrBlockedAddress {
			return err.Error()
		}
		err = u
	}
}
