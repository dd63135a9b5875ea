package extract

import "github.com/asyncrawl/crawl/internal/htmltok"

// Tree follows, tag by tag, the two things of an HTML document's tree that
// a link scanner needs and its tokens do not say: which elements the HTML
// parser makes SVG's or MathML's (foreign content, whose <base> sets no
// base URL and whose <script/> has no content), and which lie in a
// <template>'s content (inert: nothing of it is fetched). It keeps the
// parser's rules for them (the HTML Standard's, as golang.org/x/net/html
// has them, and the Standard's for the end tags </p> and </br>): a foreign
// element is closed by its own end tag, nested ones included; an HTML
// start tag such as <p>, <div> or <img>, and an end tag </p> or </br>,
// break out of foreign content; an HTML integration point (SVG's
// foreignObject, desc and title, MathML's annotation-xml of an HTML
// encoding) and a MathML text integration point (mi, mo, mn, ms, mtext)
// hold HTML again, whose elements it tracks there; a <template> in
// foreign content is foreign, not HTML's; an HTML </template> closes the
// foreign content opened in it. Outside foreign content it tracks no
// element (no DOM: it costs a scan nothing there): an end tag in foreign
// content that matches none of it is taken to close an HTML element the
// foreign content is in (</a> around an unclosed <svg>) unless its name is
// SVG's or MathML's (see foreignName), where the parser would ignore one
// that closes nothing. Its work is bounded: it tracks at most maxTree elements (the
// deepest go untracked). The zero Tree is a document's start.
type Tree struct {
	open []treeElement
	// outer counts the <template>s open outside what open holds; root is
	// what it was when open's first element opened.
	outer, root int
	inner       int // the templates among open
}

// maxTree bounds the elements a Tree tracks, and so the work of each tag.
const maxTree = 64

// treeElement is an element open in foreign content, or an HTML one in an
// integration point.
type treeElement struct {
	key  uint64 // its name (see tagKey)
	kind uint8  // svgElement, mathElement or htmlElement
	ip   bool   // an HTML integration point: its start tags and text are HTML
	text bool   // a MathML text integration point
}

const (
	htmlElement = iota
	svgElement
	mathElement
)

// Reset makes t a document's start again.
func (t *Tree) Reset() {
	t.open = t.open[:0]
	t.outer, t.root, t.inner = 0, 0, 0
}

// NeedsAttrs reports whether Start needs the attributes of a start tag of
// lower-case name to know where it goes (<font color>, <annotation-xml
// encoding>).
func NeedsAttrs(name []byte) bool {
	return string(name) == "font" || string(name) == "annotation-xml"
}

// InTemplate reports whether what comes next lies in a <template>'s
// content.
func (t *Tree) InTemplate() bool { return t.outer+t.inner > 0 }

// Start takes a start tag of lower-case name (selfClosing: "<.../>"), with
// attr, which returns the value of one of its attributes, if NeedsAttrs
// asks for them (nil otherwise), and reports whether the parser makes it
// an SVG or MathML element, and whether it lies in a <template>'s content.
// On z, the document's tokenizer, it turns raw text off after a foreign
// element, as the parser does (an SVG <style> or <title> holds markup).
func (t *Tree) Start(z *htmltok.Tokenizer, name []byte, selfClosing bool, attr func(string) ([]byte, bool)) (foreign, inert bool) {
	if len(t.open) == 0 && !Treed(name) {
		return false, t.outer > 0 // the usual tag: nothing to track
	}
	if t.inForeign(name) {
		if breaksOut(name, attr) {
			t.popForeign()
		} else {
			if !selfClosing {
				e := treeElement{key: tagKey(name), kind: t.open[len(t.open)-1].kind}
				if e.kind == mathElement {
					switch string(name) {
					case "mi", "mo", "mn", "ms", "mtext":
						e.text = true
					case "annotation-xml":
						e.ip = htmlEncoding(attr)
					}
				} else {
					switch string(name) {
					case "foreignobject", "desc", "title":
						e.ip = true
					}
				}
				t.push(e)
			}
			z.NextIsNotRawText()
			return true, t.InTemplate()
		}
	}
	switch string(name) {
	case "svg", "math":
		if !selfClosing {
			if len(t.open) == 0 {
				t.root = t.outer
			}
			kind := uint8(svgElement)
			if string(name) == "math" {
				kind = mathElement
			}
			t.push(treeElement{key: tagKey(name), kind: kind})
		}
		return true, t.InTemplate()
	case "template":
		if len(t.open) == 0 {
			t.outer++
		} else if t.push(treeElement{key: templateKey, kind: htmlElement}) {
			t.inner++
		}
		return false, true
	}
	if len(t.open) > 0 && !voidElement(name) {
		// An HTML element in an integration point ("/>" closes none but
		// a void one).
		t.push(treeElement{key: tagKey(name), kind: htmlElement})
	}
	return false, t.InTemplate()
}

