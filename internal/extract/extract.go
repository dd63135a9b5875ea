// Package extract is the crawler's typed link extractor: in one pass it
// finds every URL a response names, with what the page does with it (its
// Role) and where it names it (its Source): in the response headers
// (Refresh, Link as RFC 8288 writes it, Content-Location, a
// Content-Security-Policy report-uri), in HTML, XHTML and SVG markup read
// as the WHATWG HTML Standard tokenizes it (by internal/htmltok, with
// srcset, meta refresh, forms, iframe srcdoc, conditional comments and
// data: URIs), in CSS (url() and @import, escapes decoded) and in
// sitemap XML, and, when asked, guesses URLs in scripts and
// text. It resolves each against the document's base URL as the WHATWG
// URL Standard does (internal/urlstd), and reads the robots meta tags on
// the way. crawl.ExtractTypedLinks documents what it returns; the crawler
// converts its Links to crawl.Link.
package extract

import (
	"bytes"
	"encoding/base64"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/asyncrawl/crawl/internal/htmltok"
	"github.com/asyncrawl/crawl/internal/urlstd"
	"golang.org/x/net/html"
)

// Role says what a page does with a URL it names, as crawl.LinkRole
// does, whose values it has.
type Role uint8

// The roles of a link (see crawl.LinkRole).
const (
	Navigation Role = iota // followed within the scope
	Requisite              // needed to render the page
	Reference              // only recorded
)

// Link is a URL a page names, with how and where it names it: the fields
// of crawl.Link that the extractor sets, with the same meaning.
type Link struct {
	URL         *url.URL
	Role        Role
	Speculative bool
	Source      string
	Rel         string
	Text        string
	Page        string
}

// Meta is what a page says to robots in <meta name="robots"> (or, for
// the crawler, in its X-Robots-Tag headers).
type Meta struct {
	NoIndex, NoFollow bool
}

// Parsed reports whether Scan reads a body of media type mt for links
// (Scan's types: keep the two together), spec saying whether speculative
// guessing is on.
func Parsed(mt string, spec bool) bool {
	switch mt {
	case "text/html", "application/xhtml+xml", "image/svg+xml", "application/xml", "text/xml", "text/css",
		"application/rss+xml", "application/atom+xml":
		return true
	}
	return spec && IsJavaScript(mt)
}

// Scan appends to dst the links of a response from page, each made by mk
// from a Link, in order: those of its header, then those of its body if contentType (a media type,
// lower case, no parameters) is HTML, XHTML, SVG, XML or CSS, resolved as
// crawl.ExtractTypedLinks documents. It returns what the body's robots
// meta tags say and the document's base URL (page unless a <base href>
// set another). One tokenizer pass reads an HTML body, so a crawler gets
// links and robots directives together.
//
// It resolves at most max links (0: all), so that a page of a million
// links costs a few bytes for each past max, not a URL each; unread is
// how many it left unresolved. With spec, it also guesses URLs (see
// speculate) in the scripts, text and non-URL attributes of HTML and in a
// JavaScript body; they come after the others, so that max never cuts a
// link the markup names for a guessed one. query, when not nil, rewrites
// each reference before it is parsed: the page's encoding's (see
// urlstd.EncodeQuery). It is safe for concurrent use.
func Scan[L any](dst []L, mk func(Link) L, page *url.URL, header http.Header, body []byte, contentType string, max int, spec bool, query func(string) string) (_ []L, _ Meta, _ *url.URL, unread int) {
	s := scannerPool.Get().(*linkScanner)
	defer s.release()
	s.spec = spec
	s.max = max
	s.headers(header)
	switch contentType {
	case "text/html":
		s.html(body, 0, resolveDoc, false)
	case "application/xhtml+xml", "image/svg+xml", "application/xml", "text/xml", "application/rss+xml", "application/atom+xml":
		// XML is read for sitemaps' <loc>, feeds' links (Atom's <link
		// href>, RSS's <link>, permalink <guid> and <enclosure url>)
		// and XHTML or SVG elements; its other elements name nothing.
		s.html(body, 0, resolveDoc, true)
	case "text/css":
		s.css(body, "css url", "css @import", 0, resolvePage)
	default:
		if spec && IsJavaScript(contentType) {
			s.script(body, 0, resolvePage)
		}
	}
	base := page
	if s.baseSeen {
		ref := s.baseRef
		if query != nil {
			ref = query(ref) // its query in the page's encoding, as a link's
		}
		if b, err := urlstd.Resolve(page, ref); err == nil && urlstd.IsHTTP(b) {
			base = b
			s.guessUnderBase(base)
		}
	}
	// Each base is converted to the URL Standard's form once, not once a
	// link, as urlstd.Resolve would.
	var std [2]urlstd.URL
	var stdOK [2]bool
	for i, b := range [2]*url.URL{base, page} {
		if i == 1 && b == base {
			std[1], stdOK[1] = std[0], stdOK[0]
			break
		}
		var err error
		std[i], err = urlstd.FromURL(b)
		stdOK[i] = err == nil
	}
	pageStr := ""
	pend := s.pend
	if len(s.specPend) > 0 {
		pend = append(pend, s.specPend...)
		s.pend = pend // to be cleared on release
	}
	unread = s.over
	if max > 0 && len(pend) > max {
		pend, unread = pend[:max], unread+len(pend)-max
	}
	dst = slices.Grow(dst, len(pend))
	var last *url.URL // the URL of the link appended last
	for i := range pend {
		pl := &pend[i]
		var b *urlstd.URL
		switch pl.res {
		case resolveDoc, resolvePage:
			k := int(pl.res) // resolveDoc is 0, resolvePage 1
			if !stdOK[k] {
				continue
			}
			b = &std[k]
		}
		ref := pl.ref
		if query != nil && !pl.utf8 {
			ref = query(ref)
		}
		su, err := urlstd.Parse(ref, b)
		if err != nil {
			continue
		}
		u := su.URL()
		if !urlstd.IsHTTP(u) {
			continue
		}
		u.Fragment, u.RawFragment = "", ""
		if pl.alt && last != nil && *last == *u {
			continue
		}
		if pageStr == "" {
			pageStr = urlstd.String(page)
		}
		last = u
		dst = append(dst, mk(Link{URL: u, Role: pl.role, Source: pl.source, Rel: pl.rel, Text: pl.text, Page: pageStr, Speculative: pl.spec}))
	}
	return dst, s.meta, base, unread
}

// How a reference found in a document resolves.
const (
	resolveDoc  = iota // against the document's base URL
	resolvePage        // against the page's URL (headers, stylesheets)
	resolveNone        // not at all: a data: document has no usable base
)

// Bounds on markup inside markup.
const (
	maxNest     = 2       // nesting depth of srcdoc, conditional comments, data: URIs
	maxDataURI  = 1 << 16 // decoded bytes of a data: URI that is scanned
	maxLinkText = 200     // bytes of Link.Text
)

// pendingLink is a reference as a document writes it. References are
// resolved once the scan is over, since the first <base href> applies to
// the links before it too.
type pendingLink struct {
	ref    string
	role   Role
	res    uint8
	source string
	rel    string
	text   string
	spec   bool // guessed by speculate
	alt    bool // another reading of the link before it: left out if the same URL
	utf8   bool // of an iframe's srcdoc, a document in UTF-8: its query too
}

// attr is an attribute of the current tag, its key and value slices of the
// document or of the tokenizer's buffer: not to be written to.
type attr struct{ key, val []byte }

// linkScanner holds the state of one Scan call. Scanners are pooled:
// a crawl reuses a few, with their buffers.
type linkScanner struct {
	pend  []pendingLink
	attrs [maxNest + 1][]attr            // the current tag's attributes, per nesting level
	toks  [maxNest + 1]htmltok.Tokenizer // the tokenizer of each nesting level
	trees [maxNest + 1]Tree              // the tree of each nesting level
	text  []byte                         // the open anchor's text
	meta  Meta

	srcdoc   int // iframe srcdoc documents open, nested
	baseRef  string
	baseSeen bool
	inert    bool // the element being read is in <svg>, <math> or a <template>
	max      int  // the most links kept (0: no cap); Scan's max
	over     int  // the links met past max, not kept

	anchor   int  // index in pend of the open <a>'s link, or -1
	formPost bool // the open form does not GET

	spec     bool          // guess URLs in scripts, text and other attributes
	specPend []pendingLink // the guessed URLs, kept apart from pend
	specN    int           // candidates looked at, up to maxSpecCandidates
}

