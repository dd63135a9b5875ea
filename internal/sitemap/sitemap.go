// Package sitemap parses sitemap files as sitemaps.org's protocol (0.9)
// defines them: an XML <urlset>, an XML <sitemapindex> or a text file of
// one URL per line, any of them gzip-compressed, within the limits the
// caller gives (sitemaps.org's are 50,000 URLs and 50 MB) and with memory
// in proportion to what it returns, whatever the input. It returns the
// entries as written (absolute http(s) URLs, checked by the WHATWG URL
// Standard's parser, as the crawler will read them); resolving, scoping
// and fetching them are the crawler's.
package sitemap

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/asyncrawl/crawl/internal/urlstd"
)

// ErrTooLarge is wrapped by the error of Parse for a file past the limits
// it was given; it was read up to them.
var ErrTooLarge = errors.New("sitemap too large")

// Limits that keep the memory of Parse in proportion to what it
// returns, whatever the input: without them a 50 MB line, run of blanks or
// start tag would be held whole (and a tag's attributes take many times
// their size as Go values), and each level of nesting costs the XML
// decoder a record. No real sitemap comes near them: a URL must be shorter
// than 2,048 characters, and sitemap extensions nest four deep.
const (
	maxSitemapEntry = 64 << 10  // bytes in a text line or a <loc>
	maxSitemapToken = 256 << 10 // bytes in one XML token
	maxSitemapDepth = 64        // XML elements open at once
)

// Parse reads a sitemap file: an XML <urlset>, an XML
// <sitemapindex>, or a plain text file of one URL per line (sitemaps.org
// allows all three), any of them gzip-compressed (detected by the gzip
// magic bytes 1f 8b, whatever the name or Content-Type says). A file whose
// first byte other than white space and a UTF-8 byte order mark is '<' is
// XML; any other is text. It returns the <loc> values of a urlset (or the
// lines of a text file) in urls, and the <loc> values of a sitemapindex in
// sitemaps, each trimmed of surrounding white space, in file order,
// entities decoded.
//
// It reads at most maxURLs locs in all and maxBytes bytes of decompressed
// input; past either limit it returns what it read so far and an error
// wrapping ErrTooLarge. A gzip file longer than maxBytes as given,
// which is a file cut at the limit, is over the limit too: it is read up
// to where it ends, and the error is the same. A malformed file returns what was read
// before the error and an error saying what is wrong. An empty file (or
// one of white space only) is a text sitemap without lines: no URLs and
// no error.
//
// sitemaps.org requires every entry to be an absolute URL. An entry that
// is not an absolute http or https URL (or is longer than 64 KiB, or is an
// empty <loc>) is left out, does not count towards maxURLs, and the file
// is read on: the error returned then names the first such entry and how
// many there were, unless a later error stopped the reading, which is
// returned instead. Empty lines of a text file are skipped silently.
//
// XML is read as a stream with encoding/xml. An element is matched by its
// local name when its namespace is the root's or none, so that the
// sitemaps.org namespace may be the default, a prefix or absent, while
// extensions such as <image:loc> are ignored. A <loc> counts only as the
// child of a <url> in a urlset or of a <sitemap> in a sitemapindex. Any
// other root element (an RSS or Atom feed among them, which sitemaps.org
// also allows but this parser does not read) is an error naming it. The
// decoder is not strict: an '&' that starts no known entity is kept as
// written, a common mistake of sitemap generators, and an end tag that
// does not match closes the open element; a file that ends inside an
// element is still an error.
// The only declared encodings accepted are UTF-8 (any of its labels) and US-ASCII, as
// sitemaps.org requires UTF-8. XML after the root element other than
// comments, processing instructions and white space is an error, as is
// nesting deeper than 64 elements or one token (a tag, a run of text)
// longer than 256 KiB.
//
// It never panics, and it is safe for concurrent use. Besides the strings
// it returns, at most maxURLs of them and no longer in all than maxBytes,
// it holds memory in proportion to the longest line or XML token it
// accepts, not to the size of the file.
func Parse(body []byte, maxURLs int, maxBytes int64) (urls, sitemaps []string, err error) {
	p := sitemapParser{maxURLs: maxURLs}
	if err := p.parse(body, maxBytes); err != nil {
		return p.urls, p.sitemaps, fmt.Errorf("sitemap: %w", err)
	}
	return p.urls, p.sitemaps, nil
}

// sitemapParser holds what Parse found so far.
type sitemapParser struct {
	maxURLs        int
	urls, sitemaps []string
	badEntry       error // the first entry left out, with where it was
	badEntries     int
}

