package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/asyncrawl/crawl"
)

func TestBadStart(t *testing.T) {
	s := knownSite(t)
	dir := t.TempDir()
	// The same directory by another name: files not made yet, spelt
	// through it, are the same files.
	link := filepath.Join(dir, "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "afile"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string // in the one line on stderr
	}{
		{"workers zero", []string{"-max_tasks", "0", s.base}, `-max_tasks: must be at least 1`},
		{"crawl name with a brace", []string{"-crawl", "a}:x", s.base}, `-crawl: it may not hold '}'`},
		{"crawl name with a colon", []string{"-crawl", "site:2026", "-redis", "redis://127.0.0.1:1/0", s.base}, `-crawl: it may not hold ':'`},
		{"alias not a number", []string{"-workers", "many", s.base}, `-workers: not an integer`},
		{"negative redirects", []string{"-max_redirect", "-1", s.base}, `-max_redirect: must be at least 0`},
		{"tries zero", []string{"-max_tries=0", s.base}, `-max_tries: must be at least 1`},
		{"bad regexp", []string{"-exclude", "(", s.base}, `-exclude: error parsing regexp`},
		{"timeout zero", []string{"-timeout", "0", s.base}, `-timeout: must be positive`},
		{"negative delay", []string{"-host_delay", "-1s", s.base}, `-host_delay: must not be negative`},
		{"delay not a duration", []string{"-host_delay", "5", s.base}, `-host_delay: not a duration`},
		{"body size", []string{"-max_body", "ten", s.base}, `-max_body: not a size`},
		{"host workers", []string{"-host_workers", "0", s.base}, `-host_workers: must be at least 1`},
		{"depth", []string{"-max_depth", "-2", s.base}, `-max_depth: must be at least 0`},
		{"format", []string{"-format", "xml", s.base}, `-format: must be one of text, jsonl`},
		{"empty user agent", []string{"-user_agent", "", s.base}, `-user_agent: must not be empty`},
		{"user agent with a line break", []string{"-user_agent", "bot\nX-Evil: 1", s.base}, `-user_agent: not a valid header value`},
		{"user agent with a DEL", []string{"-user_agent", "bot\x7f", s.base}, `-user_agent: not a valid header value`},
		{"unknown flag", []string{"-bogus", s.base}, `flag provided but not defined: -bogus`},
		{"bad root scheme", []string{"ftp://example.com/"}, `scheme "ftp": not an absolute http(s) URL`},
		{"bad root among good", []string{s.base, "http://"}, `root "http://"`},
		{"no root", nil, `no root URL`},
		{"demo with root", []string{"-demo", s.base}, `-demo crawls the demo site`},
		{"unwritable output", []string{"-o", filepath.Join(dir, "no", "such", "dir"), s.base}, `-o: open`},
		{"unwritable profile", []string{"-cpuprofile", filepath.Join(dir, "no", "such", "dir"), s.base}, `-cpuprofile: open`},
		{"one file for two outputs", []string{"-o", filepath.Join(dir, "out"), "-graph", filepath.Join(dir, ".", "out"), s.base}, `-o and -graph name the same file`},
		{"report over the state", []string{"-state", filepath.Join(dir, "s.state"), "-o", filepath.Join(dir, "s.state"), s.base}, `-state and -o name the same file`},
		{"graph over the state", []string{"-state", filepath.Join(dir, "s.state"), "-graph", filepath.Join(dir, "s.state"), s.base}, `-state and -graph name the same file`},
		{"index over the state", []string{"-state", filepath.Join(dir, "s.state"), "-warc", filepath.Join(dir, "a.warc.gz"), "-warc_index", filepath.Join(dir, "s.state"), s.base}, `-state and -warc_index name the same file`},
		{"index over the archive", []string{"-warc", filepath.Join(dir, "a.warc.gz"), "-warc_index", filepath.Join(dir, "a.warc.gz"), s.base}, `-warc and -warc_index name the same file`},
		{"state under a file", []string{"-state", filepath.Join(dir, "afile", "s.state"), s.base}, `afile is not a directory`},
		{"one new file through a link", []string{"-o", filepath.Join(dir, "g"), "-graph", filepath.Join(link, "g"), s.base}, `-o and -graph name the same file`},
		{"the profile over the report through a link", []string{"-o", filepath.Join(link, "p"), "-cpuprofile", filepath.Join(dir, "p"), s.base}, `-o and -cpuprofile name the same file`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCrawl(t, tt.args...)
			if r.code != 1 {
				t.Errorf("crawl %q: exit %d, want 1", tt.args, r.code)
			}
			if r.stdout != "" {
				t.Errorf("crawl %q: stdout %q, want nothing", tt.args, r.stdout)
			}
			lines := strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n")
			if len(lines) != 1 || !strings.HasPrefix(lines[0], "crawl: ") || !strings.Contains(lines[0], tt.want) {
				t.Errorf("crawl %q: stderr %q, want one line starting crawl: and holding %q", tt.args, r.stderr, tt.want)
			}
		})
	}
	if n := s.Total(); n != 0 {
		t.Errorf("the site got %d requests from commands that could not start, want 0", n)
	}
}

