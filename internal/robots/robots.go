// Package robots parses a robots.txt as RFC 9309 (the Robots Exclusion
// Protocol) says, for one crawler, into the rules of the groups that apply
// to it, and decides paths against them (Parse, Rules.Allowed); it also
// reads the Crawl-delay and Sitemap lines, which the RFC does not define.
// The parser never fails: whatever it cannot read it skips, and it uses
// every line it can read (section 2.3.1.5, parsing errors), including
// lines that files in the wild contain and Google's open-source parser
// reads as their writers meant: misspelt keys, a space instead of the
// colon, part of a byte order mark (see Parse and robotsLine). Its memory
// is proportional to the body, whose size the caller caps (MaxSize); it
// keeps every rule of the groups that apply (no count limit), and compiles
// them into a robotsMatcher, which rules out most of those that cannot
// match a path without trying them (see robotsMatcher for its worst case).
// Fetching the file, and what the crawler does when it cannot, is the
// crawler's.
package robots

import (
	"bytes"
	"cmp"
	"iter"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/asyncrawl/crawl/internal/urlstd"
)

// MaxSize is the most of a robots.txt a crawler need read: RFC 9309,
// section 2.3.1 has crawlers parse at least 500 KiB.
const MaxSize = 500 << 10

// Rules is the parsed robots.txt of one host, as it applies to one user
// agent. It is immutable after Parse returns and safe for concurrent
// use. A nil *Rules allows everything, has no delay and no sitemaps: it
// stands for a host without a robots.txt.
type Rules struct {
	match *robotsMatcher // nil when no rule applies
	delay time.Duration
	maps  []string
}

// robotsRule is one allow or disallow line of a group.
type robotsRule struct {
	allow bool
	// pattern is the path pattern normalised by robotsEscape, with its
	// "*" and a final "$"; its length in octets is the rule's priority
	// (RFC 9309, section 2.2.2).
	pattern string
}

// Parse parses body, a robots.txt, for the crawler whose User-Agent
// header is userAgent. body may be cut short anywhere (the caller caps its
// size); its last line is read even without a line end.
//
// The groups that apply are those with a user-agent line naming the
// crawler's product token (see AgentToken), compared case-insensitively
// with the product token of the line's value, so that "User-agent:
// asyncrawl/2.1" names asyncrawl; if there are several, their rules are
// combined (RFC 9309, section 2.2.1). If none does, the groups of
// "User-agent: *" apply, combined; if there are none either, everything
// is allowed. A group is a run of user-agent lines followed by the rules
// after them; blank lines, comments, sitemap lines and unknown lines do
// not end it (the grammar of section 2.2), and rules before the first
// user-agent line belong to no group and are ignored. Allow and disallow
// lines are the group's members: a user-agent line after one of them
// starts a new group. A crawl-delay line, which RFC 9309 does not define,
// does not (section 2.2.4: reading other records must not change how the
// RFC's are read, and Google's parser reads it as an unknown line): its
// delay is the whole group's, every user-agent line of it included. Keys are read in the spellings robotsLine
// accepts, and a byte order mark at the start of body, whole or only its
// first one or two octets, is skipped.
func Parse(body []byte, userAgent string, maxDelay time.Duration) *Rules {
	rules, delay, maps := readRobots(body, userAgent, maxDelay)
	r := &Rules{delay: delay, maps: maps}
	if len(rules) > 0 {
		r.match = newRobotsMatcher(rules)
	}
	return r
}