// Quiet reports whether t is outside foreign content and templates: a
// start or end tag whose name Treed refuses changes nothing then.
func (t *Tree) Quiet() bool { return len(t.open) == 0 && t.outer == 0 }

// Treed reports whether a tag name, in any case, is one a Tree that is
// Quiet takes note of.
func Treed(name []byte) bool {
	switch len(name) {
	case 3:
		return NameIs(name, "svg")
	case 4:
		return NameIs(name, "math")
	case 8:
		return NameIs(name, "template")
	}
	return false
}

// End takes an end tag of lower-case name.
func (t *Tree) End(name []byte) {
	if len(t.open) == 0 {
		if t.outer > 0 && string(name) == "template" {
			t.outer--
		}
		return
	}
	key := tagKey(name)
	if n := len(t.open); n > 0 && t.open[n-1].kind != htmlElement {
		if string(name) == "p" || string(name) == "br" {
			t.popForeign()
		} else {
			// It closes the foreign element of its name, up to the
			// outermost of the foreign elements open together.
			for i := n - 1; i >= 0; i-- {
				if t.open[i].key == key {
					t.truncate(i)
					return
				}
				if i > 0 && t.open[i-1].kind == htmlElement {
					break
				}
			}
		}
	}
	// Else it is HTML's: it closes the HTML element of its name open in
	// the integration point it is in, and is ignored if there is none.
	for i := len(t.open) - 1; i >= 0; i-- {
		e := t.open[i]
		if e.kind == htmlElement && e.key == key {
			t.truncate(i)
			return
		}
		if e.ip || e.text {
			return
		}
	}
	switch {
	case key == templateKey:
		if t.outer > 0 {
			t.outer--
			if len(t.open) > 0 && t.outer < t.root {
				t.truncate(0)
			}
		}
	case len(t.open) > 0 && !foreignName(name):
		// An HTML element the foreign content is in.
		t.truncate(0)
	}
}

// foreignName reports whether a lower-case name is that of an SVG or
// MathML element, but a: an end tag of such a name that closes no foreign
// element is taken as one the parser ignores, where one of another name
// (</a>, </div>, </button>, ...) is taken to close an HTML element the
// foreign content is in.
func foreignName(name []byte) bool {
	switch string(name) {
	case "title", "script", "style", "font", "image":
		return true
	}
	return foreignOnly(name)
}

// push opens e, and reports whether it could: at most maxTree are open.
func (t *Tree) push(e treeElement) bool {
	if len(t.open) >= maxTree {
		return false
	}
	t.open = append(t.open, e)
	return true
}

// truncate closes the elements open from the i-th on.
func (t *Tree) truncate(i int) {
	for _, e := range t.open[i:] {
		if e.kind == htmlElement && e.key == templateKey {
			t.inner--
		}
	}
	t.open = t.open[:i]
}

// inForeign reports whether a start tag of name, coming now, is read by
// the rules of foreign content.
func (t *Tree) inForeign(name []byte) bool {
	if len(t.open) == 0 {
		return false
	}
	top := t.open[len(t.open)-1]
	switch {
	case top.kind == htmlElement:
		return false
	case top.text && string(name) != "mglyph" && string(name) != "malignmark":
		return false
	case top.kind == mathElement && top.key == annotationXMLKey && string(name) == "svg":
		return false
	case top.ip:
		return false
	}
	return true
}

// popForeign closes the foreign elements open down to an HTML element or
// an integration point, or all of them.
func (t *Tree) popForeign() {
	i := len(t.open)
	for i > 0 {
		top := t.open[i-1]
		if top.kind == htmlElement || top.ip || top.text {
			break
		}
		i--
	}
	t.truncate(i)
}