func TestBadRootKeepsOutputFile(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, "old.txt")
	if err := os.WriteFile(old, []byte("previous report\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	fresh := filepath.Join(dir, "fresh.txt")
	if r := runCrawl(t, "-o", old, "-graph", fresh, "ftp://example.com/"); r.code != 1 {
		t.Fatalf("exit %d, want 1; stderr %q", r.code, r.stderr)
	}
	if b, err := os.ReadFile(old); err != nil || string(b) != "previous report\n" {
		t.Errorf("-o file after a bad root: %q, %v; want it as it was", b, err)
	}
	if _, err := os.Stat(fresh); !os.IsNotExist(err) {
		t.Errorf("-graph file created by a run that could not start: stat err %v, want it removed", err)
	}
}

func TestHelp(t *testing.T) {
	r := runCrawl(t, "-h")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("crawl -h: exit %d, stderr %q; want 0 and nothing", r.code, r.stderr)
	}
	var cfg config
	newCLI(&cfg).fs.VisitAll(func(f *flag.Flag) {
		if !regexp.MustCompile(`(?m)[ ,]-` + regexp.QuoteMeta(f.Name) + `\b`).MatchString(r.stdout) {
			t.Errorf("crawl -h does not show -%s:\n%s", f.Name, r.stdout)
		}
	})
	for _, want := range []string{"(default 10)", "(default 4)", "(default 100)", "(default 8)", "(default 30s)", "(default 10MiB)", "(default true)"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("crawl -h does not show %q", want)
		}
	}
}

// counterRE matches a counter line of the report.
var counterRE = regexp.MustCompile(`^ +(\d+) (\w+)$`)

// splitReport splits a report into its URL lines, its Finished line, its
// counters and its Todo and Done lines.
func splitReport(t *testing.T, out string) (urls []string, finished string, counters map[string]string, todo, done string) {
	t.Helper()
	counters = map[string]string{}
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		switch {
		case strings.HasPrefix(l, "Finished "):
			finished = l
		case strings.HasPrefix(l, "Todo: "):
			todo = strings.TrimPrefix(l, "Todo: ")
		case strings.HasPrefix(l, "Done: "):
			done = strings.TrimPrefix(l, "Done: ")
		case strings.HasPrefix(l, "Date: "), strings.HasPrefix(l, "Budget: "):
		case counterRE.MatchString(l):
			m := counterRE.FindStringSubmatch(l)
			counters[m[2]] = m[1]
		default:
			if finished != "" {
				t.Errorf("report line %q after the Finished line", l)
			}
			urls = append(urls, l)
		}
	}
	return urls, finished, counters, todo, done
}