// readRobots reads body as Parse does and returns the rules of the
// groups that apply, in file order, their crawl delay, and the values of
// the file's Sitemap lines.
func readRobots(body []byte, userAgent string, maxDelay time.Duration) (rules []robotsRule, delay time.Duration, maps []string) {
	token := AgentToken(userAgent)
	var (
		// The rules and delay of the groups that name the crawler and of
		// the "*" groups; named wins if any such group exists, even one
		// with no rules.
		named, star           []robotsRule
		namedDelay, starDelay time.Duration
		anyNamed              bool
		// The group being read: whether it names the crawler or "*",
		// whether any user-agent line has been read yet (rules before
		// one are ignored), and whether the group's user-agent lines are
		// still being read.
		isNamed, isStar, inGroup, inAgents bool
		// The largest Crawl-delay of the group being read, counted
		// once its user-agent lines are all known (see endGroup).
		groupDelay time.Duration
	)
	// endGroup gives the group being read its delay.
	endGroup := func() {
		if isNamed {
			namedDelay = max(namedDelay, groupDelay)
		} else if isStar {
			starDelay = max(starDelay, groupDelay)
		}
		groupDelay = 0
	}
	// A byte order mark (editors write one), or its first octets alone
	// (where something cut or mangled it), is skipped.
	for _, c := range []byte("\ufeff") {
		if len(body) == 0 || body[0] != c {
			break
		}
		body = body[1:]
	}
	for len(body) > 0 {
		// A CR LF pair leaves an empty line between them, which is
		// skipped like any other.
		var line []byte
		line, body = cutLine(body)
		key, value := robotsLine(line)
		switch key {
		case keyUserAgent:
			if !inAgents {
				endGroup()
				isNamed, isStar = false, false
			}
			inGroup, inAgents = true, true
			if robotsStarAgent(value) {
				isStar = true
			} else if t := ProductToken(string(value)); t != "" && strings.EqualFold(t, token) {
				isNamed, anyNamed = true, true
			}
		case keyAllow, keyDisallow:
			if !inGroup {
				continue
			}
			inAgents = false
			if !isNamed && !isStar || len(value) == 0 {
				// An empty disallow allows everything, the same as no rule;
				// an empty allow would match every path with the lowest
				// priority, the same as no rule too.
				continue
			}
			if value[0] != '/' && value[0] != '*' && (key == keyAllow || string(value) == "$") {
				// A pattern of no path (see newRobotsRule): an allow
				// that would allow more than it names, a "$" alone.
				continue
			}
			rule := newRobotsRule(key == keyAllow, string(value))
			if isNamed {
				named = append(named, rule)
			} else {
				star = append(star, rule)
			}
		case keyCrawlDelay:
			if !inGroup {
				continue
			}
			if d, ok := parseCrawlDelay(value, maxDelay); ok {
				groupDelay = max(groupDelay, d)
			}
		case keySitemap:
			if len(value) > 0 {
				maps = append(maps, string(value))
			}
		}
	}
	endGroup()
	if anyNamed {
		return named, namedDelay, maps
	}
	return star, starDelay, maps
}

// robotsKey is what the key of a robots.txt line names.
type robotsKey uint8

const (
	keyUnknown robotsKey = iota // a key Parse does not read, or no key
	keyUserAgent
	keyAllow
	keyDisallow
	keyCrawlDelay
	keySitemap
)

// robotsLine splits a line into what its key names and its value, trimmed
// of spaces and tabs, after removing a comment. The key is the text before
// the first colon, trimmed, or, if that is no key that Parse reads,
// the text before the first space or tab, if it is one and the rest of
// the line is a single word ("Disallow /private", "Sitemap
// https://example.com/s.xml"): writers leave the colon out, and requiring
// a known key and a single word keeps free text ("allow me to explain")
// from being read as a rule. Blank, comment-only and unreadable lines are
// keyUnknown.
func robotsLine(line []byte) (key robotsKey, value []byte) {
	if i := bytes.IndexByte(line, '#'); i >= 0 {
		line = line[:i]
	}
	line = bytes.Trim(line, " \t")
	if k, v, ok := bytes.Cut(line, []byte(":")); ok {
		if key := robotsKeyOf(bytes.Trim(k, " \t")); key != keyUnknown {
			return key, bytes.Trim(v, " \t")
		}
	}
	i := bytes.IndexAny(line, " \t")
	if i < 0 {
		return keyUnknown, nil
	}
	value = bytes.TrimLeft(line[i:], " \t")
	if bytes.ContainsAny(value, " \t") {
		return keyUnknown, nil
	}
	return robotsKeyOf(line[:i]), value
}

