package main

import (
	"bufio"
	"context"
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
// The package reports links only as counts, so the graph wraps the link
// extractor: it keeps the URLs ExtractLinks returns, which the crawler then
// resolves and normalises in place (as LinkExtractor documents), and reads
// them when the page's Result arrives, after the crawler is done with them.
type linkGraph struct {
	mu      sync.Mutex
	pending map[string][]*url.URL // page URL to its links, until its Result
	nodes   map[string]graphNode
	links   map[string][]string // page URL to its distinct links, in order
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
		pending: map[string][]*url.URL{},
		nodes:   map[string]graphNode{},
		links:   map[string][]string{},
	}
}

// extract is the link extractor: ExtractLinks, remembering what it found.
func (g *linkGraph) extract(ctx context.Context, p *crawl.Page) ([]*url.URL, error) {
	links, err := crawl.ExtractLinks(ctx, p)
	if len(links) > 0 {
		g.mu.Lock()
		g.pending[p.URL.String()] = links
		g.mu.Unlock()
	}
	return links, err
}

// result records r as a node, with its page's links as edges.
func (g *linkGraph) result(r *crawl.Result) {
	key := r.URL
	if u, err := url.Parse(r.URL); err == nil {
		key = u.String() // as p.URL.String() was
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.nodes[r.URL] = graphNode{kind: r.Kind(), status: r.Status, contentType: r.ContentType, next: r.NextURL}
	links := g.pending[key]
	delete(g.pending, key)
	if len(links) == 0 {
		return
	}
	seen := map[string]bool{}
	var out []string
	for _, u := range links {
		s := u.String()
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

// writeDOT writes the graph in Graphviz DOT. Nodes are the URLs that got a
// Result, labelled with their path when they are on the first root's host,
// plus grey dashed nodes for links that were not crawled (other hosts,
// excluded, beyond a limit). Links are solid edges, redirects dashed ones.
func (g *linkGraph) writeDOT(w io.Writer, root string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	base, _ := url.Parse(root)
	label := func(s string) string {
		u, err := url.Parse(s)
		if err != nil || base == nil || u.Scheme != base.Scheme || u.Host != base.Host {
			return s
		}
		return u.RequestURI()
	}

	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "digraph crawl {\n")
	fmt.Fprintf(bw, "\tgraph [rankdir=LR, overlap=false, splines=true, label=%s, labelloc=t];\n", dotQuote("crawl of "+root))
	fmt.Fprintf(bw, "\tnode [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", fontsize=10];\n")
	fmt.Fprintf(bw, "\tedge [color=\"#00000060\", arrowsize=0.5];\n")

	urls := slices.Sorted(maps.Keys(g.nodes))
	for _, u := range urls {
		n := g.nodes[u]
		tip := fmt.Sprintf("%s %d %s", u, n.status, n.contentType)
		fmt.Fprintf(bw, "\t%s [label=%s, tooltip=%s, %s];\n", dotQuote(u), dotQuote(label(u)), dotQuote(strings.TrimSpace(tip)), n.style())
	}
	// Link and redirect targets with no Result, once each.
	outside := map[string]bool{}
	for _, u := range urls {
		for _, l := range slices.Concat(g.links[u], []string{g.nodes[u].next}) {
			if _, ok := g.nodes[l]; !ok && l != "" {
				outside[l] = true
			}
		}
	}
	for _, l := range slices.Sorted(maps.Keys(outside)) {
		fmt.Fprintf(bw, "\t%s [label=%s, style=\"rounded,dashed\", color=\"#909090\", fontcolor=\"#707070\"];\n", dotQuote(l), dotQuote(label(l)))
	}
	for _, u := range urls {
		for _, l := range g.links[u] {
			fmt.Fprintf(bw, "\t%s -> %s;\n", dotQuote(u), dotQuote(l))
		}
		if next := g.nodes[u].next; next != "" {
			fmt.Fprintf(bw, "\t%s -> %s [style=dashed, color=\"#c08000\"];\n", dotQuote(u), dotQuote(next))
		}
	}
	fmt.Fprintf(bw, "}\n")
	return bw.Flush()
}

// dotQuote quotes s as a DOT string: in double quotes, with backslashes
// and double quotes escaped.
func dotQuote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`
}