func TestReport(t *testing.T) {
	s := knownSite(t)
	out := filepath.Join(t.TempDir(), "report.txt")
	for _, tt := range []struct {
		name string
		args []string
		file string // where the report goes; "" for stdout
	}{
		{"stdout", []string{"-max_tries", "1", "-workers", "3", s.base}, ""},
		{"flags after the root, -o", []string{s.base, "-o", out, "-max_tries", "1", "-workers", "3"}, out},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := runCrawl(t, tt.args...)
			if r.code != 0 {
				t.Fatalf("exit %d, want 0; stderr %q", r.code, r.stderr)
			}
			report := r.stdout
			if tt.file != "" {
				if r.stdout != "" {
					t.Errorf("stdout %q with -o, want nothing", r.stdout)
				}
				b, err := os.ReadFile(tt.file)
				if err != nil {
					t.Fatal(err)
				}
				report = string(b)
			}
			urls, finished, counters, todo, done := splitReport(t, report)

			broken := s.base + "/broken error "
			if i := slices.IndexFunc(urls, func(l string) bool { return strings.HasPrefix(l, broken) }); i < 0 {
				t.Errorf("no line starting %q in\n%s", broken, report)
			} else {
				urls = slices.Delete(urls, i, i+1)
			}
			if want := knownLines(s.base); !slices.Equal(urls, want) {
				t.Errorf("URL lines:\n%s\nwant:\n%s", strings.Join(urls, "\n"), strings.Join(want, "\n"))
			}
			if !regexp.MustCompile(`^Finished 8 urls in \d+\.\d{3} secs \(max_tasks=3\) \(\d+\.\d{3} urls/sec/task\)$`).MatchString(finished) {
				t.Errorf("Finished line %q, want 8 urls and max_tasks=3", finished)
			}
			htmlBytes := len(homeBody) + len(aboutBody) + len(blogBody) + len(firstBody)
			want := map[string]string{
				"html": "4", "html_bytes": fmt.Sprint(htmlBytes),
				"other": "1", "other_bytes": fmt.Sprint(len(logoBody)),
				"redirect": "1", "error": "1", "error_bytes": fmt.Sprint(len(goneBody)),
				"fail": "1", "status_200": "5", "status_301": "1", "status_404": "1",
			}
			// The kind of a broken connection is the network's to say.
			var kinds []string
			for k, v := range counters {
				if strings.HasPrefix(k, "fail_") && v == "1" {
					kinds = append(kinds, k)
				}
			}
			if len(kinds) == 1 {
				want[kinds[0]] = "1"
			}
			if !maps.Equal(counters, want) {
				t.Errorf("counters %v, want %v and one fail_<kind> 1", counters, want)
			}
			if todo != "0" || done != "8" {
				t.Errorf("Todo: %s, Done: %s; want 0 and 8", todo, done)
			}
		})
	}
}

