package robots

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// userAgent and maxDelay are what the crawler parses with by default:
// crawl.DefaultUserAgent, whose product token is "asyncrawl", and
// crawl.MaxCrawlDelay.
const (
	userAgent = "asyncrawl/0.1.0 (+https://github.com/asyncrawl/crawl)"
	maxDelay  = 30 * time.Second
)

// robotsCase is a robots.txt, a path asked about and the answer allowed
// must give for userAgent (or ua, when set).
type robotsCase struct {
	name string
	body string
	ua   string
	path string
	want bool
}

func runRobotsCases(t *testing.T, cases []robotsCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ua := c.ua
			if ua == "" {
				ua = userAgent
			}
			if got := Parse([]byte(c.body), ua, maxDelay).Allowed(c.path); got != c.want {
				t.Errorf("Parse(%q, %q).allowed(%q) = %v, want %v", c.body, ua, c.path, got, c.want)
			}
		})
	}
}

// TestRobotsLines checks how lines are read (RFC 9309: the grammar of
// section 2.2, the comments of section 2.2.3, parsing errors in section
// 2.3.1.5 and the size limit of section 2.5).
func TestRobotsLines(t *testing.T) {
	runRobotsCases(t, []robotsCase{
		// Section 2.2: keys are case-insensitive (quoted strings of ABNF are).
		{"keys any case", "USER-AGENT: *\nDisAllow: /x", "", "/x", false},
		// Section 2.2: whitespace around key and value is optional.
		{"spaces and tabs around key and value", " \tuser-agent \t: \t* \t\n\t disallow\t:\t/x \t", "", "/x", false},
		{"no space after colon", "user-agent:*\ndisallow:/x", "", "/x", false},
		{"value trimmed so it is a prefix", "user-agent: *\ndisallow: /x   ", "", "/xy", false},
		// Section 2.2.3: "#" starts a comment anywhere on a line.
		{"comment after value", "user-agent: * # all\ndisallow: /x#y", "", "/x", false},
		{"comment cuts pattern", "user-agent: *\ndisallow: /x#y", "", "/xz", false},
		{"comment line", "# disallow: /x\nuser-agent: *\n# disallow: /x", "", "/x", true},
		{"commented user-agent", "user-agent: *\ndisallow: /x\n# user-agent: other\nallow: /x", "", "/x", true},
		// Section 2.2: CR, LF and CR LF end lines.
		{"CRLF", "user-agent: *\r\ndisallow: /x\r\n", "", "/x", false},
		{"CR", "user-agent: *\rdisallow: /x\r", "", "/x", false},
		{"mixed line ends CR", "user-agent: *\rdisallow: /a\r\ndisallow: /b\nallow: /c", "", "/a", false},
		{"mixed line ends CRLF", "user-agent: *\rdisallow: /a\r\ndisallow: /b\nallow: /c", "", "/b", false},
		// Section 2.2: the file is UTF-8; a byte order mark at the start
		// (editors write one) is skipped, as Google's parser does.
		{"BOM", "\ufeffuser-agent: *\ndisallow: /x", "", "/x", false},
		{"BOM only at start", "user-agent: *\n\ufeffdisallow: /x", "", "/x", true},
		// Section 2.3.1.5: lines that cannot be parsed are ignored, the
		// others used.
		{"unknown key", "user-agent: *\nnoindex: /x\ndisallow: /y", "", "/x", true},
		{"unknown key keeps group", "user-agent: *\nhost: example.com\ndisallow: /y", "", "/y", false},
		{"garbage", "\x00\xff\xfe:::\n<html>\nuser-agent: *\ndisallow: /x", "", "/x", false},
		{"html page", "<!DOCTYPE html><html><body>Not found</body></html>", "", "/x", true},
		// Section 2.5: a file cut short by the size limit keeps its last
		// line.
		{"last line without newline", "user-agent: *\ndisallow: /x", "", "/x", false},
		{"last line cut mid-pattern", "user-agent: *\ndisallow: /private/fi", "", "/private/file", false},
		{"cut mid-key", "user-agent: *\ndisallow: /x\ndisall", "", "/x", false},
		{"empty file", "", "", "/x", true},
	})
}

// TestRobotsGroups checks which groups apply (RFC 9309, section 2.2.1).
func TestRobotsGroups(t *testing.T) {
	runRobotsCases(t, []robotsCase{
		{"no groups allows all", "disallow: /", "", "/x", true},
		{"rules before first user-agent ignored", "disallow: /x\nuser-agent: *\ndisallow: /y", "", "/x", true},
		{"star group", "user-agent: *\ndisallow: /", "", "/x", false},
		{"named group beats star", "user-agent: *\ndisallow: /\n\nuser-agent: asyncrawl\ndisallow: /y", "", "/x", true},
		{"named group beats star before it", "user-agent: asyncrawl\ndisallow: /y\n\nuser-agent: *\nallow: /\nuser-agent: x\ndisallow: /", "", "/x", true},
		{"named empty group allows all", "user-agent: *\ndisallow: /\nuser-agent: asyncrawl\n", "", "/x", true},
		// Crawl-delay is no RFC 9309 record: it must not change how the
		// RFC's are read (section 2.2.4), so it does not end the
		// user-agent lines, as in Google's parser.
		{"crawl-delay and a blank line do not end the user-agent lines", "user-agent: asyncrawl\ncrawl-delay: 1\n\nuser-agent: *\ndisallow: /\n", "", "/x", false},
		{"other crawler's group ignored", "user-agent: googlebot\ndisallow: /", "", "/x", true},
		{"case-insensitive name", "user-agent: AsynCrawl\ndisallow: /x", "", "/x", false},
		{"value's product token compared", "user-agent: asyncrawl/2.1\ndisallow: /x", "", "/x", false},
		{"value's token with comment", "user-agent: asyncrawl (+https://x)\ndisallow: /x", "", "/x", false},
		{"longer token is another crawler", "user-agent: asyncrawl-news\ndisallow: /x", "", "/x", true},
		{"token is not a prefix match", "user-agent: async\ndisallow: /x", "", "/x", true},
		{"crawler with custom user agent", "user-agent: mybot\ndisallow: /x", "MyBot/1.0", "/x", false},
		// Section 2.2.1: matching groups are combined.
		{"named groups combined first", "user-agent: asyncrawl\ndisallow: /a\nuser-agent: other\ndisallow: /\nuser-agent: asyncrawl\ndisallow: /b", "", "/a", false},
		{"named groups combined second", "user-agent: asyncrawl\ndisallow: /a\nuser-agent: other\ndisallow: /\nuser-agent: asyncrawl\ndisallow: /b", "", "/b", false},
		{"named groups combined longest wins across", "user-agent: asyncrawl\ndisallow: /a\nuser-agent: asyncrawl\nallow: /a/b", "", "/a/b", true},
		{"star groups combined", "user-agent: *\ndisallow: /a\nuser-agent: other\nallow: /\nuser-agent: *\ndisallow: /b", "", "/b", false},
		// Section 2.2: a group has one or more user-agent lines; blank
		// lines do not end it.
		{"several user-agent lines", "user-agent: other\nuser-agent: asyncrawl\ndisallow: /x", "", "/x", false},
		{"blank line between user-agents", "user-agent: asyncrawl\n\nuser-agent: other\ndisallow: /x", "", "/x", false},
		{"blank line between user-agent and rule", "user-agent: asyncrawl\n\n\ndisallow: /x", "", "/x", false},
		{"sitemap does not end user-agents", "user-agent: asyncrawl\nsitemap: /s.xml\nuser-agent: other\ndisallow: /x", "", "/x", false},
		{"user-agent after rule starts a group", "user-agent: asyncrawl\ndisallow: /y\nuser-agent: other\ndisallow: /x", "", "/x", true},
		{"user-agent after crawl-delay is of the same group", "user-agent: asyncrawl\ncrawl-delay: 1\nuser-agent: other\ndisallow: /x", "", "/x", false},
		{"user-agent after a rule starts a group", "user-agent: asyncrawl\ncrawl-delay: 1\nallow: /y\nuser-agent: other\ndisallow: /x", "", "/x", true},
		{"star and name in one group", "user-agent: *\nuser-agent: asyncrawl\ndisallow: /x", "", "/x", false},
		{"star with trailing words", "user-agent: * everyone\ndisallow: /x", "", "/x", false},
		{"star glued to text is not star", "user-agent: *bot\ndisallow: /x", "", "/x", true},
		{"empty user-agent value", "user-agent:\ndisallow: /x", "", "/x", true},
		{"empty product token matches nothing", "user-agent: /1.0\ndisallow: /x", "/1.0", "/x", true},
	})
}

