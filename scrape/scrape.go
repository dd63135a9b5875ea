// Package scrape gets fields out of the pages a crawl fetches, with CSS
// selectors, as colly's OnHTML does: register a callback for a selector,
// and it is called on each element of each HTML page that matches.
//
//	c := scrape.New()
//	err := c.OnHTML("h1", func(e *scrape.Element) {
//		fmt.Println(e.Page.URL, e.Text())
//	})
//	// ... check err ...
//	cr, err := crawl.New(crawl.WithPageHook(c.Hook))
//
// A Collector parses each HTML page once, with goquery
// (github.com/PuerkitoBio/goquery, over golang.org/x/net/html and the
// cascadia selector library), and shares that one document between all its
// callbacks. The package is a module of its own, so that a program that
// imports package crawl alone does not build goquery.
//
// The crawler follows a page's links itself, so unlike colly's there is no
// Visit here: the callbacks only read. A URL the crawl would not follow can
// be given to a running crawl with crawl.Crawl.Add.
package scrape

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/PuerkitoBio/goquery"
	"github.com/andybalholm/cascadia"
	"github.com/asyncrawl/crawl"
	"golang.org/x/net/html"
)

// A Collector runs callbacks on the elements of HTML pages that match
// their CSS selectors. Register the callbacks with OnHTML, then give
// Hook to the crawler as a page hook. Its methods are safe for concurrent
// use; a callback registered while a crawl runs applies to the pages
// whose Hook begins after it.
type Collector struct {
	mu        sync.Mutex                // serialises OnHTML
	callbacks atomic.Pointer[[]handler] // copied on write, read by Hook
	children  selectorCache             // the child helpers' selectors
}

// handler is a callback and its compiled selector.
type handler struct {
	selector string
	match    goquery.Matcher
	f        func(*Element)
}

// New returns a Collector with no callback, as the zero Collector is.
func New() *Collector { return &Collector{} }