func TestJSONLines(t *testing.T) {
	s := knownSite(t)
	r := runCrawl(t, "-format", "jsonl", "-max_tries", "1", "-q", s.base)
	if r.code != 0 {
		t.Fatalf("exit %d, want 0; stderr %q", r.code, r.stderr)
	}
	var results []jsonResult
	var summary *jsonSummary
	sc := bufio.NewScanner(strings.NewReader(r.stdout))
	for sc.Scan() {
		if summary != nil {
			t.Fatalf("line %q after the summary", sc.Text())
		}
		var kind struct{ Type string }
		if err := json.Unmarshal(sc.Bytes(), &kind); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		switch kind.Type {
		case "result":
			var res jsonResult
			dec := json.NewDecoder(strings.NewReader(sc.Text()))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&res); err != nil {
				t.Fatalf("line %q: %v", sc.Text(), err)
			}
			results = append(results, res)
		case "summary":
			summary = new(jsonSummary)
			if err := json.Unmarshal(sc.Bytes(), summary); err != nil {
				t.Fatalf("line %q: %v", sc.Text(), err)
			}
		default:
			t.Fatalf("line %q: type %q, want result or summary", sc.Text(), kind.Type)
		}
	}
	if summary == nil {
		t.Fatalf("no summary in\n%s", r.stdout)
	}

	byURL := map[string]jsonResult{}
	for _, res := range results {
		byURL[strings.TrimPrefix(res.URL, s.base)] = res
	}
	want := map[string]struct {
		kind, next string
		status     int
		size       int
		links, new int
		depth      int
	}{
		"/":           {"html", "", 200, len(homeBody), 3, 3, 0},
		"/about":      {"html", "", 200, len(aboutBody), 3, 2, 1},
		"/blog/":      {"html", "", 200, len(blogBody), 4, 2, 1},
		"/blog/first": {"html", "", 200, len(firstBody), 0, 0, 2},
		"/logo.png":   {"other", "", 200, len(logoBody), 0, 0, 2},
		"/missing":    {"error", "", 404, len(goneBody), 0, 0, 2},
		"/old":        {"redirect", s.base + "/blog/", 301, 0, 1, 0, 1}, // its target, its one link, seen before
		"/broken":     {"fail", "", 0, 0, 0, 0, 2},
	}
	if len(results) != len(want) {
		t.Errorf("%d results, want %d", len(results), len(want))
	}
	for path, w := range want {
		got, ok := byURL[path]
		switch {
		case !ok:
			t.Errorf("no result for %s", path)
		case got.Kind != w.kind || got.NextURL != w.next || got.Status != w.status || got.Size != w.size ||
			got.NumURLs != w.links || got.NumNewURLs != w.new || got.Depth != w.depth || got.Tries != 1 && (path != "/broken" || got.Tries > 3):
			// -max_tries 1: /broken, which closes the connection
			// unanswered, may be sent again once on another if the
			// first was kept alive, or, in net/http's race, twice
			// (WithMaxTries), and no more.
			t.Errorf("%s: got %+v, want %+v and 1 try (3 at most for /broken)", path, got, w)
		case (got.Error != "") != (w.kind == "fail") || (got.FailKind != "") != (w.kind == "fail"):
			t.Errorf("%s: error %q, fail_kind %q; want both set exactly for a fail", path, got.Error, got.FailKind)
		}
	}
	if got := byURL["/logo.png"]; got.ContentType != "image/png" || got.Encoding != "" {
		t.Errorf("/logo.png: content_type %q, encoding %q; want image/png and none", got.ContentType, got.Encoding)
	}

	if summary.Done != len(results) || summary.Todo != 0 || summary.Interrupted || summary.Workers != 100 {
		t.Errorf("summary %+v: want done %d, todo 0, not interrupted, 100 workers", summary, len(results))
	}
	if summary.HTML != 4 || summary.Other != 1 || summary.Redirect != 1 || summary.Error != 1 || summary.Fail != 1 ||
		summary.Status[200] != 5 || summary.Status[301] != 1 || summary.Status[404] != 1 {
		t.Errorf("summary counters %+v, want 4 html, 1 other, 1 redirect, 1 error, 1 fail, 5×200, 1×301, 1×404", summary)
	}
	if kind := byURL["/broken"].FailKind; summary.FailKinds[kind] != 1 {
		t.Errorf("summary fail_kinds %v, want %s: 1", summary.FailKinds, kind)
	}
}

// edgeRE matches an edge of the DOT graph; group 3 holds its attributes.
var edgeRE = regexp.MustCompile(`^\t"((?:[^"\\]|\\.)*)" -> "((?:[^"\\]|\\.)*)"(?: \[(.*)\])?;$`)

