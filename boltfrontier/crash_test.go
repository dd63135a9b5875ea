package boltfrontier

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/asyncrawl/crawl"
)

// The crash test's crawl: URL i of crashURLs links to 10i+1 … 10i+10,
// over crashHosts hosts, crawled by crashWorkers workers.
const (
	crashURLs    = 4000
	crashHosts   = 5
	crashWorkers = 6
	crashCommit  = 32 // Options.CommitMax of the child
)

func crashURL(i int) string { return fmt.Sprintf("http://h%d.test/%d", i%crashHosts, i) }

func crashIndex(url string) int {
	i, _ := strconv.Atoi(url[strings.LastIndexByte(url, '/')+1:])
	return i
}

var crashPolicy = crawl.Policy{HostWorkers: 2, Robots: true, Roots: []string{crashURL(0)}, Scope: "crash test"}

// TestHelperProcess is the crawler of TestCrash, run in a child process:
// it goes on with the crawl in the state file, printing "take URL" for
// each URL taken before it acks it, until the crawl is over or it is
// killed.
func TestHelperProcess(t *testing.T) {
	if path := os.Getenv("BOLTFRONTIER_HOLD"); path != "" {
		// Hold the file open until killed.
		if _, err := Open(path, nil); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		os.Stdout.WriteString("ready\n")
		select {}
	}
	path := os.Getenv("BOLTFRONTIER_CRASH_STATE")
	if path == "" {
		return
	}
	seed, _ := strconv.ParseUint(os.Getenv("BOLTFRONTIER_CRASH_SEED"), 10, 64)
	f, err := Open(path, &Options{LockTimeout: 5 * time.Second, CommitMax: crashCommit, CommitEvery: 2 * time.Millisecond})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	ctx := context.Background()
	if err := f.Start(ctx, crashPolicy); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if _, err := f.Push(ctx, crawl.Request{URL: crashURL(0)}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	var out sync.Mutex
	say := func(s string) {
		out.Lock()
		os.Stdout.WriteString(s) // one write: a kill loses a line whole
		out.Unlock()
	}
	say("ready\n")
	wctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for w := range crashWorkers {
		rng := rand.New(rand.NewPCG(seed, uint64(w)))
		wg.Go(func() {
			for {
				l, err := f.Take(wctx)
				if err != nil {
					return
				}
				if l.Kind == crawl.RobotsRequest {
					f.Ack(ctx, l, crawl.Outcome{Rules: &crawl.HostRules{Robots: []byte("User-agent: *\n")}})
					continue
				}
				say("take " + l.URL + "\n")
				time.Sleep(time.Duration(rng.IntN(500)) * time.Microsecond)
				if l.Tries < 2 && rng.IntN(20) == 0 {
					l.Tries++
					f.Retry(ctx, l, time.Now().Add(5*time.Millisecond))
					continue
				}
				i := crashIndex(l.URL)
				var links []crawl.Request
				for c := 10*i + 1; c <= 10*i+10 && c < crashURLs; c++ {
					links = append(links, crawl.Request{URL: crashURL(c), Depth: l.Depth + 1})
				}
				res := &crawl.Result{URL: l.URL, Status: 200, Depth: l.Depth, Tries: l.Tries + 1}
				if _, err := f.Ack(ctx, l, crawl.Outcome{Result: res, Links: links}); err != nil {
					fmt.Fprintln(os.Stderr, "ack:", err)
					os.Exit(2)
				}
			}
		})
	}
	if err := f.Join(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "join:", err)
		os.Exit(2)
	}
	stop()
	wg.Wait()
	if err := f.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "close:", err)
		os.Exit(2)
	}
	say("done\n")
	os.Exit(0)
}

// crashSession runs the helper on path until it is done or, if kill is
// set, SIGKILLs it after kill; it returns the URLs it printed as taken
// and whether it finished.
func crashSession(t *testing.T, path string, seed int, kill time.Duration, early bool) (map[string]bool, bool) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	cmd.Env = append(os.Environ(), "BOLTFRONTIER_CRASH_STATE="+path, "BOLTFRONTIER_CRASH_SEED="+strconv.Itoa(seed))
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	taken := map[string]bool{}
	finished := false
	sc := bufio.NewScanner(stdout)
	var timer *time.Timer
	if early && kill > 0 {
		// Counted from the start: the kill may come while it opens.
		timer = time.AfterFunc(kill, func() { cmd.Process.Kill() })
	}
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "ready" && kill > 0 && !early:
			timer = time.AfterFunc(kill, func() { cmd.Process.Kill() })
		case line == "done":
			finished = true
		case strings.HasPrefix(line, "take "):
			taken[line[len("take "):]] = true
		}
	}
	if timer != nil {
		timer.Stop()
	}
	err = cmd.Wait()
	if finished && err != nil || !finished && kill == 0 {
		t.Fatalf("helper session %d: %v", seed, err)
	}
	return taken, finished
}