var scannerPool = sync.Pool{New: func() any { return &linkScanner{anchor: -1} }}

func (s *linkScanner) release() {
	if cap(s.pend) > 1<<14 || cap(s.specPend) > 1<<14 {
		return // a page of many links: let its buffers go
	}
	clear(s.pend)
	s.pend = s.pend[:0]
	for i := range s.attrs {
		clear(s.attrs[i])
		s.attrs[i] = s.attrs[i][:0]
		s.toks[i].Release()
	}
	s.text = s.text[:0]
	s.meta = Meta{}
	s.baseRef, s.baseSeen, s.inert = "", false, false
	s.max, s.over = 0, 0
	s.anchor, s.formPost = -1, false
	clear(s.specPend)
	s.specPend = s.specPend[:0]
	s.spec, s.specN = false, 0
	scannerPool.Put(s)
}

// add records a reference of the document at nesting level. A data: URI of
// HTML, SVG or CSS is scanned in its place.
func (s *linkScanner) add(ref []byte, role Role, source, rel string, level int, res uint8) int {
	ref = trimSpace(ref)
	if len(ref) == 0 && source != "a href" && source != "area href" {
		// An empty src or link href fetches nothing; an empty link of
		// <a> or <area> leads to the document's base URL (under a
		// <base href>, another page).
		return -1
	}
	if len(ref) > 5 && NameIs(ref[:5], "data:") {
		if role != Requisite {
			// A document the page leads to, not part of it: a data:
			// document has no base, and only its absolute URLs count.
			res = resolveNone
		}
		s.dataURI(ref[5:], level, res)
		return -1
	}
	if s.max > 0 && len(s.pend) >= s.max {
		// Past the cap: counted, not kept, so that a page of a million
		// links costs no more than one of max.
		s.over++
		return -1
	}
	s.pend = append(s.pend, pendingLink{ref: string(ref), role: role, res: res, source: source, rel: rel, utf8: s.srcdoc > 0})
	return len(s.pend) - 1
}

// headers reads the links of a response's header.
func (s *linkScanner) headers(h http.Header) {
	for _, v := range h["Refresh"] {
		if ref, ok := parseRefresh([]byte(v)); ok {
			s.add(ref, Navigation, "header Refresh", "", 0, resolvePage)
		}
	}
	for _, v := range h["Link"] {
		parseLinkHeader(v, func(ref, rel string) {
			s.add([]byte(ref), relRole(rel), "header Link", normRel([]byte(rel)), 0, resolvePage)
		})
	}
	for _, v := range h["Content-Location"] {
		s.add([]byte(v), Navigation, "header Content-Location", "", 0, resolvePage)
	}
	for _, v := range h["Content-Security-Policy"] {
		s.reportURIs(v, "header Content-Security-Policy", 0, resolvePage)
	}
}

// reportURIs records the report-uri URLs of a Content-Security-Policy.
func (s *linkScanner) reportURIs(policy, source string, level int, res uint8) {
	for d := range strings.SplitSeq(policy, ";") {
		f := strings.Fields(d)
		if len(f) > 1 && strings.EqualFold(f[0], "report-uri") {
			for _, ref := range f[1:] {
				s.add([]byte(ref), Reference, source, "", level, res)
			}
		}
	}
}

