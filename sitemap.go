package crawl

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"strings"

	"github.com/asyncrawl/crawl/internal/robots"
	"github.com/asyncrawl/crawl/internal/urlstd"
)

// ErrSitemapTooLarge means a sitemap file had more than 50,000 URLs or more
// than 50 MB (after decompression), the limits of sitemaps.org; the file was
// read up to the limit.
var ErrSitemapTooLarge = errors.New("sitemap too large")

// Sitemap limits of sitemaps.org.
const (
	// MaxSitemapURLs is the most URLs one sitemap file may list.
	MaxSitemapURLs = 50_000
	// MaxSitemapBytes is the largest a sitemap file may be, uncompressed:
	// 50 MB, 52,428,800 bytes.
	MaxSitemapBytes = 50 << 20
)

// Limits that keep the memory of parseSitemap in proportion to what it
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

// parseSitemap reads a sitemap file: an XML <urlset>, an XML
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
// wrapping ErrSitemapTooLarge. A gzip file longer than maxBytes as given,
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
// The only declared encodings accepted are UTF-8 and US-ASCII, as
// sitemaps.org requires UTF-8. XML after the root element other than
// comments, processing instructions and white space is an error, as is
// nesting deeper than 64 elements or one token (a tag, a run of text)
// longer than 256 KiB.
//
// It never panics, and it is safe for concurrent use. Besides the strings
// it returns, at most maxURLs of them and no longer in all than maxBytes,
// it holds memory in proportion to the longest line or XML token it
// accepts, not to the size of the file.
func parseSitemap(body []byte, maxURLs int, maxBytes int64) (urls, sitemaps []string, err error) {
	p := sitemapParser{maxURLs: maxURLs}
	if err := p.parse(body, maxBytes); err != nil {
		return p.urls, p.sitemaps, fmt.Errorf("sitemap: %w", err)
	}
	return p.urls, p.sitemaps, nil
}

// sitemapParser holds what parseSitemap found so far.
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
			// there (see attempt), and its stream ends early.
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
		if b := buf[n-1]; !isXMLSpace(b) {
			return b == '<', nil
		}
	}
}

