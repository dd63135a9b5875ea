package main

import (
	"net/url"
	"strings"
	"testing"

	"github.com/asyncrawl/crawl"
)

// TestGraphMatchesSpellings checks that a link spelled otherwise than the
// Result of the URL it names ("/~user" for the "/%7Euser" the crawl met
// first and fetched) is an edge to that Result's node, not left out.
func TestGraphMatchesSpellings(t *testing.T) {
	g := newLinkGraph()
	page, _ := url.Parse("http://h/")
	link, _ := url.Parse("http://h/~user")
	g.page(&crawl.Page{URL: page, Links: []crawl.Link{{URL: link, Role: crawl.Navigation}}})
	g.result(&crawl.Result{URL: "http://h/", Status: 200, ContentType: "text/html"})
	g.result(&crawl.Result{URL: "http://h/%7Euser", Status: 200, ContentType: "text/html"})
	var b strings.Builder
	if err := g.writeDOT(&b, "http://h/"); err != nil {
		t.Fatal(err)
	}
	if want := "\t\"http://h/\" -> \"http://h/%7Euser\""; !strings.Contains(b.String(), want) {
		t.Errorf("graph has no edge %q:\n%s", want, b.String())
	}
	if strings.Contains(b.String(), "left out") {
		t.Errorf("graph leaves the link out:\n%s", b.String())
	}
}