// html scans an HTML, XHTML or SVG document at nesting level. In an XML
// document (xml: XHTML, SVG), as in SVG and MathML inside HTML, a tag
// closes itself with "/>", <script/> included.
func (s *linkScanner) html(body []byte, level int, res uint8, xml bool) {
	// In HTML, what of the tree is SVG's or MathML's and what lies in a
	// <template> (see Tree); in XML, what is in <svg> or <math>.
	tree := &s.trees[level]
	tree.Reset()
	xmlForeign := false
	if level > 0 {
		// Markup inside markup has anchors of its own.
		outer, text := s.anchor, s.text
		s.anchor, s.text = -1, nil
		defer func() {
			s.closeAnchor()
			s.anchor, s.text = outer, text
		}()
	}
	z := &s.toks[level]
	z.Reset(body)
	var nameBuf [32]byte
	// What the text token right after a start tag is: the CSS of a
	// <style>, the URL of a sitemap's <loc>, or neither.
	const (
		textOther = iota
		textStyle
		textLoc
		textImageLoc
		textFeedLink // an RSS <link>
		textGUID     // an RSS <guid> that is a permalink
		textScript
	)
	next := textOther
	for {
		tt := z.Next()
		if tt != html.TextToken {
			next = textOther
		}
		switch tt {
		case html.ErrorToken:
			s.closeAnchor()
			return
		case html.TextToken:
			if tree.InTemplate() {
				// A template's content is inert: nothing of it is
				// fetched until a script puts it in the document.
				next = textOther
				break
			}
			switch next {
			case textStyle:
				s.css(z.Text(), "style url", "style @import", level, res)
			case textLoc:
				s.add(z.Text(), Navigation, "sitemap loc", "", level, res)
			case textImageLoc:
				s.add(z.Text(), Requisite, "sitemap image:loc", "", level, res)
			case textFeedLink:
				s.add(z.Text(), Navigation, "rss link", "", level, res)
			case textGUID:
				// A guid is a permalink only if it is a URL: "12345"
				// is an ID whatever isPermaLink says.
				if t := trimSpace(z.Text()); len(t) > 8 && (NameIs(t[:7], "http://") || NameIs(t[:8], "https://")) {
					s.add(t, Navigation, "rss guid", "", level, res)
				}
			case textScript:
				s.script(z.Text(), level, res)
			default:
				if s.anchor >= 0 {
					s.anchorText(z.Text(), false)
				}
				if s.spec {
					s.speculate(z.Text(), false, "text speculative", level, res)
				}
			}
			next = textOther
		case html.CommentToken:
			if level < maxNest && !tree.InTemplate() {
				if inner, ok := conditionalComment(z.Text()); ok {
					s.html(inner, level+1, res, xml)
				}
			}
		case html.DoctypeToken:
			if ref := doctypeSystemID(z.Text()); ref != nil {
				s.add(ref, Reference, "doctype", "", level, res)
			}
		case html.EndTagToken:
			name := lowerTagName(&nameBuf, z.Raw())
			if xml {
				if string(name) == "svg" || string(name) == "math" {
					xmlForeign = false
				}
			} else if !tree.Quiet() {
				tree.End(name)
			}
			switch string(name) {
			case "a":
				s.closeAnchor()
			case "form":
				s.formPost = false
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			// Tokenizer.TagName and TagAttr copy what they return, so the
			// name is read from the raw tag, and attributes only of
			// elements that may have a URL in one.
			raw := z.Raw()
			name := lowerTagName(&nameBuf, raw)
			attrs := s.attrs[level][:0]
			if s.spec || urlElement(name) || NeedsAttrs(name) || hasGenericAttr(raw) {
				for more := true; more; {
					var k, v []byte
					k, v, more = z.TagAttr()
					if k != nil {
						attrs = append(attrs, attr{k, v})
					}
				}
			}
			s.attrs[level] = attrs
			switch string(name) {
			case "noscript", "noframes":
				// The crawler runs no script and shows no frames: it reads
				// what a browser without them shows, as markup.
				z.NextIsNotRawText()
			case "style":
				if tt == html.StartTagToken {
					next = textStyle
				}
			case "loc":
				if xml && tt == html.StartTagToken {
					next = textLoc
				}
			case "image:loc":
				if xml && tt == html.StartTagToken {
					next = textImageLoc
				}
			case "link":
				// RSS's <link> holds its URL as text; Atom's and
				// XHTML's have an href.
				if _, ok := getAttr(attrs, "href"); xml && tt == html.StartTagToken && !ok {
					next = textFeedLink
				}
			case "guid":
				if v, ok := getAttr(attrs, "ispermalink"); xml && tt == html.StartTagToken && (!ok || !NameIs(trimSpace(v), "false")) {
					next = textGUID
				}
			case "script":
				if s.spec && tt == html.StartTagToken {
					next = textScript
				}
			}
			var foreign, inert bool
			if xml {
				if string(name) == "svg" || string(name) == "math" {
					xmlForeign = xmlForeign || tt == html.StartTagToken
				}
				foreign = xmlForeign
				if tt == html.SelfClosingTagToken {
					// <script/> in XML has no content; in HTML it would.
					z.NextIsNotRawText()
				}
			} else if !tree.Quiet() || Treed(name) {
				var get func(string) ([]byte, bool)
				if NeedsAttrs(name) {
					get = func(k string) ([]byte, bool) { return getAttr(attrs, k) }
				}
				foreign, inert = tree.Start(z, name, tt == html.SelfClosingTagToken, get)
			}
			if len(attrs) > 0 && !inert {
				// A <base> in <svg> or <math> is not HTML's: it sets no
				// base URL. (What a <template> holds is not read at all:
				// inert, the browser fetches none of it.)
				s.inert = foreign
				s.element(name, attrs, level, res)
				if s.spec {
					s.otherAttrs(name, attrs, level, res)
				}
			}
		}
	}
}

// LowerTagName is lowerTagName, for the scanners of package crawl.
func LowerTagName(buf *[32]byte, raw []byte) []byte { return lowerTagName(buf, raw) }

// lowerTagName returns the name of the start or end tag whose raw text is
// raw ("<A href=...>", "</A>" give "a"), in lower case, in buf if it fits.
func lowerTagName(buf *[32]byte, raw []byte) []byte {
	if len(raw) < 2 || raw[0] != '<' {
		return nil
	}
	i := 1
	if raw[1] == '/' {
		i = 2
	}
	j := i
	for j < len(raw) && !isSpace(raw[j]) && raw[j] != '/' && raw[j] != '>' {
		j++
	}
	name := raw[i:j]
	if len(name) > len(buf) {
		return bytes.ToLower(name)
	}
	for i, c := range name {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[i] = c
	}
	return buf[:len(name)]
}

// urlElement reports whether an element, by its lower-case name, may have
// a URL in an attribute other than style, background and datasrc.
func urlElement(name []byte) bool {
	switch string(name) {
	case "a", "area", "link", "base", "frame", "iframe", "img", "image", "source", "guid", "enclosure",
		"script", "use", "feimage", "video", "audio", "track", "bgsound", "layer",
		"ilayer", "embed", "object", "applet", "param", "form", "input", "button",
		"isindex", "blockquote", "q", "ins", "del", "html", "head", "xml", "meta", "import":
		return true
	}
	return false
}

// hasGenericAttr reports whether the raw text of a tag may have a style,
// background or datasrc attribute, which any element may have: whether
// one of those names, in any case, follows white space, a quote or a
// slash.
func hasGenericAttr(raw []byte) bool {
	for i := 1; i < len(raw); i++ {
		switch raw[i-1] {
		case ' ', '\t', '\n', '\f', '\r', '"', '\'', '/':
		default:
			continue
		}
		rest := raw[i:]
		switch raw[i] | 0x20 {
		case 's':
			if len(rest) >= 5 && NameIs(rest[:5], "style") {
				return true
			}
		case 'b':
			if len(rest) >= 10 && NameIs(rest[:10], "background") {
				return true
			}
		case 'd':
			if len(rest) >= 7 && NameIs(rest[:7], "datasrc") {
				return true
			}
		}
	}
	return false
}

// getAttr returns the value of the attribute key, a lower-case name.
func getAttr(attrs []attr, key string) ([]byte, bool) {
	for _, a := range attrs {
		if string(a.key) == key {
			return a.val, true
		}
	}
	return nil, false
}

// addAttr records the URL in attribute key of a tag, as add does, and
// reports whether the tag has the attribute.
func (s *linkScanner) addAttr(attrs []attr, key string, role Role, source string, level int, res uint8) bool {
	v, ok := getAttr(attrs, key)
	if ok {
		s.add(v, role, source, "", level, res)
	}
	return ok
}

// element records the references in the attributes of a start tag.
func (s *linkScanner) element(name []byte, attrs []attr, level int, res uint8) {
	// Attributes any element may have.
	for _, a := range attrs {
		switch string(a.key) {
		case "style":
			s.css(a.val, "style attribute url", "style attribute @import", level, res)
		case "background":
			s.add(a.val, Requisite, string(name)+" background", "", level, res)
		case "datasrc":
			s.add(a.val, Reference, string(name)+" datasrc", "", level, res)
		}
	}
	switch string(name) {
	case "a":
		s.closeAnchor()
		var rel string
		if v, ok := getAttr(attrs, "rel"); ok {
			rel = normRel(v)
		}
		idx := -1
		if v, ok := getAttr(attrs, "href"); ok {
			idx = s.add(v, Navigation, "a href", rel, level, res)
		} else if v, ok := getAttr(attrs, "xlink:href"); ok {
			idx = s.add(v, Navigation, "a xlink:href", rel, level, res)
		}
		if v, ok := getAttr(attrs, "ping"); ok {
			s.addList(v, Reference, "a ping", level, res)
		}
		if idx >= 0 {
			s.anchor, s.text = idx, s.text[:0]
		}
	case "area":
		var rel string
		if v, ok := getAttr(attrs, "rel"); ok {
			rel = normRel(v)
		}
		if v, ok := getAttr(attrs, "href"); ok {
			if i := s.add(v, Navigation, "area href", rel, level, res); i >= 0 {
				if alt, ok := getAttr(attrs, "alt"); ok {
					s.pend[i].text = collapse(nil, alt)
				}
			}
		}
		if v, ok := getAttr(attrs, "ping"); ok {
			s.addList(v, Reference, "area ping", level, res)
		}
	case "link":
		var rel string
		if v, ok := getAttr(attrs, "rel"); ok {
			rel = normRel(v)
		}
		role := relRole(rel)
		if role == Requisite && !linkLoads(rel, attrs) {
			role = Reference // named, not fetched by a browser
		}
		if v, ok := getAttr(attrs, "href"); ok {
			s.add(v, role, "link href", rel, level, res)
		}
		if v, ok := getAttr(attrs, "imagesrcset"); ok {
			s.srcset(v, Requisite, "link imagesrcset", level, res)
		}
	case "base":
		if s.inert {
			// SVG's or MathML's: no base of the document, and no URL.
			break
		}
		if v, ok := getAttr(attrs, "href"); ok {
			r := res
			if level == 0 && !s.baseSeen {
				s.baseSeen, s.baseRef = true, string(trimSpace(v))
			}
			if r == resolveDoc {
				r = resolvePage // the base is relative to the page, not to itself
			}
			s.add(v, Reference, "base href", "", level, r)
		}
	case "frame", "iframe":
		if v, ok := getAttr(attrs, "src"); ok {
			s.add(v, Navigation, string(name)+" src", "", level, res)
		}
		if v, ok := getAttr(attrs, "longdesc"); ok {
			s.add(v, Navigation, string(name)+" longdesc", "", level, res)
		}
		if v, ok := getAttr(attrs, "srcdoc"); ok && level < maxNest {
			// about:srcdoc documents take their parent's base URL, and
			// are UTF-8, whatever the page's encoding.
			s.srcdoc++
			s.html(v, level+1, res, false)
			s.srcdoc--
		}
	case "enclosure":
		// An RSS item's media (a podcast's audio): named, not part of
		// the feed.
		if v, ok := getAttr(attrs, "url"); ok {
			s.add(v, Reference, "enclosure url", "", level, res)
		}
	case "img", "image":
		// In <svg>, an <image> is SVG's: its href is its one URL (in
		// HTML, the parser makes <image> an <img>).
		svgImage := s.inert && string(name) == "image"
		for _, a := range attrs {
			if svgImage && string(a.key) != "href" && string(a.key) != "xlink:href" {
				continue
			}
			switch string(a.key) {
			case "src":
				s.add(a.val, Requisite, "img src", "", level, res)
			case "srcset":
				s.srcset(a.val, Requisite, "img srcset", level, res)
			case "lowsrc":
				s.add(a.val, Requisite, "img lowsrc", "", level, res)
			case "href":
				s.add(a.val, Requisite, "image href", "", level, res)
			case "xlink:href":
				s.add(a.val, Requisite, "image xlink:href", "", level, res)
			case "longdesc":
				s.add(a.val, Navigation, "img longdesc", "", level, res)
			case "dynsrc":
				s.add(a.val, Reference, "img dynsrc", "", level, res)
			case "vrml":
				s.add(a.val, Reference, "img vrml", "", level, res)
			case "alt":
				if s.anchor >= 0 {
					s.anchorText(a.val, true)
				}
			}
		}
	case "source":
		s.addAttr(attrs, "src", Requisite, "source src", level, res)
		if v, ok := getAttr(attrs, "srcset"); ok {
			s.srcset(v, Requisite, "source srcset", level, res)
		}
	case "script":
		// One a browser runs is a requisite; one it does not (data, a
		// template language's, nomodule) only a reference.
		role := Reference
		if scriptRuns(attrs) {
			role = Requisite
		}
		s.addAttr(attrs, "src", role, "script src", level, res)
		if !s.addAttr(attrs, "href", role, "script href", level, res) {
			s.addAttr(attrs, "xlink:href", role, "script xlink:href", level, res)
		}
	case "use", "feimage":
		if v, ok := getAttr(attrs, "href"); ok {
			s.add(v, Requisite, string(name)+" href", "", level, res)
		} else if v, ok := getAttr(attrs, "xlink:href"); ok {
			s.add(v, Requisite, string(name)+" xlink:href", "", level, res)
		}
	case "video":
		s.addAttr(attrs, "src", Requisite, "video src", level, res)
		s.addAttr(attrs, "poster", Requisite, "video poster", level, res)
	case "audio", "track", "bgsound", "layer", "ilayer":
		if v, ok := getAttr(attrs, "src"); ok {
			s.add(v, Requisite, string(name)+" src", "", level, res)
		}
	case "embed":
		s.addAttr(attrs, "src", Requisite, "embed src", level, res)
		s.addAttr(attrs, "pluginspage", Reference, "embed pluginspage", level, res)
	case "object":
		s.addAttr(attrs, "data", Requisite, "object data", level, res)
		s.addAttr(attrs, "codebase", Reference, "object codebase", level, res)
		s.addAttr(attrs, "classid", Reference, "object classid", level, res)
		if v, ok := getAttr(attrs, "archive"); ok {
			s.addList(v, Reference, "object archive", level, res)
		}
	case "applet":
		s.addAttr(attrs, "code", Reference, "applet code", level, res)
		s.addAttr(attrs, "codebase", Reference, "applet codebase", level, res)
		if v, ok := getAttr(attrs, "archive"); ok {
			// A comma-separated list, unlike object's.
			for r := range bytes.SplitSeq(v, []byte(",")) {
				s.add(r, Reference, "applet archive", "", level, res)
			}
		}
	case "param":
		n, _ := getAttr(attrs, "name")
		if v, ok := getAttr(attrs, "value"); ok && paramIsURL(n, v) {
			s.add(v, Reference, "param value", "", level, res)
		}
	case "form":
		method, _ := getAttr(attrs, "method")
		s.formPost = !isGet(method)
		if v, ok := getAttr(attrs, "action"); ok {
			s.add(v, formRole(s.formPost), "form action", "", level, res)
		}
	case "input", "button":
		if v, ok := getAttr(attrs, "formaction"); ok {
			post := s.formPost
			if m, ok := getAttr(attrs, "formmethod"); ok {
				post = !isGet(m)
			}
			s.add(v, formRole(post), string(name)+" formaction", "", level, res)
		}
		if v, ok := getAttr(attrs, "src"); ok && string(name) == "input" {
			role := Reference
			if t, _ := getAttr(attrs, "type"); NameIs(trimSpace(t), "image") {
				role = Requisite
			}
			s.add(v, role, "input src", "", level, res)
		}
	case "isindex":
		s.addAttr(attrs, "action", Reference, "isindex action", level, res)
	case "blockquote", "q", "ins", "del":
		if v, ok := getAttr(attrs, "cite"); ok {
			s.add(v, Navigation, string(name)+" cite", "", level, res)
		}
	case "html":
		s.addAttr(attrs, "manifest", Requisite, "html manifest", level, res)
	case "head":
		if v, ok := getAttr(attrs, "profile"); ok {
			s.addList(v, Reference, "head profile", level, res)
		}
	case "xml":
		s.addAttr(attrs, "src", Reference, "xml src", level, res)
	case "import":
		// Internet Explorer's <IMPORT namespace implementation>: the
		// behaviour (HTC) file of a namespace's custom elements.
		s.addAttr(attrs, "implementation", Reference, "import implementation", level, res)
	case "meta":
		s.metaTag(attrs, level, res)
	}
}

// metaTag records the references of a <meta>: a refresh, a CSP's
// report-uri, msapplication-config; at the top level it also reads robots
// directives.
func (s *linkScanner) metaTag(attrs []attr, level int, res uint8) {
	content, ok := getAttr(attrs, "content")
	if !ok {
		return
	}
	if v, ok := getAttr(attrs, "http-equiv"); ok {
		// Its keyword as written, in any case: " refresh" is none,
		// as a browser reads it.
		switch {
		case NameIs(v, "refresh"):
			if ref, ok := parseRefresh(content); ok {
				s.add(ref, Navigation, "meta refresh", "", level, res)
			}
		case NameIs(v, "content-security-policy"):
			s.reportURIs(string(content), "meta content-security-policy", level, res)
		}
		return
	}
	v, _ := getAttr(attrs, "name")
	v = trimSpace(v)
	switch {
	case NameIs(v, "robots"):
		if level == 0 {
			RobotsDirectives(content, &s.meta)
		}
	case NameIs(v, "msapplication-config"):
		s.add(content, Reference, "meta msapplication-config", "", level, res)
	case metaMarkup(content):
		// A reading view (Firefox's among them) shows the content of
		// meta elements such as description or copyright as markup.
		if level < maxNest {
			s.html(content, level+1, res, false)
		}
	}
}

// metaMarkup reports whether a meta's content is markup: whether it has a
// tag, a '<' before a letter.
func metaMarkup(content []byte) bool {
	for i := bytes.IndexByte(content, '<'); i >= 0 && i+1 < len(content); {
		if c := content[i+1] | 0x20; 'a' <= c && c <= 'z' {
			return true
		}
		j := bytes.IndexByte(content[i+1:], '<')
		if j < 0 {
			return false
		}
		i += 1 + j
	}
	return false
}

// RobotsDirectives reads a robots meta tag's content, a comma-separated
// list in which "noindex", "nofollow" and "none" (both) count, into m.
func RobotsDirectives(content []byte, m *Meta) {
	for d := range bytes.SplitSeq(content, []byte(",")) {
		d = bytes.TrimSpace(d)
		switch {
		case NameIs(d, "noindex"):
			m.NoIndex = true
		case NameIs(d, "nofollow"):
			m.NoFollow = true
		case NameIs(d, "none"):
			m.NoIndex, m.NoFollow = true, true
		}
	}
}

// addList records each URL of a space-separated list.
func (s *linkScanner) addList(v []byte, role Role, source string, level int, res uint8) {
	for _, ref := range bytes.Fields(v) {
		s.add(ref, role, source, "", level, res)
	}
}

// srcset records the URLs of a srcset attribute.
func (s *linkScanner) srcset(v []byte, role Role, source string, level int, res uint8) {
	forEachSrcset(v, func(ref []byte) {
		s.add(ref, role, source, "", level, res)
	})
}

// anchorText appends t, white space collapsed, to the open anchor's text;
// with sep (an image's alt text), apart from what comes before.
func (s *linkScanner) anchorText(t []byte, sep bool) {
	if len(s.text) > maxLinkText {
		return
	}
	if sep && len(s.text) > 0 && s.text[len(s.text)-1] != ' ' {
		s.text = append(s.text, ' ')
	}
	s.text = appendCollapsed(s.text, t)
}

// closeAnchor ends the open anchor, setting its link's text.
func (s *linkScanner) closeAnchor() {
	if s.anchor < 0 {
		return
	}
	// The text is collapsed already: trim and cut it.
	s.pend[s.anchor].text = cutText(bytes.TrimSpace(s.text))
	s.anchor, s.text = -1, s.text[:0]
}

// collapse returns t with runs of white space made one space, trimmed, cut
// at a character boundary to at most maxLinkText bytes; buf is scratch.
func collapse(buf, t []byte) string {
	return cutText(bytes.TrimSpace(appendCollapsed(buf[:0], t)))
}

// cutText returns t cut at a character boundary to at most maxLinkText
// bytes.
func cutText(t []byte) string {
	if len(t) > maxLinkText {
		n := maxLinkText
		for n > 0 && !utf8.RuneStart(t[n]) {
			n--
		}
		t = bytes.TrimSpace(t[:n])
	}
	return string(t)
}

// appendCollapsed appends t to dst with runs of white space made one space,
// stopping a little past maxLinkText bytes.
func appendCollapsed(dst, t []byte) []byte {
	for _, c := range t {
		if len(dst) > maxLinkText+utf8.UTFMax {
			break
		}
		if isSpace(c) {
			if len(dst) > 0 && dst[len(dst)-1] != ' ' {
				dst = append(dst, ' ')
			}
			continue
		}
		dst = append(dst, c)
	}
	return dst
}

// isSpace reports whether c is ASCII white space as HTML defines it.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'
}