func TestGraph(t *testing.T) {
	s := knownSite(t)
	dot := filepath.Join(t.TempDir(), "site.dot")
	// /missing is excluded: its link is left out of the graph, as links
	// to every URL of the site that was not crawled are.
	r := runCrawl(t, "-graph", dot, "-max_tries", "1", "-q", "-exclude", "/missing$", s.base)
	if r.code != 0 {
		t.Fatalf("exit %d, want 0; stderr %q", r.code, r.stderr)
	}
	b, err := os.ReadFile(dot)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(b), "digraph crawl {\n") || !strings.HasSuffix(string(b), "}\n") {
		t.Errorf("graph is not one digraph:\n%s", b)
	}
	var links, redirects []string
	for _, l := range strings.Split(string(b), "\n") {
		m := edgeRE.FindStringSubmatch(l)
		if m == nil {
			if strings.Contains(l, "->") {
				t.Errorf("edge line %q not understood", l)
			}
			continue
		}
		e := strings.TrimPrefix(m[1], s.base) + " -> " + strings.TrimPrefix(m[2], s.base)
		if strings.Contains(m[3], "dashed") {
			redirects = append(redirects, e)
		} else {
			links = append(links, e)
		}
	}
	wantLinks := []string{
		"/ -> /about", "/ -> /blog/", "/ -> https://elsewhere.example/", "/ -> /old",
		"/about -> /", "/about -> /logo.png",
		"/blog/ -> /blog/first", "/blog/ -> /broken", "/blog/ -> /about",
	}
	slices.Sort(links)
	slices.Sort(wantLinks)
	if !slices.Equal(links, wantLinks) {
		t.Errorf("link edges:\n%s\nwant:\n%s", strings.Join(links, "\n"), strings.Join(wantLinks, "\n"))
	}
	if want := []string{"/old -> /blog/"}; !slices.Equal(redirects, want) {
		t.Errorf("redirect edges %q, want %q", redirects, want)
	}
	// Every node an edge names is declared, the crawled ones with a fill
	// colour and the one on another host as not crawled.
	for _, n := range []string{s.base + "/", s.base + "/broken", s.base + "/logo.png"} {
		if !regexp.MustCompile(`(?m)^\t` + regexp.QuoteMeta(dotQuote(n)) + ` \[.*fillcolor=`).Match(b) {
			t.Errorf("node %s not declared with a colour in\n%s", n, b)
		}
	}
	if !regexp.MustCompile(`(?m)^\t"https://elsewhere.example/" \[.*dashed`).Match(b) {
		t.Errorf("the other host's page is not a dashed node in\n%s", b)
	}
	if !strings.Contains(string(b), "\t// 1 left out: links to URLs of the crawled hosts that got no result.\n") ||
		strings.Contains(string(b), s.base+"/missing") {
		t.Errorf("graph does not leave out the excluded /missing, and say so:\n%s", b)
	}
}

func TestProgressNotTerminal(t *testing.T) {
	s := knownSite(t)
	r := runCrawl(t, "-max_tries", "1", s.base)
	if r.code != 0 {
		t.Fatalf("exit %d, want 0; stderr %q", r.code, r.stderr)
	}
	for _, bad := range []string{"\r", "\x1b", "in flight"} {
		if strings.Contains(r.stderr, bad) {
			t.Errorf("stderr, not a terminal, holds %q: %q", bad, r.stderr)
		}
	}
	// What stderr does get is the log: the broken URL's failure.
	if !strings.Contains(r.stderr, "level=WARN") || !strings.Contains(r.stderr, s.base+"/broken") {
		t.Errorf("stderr %q, want the failure of /broken logged", r.stderr)
	}
}

