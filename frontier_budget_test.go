package crawl_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/asyncrawl/crawl"
	"github.com/asyncrawl/crawl/crawltest"
	"github.com/asyncrawl/crawl/frontiertest"
)

// takeWithin takes a lease from f, failing the test if none comes within
// d: a Take that blocks for good is the defect these tests look for.
func takeWithin(t *testing.T, f crawl.Frontier, d time.Duration, what string) *crawl.Lease {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	l, err := f.Take(ctx)
	if err != nil {
		t.Fatalf("%s: Take: got %v, want a lease", what, err)
	}
	return l
}

// A retry waiting behind its host's robots.txt, not yet fetched, is handed
// out while the page budget is spent, after the robots.txt: Take's doc
// says so, and a Run on a frontier reused with robots.txt on met it.
func TestMemoryFrontierBudgetRetryBehindRobots(t *testing.T) {
	ctx := context.Background()
	f := crawl.NewMemoryFrontier()
	defer f.Close()
	if err := f.Start(ctx, crawl.Policy{HostWorkers: 1, MaxPages: 1}); err != nil {
		t.Fatal(err)
	}
	f.Push(ctx, crawl.Request{URL: "http://a.test/1"}, crawl.Request{URL: "http://a.test/2"})
	l := takeWithin(t, f, 5*time.Second, "first run")
	l.Tries = 1
	if err := f.Retry(ctx, l, time.Time{}); err != nil {
		t.Fatal(err)
	}
	// The next Run obeys robots.txt: the host has no rules yet.
	if err := f.Start(ctx, crawl.Policy{HostWorkers: 1, MaxPages: 1, Robots: true}); err != nil {
		t.Fatal(err)
	}
	robots := takeWithin(t, f, 5*time.Second, "budget spent, a retry behind robots.txt")
	if robots.Kind != crawl.RobotsRequest || robots.URL != "http://a.test/robots.txt" {
		t.Fatalf("got %s (kind %d), want http://a.test/robots.txt", robots.URL, robots.Kind)
	}
	if _, err := f.Ack(ctx, robots, crawl.Outcome{Rules: &crawl.HostRules{}}); err != nil {
		t.Fatal(err)
	}
	retry := takeWithin(t, f, 5*time.Second, "budget spent, the retry after robots.txt")
	if retry.URL != "http://a.test/1" || retry.Tries != 1 {
		t.Fatalf("got %s (tries %d), want the retry of http://a.test/1", retry.URL, retry.Tries)
	}
	if _, err := f.Ack(ctx, retry, crawl.Outcome{}); err != nil {
		t.Fatal(err)
	}
	jctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := f.Join(jctx); err != nil {
		t.Fatalf("Join: got %v, want nil (budget spent, nothing out)", err)
	}
	c, _ := f.Counts(ctx)
	if c.Pages != 1 || c.Queued != 1 || c.Done != 1 {
		t.Errorf("counts %+v, want 1 page, 1 queued (never taken), 1 done", c)
	}
}

