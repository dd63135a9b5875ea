package crawl

import (
	"bytes"
	"context"
	"net/url"
	"strings"

	"github.com/asyncrawl/crawl/internal/extract"
	"github.com/asyncrawl/crawl/internal/htmltok"
	"github.com/asyncrawl/crawl/internal/urlstd"
	"golang.org/x/net/html"
)

// ExtractLinks is the default LinkExtractor. For a page whose ContentType is
// text/html or application/xhtml+xml it returns the absolute http(s) URLs,
// without fragment, that the page links to, in document order and with
// duplicates; for any other page it returns nothing. Each link is resolved
// as the WHATWG URL Standard resolves it, as a browser does, to the form
// the crawler sends (see Page.Resolve and Link.URL).
//
// It tokenizes p.Body as golang.org/x/net/html does (no regexp, no DOM;
// the tokenizer is the crawler's own, checked token for token against
// x/net/html's), so entities are decoded, unquoted attributes work and comments, scripts and
// data-* attributes yield nothing; <noscript> is read as markup, as a
// browser without scripting reads it. Links are the href of a and area, the
// src of frame and iframe, and the href of link unless its rel names a
// resource of the page rather than a document: stylesheet, icon,
// apple-touch-icon, mask-icon, manifest, preload, modulepreload, prefetch,
// dns-prefetch, preconnect or pingback. The first <base href> sets the URL
// that relative links resolve against (its query in the page's encoding,
// p.Encoding, as a link's); as in the default extractor, nothing of a
// <template> is read, and a <base> in SVG, MathML or a template sets no
// base URL (what lies there is what the HTML parser puts there: see
// docs/urls.md). When the crawler obeys robots.txt
// (WithRobots, on by default), links marked rel="nofollow" are left out,
// and every link of a page whose <meta name="robots"> says "nofollow" or
// "none", as the default extractor does; so WithLinkExtractor(ExtractLinks)
// crawls what the default does. On a Page the program made itself, it
// keeps them. It never returns an error, and it is safe for concurrent use.
func ExtractLinks(ctx context.Context, p *Page) ([]*url.URL, error) {
	if !isHTML(p.ContentType) {
		return nil, nil
	}
	links, _ := appendLinks(nil, p.URL, p.Body, p.obeyRobots, p.Encoding)
	return links, nil
}

// isHTML reports whether a media type (lower case, no parameters) is one
// whose links are extracted.
func isHTML(mediaType string) bool {
	return mediaType == "text/html" || mediaType == "application/xhtml+xml"
}

// appendLinks appends to dst the links of the HTML document body, fetched
// from page, and returns what its robots meta tags say. With obey, links
// marked rel="nofollow" are left out, and all of them if a meta tag says
// nofollow.
func appendLinks(dst []*url.URL, page *url.URL, body []byte, obey bool, enc string) ([]*url.URL, extract.Meta) {
	var pl pageLinks
	pl.query = queryEncoder(enc)
	pl.scan(page, body, obey)
	for i := range pl.refs {
		if u := pl.link(i); u != nil {
			dst = append(dst, u)
		}
	}
	return dst, pl.meta
}

// pageLinks is what ExtractLinks' scan of an HTML document found: its link
// references as written, the URL they resolve against, and what its robots
// meta tags say; link resolves them one at a time.
type pageLinks struct {
	refs []string
	base *url.URL   // the document base URL
	std  urlstd.URL // base, parsed by the URL Standard
	ok   bool       // base parsed: links resolve
	// query encodes a reference's query in the page's encoding (see
	// queryEncoder); nil for UTF-8.
	query func(string) string
	meta  extract.Meta
	z     htmltok.Tokenizer
	tree  extract.Tree
}

// treeEnd takes the end tag z has just read into tree (a Quiet one has
// nothing an end tag closes).
func treeEnd(tree *extract.Tree, z *htmltok.Tokenizer, buf *[32]byte) {
	if !tree.Quiet() {
		tree.End(extract.LowerTagName(buf, z.Raw()))
	}
}