// trimSpace trims ASCII white space (and other C0 controls, as the URL
// standard does) from both ends of b.
func trimSpace(b []byte) []byte {
	for len(b) > 0 && b[0] <= ' ' {
		b = b[1:]
	}
	for len(b) > 0 && b[len(b)-1] <= ' ' {
		b = b[:len(b)-1]
	}
	return b
}

// isGet reports whether a form's method attribute makes it submit by GET:
// "get", absent or invalid. "post" and "dialog" do not.
func isGet(method []byte) bool {
	method = trimSpace(method)
	return !NameIs(method, "post") && !NameIs(method, "dialog")
}

// formRole is the role of a form's action: a GET form is a link to follow
// (without its fields), any other a reference.
func formRole(post bool) Role {
	if post {
		return Reference
	}
	return Navigation
}

// paramIsURL reports whether an object's <param name value> holds a URL:
// its name is one plugins read a URL from, or its value is an absolute or
// scheme-relative http(s) URL, or a path ("/media/clip.wmv") without white
// space.
func paramIsURL(name, value []byte) bool {
	switch strings.ToLower(string(trimSpace(name))) {
	case "movie", "src", "source", "url", "href", "data", "filename", "file", "code", "codebase", "archive", "base":
		return true
	}
	value = trimSpace(value)
	if len(value) > 1 && value[0] == '/' && value[1] != '/' {
		return isAlnum(value[1]) && !bytes.ContainsAny(value, " \t\n\f\r")
	}
	return len(value) > 2 && string(value[:2]) == "//" ||
		len(value) > 5 && NameIs(value[:5], "http:") ||
		len(value) > 6 && NameIs(value[:6], "https:")
}

