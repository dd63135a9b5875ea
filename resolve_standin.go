package crawl

import (
	"net/url"
	"strings"
)

// resolveRef resolves ref against base. It stands in for the WHATWG
// resolver of urlstd.go (branch wt-f) until that is merged, and is deleted
// then: it strips what the URL standard strips (leading and trailing C0
// controls and spaces, tabs and newlines anywhere) and hands the rest to
// base.Parse.
func resolveRef(base *url.URL, ref string) (*url.URL, error) {
	ref = strings.TrimFunc(ref, func(r rune) bool { return r <= ' ' })
	if strings.ContainsAny(ref, "\t\n\r") {
		ref = strings.NewReplacer("\t", "", "\n", "", "\r", "").Replace(ref)
	}
	return base.Parse(ref)
}
