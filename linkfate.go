package crawl

import "strconv"

// LinkFate is what the crawl did with a typed link of a page: it says, in
// Page.Links as the page hook sees them, whether the link went to the
// frontier and, if not, why not. The reasons a limit gave have the names
// Stats.Refused counts them under.
type LinkFate uint8

const (
	// LinkNotFollowed: the crawl does not follow links of this role from
	// this page (a requisite without WithRequisites, a reference without
	// WithReferences, the navigation links of a resource), or the page
	// was not read for its links (an error status).
	LinkNotFollowed LinkFate = iota
	// LinkFollowed: handed to the frontier, which queues it if it is new
	// to the crawl (Result.NumNewURLs counts those).
	LinkFollowed
	// LinkChecked: out of scope, handed to the frontier to be fetched for
	// its status only (WithCheckExternal).
	LinkChecked
	// LinkDuplicate: the page named the URL before, in a link that was
	// weighed; that one's fate is the URL's.
	LinkDuplicate
	// LinkOutOfScope: on a host (or scheme) outside the crawl's scope.
	LinkOutOfScope
	// LinkExcluded: an exclude pattern, a Filter or a LinkFilter dropped
	// it.
	LinkExcluded
	// LinkNofollow: the page's robots directives (a nofollow meta tag or
	// X-Robots-Tag) or the link's rel="nofollow" keep it from being
	// followed (WithRobotsDirectives).
	LinkNofollow
	// LinkTooDeep: past WithMaxDepth ("max_depth"), whether or not the
	// crawl has the URL already: depth is weighed before the seen set is
	// asked.
	LinkTooDeep
	// LinkOverCap: past the page's first WithMaxLinksPerPage distinct
	// links ("links_per_page").
	LinkOverCap
	// LinkTooLong: longer than WithMaxURLLength ("url_length").
	LinkTooLong
	// LinkRepeats: a path segment repeated past WithMaxSegmentRepeats
	// ("segment_repeats").
	LinkRepeats
)

var linkFateNames = [...]string{
	LinkNotFollowed: "not_followed",
	LinkFollowed:    "followed",
	LinkChecked:     "checked",
	LinkDuplicate:   "duplicate",
	LinkOutOfScope:  "out_of_scope",
	LinkExcluded:    "excluded",
	LinkNofollow:    "nofollow",
	LinkTooDeep:     "max_depth",
	LinkOverCap:     "links_per_page",
	LinkTooLong:     "url_length",
	LinkRepeats:     "segment_repeats",
}

// String returns the fate's name: "followed", "out_of_scope", "max_depth",
// and so on.
func (f LinkFate) String() string {
	if int(f) < len(linkFateNames) {
		return linkFateNames[f]
	}
	return "LinkFate(" + strconv.Itoa(int(f)) + ")"
}

// refusalFate is the LinkFate of a trap-limit refusal.
var refusalFate = [numRefusals]LinkFate{
	refuseURLLength:      LinkTooLong,
	refuseLinksPerPage:   LinkOverCap,
	refuseSegmentRepeats: LinkRepeats,
	refuseDepth:          LinkTooDeep,
}

// LinkFilter decides whether a typed link of a page may be followed: it
// returns false to drop l, which then has the fate LinkExcluded. It sees
// every link the crawl would follow (its role followed, in scope or
// checked), with its role, source, rel, anchor text and page, before the
// exclude patterns and Filters; it may be called from several goroutines
// at once, and must not modify l.
type LinkFilter func(l *Link) bool
