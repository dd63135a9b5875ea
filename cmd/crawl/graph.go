package main

import (
	"bufio"
	"fmt"
	"io"
	"maps"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/asyncrawl/crawl"
)

// linkGraph records the link graph of a crawl: every Result as a node, and
// each page's links and each redirect as edges. It is safe for concurrent
// use.
//
// The page hook gives each page's typed links (Page.Links); the graph
// keeps its navigation links until the page's Result arrives.
type linkGraph struct {
	mu      sync.Mutex
	pending map[string][]string // page URL's key to its links, until its Result
	nodes   map[string]graphNode
	links   map[string][]string // page URL to its distinct links, in order
	// names maps a URL's key (crawl.URLKey) to the spelling of its
	// Result, which a link may spell otherwise ("/~user", "/%7Euser").
	names map[string]string
}

// graphNode is what the graph keeps of a Result.
type graphNode struct {
	kind        string // Result.Kind
	status      int
	contentType string
	next        string // a redirect's target
}

func newLinkGraph() *linkGraph {
	return &linkGraph{
		pending: map[string][]string{},
		nodes:   map[string]graphNode{},
		links:   map[string][]string{},
		names:   map[string]string{},
	}
}

// page is the page hook: it keeps the page's navigation links, the edges
// of the graph.
func (g *linkGraph) page(p *crawl.Page) {
	var links []string
	for _, l := range p.Links {
		if l.Role == crawl.Navigation {
			links = append(links, l.URL.String())
		}
	}
	if len(links) > 0 {
		g.mu.Lock()
		g.pending[crawl.URLKey(p.URL.String())] = links
		g.mu.Unlock()
	}
}

// result records r as a node, with its page's links as edges.
func (g *linkGraph) result(r *crawl.Result) {
	key := crawl.URLKey(r.URL)
	g.mu.Lock()
	defer g.mu.Unlock()
	g.names[key] = r.URL
	g.nodes[r.URL] = graphNode{kind: r.Kind(), status: r.Status, contentType: r.ContentType, next: r.NextURL}
	links := g.pending[key]
	delete(g.pending, key)
	if len(links) == 0 {
		return
	}
	seen := map[string]bool{}
	var out []string
	for _, s := range links {
		if !seen[s] && s != r.URL {
			seen[s] = true
			out = append(out, s)
		}
	}
	g.links[r.URL] = out
}

// style is how the node is drawn: green pages, blue other files, yellow
// redirects, red error statuses, grey failures (no usable response).
func (n graphNode) style() string {
	switch {
	case n.kind == "fail":
		return `fillcolor="#c8c8c8", fontcolor="#800000"`
	case n.kind == "redirect":
		return `fillcolor="#ffe08a", shape=cds`
	case n.status >= 400 || n.kind == "error":
		return `fillcolor="#ff8a80"`
	case n.kind == "html":
		return `fillcolor="#b9f6ca"`
	default:
		return `fillcolor="#90caf9", shape=note`
	}
}

// writeDOT writes the graph in Graphviz DOT. Nodes are the URLs that got
// a Result, labelled with their path when they are on root's host, and
// grey dashed nodes for the pages of other hosts they link to. Links are
// solid edges, redirects dashed ones. Links to URLs of the crawled hosts
// that got no Result (excluded, beyond a limit, left when the crawl
// stopped) are left out, and a comment counts them: a crawl stopped by a
// budget would otherwise draw its whole frontier.
func (g *linkGraph) writeDOT(w io.Writer, root string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	site := func(s string) string {
		u, err := url.Parse(s)
		if err != nil {
			return ""
		}
		return u.Scheme + "://" + u.Host
	}
	rootSite := site(root)
	label := func(s string) string {
		if site(s) != rootSite {
			return s
		}
		u, _ := url.Parse(s)
		return u.RequestURI()
	}
	crawled := map[string]bool{}
	for u := range g.nodes {
		crawled[site(u)] = true
	}

	type edge struct {
		from, to string
		redirect bool
	}
	var edges []edge
	outside := map[string]bool{}
	leftOut := 0
	urls := slices.Sorted(maps.Keys(g.nodes))
	for _, u := range urls {
		add := func(to string, redirect bool) {
			if name, ok := g.names[crawl.URLKey(to)]; ok {
				to = name // the URL's Result, under the spelling met first
			}
			if _, ok := g.nodes[to]; !ok {
				if crawled[site(to)] {
					leftOut++
					return
				}
				outside[to] = true
			}
			edges = append(edges, edge{u, to, redirect})
		}
		for _, l := range g.links[u] {
			add(l, false)
		}
		if next := g.nodes[u].next; next != "" {
			add(next, true)
		}
	}

	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "digraph crawl {\n")
	if leftOut > 0 {
		fmt.Fprintf(bw, "\t// %d left out: links to URLs of the crawled hosts that got no result.\n", leftOut)
	}
	fmt.Fprintf(bw, "\tgraph [rankdir=LR, label=%s, labelloc=t, fontname=\"Helvetica\"];\n", dotQuote("crawl of "+root))
	fmt.Fprintf(bw, "\tnode [shape=box, style=filled, fontname=\"Helvetica\", fontsize=10];\n")
	fmt.Fprintf(bw, "\tedge [color=\"#999999\", arrowsize=0.5];\n")
	for _, u := range urls {
		fmt.Fprintf(bw, "\t%s [label=%s, %s];\n", dotQuote(u), dotQuote(label(u)), g.nodes[u].style())
	}
	for _, l := range slices.Sorted(maps.Keys(outside)) {
		fmt.Fprintf(bw, "\t%s [style=dashed, color=\"#909090\", fontcolor=\"#707070\"];\n", dotQuote(l))
	}
	for _, e := range edges {
		attrs := ""
		if e.redirect {
			attrs = ` [style=dashed, color="#c08000"]`
		}
		fmt.Fprintf(bw, "\t%s -> %s%s;\n", dotQuote(e.from), dotQuote(e.to), attrs)
	}
	fmt.Fprintf(bw, "}\n")
	return bw.Flush()
}

// dotQuote quotes s as a DOT string: in double quotes, with backslashes
// and double quotes escaped.
func dotQuote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`
}