// TestRobotsRules checks allow, disallow and their precedence (RFC 9309,
// section 2.2.2).
func TestRobotsRules(t *testing.T) {
	runRobotsCases(t, []robotsCase{
		{"disallow prefix", "user-agent: *\ndisallow: /a", "", "/ab/c", false},
		{"disallow other path", "user-agent: *\ndisallow: /a", "", "/b", true},
		{"case-sensitive path", "user-agent: *\ndisallow: /a", "", "/A", true},
		{"empty disallow is no rule", "user-agent: *\ndisallow:\ndisallow: /x", "", "/y", true},
		{"empty disallow alone", "user-agent: *\ndisallow:", "", "/", true},
		{"empty allow is no rule", "user-agent: *\nallow:\ndisallow: /", "", "/x", false},
		{"disallow all", "user-agent: *\ndisallow: /", "", "/", false},
		{"query counts", "user-agent: *\ndisallow: /a?b=", "", "/a?b=1", false},
		{"query differs", "user-agent: *\ndisallow: /a?b=", "", "/a?c=1", true},
		// Section 2.2.2: the longest match wins.
		{"longer allow wins", "user-agent: *\ndisallow: /a\nallow: /a/b", "", "/a/b/c", true},
		{"longer disallow wins", "user-agent: *\nallow: /a\ndisallow: /a/b", "", "/a/b/c", false},
		{"longer wins whatever the order", "user-agent: *\nallow: /a/b\ndisallow: /a", "", "/a/b", true},
		{"shorter only matches", "user-agent: *\ndisallow: /a\nallow: /a/b", "", "/a/c", false},
		// Section 2.2.2: on a tie the least restrictive rule, allow.
		{"tie allow first", "user-agent: *\nallow: /a\ndisallow: /a", "", "/a", true},
		{"tie disallow first", "user-agent: *\ndisallow: /a\nallow: /a", "", "/a", true},
		// Length is in octets of the pattern, wildcards included.
		{"wildcard counts in length", "user-agent: *\nallow: /a\ndisallow: /*a", "", "/a", false},
		{"length of normalised pattern", "user-agent: *\ndisallow: /%7Ea\nallow: /~a", "", "/~a", true},
		{"non-ASCII counted escaped", "user-agent: *\nallow: /aé\ndisallow: /a%C3%A9", "", "/a%C3%A9", true},
		// Section 2.2.3: "*" and "$".
		{"star in middle", "user-agent: *\ndisallow: /a*c", "", "/abbbc/d", false},
		{"star in middle no match", "user-agent: *\ndisallow: /a*c", "", "/abbb", true},
		{"star matches empty", "user-agent: *\ndisallow: /a*c", "", "/ac", false},
		{"leading star", "user-agent: *\ndisallow: *.php", "", "/x/y.php?z", false},
		{"trailing star same as none", "user-agent: *\ndisallow: /a*", "", "/a", false},
		{"dollar anchors", "user-agent: *\ndisallow: /*.php$", "", "/x.php", false},
		{"dollar anchors no match", "user-agent: *\ndisallow: /*.php$", "", "/x.php?y", true},
		{"dollar only at end", "user-agent: *\ndisallow: /a$b", "", "/a$bc", false},
		{"dollar in middle literal", "user-agent: *\ndisallow: /a$b", "", "/a", true},
		{"root only", "user-agent: *\ndisallow: /$", "", "/", false},
		{"root only not below", "user-agent: *\ndisallow: /$", "", "/a", true},
		{"anchored literal exact", "user-agent: *\ndisallow: /a$", "", "/a", false},
		{"anchored literal longer", "user-agent: *\ndisallow: /a$", "", "/ab", true},
		{"anchored last part after others", "user-agent: *\ndisallow: /*ab*ba$", "", "/aba", true},
		{"anchored last part after others match", "user-agent: *\ndisallow: /*ab*ba$", "", "/abba", false},
		{"greedy parts leftmost", "user-agent: *\ndisallow: /*a*b*c", "", "/xaxbxaxc", false},
		{"star and dollar alone", "user-agent: *\ndisallow: *$", "", "/anything", false},
		{"allow all with star overrides shorter", "user-agent: *\ndisallow: /\nallow: /*", "", "/x", true},
		// A disallow without a leading "/" is read as if it had one, to
		// the cautious side (Google's parser lets it match nothing); an
		// allow without one, which would let in more, and a disallow of
		// "$" alone, which would keep out the root, are ignored.
		{"missing slash", "user-agent: *\ndisallow: private/", "", "/private/x", false},
		{"missing slash allow", "user-agent: *\ndisallow: /p\nallow: public/", "", "/public/a", false},
		{"missing slash allow star", "user-agent: *\ndisallow: /p\nallow: */public/", "", "/public/a", true},
		{"missing slash dollar", "user-agent: *\ndisallow: $", "", "/", true},
		{"missing slash dollar below", "user-agent: *\ndisallow: $", "", "/x", true},
		// Section 2.2.2: /robots.txt is always allowed.
		{"robots.txt allowed", "user-agent: *\ndisallow: /", "", "/robots.txt", true},
		{"robots.txt allowed explicitly disallowed", "user-agent: *\ndisallow: /robots.txt", "", "/robots.txt", true},
		{"robots.txt escaped", "user-agent: *\ndisallow: /", "", "/robots%2Etxt", true},
		{"robots.txt with query not exempt", "user-agent: *\ndisallow: /", "", "/robots.txt?x", false},
		{"empty path is root", "user-agent: *\ndisallow: /$", "", "", false},
	})
}