// robotsKeyOf returns what key names, compared case-insensitively. Beside
// the keys' own spellings it accepts those Google's open-source parser
// accepts because they are common in the wild: "useragent" and "user
// agent"; "disalow", "dissallow", "dissalow", "diasllow" and "disallaw";
// "site-map". Other spellings, and keys that merely start with one of
// these, are keyUnknown.
func robotsKeyOf(key []byte) robotsKey {
	var lower [len("crawl-delay")]byte
	if len(key) > len(lower) {
		return keyUnknown
	}
	for i, c := range key {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		lower[i] = c
	}
	switch string(lower[:len(key)]) {
	case "user-agent", "useragent", "user agent":
		return keyUserAgent
	case "allow":
		return keyAllow
	case "disallow", "disalow", "dissallow", "dissalow", "diasllow", "disallaw":
		return keyDisallow
	case "crawl-delay":
		return keyCrawlDelay
	case "sitemap", "site-map":
		return keySitemap
	}
	return keyUnknown
}

// robotsStarAgent reports whether a user-agent value is "*", which may be
// followed by a space and anything (as Google's parser reads it).
func robotsStarAgent(value []byte) bool {
	return len(value) > 0 && value[0] == '*' && (len(value) == 1 || value[1] == ' ' || value[1] == '\t')
}

// ProductToken returns the product token of a User-Agent header, its
// leading run of letters, digits, "_" and "-", so that
// "asyncrawl/0.1.0 (+https://...)" is "asyncrawl". RFC 9309 (section
// 2.2.1) allows only letters, "_" and "-" in a product token; digits are
// accepted too because real crawlers have them ("360Spider").
func ProductToken(userAgent string) string {
	userAgent = strings.TrimLeft(userAgent, " \t")
	i := 0
	for i < len(userAgent) && isTokenChar(userAgent[i]) {
		i++
	}
	return userAgent[:i]
}

// AgentToken returns the product token a crawler of User-Agent header
// userAgent obeys robots.txt by: its ProductToken, but for a browser-style
// header that names the crawler after "compatible;" ("Mozilla/5.0
// (compatible; ExampleBot/0.1; +https://www.example.com/bot.html)", RFC
// 9309's own example, or "...(KHTML, like Gecko; compatible; bingbot/2.0;
// ...)"), where it is the token that follows.
func AgentToken(userAgent string) string {
	if i := indexFold(userAgent, "compatible;"); i >= 0 {
		if t := ProductToken(userAgent[i+len("compatible;"):]); t != "" {
			return t
		}
	}
	return ProductToken(userAgent)
}

// indexFold returns the index of the first instance of ASCII sub in s,
// in any case, or -1.
func indexFold(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(sub)], sub) {
			return i
		}
	}
	return -1
}

func isTokenChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-'
}

// newRobotsRule makes the rule of an allow or disallow line. A pattern
// that starts with neither "/" nor "*" is no path pattern of RFC 9309
// (section 2.2.2), and Google's parser lets it match nothing (the paths it
// compares with start with "/"); the crawler reads a disallow of one as
// its writer meant it, with a leading "/" ("Disallow: private/" keeps out
// /private/), to the more cautious side, and ignores an allow of one
// ("Allow: public/", which would let in what a disallow keeps out) and a
// disallow of "$" alone (read with a "/", it would keep out "/", the
// root: Google's parser lets it match nothing): readRobots leaves those
// out before they get here.
func newRobotsRule(allow bool, value string) robotsRule {
	p := robotsEscape(value)
	if p[0] != '/' && p[0] != '*' {
		p = "/" + p
	}
	// A "$" before the last character is no end: a literal dollar, in
	// the form paths are compared in (see Allowed).
	if i := strings.IndexByte(p, '$'); i >= 0 && i < len(p)-1 {
		p = strings.ReplaceAll(p[:len(p)-1], "$", "%24") + p[len(p)-1:]
	}
	return robotsRule{allow: allow, pattern: p}
}

