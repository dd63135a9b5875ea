package crawl_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/asyncrawl/crawl"
)

// robotsSite serves "/" linking to each of paths, and every other path as
// a leaf page.
func robotsSite(paths ...string) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/{$}", anchors(0, paths...))
	mux.Handle("/", anchors(0))
	return mux
}

// wantDisallowed fails unless every URL in urls has a Result whose Err
// wraps ErrDisallowed, and was not requested.
func wantDisallowed(t *testing.T, s *site, res map[string]crawl.Result, paths ...string) {
	t.Helper()
	for _, p := range paths {
		r, ok := res[s.URL+p]
		if !ok {
			t.Errorf("%s: no Result, want one with ErrDisallowed", p)
			continue
		}
		if !errors.Is(r.Err, crawl.ErrDisallowed) || r.Status != 0 || r.Tries != 0 {
			t.Errorf("%s: Err %v, status %d, %d tries; want ErrDisallowed, 0, 0", p, r.Err, r.Status, r.Tries)
		}
		want := "disallowed"
		if errors.Is(r.Err, crawl.ErrRobotsUnavailable) {
			want = "robots_unavailable"
		}
		if crawl.FailKind(r.Err) != want {
			t.Errorf("%s: FailKind %q, want %s", p, crawl.FailKind(r.Err), want)
		}
		s.wantHits(t, p, 0)
	}
}

func TestCrawlRobotsRules(t *testing.T) {
	for _, tt := range []struct {
		name       string
		robots     string
		ua         string
		fetched    []string
		disallowed []string
	}{
		{
			name:    "404 allows all",
			fetched: []string{"/", "/a", "/b", "/private/ok", "/private/x"},
		},
		{
			name:       "longest match, allow wins",
			robots:     "User-agent: *\nDisallow: /private\nAllow: /private/ok\n",
			fetched:    []string{"/", "/a", "/b", "/private/ok"},
			disallowed: []string{"/private/x"},
		},
		{
			name:       "group of the user agent",
			robots:     "User-agent: *\nDisallow: /b\n\nUser-agent: asyncrawl\nDisallow: /a\n",
			fetched:    []string{"/", "/b", "/private/ok", "/private/x"},
			disallowed: []string{"/a"},
		},
		{
			name:       "other user agent gets the * group",
			robots:     "User-agent: *\nDisallow: /b\n\nUser-agent: asyncrawl\nDisallow: /a\n",
			ua:         "otherbot/1.0",
			fetched:    []string{"/", "/a", "/private/ok", "/private/x"},
			disallowed: []string{"/b"},
		},
		{
			name:       "wildcards and end anchor",
			robots:     "User-agent: *\nDisallow: /*/x$\n",
			fetched:    []string{"/", "/a", "/b", "/private/ok"},
			disallowed: []string{"/private/x"},
		},
		{
			name:       "root disallowed",
			robots:     "User-agent: *\nDisallow: /\n",
			disallowed: []string{"/"},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newSite(t, robotsSite("/a", "/b", "/private/ok", "/private/x"))
			s.setRobots(tt.robots, nil)
			opts := []crawl.Option{crawl.WithWorkers(4)}
			if tt.ua != "" {
				opts = append(opts, crawl.WithUserAgent(tt.ua))
			}
			stats, res, err := crawlSite(t, context.Background(), []string{s.URL}, opts...)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if got := s.Requested(); !slices.Equal(got, tt.fetched) {
				t.Errorf("requested %v, want %v", got, tt.fetched)
			}
			wantDisallowed(t, s, res, tt.disallowed...)
			if got := s.robotsHits.Load(); got != 1 {
				t.Errorf("robots.txt requested %d times, want 1", got)
			}
			if stats.Done != len(tt.fetched)+len(tt.disallowed) {
				t.Errorf("Done: got %d, want %d (robots.txt is not a Result)", stats.Done, len(tt.fetched)+len(tt.disallowed))
			}
		})
	}
}

