package crawltest

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// JSMaze is a replica of the kinds of case of Google's security-crawl-maze
// that need a script to run: one page per case (or per two cases),
// under /javascript/ and reached from "/" through directory listings as in
// the original. The pages and their scripts are written for this package
// in plain JavaScript, with no library: small routers and components play
// the part of the original's frameworks. Only the cases' paths and kinds
// follow the original.
//
// A case's target is named only by running the page's script: the script
// builds the path from pieces at run time (joined segments, character
// codes, a reversed string), so that neither a parse of the markup nor a
// guess from the strings of the scripts (crawl.WithSpeculative) finds it.
// A crawler that does not run scripts thus finds none of them. A browser
// finds them all: it loads each page and waits for its timers (none is
// longer than 500 ms), clicks the page's elements for the cases whose
// Interaction is "click", and follows, for the navigation cases, the links
// and history entries the scripts make as well as their requests (see
// JSMazeCases). Requests for /test/... answer 200 for a case's target
// (whatever the method and query) and 404 for any other, and every request
// is recorded by path, so that Found says which cases a crawler found.
//
// A JSMaze is an http.Handler, safe for concurrent use; it serves no
// robots.txt or sitemap. FullMaze serves it beside the Maze.
type JSMaze struct {
	mu   sync.Mutex
	seen map[string]int // requests by path
}

// NewJSMaze returns a JSMaze that has recorded no request.
func NewJSMaze() *JSMaze { return &JSMaze{seen: map[string]int{}} }

// JSMazeCases returns the JSMaze's 27 cases, in the order of the
// original's list of expected results. Their targets are
// "/test/" + Name + ".found". By role:
//
//   - "requisite": a request the page's script sends itself, on load or
//     on a click: fetch or XMLHttpRequest (of any method: the
//     interactive cases send GET, POST, PUT and DELETE, as the original
//     does), an image the script writes into the page (document.write), a
//     worker it starts, a module it imports. A browser sends it while it
//     renders the page.
//   - "navigation": a URL the script makes a link of (an <a href> it
//     writes), moves the page to by history.pushState or replaceState (a
//     router: the browser sends no request, a crawler must follow the
//     URL; the search case's URL has a query after the target's path) or
//     loads by assigning location (polymer/event-handler, on a click).
//
// Interaction "click" marks the 19 cases whose target is named only after
// clicks on the page: on its buttons (inside a shadow root for the
// polymer case), a form's submit button (its field filled in already), a
// button twice (multi-step-request-redefine-event-attribute, whose first
// click sets the handler the second runs), and on an element a click
// creates, right after it appears, before anything else is clicked (the
// multi-step-request cases; in the remove-button and remove-event-listener
// cases a click elsewhere removes it). Each listener of a button reached
// by one click counts as its own case (listener-and-event-attribute-first
// and -second, two-listeners-first and -second).
//
// Unlike the original, whose misc/comment, misc/string-variable and
// misc/string-concat-variable cases write the URL in a script's comment or
// strings for a crawler to guess, here the pages decode it (from an HTML
// comment read backwards, from character codes, from joined pieces) and
// load it (an image written by document.write, a worker's script, a
// module imported), so that only a browser finds them too; and
// misc/automatic-post waits 300 ms where the original waits five seconds.
func JSMazeCases() []MazeCase {
	cases := make([]MazeCase, len(jsCases))
	for i, c := range jsCases {
		cases[i] = c.mazeCase()
	}
	return cases
}

// Found returns the cases whose target the JSMaze was sent a request for,
// in the order of JSMazeCases.
func (m *JSMaze) Found() []MazeCase {
	m.mu.Lock()
	defer m.mu.Unlock()
	return foundIn(m.seen, JSMazeCases())
}

// Compare returns, by name and in the order of JSMazeCases, the cases of
// the given roles whose target the JSMaze was not sent (missed), and the
// cases of other roles whose target it was sent (extra): both are empty
// when a crawler found exactly the cases of roles.
func (m *JSMaze) Compare(roles ...string) (missed, extra []string) {
	return compareCases(JSMazeCases(), m.Found(), roles)
}

// Requests returns how many requests the JSMaze was sent for each path.
func (m *JSMaze) Requests() map[string]int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.seen)
}

