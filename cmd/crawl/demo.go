package main

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"html/template"
	"net"
	"net/http"
	"slices"
	"strconv"
	"time"
)

// demoFiles holds the demo site: its data (site.json), its page templates
// (site.tmpl) and its static files. Everything -demo serves comes from here,
// so the demo works on a machine with no network.
//
//go:embed demo
var demoFiles embed.FS

// demoSite is the demo site, every response rendered once when it is built.
// It is safe for concurrent use: ServeHTTP only reads.
type demoSite struct {
	Title  string       `json:"title"`
	NIssue int          `json:"issues"`
	NArt   int          `json:"articles_per_issue"`
	NArch  int          `json:"issues_per_archive_page"`
	Topics []*demoTopic `json:"topics"`
	Issues []*demoIssue `json:"-"`

	latency time.Duration
	routes  map[string]*demoRoute
}

// demoRoute is one response of the demo site.
type demoRoute struct {
	status      int
	location    string // of a redirect
	contentType string
	body        []byte
	// linked says a crawl from / reaches the route; robots.txt and
	// sitemap.xml are read only by a crawler that looks for them.
	linked bool
}

// demoTopic is a column of the magazine; Titles are its articles' titles,
// used in turn.
type demoTopic struct {
	Slug     string         `json:"slug"`
	Name     string         `json:"name"`
	Titles   []string       `json:"titles"`
	Articles []*demoArticle `json:"-"`
}

// Path returns the path of the topic's page.
func (t *demoTopic) Path() string { return "/topics/" + t.Slug + "/" }

// Latest returns the topic's n newest articles, newest first.
func (t *demoTopic) Latest(n int) []*demoArticle { return newest(t.Articles, n) }

// demoIssue is an issue of the magazine, N counted from 1.
type demoIssue struct {
	N        int
	Articles []*demoArticle
}

// Path returns the path of the issue's page.
func (is *demoIssue) Path() string { return "/issues/" + strconv.Itoa(is.N) + "/" }

// demoArticle is an article, in one issue and on one topic.
type demoArticle struct {
	Issue *demoIssue
	Topic *demoTopic
	Title string
}

// Path returns the path of the article's page, under its issue's.
func (a *demoArticle) Path() string { return a.Issue.Path() + a.Topic.Slug }

// demoPage is what a page template gets: the site, the page's title and
// whichever of the rest the page is about.
type demoPage struct {
	Site       *demoSite
	Title      string
	Issue      *demoIssue
	Issues     []*demoIssue
	Article    *demoArticle
	Topic      *demoTopic
	Prev, Next string // paths of the neighbours in a sequence
}

// Latest returns the n newest issues, newest first.
func (s *demoSite) Latest(n int) []*demoIssue { return newest(s.Issues, n) }

// newest returns the last n of s, last first.
func newest[T any](s []T, n int) []T {
	out := slices.Clone(s[max(0, len(s)-n):])
	slices.Reverse(out)
	return out
}