// parse reads body into p, returning the error to report.
func (p *sitemapParser) parse(body []byte, maxBytes int64) error {
	var src io.Reader = bytes.NewReader(body)
	cr := &capReader{max: max(maxBytes, 0)}
	if bytes.HasPrefix(body, []byte{0x1f, 0x8b}) {
		zr, err := gzip.NewReader(src)
		if err != nil {
			return fmt.Errorf("decompress: %w", err)
		}
		d := &decompressReader{r: zr}
		if int64(len(body)) > cr.max {
			// The file was over the limit as sent, so it was cut
			// there (as the crawler's fetch does), and its stream ends early.
			d.cut = cr.tooLarge()
		}
		src = d
	}
	cr.r = src
	br := bufio.NewReaderSize(cr, maxSitemapEntry)
	isXML, err := sniff(br)
	switch {
	case err == io.EOF:
		return nil
	case err != nil:
		return err
	case isXML:
		err = p.parseXML(br, cr)
	default:
		err = p.parseText(br)
	}
	if err == nil && p.badEntry != nil {
		err = p.badEntry
		if p.badEntries > 1 {
			err = fmt.Errorf("%w (and %d more entries left out)", err, p.badEntries-1)
		}
	}
	return err
}

// sniff consumes a UTF-8 byte order mark and reports whether the first
// byte after it other than white space is '<'. It consumes nothing more
// unless the white space fills the buffer, so that the parsers count lines
// from the start of the file.
func sniff(br *bufio.Reader) (isXML bool, err error) {
	if b, _ := br.Peek(3); bytes.Equal(b, []byte{0xef, 0xbb, 0xbf}) {
		br.Discard(3)
	}
	for n := 1; ; n++ {
		buf, err := br.Peek(n)
		if err == bufio.ErrBufferFull {
			br.Discard(n - 1)
			n = 0
			continue
		}
		if err != nil {
			return false, err
		}
		if b := buf[n-1]; !IsXMLSpace(b) {
			return b == '<', nil
		}
	}
}

// IsXMLSpace reports whether b is white space in XML, and so also around a
// line of a text sitemap.
func IsXMLSpace(b byte) bool {
	return b == ' ' || b == '\t' || b == '\r' || b == '\n'
}

// parseText reads the lines of a text sitemap. A line cut short by an
// error is dropped, as a URL cut short would be another URL.
func (p *sitemapParser) parseText(br *bufio.Reader) error {
	for n := 1; ; n++ {
		line, err := br.ReadSlice('\n')
		long := false
		for err == bufio.ErrBufferFull {
			long = true
			_, err = br.ReadSlice('\n')
		}
		if err != nil && err != io.EOF {
			return err
		}
		switch {
		case long:
			p.leaveOut(fmt.Errorf("line %d: %d bytes or more", n, maxSitemapEntry))
		case len(bytes.TrimSpace(line)) > 0:
			if err := p.add(&p.urls, line, fmt.Sprintf("line %d", n)); err != nil {
				return err
			}
		}
		if err == io.EOF {
			return nil
		}
	}
}

// parseXML reads an XML sitemap or sitemap index.
func (p *sitemapParser) parseXML(br *bufio.Reader, cr *capReader) error {
	d := xml.NewDecoder(br)
	d.Strict = false
	d.CharsetReader = utf8Only
	var (
		space  string    // the namespace of the root element
		entry  string    // "url" or "sitemap", the element that holds a loc
		dst    *[]string // where its locs go
		depth  int       // elements open
		inURL  bool      // an entry is open at depth 2
		inLoc  bool      // its <loc> is open at depth 3
		loc    []byte    // the text of that <loc>
		tooBig bool      // the <loc> is longer than maxSitemapEntry
		ended  bool      // the root element is closed
	)
	// own reports whether an element is one of the sitemap's, not an
	// extension's.
	own := func(n xml.Name, local string) bool {
		return n.Local == local && (n.Space == "" || n.Space == space)
	}
	cr.tokenLimit = maxSitemapToken
	for {
		cr.startToken()
		tok, err := d.Token()
		if err == io.EOF {
			if !ended {
				return errors.New("no root element")
			}
			return nil
		}
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			switch {
			case ended:
				return fmt.Errorf("element <%s> after the root element", t.Name.Local)
			case depth > maxSitemapDepth:
				return fmt.Errorf("elements nested more than %d deep", maxSitemapDepth)
			case depth == 1:
				switch t.Name.Local {
				case "urlset":
					entry, dst = "url", &p.urls
				case "sitemapindex":
					entry, dst = "sitemap", &p.sitemaps
				default:
					return fmt.Errorf("root element <%s> is neither <urlset> nor <sitemapindex>", t.Name.Local)
				}
				space = t.Name.Space
			case depth == 2:
				inURL = own(t.Name, entry)
			case depth == 3 && inURL && own(t.Name, "loc"):
				inLoc, loc, tooBig = true, loc[:0], false
			}
		case xml.CharData:
			if depth == 0 && len(bytes.TrimLeft(t, " \t\r\n")) > 0 {
				return errors.New("text outside the root element")
			}
			if inLoc && depth == 3 {
				if len(loc)+len(t) > maxSitemapEntry {
					tooBig = true
				} else {
					loc = append(loc, t...)
				}
			}
		case xml.EndElement:
			if inLoc && depth == 3 {
				inLoc = false
				line, _ := d.InputPos()
				where := fmt.Sprintf("<loc> on line %d", line)
				if tooBig {
					p.leaveOut(fmt.Errorf("%s: more than %d bytes", where, maxSitemapEntry))
				} else if err := p.add(dst, loc, where); err != nil {
					return err
				}
			}
			if depth == 2 {
				inURL = false
			}
			depth--
			// What follows the root is read on, for a gzip stream's
			// checksum, and to find a file that goes on where it should
			// not.
			ended = ended || depth == 0
		}
	}
}

