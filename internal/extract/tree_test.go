package extract

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// What of a document is SVG's or MathML's, and what lies in a <template>,
// as the HTML parser (and Chromium) has it: a <base> there sets no base
// URL, a <script/> there has no content, a template's links are not the
// document's; HTML start tags break out of foreign content, integration
// points hold HTML, nested foreign elements close one at a time. Each
// case is one a browser was seen to read so (Chromium 156).
func TestTreeBaseAndLinks(t *testing.T) {
	page, _ := url.Parse("https://s.example/d1/d2/p.html")
	tests := []struct {
		body, base string
		want, not  []string // links found, links not found
	}{
		{`<svg><p>breakout</p><base href="/brk/"><a href="x">x</a>`, "/brk/", nil, nil},
		{`<p><svg><path/></p><base href="/after-p/"><a href="x">x</a>`, "/after-p/", nil, nil},
		{`<svg><foreignObject><base href="/fo/"></foreignObject></svg><a href="x">x</a>`, "/fo/", nil, nil},
		{`<math><mi><base href="/mi/"></mi></math><a href="x">x</a>`, "/mi/", nil, nil},
		{`<template><svg></template><base href="/t/"><a href="x">x</a>`, "/t/", nil, nil},
		{`<svg><svg></svg><base href="/nested/"></svg><a href="x">x</a>`, "/d1/d2/p.html", nil, nil},
		{`<math><svg></svg><base href="/msvg/"></math><a href="x">x</a>`, "/d1/d2/p.html", nil, nil},
		{`<svg><base href="/svg/"></svg><a href="x">x</a>`, "/d1/d2/p.html", nil, []string{"/svg/"}},
		{`<math><annotation-xml encoding="text/html"><base href="/ax/"></annotation-xml></math>`, "/ax/", nil, nil},
		{`<math><annotation-xml><base href="/ax/"></annotation-xml></math>`, "/d1/d2/p.html", nil, nil},
		{`<svg><font color=red><base href="/font/">`, "/font/", nil, nil},
		{`<svg><font><base href="/font/">`, "/d1/d2/p.html", nil, nil},
		{`<svg><p>breakout</p><script src="/s.js"/><a href="/in-script">s</a></script><a href="/real">r</a>`, "/d1/d2/p.html",
			[]string{"/s.js", "/real"}, []string{"/in-script"}},
		{`<svg><div>d</div><style/><a href="/in-style">s</a></style><a href="/real">r</a>`, "/d1/d2/p.html",
			[]string{"/real"}, []string{"/in-style"}},
		{`<svg><p>breakout</p><textarea/><a href="/in-textarea">t</a></textarea><a href="/real">r</a>`, "/d1/d2/p.html",
			[]string{"/real"}, []string{"/in-textarea"}},
		{`<svg><template></svg><a href="/after">a</a>`, "/d1/d2/p.html", []string{"/after"}, nil},
		{`<svg><template><a href="/svg-tpl-a"/></template></svg>`, "/d1/d2/p.html", []string{"/svg-tpl-a"}, nil},
		{`<template><a href="/tpl">t</a></template><a href="/real">r</a>`, "/d1/d2/p.html", []string{"/real"}, []string{"/tpl"}},
		{`<svg><title><a href="/in-title">t</a></title></svg>`, "/d1/d2/p.html", []string{"/in-title"}, nil},
		{`<svg><script><a href="/in-svg-script">t</a></script></svg>`, "/d1/d2/p.html", []string{"/in-svg-script"}, nil},
		{`<a href="/l"><svg><path></a><base href="/after-a/"><a href="x">x</a>`, "/after-a/", nil, nil},
		{`<svg><title><g></title><base href="/in-g/">`, "/in-g/", nil, nil},
	}
	for _, tt := range tests {
		links, _, base := scanLinks(nil, page, http.Header{}, []byte(tt.body), "text/html")
		if want := "https://s.example" + tt.base; base.String() != want {
			t.Errorf("%s: base %s, want %s", tt.body, base, want)
		}
		var got []string
		for _, l := range links {
			got = append(got, strings.TrimPrefix(l.URL.String(), "https://s.example"))
		}
		for _, w := range tt.want {
			if !slices.Contains(got, w) {
				t.Errorf("%s: links %q, want %s among them", tt.body, got, w)
			}
		}
		for _, n := range tt.not {
			if slices.Contains(got, n) {
				t.Errorf("%s: links %q, want no %s", tt.body, got, n)
			}
		}
	}
}

// The base URL the scanner finds, against golang.org/x/net/html's tree
// (the first <base href> in the HTML namespace and outside any template's
// content), for every sequence of up to four tags of foreign content,
// integration points, breakouts and templates before a <base>, but those
// whose tree has an HTML element of an SVG or MathML name (a <g> outside
// <svg>, say), which the scanner does not track outside foreign content
// (see Tree). End tags </p> and </br> are left out: x/net/html keeps
// foreign content open there, where the HTML Standard (and Chromium)
// break out of it, as the scanner does (TestTreeBaseAndLinks); so is a
// <template> in an integration point, whose content and all after it in
// the integration point x/net/html drops.
func TestTreeBaseAgainstParser(t *testing.T) {
	page, _ := url.Parse("https://s.example/d/p")
	tags := []string{
		"<svg>", "</svg>", "<math>", "</math>", "<foreignObject>", "</foreignObject>",
		"<mi>", "</mi>", "<p>", "<template>", "</template>", "<g>", "</g>", "<div>",
		`<annotation-xml encoding="text/html">`, "</annotation-xml>", "<font color=red>",
		"<font>", "<svg/>", "<title>", "</title>", "<mglyph>", "<desc>", "<table>",
	}
	n := 0
	var walk func(prefix string, depth int)
	walk = func(prefix string, depth int) {
		doc := prefix + `<base href="/b/"><a href="x">x</a>`
		want, ok := parserBase(t, doc)
		if ok {
			n++
			_, _, base := scanLinks(nil, page, http.Header{}, []byte(doc), "text/html")
			if got := base.String(); got != "https://s.example"+want {
				t.Errorf("%s: base %s, want https://s.example%s (x/net/html)", doc, got, want)
			}
		}
		if depth == 4 {
			return
		}
		for _, tag := range tags {
			walk(prefix+tag, depth+1)
		}
	}
	walk("", 0)
	t.Logf("%d documents", n)
}

// parserBase returns the path of the document base of doc as
// golang.org/x/net/html's tree has it: "/b/" if its <base href="/b/"> is
// HTML's and not in a template's content, else the page's; and false if
// the tree has an HTML element of an SVG or MathML name, or a template in
// an integration point.
func parserBase(t *testing.T, doc string) (string, bool) {
	root, err := html.Parse(strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(doc, "<template>") && (strings.Contains(doc, "<foreignObject>") || strings.Contains(doc, "<title>") ||
		strings.Contains(doc, "<mi>") || strings.Contains(doc, "<desc>") || strings.Contains(doc, "<annotation-xml")) {
		return "", false
	}
	found, ok := false, true
	var visit func(n *html.Node, inTemplate bool)
	visit = func(n *html.Node, inTemplate bool) {
		if n.Type == html.ElementNode && n.Namespace == "" {
			if foreignOnly([]byte(n.Data)) {
				ok = false
			}
			if n.DataAtom == atom.Base && !inTemplate && !found {
				found = true
			}
			if n.DataAtom == atom.Template {
				inTemplate = true
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			visit(c, inTemplate)
		}
	}
	visit(root, false)
	if found {
		return "/b/", ok
	}
	return "/d/p", ok
}
