package crawl

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/asyncrawl/crawl/internal/extract"
	"github.com/asyncrawl/crawl/internal/urlstd"
	"github.com/asyncrawl/crawl/internal/webenc"
)

// LinkRole says what a page does with a URL it names. The zero LinkRole is
// Navigation, so a Link made from a bare URL is a link to follow.
type LinkRole uint8

const (
	// Navigation is a URL the page leads to: a link, a frame, a redirect by
	// meta refresh or header, a GET form, a citation. A crawler follows it
	// within its scope, and it counts toward the crawl's depth.
	Navigation LinkRole = iota
	// Requisite is a URL the page needs to render: an image, a script, a
	// stylesheet and what it imports, a font, a media file, an embedded
	// object.
	Requisite
	// Reference is a URL the page names that a browser neither follows nor
	// needs to render, but that a site map or a security scan wants: a
	// ping, a POST form's action, an applet's archive, the <base href>, the
	// DOCTYPE's system identifier, a CSP report-uri.
	Reference
)

// String returns "navigation", "requisite" or "reference".
func (r LinkRole) String() string {
	switch r {
	case Navigation:
		return "navigation"
	case Requisite:
		return "requisite"
	case Reference:
		return "reference"
	}
	return "LinkRole(" + strconv.Itoa(int(r)) + ")"
}

// Link is a URL a page names, with how and where it names it. Links are
// values: a Filter or a program may keep them.
type Link struct {
	// URL is absolute, http or https, without userinfo and fragment, as
	// the crawler sends it: the WHATWG URL Standard's serialisation of
	// the reference as the page spelled it, as a browser sends it
	// ("/%7Euser" stays "/%7Euser", "/a%zz" and "/a|b" are not
	// re-encoded), but for its host, which is the crawl's name for it
	// (one trailing dot dropped; docs/urls.md, Hosts). Its String is that serialisation, and it works with
	// net/http as it is: a request with it sends that serialisation. A
	// path that net/url cannot hold in Path and RawPath (one with a "|"
	// or a "%" not followed by two hex digits, which url.Parse refuses)
	// is in Opaque, with the host ("//h/a%zz"), and Path is empty: String
	// is still the URL, and net/http sends it as written, in absolute
	// form ("GET http://h/a%zz HTTP/1.1"), which servers accept; the
	// crawler's own request line is a browser's ("GET /a%zz"). The
	// crawler dedupes spellings that RFC 3986 (section 6.2.2) makes one
	// URL ("/%7Euser" and "/~user"; see URLKey): each is fetched once,
	// as first met.
	URL *url.URL
	// Role says whether a crawler follows the URL, fetches it to render
	// the page, or only records it.
	Role LinkRole
	// Speculative marks a URL found by WithSpeculative's guesswork: a
	// string in a script, in the page's text or in an attribute that is
	// not a URL attribute, that looks like a URL (Source "script
	// speculative", "text speculative", "attribute speculative"). The
	// markup does not name it as a URL, and it may not be one at all.
	Speculative bool
	// Source is how the page named the URL: the element and attribute, in
	// lower case ("a href", "img srcset", "iframe src", "td background",
	// "meta refresh", "doctype", "sitemap loc"), the header ("header Link", "header
	// Refresh", "header Content-Location", "header Content-Security-Policy")
	// or the CSS construct ("css url", "css @import" in a stylesheet;
	// "style url", "style @import" in a <style> element; "style attribute
	// url" in a style attribute). A URL found in markup inside markup (an
	// iframe's srcdoc, a conditional comment, a data: URI) has the Source
	// of the construct that names it there. A link a browser found, with
	// WithRenderer, has a Source that starts with "render " (see
	// Rendered).
	Source string
	// Rel is the link's relation types, lower case and separated by one
	// space ("next", "nofollow noopener"), from the rel attribute of a, area
	// and link or the rel parameter of a Link header; empty otherwise. The
	// crawler, not the extractor, acts on "nofollow".
	Rel string
	// Text is the anchor text of an a element (the alt text of an img in it
	// included), or the alt text of an area, with white space collapsed,
	// at most 200 bytes; empty otherwise.
	Text string
	// Page is the URL of the page the link is on.
	Page string
	// Fate is what the crawl did with the link, set by the crawler in
	// Page.Links before the page hook sees them; an extractor leaves it.
	Fate LinkFate
}

// TypedLinkExtractor returns the typed links of a fetched page, as
// ExtractTypedLinks does. It may be called from several goroutines at once,
// and p.Body is valid only during the call.
type TypedLinkExtractor func(ctx context.Context, p *Page) ([]Link, error)