// TestRobotsPercentEncoding checks that patterns and paths compare after
// normalising their percent-encoding (RFC 9309, section 2.2.2, and the
// table of examples there).
func TestRobotsPercentEncoding(t *testing.T) {
	runRobotsCases(t, []robotsCase{
		{"escaped unreserved in path", "user-agent: *\ndisallow: /foo/bar/baz", "", "/foo/bar/%62%61%7A", false},
		{"escaped unreserved in pattern", "user-agent: *\ndisallow: /foo/bar/%62%61%7A", "", "/foo/bar/baz", false},
		{"non-ASCII in pattern", "user-agent: *\ndisallow: /foo/bar/ツ", "", "/foo/bar/%E3%83%84", false},
		{"non-ASCII in path", "user-agent: *\ndisallow: /foo/bar/%E3%83%84", "", "/foo/bar/ツ", false},
		{"hex case-insensitive", "user-agent: *\ndisallow: /a%2fb", "", "/a%2Fb", false},
		{"hex case-insensitive reverse", "user-agent: *\ndisallow: /a%2Fb", "", "/a%2fb", false},
		{"reserved escape is not the character", "user-agent: *\ndisallow: /a%2Fb", "", "/a/b", true},
		{"reserved character is not its escape", "user-agent: *\ndisallow: /a/b", "", "/a%2Fb", true},
		{"escaped star is literal", "user-agent: *\ndisallow: /a%2Ab", "", "/axb", true},
		{"escaped star matches escape", "user-agent: *\ndisallow: /a%2Ab", "", "/a%2ab", false},
		{"escaped dollar is literal", "user-agent: *\ndisallow: /a%24", "", "/a%24x", false},
		// RFC 9309, section 2.2.3: a special character is matched
		// verbatim by its escape.
		{"RFC escaped star matches the star", "user-agent: *\ndisallow: /path/file-with-a-%2A.html", "", "/path/file-with-a-*.html", false},
		{"RFC escaped dollar matches the dollar", "user-agent: *\ndisallow: /path/foo-%24", "", "/path/foo-$", false},
		{"escaped dollar is not an end", "user-agent: *\ndisallow: /path/foo-%24", "", "/path/foo-$x", false},
		{"escaped star is no wildcard", "user-agent: *\ndisallow: /a%2A", "", "/ab", true},
		{"star in the query", "user-agent: *\ndisallow: /q?x=%2A", "", "/q?x=*", false},
		{"wildcard matches a star", "user-agent: *\ndisallow: /a*c", "", "/a*c", false},
		{"dollar inside a pattern is literal", "user-agent: *\ndisallow: /a$b", "", "/a$b", false},
		{"dollar inside a pattern is not an end", "user-agent: *\ndisallow: /a$b", "", "/a", true},
		{"final dollar ends", "user-agent: *\ndisallow: /a$", "", "/a$", true},
		{"space in pattern", "user-agent: *\ndisallow: /a b", "", "/a%20b", false},
		{"lone percent", "user-agent: *\ndisallow: /100%", "", "/100%25", false},
		{"lone percent in path", "user-agent: *\ndisallow: /100%25", "", "/100%", false},
		{"percent cut short", "user-agent: *\ndisallow: /a%4", "", "/a%254", false},
	})
}

// TestRobotsRFCEncodingExamples checks each example of the table in RFC
// 9309, section 2.2.2: a rule with the path of the first column is
// compared in the encoded form of the second and matches the path of the
// third, whichever of the three forms the rule or the URL is written in.
func TestRobotsRFCEncodingExamples(t *testing.T) {
	for _, ex := range []struct{ path, encoded, match string }{
		{"/foo/bar?baz=quz", "/foo/bar?baz=quz", "/foo/bar?baz=quz"},
		{"/foo/bar/ツ", "/foo/bar/%E3%83%84", "/foo/bar/%E3%83%84"},
		{"/foo/bar/%E3%83%84", "/foo/bar/%E3%83%84", "/foo/bar/%E3%83%84"},
		{"/foo/bar/%62%61%7A", "/foo/bar/%62%61%7A", "/foo/bar/baz"},
	} {
		t.Run(ex.path, func(t *testing.T) {
			// The escaped form of each column is the escaped form of the
			// third: the one form rules and paths are compared in.
			want := robotsEscape(ex.match)
			for _, s := range []string{ex.path, ex.encoded, ex.match} {
				if got := robotsEscape(s); got != want {
					t.Errorf("robotsEscape(%q) = %q, want %q", s, got, want)
				}
			}
			// A rule in any of the three forms decides a URL in any of
			// them: an allow overriding "Disallow: /", and a disallow.
			for _, rule := range []string{ex.path, ex.encoded, ex.match} {
				for _, url := range []string{ex.path, ex.encoded, ex.match} {
					allow := "user-agent: *\ndisallow: /\nallow: " + rule
					if got := Parse([]byte(allow), userAgent, maxDelay).Allowed(url); !got {
						t.Errorf("Parse(%q).allowed(%q) = false, want true", allow, url)
					}
					deny := "user-agent: *\ndisallow: " + rule
					if got := Parse([]byte(deny), userAgent, maxDelay).Allowed(url); got {
						t.Errorf("Parse(%q).allowed(%q) = true, want false", deny, url)
					}
				}
			}
		})
	}
	// The encoded forms stay apart from paths that differ from them.
	runRobotsCases(t, []robotsCase{
		{"query differs", "user-agent: *\ndisallow: /foo/bar?baz=quz", "", "/foo/bar?baz=qux", true},
		{"other character", "user-agent: *\ndisallow: /foo/bar/ツ", "", "/foo/bar/%E3%83%85", true},
		{"lower-case escape of the character", "user-agent: *\ndisallow: /foo/bar/ツ", "", "/foo/bar/%e3%83%84", false},
		{"decoded unreserved is not another word", "user-agent: *\ndisallow: /foo/bar/%62%61%7A", "", "/foo/bar/bar", true},
	})
}

// robotsWildCase is a robots.txt and, for userAgent (or ua, when
// set), the paths it must disallow and those it must allow.
type robotsWildCase struct {
	name       string
	body       string
	ua         string
	disallowed []string
	allowed    []string
}

