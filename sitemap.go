package crawl

import (
	"errors"
	"fmt"
	"log/slog"
	"net/url"

	"github.com/asyncrawl/crawl/internal/robots"
	"github.com/asyncrawl/crawl/internal/sitemap"
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

// sitemapError is an error of sitemap.Parse, which matches
// ErrSitemapTooLarge, with errors.Is, when it wraps sitemap.ErrTooLarge.
type sitemapError struct{ err error }

func (e sitemapError) Error() string { return e.err.Error() }

// Unwrap returns the error of sitemap.Parse.
func (e sitemapError) Unwrap() error { return e.err }

// Is reports whether target is ErrSitemapTooLarge and the file was past a
// limit.
func (e sitemapError) Is(target error) bool {
	return target == ErrSitemapTooLarge && errors.Is(e.err, sitemap.ErrTooLarge)
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
	// add queues the sitemap s, named by robots.txt (the Referrer); or,
	// from "", tried on the crawler's own, no Referrer (a probe: see
	// Result.Broken).
	add := func(s, from string) {
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
		reqs = append(reqs, Request{URL: uk, Wire: wireField(wire, uk), Kind: SitemapRequest, Redirects: r.cfg.maxRedirects, Referrer: from})
	}
	if !r.cfg.robots {
		add(key+"/robots.txt", "")
	}
	if !r.cfg.sitemaps {
		return reqs // robots.txt only, for WithSpeculative's paths
	}
	for _, s := range named {
		add(s, key+"/robots.txt")
	}
	add(key+"/sitemap.xml", "")
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
	urls, indexed, err := sitemap.Parse(body, MaxSitemapURLs, MaxSitemapBytes)
	if err != nil {
		err = sitemapError{err}
	}
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
			// A full URL, as sitemaps.org has it and as the Sitemap
			// lines of an obeyed robots.txt are read (see sitemaps).
			if u, err := urlstd.Resolve(nil, s); err == nil && urlstd.IsHTTP(u) {
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