// isXMLSpace reports whether b is white space in XML, and so also around a
// line of a text sitemap.
func isXMLSpace(b byte) bool {
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
// subset of UTF-8, and refuses any other encoding a file declares. The
// decoder itself accepts UTF-8.
func utf8Only(charset string, r io.Reader) (io.Reader, error) {
	if strings.EqualFold(charset, "us-ascii") || strings.EqualFold(charset, "ascii") {
		return r, nil
	}
	return nil, errors.New("sitemaps must be UTF-8")
}

// add appends the entry raw, found at where, to *dst, unless it is not an
// absolute http(s) URL. It returns an error wrapping ErrSitemapTooLarge if
// maxURLs entries were added already.
func (p *sitemapParser) add(dst *[]string, raw []byte, where string) error {
	s := string(bytes.TrimSpace(raw))
	if !isAbsHTTP(s) {
		p.leaveOut(fmt.Errorf("%s: %q: not an absolute http(s) URL", where, truncate(s, 100)))
		return nil
	}
	if len(p.urls)+len(p.sitemaps) >= p.maxURLs {
		return fmt.Errorf("more than %d URLs: %w", p.maxURLs, ErrSitemapTooLarge)
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
	return fmt.Errorf("more than %d bytes: %w", c.max, ErrSitemapTooLarge)
}

// Crawling: how a Run finds and reads sitemaps.

// maxSitemapNesting is how deep sitemap files are read below the sitemaps
// of a root host (its /sitemap.xml and those its robots.txt names, at
// depth 0): the sitemaps that an index lists are read, but an index that
// an index lists has its own entries left unread. sitemaps.org does not
// allow an index to list another, and a chain or a fan-out of indexes is
// a trap.
const maxSitemapNesting = 1

// sitemaps returns the sitemap requests of a root host: those its
// robots.txt names and its /sitemap.xml, each if in scope and not excluded
// or filtered out. A filter that panics is logged, and its sitemap left
// out. When robots.txt is not obeyed, and so not fetched for its rules,
// the host's /robots.txt comes first, read as a sitemap is for the
// Sitemap lines and the paths it has (see robotsSitemap); without
// WithSitemaps, it is the only one.
func (r *run) sitemaps(key string, named []string) []Request {
	var reqs []Request
	add := func(s string) {
		u, err := urlstd.Resolve(nil, s)
		if err != nil || !r.scope.contains(u) {
			return
		}
		wire, uk := urlstd.Forms(u)
		ok, err := r.allows(uk, u)
		if err != nil {
			r.cfg.logger.Error("sitemap", "url", wire, "err", err)
		}
		if !ok || err != nil {
			return
		}
		for _, q := range reqs {
			if q.URL == uk {
				return
			}
		}
		reqs = append(reqs, Request{URL: uk, Wire: wireField(wire, uk), Kind: SitemapRequest, Redirects: r.cfg.maxRedirects, Referrer: key + "/robots.txt"})
	}
	if !r.cfg.robots {
		add(key + "/robots.txt")
	}
	if !r.cfg.sitemaps {
		return reqs // robots.txt only, for WithSpeculative's paths
	}
	for _, s := range named {
		add(s)
	}
	add(key + "/sitemap.xml")
	return reqs
}

// sitemapReader reads the sitemap files a Run fetched: what a file lists,
// resolved, with the entries of an index nested too deep left out. It
// holds no state and is safe for concurrent use.
type sitemapReader struct {
	logger *slog.Logger
}

// read returns the pages and the sitemaps listed by a sitemap file fetched
// from base at depth, as absolute http(s) URLs resolved against base as
// the URL Standard resolves them, as sent (see urlstd.Resolve), and the
// error of a file
// over the limits of sitemaps.org (read up to them) or malformed (read up
// to the fault).
func (sr sitemapReader) read(base *url.URL, depth int, body []byte) (pages, maps []*url.URL, err error) {
	urls, indexed, err := parseSitemap(body, MaxSitemapURLs, MaxSitemapBytes)
	if len(indexed) > 0 && depth >= maxSitemapNesting {
		sr.logger.Info("sitemap index nested too deep, entries left unread", "url", urlstd.String(base), "entries", len(indexed), "depth", depth)
		indexed = nil
	}
	b, berr := urlstd.FromURL(base)
	parse := func(ss []string) []*url.URL {
		us := make([]*url.URL, 0, len(ss))
		for _, s := range ss {
			if berr != nil {
				break
			}
			if u, err := urlstd.Parse(s, &b); err == nil {
				us = append(us, u.URL())
			}
		}
		return us
	}
	return parse(urls), parse(indexed), err
}

// sitemap adds the URLs of a sitemap file, fetched from base by l, to the
// worker's batch: the pages it lists at depth one more than the
// sitemap's, and the sitemaps a sitemap index lists at depth one more
// too, so that WithMaxDepth bounds them, up to maxSitemapNesting.
func (r *run) sitemap(w *worker, l *Lease, base *url.URL, body []byte, res *Result) error {
	if l.Depth == 0 && !r.cfg.robots && base.Path == "/robots.txt" && r.rootHosts[HostKey(l.URL)] {
		return r.robotsSitemap(w, l, base, body, res)
	}
	pages, maps, perr := sitemapReader{r.cfg.logger}.read(base, l.Depth, body)
	if err := r.follow(w, l, base, pages, PageRequest, l.Depth+1, res); err != nil {
		return err
	}
	if err := r.follow(w, l, base, maps, SitemapRequest, l.Depth+1, res); err != nil {
		return err
	}
	if perr != nil {
		return fmt.Errorf("sitemap %s: %w", res.URL, perr)
	}
	return nil
}

// robotsSitemap reads a root host's robots.txt, fetched as a sitemap
// because robots.txt is not obeyed: with WithSitemaps, the sitemaps its
// Sitemap lines name are read, at its depth, as those of an obeyed
// robots.txt are; with WithSpeculative, the paths of its Allow and
// Disallow lines are queued as pages one deeper, those it disallows
// included, since its rules do not apply.
func (r *run) robotsSitemap(w *worker, l *Lease, base *url.URL, body []byte, res *Result) error {
	if r.cfg.sitemaps {
		var maps []*url.URL
		for _, s := range robots.Parse(body, r.cfg.userAgent, MaxCrawlDelay).Sitemaps() {
			if u, err := urlstd.Resolve(base, s); err == nil && urlstd.IsHTTP(u) {
				maps = append(maps, u)
			}
		}
		if err := r.follow(w, l, base, maps, SitemapRequest, l.Depth, res); err != nil {
			return err
		}
	}
	if !r.cfg.speculative {
		return nil
	}
	var pages []*url.URL
	for u := range robotsTxtPaths(HostKey(l.URL), body) {
		if len(pages) >= maxRobotsPaths {
			break
		}
		pages = append(pages, u)
	}
	return r.follow(w, l, base, pages, PageRequest, l.Depth+1, res)
}