// Typed adapts a LinkExtractor that returns only URLs to a
// TypedLinkExtractor: each URL it returns becomes a Navigation link with
// Source "extractor" and the page's URL, resolved against p.URL as
// ExtractTypedLinks's links are (see Link.URL). URLs that do not resolve to
// an http(s) URL are left out. The result is safe for concurrent use if e
// is.
func Typed(e LinkExtractor) TypedLinkExtractor {
	return func(ctx context.Context, p *Page) ([]Link, error) {
		urls, err := e(ctx, p)
		if len(urls) == 0 {
			return nil, err
		}
		page := ""
		if p.URL != nil {
			page = urlstd.String(p.URL)
		}
		links := make([]Link, 0, len(urls))
		for _, u := range urls {
			if u == nil {
				continue
			}
			r, rerr := urlstd.Resolve(p.URL, urlstd.String(u))
			if rerr != nil || !urlstd.IsHTTP(r) {
				continue
			}
			links = append(links, Link{URL: r, Role: Navigation, Source: "extractor", Page: page})
		}
		return links, err
	}
}

// ExtractTypedLinks returns every URL a page names, each as a Link with its
// role and source, in document order and with duplicates: first those of
// the response headers (Refresh, Link, Content-Location,
// Content-Security-Policy report-uri; Location is the redirect's and is
// left to the crawler), then those of the body for HTML and XHTML, SVG,
// CSS, and XML (the <loc> and <image:loc> of a sitemap, as a page the
// crawl links to; the crawler reads the sitemaps it finds itself). Links in markup resolve against the document's base URL (the first
// <base href> of HTML's, not one in SVG, MathML or a <template>, with an
// http(s) URL, else p.URL; nothing of a <template> is read: see
// docs/urls.md), links in headers and CSS
// against p.URL, as the WHATWG URL Standard resolves them, and come in the
// form the crawler queues (see Page.Resolve): without userinfo and
// fragment. URLs that are not http(s) after resolution, or do not parse,
// are left out; data: URIs of HTML, SVG or CSS are decoded and
// scanned instead, to a nesting depth of 2 and 64 KiB each: in one the page
// embeds (an image, a stylesheet, an object) relative URLs resolve as the
// page's do, in one it leads to (a link, a frame) only the absolute URLs
// count. Nofollow links are kept (with their Rel),
// robots directives are the crawler's to apply. A body still in a content
// coding (Content-Encoding left in p.Header) is not read.
//
// It reads HTML in one pass of a tokenizer that gives x/net/html's tokens
// for the same bytes (the crawler's own, which reads the body where it
// lies; it is checked against x/net/html token for token), with the
// contents of <noscript> and <noframes> as markup, and reads the markup in an
// iframe's srcdoc, in IE conditional comments (<!--[if IE]> ...
// <![endif]-->) and in the content of a <meta name> (which reading views
// show as markup) as markup too. It never returns an error and is safe
// for concurrent use.
func ExtractTypedLinks(ctx context.Context, p *Page) ([]Link, error) {
	if p == nil || p.URL == nil {
		return nil, nil
	}
	body := p.Body
	if p.Header.Get("Content-Encoding") != "" {
		body = nil
	}
	ct, _ := mediaType(p.ContentType)
	links, _, _, _ := scanLinksMax(nil, p.URL, p.Header, body, ct, 0, false, p.Encoding)
	return links, nil
}

// scanLinksMax appends to dst the links of a response from page, as
// extract.Scan finds them (see there for max, spec and what it returns),
// their queries encoded in enc, the body's encoding (see queryEncoder).
func scanLinksMax(dst []Link, page *url.URL, header http.Header, body []byte, contentType string, max int, spec bool, enc string) ([]Link, extract.Meta, *url.URL, int) {
	return extract.Scan(dst, linkOf, page, header, body, contentType, max, spec, queryEncoder(enc))
}

// queryEncoder returns what encodes the query of a reference read from a
// document in the encoding named enc, as a browser encodes it
// (urlstd.EncodeQuery): nil for UTF-8 (the usual page: one comparison),
// for the UTF-16s and "replacement" (whose documents' URLs are in UTF-8,
// as the URL Standard has it), and for an encoding not known. A page's
// references are encoded one after another, by one encoder.
func queryEncoder(enc string) func(string) string {
	if enc == "" || enc == "utf-8" {
		return nil
	}
	encode := webenc.Encoder(enc)
	if encode == nil {
		return nil
	}
	return func(ref string) string { return urlstd.EncodeQuery(ref, encode) }
}

// linkOf returns the Link of the extractor's l.
func linkOf(l extract.Link) Link {
	return Link{URL: l.URL, Role: LinkRole(l.Role), Speculative: l.Speculative, Source: l.Source, Rel: l.Rel, Text: l.Text, Page: l.Page}
}

// The extractor's roles are LinkRole's: the index is out of range, and
// the build fails, where one differs.
var _ = [1]struct{}{}[Navigation-LinkRole(extract.Navigation)+Requisite-LinkRole(extract.Requisite)+Reference-LinkRole(extract.Reference)]