// parseCrawlDelay parses a Crawl-delay value, a non-negative decimal
// number of seconds ("10", "0.5", ".5"), capped at max. ok is
// false for anything else, including signs, exponents and trailing words,
// which strconv.ParseFloat alone would accept or which may mean another
// unit.
func parseCrawlDelay(value []byte, max time.Duration) (d time.Duration, ok bool) {
	digits, dot := 0, 0
	for _, c := range value {
		switch {
		case '0' <= c && c <= '9':
			digits++
		case c == '.':
			dot++
		default:
			return 0, false
		}
	}
	if digits == 0 || dot > 1 {
		return 0, false
	}
	// Only a value too large for a float64 fails here, and it is +Inf.
	s, _ := strconv.ParseFloat(string(value), 64)
	// Compare in seconds before converting: a huge value would overflow
	// a Duration.
	if s >= max.Seconds() {
		return max, true
	}
	return time.Duration(s * float64(time.Second)), true
}

// robotsEscape normalises the percent-encoding of a path pattern or of a
// path, so that two spellings of one path compare equal (RFC 9309, section
// 2.2.2): a percent-encoded unreserved character is decoded ("%7E" is
// "~"); the hex digits of the other escapes are upper-cased; octets that
// may not stand unencoded in a URI (non-ASCII, controls, space and
// `"<>[\]^{|}` and the backquote) are percent-encoded, as url.URL
// encodes them in RequestURI; and a "%" that starts no escape is "%25",
// the escape of what it is. Everything else, including the reserved
// characters, is kept as written, so "/a%2Fb" and "/a/b" stay distinct.
// It returns s itself when nothing changes.
func robotsEscape(s string) string {
	i := 0
	for i < len(s) && !robotsNeedsEscape(s, i) {
		i++
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	const hex = "0123456789ABCDEF"
	for ; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%' && i+2 < len(s) && urlstd.IsHex(s[i+1]) && urlstd.IsHex(s[i+2]):
			urlstd.WriteNormalEscape(&b, s[i+1], s[i+2])
			i += 2
		case c == '%' || robotsUnsafe(c):
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&0xF])
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// robotsNeedsEscape reports whether robotsEscape would change s at i.
func robotsNeedsEscape(s string, i int) bool {
	c := s[i]
	if c != '%' {
		return robotsUnsafe(c)
	}
	if i+2 >= len(s) || !urlstd.IsHex(s[i+1]) || !urlstd.IsHex(s[i+2]) {
		return true
	}
	return urlstd.IsUnreserved(urlstd.Unhex(s[i+1])<<4|urlstd.Unhex(s[i+2])) || s[i+1] != urlstd.UpperHex(s[i+1]) || s[i+2] != urlstd.UpperHex(s[i+2])
}

// robotsUnsafe reports whether c may not stand unencoded in a URI.
func robotsUnsafe(c byte) bool {
	return c <= ' ' || c >= 0x7F || strings.IndexByte("\"<>[\\]^`{|}", c) >= 0
}

// Matching

// Allowed reports whether a URL with this path and query (as
// url.URL.RequestURI gives it: escaped, starting with "/", query included)
// may be fetched. The rule with the longest pattern that matches decides;
// allow wins a tie; no matching rule allows (RFC 9309, section 2.2.2).
// "/robots.txt" is always allowed (section 2.2.2). It is safe for
// concurrent use; what it costs is said at robotsMatcher.
func (r *Rules) Allowed(pathQuery string) bool {
	if r == nil || r.match == nil {
		return true
	}
	if pathQuery == "" {
		pathQuery = "/"
	}
	path := pathForm(pathQuery)
	if path == "/robots.txt" {
		return true
	}
	return r.match.allowed(path)
}

// specials escapes a path's "*" and "$" (see pathForm).
var specials = strings.NewReplacer("*", "%2A", "$", "%24")