func TestCrawlRobotsUnreachable(t *testing.T) {
	for _, tt := range []struct {
		name   string
		h      http.HandlerFunc
		status int   // the Result's error names it, if not 0
		cause  error // the Result's error wraps it, if not nil
	}{
		{"500", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "down", 500) }, 500, nil},
		{"503", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "down", 503) }, 503, nil},
		{"429", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "slow", 429) }, 429, nil},
		{"connection closed", func(w http.ResponseWriter, r *http.Request) {
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				conn.Close()
			}
		}, 0, io.EOF},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newSite(t, robotsSite("/a"))
			s.setRobots("", tt.h)
			stats, res, err := crawlSite(t, context.Background(), []string{s.URL, s.URL + "/b"},
				crawl.WithMaxTries(3), crawl.WithBackoff(time.Millisecond, time.Millisecond))
			if err != nil {
				t.Fatalf("Run: got %v, want nil: an unreachable robots.txt ends its host's URLs, not the crawl", err)
			}
			if got := s.robotsHits.Load(); got != 3 {
				t.Errorf("robots.txt requested %d times, want 3 (WithMaxTries(3))", got)
			}
			wantDisallowed(t, s, res, "/", "/b")
			for _, r := range res {
				if tt.status != 0 && !strings.Contains(r.Err.Error(), fmt.Sprint("status ", tt.status)) {
					t.Errorf("%s: Err %q does not name the robots.txt status %d", r.URL, r.Err, tt.status)
				}
				if tt.cause != nil && !errors.Is(r.Err, tt.cause) {
					t.Errorf("%s: Err %q does not wrap %v", r.URL, r.Err, tt.cause)
				}
				var ru *crawl.RobotsUnavailableError
				if !errors.As(r.Err, &ru) || ru.Status != tt.status || !errors.Is(r.Err, crawl.ErrRobotsUnavailable) {
					t.Errorf("%s: Err %v; want a RobotsUnavailableError with status %d", r.URL, r.Err, tt.status)
				}
			}
			if stats.Done != 2 || s.Total() != 0 {
				t.Errorf("Done %d, server saw %d page requests; want 2, 0", stats.Done, s.Total())
			}
		})
	}
}

func TestRobotsRetriedThenAllowed(t *testing.T) {
	s := newSite(t, robotsSite("/a"))
	var n atomic.Int32
	s.setRobots("", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) <= 2 {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprint(w, "User-agent: *\nDisallow: /a\n")
	}))
	_, res, err := crawlSite(t, context.Background(), []string{s.URL},
		crawl.WithBackoff(time.Millisecond, time.Millisecond))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if got := s.robotsHits.Load(); got != 3 {
		t.Errorf("robots.txt requested %d times, want 3", got)
	}
	s.wantHits(t, "/", 1)
	wantDisallowed(t, s, res, "/a")
}

func TestRobotsRedirect(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("/{$}", anchors(0, "/a", "/private"))
	mux.Handle("/real-robots.txt", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "User-agent: *\nDisallow: /private\n")
	}))
	mux.Handle("/", anchors(0))
	s := newSite(t, mux)
	s.setRobots("", http.RedirectHandler("/real-robots.txt", http.StatusMovedPermanently))
	_, res, err := crawlSite(t, context.Background(), []string{s.URL})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	s.wantHits(t, "/real-robots.txt", 1)
	s.wantHits(t, "/a", 1)
	wantDisallowed(t, s, res, "/private")
	if _, ok := res[s.URL+"/real-robots.txt"]; ok {
		t.Errorf("the robots.txt redirect target has a Result, want none")
	}
}

func TestRobotsSizeLimit(t *testing.T) {
	var b strings.Builder
	b.WriteString("User-agent: *\nDisallow: /early\n")
	for b.Len() < 500<<10+10 {
		b.WriteString("# padding padding padding padding padding padding padding\n")
	}
	for b.Len() < 500<<10+1000 {
		b.WriteString("Disallow: /late\n")
	}
	for b.Len() < 600<<10 {
		b.WriteString("# more padding padding padding padding padding padding\n")
	}
	s := newSite(t, robotsSite("/early", "/late"))
	s.setRobots(b.String(), nil)
	_, res, err := crawlSite(t, context.Background(), []string{s.URL})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	wantDisallowed(t, s, res, "/early")
	// The rules for /late start after the first 500 KiB.
	s.wantHits(t, "/late", 1)
}

// TestRobotsSizeLimitCutLine: the line the 500 KiB limit cuts is left
// out: "Allow: /secret" of "Allow: /secretive-but-public" would tie with
// "Disallow: /secret" and win, allowing what the file disallows.
func TestRobotsSizeLimitCutLine(t *testing.T) {
	const cut = "Allow: /secret"
	body := robotsLineAtLimit(t, "User-agent: *\nDisallow: /secret\n", cut, "ive-but-public\n")
	s := newSite(t, robotsSite("/secret"))
	s.setRobots(body, nil)
	_, res, err := crawlSite(t, context.Background(), []string{s.URL})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	wantDisallowed(t, s, res, "/secret")
}

