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
	"time"

	"github.com/asyncrawl/crawl"
	"github.com/asyncrawl/crawl/crawltest"
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
	seeds := 200
	if testing.Short() {
		seeds = 40
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
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		stats, err := c.Run(ctx, roots...)
		cancel()
		site.Close()
		if err != nil {
			t.Errorf("seed %d (%d hosts, %d pages each, max pages %d, %d workers): Run: got %v, want nil",
				seed, hosts, pages, maxPages, workers, err)
		}
		if n := site.TotalExceptRobots(); n > maxPages {
			t.Errorf("seed %d: %d requests but robots.txt, want at most %d", seed, n, maxPages)
		}
		_ = stats
	}
}
