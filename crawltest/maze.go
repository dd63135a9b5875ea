package crawltest

import (
	"fmt"
	"maps"
	"net/http"
	"path"
	"slices"
	"strings"
	"sync"
)

// MazeCase is one case of the Maze: a page that names a URL in one
// particular way, and the URL whose request finds it.
type MazeCase struct {
	// Name is the case's path in the maze, such as
	// "html/body/img/srcset1x" or "headers/link".
	Name string
	// Target is the path a crawler must request to find the case, such as
	// "/test/html/body/img/srcset1x.found".
	Target string
	// Role is how the page names Target: "navigation" (a link, a frame, a
	// redirect by header or meta refresh, a GET form, a citation),
	// "requisite" (what a browser fetches to render the page: images,
	// media, scripts, stylesheets and their fonts, also inside an iframe's
	// srcdoc, a conditional comment, a data: URI or a meta's content),
	// "reference" (named but neither followed nor rendered: a ping, a POST
	// form, an applet's archive, the <base href>, the DOCTYPE, a CSP
	// report-uri), "speculative" (a string in the page's text, or a path
	// of robots.txt, that no markup names as a URL) or "sitemap" (listed by
	// /sitemap.xml). Of a script case (JSMazeCases), the role is what the
	// URL the script builds is to a browser-grade crawler.
	Role string
	// Interaction is what the page needs, besides being loaded and its
	// scripts run, before its target is named: "" nothing (all of the
	// Maze's cases), "click" clicks on its elements (see JSMazeCases).
	Interaction string
}

// Maze is a replica of the kinds of case of Google's security-crawl-maze
// that need no script: one page per case, each naming its target URL in
// the same construct as the original (element and attribute, header, CSS
// rule, nesting), reached from "/" through directory listings as in the
// original, with its /robots.txt and /sitemap.xml. The pages are written
// for this package; only the cases' paths and kinds follow the original.
// Requests for /test/... answer 200 for a case's target and 404 for any
// other; every request is recorded, so that Found says which cases a
// crawler found. A Maze is an http.Handler, safe for concurrent use; serve
// it on any host and port: the pages that need an absolute URL build it
// from the request's Host. Its cases that need a script are the JSMaze's;
// FullMaze serves both on one site.
type Maze struct {
	mu   sync.Mutex
	seen map[string]int // requests by path
}

// NewMaze returns a Maze that has recorded no request.
func NewMaze() *Maze { return &Maze{seen: map[string]int{}} }

// MazeCases returns the Maze's 64 cases, in the order of the original's
// list of expected results.
func MazeCases() []MazeCase {
	cases := make([]MazeCase, len(mazeCases))
	for i, c := range mazeCases {
		cases[i] = MazeCase{Name: c.name, Target: c.target(), Role: c.role}
	}
	return cases
}

// Found returns the cases whose target the Maze was sent a request for,
// in the order of MazeCases.
func (m *Maze) Found() []MazeCase {
	m.mu.Lock()
	defer m.mu.Unlock()
	return foundIn(m.seen, MazeCases())
}

// Compare returns, by name and in the order of MazeCases, the cases of the
// given roles whose target the Maze was not sent (missed), and the cases
// of other roles whose target it was sent (extra): both are empty when a
// crawler found exactly the cases of roles.
func (m *Maze) Compare(roles ...string) (missed, extra []string) {
	return compareCases(MazeCases(), m.Found(), roles)
}

// Requests returns how many requests the Maze was sent for each path.
func (m *Maze) Requests() map[string]int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.seen)
}

