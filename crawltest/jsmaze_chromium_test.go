//go:build unix

package crawltest_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/asyncrawl/crawl/crawltest"
)

// chromium is where the browser TestJSMazeChromium runs is installed.
const chromium = "/usr/bin/chromium"

// harness is a script the test puts first in each page it serves to the
// browser. It reports to /__report the paths a browser-grade crawler reads
// off the page without a request: those the page moves to by
// history.pushState or replaceState, and, 600 ms after the load event
// (past the maze's timers), the links of the document and its shadow
// roots. With CLICK true, it then clicks, twice each, the page's buttons
// and elements with an onclick attribute, in document order, shadow roots
// included; and after each click, depth first, each element the click
// made, before anything else. At the end it requests /__done.
const harness = `<script>
(function () {
  var CLICK = %CLICK%;
  function report(u) {
    fetch('/__report?u=' + encodeURIComponent(new URL(u, location.href).pathname), {keepalive: true});
  }
  ['pushState', 'replaceState'].forEach(function (k) {
    var f = history[k];
    history[k] = function (state, title, u) {
      if (u != null) {
        report(u);
      }
      return f.apply(this, arguments);
    };
  });
  function all(root, out) {
    root.querySelectorAll('*').forEach(function (e) {
      out.push(e);
      if (e.shadowRoot) {
        all(e.shadowRoot, out);
      }
    });
    return out;
  }
  function click(e, seen) {
    var before = new Set(all(document, []));
    e.click();
    all(document, []).forEach(function (n) {
      if (!before.has(n) && !seen.has(n)) {
        seen.add(n);
        click(n, seen);
      }
    });
  }
  addEventListener('load', function () {
    setTimeout(function () {
      all(document, []).forEach(function (e) {
        if (e.tagName == 'A' && e.href) {
          report(e.href);
        }
      });
      if (!CLICK) {
        fetch('/__done', {keepalive: true});
        return;
      }
      var first = all(document, []).filter(function (e) {
        return e.matches('button, input[type=button], input[type=submit], [onclick]');
      });
      var seen = new Set(all(document, []));
      first.forEach(function (e) {
        click(e, seen);
        click(e, seen);
      });
      fetch('/__done', {keepalive: true});
    }, 600);
  });
})();
</script>
`

// TestJSMazeChromium loads each page of the JSMaze in headless Chromium,
// with a fresh maze each time, twice: without clicks, when the browser
// must find every case that needs none (its target requested by the
// page, or reported by the harness as a link or history URL) and none of
// those that need clicks; and with the harness's clicks, when it must
// find every case of the page. Over all pages, every case is found. It is
// skipped when Chromium is missing, unless CI=true, and with -short.
func TestJSMazeChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser 44 times")
	}
	if _, err := os.Stat(chromium); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("chromium is not installed: %v", err)
		}
		t.Skipf("chromium is not installed: %v", err)
	}
	srv := httptest.NewServer(crawltest.NewFullMaze())
	pages, _ := mazePages(t, srv.URL)
	srv.Close()
	interaction := map[string]string{}
	for _, c := range crawltest.JSMazeCases() {
		interaction[c.Name] = c.Interaction
	}

	var mu sync.Mutex
	found := map[string]bool{}
	runs := 0
	slots := make(chan struct{}, 2) // browsers at a time
	t.Run("pages", func(t *testing.T) {
		for _, p := range pages {
			for _, click := range []bool{false, true} {
				name := strings.TrimPrefix(p, "/javascript/")
				if click {
					name += "/click"
				}
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					slots <- struct{}{}
					defer func() { <-slots }()
					got := browse(t, p, click)
					for _, c := range got {
						if !click && interaction[c] != "" {
							t.Errorf("found %s without a click, want it found only with one", c)
						}
					}
					mu.Lock()
					defer mu.Unlock()
					runs++
					for _, c := range got {
						if !click && interaction[c] == "" || click {
							found[c] = true
						}
					}
				})
			}
		}
	})
	if runs < 2*len(pages) {
		return // some pages were not run (go test -run)
	}
	for _, c := range crawltest.JSMazeCases() {
		if !found[c.Name] {
			t.Errorf("case %s (interaction %q): not found in a browser", c.Name, c.Interaction)
		}
	}
}

// browse loads the page p of a new JSMaze in Chromium, clicking with the
// harness if click, and returns the names of the cases found: their
// target requested or reported.
func browse(t *testing.T, p string, click bool) []string {
	maze := crawltest.NewJSMaze()
	var mu sync.Mutex
	reported := map[string]bool{}
	done := make(chan struct{})
	var doneOnce sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/__done" {
			doneOnce.Do(func() { close(done) })
			return
		}
		if r.URL.Path == "/__report" {
			mu.Lock()
			reported[r.URL.Query().Get("u")] = true
			mu.Unlock()
			return
		}
		if !strings.HasSuffix(r.URL.Path, ".html") {
			maze.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		maze.ServeHTTP(rec, r)
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		script := strings.Replace(harness, "%CLICK%", map[bool]string{false: "false", true: "true"}[click], 1)
		const meta = "<meta charset=\"utf-8\">\n"
		w.Write([]byte(strings.Replace(rec.Body.String(), meta, meta+script, 1)))
	}))
	defer srv.Close()

	// A page that moves to another document keeps headless Chromium's
	// --dump-dom from returning: the browser is also stopped, a normal end,
	// a moment after the harness says it is done (a longer wait fails).
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	stopCtx, stop := context.WithCancel(ctx)
	defer stop()
	stopped := make(chan struct{})
	go func() {
		select {
		case <-done:
		case <-stopCtx.Done():
			return
		}
		select {
		case <-time.After(1500 * time.Millisecond):
			close(stopped)
			stop()
		case <-stopCtx.Done():
		}
	}()
	cmd := exec.CommandContext(stopCtx, chromium, "--headless", "--no-sandbox", "--disable-gpu",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
		"--user-data-dir="+t.TempDir(), "--virtual-time-budget=3000", "--dump-dom", srv.URL+p)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	out, err := cmd.CombinedOutput()
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // what the browser left running
	}
	stop()
	select {
	case <-stopped:
	default:
		if err != nil {
			t.Fatalf("chromium %s: %v (deadline: %v)\n%s", p, err, ctx.Err(), out)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	var names []string
	for _, c := range crawltest.JSMazeCases() {
		if maze.Requests()[c.Target] > 0 || reported[c.Target] {
			names = append(names, c.Name)
		}
	}
	slices.Sort(names)
	return names
}