// TestFlagsReachTheCrawler checks that the flags of the package's options
// change the crawl, as the site and the results show.
func TestFlagsReachTheCrawler(t *testing.T) {
	tests := []struct {
		name  string
		args  []string
		paths []string // the URLs with a result
		check func(s *site, r ran, results map[string]jsonResult) string
	}{
		{"max_depth", []string{"-max_depth", "1"}, []string{"/", "/about", "/blog/", "/old"}, nil},
		{"exclude", []string{"-exclude", "/blog/", "-exclude", `\.png$`}, []string{"/", "/about", "/old", "/missing"}, nil},
		{"max_redirect 0", []string{"-max_redirect", "0", "-max_depth", "1"}, []string{"/", "/about", "/blog/", "/old"}, func(s *site, r ran, results map[string]jsonResult) string {
			if old := results["/old"]; old.Kind != "fail" || old.NextURL != s.base+"/blog/" || old.Status != 301 {
				return fmt.Sprintf("/old: %+v, want a failed 301 to /blog/", old)
			}
			return ""
		}},
		{"user_agent and robots", []string{"-user_agent", "tester/1.0", "-max_depth", "1"}, []string{"/", "/about", "/blog/", "/old"}, func(s *site, r ran, results map[string]jsonResult) string {
			if n := s.agent("tester/1.0"); n != s.Total() || s.Count("/robots.txt") != 1 {
				return fmt.Sprintf("%d of %d requests from tester/1.0, %d for robots.txt; want all and 1", n, s.Total(), s.Count("/robots.txt"))
			}
			return ""
		}},
		{"no robots", []string{"-robots=false", "-max_depth", "1"}, []string{"/", "/about", "/blog/", "/old"}, func(s *site, r ran, results map[string]jsonResult) string {
			if n := s.Count("/robots.txt"); n != 0 {
				return fmt.Sprintf("%d requests for robots.txt, want 0", n)
			}
			return ""
		}},
		{"max_links", []string{"-max_links", "1", "-max_depth", "1"}, []string{"/", "/about"}, func(s *site, r ran, results map[string]jsonResult) string {
			if _, summary := parseJSONLines(t, r.stdout); summary.Refused["links_per_page"] == 0 {
				return fmt.Sprintf("summary %+v, want links_per_page refusals", summary)
			}
			return ""
		}},
		{"block_private", []string{"-block_private"}, []string{"/"}, func(s *site, r ran, results map[string]jsonResult) string {
			if home := results["/"]; home.FailKind != "blocked" || s.Total() != 0 {
				return fmt.Sprintf("/: %+v, server saw %d requests; want fail kind blocked and none", home, s.Total())
			}
			return ""
		}},
		{"max_pages", []string{"-max_pages", "1"}, []string{"/"}, func(s *site, r ran, results map[string]jsonResult) string {
			_, summary := parseJSONLines(t, r.stdout)
			if !strings.Contains(r.stderr, "stopped by -max_pages") || summary.Todo != 3 || summary.Budget != "max_pages" {
				return fmt.Sprintf("stderr %q, summary %+v; want the budget named and todo 3", r.stderr, summary)
			}
			return ""
		}},
	}
	// The exit status where it is not 0: -block_private keeps the crawl
	// from the loopback root, which gets no response.
	exit := map[string]int{"block_private": 1}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := knownSite(t)
			args := append([]string{"-format", "jsonl", "-max_tries", "1", s.base}, tt.args...)
			r := runCrawl(t, args...)
			if r.code != exit[tt.name] {
				t.Fatalf("crawl %q: exit %d, want %d; stderr %q", args, r.code, exit[tt.name], r.stderr)
			}
			results, _ := parseJSONLines(t, r.stdout)
			byPath := map[string]jsonResult{}
			for _, res := range results {
				byPath[strings.TrimPrefix(res.URL, s.base)] = res
			}
			got := slices.Sorted(maps.Keys(byPath))
			want := slices.Sorted(slices.Values(tt.paths))
			if !slices.Equal(got, want) {
				t.Errorf("crawl %q: results for %q, want %q", tt.args, got, want)
			}
			if tt.check != nil {
				if msg := tt.check(s, r, byPath); msg != "" {
					t.Errorf("crawl %q: %s", tt.args, msg)
				}
			}
		})
	}
}

// The text report past its memory spills its lines to $TMPDIR and writes
// them all the same, sorted by URL, as it does from memory; the spilled
// files are gone after.
func TestTextReportSpills(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	var results []crawl.Result
	for i := range 3000 {
		r := crawl.Result{URL: fmt.Sprintf("http://h%d.test/p/%d?q=%d", i%7, (i*7919)%3000, i), Status: 200, ContentType: "text/html", Size: i, NumURLs: 20}
		switch i % 10 {
		case 3:
			r.Status, r.NextURL = 301, r.URL+"/next"
		case 5:
			r.Status, r.Err = 0, fmt.Errorf("fetch %s: a message\nof two lines", r.URL)
		}
		results = append(results, r)
	}
	stats := &crawl.Stats{Done: len(results)}
	report := func(limit int) string {
		t.Helper()
		warned := 0
		rep := newTextReport(limit, func(error) { warned++ })
		for i := range results {
			rep.result(&results[i])
		}
		defer rep.close()
		if limit > 0 && rep.lines.Runs() == 0 {
			t.Errorf("limit %d: nothing spilled", limit)
		}
		var b strings.Builder
		if err := rep.write(&b, stats, stats.Done); err != nil {
			t.Fatalf("limit %d: write: %v", limit, err)
		}
		if warned != 0 {
			t.Errorf("limit %d: warned %d times, want none", limit, warned)
		}
		return undated(b.String())
	}
	inMemory, spilled := report(0), report(4<<10)
	if spilled != inMemory {
		t.Errorf("the report spilled differs from the one in memory")
	}
	var want strings.Builder
	sorted := slices.Clone(results)
	slices.SortFunc(sorted, func(a, b crawl.Result) int { return strings.Compare(a.URL, b.URL) })
	for i := range sorted {
		sorted[i].WriteReportLine(&want)
	}
	stats.WriteReport(&want)
	if inMemory != undated(want.String()) {
		t.Errorf("report:\n%.500s\nwant the lines sorted by URL:\n%.500s", inMemory, want.String())
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("after the report, $TMPDIR holds %d entries, want none", len(left))
	}
}