// newDemoSite builds the demo site from the embedded files. base is the
// site's own URL, which the feed and the sitemap need; latency is added to
// every response, as a network would.
func newDemoSite(base string, latency time.Duration) (*demoSite, error) {
	data, err := demoFiles.ReadFile("demo/site.json")
	if err != nil {
		return nil, fmt.Errorf("demo site: %w", err)
	}
	s := &demoSite{latency: latency, routes: map[string]*demoRoute{}}
	if err := json.Unmarshal(data, s); err != nil {
		return nil, fmt.Errorf("demo site: site.json: %w", err)
	}
	if len(s.Topics) == 0 || s.NArt > len(s.Topics) || s.NArch < 1 {
		return nil, fmt.Errorf("demo site: site.json: need 1 <= articles_per_issue <= topics and issues_per_archive_page >= 1")
	}
	tmpl, err := template.ParseFS(demoFiles, "demo/site.tmpl")
	if err != nil {
		return nil, fmt.Errorf("demo site: %w", err)
	}

	// Issue n has articles on articles_per_issue topics in turn, so each
	// topic runs through the issues as a chain of articles.
	for n := 1; n <= s.NIssue; n++ {
		is := &demoIssue{N: n}
		for i := range s.NArt {
			t := s.Topics[(n+i)%len(s.Topics)]
			a := &demoArticle{Issue: is, Topic: t, Title: t.Titles[(n+i)%len(t.Titles)]}
			is.Articles = append(is.Articles, a)
			t.Articles = append(t.Articles, a)
		}
		s.Issues = append(s.Issues, is)
	}

	render := func(path, name string, p *demoPage) error {
		p.Site = s
		var b bytes.Buffer
		if err := tmpl.ExecuteTemplate(&b, name, p); err != nil {
			return fmt.Errorf("demo site: %s: %w", path, err)
		}
		s.routes[path] = &demoRoute{status: http.StatusOK, contentType: "text/html; charset=utf-8", body: b.Bytes(), linked: true}
		return nil
	}
	type spec struct {
		path, tmpl string
		p          *demoPage
	}
	pages := []spec{
		{"/", "home", &demoPage{Title: "Home"}},
		{"/topics/", "topics", &demoPage{Title: "Topics"}},
		{"/private/", "private", &demoPage{Title: "Staff room"}},
	}
	for _, t := range s.Topics {
		pages = append(pages, spec{t.Path(), "topic", &demoPage{Title: t.Name, Topic: t}})
	}
	for _, p := range pages {
		if err := render(p.path, p.tmpl, p.p); err != nil {
			return nil, err
		}
	}

	// The archive lists the issues newest first, issues_per_archive_page
	// to a page: /issues/, /issues/page/2/, ...
	newest := s.Latest(len(s.Issues))
	archive := func(i int) string {
		if i == 0 {
			return "/issues/"
		}
		return "/issues/page/" + strconv.Itoa(i+1) + "/"
	}
	for i := 0; i*s.NArch < len(newest); i++ {
		p := &demoPage{Title: "Issues", Issues: newest[i*s.NArch : min(len(newest), (i+1)*s.NArch)]}
		if i > 0 {
			p.Prev = archive(i - 1)
		}
		if (i+1)*s.NArch < len(newest) {
			p.Next = archive(i + 1)
		}
		if err := render(archive(i), "archive", p); err != nil {
			return nil, err
		}
	}
	for i, is := range s.Issues {
		p := &demoPage{Title: "Issue " + strconv.Itoa(is.N), Issue: is}
		if i == len(s.Issues)-1 {
			// The newest issue links to the next one, not out yet: a 404.
			p.Next = (&demoIssue{N: is.N + 1}).Path()
		}
		if err := render(is.Path(), "issue", p); err != nil {
			return nil, err
		}
	}
	for _, is := range s.Issues {
		for _, a := range is.Articles {
			if err := render(a.Path(), "article", &demoPage{Title: a.Title, Article: a}); err != nil {
				return nil, err
			}
		}
	}
	s.routes[(&demoIssue{N: s.NIssue + 1}).Path()] = &demoRoute{status: http.StatusNotFound, contentType: "text/plain; charset=utf-8", body: []byte("404 page not found\n"), linked: true}

	redirects := []struct {
		from, to string
		status   int
	}{
		{"/latest", s.Issues[len(s.Issues)-1].Path(), http.StatusFound},
		{"/contact", "/about", http.StatusMovedPermanently},
		{"/old-home", "/index.html", http.StatusMovedPermanently}, // a chain of two
		{"/index.html", "/", http.StatusMovedPermanently},
		{"/loop/a", "/loop/b", http.StatusFound}, // a loop
		{"/loop/b", "/loop/a", http.StatusFound},
	}
	for _, r := range redirects {
		s.routes[r.from] = &demoRoute{status: r.status, location: r.to, linked: true}
	}

	static := []struct {
		path, file, contentType string
		linked                  bool
	}{
		{"/about", "about.html", "text/html; charset=windows-1252", true},
		{"/logo.png", "logo.png", "image/png", true},
		{"/robots.txt", "robots.txt", "text/plain; charset=utf-8", false},
	}
	for _, f := range static {
		body, err := demoFiles.ReadFile("demo/" + f.file)
		if err != nil {
			return nil, fmt.Errorf("demo site: %w", err)
		}
		s.routes[f.path] = &demoRoute{status: http.StatusOK, contentType: f.contentType, body: body, linked: f.linked}
	}

	feed, sitemap, err := s.xmlFiles(base)
	if err != nil {
		return nil, err
	}
	s.routes["/feed.xml"] = &demoRoute{status: http.StatusOK, contentType: "application/rss+xml", body: feed, linked: true}
	s.routes["/sitemap.xml"] = &demoRoute{status: http.StatusOK, contentType: "application/xml", body: sitemap}
	return s, nil
}

