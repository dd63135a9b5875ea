package crawl

import "github.com/asyncrawl/crawl/internal/urlstd"

// URLKey returns the form of the absolute http(s) URL rawURL that a crawl
// dedupes on: rawURL parsed as the WHATWG URL Standard parses it, without
// userinfo and fragment, with percent-encoded unreserved characters
// decoded and the hex digits of other escapes upper-cased (RFC 3986,
// section 6.2.2), a "%" not followed by two hex digits kept. The spellings
// of one URL, which a crawl fetches once, have one key
// ("http://h/%7Euser" and "http://h/~user"): compare keys to match a
// Link.URL's String to the Result of the URL it names, whose URL is the
// spelling the crawl met first. A string that is no absolute http(s) URL
// is returned as it is. It is safe for concurrent use.
func URLKey(rawURL string) string {
	s, err := urlstd.Parse(rawURL, nil)
	if err != nil {
		return rawURL
	}
	return s.Key()
}

// wireField returns what Request.Wire holds for a URL of the two forms
// wire and key (see urlstd.Forms): wire, or "" when it is key.
func wireField(wire, key string) string {
	if wire == key {
		return ""
	}
	return wire
}

// wireURL returns the URL r is sent to: r.Wire, or r.URL when Wire is
// empty.
func wireURL(r *Request) string {
	if r.Wire != "" {
		return r.Wire
	}
	return r.URL
}