// treeStart takes the start tag z has just read into tree (see
// extract.Tree; a tag a Quiet tree does not take note of need not be
// given) and reports whether it is SVG's or MathML's and whether
// it lies in a <template>'s content. It reads the tag's attributes only
// where the tree needs them, so that they are left for the caller
// otherwise.
func treeStart(tree *extract.Tree, z *htmltok.Tokenizer, buf *[32]byte, tt html.TokenType) (foreign, inert bool) {
	name := extract.LowerTagName(buf, z.Raw())
	var get func(string) ([]byte, bool)
	if extract.NeedsAttrs(name) {
		var kv [][2][]byte
		for more := true; more; {
			var k, v []byte
			k, v, more = z.TagAttr()
			if k != nil {
				kv = append(kv, [2][]byte{k, v})
			}
		}
		get = func(key string) ([]byte, bool) {
			for _, a := range kv {
				if string(a[0]) == key {
					return a[1], true
				}
			}
			return nil, false
		}
	}
	return tree.Start(z, name, tt == html.SelfClosingTagToken, get)
}

// scan reads the link references of the HTML document body, fetched from
// page, into pl. With obey, links marked rel="nofollow" are left out, and
// all of them if a meta tag says nofollow.
func (pl *pageLinks) scan(page *url.URL, body []byte, obey bool) {
	clear(pl.refs)
	pl.refs, pl.meta = pl.refs[:0], extract.Meta{}
	meta := &pl.meta
	z := &pl.z
	z.Reset(body)
	defer z.Release()
	// The first <base href> applies to the whole document, links before it
	// included, so references are resolved once the scan is over.
	var baseRef string
	baseSeen := false
	// What is SVG's or MathML's, and what lies in a <template>: a <base>
	// of either sets no base URL, and a template's links are not the
	// document's.
	tree := &pl.tree
	tree.Reset()
	var nameBuf [32]byte
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			break
		}
		if tt == html.EndTagToken {
			treeEnd(tree, z, &nameBuf)
			continue
		}
		if tt != html.StartTagToken && tt != html.SelfClosingTagToken {
			continue
		}
		raw := rawTagName(z.Raw())
		var foreign, inert bool
		if !tree.Quiet() || extract.Treed(raw) {
			foreign, inert = treeStart(tree, z, &nameBuf, tt)
		}
		tag := linkTag(raw)
		if inert || foreign && tag == tagBase {
			continue
		}
		switch tag {
		case tagNone:
			continue
		case tagNoscript:
			// The crawler runs no script, so it reads <noscript> as a
			// browser without scripting does: as markup, not raw text.
			z.NextIsNotRawText()
			continue
		}
		if tag == tagMeta {
			readMeta(z, meta)
			continue
		}
		want := "href" // the attribute that holds the link
		if tag == tagFrame {
			want = "src"
		}
		var ref []byte
		skip := false
		for {
			k, v, more := z.TagAttr()
			switch {
			case k == nil:
			case string(k) == want && ref == nil:
				ref = v
			case tag == tagLink && string(k) == "rel":
				skip = resourceRel(v) || obey && hasToken(v, "nofollow")
			case tag == tagHref && obey && string(k) == "rel":
				skip = hasToken(v, "nofollow")
			}
			if !more {
				break
			}
		}
		switch {
		case ref == nil || skip:
		case tag == tagBase:
			if !baseSeen {
				baseSeen = true
				baseRef = string(ref)
			}
		default:
			// The URL Standard's parser strips what may be
			// stripped: C0 controls and spaces, not U+00A0.
			pl.refs = append(pl.refs, string(ref))
		}
	}
	if obey && meta.NoFollow {
		pl.refs = pl.refs[:0]
	}
	// The document base URL of the HTML standard: the first <base href>
	// resolved against the page, if it parses to an http(s) URL.
	pl.base = page
	if baseSeen {
		if pl.query != nil {
			baseRef = pl.query(baseRef) // its query in the page's encoding, as a link's
		}
		if b, err := urlstd.Resolve(page, baseRef); err == nil {
			pl.base = b
		}
	}
	var err error
	pl.std, err = urlstd.FromURL(pl.base)
	pl.ok = err == nil
}