// xmlFiles renders the RSS feed of the latest issues and the sitemap of
// every issue and article.
func (s *demoSite) xmlFiles(base string) (feed, sitemap []byte, err error) {
	type item struct {
		Title string `xml:"title"`
		Link  string `xml:"link"`
	}
	type rss struct {
		XMLName xml.Name `xml:"rss"`
		Version string   `xml:"version,attr"`
		Title   string   `xml:"channel>title"`
		Link    string   `xml:"channel>link"`
		Items   []item   `xml:"channel>item"`
	}
	r := rss{Version: "2.0", Title: s.Title, Link: base + "/"}
	for _, is := range s.Latest(5) {
		r.Items = append(r.Items, item{Title: "Issue " + strconv.Itoa(is.N), Link: base + is.Path()})
	}
	type loc struct {
		Loc string `xml:"loc"`
	}
	type urlset struct {
		XMLName xml.Name `xml:"http://www.sitemaps.org/schemas/sitemap/0.9 urlset"`
		URLs    []loc    `xml:"url"`
	}
	var u urlset
	for _, is := range s.Issues {
		u.URLs = append(u.URLs, loc{base + is.Path()})
		for _, a := range is.Articles {
			u.URLs = append(u.URLs, loc{base + a.Path()})
		}
	}
	if feed, err = xml.MarshalIndent(r, "", " "); err != nil {
		return nil, nil, fmt.Errorf("demo site: feed: %w", err)
	}
	if sitemap, err = xml.MarshalIndent(u, "", " "); err != nil {
		return nil, nil, fmt.Errorf("demo site: sitemap: %w", err)
	}
	return append([]byte(xml.Header), feed...), append([]byte(xml.Header), sitemap...), nil
}

// ServeHTTP serves the demo site after its latency.
func (s *demoSite) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if s.latency > 0 {
		t := time.NewTimer(s.latency)
		select {
		case <-t.C:
		case <-req.Context().Done():
			t.Stop()
			return
		}
	}
	r, ok := s.routes[req.URL.Path]
	if !ok {
		http.NotFound(w, req)
		return
	}
	if r.location != "" {
		w.Header().Set("Location", r.location)
	}
	if r.contentType != "" {
		w.Header().Set("Content-Type", r.contentType)
	}
	w.WriteHeader(r.status)
	w.Write(r.body)
}

// serveDemo serves the demo site on a loopback port. It returns the site's
// root URL and a function that stops the server and waits for it.
func serveDemo(ctx context.Context, latency time.Duration) (root string, stop func(), err error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, fmt.Errorf("demo site: %w", err)
	}
	base := "http://" + ln.Addr().String()
	site, err := newDemoSite(base, latency)
	if err != nil {
		ln.Close()
		return "", nil, err
	}
	srv := &http.Server{Handler: site, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.Serve(ln) // returns http.ErrServerClosed once stopped
	}()
	return base + "/", func() { srv.Close(); <-done }, nil
}