// TestRobotsSizeLimitWholeLine: a line that ends right at the 500 KiB
// limit (its line end the octet after it) is read: RFC 9309 has a crawler
// parse at least 500 KiB, and the line lies within them.
func TestRobotsSizeLimitWholeLine(t *testing.T) {
	body := robotsLineAtLimit(t, "User-agent: *\nDisallow: /early\n", "Disallow: /late", "\n# more past the limit\n")
	s := newSite(t, robotsSite("/early", "/late"))
	s.setRobots(body, nil)
	_, res, err := crawlSite(t, context.Background(), []string{s.URL})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	wantDisallowed(t, s, res, "/early", "/late")
}

// robotsLineAtLimit returns a robots.txt of head, comment lines, then
// line, which ends at exactly the 500 KiB limit, then tail.
func robotsLineAtLimit(t *testing.T, head, line, tail string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString(head)
	for b.Len() < 500<<10-len(line)-80 {
		b.WriteString("# padding padding padding padding padding padding padding\n")
	}
	b.WriteString("#" + strings.Repeat("p", 500<<10-len(line)-b.Len()-2) + "\n")
	b.WriteString(line + tail)
	if i := strings.Index(b.String(), line); i+len(line) != 500<<10 {
		t.Fatalf("%q ends at %d, want at the limit, %d", line, i+len(line), 500<<10)
	}
	return b.String()
}

func TestRobotsCrawlDelay(t *testing.T) {
	var st startTimes
	s := newSite(t, st.wrap(flatSite(5, 0)))
	s.setRobots("User-agent: *\nCrawl-delay: 0.1\n", nil)
	_, res, err := crawlSite(t, context.Background(), []string{s.URL}, crawl.WithWorkers(8), crawl.WithHostWorkers(8))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if len(res) != 6 {
		t.Fatalf("got %d Results, want 6", len(res))
	}
	times, paths := st.get()
	for i := 1; i < len(times); i++ {
		if gap := times[i].Sub(times[i-1]); gap < 50*time.Millisecond-2*time.Millisecond {
			t.Errorf("%s and %s started %v apart, want at least 50ms (Crawl-delay 0.1, drawn from [0.05, 0.15])", paths[i-1], paths[i], gap)
		}
	}
}

// TestRobotsCrawlDelayLong: a Crawl-delay of a day (capped at 30s) keeps
// the first page waiting after the robots.txt request, past a short
// WithMaxDuration: robots.txt is a request to the host like any other.
func TestRobotsCrawlDelayLong(t *testing.T) {
	s := newSite(t, flatSite(3, 0))
	s.setRobots("User-agent: *\nCrawl-delay: 86400\n", nil)
	stats, _, err := crawlSite(t, context.Background(), []string{s.URL}, crawl.WithMaxDuration(300*time.Millisecond))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if got := s.Total(); got != 0 || stats.Budget != "max_duration" || stats.Todo != 1 {
		t.Errorf("server saw %d requests, Budget %q, Todo %d; want 0, max_duration, 1", got, stats.Budget, stats.Todo)
	}
}

func TestRobotsOncePerHost(t *testing.T) {
	a := newSite(t, robotsSite())
	b := newSite(t, robotsSite())
	var roots []string
	for i := range 50 {
		roots = append(roots, fmt.Sprintf("%s/r%d", a.URL, i), fmt.Sprintf("%s/r%d", b.URL, i))
	}
	stats, _, err := crawlSite(t, context.Background(), roots, crawl.WithWorkers(50), crawl.WithHostWorkers(50))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if stats.Done != 100 {
		t.Errorf("Done: got %d, want 100", stats.Done)
	}
	for _, s := range []*site{a, b} {
		if got := s.robotsHits.Load(); got != 1 {
			t.Errorf("%s: robots.txt requested %d times, want 1 (50 workers, 50 roots)", s.URL, got)
		}
	}
}

func TestRobotsOff(t *testing.T) {
	s := newSite(t, robotsSite("/a"))
	s.setRobots("User-agent: *\nDisallow: /\n", nil)
	_, _, err := crawlSite(t, context.Background(), []string{s.URL}, crawl.WithRobots(false))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if got := s.robotsHits.Load(); got != 0 {
		t.Errorf("robots.txt requested %d times with WithRobots(false), want 0", got)
	}
	if got := s.Requested(); !slices.Equal(got, []string{"/", "/a"}) {
		t.Errorf("requested %v, want [/ /a]", got)
	}
}