// TestRobotsInTheWild checks the lines that RFC 9309 does not define but
// that robots.txt files in the wild contain and Google's open-source
// parser reads as their writers meant: misspelt keys, a space instead of
// the colon, a partial byte order mark, and a user-agent value with more
// than a product token.
func TestRobotsInTheWild(t *testing.T) {
	for _, c := range []robotsWildCase{
		// Misspellings of user-agent, and any case.
		{name: "useragent", body: "useragent: asyncrawl\ndisallow: /x", disallowed: []string{"/x"}, allowed: []string{"/y"}},
		{name: "user agent", body: "user agent: asyncrawl\ndisallow: /x", disallowed: []string{"/x"}, allowed: []string{"/y"}},
		{name: "USER AGENT", body: "USER AGENT: *\ndisallow: /x", disallowed: []string{"/x"}},
		{name: "UserAgent", body: "UserAgent: *\ndisallow: /x", disallowed: []string{"/x"}},
		{name: "useragent starts a group", body: "user-agent: asyncrawl\ndisallow: /x\nuseragent: other\ndisallow: /y", disallowed: []string{"/x"}, allowed: []string{"/y"}},
		{name: "user agent other crawler", body: "user agent: googlebot\ndisallow: /x", allowed: []string{"/x"}},
		// Misspellings of disallow, and any case.
		{name: "disalow", body: "user-agent: *\ndisalow: /x", disallowed: []string{"/x"}, allowed: []string{"/y"}},
		{name: "dissallow", body: "user-agent: *\ndissallow: /x", disallowed: []string{"/x"}, allowed: []string{"/y"}},
		{name: "dissalow", body: "user-agent: *\ndissalow: /x", disallowed: []string{"/x"}, allowed: []string{"/y"}},
		{name: "diasllow", body: "user-agent: *\ndiasllow: /x", disallowed: []string{"/x"}, allowed: []string{"/y"}},
		{name: "disallaw", body: "user-agent: *\ndisallaw: /x", disallowed: []string{"/x"}, allowed: []string{"/y"}},
		{name: "DisAlow", body: "user-agent: *\nDisAlow: /x", disallowed: []string{"/x"}},
		{name: "misspelling is a member", body: "user-agent: asyncrawl\ndisalow: /x\nuser-agent: other\ndisallow: /y", disallowed: []string{"/x"}, allowed: []string{"/y"}},
		{name: "misspelling loses to longer allow", body: "user-agent: *\ndissallow: /a\nallow: /a/b", disallowed: []string{"/a/c"}, allowed: []string{"/a/b"}},
		{name: "other misspellings not read", body: "user-agent: *\ndisalloww: /a\ndisallo: /b\nalow: /\ndisallow: /", disallowed: []string{"/a", "/b", "/c"}},
		// A space instead of the colon, for the known keys.
		{name: "disallow space", body: "user-agent: *\ndisallow /x", disallowed: []string{"/x"}, allowed: []string{"/y"}},
		{name: "disallow tab", body: "user-agent: *\ndisallow\t/x", disallowed: []string{"/x"}, allowed: []string{"/y"}},
		{name: "allow space", body: "user-agent: *\ndisallow: /\nallow /x", disallowed: []string{"/y"}, allowed: []string{"/x"}},
		{name: "user-agent space", body: "user-agent asyncrawl\ndisallow: /x", disallowed: []string{"/x"}, allowed: []string{"/y"}},
		{name: "user-agent space star", body: "user-agent *\ndisallow /x", disallowed: []string{"/x"}},
		{name: "useragent space", body: "useragent asyncrawl\ndisallow /x", disallowed: []string{"/x"}},
		{name: "misspelling space", body: "user-agent: *\ndissallow /x", disallowed: []string{"/x"}},
		{name: "space and comment", body: "user-agent: *\ndisallow /x # private", disallowed: []string{"/x"}, allowed: []string{"/y"}},
		{name: "space with colon in value", body: "user-agent: *\ndisallow /a:b", disallowed: []string{"/a:b"}, allowed: []string{"/a"}},
		{name: "unknown key space", body: "user-agent: *\nnoindex /x\ndisallow: /y", allowed: []string{"/x"}, disallowed: []string{"/y"}},
		{name: "free text not read", body: "user-agent: *\nallow me to explain\ndisallow /", disallowed: []string{"/me", "/"}},
		{name: "free text with colon not read", body: "user-agent: *\nallow me: /x\ndisallow: /", disallowed: []string{"/x", "/me:"}},
		{name: "user agent space not read", body: "user agent asyncrawl\ndisallow: /x", allowed: []string{"/x"}},
		{name: "key alone not read", body: "user-agent: *\ndisallow\ndisallow: /y", allowed: []string{"/x", "/disallow"}},
		// A byte order mark, whole or its first octets only.
		{name: "BOM", body: "\xef\xbb\xbfuser-agent: *\ndisallow: /x", disallowed: []string{"/x"}},
		{name: "BOM first two octets", body: "\xef\xbbuser-agent: *\ndisallow: /x", disallowed: []string{"/x"}},
		{name: "BOM first octet", body: "\xefuser-agent: *\ndisallow: /x", disallowed: []string{"/x"}},
		{name: "BOM not at start", body: "\nuser-agent: *\n\xef\xbbdisallow: /x\ndisallow: /y", allowed: []string{"/x"}, disallowed: []string{"/y"}},
		{name: "BOM twice", body: "\xef\xbb\xbf\xef\xbb\xbfuser-agent: *\ndisallow: /x", allowed: []string{"/x"}},
		{name: "BOM wrong second octet", body: "\xef\xbfuser-agent: *\ndisallow: /x", allowed: []string{"/x"}},
		// A user-agent value's product token.
		{name: "token before space", body: "user-agent: asyncrawl extra words\ndisallow: /x", disallowed: []string{"/x"}},
		{name: "token before tab", body: "user-agent: asyncrawl\tx\ndisallow: /x", disallowed: []string{"/x"}},
		{name: "token before slash", body: "user-agent: asyncrawl/1.0 (+https://x)\ndisallow: /x", disallowed: []string{"/x"}},
		{name: "token before space, space key", body: "useragent: AsyncRawl bot\ndisallow: /x", disallowed: []string{"/x"}},
		{name: "custom crawler, misspelt keys", body: "user agent: mybot\ndisalow /x", ua: "MyBot/1.0", disallowed: []string{"/x"}, allowed: []string{"/y"}},
		{name: "other token before space", body: "user-agent: googlebot asyncrawl\ndisallow: /x", allowed: []string{"/x"}},
		// The other keys, spelt as Google reads them.
		{name: "crawl-delay space", body: "user-agent: *\ncrawl-delay 1\nallow: /y\nuser-agent: other\ndisallow: /x", allowed: []string{"/x"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ua := c.ua
			if ua == "" {
				ua = userAgent
			}
			r := Parse([]byte(c.body), ua, maxDelay)
			for _, p := range c.disallowed {
				if r.Allowed(p) {
					t.Errorf("Parse(%q, %q).allowed(%q) = true, want false", c.body, ua, p)
				}
			}
			for _, p := range c.allowed {
				if !r.Allowed(p) {
					t.Errorf("Parse(%q, %q).allowed(%q) = false, want true", c.body, ua, p)
				}
			}
		})
	}
}