// pathForm returns the form rules are matched against of a path and
// query: robotsEscape's, with "*" and "$" escaped too, since they are
// characters of the path, which a pattern names by their escapes, its own
// being a wildcard and an end (RFC 9309, section 2.2.3).
func pathForm(pathQuery string) string {
	path := robotsEscape(pathQuery)
	if strings.ContainsAny(path, "*$") {
		path = specials.Replace(path)
	}
	return path
}

// robotsMatcher decides paths against the rules of a robots.txt, compiled
// once when the file is parsed so that a path is matched only against the
// rules that pass cheap tests of whether they can match it. It is
// immutable after newRobotsMatcher returns and safe for concurrent use.
//
// A pattern is a literal prefix, up to its first "*" (or all of it), and,
// if it has a "*", literal parts separated by "*" after it, the last of
// them anchored at the end of the path if the pattern ends in "$". Rules
// with equal patterns are merged first (allow wins, section 2.2.2). The
// literal prefixes form a radix trie: walking the path down it finds, in
// one pass, the rules whose prefix the path starts with, and only those
// are looked at. A node holds at most one literal rule without "$" and one
// with, each decided in constant time where the node is reached.
//
// The wildcard rules of a node are filed in buckets by one octet that each
// needs in the path (of its octets, the one fewest of the node's rules
// need), longest pattern first. A bucket whose octet the path lacks is
// skipped whole, and a rule in the others is tried only if its pattern is
// longer than the best match so far, the rest of the path is long enough
// for its literal parts, and every octet of those parts occurs in the path
// (a test of 256-bit sets). A rule that passes is matched greedily: each
// literal part at its leftmost place after the one before, which finds a
// match if there is one, since a "*" can absorb whatever lies between.
// There is no backtracking, so no rule costs more than one pass over the
// path, however many "*" it has: parts of up to robotsLongPart octets are
// found with strings.Index (at most that many comparisons per octet of the
// path), longer ones with a Knuth-Morris-Pratt table built here (linear).
//
// Worst case, for a path of L octets and n distinct rules whose patterns
// total P octets: O(L) to walk the trie, plus O(L + p) for each wildcard
// rule that passes the tests above, p its pattern's length, so
// O(L + n·L + P) if every rule is a wildcard rule that passes them, as a
// path made to contain all their octets in order can. Typically a path
// lacks octets that most wildcard rules need, or an early match of high
// priority cuts the rest short, and the cost is O(L) plus a constant per
// bucket and per rule in the buckets of octets the path has. Simulating
// all patterns at once as one automaton was set aside: a state-set
// simulation costs O(L·P) in the worst case, more than this, and a
// deterministic automaton can be exponential in P.
//
// Memory is O(P): at most two trie nodes per distinct prefix, labelled
// with substrings of the patterns, one record per wildcard rule pointing
// into its pattern, and, for parts longer than robotsLongPart, a table of
// four octets per octet.
type robotsMatcher struct {
	nodes []robotsNode // nodes[0] is the root, the empty prefix
}

// robotsNode is a node of the trie of literal prefixes. Its prefix is the
// labels of the edges from the root to it, concatenated.
type robotsNode struct {
	// labels are the labels of the edges to the nodes kids, and firsts
	// their first octets, which differ.
	firsts string
	labels []string
	kids   []int32
	// lit is the verdict of the literal rule whose pattern is this node's
	// prefix, exact that of the rule whose pattern is the prefix and "$".
	lit, exact robotsVerdict
	// buckets are the wildcard rules whose literal prefix is this node's.
	buckets []robotsBucket
}

// robotsVerdict is what a literal rule says, if there is one; allow is
// greater than disallow so that max merges two rules with one pattern.
type robotsVerdict uint8

const (
	verdictNone robotsVerdict = iota
	verdictDisallow
	verdictAllow
)

// robotsBucket is wildcard rules that all need one octet in the path.
type robotsBucket struct {
	key   int // that octet, or -1 for rules without literal parts
	rules []robotsWild
}