// OnHTML registers f, to be called on each element of each HTML page that
// matches selector, a CSS selector as goquery's Find takes (a group, such
// as "h1, h2", is one selector). The selector is compiled here, once: one
// that does not compile is an error that wraps a *SelectorError naming it,
// and f is not registered. A nil f is an error too.
//
// f is called from the crawler's worker goroutines, several at once for
// different pages: it must be safe for concurrent use. See Hook for the
// order of the calls.
func (c *Collector) OnHTML(selector string, f func(e *Element)) error {
	m, err := compile(selector)
	if err != nil {
		return fmt.Errorf("scrape: OnHTML: %w", err)
	}
	if f == nil {
		return fmt.Errorf("scrape: OnHTML %q: nil callback", selector)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var hs []handler
	if old := c.callbacks.Load(); old != nil {
		hs = append(hs, *old...)
	}
	hs = append(hs, handler{selector: selector, match: m, f: f})
	c.callbacks.Store(&hs)
	return nil
}

// Hook is a page hook (see crawl.WithPageHook) that runs the Collector's
// callbacks on p: give it as crawl.WithPageHook(c.Hook). That option may
// be given many times, the hooks running in the order given, so that Hook
// runs beside the program's own page hooks; it can also be called from one
// of them.
//
// For a page that IsHTML says is HTML, Hook parses p.Body once and calls
// each callback, in the order they were registered, on each element its
// selector matches, in document order. The callbacks of a page share its
// document: what one changes in it, the next sees. Any other page is left
// unparsed and Hook returns at once, as it does when no callback is
// registered. Hook runs for every response the crawler shows its page
// hooks, whatever the status: a callback that wants only pages that were
// found checks e.Page.Status. A body cut at crawl.WithMaxBodySize
// (e.Page.Truncated) is parsed as far as it goes.
//
// A panic in a callback ends Hook for that page; the crawler recovers it
// into the page's Result.Err (see crawl.WithPageHook). Hook is safe for
// concurrent use.
func (c *Collector) Hook(p *crawl.Page) {
	hs := c.callbacks.Load()
	if hs == nil || !IsHTML(p) {
		return
	}
	doc, ok := Document(p)
	if !ok {
		return
	}
	for _, h := range *hs {
		doc.FindMatcher(h.match).Each(func(i int, s *goquery.Selection) {
			h.f(&Element{Name: s.Nodes[0].Data, Index: i, DOM: s, Page: p, c: c})
		})
	}
}

// IsHTML reports whether p is a page of HTML that Document parses: its
// ContentType is "text/html" or "application/xhtml+xml" (parsed as HTML,
// as goquery does) and the crawler decoded its body to UTF-8. A body left
// in a content coding the crawler does not decode (br, zstd: see
// crawl.Page.Body) is not, and has an empty Encoding.
func IsHTML(p *crawl.Page) bool {
	return (p.ContentType == "text/html" || p.ContentType == "application/xhtml+xml") && p.Encoding != ""
}

// parses counts the documents Document has parsed, for the tests.
var parses atomic.Int64

// Document parses p.Body into a goquery document, for a program that
// would rather query the whole document in its own page hook than
// register callbacks. It returns false, parsing nothing, for a page
// IsHTML says is not HTML. Each call parses the body anew: a program that
// also uses a Collector shares that one's parse by registering a callback
// on "html", whose Element is the document's root element.
//
// The document is a copy: unlike p.Body, it stays valid after the page
// hook returns. Document is safe for concurrent use.
func Document(p *crawl.Page) (*goquery.Document, bool) {
	if !IsHTML(p) {
		return nil, false
	}
	parses.Add(1)
	// The HTML parser fails only when its reader does, which a
	// bytes.Reader does not.
	root, err := html.Parse(bytes.NewReader(p.Body))
	if err != nil {
		return nil, false
	}
	return goquery.NewDocumentFromNode(root), true
}

// An Element is an element of a page that a callback's selector matched,
// with helpers for the fields programs take from it. Its Page, like the
// page hook's, is valid only during the callback the Element is passed
// to; the goquery selection in DOM, and what the helpers return, stay
// valid after it (the document is a copy of the page), though a DOM kept
// keeps the whole document in memory. The helpers that
// take a selector compile each selector once per Collector; a selector
// that does not compile panics, naming it, which the crawler recovers
// into the page's Result.Err.
type Element struct {
	// Name is the element's tag name, in lower case ("a", "h1").
	Name string
	// Index is the element's position among the selector's matches on
	// the page, from 0, in document order.
	Index int
	// DOM is the element as a goquery selection of one node, for
	// whatever the helpers do not do.
	DOM *goquery.Selection
	// Page is the page the element is on. Like the page hook's, it is
	// valid only during the call: its Body is reused afterwards.
	Page *crawl.Page

	c *Collector
}

// Text returns the text of the element and its descendants, with white
// space stripped and collapsed as the HTML standard's document.title is:
// each run of ASCII white space is one space, with none at either end.
// The text of <script> and <style> elements inside it counts, as in
// goquery's Text.
func (e *Element) Text() string { return Collapse(e.DOM.Text()) }

// Attr returns the value of the element's attribute name, as written;
// "" when it has none. The HTML parser lowers the case of attribute
// names, and name is matched as given: give it in lower case.
func (e *Element) Attr(name string) string {
	v, _ := e.DOM.Attr(name)
	return v
}

// AbsURL returns the value of the element's attribute attr (such as
// "href" or "src") resolved against the page's base URL with
// crawl.Page.Resolve, as a browser resolves it, in the form the crawler
// sends (without fragment); "" when the element has no such attribute or
// its value is not an http(s) URL ("mailto:", "javascript:").
func (e *Element) AbsURL(attr string) string {
	v, ok := e.DOM.Attr(attr)
	if !ok {
		return ""
	}
	u, err := e.Page.Resolve(v)
	if err != nil {
		return ""
	}
	return u.String()
}

// ChildText returns, as Text does, the text of the first descendant of
// the element that selector matches; "" when none does. Unlike colly's
// ChildText, which joins the text of every match, it takes the first, as
// ChildAttr does; ChildTexts returns them all.
func (e *Element) ChildText(selector string) string {
	return Collapse(e.first(selector).Text())
}

// ChildTexts returns, as Text does, the text of each descendant of the
// element that selector matches, in document order, empty ones included.
func (e *Element) ChildTexts(selector string) []string {
	var texts []string
	e.DOM.FindMatcher(e.c.children.get(selector)).Each(func(_ int, s *goquery.Selection) {
		texts = append(texts, Collapse(s.Text()))
	})
	return texts
}

// ChildAttr returns the value of the attribute name of the first
// descendant of the element that selector matches; "" when none matches
// or the first has no such attribute.
func (e *Element) ChildAttr(selector, name string) string {
	v, _ := e.first(selector).Attr(name)
	return v
}

// first returns the first descendant of the element that selector
// matches, or an empty selection. (goquery's SingleMatcher stops at the
// first match under each child, not under the element.)
func (e *Element) first(selector string) *goquery.Selection {
	m := e.c.children.get(selector)
	for _, n := range e.DOM.Nodes {
		if d := cascadia.Query(n, m); d != nil {
			return e.DOM.FindNodes(d)
		}
	}
	return e.DOM.FindNodes()
}

// ChildAttrs returns the value of the attribute name of each descendant
// of the element that selector matches and has it, in document order.
func (e *Element) ChildAttrs(selector, name string) []string {
	var vals []string
	e.DOM.FindMatcher(e.c.children.get(selector)).Each(func(_ int, s *goquery.Selection) {
		if v, ok := s.Attr(name); ok {
			vals = append(vals, v)
		}
	})
	return vals
}

// ForEach calls f on each descendant of the element that selector
// matches, in document order, with its index among them.
func (e *Element) ForEach(selector string, f func(i int, e *Element)) {
	e.DOM.FindMatcher(e.c.children.get(selector)).Each(func(i int, s *goquery.Selection) {
		f(i, &Element{Name: s.Nodes[0].Data, Index: i, DOM: s, Page: e.Page, c: e.c})
	})
}

// Collapse returns s with its white space stripped and collapsed as the
// HTML standard does for document.title: each run of ASCII white space
// (space, tab, line feed, form feed, carriage return) becomes one space,
// and there is none at either end. Other white space, such as the
// no-break space, is kept.
func Collapse(s string) string {
	s = strings.Trim(s, asciiSpace)
	for i := 0; i < len(s); i++ {
		if isSpace(s[i]) && (s[i] != ' ' || i+1 < len(s) && isSpace(s[i+1])) {
			return collapseFrom(s, i)
		}
	}
	return s // nothing to collapse: no copy
}

const asciiSpace = " \t\n\f\r"

func isSpace(b byte) bool {
	return b == ' ' || b == '\t' || b == '\n' || b == '\f' || b == '\r'
}

// collapseFrom collapses the white space of s, trimmed, from s[i] on.
func collapseFrom(s string, i int) string {
	var b strings.Builder
	b.Grow(len(s))
	b.WriteString(s[:i])
	space := false
	for ; i < len(s); i++ {
		if isSpace(s[i]) {
			space = true
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// A SelectorError is a CSS selector that does not compile.
type SelectorError struct {
	Selector string
	Err      error // the parser's
}

func (e *SelectorError) Error() string {
	return fmt.Sprintf("bad selector %q: %v", e.Selector, e.Err)
}

func (e *SelectorError) Unwrap() error { return e.Err }

// compile compiles a CSS selector; its error is a *SelectorError.
func compile(selector string) (cascadia.Selector, error) {
	m, err := cascadia.Compile(selector)
	if err != nil {
		return nil, &SelectorError{Selector: selector, Err: err}
	}
	return m, nil
}

// selectorCache holds the selectors the child helpers were given,
// compiled. It stops adding past maxCached, so that a program that builds
// selectors from the pages it reads does not grow it without bound: the
// rest are compiled at each call. It is safe for concurrent use.
type selectorCache struct {
	m sync.Map // selector string to cascadia.Selector
	n atomic.Int32
}

const maxCached = 1024

// get returns selector compiled, and panics if it does not compile.
func (sc *selectorCache) get(selector string) cascadia.Selector {
	if m, ok := sc.m.Load(selector); ok {
		return m.(cascadia.Selector)
	}
	m, err := compile(selector)
	if err != nil {
		panic(fmt.Errorf("scrape: %w", err))
	}
	if sc.n.Load() < maxCached {
		if _, loaded := sc.m.LoadOrStore(selector, m); !loaded {
			sc.n.Add(1)
		}
	}
	return m
}
