package main

import (
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/asyncrawl/crawl"
)

func TestParse(t *testing.T) {
	tests := []struct {
		args  []string
		check func(c *config) bool
		want  string
	}{
		{[]string{"a.example", "-workers", "7", "b.example", "-lenient", "--", "-c"}, func(c *config) bool {
			return c.workers == 7 && c.lenient && slices.Equal(c.roots, []string{"a.example", "b.example", "-c"})
		}, "workers 7, lenient, roots a.example b.example -c"},
		{[]string{"-max_tasks", "3", "-workers", "5", "x"}, func(c *config) bool { return c.workers == 5 }, "workers 5: the last alias wins"},
		{[]string{"--max_redirect=2", "--tries", "9", "x"}, func(c *config) bool { return c.maxRedirect == 2 && c.maxTries == 9 }, "max_redirect 2, max_tries 9"},
		{[]string{"-lenient", "-strict", "x"}, func(c *config) bool { return !c.lenient }, "strict: the last wins"},
		{[]string{"-strict=false", "x"}, func(c *config) bool { return c.lenient }, "lenient"},
		{[]string{"-q", "-v", "x"}, func(c *config) bool { return c.logLevel == slog.LevelDebug && !c.quiet }, "debug, not quiet"},
		{[]string{"-v", "-quiet", "x"}, func(c *config) bool { return c.logLevel == slog.LevelError && c.quiet }, "errors only, quiet"},
		{[]string{"x"}, func(c *config) bool {
			return c.workers == 100 && c.maxRedirect == 10 && c.maxTries == 4 && !c.lenient && c.robots && !c.sitemaps &&
				c.hostWorkers == crawl.DefaultHostWorkers && c.maxBody == crawl.DefaultMaxBodySize && c.timeout == crawl.DefaultRequestTimeout &&
				c.logLevel == slog.LevelInfo && c.format == "text"
		}, "crawl.py's defaults"},
		{[]string{"-robots=false", "-sitemaps", "-max_depth", "2", "-max_pages", "50", "-max_duration", "1m", "-host_delay", "250ms", "x"}, func(c *config) bool {
			return !c.robots && c.sitemaps && c.maxDepth == 2 && c.maxPages == 50 && c.maxDuration == time.Minute && c.hostDelay == 250*time.Millisecond
		}, "the politeness and budget flags set"},
		{[]string{"-redis_cluster", "a.example:7000,10.0.0.2:7001", "-redis_cluster", "[::1]:7002", "-redis_wait_replicas", "2", "x"}, func(c *config) bool {
			return slices.Equal(c.cluster, []string{"a.example:7000", "10.0.0.2:7001", "[::1]:7002"}) && c.waitReplicas == 2 && c.waitReplicasGiven
		}, "three cluster nodes, comma-separated and repeated; wait for 2 replicas"},
		{[]string{"-exclude", `\.pdf$`, "-exclude", "/private/", "x"}, func(c *config) bool {
			return slices.Equal(c.exclude, []string{`\.pdf$`, "/private/"})
		}, "two exclude patterns"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var c config
			if err := newCLI(&c).parse(&c, tt.args); err != nil {
				t.Fatalf("parse %q: %v", tt.args, err)
			}
			if !tt.check(&c) {
				t.Errorf("parse %q: got %+v, want %s", tt.args, c, tt.want)
			}
		})
	}
}

func TestSizeFlag(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want int64 // 0: an error
		str  string
	}{
		{"100", 100, "100"},
		{"512k", 512 << 10, "512KiB"},
		{"512KB", 512 << 10, "512KiB"},
		{"10MiB", 10 << 20, "10MiB"},
		{"1g", 1 << 30, "1GiB"},
		{"1536k", 1536 << 10, "1536KiB"},
		{"0", 0, ""},
		{"-1", 0, ""},
		{"1.5M", 0, ""},
		{"k", 0, ""},
		{"9999999999G", 0, ""},
	} {
		var n int64
		f := &sizeFlag{p: &n}
		err := f.Set(tt.in)
		switch {
		case tt.want == 0 && err == nil:
			t.Errorf("Set(%q): got %d, want an error", tt.in, n)
		case tt.want != 0 && (err != nil || n != tt.want || f.String() != tt.str):
			t.Errorf("Set(%q): got %d, %q, %v; want %d, %q", tt.in, n, f.String(), err, tt.want, tt.str)
		}
	}
}

func TestProgressLine(t *testing.T) {
	start := time.Unix(1000, 0)
	p := newProgress()
	p.start = start
	p.update(crawl.Progress{Queued: 0, InFlight: 1})
	if got, want := p.line(start), "0 done, 0 queued, 1 in flight, 0 errors, 0 pages/s, 0.0s"; got != want {
		t.Errorf("at the start: got %q, want %q", got, want)
	}
	p.result(&crawl.Result{URL: "http://a.example/", Status: 200, NumNewURLs: 5})
	p.result(&crawl.Result{URL: "http://a.example/2", Status: 404})
	p.update(crawl.Progress{Queued: 3, InFlight: 1})
	if got, want := p.line(start.Add(2*time.Second)), "2 done, 3 queued, 1 in flight, 1 error, 1 pages/s, 2.0s"; got != want {
		t.Errorf("after two results: got %q, want %q", got, want)
	}
	p.result(&crawl.Result{URL: "http://a.example/1", Err: errors.New("boom")})
	p.update(crawl.Progress{Queued: 2, InFlight: 0})
	if got, want := p.line(start.Add(3*time.Second)), "3 done, 2 queued, 0 in flight, 2 errors, 1 pages/s, 3.0s"; got != want {
		t.Errorf("after a failure: got %q, want %q", got, want)
	}
}