// normRel returns a rel value lower case, its tokens separated by one
// space.
func normRel(v []byte) string {
	clean := true
	prev := byte(' ')
	for _, c := range v {
		if 'A' <= c && c <= 'Z' || isSpace(c) && (c != ' ' || prev == ' ') {
			clean = false
			break
		}
		prev = c
	}
	if clean && prev != ' ' {
		return string(v)
	}
	return strings.ToLower(strings.Join(strings.Fields(string(v)), " "))
}

// relRole is the role of a link whose relation types are rel (normalised):
// a resource of the page is a requisite, a connection hint or pingback
// endpoint a reference, any other relation (next, alternate, canonical,
// author, ...) a document to navigate to.
func relRole(rel string) Role {
	role := Navigation
	for tok := range strings.FieldsSeq(rel) {
		switch tok {
		case "stylesheet", "icon", "apple-touch-icon", "apple-touch-icon-precomposed",
			"apple-touch-startup-image", "mask-icon", "manifest", "preload",
			"modulepreload", "prefetch", "fluid-icon":
			return Requisite
		case "dns-prefetch", "preconnect", "pingback":
			role = Reference
		}
	}
	return role
}

// linkLoads reports whether a browser fetches what a <link> of a
// requisite's rel names: not a stylesheet that is disabled or of a type
// that is not CSS, nor a preload without a destination it knows ("as").
func linkLoads(rel string, attrs []attr) bool {
	for tok := range strings.FieldsSeq(rel) {
		switch tok {
		case "stylesheet":
			if _, ok := getAttr(attrs, "disabled"); ok {
				return false
			}
			v, _ := getAttr(attrs, "type")
			if t := typeEssence(v); t != "" && t != "text/css" {
				return false
			}
		case "preload":
			v, _ := getAttr(attrs, "as")
			switch string(bytes.ToLower(trimSpace(v))) {
			case "audio", "document", "embed", "fetch", "font", "image", "object",
				"script", "style", "track", "video", "worker":
			default:
				return false
			}
		}
	}
	return true
}

// forEachSrcset calls fn with the URL of each image candidate of a srcset
// value, split as the HTML standard's "parse a srcset attribute" does: a
// candidate's URL runs to the next white space, loses trailing commas (and
// then has no descriptors), and its descriptors run to the next comma
// outside parentheses. Descriptors are not validated: the page names the
// URL whatever they say.
func forEachSrcset(v []byte, fn func(ref []byte)) {
	i := 0
	for {
		for i < len(v) && (isSpace(v[i]) || v[i] == ',') {
			i++
		}
		if i >= len(v) {
			return
		}
		start := i
		for i < len(v) && !isSpace(v[i]) {
			i++
		}
		u := v[start:i]
		if u[len(u)-1] == ',' {
			fn(bytes.TrimRight(u, ","))
			continue
		}
		fn(u)
		parens := false
	descriptors:
		for ; i < len(v); i++ {
			switch c := v[i]; {
			case parens:
				parens = c != ')'
			case c == '(':
				parens = true
			case c == ',':
				i++
				break descriptors
			}
		}
	}
}

// parseRefresh returns the URL of a Refresh header or meta refresh content
// ("5; url=/x", "0;URL='x'", "3 ; url = x"), parsed as the HTML
// standard's shared declarative refresh steps do; ok is false when it names
// no URL (a refresh of the page itself) or does not parse.
func parseRefresh(v []byte) (ref []byte, ok bool) {
	i := 0
	skip := func() {
		for i < len(v) && isSpace(v[i]) {
			i++
		}
	}
	skip()
	digits := i
	for i < len(v) && '0' <= v[i] && v[i] <= '9' {
		i++
	}
	if i == digits && (i >= len(v) || v[i] != '.') {
		return nil, false
	}
	for i < len(v) && ('0' <= v[i] && v[i] <= '9' || v[i] == '.') {
		i++
	}
	if i >= len(v) {
		return nil, false
	}
	if c := v[i]; c != ';' && c != ',' && !isSpace(c) {
		return nil, false
	}
	skip()
	if i < len(v) && (v[i] == ';' || v[i] == ',') {
		i++
	}
	skip()
	if i >= len(v) {
		return nil, false
	}
	rest := v[i:]
	// "url" "=" is optional: a prefix that is not it is part of the URL.
	if len(v)-i >= 3 && NameIs(v[i:i+3], "url") {
		j := i + 3
		for j < len(v) && isSpace(v[j]) {
			j++
		}
		if j < len(v) && v[j] == '=' {
			i = j + 1
			skip()
			rest = v[i:]
		}
	}
	if len(rest) > 0 && (rest[0] == '"' || rest[0] == '\'') {
		q := rest[0]
		rest = rest[1:]
		if k := bytes.IndexByte(rest, q); k >= 0 {
			rest = rest[:k]
		}
	}
	rest = trimSpace(rest)
	return rest, len(rest) > 0
}