// undated drops the report's "Date: ... local time" line, which says when
// it was written, so that two reports written a second apart compare.
func undated(report string) string {
	var b strings.Builder
	for line := range strings.Lines(report) {
		if !strings.HasPrefix(line, "Date: ") {
			b.WriteString(line)
		}
	}
	return b.String()
}

// A -state file named by another flag too is refused before anything is
// written: the crawl in it is left byte for byte as it was.
func TestStateNamedTwice(t *testing.T) {
	s := knownSite(t)
	dir := t.TempDir()
	state := filepath.Join(dir, "s.state")
	if r := runCrawl(t, "-q", "-state", state, s.base); r.code != 0 {
		t.Fatalf("first run: exit %d, stderr %q", r.code, r.stderr)
	}
	before, err := os.ReadFile(state)
	if err != nil {
		t.Fatal(err)
	}
	for _, flag := range []string{"-o", "-graph", "-cpuprofile"} {
		r := runCrawl(t, "-q", "-state", state, flag, filepath.Join(dir, ".", "s.state"), s.base)
		if r.code != 1 || !strings.Contains(r.stderr, "-state and "+flag+" name the same file") {
			t.Errorf("%s over the state: exit %d, stderr %q; want 1 and the two flags named", flag, r.code, r.stderr)
		}
		if after, err := os.ReadFile(state); err != nil || !bytes.Equal(after, before) {
			t.Fatalf("%s over the state: the state file changed (%v)", flag, err)
		}
	}
}

// A server whose body runs past its Content-Length makes net/http log
// "Unsolicited response received on idle HTTP channel" through the
// standard logger: with -q nothing of it reaches stderr; with -v it is a
// debug line of the crawl's log.
func TestNetHTTPLogQuiet(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					if req.URL.Path == "/robots.txt" {
						io.WriteString(c, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
						continue
					}
					// 5 bytes said, 40 sent: the rest comes unasked.
					io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello"+strings.Repeat("x", 35))
					time.Sleep(200 * time.Millisecond)
				}
			}()
		}
	}()
	root := "http://" + l.Addr().String() + "/"
	if r := runCrawl(t, "-q", root); r.code != 0 || r.stderr != "" {
		t.Errorf("-q: exit %d, stderr %q; want 0 and nothing", r.code, r.stderr)
	}
}

