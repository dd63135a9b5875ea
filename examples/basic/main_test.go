package main

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
)

// The program's report: a line per URL of its site, sorted, with the
// site's address (a port that changes each run) replaced by SITE, then the
// summary, whose counts are the crawl's.
func TestRunReport(t *testing.T) {
	var out bytes.Buffer
	if err := run(t.Context(), &out); err != nil {
		t.Fatalf("run: %v", err)
	}
	report := regexp.MustCompile(`http://127\.0\.0\.1:\d+`).ReplaceAllString(out.String(), "SITE")
	lines := strings.Split(report, "\n")
	wantLines := []string{
		"SITE/ 200 text/html utf-8 116 2/2",
		"SITE/about 200 text/html utf-8 70 1/2",
		"SITE/blog/ 200 text/html utf-8 100 3/3",
		"SITE/blog/first 200 text/html utf-8 42 0/1",
		"SITE/blog/second 200 text/html utf-8 65 1/1",
		"SITE/logo.png 200 image/png ? 8 0/0",
		"SITE/missing 404 text/plain utf-8 19 0/0",
		"SITE/old-blog 301 redirect SITE/blog/",
	}
	if len(lines) < len(wantLines) {
		t.Fatalf("report has %d lines, want at least %d:\n%s", len(lines), len(wantLines), report)
	}
	for i, want := range wantLines {
		if lines[i] != want {
			t.Errorf("report line %d: got %q, want %q", i+1, lines[i], want)
		}
	}
	// The summary: its first line and its date vary; its counts do not.
	if !strings.HasPrefix(lines[len(wantLines)], "Finished 8 urls in ") {
		t.Errorf("summary: got %q, want it to start with %q", lines[len(wantLines)], "Finished 8 urls in ")
	}
	for _, want := range []string{
		"         5 html\n",
		"         1 redirect\n",
		"         1 status_404\n",
		"Todo: 0\n",
		"Done: 8\n",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("summary lacks %q:\n%s", want, report)
		}
	}
}
