package crawl

import (
	"bytes"
	"context"
	"net/url"
	"strings"

	"golang.org/x/net/html"
)

// ExtractLinks is the default LinkExtractor. For a page whose ContentType is
// text/html or application/xhtml+xml it returns the absolute http(s) URLs,
// without fragment, that the page links to, in document order and with
// duplicates; for any other page it returns nothing.
//
// It runs the x/net/html tokenizer over p.Body (no regexp, no DOM), so
// entities are decoded, unquoted attributes work and comments, scripts and
// data-* attributes yield nothing. Links are the href of a and area, the src
// of frame and iframe, and the href of link unless its rel names a resource
// of the page rather than a document: stylesheet, icon, apple-touch-icon,
// mask-icon, manifest, preload, modulepreload, prefetch, dns-prefetch,
// preconnect or pingback. The first <base href> sets the URL that relative
// links resolve against. It never returns an error.
func ExtractLinks(ctx context.Context, p *Page) ([]*url.URL, error) {
	if !isHTML(p.ContentType) {
		return nil, nil
	}
	return appendLinks(nil, p.URL, p.Body), nil
}

// isHTML reports whether a media type (lower case, no parameters) is one
// whose links are extracted.
func isHTML(mediaType string) bool {
	return mediaType == "text/html" || mediaType == "application/xhtml+xml"
}

// appendLinks appends to dst the links of the HTML document body, fetched
// from page.
func appendLinks(dst []*url.URL, page *url.URL, body []byte) []*url.URL {
	z := html.NewTokenizer(bytes.NewReader(body))
	base, baseSeen := page, false
	for {
		switch z.Next() {
		case html.ErrorToken:
			return dst
		case html.StartTagToken, html.SelfClosingTagToken:
		default:
			continue
		}
		name, hasAttr := z.TagName()
		if !hasAttr {
			continue
		}
		var want string // the attribute that holds the link
		switch string(name) {
		case "a", "area", "link", "base":
			want = "href"
		case "frame", "iframe":
			want = "src"
		default:
			continue
		}
		var ref []byte
		skip := false
		for hasAttr {
			var k, v []byte
			k, v, hasAttr = z.TagAttr()
			switch {
			case string(k) == want && ref == nil:
				ref = v
			case string(k) == "rel" && string(name) == "link":
				skip = resourceRel(v)
			}
		}
		if ref == nil || skip {
			continue
		}
		if string(name) == "base" {
			if !baseSeen {
				baseSeen = true
				if b, err := page.Parse(strings.TrimSpace(string(ref))); err == nil && isHTTP(b) {
					base = b
				}
			}
			continue
		}
		u, err := base.Parse(strings.TrimSpace(string(ref)))
		if err != nil || !isHTTP(u) {
			continue
		}
		u.Fragment, u.RawFragment = "", ""
		dst = append(dst, u)
	}
}

// isHTTP reports whether u is an absolute http(s) URL with a host.
func isHTTP(u *url.URL) bool {
	return (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
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