// TestRobotsInFlightWhenBudgetSpent: a robots.txt still being fetched when
// the page budget ends the crawl is cut short; Run does not wait for it.
func TestRobotsInFlightWhenBudgetSpent(t *testing.T) {
	a := newSite(t, robotsSite())
	b := newSite(t, robotsSite())
	b.setRobots("", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done() // hangs until the crawler gives up
	}))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	stats, _, err := crawlSite(t, ctx, []string{a.URL, b.URL},
		crawl.WithWorkers(2), crawl.WithMaxPages(1), crawl.WithRequestTimeout(time.Hour))
	if err != nil || ctx.Err() != nil {
		t.Fatalf("Run: got %v, and the 10s guard %v; want nil, nil: Run waited for the robots.txt of a host the budget left unvisited", err, ctx.Err())
	}
	if stats.Budget != "max_pages" || stats.Done != 1 || stats.Todo != 1 {
		t.Errorf("Budget %q, Done %d, Todo %d; want max_pages, 1, 1", stats.Budget, stats.Done, stats.Todo)
	}
}

// A robots.txt that could not be fetched because its address is blocked
// (WithBlockPrivateNetworks): the URLs of its host are "blocked", as
// RobotsUnavailableError says, and a stored Result says what the
// delivered one says: disallowed, robots.txt unavailable, not broken.
func TestRobotsBlockedKind(t *testing.T) {
	err := &crawl.RobotsUnavailableError{URL: "http://10.0.0.1/robots.txt", Err: fmt.Errorf("dial 10.0.0.1: %w", crawl.ErrBlockedAddress)}
	r := crawl.Result{URL: "http://10.0.0.1/a", Err: err}
	if k := crawl.FailKind(r.Err); k != "blocked" {
		t.Errorf("FailKind %q, want blocked", k)
	}
	b, merr := r.MarshalBinary()
	if merr != nil {
		t.Fatal(merr)
	}
	var back crawl.Result
	if err := back.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	if crawl.FailKind(back.Err) != "blocked" || !errors.Is(back.Err, crawl.ErrDisallowed) || !errors.Is(back.Err, crawl.ErrBlockedAddress) ||
		!errors.Is(back.Err, crawl.ErrRobotsUnavailable) || back.Broken() != r.Broken() {
		t.Errorf("stored: FailKind %q, disallowed %v, unavailable %v, broken %v; want those of the Result delivered (broken %v)",
			crawl.FailKind(back.Err), errors.Is(back.Err, crawl.ErrDisallowed), errors.Is(back.Err, crawl.ErrRobotsUnavailable), back.Broken(), r.Broken())
	}
}

// TestRobotsPerRun: a Run on a frontier an earlier Run left goes by the
// robots.txt of its own time: rules changed between the Runs apply, and a
// robots.txt found unavailable is tried again.
func TestRobotsPerRun(t *testing.T) {
	s := newSite(t, robotsSite("/a", "/b", "/c"))
	front := crawl.NewMemoryFrontier()
	s.setRobots("User-agent: *\nDisallow: /b\n", nil)
	// The first Run: the root and /a only, by its budget.
	_, res, err := crawlSite(t, context.Background(), []string{s.URL + "/"}, crawl.WithFrontier(front), crawl.WithMaxPages(2), crawl.WithWorkers(1))
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 {
		t.Fatalf("the first Run: Results %v, want / and /a", res)
	}
	s.setRobots("User-agent: *\nDisallow: /c\n", nil)
	_, res, err = crawlSite(t, context.Background(), []string{s.URL + "/"}, crawl.WithFrontier(front))
	if err != nil {
		t.Fatal(err)
	}
	wantDisallowed(t, s, res, "/c")
	if r := res[s.URL+"/b"]; r.Status != 200 {
		t.Errorf("/b in the second Run, robots.txt no longer disallowing it: %+v, want fetched", r)
	}
	if n := s.robotsHits.Load(); n != 2 {
		t.Errorf("robots.txt fetched %d times, want 2: once a Run", n)
	}

	// Unavailable in the first Run, back in the second.
	s2 := newSite(t, robotsSite("/a"))
	front = crawl.NewMemoryFrontier()
	s2.setRobots("", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) }))
	_, res, err = crawlSite(t, context.Background(), []string{s2.URL + "/"}, crawl.WithFrontier(front), crawl.WithMaxTries(1))
	if err != nil {
		t.Fatal(err)
	}
	if r := res[s2.URL+"/"]; !errors.Is(r.Err, crawl.ErrRobotsUnavailable) {
		t.Fatalf("/ with robots.txt answering 503: Err %v, want ErrRobotsUnavailable", r.Err)
	}
	s2.setRobots("User-agent: *\nDisallow:\n", nil)
	front.Push(context.Background(), crawl.Request{URL: s2.URL + "/a"})
	_, res, err = crawlSite(t, context.Background(), []string{s2.URL + "/"}, crawl.WithFrontier(front), crawl.WithMaxTries(1))
	if err != nil {
		t.Fatal(err)
	}
	if r, ok := res[s2.URL+"/a"]; !ok || r.Err != nil || r.Status != 200 {
		t.Errorf("/a in a Run after robots.txt came back: %+v, want fetched", r)
	}
}