// ServeHTTP serves the JSMaze and records the request.
func (m *JSMaze) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m.mu.Lock()
	m.seen[r.URL.Path]++
	m.mu.Unlock()
	p := r.URL.Path
	if strings.HasPrefix(p, "/test/") {
		for _, c := range jsCases {
			if c.target() == p {
				if c.script {
					w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
					fmt.Fprintf(w, "// Found: %s\n", c.name)
					return
				}
				w.Header().Set("Content-Type", "text/plain; charset=utf-8")
				fmt.Fprintf(w, "Found: %s\n", c.name)
				return
			}
		}
		http.NotFound(w, r)
		return
	}
	if src, ok := jsScripts[p]; ok {
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
		fmt.Fprint(w, src)
		return
	}
	if pg, ok := jsPages[p]; ok {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, pg.doc())
		return
	}
	if entries, ok := jsDirs[p]; ok {
		serveListing(w, p, entries)
		return
	}
	http.NotFound(w, r)
}

// FullMaze serves the Maze and the JSMaze on one site: "/" lists the
// Maze's directories and the JSMaze's "javascript/", so that one crawl of
// "/" meets all 91 cases, and robots.txt and sitemap.xml are the Maze's.
// Requests for /javascript/... and /test/javascript/... go to Script, all
// others to Static, each recording those it is sent (a request for "/" is
// recorded by Static). A FullMaze is an http.Handler, safe for concurrent
// use.
type FullMaze struct {
	Static *Maze   // the cases that need no script
	Script *JSMaze // the cases that need a script
}

// NewFullMaze returns a FullMaze of a new Maze and a new JSMaze.
func NewFullMaze() *FullMaze { return &FullMaze{Static: NewMaze(), Script: NewJSMaze()} }

// FullMazeCases returns the cases of MazeCases and then those of
// JSMazeCases.
func FullMazeCases() []MazeCase { return append(MazeCases(), JSMazeCases()...) }

// Found returns the cases whose target the FullMaze was sent a request
// for, in the order of FullMazeCases.
func (m *FullMaze) Found() []MazeCase { return append(m.Static.Found(), m.Script.Found()...) }

// Compare returns, by name and in the order of FullMazeCases, the cases of
// the given roles whose target the FullMaze was not sent (missed), and the
// cases of other roles whose target it was sent (extra), as Maze.Compare
// does.
func (m *FullMaze) Compare(roles ...string) (missed, extra []string) {
	return compareCases(FullMazeCases(), m.Found(), roles)
}

// Requests returns how many requests the FullMaze was sent for each path.
func (m *FullMaze) Requests() map[string]int {
	out := m.Static.Requests()
	for p, n := range m.Script.Requests() {
		out[p] += n
	}
	return out
}

// ServeHTTP serves the FullMaze and records the request.
func (m *FullMaze) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	switch {
	case p == "/":
		m.Static.mu.Lock()
		m.Static.seen[p]++
		m.Static.mu.Unlock()
		entries := append(slices.Clone(mazeDirs["/"]), jsDirs["/"]...)
		slices.Sort(entries)
		serveListing(w, p, entries)
	case strings.HasPrefix(p, "/javascript/"), strings.HasPrefix(p, "/test/javascript/"):
		m.Script.ServeHTTP(w, r)
	default:
		m.Static.ServeHTTP(w, r)
	}
}

// foundIn returns the cases whose target seen counts a request for.
func foundIn(seen map[string]int, cases []MazeCase) []MazeCase {
	var found []MazeCase
	for _, c := range cases {
		if seen[c.Target] > 0 {
			found = append(found, c)
		}
	}
	return found
}

// compareCases is Compare of cases, of which found were found.
func compareCases(cases, found []MazeCase, roles []string) (missed, extra []string) {
	for _, c := range cases {
		want, got := slices.Contains(roles, c.Role), slices.Contains(found, c)
		switch {
		case want && !got:
			missed = append(missed, c.Name)
		case got && !want:
			extra = append(extra, c.Name)
		}
	}
	return missed, extra
}

// jsCase is a case of the JSMaze: its name, role and the page that builds
// its target (a path in jsPages).
type jsCase struct {
	name, role, page string
	click            bool // the target is named only after clicks
	script           bool // the target is loaded as a script: served as one
}