// JSON lines that cannot be written (a full disk: /dev/full) stop the
// crawl at once, with exit 1 and a line naming -o and the error: the URLs
// done after would have had no line.
func TestJSONLinesWriteErrorStops(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	const pages = 300
	s := newGraphSite(t, pages, 5*time.Millisecond)
	r := runCrawl(t, "-q", "-workers", "4", "-format", "jsonl", "-o", "/dev/full", s.URL+"/p/0")
	if r.code != 1 || !strings.Contains(r.stderr, "-o /dev/full") || !strings.Contains(r.stderr, "no space left on device") {
		t.Errorf("exit %d, stderr %q; want 1, a line naming -o /dev/full and the error", r.code, r.stderr)
	}
	if n := s.total.Load(); n > pages/4 {
		t.Errorf("the site got %d of its %d pages' requests after the first line failed; want the crawl stopped at once", n, pages)
	}

	// The same on standard output (crawl > /dev/full).
	before := s.total.Load()
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer full.Close()
	dir := t.TempDir()
	state := filepath.Join(dir, "crawl.state")
	cmd := crawlCmd(t, "-q", "-workers", "4", "-format", "jsonl", "-state", state, s.URL+"/p/0")
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = full, &stderr
	r = wait(t, cmd, &bytes.Buffer{}, &stderr, cmd.Run())
	if r.code != 1 || !strings.Contains(r.stderr, "standard output") || !strings.Contains(r.stderr, "no space left on device") {
		t.Errorf("on standard output: exit %d, stderr %q; want 1, a line naming standard output and the error", r.code, r.stderr)
	}
	if n := s.total.Load() - before; n > pages/4 {
		t.Errorf("on standard output: the site got %d of its %d pages' requests; want the crawl stopped at once", n, pages)
	}
	// With -state, the next run writes a line for every URL done, those
	// done before the line failed too.
	out := filepath.Join(dir, "out.jsonl")
	if r := runCrawl(t, "-q", "-workers", "4", "-format", "jsonl", "-o", out, "-state", state, s.URL+"/p/0"); r.code != 0 {
		t.Fatalf("the next run: exit %d, stderr %q", r.code, r.stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for i := range pages {
		if u := fmt.Sprintf(`"url":"%s/p/%d"`, s.URL, i); !strings.Contains(string(b), u+",") {
			t.Errorf("the next run's lines lack %s", u)
		}
	}
}

// A reader of standard output that goes away (crawl ... | head -n1) does
// not kill the command with SIGPIPE, silently, exit 141: the JSON line
// that cannot be written stops the crawl with a line that says so, exit
// 1, as on a full disk. One of standard error that goes away (2>&1
// >/dev/null | head) costs the logs only: the crawl goes on to its end.
func TestBrokenPipe(t *testing.T) {
	const pages = 300
	s := newGraphSite(t, pages, 2*time.Millisecond)
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := crawlCmd(t, "-q", "-workers", "4", "-format", "jsonl", s.URL+"/p/0")
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = pw, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil || !strings.Contains(line, `"type":"result"`) {
		t.Fatalf("first line %q, %v; want a result", line, err)
	}
	pr.Close() // head -n1 exits
	r := wait(t, cmd, &bytes.Buffer{}, &stderr, cmd.Wait())
	if r.code != 1 || !strings.Contains(r.stderr, "standard output") || !strings.Contains(r.stderr, "broken pipe") {
		t.Errorf("stdout closed after a line: exit %d, stderr %q; want 1, a line naming standard output and a broken pipe", r.code, r.stderr)
	}
	if n := s.total.Load(); n > pages/2 {
		t.Errorf("the site got %d of its %d pages' requests; want the crawl stopped at once", n, pages)
	}

	// Standard error closed: the lines all go to -o, exit 0.
	er, ew, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	er.Close()
	out := filepath.Join(t.TempDir(), "out.jsonl")
	cmd = crawlCmd(t, "-v", "-workers", "4", "-format", "jsonl", "-o", out, s.URL+"/p/0")
	cmd.Stderr = ew
	err = cmd.Run()
	ew.Close()
	r = wait(t, cmd, &bytes.Buffer{}, &bytes.Buffer{}, err)
	b, _ := os.ReadFile(out)
	if r.code != 0 || bytes.Count(b, []byte(`"type":"result"`)) < pages {
		t.Errorf("stderr closed: exit %d, %d result lines; want 0 and a line for each of the %d pages", r.code, bytes.Count(b, []byte(`"type":"result"`)), pages)
	}
}

// -o on a disk that fills up (here, the file size limit of ulimit -f)
// ends with the last whole line: "the lines before are written", and
// none cut in two.
func TestJSONLinesFullDiskWholeLines(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	s := newGraphSite(t, 300, 0)
	out := filepath.Join(t.TempDir(), "out.jsonl")
	args := append([]string{"-c", `ulimit -f 16 && exec "$@"`, "bash", crawlBin}, "-q", "-workers", "4", "-format", "jsonl", "-o", out, s.URL+"/p/0")
	cmd := exec.Command("bash", args...)
	cmd.Env = append(os.Environ(), "GORACE=atexit_sleep_ms=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	r := wait(t, cmd, &bytes.Buffer{}, &stderr, cmd.Run())
	if r.code != 1 || !strings.Contains(r.stderr, "-o "+out) {
		t.Fatalf("exit %d, stderr %q; want 1 and a line naming -o", r.code, r.stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) == 0 || b[len(b)-1] != '\n' {
		t.Fatalf("the file (%d bytes) ends %q; want whole lines", len(b), b[max(0, len(b)-40):])
	}
	for i, l := range bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n")) {
		if !json.Valid(l) {
			t.Errorf("line %d is not JSON: %q", i+1, l)
		}
	}
}