// utf8Only is the xml.Decoder's CharsetReader: it accepts US-ASCII, a
// subset of UTF-8, and the Encoding Standard's other labels of UTF-8
// ("utf8", "unicode-1-1-utf-8"), and refuses any other encoding a file
// declares. The decoder itself accepts UTF-8.
func utf8Only(charset string, r io.Reader) (io.Reader, error) {
	switch strings.ToLower(strings.TrimSpace(charset)) {
	case "us-ascii", "ascii", "utf8", "unicode-1-1-utf-8", "unicode11utf8", "unicode20utf8", "x-unicode20utf8":
		return r, nil
	}
	return nil, errors.New("sitemaps must be UTF-8")
}

// add appends the entry raw, found at where, to *dst, unless it is not an
// absolute http(s) URL. It returns an error wrapping ErrTooLarge if
// maxURLs entries were added already.
func (p *sitemapParser) add(dst *[]string, raw []byte, where string) error {
	s := string(bytes.TrimSpace(raw))
	if !isAbsHTTP(s) {
		p.leaveOut(fmt.Errorf("%s: %q: not an absolute http(s) URL", where, truncate(s, 100)))
		return nil
	}
	if len(p.urls)+len(p.sitemaps) >= p.maxURLs {
		return fmt.Errorf("more than %d URLs: %w", p.maxURLs, ErrTooLarge)
	}
	*dst = append(*dst, s)
	return nil
}

// leaveOut records an entry left out.
func (p *sitemapParser) leaveOut(err error) {
	if p.badEntry == nil {
		p.badEntry = err
	}
	p.badEntries++
}

// isAbsHTTP reports whether s is an absolute http or https URL with a host.
// It parses s as the URL Standard does, as the crawler will.
func isAbsHTTP(s string) bool {
	_, err := urlstd.Parse(s, nil)
	return err == nil
}

// truncate shortens s to at most n bytes, for an error message.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// decompressReader tells errors of the gzip stream from others. When cut
// is set, the compressed input was longer than the limit, and a stream
// that ends early ends there: cut is returned instead.
type decompressReader struct {
	r   io.Reader
	cut error
}

func (d *decompressReader) Read(p []byte) (int, error) {
	n, err := d.r.Read(p)
	switch {
	case err == nil || err == io.EOF:
	case d.cut != nil && errors.Is(err, io.ErrUnexpectedEOF):
		err = d.cut
	default:
		err = fmt.Errorf("decompress: %w", err)
	}
	return n, err
}

// capReader reads from r at most max bytes in all, and when tokenLimit is
// set, at most tokenLimit bytes (plus what a buffer above it reads ahead)
// since the last startToken; it returns an error instead of more.
type capReader struct {
	r          io.Reader
	n, max     int64
	tokenStart int64
	tokenLimit int64 // 0 for none
}

func (c *capReader) Read(p []byte) (int, error) {
	if c.n > c.max {
		return 0, c.tooLarge()
	}
	if c.tokenLimit > 0 && c.n-c.tokenStart > c.tokenLimit {
		return 0, fmt.Errorf("an XML token longer than %d bytes", c.tokenLimit)
	}
	// Reading one byte past the limit tells a file of exactly max bytes,
	// which is allowed, from a larger one.
	if int64(len(p)) > c.max-c.n {
		p = p[:c.max-c.n+1]
	}
	n, err := c.r.Read(p)
	c.n += int64(n)
	if c.n > c.max {
		return n - 1, c.tooLarge()
	}
	return n, err
}

// startToken marks the start of a token.
func (c *capReader) startToken() { c.tokenStart = c.n }

func (c *capReader) tooLarge() error {
	return fmt.Errorf("more than %d bytes: %w", c.max, ErrTooLarge)
}