func (c jsCase) target() string { return "/test/" + c.name + ".found" }

func (c jsCase) mazeCase() MazeCase {
	mc := MazeCase{Name: c.name, Target: c.target(), Role: c.role}
	if c.click {
		mc.Interaction = "click"
	}
	return mc
}

// jsCases are the original's cases that need a script, in its order.
var jsCases = []jsCase{
	{name: "javascript/misc/automatic-post", role: "requisite", page: "/javascript/misc/automatic-post.html"},
	{name: "javascript/misc/comment", role: "requisite", page: "/javascript/misc/comment.html"},
	{name: "javascript/misc/string-variable", role: "requisite", page: "/javascript/misc/string-variable.html", script: true},
	{name: "javascript/misc/string-concat-variable", role: "requisite", page: "/javascript/misc/string-concat-variable.html", script: true},
	{name: "javascript/frameworks/angular/event-handler", role: "navigation", page: "/javascript/frameworks/angular/index.html", click: true},
	{name: "javascript/frameworks/angular/router-outlet", role: "navigation", page: "/javascript/frameworks/angular/index.html"},
	{name: "javascript/frameworks/angularjs/ng-href", role: "navigation", page: "/javascript/frameworks/angularjs/index.html"},
	{name: "javascript/frameworks/polymer/event-handler", role: "navigation", page: "/javascript/frameworks/polymer/index.html", click: true},
	{name: "javascript/frameworks/polymer/polymer-router", role: "navigation", page: "/javascript/frameworks/polymer/index.html"},
	{name: "javascript/frameworks/react/route-path", role: "navigation", page: "/javascript/frameworks/react/index.html"},
	{name: "javascript/frameworks/react/index.html/search", role: "navigation", page: "/javascript/frameworks/react/index.html", click: true},
	{name: "javascript/interactive/js-delete", role: "requisite", page: "/javascript/interactive/js-delete.html", click: true},
	{name: "javascript/interactive/js-post", role: "requisite", page: "/javascript/interactive/js-post.html", click: true},
	{name: "javascript/interactive/js-post-event-listener", role: "requisite", page: "/javascript/interactive/js-post-event-listener.html", click: true},
	{name: "javascript/interactive/js-put", role: "requisite", page: "/javascript/interactive/js-put.html", click: true},
	{name: "javascript/interactive/listener-and-event-attribute-first", role: "requisite", page: "/javascript/interactive/listener-and-event-attribute.html", click: true},
	{name: "javascript/interactive/listener-and-event-attribute-second", role: "requisite", page: "/javascript/interactive/listener-and-event-attribute.html", click: true},
	{name: "javascript/interactive/multi-step-request-event-attribute", role: "requisite", page: "/javascript/interactive/multi-step-request-event-attribute.html", click: true},
	{name: "javascript/interactive/multi-step-request-event-listener-div-dom", role: "requisite", page: "/javascript/interactive/multi-step-request-event-listener-div-dom.html", click: true},
	{name: "javascript/interactive/multi-step-request-event-listener-div", role: "requisite", page: "/javascript/interactive/multi-step-request-event-listener-div.html", click: true},
	{name: "javascript/interactive/multi-step-request-event-listener-dom", role: "requisite", page: "/javascript/interactive/multi-step-request-event-listener-dom.html", click: true},
	{name: "javascript/interactive/multi-step-request-event-listener", role: "requisite", page: "/javascript/interactive/multi-step-request-event-listener.html", click: true},
	{name: "javascript/interactive/multi-step-request-redefine-event-attribute", role: "requisite", page: "/javascript/interactive/multi-step-request-redefine-event-attribute.html", click: true},
	{name: "javascript/interactive/multi-step-request-remove-button", role: "requisite", page: "/javascript/interactive/multi-step-request-remove-button.html", click: true},
	{name: "javascript/interactive/multi-step-request-remove-event-listener", role: "requisite", page: "/javascript/interactive/multi-step-request-remove-event-listener.html", click: true},
	{name: "javascript/interactive/two-listeners-first", role: "requisite", page: "/javascript/interactive/two-listeners.html", click: true},
	{name: "javascript/interactive/two-listeners-second", role: "requisite", page: "/javascript/interactive/two-listeners.html", click: true},
}