// TestRobotsWildKeys checks the other keys' spellings through what they
// set: crawl-delay and sitemap, with a space instead of the colon, and
// site-map.
func TestRobotsWildKeys(t *testing.T) {
	body := "user-agent: *\ncrawl-delay 3\n" +
		"site-map: https://example.com/a.xml\n" +
		"Site-Map https://example.com/b.xml\n" +
		"sitemap https://example.com/c.xml\n" +
		"sitemap https://example.com/d.xml and more\n" +
		"sitemaps: https://example.com/e.xml"
	r := Parse([]byte(body), userAgent, maxDelay)
	if got, want := r.CrawlDelay(), 3*time.Second; got != want {
		t.Errorf("Parse(%q).crawlDelay() = %v, want %v", body, got, want)
	}
	want := []string{"https://example.com/a.xml", "https://example.com/b.xml", "https://example.com/c.xml"}
	if got := r.Sitemaps(); !slices.Equal(got, want) {
		t.Errorf("Parse(%q).sitemaps() = %q, want %q", body, got, want)
	}
}

func TestRobotsEscape(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"/plain/path?q=1&r=2", "/plain/path?q=1&r=2"},
		{"/%7euser", "/~user"},
		{"/%7E%2d%2E%5f%41%7a%30", "/~-._Az0"},
		{"/%2f%3a%c3%a9", "/%2F%3A%C3%A9"},
		{"/é", "/%C3%A9"},
		{"/a b\t\"<>[\\]^`{|}\x7f", "/a%20b%09%22%3C%3E%5B%5C%5D%5E%60%7B%7C%7D%7F"},
		{"/*$!'()+,;=:@&", "/*$!'()+,;=:@&"},
		{"/100%", "/100%25"},
		{"/%zz", "/%25zz"},
		{"/%", "/%25"},
		{"/%4", "/%254"},
		{"/%0%61", "/%250a"},
		{"", ""},
	} {
		if got := robotsEscape(c.in); got != c.want {
			t.Errorf("robotsEscape(%q) = %q, want %q", c.in, got, c.want)
		}
		if got := robotsEscape(c.want); got != c.want {
			t.Errorf("robotsEscape(%q) = %q, want it unchanged (idempotent)", c.want, got)
		}
	}
}

func TestRobotsCrawlDelay(t *testing.T) {
	for _, c := range []struct {
		name string
		body string
		want time.Duration
	}{
		{"none", "user-agent: *\ndisallow: /", 0},
		{"integer", "user-agent: *\ncrawl-delay: 10", 10 * time.Second},
		{"fraction", "user-agent: *\ncrawl-delay: 0.5", 500 * time.Millisecond},
		{"leading dot", "user-agent: *\ncrawl-delay: .25", 250 * time.Millisecond},
		{"trailing dot", "user-agent: *\ncrawl-delay: 2.", 2 * time.Second},
		{"zero", "user-agent: *\ncrawl-delay: 0", 0},
		{"key case", "user-agent: *\nCRAWL-DELAY: 3", 3 * time.Second},
		{"capped", "user-agent: *\ncrawl-delay: 3600", maxDelay},
		{"huge capped", "user-agent: *\ncrawl-delay: 1" + strings.Repeat("0", 400), maxDelay},
		{"negative ignored", "user-agent: *\ncrawl-delay: -5", 0},
		{"plus ignored", "user-agent: *\ncrawl-delay: +5", 0},
		{"exponent ignored", "user-agent: *\ncrawl-delay: 1e3", 0},
		{"unit ignored", "user-agent: *\ncrawl-delay: 5 seconds", 0},
		{"words ignored", "user-agent: *\ncrawl-delay: soon", 0},
		{"inf ignored", "user-agent: *\ncrawl-delay: inf", 0},
		{"two dots ignored", "user-agent: *\ncrawl-delay: 1.2.3", 0},
		{"lone dot ignored", "user-agent: *\ncrawl-delay: .", 0},
		{"empty ignored", "user-agent: *\ncrawl-delay:", 0},
		{"garbage does not hide valid", "user-agent: *\ncrawl-delay: x\ncrawl-delay: 4", 4 * time.Second},
		{"largest of group", "user-agent: *\ncrawl-delay: 4\ncrawl-delay: 2", 4 * time.Second},
		{"largest of combined groups", "user-agent: asyncrawl\ncrawl-delay: 2\nuser-agent: asyncrawl\ncrawl-delay: 7", 7 * time.Second},
		{"largest of combined groups first", "user-agent: asyncrawl\ncrawl-delay: 7\nuser-agent: asyncrawl\ncrawl-delay: 2", 7 * time.Second},
		{"named group's not star's", "user-agent: *\ncrawl-delay: 9\ndisallow: /p\nuser-agent: asyncrawl\ncrawl-delay: 1", 1 * time.Second},
		{"named group without delay", "user-agent: *\ncrawl-delay: 9\ndisallow: /p\nuser-agent: asyncrawl\ndisallow: /x", 0},
		// A crawl-delay line does not end the user-agent lines: its
		// delay is the whole group's, a user-agent line after it too.
		{"one group, star then named", "user-agent: *\ncrawl-delay: 9\nuser-agent: asyncrawl\ncrawl-delay: 1", 9 * time.Second},
		{"crawl-delay key and value split by a space", "user-agent: *\ncrawl-delay 3", 3 * time.Second},
		{"delay before the named user-agent line", "user-agent: other\ncrawl-delay: 4\nuser-agent: asyncrawl\ndisallow: /x", 4 * time.Second},
		{"other group's ignored", "user-agent: googlebot\ncrawl-delay: 9", 0},
		{"before any group ignored", "crawl-delay: 9\nuser-agent: *\ndisallow: /", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Parse([]byte(c.body), userAgent, maxDelay).CrawlDelay(); got != c.want {
				t.Errorf("Parse(%q).crawlDelay() = %v, want %v", c.body, got, c.want)
			}
		})
	}
}

// TestRobotsSitemaps checks that Sitemap lines are kept wherever they
// stand (RFC 9309, section 2.2.4: they are not part of any group).
func TestRobotsSitemaps(t *testing.T) {
	body := "Sitemap: https://example.com/a.xml\n" +
		"user-agent: googlebot\n" +
		"SITEMAP:   http://other.example/B.xml?x=1   # comment\n" +
		"disallow: /\n" +
		"sitemap:\n" +
		"user-agent: *\n" +
		"sitemap: /relative.xml\r\n" +
		"sitemap: https://example.com/%7Ec.xml"
	want := []string{
		"https://example.com/a.xml",
		"http://other.example/B.xml?x=1",
		"/relative.xml",
		"https://example.com/%7Ec.xml",
	}
	r := Parse([]byte(body), userAgent, maxDelay)
	got := r.Sitemaps()
	if !slices.Equal(got, want) {
		t.Fatalf("sitemaps() = %q, want %q", got, want)
	}
	got[0] = "changed"
	if again := r.Sitemaps(); !slices.Equal(again, want) {
		t.Errorf("sitemaps() after modifying its result = %q, want %q", again, want)
	}
	if got := Parse([]byte("user-agent: *\ndisallow: /"), userAgent, maxDelay).Sitemaps(); len(got) != 0 {
		t.Errorf("sitemaps() of a file without them = %q, want none", got)
	}
}