// parseLinkHeader calls fn with the target and rel parameter of each link
// of a Link header field value, parsed as RFC 8288 section 3 says: links
// separated by commas, parameters by semicolons, values tokens or quoted
// strings, only the first rel parameter of a link counting.
func parseLinkHeader(v string, fn func(ref, rel string)) {
	i := 0
	for i < len(v) {
		for i < len(v) && (isSpace(v[i]) || v[i] == ',') {
			i++
		}
		if i >= len(v) {
			return
		}
		if v[i] != '<' {
			i = skipLinkValue(v, i) // not a link: skip it
			continue
		}
		end := strings.IndexByte(v[i+1:], '>')
		if end < 0 {
			return
		}
		ref := v[i+1 : i+1+end]
		i += end + 2
		rel, relSeen := "", false
		for i < len(v) && v[i] != ',' {
			if v[i] != ';' {
				i++
				continue
			}
			i++
			for i < len(v) && isSpace(v[i]) {
				i++
			}
			n := i
			for i < len(v) && !isSpace(v[i]) && !strings.ContainsRune("=;,", rune(v[i])) {
				i++
			}
			name := v[n:i]
			for i < len(v) && isSpace(v[i]) {
				i++
			}
			var val string
			if i < len(v) && v[i] == '=' {
				i++
				for i < len(v) && isSpace(v[i]) {
					i++
				}
				val, i = linkParamValue(v, i)
			}
			if !relSeen && strings.EqualFold(name, "rel") {
				rel, relSeen = val, true
			}
		}
		fn(ref, rel)
	}
}

// linkParamValue reads a parameter value at v[i:], a token or a quoted
// string, and returns it unquoted with the index past it.
func linkParamValue(v string, i int) (string, int) {
	if i < len(v) && v[i] == '"' {
		var b strings.Builder
		for i++; i < len(v); i++ {
			switch c := v[i]; c {
			case '"':
				return b.String(), i + 1
			case '\\':
				if i+1 < len(v) {
					i++
					b.WriteByte(v[i])
				}
			default:
				b.WriteByte(c)
			}
		}
		return b.String(), i
	}
	n := i
	for i < len(v) && v[i] != ';' && v[i] != ',' && !isSpace(v[i]) {
		i++
	}
	return v[n:i], i
}

// skipLinkValue returns the index of the comma that ends the link value at
// v[i:], outside quoted strings and angle brackets, or len(v).
func skipLinkValue(v string, i int) int {
	quoted := false
	for ; i < len(v); i++ {
		switch c := v[i]; {
		case quoted && c == '\\':
			i++
		case c == '"':
			quoted = !quoted
		case !quoted && c == ',':
			return i
		}
	}
	return i
}

// conditionalComment returns the markup inside an IE conditional comment
// ("[if IE]> ... <![endif]", the text of <!--[if IE]> ... <![endif]-->).
func conditionalComment(c []byte) ([]byte, bool) {
	c = trimSpace(c)
	if len(c) < 4 || c[0] != '[' || !NameIs(c[1:3], "if") {
		return nil, false
	}
	i := bytes.Index(c, []byte("]>"))
	if i < 0 {
		return nil, false
	}
	c = c[i+2:]
	if j := bytes.LastIndex(c, []byte("<![")); j >= 0 {
		c = c[:j]
	}
	return c, len(c) > 0
}

// doctypeSystemID returns the system identifier of a DOCTYPE (the text of
// <!DOCTYPE ...>), or nil if it has none.
func doctypeSystemID(d []byte) []byte {
	// Skip the name, then the keyword says how many quoted strings follow.
	i := 0
	for i < len(d) && !isSpace(d[i]) {
		i++
	}
	for i < len(d) && isSpace(d[i]) {
		i++
	}
	var n int
	switch {
	case len(d)-i >= 6 && NameIs(d[i:i+6], "public"):
		n = 2
	case len(d)-i >= 6 && NameIs(d[i:i+6], "system"):
		n = 1
	default:
		return nil
	}
	i += 6
	var id []byte
	for range n {
		for i < len(d) && d[i] != '"' && d[i] != '\'' {
			i++
		}
		if i >= len(d) {
			return nil
		}
		q := d[i]
		end := bytes.IndexByte(d[i+1:], q)
		if end < 0 {
			return nil
		}
		id = d[i+1 : i+1+end]
		i += end + 2
	}
	return id
}

// dataURI scans the decoded content of a data: URI (what follows "data:")
// found at nesting level, if it is HTML, SVG or CSS and small enough. Its
// relative references resolve as res says: for a requisite, as those of
// the document that holds it (a browser resolves none, as a data: document
// has no base, but a page that embeds one names a URL of its own site);
// for a document the page leads to, not at all.
func (s *linkScanner) dataURI(v []byte, level int, res uint8) {
	if level >= maxNest {
		return
	}
	comma := bytes.IndexByte(v, ',')
	if comma < 0 || len(v)-comma > 4*maxDataURI {
		return
	}
	params, payload := v[:comma], v[comma+1:]
	mt := params
	if i := bytes.IndexByte(mt, ';'); i >= 0 {
		mt = mt[:i]
	}
	mt = trimSpace(mt)
	kind, xml := 0, false
	switch {
	case NameIs(mt, "text/html"):
		kind = 1
	case NameIs(mt, "application/xhtml+xml"), NameIs(mt, "image/svg+xml"):
		kind, xml = 1, true
	case NameIs(mt, "text/css"):
		kind = 2
	default:
		return
	}
	var data []byte
	if p := trimSpace(params); len(p) >= 7 && NameIs(p[len(p)-7:], ";base64") {
		clean := make([]byte, 0, len(payload))
		for _, c := range payload {
			if c == '%' || !isSpace(c) {
				clean = append(clean, c)
			}
		}
		clean = urlstd.PercentDecode(clean)
		clean = bytes.TrimRight(clean, "=")
		var err error
		data, err = base64.RawStdEncoding.AppendDecode(nil, clean)
		if err != nil {
			return
		}
	} else {
		data = urlstd.PercentDecode(append([]byte(nil), payload...))
	}
	if len(data) > maxDataURI {
		return
	}
	if kind == 1 {
		s.html(data, level+1, res, xml)
	} else {
		s.css(data, "css url", "css @import", level+1, res)
	}
}

// css records the URLs of a style sheet or style attribute: url()
// references (image, font, cursor, @font-face src) with source srcURL, and
// @import targets, as a string or url(), with srcImport. It reads CSS as
// its tokenizer does in the respects that matter here (comments, strings,
// escapes) and parses nothing else.
func (s *linkScanner) css(b []byte, srcURL, srcImport string, level int, res uint8) {
	imp := false   // inside an @import rule, before its URL
	rules := false // a rule with a block came: an @import now is invalid
	// Inside image-set() (or -webkit-image-set()), the depth of its
	// parentheses: a string at depth 1 is an image's URL, one deeper
	// (type("image/png")) is not.
	set := 0
	for i := 0; i < len(b); {
		c := b[i]
		if set > 0 {
			switch c {
			case '(':
				set++
			case ')':
				set--
			}
		}
		switch {
		case c == '/' && i+1 < len(b) && b[i+1] == '*':
			end := bytes.Index(b[i+2:], []byte("*/"))
			if end < 0 {
				return
			}
			i += end + 4
		case c == '"' || c == '\'':
			str, n := cssString(b, i)
			switch {
			case imp:
				s.add(str, Requisite, srcImport, "", level, res)
				imp = false
			case set == 1:
				s.add(str, Requisite, srcURL, "", level, res)
			}
			i = n
		case set == 0 && (c|0x20 == 'i' || c == '-') && (i == 0 || !cssNameByte(b[i-1])):
			if n := imageSet(b[i:]); n > 0 {
				i += n
				set = 1
			} else {
				i++
			}
		case c == '\\':
			i += 2
		case c|0x20 == 'u' && i+4 <= len(b) && NameIs(b[i:i+3], "url") && b[i+3] == '(' &&
			(i == 0 || !cssNameByte(b[i-1])):
			ref, n := cssURL(b, i+4)
			src := srcURL
			if imp {
				src, imp = srcImport, false
			}
			if ref != nil {
				s.add(ref, Requisite, src, "", level, res)
			}
			i = n
		case c == '@' && i+7 <= len(b) && NameIs(b[i+1:i+7], "import") &&
			(i+7 == len(b) || !cssNameByte(b[i+7])):
			// After a rule, an @import is invalid: a browser ignores it.
			imp = !rules
			i += 7
		case c == ';' || c == '{' || c == '}':
			imp = false
			rules = rules || c == '{'
			i++
		default:
			i++
		}
	}
}