// jsPage is a page of the JSMaze: its title and what goes in its body,
// scripts included. No page or script of the JSMaze writes a case's
// target, or any path under /test/, as a string.
type jsPage struct{ title, markup string }

func (pg jsPage) doc() string {
	return "<!DOCTYPE html>\n<meta charset=\"utf-8\">\n<title>Maze: " + pg.title + "</title>\n" + pg.markup + "\n"
}

// interactive returns the script of an interactive page: leaf(name)
// builds the target of the case javascript/interactive/name, and body
// uses it.
func interactive(body string) string {
	return `<script>
function leaf(name) {
  return ['', 'test', 'javascript', 'interactive', name].join('/') + '.found';
}
` + body + `</script>`
}

// charCodes returns s as the arguments of String.fromCharCode.
func charCodes(s string) string {
	codes := make([]string, len(s))
	for i := range len(s) {
		codes[i] = strconv.Itoa(int(s[i]))
	}
	return strings.Join(codes, ", ")
}

// reverse returns s backwards (s is ASCII).
func reverse(s string) string {
	b := []byte(s)
	slices.Reverse(b)
	return string(b)
}

// jsPages are the JSMaze's pages by path.
var jsPages = map[string]jsPage{
	"/javascript/misc/automatic-post.html": {title: "automatic POST", markup: `<h1>Automatic POST</h1>
<p>A moment after the page loads, its script sends a POST request.</p>
<script>
setTimeout(function () {
  var parts = ['test', 'javascript', 'misc', 'automatic-post'];
  fetch('/' + parts.join('/') + '.found', {method: 'POST', body: 'sent=1'});
}, 300);
</script>`},
	"/javascript/misc/comment.html": {title: "comment", markup: `<h1>A URL in a comment</h1>
<p>The page's script reads a comment of the page, backwards, and writes an image of it into the page.</p>
<!-- ` + reverse("/test/javascript/misc/comment.found") + ` -->
<script>
var walker = document.createTreeWalker(document.body, NodeFilter.SHOW_COMMENT);
var note = walker.nextNode();
document.write('<img alt="" src="' + note.data.trim().split('').reverse().join('') + '">');
</script>`},
	"/javascript/misc/string-variable.html": {title: "string variable", markup: `<h1>A URL in a variable</h1>
<p>The page's script keeps a URL in a variable and starts a worker of it.</p>
<script src="string-variable.js"></script>`},
	"/javascript/misc/string-concat-variable.html": {title: "concatenated string", markup: `<h1>A URL in pieces</h1>
<p>The page's script joins a URL from pieces and imports it as a module.</p>
<script src="string-concat-variable.js"></script>`},

	"/javascript/frameworks/angular/index.html": {title: "Angular", markup: `<h1>A single-page application with a router</h1>
<p>Its component renders a router link, and a button whose handler moves the router on.</p>
<maze-root>Loading</maze-root>
<script src="main.js"></script>`},
	"/javascript/frameworks/angularjs/index.html": {title: "AngularJS", markup: `<h1>A template bound by a script</h1>
<div data-ng-app>
  <p><a data-ng-href="{{base}}/{{route}}">linked by ng-href</a></p>
</div>
<script src="main.js"></script>`},
	"/javascript/frameworks/polymer/index.html": {title: "Polymer", markup: `<h1>Web components</h1>
<p>A custom element, in a shadow root, routes the application and holds a button that moves on.</p>
<maze-app></maze-app>
<script type="module" src="main.js"></script>`},
	"/javascript/frameworks/react/index.html": {title: "React", markup: `<h1>A single-page application</h1>
<div id="root"></div>
<script src="app.js"></script>`},

	"/javascript/interactive/js-delete.html": {title: "DELETE from a script", markup: `<h1>DELETE from a script</h1>
<input type="button" onclick="send()" value="Send">
<p>A click on the button sends a DELETE request by fetch.</p>
` + interactive(`function send() {
  fetch(leaf('js-delete'), {method: 'DELETE'});
}
`)},
	"/javascript/interactive/js-post.html": {title: "POST from a script", markup: `<h1>POST from a script</h1>
<form id="f">
  <input type="text" name="word" value="maze">
  <button type="submit">Send</button>
</form>
<p>The form's submit handler sends its fields in a POST request by fetch instead.</p>
` + interactive(`document.getElementById('f').onsubmit = function (e) {
  e.preventDefault();
  fetch(leaf('js-post'), {method: 'POST', body: new FormData(e.target)});
};
`)},
	"/javascript/interactive/js-post-event-listener.html": {title: "POST from a listener", markup: `<h1>POST from an event listener</h1>
<input type="button" id="btn" value="Send">
<p>A listener of the button's clicks sends a POST request by fetch.</p>
` + interactive(`document.getElementById('btn').addEventListener('click', function () {
  fetch(leaf('js-post-event-listener'), {method: 'POST', body: 'sent=1'});
});
`)},
	"/javascript/interactive/js-put.html": {title: "PUT from a script", markup: `<h1>PUT from a script</h1>
<input type="button" onclick="send()" value="Send">
<p>A click on the button sends a PUT request by XMLHttpRequest.</p>
` + interactive(`function send() {
  var req = new XMLHttpRequest();
  req.open('PUT', leaf('js-put'));
  req.send('sent=1');
}
`)},
	"/javascript/interactive/listener-and-event-attribute.html": {title: "listener and onclick", markup: `<h1>A listener and an event attribute</h1>
<input type="button" id="btn" onclick="second()" value="Send">
<p>One click sends two POST requests: one from a listener, one from the onclick attribute.</p>
` + interactive(`document.getElementById('btn').addEventListener('click', function () {
  fetch(leaf('listener-and-event-attribute-first'), {method: 'POST'});
});
function second() {
  fetch(leaf('listener-and-event-attribute-second'), {method: 'POST'});
}
`)},
	"/javascript/interactive/multi-step-request-event-attribute.html": {title: "two steps, onclick", markup: `<h1>Two steps: a new button's onclick</h1>
<input type="button" onclick="reveal()" value="Show the next button">
<p>A click makes a new button, whose onclick property sends a GET request by fetch.</p>
` + interactive(`function reveal() {
  if (document.getElementById('next')) {
    return;
  }
  var b = document.createElement('button');
  b.id = 'next';
  b.textContent = 'Next';
  document.body.appendChild(b);
  b.onclick = function () {
    fetch(leaf('multi-step-request-event-attribute'));
  };
}
`)},
	"/javascript/interactive/multi-step-request-event-listener-div-dom.html": {title: "two steps, div listened to before it is added", markup: `<h1>Two steps: a new div, listened to before it is added</h1>
<input type="button" onclick="reveal()" value="Show the next step">
<p>A click makes a div with a click listener, added to the document after the listener, that sends a GET request by fetch.</p>
` + interactive(`function reveal() {
  if (document.getElementById('next')) {
    return;
  }
  var d = document.createElement('div');
  d.id = 'next';
  d.textContent = 'Next';
  d.addEventListener('click', function () {
    fetch(leaf('multi-step-request-event-listener-div-dom'));
  });
  document.body.appendChild(d);
}
`)},
	"/javascript/interactive/multi-step-request-event-listener-div.html": {title: "two steps, div listener", markup: `<h1>Two steps: a new div's listener</h1>
<input type="button" onclick="reveal()" value="Show the next step">
<p>A click adds a div, then a click listener to it that sends a GET request by fetch.</p>
` + interactive(`function reveal() {
  if (document.getElementById('next')) {
    return;
  }
  var d = document.createElement('div');
  d.id = 'next';
  d.textContent = 'Next';
  document.body.appendChild(d);
  d.addEventListener('click', function () {
    fetch(leaf('multi-step-request-event-listener-div'));
  });
}
`)},
	"/javascript/interactive/multi-step-request-event-listener-dom.html": {title: "two steps, button listened to before it is added", markup: `<h1>Two steps: a new button, listened to before it is added</h1>
<input type="button" onclick="reveal()" value="Show the next button">
<p>A click makes a button with a click listener, added to the document after the listener, that sends a GET request by fetch.</p>
` + interactive(`function reveal() {
  if (document.getElementById('next')) {
    return;
  }
  var b = document.createElement('button');
  b.id = 'next';
  b.textContent = 'Next';
  b.addEventListener('click', function () {
    fetch(leaf('multi-step-request-event-listener-dom'));
  });
  document.body.appendChild(b);
}
`)},
	"/javascript/interactive/multi-step-request-event-listener.html": {title: "two steps, button listener", markup: `<h1>Two steps: a new button's listener</h1>
<input type="button" onclick="reveal()" value="Show the next button">
<p>A click adds a button, then a click listener to it that sends a GET request by fetch.</p>
` + interactive(`function reveal() {
  if (document.getElementById('next')) {
    return;
  }
  var b = document.createElement('button');
  b.id = 'next';
  b.textContent = 'Next';
  document.body.appendChild(b);
  b.addEventListener('click', function () {
    fetch(leaf('multi-step-request-event-listener'));
  });
}
`)},
	"/javascript/interactive/multi-step-request-redefine-event-attribute.html": {title: "onclick redefined", markup: `<h1>Two clicks: an onclick that replaces itself</h1>
<input type="button" id="btn" onclick="arm()" value="Send">
<p>The first click replaces the button's onclick by one that sends a GET request by fetch; the second runs it.</p>
` + interactive(`function arm() {
  document.getElementById('btn').onclick = function () {
    fetch(leaf('multi-step-request-redefine-event-attribute'));
  };
}
`)},
	"/javascript/interactive/multi-step-request-remove-button.html": {title: "two steps, a button removed", markup: `<h1>Two steps: a button that goes away</h1>
<input type="button" id="show" onclick="reveal()" value="Show the next button">
<input type="button" onclick="hide()" value="Decoy">
<p>A click makes a new button whose listener sends a GET request by fetch; a click anywhere else, the decoy included, removes it.</p>
` + interactive(`function send() {
  fetch(leaf('multi-step-request-remove-button'));
}
function reveal() {
  if (document.getElementById('next')) {
    return;
  }
  var b = document.createElement('button');
  b.id = 'next';
  b.textContent = 'Next';
  document.body.appendChild(b);
  b.addEventListener('click', send);
}
function hide() {
  var b = document.getElementById('next');
  if (b) {
    b.remove();
  }
}
document.addEventListener('click', function (e) {
  if (!document.getElementById('show').contains(e.target)) {
    hide();
  }
});
`)},
	"/javascript/interactive/multi-step-request-remove-event-listener.html": {title: "two steps, a listener removed", markup: `<h1>Two steps: a listener that goes away</h1>
<input type="button" id="show" onclick="reveal()" value="Show the next button">
<input type="button" onclick="hide()" value="Decoy">
<p>A click makes a new button whose listener sends a GET request by fetch; a click anywhere else, the decoy included, removes the listener and the button.</p>
` + interactive(`function send() {
  fetch(leaf('multi-step-request-remove-event-listener'));
}
function reveal() {
  if (document.getElementById('next')) {
    return;
  }
  var b = document.createElement('button');
  b.id = 'next';
  b.textContent = 'Next';
  document.body.appendChild(b);
  b.addEventListener('click', send);
}
function hide() {
  var b = document.getElementById('next');
  if (b) {
    b.removeEventListener('click', send);
    b.remove();
  }
}
document.addEventListener('click', function (e) {
  if (!document.getElementById('show').contains(e.target)) {
    hide();
  }
});
`)},
	"/javascript/interactive/two-listeners.html": {title: "two listeners", markup: `<h1>Two listeners on one button</h1>
<input type="button" id="btn" value="Send">
<p>One click sends two POST requests, one from each of the button's two listeners.</p>
` + interactive(`var btn = document.getElementById('btn');
btn.addEventListener('click', function () {
  fetch(leaf('two-listeners-first'), {method: 'POST'});
});
btn.addEventListener('click', function () {
  fetch(leaf('two-listeners-second'), {method: 'POST'});
});
`)},
}

