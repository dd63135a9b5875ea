package crawl_test

import (
	"context"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/asyncrawl/crawl"
	"github.com/asyncrawl/crawl/crawltest"
)

// TestNeedsRenderMaze classifies every HTML page of crawltest's FullMaze,
// as a static crawl with every means of discovery meets them: each page of
// a script case (under /javascript/, ending in .html) needs rendering, and
// no other page (the 64 static cases' pages, the directory listings) does
// but the two static cases whose page holds nothing but a script.
func TestNeedsRenderMaze(t *testing.T) {
	maze := crawltest.NewFullMaze()
	srv := httptest.NewServer(maze)
	defer srv.Close()
	var mu sync.Mutex
	var tp, fn, fp, tn []string
	c, err := crawl.New(crawl.WithRequisites(true), crawl.WithReferences(true), crawl.WithSpeculative(true),
		crawl.WithRobots(false), crawl.WithSitemaps(true),
		crawl.WithPageHook(func(p *crawl.Page) {
			if p.ContentType != "text/html" || p.Status != 200 {
				return
			}
			script := strings.HasPrefix(p.URL.Path, "/javascript/") && strings.HasSuffix(p.URL.Path, ".html")
			got := crawl.NeedsRender(p.Body)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case script && got:
				tp = append(tp, p.URL.Path)
			case script:
				fn = append(fn, p.URL.Path)
			case got:
				fp = append(fp, p.URL.Path)
			default:
				tn = append(tn, p.URL.Path)
			}
		}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Run(context.Background(), srv.URL+"/"); err != nil {
		t.Fatal(err)
	}
	t.Logf("script pages: %d rendered, %d not; other pages: %d rendered, %d not", len(tp), len(fn), len(fp), len(tn))
	if len(tp) != 22 || len(fn) > 0 {
		t.Errorf("script pages: got %d rendered and these not: %v, want all 22", len(tp), fn)
	}
	// Two static cases are pages of nothing but a script element: a
	// script could build them, and only rendering tells.
	slices.Sort(fp)
	if want := []string{"/html/body/script/src.html", "/html/body/svg/script/xlink.html"}; !slices.Equal(fp, want) || len(tn) < 64 {
		t.Errorf("other pages: got these rendered: %v, and %d not, want %v and at least 64 not", fp, len(tn), want)
	}
}

// TestNeedsRenderDocs classifies the HTML pages of real documentation
// trees: Go's own (GOROOT/doc, the spec and the memory model, wherever Go
// is), of which none may be rendered, and those NEEDSRENDER_DIRS names (a
// list of directories separated by the path list separator), which it only
// logs: the count of each tree's pages, and those that would be rendered.
func TestNeedsRenderDocs(t *testing.T) {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Skipf("go env GOROOT: %v", err)
	}
	dirs := []string{filepath.Join(strings.TrimSpace(string(out)), "doc")}
	if v := os.Getenv("NEEDSRENDER_DIRS"); v != "" {
		dirs = append(dirs, filepath.SplitList(v)...)
	}
	for _, dir := range dirs {
		n := 0
		var rendered []string
		err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".html") {
				return err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			n++
			if crawl.NeedsRender(b) {
				rendered = append(rendered, p)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d pages, %d would be rendered: %v", dir, n, len(rendered), rendered)
		if n == 0 {
			t.Errorf("%s: no HTML page", dir)
		}
		if dir == dirs[0] && len(rendered) > 0 {
			t.Errorf("%s: got %v rendered, want none", dir, rendered)
		}
	}
}