// scanHead reads, in one pass of the tokenizer, what the page of a custom
// extractor needs of an HTML document fetched from page: what its robots
// meta tags say, read no further than its <body>, and its document base,
// the first <base href> of HTML's (not one in SVG, MathML or a <template>:
// see extract.Tree), its query in the page's encoding enc, resolved
// against page (see urlstd.Resolve), or page when there is none or it is
// not an http(s) URL.
func scanHead(page *url.URL, body []byte, enc string) (meta extract.Meta, base *url.URL) {
	base = page
	baseSeen, inBody := false, false
	var z htmltok.Tokenizer
	z.Reset(body)
	var tree extract.Tree
	var nameBuf [32]byte
	for !baseSeen || !inBody {
		tt := z.Next()
		if tt == html.ErrorToken {
			break
		}
		if tt == html.EndTagToken {
			treeEnd(&tree, &z, &nameBuf)
			continue
		}
		if tt != html.StartTagToken && tt != html.SelfClosingTagToken {
			continue
		}
		name := rawTagName(z.Raw())
		var foreign, inert bool
		if !tree.Quiet() || extract.Treed(name) {
			foreign, inert = treeStart(&tree, &z, &nameBuf, tt)
		}
		if extract.NameIs(name, "body") {
			inBody = true
			continue
		}
		if inert || foreign && linkTag(name) == tagBase {
			continue
		}
		switch linkTag(name) {
		case tagNoscript:
			z.NextIsNotRawText()
		case tagMeta:
			if !inBody {
				readMeta(&z, &meta)
			}
		case tagBase:
			if baseSeen {
				continue
			}
			for {
				k, v, more := z.TagAttr()
				if string(k) == "href" {
					baseSeen = true
					ref := string(v)
					if query := queryEncoder(enc); query != nil {
						ref = query(ref) // its query in the page's encoding, as a link's
					}
					if b, err := urlstd.Resolve(page, ref); err == nil {
						base = b
					}
					break
				}
				if !more {
					break
				}
			}
		}
	}
	return meta, base
}

// link returns reference i resolved against the document base as the URL
// Standard resolves it, as sent (see urlstd.Resolve): an absolute http(s)
// URL without fragment, or nil when it is not one.
func (pl *pageLinks) link(i int) *url.URL {
	if !pl.ok {
		return nil
	}
	ref := pl.refs[i]
	if pl.query != nil {
		ref = pl.query(ref)
	}
	u, err := urlstd.Parse(ref, &pl.std)
	if err != nil {
		return nil
	}
	return u.URL()
}

// readMeta reads the attributes of a <meta> tag into m if it is a robots
// meta tag: name="robots", content a comma-separated list in which
// "noindex", "nofollow" and "none" (both) count.
func readMeta(z *htmltok.Tokenizer, m *extract.Meta) {
	var robots bool
	var content []byte
	for {
		k, v, more := z.TagAttr()
		switch string(k) {
		case "name":
			robots = extract.NameIs(bytes.TrimSpace(v), "robots")
		case "content":
			content = v
		}
		if !more {
			break
		}
	}
	if robots {
		extract.RobotsDirectives(content, m)
	}
}

// hasToken reports whether a space-separated list (a rel value) holds tok,
// a lower-case word, in any case.
func hasToken(list []byte, tok string) bool {
	for _, f := range bytes.Fields(list) {
		if extract.NameIs(f, tok) {
			return true
		}
	}
	return false
}

// The elements appendLinks looks at.
const (
	tagNone     = iota
	tagHref     // a, area: href
	tagLink     // link: href, unless rel says otherwise
	tagBase     // base: href
	tagFrame    // frame, iframe: src
	tagNoscript // read as markup
	tagMeta     // meta: robots directives
)

// rawTagName returns the name of a start tag from its raw text ("<A
// href=...>" gives "A"), cheaper than Tokenizer.TagName, which copies it.
func rawTagName(raw []byte) []byte {
	if len(raw) < 2 || raw[0] != '<' {
		return nil
	}
	i := 1
	for i < len(raw) {
		switch raw[i] {
		case ' ', '\n', '\r', '\t', '\f', '/', '>':
			return raw[1:i]
		}
		i++
	}
	return raw[1:i]
}

// linkTag classifies a tag name, in any case.
func linkTag(name []byte) int {
	switch {
	case extract.NameIs(name, "a"), extract.NameIs(name, "area"):
		return tagHref
	case extract.NameIs(name, "link"):
		return tagLink
	case extract.NameIs(name, "base"):
		return tagBase
	case extract.NameIs(name, "frame"), extract.NameIs(name, "iframe"):
		return tagFrame
	case extract.NameIs(name, "noscript"):
		return tagNoscript
	case extract.NameIs(name, "meta"):
		return tagMeta
	}
	return tagNone
}

// resourceRel reports whether a <link rel> value names a resource of the
// page (a stylesheet, an icon, a hint) rather than another document.
func resourceRel(rel []byte) bool {
	for _, tok := range bytes.Fields(rel) {
		switch strings.ToLower(string(tok)) {
		case "stylesheet", "icon", "apple-touch-icon", "apple-touch-icon-precomposed",
			"mask-icon", "manifest", "preload", "modulepreload", "prefetch",
			"dns-prefetch", "preconnect", "pingback":
			return true
		}
	}
	return false
}