// jsScripts are the scripts the JSMaze's pages load, by path.
var jsScripts = map[string]string{
	"/javascript/misc/string-variable.js": `// The URL is kept in a variable, written as character codes.
var url = String.fromCharCode(` + charCodes("/test/javascript/misc/string-variable.found") + `);
var worker = new Worker(url);
`,
	"/javascript/misc/string-concat-variable.js": `// The URL is the page's origin and a path joined from pieces.
var domain = location.protocol + '//' + location.host;
var path = ['test', 'javascript', 'misc', 'string-concat' + '-variable'].join('/');
var full = domain + '/' + path + '.' + 'found';
import(full);
`,

	// A component renders a router link and a button; the router moves on
	// by history.pushState and renders the route's component in the outlet.
	"/javascript/frameworks/angular/main.js": `(function () {
  var base = ['', 'test', 'javascript', 'frameworks', 'angular'].join('/');
  var routes = {
    'router-outlet': 'Router outlet navigation',
    'event-handler': 'Event handler navigation'
  };
  function url(route) {
    return base + '/' + route + '.' + 'found';
  }
  function navigate(route) {
    history.pushState({route: route}, '', url(route));
    outlet.textContent = routes[route];
  }
  var root = document.querySelector('maze-root');
  root.textContent = '';
  var nav = document.createElement('nav');
  var link = document.createElement('a');
  link.textContent = 'Router outlet';
  link.href = url('router-outlet');
  link.addEventListener('click', function (e) {
    e.preventDefault();
    navigate('router-outlet');
  });
  var button = document.createElement('button');
  button.textContent = 'Event handler';
  button.addEventListener('click', function () {
    navigate('event-handler');
  });
  nav.append(link, ' ', button);
  var outlet = document.createElement('section');
  root.append(nav, outlet);
})();
`,

	// Binds the {{name}} of each data-ng-href to a scope and sets the
	// link's href, as AngularJS's ng-href does.
	"/javascript/frameworks/angularjs/main.js": `(function () {
  var scope = {
    base: ['', 'test', 'javascript', 'frameworks', 'angularjs'].join('/'),
    route: ['ng-href', 'found'].join('.')
  };
  var app = document.querySelector('[data-ng-app]');
  app.querySelectorAll('[data-ng-href]').forEach(function (el) {
    el.href = el.getAttribute('data-ng-href').replace(/{{(\w+)}}/g, function (_, name) {
      return scope[name];
    });
  });
})();
`,

	// A custom element routes the application: the default route replaces
	// the page's URL (history.replaceState); a button of its shadow root
	// moves on by assigning location.
	"/javascript/frameworks/polymer/main.js": `const base = ['', 'test', 'javascript', 'frameworks', 'polymer'].join('/');
const route = (name) => base + '/' + name + '.' + 'found';

class MazeApp extends HTMLElement {
  connectedCallback() {
    const shadow = this.attachShadow({mode: 'open'});
    const card = document.createElement('div');
    card.className = 'card';
    const title = document.createElement('h2');
    title.textContent = 'Polymer router';
    const button = document.createElement('button');
    button.textContent = 'Event handler';
    button.addEventListener('click', () => location.assign(route('event-handler')));
    card.append(title, button);
    shadow.append(card);
    history.replaceState({}, '', route('polymer-router'));
  }
}
customElements.define('maze-app', MazeApp);
`,

	// A navigation bar of router links, and a search form whose submit
	// handler moves the router to the results; the router moves by
	// history.pushState.
	"/javascript/frameworks/react/app.js": `(function () {
  var base = ['', 'test', 'javascript', 'frameworks', 'react'].join('/');
  var root = document.getElementById('root');
  var view = document.createElement('main');
  function go(url, text) {
    history.pushState({}, '', url);
    view.textContent = text;
  }
  function link(text, url) {
    var a = document.createElement('a');
    a.textContent = text;
    a.href = url;
    a.addEventListener('click', function (e) {
      e.preventDefault();
      go(url, text);
    });
    return a;
  }
  var nav = document.createElement('nav');
  nav.append(link('Home', location.pathname), ' ', link('Route', base + '/' + 'route-path' + '.found'));
  var form = document.createElement('form');
  var query = document.createElement('input');
  query.name = 'query';
  query.required = true;
  query.value = 'maze';
  var submit = document.createElement('button');
  submit.type = 'submit';
  submit.textContent = 'Search';
  form.append(query, ' ', submit);
  form.addEventListener('submit', function (e) {
    e.preventDefault();
    go(base + '/' + 'index' + '.html/' + 'search' + '.found?query=' + encodeURIComponent(query.value), 'Results');
  });
  view.textContent = 'Home';
  root.append(nav, form, view);
})();
`,
}

// jsDirs are the JSMaze's directory listings by path.
var jsDirs = dirsOf(slices.Collect(maps.Keys(jsPages)))