// ServeHTTP serves the Maze and records the request.
func (m *Maze) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m.mu.Lock()
	m.seen[r.URL.Path]++
	m.mu.Unlock()
	origin := "http://" + r.Host
	p := r.URL.Path
	if strings.HasPrefix(p, "/test/") {
		for _, c := range mazeCases {
			if c.target() == p {
				w.Header().Set("Content-Type", "text/plain; charset=utf-8")
				fmt.Fprintf(w, "Found: %s\n", c.name)
				return
			}
		}
		http.NotFound(w, r)
		return
	}
	switch p {
	case "/robots.txt":
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprint(w, "User-agent: *\nDisallow: /test/misc/known-files/robots.txt.found\n")
		return
	case "/sitemap.xml":
		// The original lists the target as a sitemap of an index, its
		// <loc> padded with white space.
		w.Header().Set("Content-Type", "application/xml")
		fmt.Fprintf(w, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<sitemapindex xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n"+
			"  <sitemap>\n    <loc>\n      %s/test/misc/known-files/sitemap.xml.found\n    </loc>\n  </sitemap>\n</sitemapindex>\n", origin)
		return
	case "/css/font-face.css":
		w.Header().Set("Content-Type", "text/css")
		fmt.Fprintf(w, "@font-face {\n  font-family: maze;\n  src: url(%s/test/css/font-face.found);\n}\n", origin)
		return
	}
	if pg, ok := mazePages[p]; ok {
		h := w.Header()
		h.Set("Content-Type", "text/html; charset=utf-8")
		for _, kv := range pg.header {
			h.Add(kv[0], kv[1])
		}
		status := http.StatusOK
		if pg.status != 0 {
			status = pg.status
		}
		w.WriteHeader(status)
		if status/100 != 3 {
			fmt.Fprint(w, strings.NewReplacer("$ORIGIN", origin, "$HOST", r.Host).Replace(pg.doc()))
		}
		return
	}
	if entries, ok := mazeDirs[p]; ok {
		serveListing(w, p, entries)
		return
	}
	http.NotFound(w, r)
}

// serveListing writes the directory listing of the path p, with a link to
// each of its entries.
func serveListing(w http.ResponseWriter, p string, entries []string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	var b strings.Builder
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<meta charset=\"utf-8\">\n<title>Maze: %s</title>\n<h1>%s</h1>\n<ul>\n", p, p)
	for _, e := range entries {
		fmt.Fprintf(&b, "  <li><a href=\"%s\">%s</a></li>\n", p+e, e)
	}
	b.WriteString("</ul>\n")
	fmt.Fprint(w, b.String())
}

// mazeCase is a case of the Maze: its name, role, and the page that names
// its target (a path in mazePages).
type mazeCase struct {
	name, role, page string
	ext              string // of the target: ".found" unless set
	bare             bool   // the target has no "/test" prefix
}

func (c mazeCase) target() string {
	ext := c.ext
	if ext == "" {
		ext = ".found"
	}
	if c.bare {
		return "/" + c.name + ext
	}
	return "/test/" + c.name + ext
}

