package main

import (
	"maps"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/asyncrawl/crawl"
)

// TestSelectDemo checks that -select gives every HTML page of the demo
// site its title, and its <html lang> with the @ATTR form, and nothing
// to any other record; a selector that matches nothing leaves no field.
func TestSelectDemo(t *testing.T) {
	r := runCrawl(t, "-demo", "-demo_latency", "0", "-format", "jsonl", "-q",
		"-select", "title=title", "-select", "lang=html@lang", "-select", "none=nosuchelement")
	if r.code != 0 {
		t.Fatalf("exit %d, want 0; stderr %q", r.code, r.stderr)
	}
	results, _ := parseJSONLines(t, r.stdout)
	html := 0
	for _, res := range results {
		if res.Kind != "html" {
			if res.Fields != nil {
				t.Errorf("%s (%s): got fields %q, want none", res.URL, res.Kind, res.Fields)
			}
			continue
		}
		html++
		if title := res.Fields["title"]; !strings.HasSuffix(title, " · The Gopher Gazette") || strings.HasPrefix(title, " ") {
			t.Errorf("%s: got title %q, want one ending in \" · The Gopher Gazette\"", res.URL, title)
		}
		if len(res.Fields) != 2 || res.Fields["lang"] != "en" {
			t.Errorf("%s: got fields %q, want title and lang en", res.URL, res.Fields)
		}
	}
	if html < 200 {
		t.Errorf("got %d HTML pages, want the demo's few hundred", html)
	}
}

// TestSelect checks the values -select takes, on a site of its own: the
// first match only, white space collapsed, attributes with @ATTR, an @ in
// a selector's attribute value, fields left out, pages that are not HTML.
func TestSelect(t *testing.T) {
	s := startSite(t)
	s.Body("/", "text/html; charset=utf-8", `<html><head><title>
	  Home
	  page </title>
<meta name="description" content=" The home
  page,  described ">
</head><body><h1></h1><h1>Second heading</h1>
<a href="/b">B</a> <a href="mailto:editors@example.com">Write  to us</a> <a href="/plain">Plain</a></body></html>`)
	s.Body("/b", "text/html; charset=utf-8", `<title>B</title><meta name="description"><p lang=fr>Bonjour</p>`)
	s.Body("/plain", "text/plain; charset=utf-8", `<title>not HTML</title>`)
	r := runCrawl(t, "-format", "jsonl", "-q", "-robots=false",
		"-select", "title=title",
		"-select", "h1=h1", // the first, empty, is taken: left out
		"-select", "desc=meta[name=description]@content",
		"-select", "descu=meta[name=description]@Content", // as parsed: content
		"-select", `mail=a[href*="@"]`,
		"-select", `mailto=a[href^="mailto:"]@href`,
		"-select", "lang=[lang]@lang",
		s.base)
	if r.code != 0 {
		t.Fatalf("exit %d, want 0; stderr %q", r.code, r.stderr)
	}
	results, _ := parseJSONLines(t, r.stdout)
	want := map[string]map[string]string{
		"/": {
			"title":  "Home page",
			"desc":   "The home page, described",
			"descu":  "The home page, described",
			"mail":   "Write to us",
			"mailto": "mailto:editors@example.com",
		},
		"/b":     {"title": "B", "lang": "fr"},
		"/plain": nil,
	}
	got := map[string]map[string]string{}
	for _, res := range results {
		u, err := url.Parse(res.URL)
		if err != nil {
			t.Fatal(err)
		}
		got[u.Path] = res.Fields
	}
	for path, w := range want {
		g, ok := got[path]
		if !ok {
			t.Errorf("%s: no record", path)
			continue
		}
		if len(g) != len(w) {
			t.Errorf("%s: got fields %q, want %q", path, g, w)
			continue
		}
		for k, v := range w {
			if g[k] != v {
				t.Errorf("%s: got fields %q, want %q", path, g, w)
				break
			}
		}
	}

	// The text report ignores -select: it is the report without it.
	withSelect := runCrawl(t, "-q", "-robots=false", "-select", "title=title", s.base)
	without := runCrawl(t, "-q", "-robots=false", s.base)
	if withSelect.code != 0 || undatedReport(withSelect.stdout) != undatedReport(without.stdout) {
		t.Errorf("text report with -select (exit %d):\n%s\nwant it as without:\n%s", withSelect.code, withSelect.stdout, without.stdout)
	}
}

// undatedReport drops the lines of a text report that change from run to
// run: the date, and the Finished line with its timing.
func undatedReport(report string) string {
	var b strings.Builder
	for line := range strings.Lines(undated(report)) {
		if !strings.HasPrefix(line, "Finished ") {
			b.WriteString(line)
		}
	}
	return b.String()
}