// scriptRuns reports whether a browser runs the script element of attrs:
// its type is none, "module" or a JavaScript MIME type (the HTML
// standard's list, parameters aside), and it is not nomodule, which a
// browser that runs modules skips.
func scriptRuns(attrs []attr) bool {
	if _, ok := getAttr(attrs, "nomodule"); ok {
		return false
	}
	v, _ := getAttr(attrs, "type")
	return scriptType(typeEssence(v))
}

// imageSet returns the length of "image-set(" or "-webkit-image-set(",
// in any case, at the start of b, or 0.
func imageSet(b []byte) int {
	for _, f := range []string{"image-set(", "-webkit-image-set("} {
		if len(b) >= len(f) && NameIs(b[:len(f)-1], f[:len(f)-1]) && b[len(f)-1] == '(' {
			return len(f)
		}
	}
	return 0
}

// cssNameByte reports whether c may be part of a CSS identifier.
func cssNameByte(c byte) bool {
	return c == '-' || c == '_' || c >= 0x80 || '0' <= c && c <= '9' || 'a' <= c|0x20 && c|0x20 <= 'z'
}

// cssString reads the CSS string whose quote is at b[i] and returns its
// value, escapes resolved, with the index past it.
func cssString(b []byte, i int) ([]byte, int) {
	q := b[i]
	i++
	start := i
	escaped := false
	for i < len(b) && b[i] != q && b[i] != '\n' {
		if b[i] == '\\' {
			escaped = true
			i = skipEscape(b, i)
			continue
		}
		i++
	}
	end := min(i, len(b))
	str := b[start:end]
	if escaped {
		str = cssUnescape(str)
	}
	if i < len(b) && b[i] == q {
		i++
	}
	return str, i
}

// cssURL reads the argument of a url( whose parenthesis ends before b[i]
// and returns it, escapes resolved, with the index past the closing
// parenthesis; nil if it has no argument, or is no URL to CSS (white space
// inside an unquoted one, "url(a b)", or anything after its string: a
// bad URL, which a browser ignores).
func cssURL(b []byte, i int) ([]byte, int) {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	var ref []byte
	if i < len(b) && (b[i] == '"' || b[i] == '\'') {
		ref, i = cssString(b, i)
	} else {
		start := i
		escaped := false
		for i < len(b) && b[i] != ')' && !isSpace(b[i]) {
			if b[i] == '\\' {
				escaped = true
				i = skipEscape(b, i)
				continue
			}
			i++
		}
		ref = b[start:min(i, len(b))]
		if escaped {
			ref = cssUnescape(ref)
		}
	}
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	if i < len(b) && b[i] != ')' {
		ref = nil // a bad URL: read on to its end
	}
	for i < len(b) && b[i] != ')' {
		i++
	}
	return ref, i + 1
}

// skipEscape returns the index past the CSS escape whose backslash is at
// b[i]: one to six hex digits and a white space after them, or one
// character.
func skipEscape(b []byte, i int) int {
	i++
	if i >= len(b) || !urlstd.IsHex(b[i]) {
		return min(i+1, len(b))
	}
	j := i
	for j < len(b) && j < i+6 && urlstd.IsHex(b[j]) {
		j++
	}
	if j < len(b) && isSpace(b[j]) {
		j++
	}
	return j
}

// cssUnescape resolves the CSS escapes in s into a new slice: a backslash
// and one to six hex digits (and a white space after them) is that code
// point, a backslash and a newline nothing, a backslash and any other
// character that character.
func cssUnescape(s []byte) []byte {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 >= len(s) {
			out = append(out, s[i])
			continue
		}
		i++
		if !urlstd.IsHex(s[i]) {
			if s[i] != '\n' {
				out = append(out, s[i])
			}
			continue
		}
		r := rune(0)
		j := i
		for j < len(s) && j < i+6 && urlstd.IsHex(s[j]) {
			r = r<<4 | rune(urlstd.Unhex(s[j]))
			j++
		}
		if r == 0 || r > utf8.MaxRune || 0xD800 <= r && r <= 0xDFFF {
			r = utf8.RuneError
		}
		out = utf8.AppendRune(out, r)
		if j < len(s) && isSpace(s[j]) {
			j++
		}
		i = j - 1
	}
	return out
}

// Bounds on speculative discovery.
const (
	maxSpecCandidates = 4096    // URLs guessed in one response
	maxSpecLen        = 2 << 10 // bytes of a string that may be a URL
)

// IsJavaScript reports whether a media type (lower case, no parameters) is
// JavaScript: one of the HTML standard's JavaScript MIME types.
func IsJavaScript(mt string) bool {
	switch mt {
	case "application/javascript", "text/javascript", "application/x-javascript",
		"application/ecmascript", "text/ecmascript", "application/x-ecmascript",
		"text/x-javascript", "text/x-ecmascript", "text/jscript", "text/livescript",
		"text/javascript1.0", "text/javascript1.1", "text/javascript1.2",
		"text/javascript1.3", "text/javascript1.4", "text/javascript1.5":
		return true
	}
	return false
}

// typeEssence returns the media type an HTML type attribute's value v
// names: lower case, without white space or parameters.
func typeEssence(v []byte) string {
	t := trimSpace(v)
	if i := bytes.IndexByte(t, ';'); i >= 0 {
		t = trimSpace(t[:i])
	}
	return string(bytes.ToLower(t))
}

// scriptType reports whether a browser runs a script of type t (see
// typeEssence): none, a module or JavaScript; not data (JSON-LD) nor a
// template language's.
func scriptType(t string) bool {
	return t == "" || t == "module" || IsJavaScript(t)
}

// script guesses the URLs of a script, inline or fetched: its string
// literals that look like URLs (see specRole).
func (s *linkScanner) script(b []byte, level int, res uint8) {
	s.speculate(b, true, "script speculative", level, res)
}

// otherAttrs guesses the URLs in the attributes of a start tag that
// element does not read as URLs: data-*, event handlers, value, the
// content of a meta that is not a refresh, ...
func (s *linkScanner) otherAttrs(name []byte, attrs []attr, level int, res uint8) {
	for _, a := range attrs {
		switch string(a.key) {
		case "href", "src", "srcset", "lowsrc", "longdesc", "dynsrc", "vrml",
			"xlink:href", "imagesrcset", "action", "formaction", "cite",
			"background", "datasrc", "poster", "codebase", "classid", "archive",
			"pluginspage", "manifest", "profile", "ping", "style", "srcdoc", "implementation":
			continue // element reads them, or they are not URLs (style, srcdoc)
		case "data":
			if string(name) == "object" {
				continue
			}
		case "code":
			if string(name) == "applet" {
				continue
			}
		case "value":
			if n, _ := getAttr(attrs, "name"); string(name) == "param" && paramIsURL(n, a.val) {
				continue
			}
		case "content":
			if string(name) == "meta" && metaNamesURL(attrs, a.val) {
				continue
			}
		}
		s.speculate(a.val, false, "attribute speculative", level, res)
	}
}