// The same through two Runs on one MemoryFrontier: the first, without
// robots.txt, spends the budget on a page whose retry it leaves waiting;
// the second, with robots.txt, must fetch it and return.
func TestRunBudgetRetryBehindRobots(t *testing.T) {
	site := crawltest.Start(t)
	var served atomic.Int32
	site.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if served.Add(1) == 1 {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<a href="/a">a</a>`)
	}))
	site.Page("/a")
	site.Robots("User-agent: *\nAllow: /\n")
	f := crawl.NewMemoryFrontier()
	defer f.Close()
	root := "http://www.example.com/"
	first, err := crawl.New(crawl.WithHTTPClient(site.Client()), crawl.WithFrontier(f),
		crawl.WithRobots(false), crawl.WithMaxPages(1), crawl.WithMaxDuration(300*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := first.Run(context.Background(), root); err != nil {
		t.Fatalf("first Run: %v", err)
	}
	if c, _ := f.Counts(context.Background()); c.Pages != 1 || c.Queued != 1 {
		t.Fatalf("after the first Run: counts %+v, want 1 page and its retry queued", c)
	}
	var got []string
	second, err := crawl.New(crawl.WithHTTPClient(site.Client()), crawl.WithFrontier(f),
		crawl.WithMaxPages(1), crawl.WithResultHook(func(r crawl.Result) { got = append(got, fmt.Sprint(r.URL, " ", r.Status)) }))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := second.Run(ctx, root); err != nil {
		t.Fatalf("second Run: got %v, want nil (the retry fetched after robots.txt)", err)
	}
	if want := root + " 200"; strings.Join(got, ",") != want {
		t.Errorf("second Run's Results: got %q, want %q", got, want)
	}
	if n := site.Count("/robots.txt"); n != 1 {
		t.Errorf("robots.txt fetched %d times, want 1", n)
	}
}

// A URL acked Unsent gives its page back to the budget: a host passed
// over while the budget was spent is then served again.
func TestMemoryFrontierBudgetUnsent(t *testing.T) {
	ctx := context.Background()
	f := crawl.NewMemoryFrontier()
	defer f.Close()
	if err := f.Start(ctx, crawl.Policy{HostWorkers: 1, MaxPages: 1}); err != nil {
		t.Fatal(err)
	}
	f.Push(ctx, crawl.Request{URL: "http://a.test/1"}, crawl.Request{URL: "http://b.test/1"})
	a := takeWithin(t, f, 5*time.Second, "within the budget")
	// The budget is spent: this Take passes b over, and gives up.
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	l, err := f.Take(short)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Take with the budget spent: got %v, %v; want DeadlineExceeded", l, err)
	}
	if _, err := f.Ack(ctx, a, crawl.Outcome{Unsent: true}); err != nil {
		t.Fatal(err)
	}
	b := takeWithin(t, f, 5*time.Second, "a page given back by an Unsent ack")
	if want := "http://b.test/1"; b.URL != want || a.URL == want {
		t.Fatalf("took %s then %s, want the other host's page", a.URL, b.URL)
	}
	if c, _ := f.Counts(ctx); c.Pages != 1 {
		t.Errorf("Pages %d, want 1", c.Pages)
	}
}

// Runs with WithMaxPages on generated sites, a part of each disallowed by
// robots.txt, all return: a host passed over while the budget was spent
// is served again when a disallowed URL gives its page back.
func TestRunBudgetUnsentGenerated(t *testing.T) {
	seeds := 120
	if testing.Short() {
		seeds = 30
	}
	for seed := range seeds {
		rng := rand.New(rand.NewPCG(uint64(seed), 22))
		site := crawltest.Start(t)
		hosts := 2 + rng.IntN(10)
		pages := 2 + rng.IntN(4)
		var roots []string
		for h := range hosts {
			host := site.Host(fmt.Sprintf("h%d.test", h))
			host.Robots("User-agent: *\nDisallow: /private/\n")
			roots = append(roots, host.URL("/"))
			for p := range pages {
				path := "/"
				if p > 0 {
					path = fmt.Sprintf("/p%d", p)
					if rng.IntN(2) == 0 {
						path = fmt.Sprintf("/private/p%d", p)
					}
				}
				var links []string
				for range 1 + rng.IntN(4) {
					to := site.Host(fmt.Sprintf("h%d.test", rng.IntN(hosts)))
					q := rng.IntN(pages)
					if rng.IntN(2) == 0 {
						links = append(links, to.URL(fmt.Sprintf("/p%d", q)))
					} else {
						links = append(links, to.URL(fmt.Sprintf("/private/p%d", q)))
					}
				}
				host.Page(path, links...)
			}
		}
		maxPages := 1 + rng.IntN(hosts*pages)
		workers := 2 + rng.IntN(8)
		c, err := crawl.New(crawl.WithHTTPClient(site.Client()), crawl.WithMaxPages(maxPages),
			crawl.WithWorkers(workers), crawl.WithHostWorkers(1+rng.IntN(2)))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err = c.Run(ctx, roots...)
		cancel()
		site.Close()
		if err != nil {
			t.Errorf("seed %d (%d hosts, %d pages each, max pages %d, %d workers): Run: got %v, want nil",
				seed, hosts, pages, maxPages, workers, err)
		}
		if n := site.TotalExceptRobots(); n > maxPages {
			t.Errorf("seed %d: %d requests but robots.txt, want at most %d", seed, n, maxPages)
		}
	}
}

// budgetModel is what TestMemoryFrontierBudgetRandom expects of a
// MemoryFrontier with no delays, pauses nor lease terms: every Request
// that Take's doc allows to be handed out is handed out at once.
type budgetModel struct {
	policy crawl.Policy
	pages  int
	seen   map[string]bool
	taken  map[string]bool // taken before: a retry, or counted in pages
	hosts  map[string]*modelHost
}

type modelHost struct {
	robots   int // 0: none to fetch, 1: to fetch, 2: being fetched
	rules    bool
	fresh    int
	retries  int
	inflight int
}

func (m *budgetModel) spent() bool { return m.policy.MaxPages > 0 && m.pages >= m.policy.MaxPages }

func (m *budgetModel) host(key string) *modelHost {
	h := m.hosts[key]
	if h == nil {
		h = &modelHost{}
		if m.policy.Robots {
			h.robots = 1
		}
		m.hosts[key] = h
	}
	return h
}

// push admits the URLs not seen before.
func (m *budgetModel) push(urls []string) {
	for _, u := range urls {
		if !m.seen[u] {
			m.seen[u] = true
			m.host(crawl.HostKey(u)).fresh++
		}
	}
}

// takeable reports whether Take must hand something out now.
func (m *budgetModel) takeable() bool {
	for _, h := range m.hosts {
		if h.robots == 2 || h.inflight >= m.policy.HostWorkers {
			continue
		}
		if h.fresh > 0 && !m.spent() || h.retries > 0 {
			return true
		}
	}
	return false
}

// over reports whether Join must return.
func (m *budgetModel) over() bool {
	fresh, other := 0, 0
	for _, h := range m.hosts {
		fresh += h.fresh
		other += h.retries + h.inflight
		if h.robots == 2 {
			other-- // a robots.txt out is not pending
		}
	}
	return fresh+other == 0 || m.spent() && other == 0
}

// Random runs of Take, Ack (with links, Unsent), Retry and Start on a
// MemoryFrontier with a page budget, robots.txt on and off: each step is
// checked against budgetModel, so that no host is left out of the
// schedule while the budget or a retry lets it go.
func TestMemoryFrontierBudgetRandom(t *testing.T) {
	n := 1000
	if testing.Short() {
		n = 100
	}
	// $FRONTIERTEST_SEEDS and its kin choose others, as for Fuzz.
	for _, seed := range frontiertest.Seeds(t, n) {
		// In a bubble, a Take or Join that blocks times out at once, and
		// one that would be served is: no timing decides the result.
		synctest.Test(t, func(t *testing.T) { budgetRandom(t, seed) })
	}
}

func budgetRandom(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 2222))
	ctx := context.Background()
	f := crawl.NewMemoryFrontier()
	defer f.Close()
	m := &budgetModel{seen: map[string]bool{}, taken: map[string]bool{}, hosts: map[string]*modelHost{}}
	var ops []string
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("seed %d: %s\nops:\n\t%s", seed, fmt.Sprintf(format, args...), strings.Join(ops, "\n\t"))
	}
	randURLs := func(n int) []string {
		var us []string
		for range n {
			us = append(us, fmt.Sprintf("http://h%d.test/%d", rng.IntN(4), rng.IntN(12)))
		}
		return us
	}
	start := func() {
		p := crawl.Policy{HostWorkers: 1 + rng.IntN(2), MaxPages: rng.IntN(8), Robots: rng.IntN(2) == 0}
		if err := f.Start(ctx, p); err != nil {
			t.Fatal(err)
		}
		m.policy = p
		for _, h := range m.hosts {
			// Each Run asks for every host's robots.txt again.
			if p.Robots && h.robots == 0 {
				h.robots = 1
			}
		}
		ops = append(ops, fmt.Sprintf("Start(%+v)", p))
	}
	start()
	reqs := func(us []string) []crawl.Request {
		var rs []crawl.Request
		for _, u := range us {
			rs = append(rs, crawl.Request{URL: u})
		}
		return rs
	}
	first := randURLs(1 + rng.IntN(6))
	f.Push(ctx, reqs(first)...)
	m.push(first)
	ops = append(ops, fmt.Sprintf("Push(%v)", first))
	var held []*crawl.Lease
	for range 80 {
		switch op := rng.IntN(10); {
		case op < 5: // Take
			want := m.takeable()
			c, cancel := context.WithTimeout(ctx, time.Second)
			l, err := f.Take(c)
			cancel()
			if err != nil {
				if want {
					fail("Take: got %v, want a lease (budget %d of %d)", err, m.pages, m.policy.MaxPages)
				}
				ops = append(ops, "Take: none")
				continue
			}
			if !want {
				fail("Take: got %s, want none", l.URL)
			}
			h := m.host(crawl.HostKey(l.URL))
			h.inflight++
			switch {
			case l.Kind == crawl.RobotsRequest:
				if h.robots != 1 {
					fail("Take: got %s, want no robots.txt (state %d)", l.URL, h.robots)
				}
				h.robots = 2
			case h.robots != 0:
				fail("Take: got %s before its host's robots.txt", l.URL)
			case m.taken[l.URL]:
				h.retries--
			default:
				if m.spent() {
					fail("Take: got %s, new, with the budget spent (%d of %d)", l.URL, m.pages, m.policy.MaxPages)
				}
				h.fresh--
				m.pages++
				m.taken[l.URL] = true
			}
			held = append(held, l)
			ops = append(ops, "Take: "+l.URL)
		case op < 9 && len(held) > 0: // Ack
			i := rng.IntN(len(held))
			l := held[i]
			held = append(held[:i], held[i+1:]...)
			h := m.host(crawl.HostKey(l.URL))
			h.inflight--
			var o crawl.Outcome
			if l.Kind == crawl.RobotsRequest {
				o.Rules = &crawl.HostRules{}
				h.robots, h.rules = 0, true
			} else if rng.IntN(3) == 0 {
				o.Unsent = true
				if l.Tries == 0 {
					m.pages--
				}
			} else {
				links := randURLs(rng.IntN(4))
				o.Links = reqs(links)
				m.push(links)
			}
			if _, err := f.Ack(ctx, l, o); err != nil {
				fail("Ack %s: %v", l.URL, err)
			}
			ops = append(ops, fmt.Sprintf("Ack(%s, unsent %v, %d links)", l.URL, o.Unsent, len(o.Links)))
		case op < 9 && len(held) > 0 || op == 9 && len(held) > 0 && rng.IntN(2) == 0: // Retry
			i := rng.IntN(len(held))
			l := held[i]
			held = append(held[:i], held[i+1:]...)
			h := m.host(crawl.HostKey(l.URL))
			h.inflight--
			l.Tries++
			if l.Kind == crawl.RobotsRequest {
				h.robots = 1
			} else {
				h.retries++
			}
			if err := f.Retry(ctx, l, time.Time{}); err != nil {
				fail("Retry %s: %v", l.URL, err)
			}
			ops = append(ops, "Retry("+l.URL+")")
		case op == 9:
			start()
		}
		want := m.over()
		c, cancel := context.WithTimeout(ctx, time.Second)
		err := f.Join(c)
		cancel()
		if (err == nil) != want {
			fail("Join: got %v, want over %v", err, want)
		}
	}
}
