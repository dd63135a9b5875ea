package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// realDocs is the documentation tree TestLinkcheckRealDocs copies: the
// directory LINKCHECK_DOCS names, else Node.js's API documentation where
// Debian's nodejs package installs it (.ci/run installs nodejs, for the
// WARC reader). It is a real tree of some 60 pages with their stylesheets,
// scripts and images, and links to other sites, which this sandbox cannot
// reach.
func realDocs(t *testing.T) (dir, index string) {
	if d := os.Getenv("LINKCHECK_DOCS"); d != "" {
		return d, os.Getenv("LINKCHECK_INDEX")
	}
	const node = "/usr/share/doc/nodejs/api"
	if _, err := os.Stat(filepath.Join(node, "index.html")); err != nil {
		t.Skip("no documentation tree: set LINKCHECK_DOCS to one")
	}
	return node, "index.html"
}

// A copy of a real documentation tree with breaks planted in it: every
// planted break is reported, with the page that named it, and no URL of
// the tree that is not broken is.
func TestLinkcheckRealDocs(t *testing.T) {
	src, index := realDocs(t)
	dir := t.TempDir()
	var pages []string
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if strings.HasSuffix(rel, ".gz") {
			// Debian compresses what it installs; the tree as its
			// authors ship it has the files plain.
			if b, err = gunzip(b); err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
			rel = strings.TrimSuffix(rel, ".gz")
		}
		if ext := filepath.Ext(rel); ext == ".html" || ext == ".css" {
			// Links to other sites go to hosts under .invalid (RFC
			// 2606), which never resolve: the test checks them
			// without the network, each host once and at once.
			b = offline.ReplaceAll(b, []byte("${1}${2}.invalid"))
		}
		if filepath.Ext(p) == ".html" {
			pages = append(pages, rel)
		}
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(rel)), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) < 10 {
		t.Skipf("%s has %d pages: too few to be a documentation tree", src, len(pages))
	}

	// Another site whose image errs, and a port nothing listens on.
	otherURL, closed := elsewhere(t, "/broken.png", http.StatusInternalServerError)

	// The breaks: a page many pages link to and a file every page uses,
	// removed; into three pages, a link to a page that never was, an
	// image on another site that answers 500, a mirror that refuses
	// connections.
	gonePage, goneFile := "", ""
	for _, p := range pages {
		if p != index && gonePage == "" && strings.Contains(readFile(t, filepath.Join(dir, index)), `href="`+p+`"`) {
			gonePage = p
		}
	}
	for _, f := range []string{"assets/hljs.css", "assets/api.js"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			goneFile = f
			break
		}
	}
	if gonePage == "" {
		t.Fatalf("no page of %s that %s links to", src, index)
	}
	os.Remove(filepath.Join(dir, gonePage))
	if goneFile != "" {
		os.Remove(filepath.Join(dir, goneFile))
	}
	var planted []string
	plant := func(page, html string) {
		p := filepath.Join(dir, page)
		b := readFile(t, p)
		i := strings.LastIndex(b, "</body>")
		if i < 0 {
			i = len(b)
		}
		if err := os.WriteFile(p, []byte(b[:i]+html+b[i:]), 0o644); err != nil {
			t.Fatal(err)
		}
		planted = append(planted, page)
	}
	var hosts []string
	for _, p := range pages {
		// Small pages: a page past WithMaxLinksPerPage's 5,000 links
		// (Node's all.html) has the rest of its links left unread.
		if fi, err := os.Stat(filepath.Join(dir, p)); err == nil && fi.Size() < 512<<10 &&
			p != index && p != gonePage && len(hosts) < 3 {
			hosts = append(hosts, p)
		}
	}
	plant(hosts[0], `<a href="never-was.html">Planted missing page</a>`)
	plant(hosts[1], `<img src="`+otherURL+`/broken.png" alt="planted image">`)
	plant(hosts[2], `<a href="`+closed+`/mirror/">Planted mirror</a>`)

	site := httptest.NewServer(http.FileServer(http.Dir(dir)))
	defer site.Close()
	base := site.URL + "/"
	root := base + index
	if path.Base(index) == "index.html" {
		// The file server answers it at its directory's URL.
		root = base + strings.TrimSuffix(index, "index.html")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var out bytes.Buffer
	start := time.Now()
	code := check(ctx, &out, root)
	report := out.String()
	t.Logf("%d pages, checked in %v; the report's last line: %s", len(pages), time.Since(start).Round(time.Millisecond),
		report[strings.LastIndex(strings.TrimSuffix(report, "\n"), "\n")+1:])
	if code != 1 {
		t.Fatalf("exit %d, want 1; report:\n%s", code, report)
	}
	want := map[string]string{ // broken URL -> a page that names it
		base + gonePage:          root,
		base + "never-was.html":  base + hosts[0],
		otherURL + "/broken.png": base + hosts[1],
		closed + "/mirror/":      base + hosts[2],
	}
	if goneFile != "" {
		want[base+goneFile] = root
	}
	for u, page := range want {
		i := strings.Index(report, u+": ")
		if i < 0 {
			t.Errorf("the planted break %s is not reported", u)
			continue
		}
		entry := report[i:]
		if j := strings.Index(entry[1:], "\n"+strings.SplitN(base, "/", 3)[0]); j >= 0 {
			entry = entry[:j+1]
		}
		if !strings.Contains(entry, "\ton "+page+" ") {
			t.Errorf("%s is reported without the page %s that names it:\n%s", u, page, entry)
		}
	}
	// Nothing else of the tree is reported: its other URLs are fine.
	for _, line := range strings.Split(report, "\n") {
		u, _, ok := strings.Cut(line, ": ")
		if !ok || strings.HasPrefix(line, "\t") || !strings.HasPrefix(u, base) {
			continue
		}
		if _, planted := want[u]; !planted {
			t.Errorf("reported, but not planted: %s", line)
		}
	}
}

// offline matches the scheme and host of an absolute http(s) URL.
var offline = regexp.MustCompile(`(https?://)([A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+)`)

func gunzip(b []byte) ([]byte, error) {
	z, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(z)
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