// robotsWild is a wildcard rule, less its literal prefix.
type robotsWild struct {
	// rest is the pattern after its first "*", without a final "$".
	rest string
	// fails are the Knuth-Morris-Pratt tables of the parts of rest
	// longer than robotsLongPart, in order, the anchored last part apart.
	fails [][]int32
	need  octetSet // the octets of rest but "*"
	min   int32    // len(rest) less its "*": the shortest rest of path
	pri   int32    // len of the whole pattern
	node  int32    // the trie node of the literal prefix (for compiling)
	key   int16    // the octet of the rule's bucket, or -1 (for compiling)
	allow bool
	// anchored is set when the pattern ends in "$": the last part of
	// rest must end the path.
	anchored bool
}

// robotsLongPart is the length over which a literal part is searched for
// with a Knuth-Morris-Pratt table rather than strings.Index, whose worst
// case grows with the part's length.
const robotsLongPart = 64

// octetSet is a set of octets.
type octetSet [4]uint64

func (s *octetSet) add(c byte)      { s[c>>6] |= 1 << (c & 63) }
func (s *octetSet) has(c byte) bool { return s[c>>6]&(1<<(c&63)) != 0 }

// contains reports whether t is a subset of s.
func (s *octetSet) contains(t *octetSet) bool {
	return t[0]&^s[0]|t[1]&^s[1]|t[2]&^s[2]|t[3]&^s[3] == 0
}

// newRobotsMatcher compiles rules, which must not be empty.
func newRobotsMatcher(rules []robotsRule) *robotsMatcher {
	m := &robotsMatcher{nodes: make([]robotsNode, 1, 2*len(rules)+1)}
	sorted := slices.Clone(rules)
	slices.SortFunc(sorted, func(a, b robotsRule) int { return strings.Compare(a.pattern, b.pattern) })
	var wild []robotsWild
	for i := 0; i < len(sorted); {
		p, v := sorted[i].pattern, verdictDisallow
		for ; i < len(sorted) && sorted[i].pattern == p; i++ {
			if sorted[i].allow {
				v = verdictAllow
			}
		}
		star, anchored := strings.IndexByte(p, '*'), strings.HasSuffix(p, "$")
		switch {
		case star < 0 && !anchored:
			n := m.insert(p)
			m.nodes[n].lit = max(m.nodes[n].lit, v)
		case star < 0:
			n := m.insert(p[:len(p)-1])
			m.nodes[n].exact = max(m.nodes[n].exact, v)
		default:
			w := newRobotsWild(p, star, anchored, v == verdictAllow)
			w.node = m.insert(p[:star])
			wild = append(wild, w)
		}
	}
	// One array holds every wildcard rule, by node, bucket and priority;
	// a node's buckets are slices of it.
	slices.SortStableFunc(wild, func(a, b robotsWild) int { return cmp.Compare(a.node, b.node) })
	for start := 0; start < len(wild); {
		end := start + 1
		for end < len(wild) && wild[end].node == wild[start].node {
			end++
		}
		m.nodes[wild[start].node].buckets = robotsBuckets(wild[start:end])
		start = end
	}
	return m
}

// newRobotsWild makes the record of wildcard pattern p, whose first "*"
// is at star.
func newRobotsWild(p string, star int, anchored, allow bool) robotsWild {
	w := robotsWild{rest: p[star+1:], pri: int32(len(p)), allow: allow, anchored: anchored}
	if anchored {
		w.rest = w.rest[:len(w.rest)-1]
	}
	for i, start := 0, 0; i <= len(w.rest); i++ {
		if i < len(w.rest) && w.rest[i] != '*' {
			w.need.add(w.rest[i])
			w.min++
			continue
		}
		// A part ends at i; the anchored last part is compared, not
		// searched for.
		if i-start > robotsLongPart && (i < len(w.rest) || !anchored) {
			w.fails = append(w.fails, kmpTable(w.rest[start:i]))
		}
		start = i + 1
	}
	return w
}