func TestRobotsNil(t *testing.T) {
	var r *Rules
	for _, p := range []string{"/", "/x", "/robots.txt", ""} {
		if !r.Allowed(p) {
			t.Errorf("nil robots: allowed(%q) = false, want true", p)
		}
	}
	if got := r.CrawlDelay(); got != 0 {
		t.Errorf("nil robots: crawlDelay() = %v, want 0", got)
	}
	if got := r.Sitemaps(); got != nil {
		t.Errorf("nil robots: sitemaps() = %q, want nil", got)
	}
}

func TestProductToken(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{userAgent, "asyncrawl"},
		{"asyncrawl/0.1.0 (+https://github.com/asyncrawl/crawl)", "asyncrawl"},
		{"Googlebot/2.1", "Googlebot"},
		{"Googlebot-News", "Googlebot-News"},
		{"my_bot", "my_bot"},
		{"360Spider", "360Spider"},
		{"  padded/1", "padded"},
		{"bot (compatible)", "bot"},
		{"Mozilla/5.0 (compatible; Foo)", "Mozilla"},
		{"/1.0", ""},
		{"", ""},
	} {
		if got := ProductToken(c.in); got != c.want {
			t.Errorf("productToken(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestAgentToken: the token a crawler obeys robots.txt by is its
// User-Agent's product token, but the one after "compatible;" in a
// browser-style header (RFC 9309's example, section 2.2.1), and the
// groups that apply follow it.
func TestAgentToken(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{userAgent, "asyncrawl"},
		{"Mozilla/5.0 (compatible; ExampleBot/0.1; +https://www.example.com/bot.html)", "ExampleBot"},
		{"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", "Googlebot"},
		{"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm) Chrome/116.0.1938.76 Safari/537.36", "bingbot"},
		{"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36", "Mozilla"},
		{"Mozilla/5.0 (compatible;)", "Mozilla"},
	} {
		if got := AgentToken(c.in); got != c.want {
			t.Errorf("AgentToken(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	body := []byte("User-agent: ExampleBot\nDisallow: /private/\n\nUser-agent: Mozilla\nDisallow: /moz/\n")
	r := Parse(body, "Mozilla/5.0 (compatible; ExampleBot/0.1; +https://www.example.com/bot.html)", maxDelay)
	if r.Allowed("/private/a") || !r.Allowed("/moz/a") {
		t.Errorf("ExampleBot's browser-style User-Agent: /private/a allowed %v, /moz/a allowed %v; want ExampleBot's group: false, true", r.Allowed("/private/a"), r.Allowed("/moz/a"))
	}
}

// TestRobotsManyWildcards checks that a pattern with many "*" does not
// make matching exponential: a backtracking matcher would not finish.
func TestRobotsManyWildcards(t *testing.T) {
	pattern := "/" + strings.Repeat("*a", 40) + "*b"
	body := "user-agent: *\ndisallow: " + pattern + "\ndisallow: " + pattern + "$"
	r := Parse([]byte(body), userAgent, maxDelay)
	path := "/" + strings.Repeat("a", 20000)
	if !r.Allowed(path) {
		t.Errorf("allowed(%d a's) = false, want true: no b", len(path)-1)
	}
	if r.Allowed(path + "b") {
		t.Errorf("allowed(%d a's and b) = true, want false", len(path)-1)
	}
}

// refMatch is a reference for matching one pattern: the plain dynamic
// programme over pattern and path, O(len(pattern)*len(path)).
func refMatch(pattern, path string) bool {
	anchored := strings.HasSuffix(pattern, "$")
	if anchored {
		pattern = pattern[:len(pattern)-1]
	}
	// m[j]: pattern[:i] matches path[:j].
	m := make([]bool, len(path)+1)
	m[0] = true
	for i := 0; i < len(pattern); i++ {
		next := make([]bool, len(path)+1)
		for j := 0; j <= len(path); j++ {
			if pattern[i] == '*' {
				next[j] = m[j] || j > 0 && next[j-1]
			} else {
				next[j] = j > 0 && m[j-1] && path[j-1] == pattern[i]
			}
		}
		m = next
	}
	return !anchored && slices.Contains(m, true) || m[len(path)]
}

// refAllowed is a reference for Rules.Allowed given the rules that
// apply: every rule is tried with refMatch and the longest match of each
// kind compared.
func refAllowed(rules []robotsRule, pathQuery string) bool {
	if pathQuery == "" {
		pathQuery = "/"
	}
	path := pathForm(pathQuery)
	if path == "/robots.txt" {
		return true
	}
	allow, disallow := -1, -1
	for _, rule := range rules {
		if !refMatch(rule.pattern, path) {
			continue
		}
		if rule.allow {
			allow = max(allow, len(rule.pattern))
		} else {
			disallow = max(disallow, len(rule.pattern))
		}
	}
	return allow >= disallow
}

// refRobots is the matcher robotsMatcher replaced, kept as a second
// reference and as the "before" of the benchmarks: the rules in priority
// order (longest pattern first, allow first on ties), each tried in turn
// until one matches, with a prefix test and a strings.Index per wildcard
// part. It costs every rule for a path that none matches.
type refRobots struct {
	rules []refRule
}

// refRule is a rule split at its "*".
type refRule struct {
	allow   bool
	pattern string
	// parts are the literal parts of pattern between its "*", without
	// the final "$"; there is always at least one (maybe empty).
	parts    []string
	anchored bool
}

func newRefRobots(rules []robotsRule) *refRobots {
	r := &refRobots{}
	for _, rule := range rules {
		p := rule.pattern
		ref := refRule{allow: rule.allow, pattern: p}
		if strings.HasSuffix(p, "$") {
			ref.anchored = true
			p = p[:len(p)-1]
		}
		ref.parts = strings.Split(p, "*")
		r.rules = append(r.rules, ref)
	}
	slices.SortStableFunc(r.rules, func(a, b refRule) int {
		if c := len(b.pattern) - len(a.pattern); c != 0 {
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
	return r
}

func (r *refRobots) allowed(pathQuery string) bool {
	if pathQuery == "" {
		pathQuery = "/"
	}
	path := pathForm(pathQuery)
	if path == "/robots.txt" {
		return true
	}
	for i := range r.rules {
		if r.rules[i].matches(path) {
			return r.rules[i].allow
		}
	}
	return true
}

// matches matches each literal part after the first at its leftmost place
// after the one before.
func (rule *refRule) matches(path string) bool {
	parts := rule.parts
	if !strings.HasPrefix(path, parts[0]) {
		return false
	}
	if len(parts) == 1 {
		return !rule.anchored || len(path) == len(parts[0])
	}
	pos := len(parts[0])
	last := len(parts) - 1
	for _, part := range parts[1:last] {
		i := strings.Index(path[pos:], part)
		if i < 0 {
			return false
		}
		pos += i + len(part)
	}
	if rule.anchored {
		return len(path)-pos >= len(parts[last]) && strings.HasSuffix(path, parts[last])
	}
	return strings.Contains(path[pos:], parts[last])
}

// words returns every word of up to n octets of alphabet.
func words(alphabet string, n int) []string {
	all := []string{""}
	for prev := all; n > 0; n-- {
		var next []string
		for _, w := range prev {
			for _, c := range alphabet {
				next = append(next, w+string(c))
			}
		}
		all, prev = append(all, next...), next
	}
	return all
}

// TestRobotsMatchExhaustive compares a matcher of one rule with refMatch
// on every pattern of up to five octets of "a", "b", "*" and "$" and every
// path of up to five octets of "a" and "b", where the overlaps that a
// greedy matcher could get wrong ("/*ab*ba$" and "/aba") all occur.
func TestRobotsMatchExhaustive(t *testing.T) {
	paths := words("ab", 5)
	for _, p := range words("ab*$", 5) {
		m := newRobotsMatcher([]robotsRule{newRobotsRule(false, "/"+p)})
		for _, path := range paths {
			if got, want := !m.allowed("/"+path), refMatch("/"+p, "/"+path); got != want {
				t.Errorf("pattern %q matches %q: got %v, want %v", "/"+p, "/"+path, got, want)
			}
		}
	}
}

// TestRobotsMatchPairs compares the matcher with refAllowed on every pair
// of an allow and a disallow rule of up to three octets of "a", "b", "*"
// and "$" after the "/", where priorities tie, prefixes nest and literal
// and wildcard rules share trie nodes, on every path of up to four octets.
func TestRobotsMatchPairs(t *testing.T) {
	patterns := words("ab*$", 3)
	paths := words("ab", 4)
	for _, a := range patterns {
		for _, d := range patterns {
			rules := []robotsRule{newRobotsRule(true, "/"+a), newRobotsRule(false, "/"+d)}
			m := newRobotsMatcher(rules)
			for _, path := range paths {
				if got, want := m.allowed("/"+path), refAllowed(rules, "/"+path); got != want {
					t.Errorf("allow %q, disallow %q: allowed(%q) = %v, want %v", "/"+a, "/"+d, "/"+path, got, want)
				}
			}
		}
	}
}

// randomRules returns up to max rules made of a few stems, so that
// prefixes are shared and nest, and of "*" and "$"; one in eight has a
// literal part longer than robotsLongPart, for the Knuth-Morris-Pratt
// search.
func randomRules(rng *rand.Rand, max int) []robotsRule {
	stems := []string{"/", "/a", "/ab", "/a/b", "/b", "*", "/a*", "/$"}
	pieces := []string{"a", "b", "/", "ab", "ba", "*", "*", "$", "c"}
	long := strings.Repeat("ab", robotsLongPart/2) + "a"
	rules := make([]robotsRule, 1+rng.IntN(max))
	for i := range rules {
		p := stems[rng.IntN(len(stems))]
		for range rng.IntN(5) {
			p += pieces[rng.IntN(len(pieces))]
		}
		if rng.IntN(8) == 0 {
			p += "*" + long + pieces[rng.IntN(len(pieces))]
		}
		if rng.IntN(4) == 0 {
			p += "$"
		}
		rules[i] = newRobotsRule(rng.IntN(2) == 0, p)
	}
	return rules
}

// randomPath returns a path of "a", "b", "/", "c" and "$", sometimes with a
// long run of "ab" for the long parts of randomRules.
func randomPath(rng *rand.Rand) string {
	const alphabet = "ab/c$"
	var b strings.Builder
	b.WriteByte('/')
	for range rng.IntN(8) {
		b.WriteByte(alphabet[rng.IntN(len(alphabet))])
	}
	if rng.IntN(4) == 0 {
		b.WriteString(strings.Repeat("ab", robotsLongPart/2+rng.IntN(3)-1))
		for range rng.IntN(4) {
			b.WriteByte(alphabet[rng.IntN(len(alphabet))])
		}
	}
	return b.String()
}

// TestRobotsMatcherRandom compares the matcher with the matcher it
// replaced (refRobots) and with refAllowed on random rule sets and paths.
func TestRobotsMatcherRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(9309, 1))
	for range 3000 {
		rules := randomRules(rng, 12)
		m, old := newRobotsMatcher(rules), newRefRobots(rules)
		for range 30 {
			path := randomPath(rng)
			got := m.allowed(pathForm(path))
			if want := old.allowed(path); got != want {
				t.Fatalf("rules %+v: allowed(%q) = %v, want %v (refRobots)", rules, path, got, want)
			}
			if want := refAllowed(rules, path); got != want {
				t.Fatalf("rules %+v: allowed(%q) = %v, want %v (refAllowed)", rules, path, got, want)
			}
		}
	}
}

// FuzzRobotsMatcher compares the matcher with refRobots and refAllowed.
// Each line of rules is a rule: a disallow, or an allow if it starts with
// "+"; empty values are skipped, as the parser skips them.
func FuzzRobotsMatcher(f *testing.F) {
	f.Add("/a\n+/a/b\n/*.php$", "/a/b.php")
	f.Add("+/*ab*ba$\n/ab", "/aba")
	f.Add("/$\n+*\n/a*$", "/")
	f.Add("*"+strings.Repeat("xy", 40)+"z\n+/x", "/"+strings.Repeat("xy", 41)+"z")
	f.Add("/%7Ea\n+/~a*b\n/a%2fb", "/%7ea%2Fb")
	f.Add("*2", "$") // a path's $ is %24 (RFC 9309, section 2.2.3), for the references too
	f.Fuzz(func(t *testing.T, lines, path string) {
		var rules []robotsRule
		for _, l := range strings.Split(lines, "\n") {
			allow := strings.HasPrefix(l, "+")
			if allow {
				l = l[1:]
			}
			if l != "" {
				rules = append(rules, newRobotsRule(allow, l))
			}
		}
		if len(rules) == 0 {
			return
		}
		m, old := newRobotsMatcher(rules), newRefRobots(rules)
		r := &Rules{match: m}
		for _, p := range []string{path, "/" + path} {
			got := r.Allowed(p)
			if want := old.allowed(p); got != want {
				t.Errorf("rules %+v: allowed(%q) = %v, want %v (refRobots)", rules, p, got, want)
			}
			// Keep the quadratic reference to inputs it checks quickly.
			if len(p) <= 256 && len(lines) <= 4096 {
				if want := refAllowed(rules, p); got != want {
					t.Errorf("rules %+v: allowed(%q) = %v, want %v (refAllowed)", rules, p, got, want)
				}
			}
		}
	})
}

func TestKMPIndex(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		s := randomAB(rng, 1+rng.IntN(8))
		text := randomAB(rng, rng.IntN(40))
		if got, want := kmpIndex(text, s, kmpTable(s)), strings.Index(text, s); got != want {
			t.Fatalf("kmpIndex(%q, %q) = %d, want %d", text, s, got, want)
		}
	}
}

func randomAB(rng *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = "ab"[rng.IntN(2)]
	}
	return string(b)
}

// robotsLines splits a body into lines as Parse does, for the
// fuzz target's reordering.
func robotsLines(body string) []string {
	return strings.FieldsFunc(body, func(c rune) bool { return c == '\r' || c == '\n' })
}

func FuzzParseRobots(f *testing.F) {
	for _, seed := range []struct{ body, path string }{
		{"", "/"},
		{"user-agent: *\ndisallow: /", "/x"},
		{"User-agent: asyncrawl/1.0\nAllow: /a/b\nDisallow: /a\nCrawl-delay: 2.5\nSitemap: https://e.com/s.xml", "/a/b?c"},
		{"\ufeffuser-agent: *\r\ndisallow: /*.php$\r\nallow: /p*q*r$\r\n", "/x.php"},
		{"user-agent: *\ndisallow: /%7Ea/%E3%83%84\nallow: /~a/ツ/b", "/~a/%e3%83%84/b"},
		{"user-agent: *\ndisallow: /*a*a*a*a*a*a*a*a*a*a*b", "/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"},
		{"user-agent: *\ndisallow: private\ndisallow: $\nallow: *$\ncrawl-delay: 99999", "/private"},
		{"user-agent: a\nuser-agent: *\n# c\ndisallow: /100%\ncrawl-delay: .5\nuser-agent: b\nallow: /", "/100%25"},
		{"disallow: /\nuser-agent:*\nallow:/$\ndisallow:/", "/"},
		{"\xef\xbbuseragent asyncrawl\ndisalow /x\nuser agent: *\ndiasllow: /\nsite-map https://e.com/s.xml", "/x"},
		{"\xefUser-Agent *\nAllow /a:b\ncrawl-delay 1\nallow me to explain: /x", "/a:b"},
	} {
		f.Add(seed.body, seed.path)
	}
	f.Fuzz(func(t *testing.T, body, path string) {
		r := Parse([]byte(body), userAgent, maxDelay)
		applied, _, _ := readRobots([]byte(body), userAgent, maxDelay)
		if !r.Allowed("/robots.txt") {
			t.Errorf("Parse(%q).allowed(\"/robots.txt\") = false, want true", body)
		}
		if d := r.CrawlDelay(); d < 0 || d > maxDelay {
			t.Errorf("Parse(%q).crawlDelay() = %v, want within [0, %v]", body, d, maxDelay)
		}
		for _, p := range []string{path, "/" + path, "/"} {
			got := r.Allowed(p)
			// Keep the quadratic reference to inputs it checks quickly.
			if len(p) <= 256 && len(body) <= 4096 {
				if want := refAllowed(applied, p); got != want {
					t.Errorf("Parse(%q).allowed(%q) = %v, reference says %v", body, p, got, want)
				}
			}
		}
		// The answer must not depend on the order of a group's rules:
		// put the lines that are not user-agent lines in one group, in
		// the order given and reversed.
		var rules []string
		for _, l := range robotsLines(body) {
			if key, _ := robotsLine([]byte(l)); key != keyUserAgent {
				rules = append(rules, l)
			}
		}
		forward := Parse([]byte("user-agent: *\n"+strings.Join(rules, "\n")), userAgent, maxDelay)
		slices.Reverse(rules)
		backward := Parse([]byte("user-agent: *\n"+strings.Join(rules, "\n")), userAgent, maxDelay)
		for _, p := range []string{path, "/" + path} {
			if a, b := forward.Allowed(p), backward.Allowed(p); a != b {
				t.Errorf("rules %+v: allowed(%q) = %v in this order, %v reversed", rules, p, a, b)
			}
		}
		if a, b := forward.CrawlDelay(), backward.CrawlDelay(); a != b {
			t.Errorf("rules %q: crawlDelay() = %v in this order, %v reversed", rules, a, b)
		}
	})
}

// benchRobots is a robots.txt of the size and shape of a large site's.
const benchRobots = `# robots.txt for a large site
User-agent: Googlebot
Disallow: /search
Allow: /search/about
Disallow: /sdch
Disallow: /groups
Disallow: /index.html?
Disallow: /?
Allow: /?hl=

User-agent: *
Disallow: /search
Allow: /search/about
Allow: /search/static
Allow: /search/howsearchworks
Disallow: /sdch
Disallow: /groups
Disallow: /index.html?
Disallow: /?
Allow: /?hl=
Disallow: /?hl=*&
Allow: /?hl=*&gws_rd=ssl$
Disallow: /?hl=*&*&gws_rd=ssl
Allow: /?gws_rd=ssl$
Allow: /?pt1=true$
Disallow: /imgres
Disallow: /u/
Disallow: /preferences
Disallow: /setprefs
Disallow: /default
Disallow: /m?
Disallow: /m/
Allow: /m/finance
Disallow: /wml?
Disallow: /wml/?
Disallow: /wml/search?
Disallow: /xhtml?
Disallow: /xhtml/?
Disallow: /xhtml/search?
Disallow: /xml?
Disallow: /imode?
Disallow: /imode/?
Disallow: /imode/search?
Disallow: /jsky?
Disallow: /jsky/?
Disallow: /jsky/search?
Disallow: /pda?
Disallow: /pda/?
Disallow: /pda/search?
Disallow: /sprint_xhtml
Disallow: /sprint_wml
Disallow: /pqa
Disallow: /palm
Disallow: /gwt/
Disallow: /purchases
Disallow: /local?
Disallow: /local_url
Disallow: /shihui?
Disallow: /shihui/
Disallow: /products?
Disallow: /product_
Disallow: /products_
Disallow: /products;
Disallow: /print
Disallow: /books/
Allow: /books/about
Disallow: /*.pdf$
Disallow: /*?sessionid=
Crawl-delay: 1

Sitemap: https://www.example.com/sitemap.xml
`

func BenchmarkRobotsAllowed(b *testing.B) {
	r := Parse([]byte(benchRobots), userAgent, maxDelay)
	paths := []string{
		"/",
		"/search/about/team",
		"/articles/2024/05/some-long-article-title-with-words?utm_source=x&utm_medium=y",
		"/books/about",
		"/docs/manual.pdf",
		"/%7Euser/caf%C3%A9/index.html",
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		r.Allowed(paths[i%len(paths)])
		i++
	}
}

func BenchmarkParseRobots(b *testing.B) {
	b.SetBytes(int64(len(benchRobots)))
	b.ReportAllocs()
	for b.Loop() {
		Parse([]byte(benchRobots), userAgent, maxDelay)
	}
}