var (
	templateKey      = tagKey([]byte("template"))
	annotationXMLKey = tagKey([]byte("annotation-xml"))
)

// tagKey returns a number for a lower-case tag name: the name's bytes, up
// to 8 of them, or a hash of a longer name with the top bit set.
func tagKey(name []byte) uint64 {
	if len(name) <= 8 {
		var k uint64
		for _, c := range name {
			k = k<<8 | uint64(c)
		}
		return k
	}
	h := uint64(14695981039346656037) // FNV-1a
	for _, c := range name {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h | 1<<63
}

// breaksOut reports whether a start tag of name (attr: its attributes)
// leaves foreign content: the HTML Standard's list, and <font> with color,
// face or size.
func breaksOut(name []byte, attr func(string) ([]byte, bool)) bool {
	switch string(name) {
	case "b", "big", "blockquote", "body", "br", "center", "code", "dd", "div", "dl", "dt",
		"em", "embed", "h1", "h2", "h3", "h4", "h5", "h6", "head", "hr", "i", "img", "li",
		"listing", "menu", "meta", "nobr", "ol", "p", "pre", "ruby", "s", "small", "span",
		"strong", "strike", "sub", "sup", "table", "tt", "u", "ul", "var":
		return true
	case "font":
		if attr == nil {
			return false
		}
		for _, k := range [...]string{"color", "face", "size"} {
			if _, ok := attr(k); ok {
				return true
			}
		}
	}
	return false
}

// htmlEncoding reports whether an annotation-xml's encoding attribute
// makes it an HTML integration point.
func htmlEncoding(attr func(string) ([]byte, bool)) bool {
	if attr == nil {
		return false
	}
	v, ok := attr("encoding")
	return ok && (NameIs(v, "text/html") || NameIs(v, "application/xhtml+xml"))
}

// voidElement reports whether an HTML element of lower-case name has no
// end tag (and so no content).
func voidElement(name []byte) bool {
	switch string(name) {
	case "area", "base", "basefont", "bgsound", "br", "col", "embed", "frame", "hr", "image",
		"img", "input", "keygen", "link", "meta", "param", "source", "track", "wbr":
		return true
	}
	return false
}

// foreignOnly reports whether a lower-case name is that of an SVG or
// MathML element and of no HTML one.
func foreignOnly(name []byte) bool {
	switch string(name) {
	case "svg", "math", "altglyph", "altglyphdef", "altglyphitem", "animate", "animatecolor",
		"animatemotion", "animatetransform", "circle", "clippath", "color-profile", "cursor",
		"defs", "desc", "discard", "ellipse", "feblend", "fecolormatrix",
		"fecomponenttransfer", "fecomposite", "feconvolvematrix", "fediffuselighting",
		"fedisplacementmap", "fedistantlight", "fedropshadow", "feflood", "fefunca", "fefuncb",
		"fefuncg", "fefuncr", "fegaussianblur", "feimage", "femerge", "femergenode",
		"femorphology", "feoffset", "fepointlight", "fespecularlighting", "fespotlight",
		"fetile", "feturbulence", "filter", "font-face", "foreignobject", "g", "glyph",
		"glyphref", "hatch", "hkern", "line", "lineargradient", "marker", "mask", "metadata",
		"mpath", "path", "pattern", "polygon", "polyline", "radialgradient", "rect", "set",
		"solidcolor", "stop", "switch", "symbol", "text", "textpath", "tref", "tspan", "use",
		"view", "vkern",
		"maction", "annotation", "annotation-xml", "menclose", "merror", "mfenced", "mfrac",
		"mglyph", "mi", "malignmark", "mlabeledtr", "mlongdiv", "mmultiscripts", "mn", "mo",
		"mover", "mpadded", "mphantom", "mprescripts", "mroot", "mrow", "ms", "mscarries",
		"mscarry", "msgroup", "msline", "mspace", "msqrt", "msrow", "mstack", "mstyle", "msub",
		"msup", "msubsup", "mtable", "mtd", "mtext", "mtr", "munder", "munderover", "none",
		"semantics":
		return true
	}
	return false
}