// stored returns the URLs of the Results in the state file, with how
// many Results each has, and its Counts.
func stored(t *testing.T, path string) (map[string]int, crawl.Counts) {
	t.Helper()
	f, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res := map[string]int{}
	if err := f.Results(context.Background(), func(r crawl.Result) bool { res[r.URL]++; return true }); err != nil {
		t.Fatal(err)
	}
	c, _ := f.Counts(context.Background())
	return res, c
}

// TestCrash crawls a 4,000-URL site in child processes SIGKILLed at
// random moments, each next one going on from the state file, then lets
// the last one finish. It checks that no URL whose Result was stored is
// taken again, that each session takes again no more URLs than the
// documented bound (leases out plus uncommitted acks), and that in the
// end every URL has exactly one Result, Counts are exact and none is
// missing.
func TestCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("re-executes the test binary")
	}
	path := filepath.Join(t.TempDir(), "crawl.db")
	rng := rand.New(rand.NewPCG(7, 7))
	everTaken := map[string]bool{}
	refetched := 0
	const kills = 6
	for k := 0; ; k++ {
		before := map[string]int{}
		if k > 0 {
			before, _ = stored(t, path)
		}
		kill, early := time.Duration(0), k%3 == 2
		switch {
		case k < kills && early:
			kill = time.Duration(1+rng.IntN(30)) * time.Millisecond
		case k < kills:
			kill = time.Duration(30+rng.IntN(150)) * time.Millisecond
		}
		taken, finished := crashSession(t, path, k, kill, early)
		again := 0
		for u := range taken {
			if before[u] > 0 {
				t.Errorf("session %d took %s, whose Result was stored before it began", k, u)
			}
			if everTaken[u] {
				again++
			}
			everTaken[u] = true
		}
		// Re-taken: leased at the kill, or acked and not committed: at
		// most the writer's backlog (2 CommitMax calls) plus the
		// transaction being committed (CommitMax calls).
		if bound := crashWorkers + 3*crashCommit; again > bound {
			t.Errorf("session %d took %d URLs taken in earlier sessions, bound %d", k, again, bound)
		}
		refetched += again
		t.Logf("session %d: killed after %v (from start: %t): %d URLs taken, %d of them again, %d Results stored before", k, kill, early, len(taken), again, len(before))
		if finished {
			break
		}
		if k > 50 {
			t.Fatal("the crawl never finished")
		}
	}
	res, c := stored(t, path)
	if len(res) != crashURLs {
		t.Errorf("%d URLs have Results, want %d", len(res), crashURLs)
	}
	for i := range crashURLs {
		if n := res[crashURL(i)]; n != 1 {
			t.Errorf("%s has %d Results, want 1", crashURL(i), n)
		}
	}
	if want := (crawl.Counts{Done: crashURLs, Pages: crashURLs}); c != want {
		t.Errorf("Counts %+v, want %+v", c, want)
	}
	t.Logf("%d URLs, %d kills, %d taken again", crashURLs, kills, refetched)
}

// TestOpenLockedByProcess checks that a file another process holds open
// is refused with ErrLocked within LockTimeout.
func TestOpenLockedByProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("re-executes the test binary")
	}
	path := filepath.Join(t.TempDir(), "crawl.db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	cmd.Env = append(os.Environ(), "BOLTFRONTIER_HOLD="+path)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	if line, err := bufio.NewReader(stdout).ReadString('\n'); line != "ready\n" {
		t.Fatalf("helper: got %q, %v", line, err)
	}
	done := make(chan error, 1)
	go func() {
		f, err := Open(path, &Options{LockTimeout: 200 * time.Millisecond})
		if err == nil {
			f.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), path) {
			t.Errorf("Open of a file another process holds: got %v, want ErrLocked naming %s", err, path)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Open of a file another process holds hangs")
	}
	cmd.Process.Kill()
	cmd.Wait()
	f, err := Open(path, nil)
	if err != nil {
		t.Fatalf("Open once the other process is gone: %v", err)
	}
	f.Close()
}