// TestSelectBad checks that a -select that is malformed or whose selector
// does not compile stops the command before any fetch, with exit status 1
// and one line naming the value and what is wrong with it.
func TestSelectBad(t *testing.T) {
	s := startSite(t)
	s.Body("/", "text/html; charset=utf-8", `<title>T</title>`)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"-select", "x=[["}, `invalid value "x=[[" for flag -select: bad selector "[["`},
		{[]string{"-select", "title"}, `invalid value "title" for flag -select: want NAME=SELECTOR`},
		{[]string{"-select", "=title"}, `invalid value "=title" for flag -select: empty NAME`},
		{[]string{"-select", "x="}, `invalid value "x=" for flag -select: bad selector ""`},
		{[]string{"-select", "x=@href"}, `invalid value "x=@href" for flag -select: bad selector "@href"`},
		{[]string{"-select", "x=a@"}, `invalid value "x=a@" for flag -select: bad selector "a@"`},
		{[]string{"-select", "x=a[href", "-select", "y=p"}, `invalid value "x=a[href" for flag -select: bad selector "a[href"`},
		{[]string{"-select", "t=title", "-select", "t=h1"}, `invalid value "t=h1" for flag -select: field "t" given twice`},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			r := runCrawl(t, append(append([]string{"-format", "jsonl"}, tt.args...), s.base)...)
			if r.code != 1 || r.stdout != "" {
				t.Errorf("exit %d, stdout %q; want 1 and nothing", r.code, r.stdout)
			}
			lines := strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n")
			if len(lines) != 1 || !strings.HasPrefix(lines[0], "crawl: ") || !strings.Contains(lines[0], tt.want) {
				t.Errorf("stderr %q, want one line starting crawl: and holding %q", r.stderr, tt.want)
			}
		})
	}
	// -demo too: no demo site is served, so nothing could be fetched.
	if r := runCrawl(t, "-demo", "-format", "jsonl", "-select", "x=[["); r.code != 1 || r.stdout != "" {
		t.Errorf("-demo -select x=[[: exit %d, stdout %q; want 1 and nothing", r.code, r.stdout)
	}
	if n := s.Total(); n != 0 {
		t.Errorf("the site got %d requests from commands with a bad -select, want 0", n)
	}
}

func TestSplitAttr(t *testing.T) {
	for _, tt := range []struct{ spec, selector, attr string }{
		{"title", "title", ""},
		{"a@href", "a", "href"},
		{"meta[name=description]@content", "meta[name=description]", "content"},
		{`a[href*="@"]`, `a[href*="@"]`, ""},
		{`a[href*="@"]@href`, `a[href*="@"]`, "href"},
		{`a[title="x@y"]`, `a[title="x@y"]`, ""},
		{`a[title=x@y]`, `a[title=x@y]`, ""},
		{"svg@xlink:href", "svg", "xlink:href"},
		{"div@data-x.y_z", "div", "data-x.y_z"},
		{"div@1x", "div@1x", ""},
		{"@href", "@href", ""},
		{"a@", "a@", ""},
		{`#a\@b`, `#a\@b`, ""},
		{"a@href@src", "a@href", "src"},
		{"meta@CONTENT", "meta", "content"},
	} {
		if sel, attr := splitAttr(tt.spec); sel != tt.selector || attr != tt.attr {
			t.Errorf("splitAttr(%q): got %q, %q; want %q, %q", tt.spec, sel, attr, tt.selector, tt.attr)
		}
	}
}

// TestSelectManyPages checks that the -select fields of a page land on its
// own record, under many workers at once, however its links spell it.
func TestSelectManyPages(t *testing.T) {
	s := startSite(t)
	const n = 80
	var links strings.Builder
	for i := range n {
		// Half of them spelled otherwise than their Page.URL's String.
		links.WriteString(`<a href="/p/` + strings.Repeat("%7E", i%2) + "u" + strconv.Itoa(i) + `">p</a>`)
	}
	s.Body("/", "text/html; charset=utf-8", "<title>root</title>"+links.String())
	s.Handle("/p/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte("<title>" + r.URL.Path + "</title>"))
	}))
	r := runCrawl(t, "-format", "jsonl", "-q", "-robots=false", "-workers", "16", "-host_workers", "16", "-select", "title=title", s.base)
	if r.code != 0 {
		t.Fatalf("exit %d, want 0; stderr %q", r.code, r.stderr)
	}
	results, _ := parseJSONLines(t, r.stdout)
	if len(results) != n+1 {
		t.Errorf("got %d records, want %d", len(results), n+1)
	}
	for _, res := range results {
		u, err := url.Parse(res.URL)
		if err != nil {
			t.Fatal(err)
		}
		want := u.Path
		if want == "/" {
			want = "root"
		}
		if got := res.Fields["title"]; got != want {
			t.Errorf("%s: got title %q, want %q", res.URL, got, want)
		}
	}
}

// TestSelectFetchedAgain checks that a page whose Result was not delivered
// (an Ack that failed, a lease lost) and that is fetched again gives the
// fields of the fetch whose Result comes, not those of the one before.
func TestSelectFetchedAgain(t *testing.T) {
	fs := newFieldSet()
	for _, s := range []string{"title=title", "h1=h1"} {
		if err := fs.Set(s); err != nil {
			t.Fatalf("Set(%q): %v", s, err)
		}
	}
	u, _ := url.Parse("http://example.test/a")
	page := func(body string) *crawl.Page {
		return &crawl.Page{URL: u, Status: 200, ContentType: "text/html", Encoding: "utf-8", Body: []byte(body)}
	}
	fs.hook(page("<title>Before</title><h1>Gone since</h1>"))
	// No Result: the page is fetched again, its h1 gone.
	fs.hook(page("<title>After</title>"))
	got := fs.take(u.String())
	want := map[string]string{"title": "After"}
	if !maps.Equal(got, want) {
		t.Errorf("fields of the second fetch: got %q, want %q", got, want)
	}
	if got := fs.take(u.String()); got != nil {
		t.Errorf("take again: got %q, want nil", got)
	}
}
