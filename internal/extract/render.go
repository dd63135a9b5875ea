package extract

import (
	"bytes"

	"golang.org/x/net/html"

	"github.com/asyncrawl/crawl/internal/htmltok"
)

// Thresholds of NeedsRender: a body with less visible text than thinText
// bytes and fewer links than thinLinks shows little without its scripts.
const (
	thinText  = 256
	thinLinks = 2
	// A page that asks for JavaScript in a <noscript> is rendered when
	// its text is under noscriptText bytes: a page of documentation that
	// only needs a script for its search box has more.
	noscriptText = 1024
	// A framework's marker with fewer links than markedLinks: a page its
	// server rendered already holds its links.
	markedLinks = 5
)

// NeedsRender reports whether a page of HTML looks built by its scripts:
// it has a script and no <meta http-equiv="refresh"> (a redirect, whose
// target a static parse finds), and either almost no text and links, an application's
// root element (id root, app, __next, __nuxt, ___gatsby, or a custom
// app-root element) with no link, a <noscript> that mentions JavaScript
// on a page of little text, or a framework's marker attribute (ng-app,
// ng-version, data-reactroot, data-v-app) with few links.
func NeedsRender(body []byte) bool {
	var z htmltok.Tokenizer
	z.Reset(body)
	defer z.Release()
	var (
		scripts, links, text int
		appRoot, marker      bool
		refresh              bool // a <meta http-equiv="refresh">
		noscriptJS           bool
		skip                 int // inside script, style, template
		tmpl                 int // inside template, whose scripts do not run
		inNoscript           bool
		buf                  [32]byte
	)
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			thin := text < thinText && links < thinLinks
			return scripts > 0 && !refresh && (thin ||
				appRoot && links == 0 ||
				noscriptJS && text < noscriptText ||
				marker && links < markedLinks)
		case html.TextToken:
			t := z.Text()
			switch {
			case inNoscript:
				if bytes.Contains(bytes.ToLower(t), []byte("javascript")) {
					noscriptJS = true
				}
			case skip == 0:
				text += len(bytes.TrimSpace(t))
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			name := lowerTagName(&buf, z.Raw())
			switch string(name) {
			case "script":
				if tt == html.StartTagToken {
					skip++
				}
			case "style", "template":
				if tt == html.StartTagToken {
					skip++
					if string(name) == "template" {
						tmpl++
					}
				}
			case "noscript":
				// Read as markup, so that its text is seen.
				z.NextIsNotRawText()
				inNoscript = true
			case "app-root":
				appRoot = true
			}
			// A script runs unless it is data (a type of its own: JSON-LD,
			// a template language) or inside a template.
			runs := string(name) == "script" && tmpl == 0
			for {
				k, v, more := z.TagAttr()
				switch string(k) {
				case "type":
					if string(name) == "script" {
						runs = runs && scriptType(typeEssence(v))
					}
				case "href":
					if string(name) == "a" || string(name) == "area" {
						links++
					}
				case "id":
					switch string(v) {
					case "root", "app", "__next", "__nuxt", "___gatsby":
						appRoot = true
					}
				case "ng-app", "data-ng-app", "ng-version", "data-reactroot", "data-v-app":
					marker = true
				case "http-equiv":
					if string(name) == "meta" && NameIs(v, "refresh") {
						refresh = true
					}
				}
				if !more {
					break
				}
			}
			if runs {
				scripts++
			}
		case html.EndTagToken:
			switch n := string(lowerTagName(&buf, z.Raw())); n {
			case "script", "style", "template":
				if skip > 0 {
					skip--
				}
				if n == "template" && tmpl > 0 {
					tmpl--
				}
			case "noscript":
				inNoscript = false
			}
		}
	}
}