// robotsBuckets files the wildcard rules of one node, ws, by the octet of
// each that fewest of them need (of two such octets, the one whose bucket
// is smaller so far), longest pattern first and allow first on ties. It
// sorts ws, and the buckets are slices of it.
func robotsBuckets(ws []robotsWild) []robotsBucket {
	var count [256]int
	for i := range ws {
		for c := range ws[i].need.all() {
			count[c]++
		}
	}
	var filed [257]int // by key+1
	for i := range ws {
		key := -1
		for c := range ws[i].need.all() {
			if key < 0 || count[c] < count[key] || count[c] == count[key] && filed[c+1] < filed[key+1] {
				key = int(c)
			}
		}
		ws[i].key = int16(key)
		filed[key+1]++
	}
	slices.SortFunc(ws, func(a, b robotsWild) int {
		if c := cmp.Compare(a.key, b.key); c != 0 {
			return c
		}
		if c := cmp.Compare(b.pri, a.pri); c != 0 {
			return c
		}
		switch {
		case a.allow == b.allow:
			return 0
		case a.allow:
			return -1
		default:
			return 1
		}
	})
	var buckets []robotsBucket
	for start := 0; start < len(ws); {
		end := start + 1
		for end < len(ws) && ws[end].key == ws[start].key {
			end++
		}
		buckets = append(buckets, robotsBucket{key: int(ws[start].key), rules: ws[start:end:end]})
		start = end
	}
	return buckets
}

// all yields the octets of s in increasing order.
func (s *octetSet) all() func(yield func(byte) bool) {
	return func(yield func(byte) bool) {
		for w, word := range s {
			for word != 0 {
				c := byte(w<<6 + bits.TrailingZeros64(word))
				if !yield(c) {
					return
				}
				word &= word - 1
			}
		}
	}
}

// insert adds key to the trie and returns its node.
func (m *robotsMatcher) insert(key string) int32 {
	n := int32(0)
	for key != "" {
		node := &m.nodes[n]
		k := strings.IndexByte(node.firsts, key[0])
		if k < 0 {
			leaf := int32(len(m.nodes))
			node.firsts += key[:1]
			node.labels = append(node.labels, key)
			node.kids = append(node.kids, leaf)
			m.nodes = append(m.nodes, robotsNode{})
			return leaf
		}
		label := node.labels[k]
		c := 1
		for c < len(label) && c < len(key) && label[c] == key[c] {
			c++
		}
		if c < len(label) {
			// Split the edge where key leaves it.
			mid := int32(len(m.nodes))
			split := robotsNode{firsts: label[c : c+1], labels: []string{label[c:]}, kids: []int32{node.kids[k]}}
			node.labels[k], node.kids[k] = label[:c], mid
			m.nodes = append(m.nodes, split)
		}
		n, key = m.nodes[n].kids[k], key[c:]
	}
	return n
}

// allowed reports whether the rules allow path, normalised by
// robotsEscape.
func (m *robotsMatcher) allowed(path string) bool {
	// The longest pattern matched so far, and whether it allows; no match
	// allows.
	bestPri, bestAllow := -1, true
	better := func(pri int, allow bool) bool {
		return pri > bestPri || pri == bestPri && allow && !bestAllow
	}
	var have octetSet // the octets of path, once a node has wildcard rules
	haveDone := false
	n, depth := int32(0), 0
	for {
		node := &m.nodes[n]
		if node.lit != verdictNone && better(depth, node.lit == verdictAllow) {
			bestPri, bestAllow = depth, node.lit == verdictAllow
		}
		if node.exact != verdictNone && depth == len(path) && better(depth+1, node.exact == verdictAllow) {
			bestPri, bestAllow = depth+1, node.exact == verdictAllow
		}
		if len(node.buckets) > 0 && !haveDone {
			for i := range len(path) {
				have.add(path[i])
			}
			haveDone = true
		}
		for b := range node.buckets {
			bucket := &node.buckets[b]
			if bucket.key >= 0 && !have.has(byte(bucket.key)) {
				continue
			}
			for i := range bucket.rules {
				w := &bucket.rules[i]
				if !better(int(w.pri), w.allow) {
					break // nor can any after it
				}
				if len(path)-depth >= int(w.min) && have.contains(&w.need) && w.match(path, depth) {
					bestPri, bestAllow = int(w.pri), w.allow
					break
				}
			}
		}
		if depth == len(path) {
			break
		}
		k := strings.IndexByte(node.firsts, path[depth])
		if k < 0 || !strings.HasPrefix(path[depth:], node.labels[k]) {
			break
		}
		n, depth = node.kids[k], depth+len(node.labels[k])
	}
	return bestAllow
}