// mazeCases are the original's cases that need no script, in its order.
var mazeCases = []mazeCase{
	{name: "css/font-face", role: "requisite", page: "/css/font-face.html"},
	{name: "headers/content-location", role: "navigation", page: "/headers/content-location/"},
	{name: "headers/link", role: "requisite", page: "/headers/link/"},
	{name: "headers/location", role: "navigation", page: "/headers/location/"},
	{name: "headers/refresh", role: "navigation", page: "/headers/refresh/"},
	{name: "html/doctype", role: "reference", page: "/html/doctype.html"},
	{name: "html/manifest", role: "requisite", page: "/html/manifest.html"},
	{name: "html/body/background", role: "requisite", page: "/html/body/background.html"},
	{name: "html/body/a/href", role: "navigation", page: "/html/body/a/href.html"},
	{name: "html/body/a/ping", role: "reference", page: "/html/body/a/ping.html"},
	{name: "html/body/audio/src", role: "requisite", page: "/html/body/audio/src.html"},
	{name: "html/body/audio/source/src", role: "requisite", page: "/html/body/audio/source/src.html"},
	{name: "html/body/audio/source/srcset1x", role: "requisite", page: "/html/body/audio/source/srcset.html"},
	{name: "html/body/audio/source/srcset2x", role: "requisite", page: "/html/body/audio/source/srcset.html"},
	{name: "html/body/applet/archive", role: "reference", page: "/html/body/applet/archive.html"},
	{name: "html/body/applet/codebase", role: "reference", page: "/html/body/applet/codebase.html"},
	{name: "html/body/blockquote/cite", role: "navigation", page: "/html/body/blockquote/cite.html"},
	{name: "html/body/embed/src", role: "requisite", page: "/html/body/embed/src.html"},
	{name: "html/body/form/action-get", role: "navigation", page: "/html/body/form/action-get.html"},
	{name: "html/body/form/action-post", role: "reference", page: "/html/body/form/action-post.html"},
	{name: "html/body/form/button/formaction", role: "navigation", page: "/html/body/form/button/formaction.html"},
	{name: "html/body/frameset/frame/src", role: "navigation", page: "/html/body/frameset/frame/src.html"},
	{name: "html/body/iframe/src", role: "navigation", page: "/html/body/iframe/src.html"},
	{name: "html/body/iframe/srcdoc", role: "requisite", page: "/html/body/iframe/srcdoc.html"},
	{name: "html/body/img/dynsrc", role: "reference", page: "/html/body/img/dynsrc.html"},
	{name: "html/body/img/lowsrc", role: "requisite", page: "/html/body/img/lowsrc.html"},
	{name: "html/body/img/longdesc", role: "navigation", page: "/html/body/img/longdesc.html"},
	// The original's data: URI names a path without the /test prefix.
	{name: "html/body/img/src-data", role: "requisite", page: "/html/body/img/src-data.html", bare: true},
	{name: "html/body/img/src", role: "requisite", page: "/html/body/img/src.html"},
	{name: "html/body/img/srcset1x", role: "requisite", page: "/html/body/img/srcset.html"},
	{name: "html/body/img/srcset2x", role: "requisite", page: "/html/body/img/srcset.html"},
	{name: "html/body/input/src", role: "requisite", page: "/html/body/input/src.html"},
	{name: "html/body/isindex/action", role: "reference", page: "/html/body/isindex/action.html"},
	{name: "html/body/map/area/ping", role: "reference", page: "/html/body/map/area/ping.html"},
	{name: "html/body/object/data", role: "requisite", page: "/html/body/object/data.html"},
	{name: "html/body/object/codebase", role: "reference", page: "/html/body/object/codebase.html"},
	{name: "html/body/object/param/value", role: "reference", page: "/html/body/object/param/value.html"},
	{name: "html/body/script/src", role: "requisite", page: "/html/body/script/src.html"},
	{name: "html/body/svg/image/xlink", role: "requisite", page: "/html/body/svg/image/xlink.html"},
	{name: "html/body/svg/script/xlink", role: "requisite", page: "/html/body/svg/script/xlink.html"},
	{name: "html/body/table/background", role: "requisite", page: "/html/body/table/background.html"},
	{name: "html/body/table/td/background", role: "requisite", page: "/html/body/table/td/background.html"},
	{name: "html/body/video/src", role: "requisite", page: "/html/body/video/src.html"},
	{name: "html/body/video/track/src", role: "requisite", page: "/html/body/video/track/src.html"},
	{name: "html/body/video/poster", role: "requisite", page: "/html/body/video/poster.html"},
	// The original's profile case is a video poster, not a head profile.
	{name: "html/head/profile", role: "requisite", page: "/html/head/profile.html"},
	{name: "html/head/base/href", role: "reference", page: "/html/head/base/href.html"},
	{name: "html/head/comment-conditional", role: "requisite", page: "/html/head/comment/comment-conditional.html"},
	{name: "html/head/import/implementation", role: "reference", page: "/html/head/import/implementation.html"},
	{name: "html/head/link/href", role: "requisite", page: "/html/head/link/href.html"},
	{name: "html/head/meta/content-csp", role: "reference", page: "/html/head/meta/content-csp.html"},
	{name: "html/head/meta/content-pinned-websites", role: "reference", page: "/html/head/meta/content-pinned-websites.html"},
	{name: "html/head/meta/content-reading-view", role: "requisite", page: "/html/head/meta/content-reading-view.html"},
	{name: "html/head/meta/content-redirect", role: "navigation", page: "/html/head/meta/content-redirect.html"},
	{name: "html/misc/url/full-url", role: "navigation", page: "/html/misc/url/full-url/"},
	{name: "html/misc/url/path-relative-url", role: "navigation", page: "/html/misc/url/path-relative-url/"},
	{name: "html/misc/url/protocol-relative-url", role: "navigation", page: "/html/misc/url/protocol-relative-url/"},
	{name: "html/misc/url/root-relative-url", role: "navigation", page: "/html/misc/url/root-relative-url.html"},
	{name: "html/misc/string/dot-dot-slash-prefix", role: "speculative", page: "/html/misc/string/dot-dot-slash-prefix.html"},
	{name: "html/misc/string/dot-slash-prefix", role: "speculative", page: "/html/misc/string/dot-slash-prefix.html"},
	{name: "html/misc/string/url-string", role: "speculative", page: "/html/misc/string/url-string/"},
	{name: "html/misc/string/string-known-extension", role: "speculative", page: "/html/misc/string/string-known-extension.html", ext: ".pdf"},
	{name: "misc/known-files/robots.txt", role: "speculative", page: "/misc/known-files/robots.txt.html"},
	{name: "misc/known-files/sitemap.xml", role: "sitemap", page: "/misc/known-files/sitemap.xml.html"},
}