// metaNamesURL reports whether a meta's content is read by metaTag: that
// of a refresh, a Content-Security-Policy or msapplication-config, or
// markup (see metaMarkup), whose text and attributes are guessed from as
// a page's are.
func metaNamesURL(attrs []attr, content []byte) bool {
	if v, ok := getAttr(attrs, "http-equiv"); ok {
		v = trimSpace(v)
		return NameIs(v, "refresh") || NameIs(v, "content-security-policy")
	}
	v, _ := getAttr(attrs, "name")
	v = trimSpace(v)
	return NameIs(v, "msapplication-config") || !NameIs(v, "robots") && metaMarkup(content)
}

// speculate records, as speculative links with source, the strings of b
// that look like URLs (see specRole). In a script (quoted), those are its
// string literals, comments skipped; in text or an attribute value, its
// words, split at white space, quotes, brackets, commas and semicolons,
// and trailing punctuation dropped. It stops after maxSpecCandidates
// links in all.
func (s *linkScanner) speculate(b []byte, quoted bool, source string, level int, res uint8) {
	for i := 0; i < len(b) && s.specN < maxSpecCandidates; {
		c := b[i]
		if !quoted {
			if specDelim(c) {
				i++
				continue
			}
			j := i
			for j < len(b) && !specDelim(b[j]) {
				j++
			}
			s.guess(bytes.TrimRight(b[i:j], ".:!?"), source, level, res)
			i = j
			continue
		}
		switch {
		case c == '/' && i+1 < len(b) && b[i+1] == '/':
			end := bytes.IndexByte(b[i:], '\n')
			if end < 0 {
				return
			}
			i += end + 1
		case c == '/' && i+1 < len(b) && b[i+1] == '*':
			end := bytes.Index(b[i+2:], []byte("*/"))
			if end < 0 {
				return
			}
			i += end + 4
		case c == '"' || c == '\'' || c == '`':
			j, escaped := i+1, false
			for j < len(b) && b[j] != c && (c == '`' || b[j] != '\n') {
				if b[j] == '\\' {
					escaped = true
					j++
				}
				j++
			}
			j = min(j, len(b))
			str := b[i+1 : j]
			if escaped && len(str) <= maxSpecLen {
				// JSON writes "\/"; any other escape makes it no URL.
				str = bytes.ReplaceAll(str, []byte(`\/`), []byte("/"))
			}
			s.guess(str, source, level, res)
			i = j + 1
		default:
			i++
		}
	}
}

// specDelim reports whether c ends a word of text that may be a URL.
func specDelim(c byte) bool {
	switch c {
	case '"', '\'', '`', '(', ')', '<', '>', '[', ']', '{', '}', ',', ';':
		return true
	}
	return c <= ' '
}

// guess records c as a speculative link if it looks like a URL. A
// relative path starting "./" or "../" is guessed twice: against the
// document, as a browser would resolve it, and against the site's root,
// since text and scripts often write paths relative to an application's
// root, whatever page shows them.
func (s *linkScanner) guess(c []byte, source string, level int, res uint8) {
	if len(c) < 2 || len(c) > maxSpecLen {
		return
	}
	role, ok := specRole(c)
	if !ok {
		return
	}
	s.specN++
	s.specPend = append(s.specPend, pendingLink{ref: string(c), role: role, res: res, source: source, spec: true})
	if c[0] == '.' {
		root := c
		for {
			if len(root) > 2 && string(root[:2]) == "./" {
				root = root[2:]
			} else if len(root) > 3 && string(root[:3]) == "../" {
				root = root[3:]
			} else {
				break
			}
		}
		if len(root) > 0 && root[0] != '/' && root[0] != '.' {
			s.specPend = append(s.specPend, pendingLink{ref: "/" + string(root), role: role, res: res, source: source, spec: true, alt: true})
		}
	}
}

// guessUnderBase adds to the guessed links, for a document whose <base
// href> has a path other than "/", each guessed path ("/x.pdf") again
// below the base's path ("/app/x.pdf" for a base of "/app" or "/app/"), as
// a script or template that joins the two strings would build it.
func (s *linkScanner) guessUnderBase(base *url.URL) {
	dir := strings.TrimSuffix(base.EscapedPath(), "/")
	if dir == "" || !s.spec {
		return
	}
	for i, n := 0, len(s.specPend); i < n; i++ {
		pl := s.specPend[i]
		if pl.res != resolveDoc || len(pl.ref) < 2 || pl.ref[0] != '/' || pl.ref[1] == '/' {
			continue
		}
		pl.ref = dir + pl.ref
		s.specPend = append(s.specPend, pl)
	}
}

// specRole reports whether c looks like a URL, and what it would be to a
// page: c has no white space, control characters, quotes, backslashes or
// braces, and is an absolute http(s) URL, a scheme-relative one whose
// host has a dot, a path ("/x", not "/" or "//"), a relative path
// starting "./" or "../", or a relative reference ending in a known
// file extension ("img/a.png"). A page (.html, .htm, .php, .asp, .aspx,
// .jsp, or no extension) is Navigation, a script, stylesheet or image
// Requisite, anything else (.json, .xml, .pdf, .txt, ...) Reference.
func specRole(c []byte) (Role, bool) {
	if len(c) < 2 {
		return 0, false
	}
	for _, ch := range c {
		if ch <= ' ' || ch == 0x7f {
			return 0, false
		}
		switch ch {
		case '"', '\'', '<', '>', '\\', '^', '`', '{', '}', '|':
			return 0, false
		}
	}
	path := c // where the path starts
	known := true
	switch {
	case len(c) > 7 && NameIs(c[:7], "http://") || len(c) > 8 && NameIs(c[:8], "https://"):
		rest := c[bytes.IndexByte(c, '/')+2:]
		if !isAlnum(rest[0]) {
			return 0, false
		}
		path = rest[specHostEnd(rest):]
	case c[0] == '/' && c[1] == '/':
		rest := c[2:]
		host := rest[:specHostEnd(rest)]
		if len(host) == 0 || !isAlnum(host[0]) || bytes.IndexByte(host, '.') < 0 {
			return 0, false
		}
		path = rest[len(host):]
	case c[0] == '/':
		if !isAlnum(c[1]) && !strings.ContainsRune("-_.~%@", rune(c[1])) {
			return 0, false
		}
	case len(c) > 2 && c[0] == '.' && c[1] == '/', len(c) > 3 && string(c[:3]) == "../":
	default:
		known = false // only an extension makes it a URL
		if !isAlnum(c[0]) && c[0] != '_' {
			return 0, false
		}
	}
	if i := bytes.IndexAny(path, "?#"); i >= 0 {
		path = path[:i]
	}
	ext := ""
	if seg := path[bytes.LastIndexByte(path, '/')+1:]; len(seg) > 0 {
		if dot := bytes.LastIndexByte(seg, '.'); dot > 0 {
			ext = strings.ToLower(string(seg[dot+1:]))
		} else if dot == 0 && !known {
			return 0, false // ".png" alone
		}
	}
	switch ext {
	case "":
		return Navigation, known
	case "html", "htm", "php", "asp", "aspx", "jsp":
		return Navigation, true
	case "js", "css", "png", "jpg", "jpeg", "gif", "svg", "webp":
		return Requisite, true
	case "json", "xml", "pdf", "txt":
		return Reference, true
	}
	return Reference, known
}

// specHostEnd returns the index in rest, what follows "//", where its host
// (and port) end.
func specHostEnd(rest []byte) int {
	if i := bytes.IndexAny(rest, "/?#"); i >= 0 {
		return i
	}
	return len(rest)
}

// isAlnum reports whether c is an ASCII letter or digit.
func isAlnum(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c|0x20 && c|0x20 <= 'z'
}

// NameIs reports whether b, a tag or attribute name, equals the lower-case
// ASCII word s, ignoring case.
func NameIs(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range len(b) {
		if b[i]|0x20 != s[i] {
			return false
		}
	}
	return true
}