// TestRobotsMaxAge: a host's robots.txt is fetched again once its rules
// are WithRobotsMaxAge old, and the host's URLs go by the new rules; with
// 0, once for the Run.
func TestRobotsMaxAge(t *testing.T) {
	// A chain of pages, each 40ms: /p/0 links to /p/1, ..., /p/11 to
	// /secret, which the robots.txt disallows from its second version on.
	chain := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(40 * time.Millisecond)
		var i int
		if _, err := fmt.Sscanf(r.URL.Path, "/p/%d", &i); err != nil {
			io.WriteString(w, "<p>leaf</p>")
			return
		}
		next := fmt.Sprintf("/p/%d", i+1)
		if i == 11 {
			next = "/secret"
		}
		fmt.Fprintf(w, `<a href="%s">next</a>`, next)
	})
	for _, tc := range []struct {
		age    time.Duration
		secret bool // /secret is fetched
	}{
		{200 * time.Millisecond, false},
		{0, true},
	} {
		t.Run(fmt.Sprint(tc.age), func(t *testing.T) {
			s := newSite(t, chain)
			var versions atomic.Int32
			s.setRobots("", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if versions.Add(1) == 1 {
					io.WriteString(w, "User-agent: *\nDisallow: /nothing\n")
					return
				}
				io.WriteString(w, "User-agent: *\nDisallow: /secret\n")
			}))
			began := time.Now()
			_, res, err := crawlSite(t, context.Background(), []string{s.URL + "/p/0"}, crawl.WithRobotsMaxAge(tc.age), crawl.WithWorkers(2))
			if err != nil {
				t.Fatal(err)
			}
			took := time.Since(began)
			n := int(s.robotsHits.Load())
			if !tc.secret {
				wantDisallowed(t, s, res, "/secret")
				// Never before the rules are that old: at most one a
				// max age, and the first.
				if most := int(took/tc.age) + 1; n < 2 || n > most {
					t.Errorf("robots.txt fetched %d times in %v, max age %v: want 2 to %d", n, took.Round(time.Millisecond), tc.age, most)
				}
				return
			}
			if r := res[s.URL+"/secret"]; r.Status != 200 {
				t.Errorf("/secret with WithRobotsMaxAge(0): %+v, want fetched by the Run's first robots.txt", r)
			}
			if n != 1 {
				t.Errorf("robots.txt fetched %d times with WithRobotsMaxAge(0), want once", n)
			}
		})
	}
}

func TestRobotsMaxAgeNegative(t *testing.T) {
	_, err := crawl.New(crawl.WithRobotsMaxAge(-time.Second))
	if err == nil || !strings.Contains(err.Error(), "WithRobotsMaxAge(-1s): must not be negative") {
		t.Errorf("New(WithRobotsMaxAge(-1s)): error %v, want one naming the option", err)
	}
}

// TestRobotsMaxAgeUnderDelay: a host whose delay is longer than the rules'
// max age still has its pages fetched: each fetch of its robots.txt lets
// at least one URL go by it (the age counts from the first), rather than
// the robots.txt being all the host gets.
func TestRobotsMaxAgeUnderDelay(t *testing.T) {
	s := newSite(t, robotsSite("/a", "/b", "/c"))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, res, err := crawlSite(t, ctx, []string{s.URL + "/"}, crawl.WithHostDelay(300*time.Millisecond), crawl.WithRobotsMaxAge(100*time.Millisecond))
	if err != nil {
		t.Fatalf("Run, host delay 300ms, robots max age 100ms: %v", err)
	}
	for _, p := range []string{"/", "/a", "/b", "/c"} {
		if r := res[s.URL+p]; r.Status != 200 {
			t.Errorf("%s: %+v, want fetched", p, r)
		}
	}
	if n := s.robotsHits.Load(); n < 2 || n > 5 {
		t.Errorf("robots.txt fetched %d times for 4 pages, each after a delay longer than its max age: want 2 to 5 (one a page at most)", n)
	}
}