// mazePage is a page of the Maze: its title, what goes in its body (or,
// with full, the whole document), and the header and status it is sent
// with. "$ORIGIN" in the markup stands for the scheme and host the page was
// requested from, "$HOST" for the host.
type mazePage struct {
	title, markup string
	full          bool
	header        [][2]string
	status        int
}

func (pg mazePage) doc() string {
	if pg.full {
		return pg.markup
	}
	return "<!DOCTYPE html>\n<meta charset=\"utf-8\">\n<title>Maze: " + pg.title + "</title>\n" + pg.markup + "\n"
}

// mazePages are the Maze's pages by path. A path ending in "/" is a page
// the original serves from code (a header, an absolute URL), listed as a
// directory.
var mazePages = map[string]mazePage{
	"/css/font-face.html": {title: "@font-face", markup: `<link rel="stylesheet" href="/css/font-face.css">
<h1>A font in a stylesheet</h1>
<p>The stylesheet this page loads declares a web font whose source is the case.</p>`},

	"/headers/content-location/": {title: "Content-Location header", status: http.StatusCreated,
		header: [][2]string{{"Content-Location", "/test/headers/content-location.found"}},
		markup: `<h1>Content-Location</h1>
<p>A 201 response whose Content-Location header names the case.</p>`},
	"/headers/link/": {title: "Link header",
		header: [][2]string{{"Link", `</test/headers/link.found>; rel="preload"`}},
		markup: `<h1>Link</h1>
<p>The Link header of this response asks for a preload of the case.</p>`},
	"/headers/location/": {title: "Location header", status: http.StatusMovedPermanently,
		header: [][2]string{{"Location", "/test/headers/location.found"}}},
	"/headers/refresh/": {title: "Refresh header",
		header: [][2]string{{"Refresh", "999; url=/test/headers/refresh.found"}},
		markup: `<h1>Refresh</h1>
<p>The Refresh header of this response moves on to the case, after a long wait.</p>`},

	"/html/doctype.html": {full: true, markup: `<!DOCTYPE html SYSTEM "/test/html/doctype.found">
<meta charset="utf-8">
<title>Maze: DOCTYPE</title>
<h1>DOCTYPE</h1>
<p>The system identifier of the document type declaration names the case.</p>
`},
	"/html/manifest.html": {full: true, markup: `<!DOCTYPE html>
<html xmlns="http://www.w3.org/1999/xhtml" manifest="/test/html/manifest.found">
<meta charset="utf-8">
<title>Maze: application cache manifest</title>
<h1>Manifest</h1>
<p>The manifest attribute of the root element names an application cache.</p>
</html>
`},

	"/html/body/background.html": {title: "body background", markup: `<body background="/test/html/body/background.found">
<h1>background</h1>
<p>A body with a background image attribute.</p>
</body>`},
	"/html/body/a/href.html": {title: "a href", markup: `<h1>href</h1>
<a href="/test/html/body/a/href.found">the case</a>`},
	"/html/body/a/ping.html": {title: "a ping", markup: `<h1>ping</h1>
<a ping="/test/html/body/a/ping.found"></a>
<p>A browser posts to the ping URLs of a link it follows.</p>`},
	"/html/body/audio/src.html": {title: "audio src", markup: `<h1>audio src</h1>
<audio src="/test/html/body/audio/src.found"></audio>`},
	"/html/body/audio/source/src.html": {title: "audio source src", markup: `<h1>source src</h1>
<audio controls>
  <source src="/test/html/body/audio/source/src.found" type="audio/ogg">
</audio>`},
	"/html/body/audio/source/srcset.html": {title: "audio source srcset", markup: `<h1>source srcset</h1>
<audio controls>
  <source srcset="/test/html/body/audio/source/srcset1x.found 1x,
                  /test/html/body/audio/source/srcset2x.found 2x">
</audio>`},
	"/html/body/applet/archive.html": {title: "applet archive", markup: `<h1>archive</h1>
<applet archive="/test/html/body/applet/archive.found"></applet>
<p>A Java archive holding the applet's classes.</p>`},
	"/html/body/applet/codebase.html": {title: "applet codebase", markup: `<h1>codebase</h1>
<applet code="Maze" codebase="/test/html/body/applet/codebase.found"></applet>`},
	"/html/body/blockquote/cite.html": {title: "blockquote cite", markup: `<h1>cite</h1>
<blockquote cite="/test/html/body/blockquote/cite.found">Quoted words.</blockquote>`},
	"/html/body/embed/src.html": {title: "embed src", markup: `<h1>embed</h1>
<embed src="/test/html/body/embed/src.found">`},
	"/html/body/form/action-get.html": {title: "form GET", markup: `<h1>action, GET</h1>
<form action="/test/html/body/form/action-get.found" method="GET">
  <input type="text" name="first" value="one">
  <input type="text" name="second" value="two">
</form>`},
	"/html/body/form/action-post.html": {title: "form POST", markup: `<h1>action, POST</h1>
<form action="/test/html/body/form/action-post.found" method="POST">
  <input type="text" name="first" value="one">
</form>`},
	"/html/body/form/button/formaction.html": {title: "button formaction", markup: `<h1>formaction</h1>
<form id="f">
  <button form="f" formaction="/test/html/body/form/button/formaction.found" type="submit">Send</button>
</form>`},
	"/html/body/frameset/frame/src.html": {title: "frame src", markup: `<h1>frame</h1>
<frameset>
  <frame src="/test/html/body/frameset/frame/src.found"></frame>
</frameset>`},
	"/html/body/iframe/src.html": {title: "iframe src", markup: `<h1>iframe</h1>
<iframe src="/test/html/body/iframe/src.found"></iframe>`},
	"/html/body/iframe/srcdoc.html": {title: "iframe srcdoc", markup: `<h1>srcdoc</h1>
<iframe srcdoc="<img src=/test/html/body/iframe/srcdoc.found>"></iframe>
<p>The frame's document is written in the attribute.</p>`},
	"/html/body/img/dynsrc.html": {title: "img dynsrc", markup: `<h1>dynsrc</h1>
<img dynsrc="/test/html/body/img/dynsrc.found">`},
	"/html/body/img/lowsrc.html": {title: "img lowsrc", markup: `<h1>lowsrc</h1>
<img lowsrc="/test/html/body/img/lowsrc.found">`},
	"/html/body/img/longdesc.html": {title: "img longdesc", markup: `<h1>longdesc</h1>
<img alt="" src="#" longdesc="/test/html/body/img/longdesc.found">`},
	// An SVG image in a data: URI, percent-encoded down to a letter of an
	// attribute's name, whose <image> names a path.
	"/html/body/img/src-data.html": {title: "img src data:", markup: `<h1>src, data: URI</h1>
<img src="data:image/svg+xml,<svg%20xmlns='%68ttp:%2f/www.w3.org/2000/svg'%20xmlns:xlink='%68ttp:%2f/www.w3.org/1999/xlink'><image%20xlink:%68ref='/html/body/img/src-data.found'/></svg>">`},
	"/html/body/img/src.html": {title: "img src", markup: `<h1>src</h1>
<img src="/test/html/body/img/src.found">`},
	"/html/body/img/srcset.html": {title: "img srcset", markup: `<h1>srcset</h1>
<img srcset="/test/html/body/img/srcset1x.found 1x,
             /test/html/body/img/srcset2x.found 2x">`},
	"/html/body/input/src.html": {title: "input src", markup: `<h1>image button</h1>
<input type="image" src="/test/html/body/input/src.found" name="go" value="go">`},
	"/html/body/isindex/action.html": {title: "isindex action", markup: `<h1>isindex</h1>
<isindex action="/test/html/body/isindex/action.found"></isindex>`},
	"/html/body/map/area/ping.html": {title: "area ping", markup: `<h1>area ping</h1>
<img src="data:;base64,R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==" width="100" height="100" usemap="#m">
<map name="m">
  <area ping="/test/html/body/map/area/ping.found" shape="rect" coords="0,0,100,100" href="#">
</map>`},
	"/html/body/object/data.html": {title: "object data", markup: `<h1>data</h1>
<object data="/test/html/body/object/data.found"></object>`},
	"/html/body/object/codebase.html": {title: "object codebase", markup: `<h1>codebase</h1>
<object codebase="/test/html/body/object/codebase.found"></object>`},
	"/html/body/object/param/value.html": {title: "param value", markup: `<h1>param value</h1>
<object classid="clsid:6BF52A52-394A-11d3-B153-00C04F79FAA6">
  <param name="ref" value="/test/html/body/object/param/value.found"></param>
</object>`},
	"/html/body/script/src.html": {title: "script src", markup: `<h1>script</h1>
<script src="/test/html/body/script/src.found"></script>`},
	"/html/body/svg/image/xlink.html": {title: "svg image xlink:href", markup: `<h1>SVG image</h1>
<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">
  <image xlink:href="/test/html/body/svg/image/xlink.found"/>
</svg>`},
	"/html/body/svg/script/xlink.html": {title: "svg script xlink:href", markup: `<h1>SVG script</h1>
<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">
  <script xlink:href="/test/html/body/svg/script/xlink.found"></script>
</svg>`},
	"/html/body/table/background.html": {title: "table background", markup: `<h1>table background</h1>
<table background="/test/html/body/table/background.found"><tr><td>cell</td></tr></table>`},
	"/html/body/table/td/background.html": {title: "td background", markup: `<h1>td background</h1>
<table>
  <tr>
    <td background="/test/html/body/table/td/background.found"></td>
  </tr>
</table>`},
	"/html/body/video/src.html": {title: "video src", markup: `<h1>video src</h1>
<video src="/test/html/body/video/src.found"></video>`},
	"/html/body/video/track/src.html": {title: "track src", markup: `<h1>track</h1>
<video width="320" height="240" controls>
  <track src="/test/html/body/video/track/src.found" kind="captions" srclang="en" label="English">
</video>`},
	"/html/body/video/poster.html": {title: "video poster", markup: `<h1>poster</h1>
<video poster="/test/html/body/video/poster.found"></video>`},

	"/html/head/profile.html": {title: "profile", markup: `<h1>profile</h1>
<video poster="/test/html/head/profile.found"></video>`},
	"/html/head/base/href.html": {title: "base href", markup: `<base href="/test/html/head/base/href.found">
<h1>base</h1>
<p>The base URL of the document is the case.</p>`},
	"/html/head/comment/comment-conditional.html": {title: "conditional comment", markup: `<!--[if true]>
<link href="/test/html/head/comment-conditional.found" rel="stylesheet">
<![endif]-->
<h1>Conditional comment</h1>
<p>Old versions of Internet Explorer read markup in such comments.</p>`},
	"/html/head/import/implementation.html": {title: "IMPORT implementation", markup: `<IMPORT namespace="maze" implementation="/test/html/head/import/implementation.found" /></IMPORT>
<h1>IMPORT</h1>
<p>An Internet Explorer element that binds a namespace to a behaviour file.</p>`},
	"/html/head/link/href.html": {title: "link href", markup: `<link rel="prefetch" href="/test/html/head/link/href.found" />
<h1>link</h1>`},
	"/html/head/meta/content-csp.html": {title: "CSP", markup: `<meta http-equiv="Content-Security-Policy" content="img-src 'self'; report-uri /test/html/head/meta/content-csp.found">
<h1>Content-Security-Policy</h1>`},
	"/html/head/meta/content-pinned-websites.html": {title: "pinned site", markup: `<meta name="msapplication-config" content="/test/html/head/meta/content-pinned-websites.found">
<h1>Pinned site</h1>`},
	"/html/head/meta/content-reading-view.html": {title: "reading view", markup: `<meta name="copyright" content="<img src='/test/html/head/meta/content-reading-view.found'>">
<h1>Reading view</h1>
<p>A reading view shows the markup of some meta elements' content.</p>`},
	"/html/head/meta/content-redirect.html": {title: "meta refresh", markup: `<meta http-equiv="refresh" content="10; url=/test/html/head/meta/content-redirect.found">
<h1>Meta refresh</h1>`},

	"/html/misc/url/full-url/": {title: "absolute URL", markup: `<h1>Absolute URL</h1>
<a href="$ORIGIN/test/html/misc/url/full-url.found">the case</a>`},
	"/html/misc/url/path-relative-url/": {title: "path-relative URL", markup: `<base href="$ORIGIN/test/">
<h1>Path-relative URL</h1>
<a href="html/misc/url/path-relative-url.found">the case</a>`},
	"/html/misc/url/protocol-relative-url/": {title: "scheme-relative URL", markup: `<h1>Scheme-relative URL</h1>
<a href="//$HOST/test/html/misc/url/protocol-relative-url.found">the case</a>`},
	"/html/misc/url/root-relative-url.html": {title: "root-relative URL", markup: `<h1>Root-relative URL</h1>
<a href="/test/html/misc/url/root-relative-url.found">the case</a>`},
	"/html/misc/string/dot-dot-slash-prefix.html": {title: "../ string", markup: `<h1>A string starting with ../</h1>
<p>In the text: ../test/html/misc/string/dot-dot-slash-prefix.found</p>`},
	"/html/misc/string/dot-slash-prefix.html": {title: "./ string", markup: `<h1>A string starting with ./</h1>
<p>In the text: ./test/html/misc/string/dot-slash-prefix.found</p>`},
	"/html/misc/string/url-string/": {title: "URL string", markup: `<h1>An absolute URL as text</h1>
<p>In the text: $ORIGIN/test/html/misc/string/url-string.found</p>`},
	"/html/misc/string/string-known-extension.html": {title: "known extension", markup: `<base href="/test/html/misc/string">
<h1>A string with a known extension</h1>
<p>In the text: /string-known-extension.pdf</p>`},

	"/misc/known-files/robots.txt.html": {title: "robots.txt", markup: `<h1>robots.txt</h1>
<p>The site's robots.txt disallows the case.</p>`},
	"/misc/known-files/sitemap.xml.html": {title: "sitemap.xml", markup: `<h1>sitemap.xml</h1>
<p>The site's sitemap lists the case.</p>`},
}

// mazeDirs are the Maze's directory listings by path.
var mazeDirs = dirsOf(slices.Collect(maps.Keys(mazePages)))

// dirsOf returns the directory listings of a tree of pages by path, each
// entry a name relative to it: a page, or a directory (or a page served
// from code) with a trailing slash.
func dirsOf(pages []string) map[string][]string {
	dirs := map[string][]string{}
	add := func(dir, entry string) {
		if !slices.Contains(dirs[dir], entry) {
			dirs[dir] = append(dirs[dir], entry)
		}
	}
	for _, p := range pages {
		// "/a/b/c.html" is listed in /a/b/, "/a/b/c/" in /a/b/ as "c/";
		// each directory in its parent.
		trimmed := strings.TrimSuffix(p, "/")
		dir, name := path.Split(trimmed)
		if strings.HasSuffix(p, "/") {
			name += "/"
		}
		add(dir, name)
		for dir != "/" {
			parent, sub := path.Split(strings.TrimSuffix(dir, "/"))
			add(parent, sub+"/")
			dir = parent
		}
	}
	for _, entries := range dirs {
		slices.Sort(entries)
	}
	return dirs
}