// match reports whether the rule matches path, whose first pos octets
// matched its literal prefix. Each part is matched at its leftmost place
// after the one before, which finds a match if there is one.
func (w *robotsWild) match(path string, pos int) bool {
	rest, long := w.rest, 0
	for {
		// The next part: parts are often an octet or two, too short for
		// strings.IndexByte's call to pay.
		end := 0
		for end < len(rest) && rest[end] != '*' {
			end++
		}
		part, more := rest[:end], end < len(rest)
		if !more && w.anchored {
			// The last part must end the path, after what the others matched.
			return len(path)-pos >= len(part) && strings.HasSuffix(path, part)
		}
		var i int
		if len(part) > robotsLongPart {
			i = kmpIndex(path[pos:], part, w.fails[long])
			long++
		} else {
			i = strings.Index(path[pos:], part)
		}
		if i < 0 {
			return false
		}
		pos += i + len(part)
		if !more {
			return true
		}
		rest = rest[end+1:]
	}
}

// kmpTable returns the Knuth-Morris-Pratt table of s: for each i, the
// length of the longest proper prefix of s[:i+1] that is also its suffix.
func kmpTable(s string) []int32 {
	t := make([]int32, len(s))
	k := int32(0)
	for i := 1; i < len(s); i++ {
		for k > 0 && s[i] != s[k] {
			k = t[k-1]
		}
		if s[i] == s[k] {
			k++
		}
		t[i] = k
	}
	return t
}

// kmpIndex is strings.Index(text, s) in O(len(text)) comparisons, given
// t, the kmpTable of s.
func kmpIndex(text, s string, t []int32) int {
	k := int32(0)
	for i := 0; i < len(text); i++ {
		for k > 0 && text[i] != s[k] {
			k = t[k-1]
		}
		if text[i] == s[k] {
			k++
		}
		if int(k) == len(s) {
			return i - len(s) + 1
		}
	}
	return -1
}

// CrawlDelay returns the Crawl-delay of the groups that apply, the largest
// if several give one, capped at the maxDelay given to Parse; 0 if none gives one.
// Crawl-delay is not in RFC 9309; the value is a non-negative decimal
// number of seconds, and a line with anything else is ignored.
func (r *Rules) CrawlDelay() time.Duration {
	if r == nil {
		return 0
	}
	return r.delay
}

// Sitemaps returns the values of the Sitemap lines of the file, whatever
// group they stand in (they belong to none: RFC 9309, section 2.2.4), in
// file order and as written. The caller may modify the slice.
func (r *Rules) Sitemaps() []string {
	if r == nil {
		return nil
	}
	return slices.Clone(r.maps)
}

// cutLine returns the first line of body, ended by a CR or an LF, and what
// follows that byte.
func cutLine(body []byte) (line, rest []byte) {
	if i := bytes.IndexAny(body, "\r\n"); i >= 0 {
		return body[:i], body[i+1:]
	}
	return body, nil
}

// Paths yields the paths of the Allow and Disallow lines of a robots.txt
// body, of all its groups, as written: each that starts with "/", holds no
// "*" and is more than "/", a final "$" dropped. The same path may come
// more than once.
func Paths(body []byte) iter.Seq[string] {
	return func(yield func(string) bool) {
		for len(body) > 0 {
			var line []byte
			line, body = cutLine(body)
			k, v := robotsLine(line)
			if k != keyAllow && k != keyDisallow {
				continue
			}
			v = bytes.TrimSuffix(v, []byte("$"))
			if len(v) < 2 || v[0] != '/' || bytes.IndexByte(v, '*') >= 0 {
				continue
			}
			if !yield(string(v)) {
				return
			}
		}
	}
}
