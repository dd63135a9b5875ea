package crawl_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/asyncrawl/crawl"
)

const mazePage = "https://maze.example/dir/page.html"

// typedLinks runs ExtractTypedLinks on a page of mazePage.
func typedLinks(t testing.TB, contentType string, header http.Header, body string) []crawl.Link {
	t.Helper()
	u, err := url.Parse(mazePage)
	if err != nil {
		t.Fatal(err)
	}
	p := &crawl.Page{URL: u, Status: 200, Header: header, ContentType: contentType, Body: []byte(body)}
	links, err := crawl.ExtractTypedLinks(context.Background(), p)
	if err != nil {
		t.Fatalf("ExtractTypedLinks: %v", err)
	}
	return links
}

// linkString shows a link as the tables write it: "URL role source".
func linkString(l crawl.Link) string {
	return l.URL.String() + " " + l.Role.String() + " " + l.Source
}

func linkStrings(links []crawl.Link) []string {
	s := make([]string, len(links))
	for i, l := range links {
		s[i] = linkString(l)
	}
	return s
}

// TestExtractTypedLinksMaze has a case for each way a page names a URL,
// modelled on the kinds of case of a crawler test maze: every link of the
// page, in order, as "URL role source".
func TestExtractTypedLinksMaze(t *testing.T) {
	const m = "https://maze.example/"
	tests := []struct {
		name   string
		ct     string
		header http.Header
		body   string
		want   []string
	}{
		// Navigation.
		{name: "a href", ct: "text/html", body: `<a href="/a">A</a>`,
			want: []string{m + "a navigation a href"}},
		{name: "a ping", ct: "text/html", body: `<a href="x" ping="/p1  https://t.example/p2">A</a>`,
			want: []string{m + "dir/x navigation a href", m + "p1 reference a ping", "https://t.example/p2 reference a ping"}},
		{name: "area href and ping", ct: "text/html", body: `<map><area href="/area" ping="/ap" alt="Area"></map>`,
			want: []string{m + "area navigation area href", m + "ap reference area ping"}},
		{name: "frame src", ct: "text/html", body: `<frameset><frame src="/f"></frameset>`,
			want: []string{m + "f navigation frame src"}},
		{name: "iframe src", ct: "text/html", body: `<iframe src="/if">fallback <a href="/no">x</a></iframe>`,
			want: []string{m + "if navigation iframe src"}},
		{name: "meta refresh", ct: "text/html", body: `<meta http-equiv="Refresh" content="0; URL='/mr'">`,
			want: []string{m + "mr navigation meta refresh"}},
		{name: "meta refresh of the page itself", ct: "text/html", body: `<meta http-equiv="refresh" content="30">`},
		{name: "header Refresh", ct: "text/html", header: http.Header{"Refresh": {"5; url=/hr"}},
			want: []string{m + "hr navigation header Refresh"}},
		{name: "header Location is the crawler's", ct: "text/html", header: http.Header{"Location": {"/loc"}}},
		{name: "header Content-Location", ct: "text/plain", header: http.Header{"Content-Location": {"/cl"}},
			want: []string{m + "cl navigation header Content-Location"}},
		{name: "header Link", ct: "text/html",
			header: http.Header{"Link": {`</next>; rel="next", </s.css>; rel=stylesheet`, `<https://cdn.example/f.woff2>; rel="preload"; as=font`}},
			want:   []string{m + "next navigation header Link", m + "s.css requisite header Link", "https://cdn.example/f.woff2 requisite header Link"}},
		{name: "form GET action", ct: "text/html", body: `<form action="/search"><input name=q></form>`,
			want: []string{m + "search navigation form action"}},
		{name: "form POST action", ct: "text/html", body: `<form method="POST" action="/login"></form>`,
			want: []string{m + "login reference form action"}},
		{name: "formaction", ct: "text/html",
			body: `<form action="/a"><button formaction="/b">b</button><input type=submit formaction="/c" formmethod=post></form>` +
				`<form method=post><button formaction="/d">d</button></form><button formaction="/e">e</button>`,
			want: []string{m + "a navigation form action", m + "b navigation button formaction", m + "c reference input formaction",
				m + "d reference button formaction", m + "e navigation button formaction"}},
		{name: "link rel navigation", ct: "text/html",
			body: `<link rel="next" href="/n"><link rel=prev href="/p"><link rel="alternate" href="/feed"><link rel="canonical" href="/c">`,
			want: []string{m + "n navigation link href", m + "p navigation link href", m + "feed navigation link href", m + "c navigation link href"}},
		{name: "link rel requisite", ct: "text/html",
			body: `<link rel="stylesheet" href="/s.css"><link rel="shortcut icon" href="/i.ico"><link rel=preload href="/f" as=font>` +
				`<link rel=prefetch href="/pf"><link rel=manifest href="/m.json"><link rel=alternate&#32;stylesheet href="/alt.css">`,
			want: []string{m + "s.css requisite link href", m + "i.ico requisite link href", m + "f requisite link href",
				m + "pf requisite link href", m + "m.json requisite link href", m + "alt.css requisite link href"}},
		{name: "link a browser does not load", ct: "text/html",
			body: `<link rel=stylesheet disabled href="/d.css"><link rel=stylesheet type=text/plain href="/t.css"><link rel=stylesheet type="TEXT/CSS; charset=utf-8" href="/c.css">` +
				`<link rel=preload href="/no-as"><link rel=preload as=nonsense href="/odd-as"><link rel=preload as=Image href="/img">`,
			want: []string{m + "d.css reference link href", m + "t.css reference link href", m + "c.css requisite link href",
				m + "no-as reference link href", m + "odd-as reference link href", m + "img requisite link href"}},
		{name: "link rel preconnect", ct: "text/html", body: `<link rel=preconnect href="https://cdn.example">`,
			want: []string{"https://cdn.example/ reference link href"}},
		{name: "cite", ct: "text/html",
			body: `<blockquote cite="/bq">x</blockquote><q cite="/q">y</q><ins cite="/ins">z</ins><del cite="/del">w</del>`,
			want: []string{m + "bq navigation blockquote cite", m + "q navigation q cite", m + "ins navigation ins cite", m + "del navigation del cite"}},
		{name: "longdesc", ct: "text/html", body: `<img src="/i.png" longdesc="/ld">`,
			want: []string{m + "i.png requisite img src", m + "ld navigation img longdesc"}},

		// Requisites.
		{name: "img", ct: "text/html", body: `<img src="a.png" srcset="b.png 2x, c.png 3x" lowsrc="low.png" dynsrc="clip.avi">`,
			want: []string{m + "dir/a.png requisite img src", m + "dir/b.png requisite img srcset", m + "dir/c.png requisite img srcset",
				m + "dir/low.png requisite img lowsrc", m + "dir/clip.avi reference img dynsrc"}},
		{name: "picture", ct: "text/html", body: `<picture><source srcset="/w.webp 1x,/w2.webp 2x" type="image/webp"><img src="/p.jpg"></picture>`,
			want: []string{m + "w.webp requisite source srcset", m + "w2.webp requisite source srcset", m + "p.jpg requisite img src"}},
		{name: "script src", ct: "text/html", body: `<script src="/s.js"></script><script>var a = "<a href='/no'>";</script>`,
			want: []string{m + "s.js requisite script src"}},
		{name: "scripts a browser does not run", ct: "text/html",
			body: `<script type=module src="/m.js"></script><script nomodule src="/n.js"></script><script type="text/template" src="/t.js"></script>` +
				`<script type="Text/JavaScript; charset=utf-8" src="/c.js"></script><script type="application/ld+json" src="/d.json"></script>`,
			want: []string{m + "m.js requisite script src", m + "n.js reference script src", m + "t.js reference script src",
				m + "c.js requisite script src", m + "d.json reference script src"}},
		{name: "media", ct: "text/html",
			body: `<video src="/v.mp4" poster="/v.jpg"><source src="/v.webm"><track src="/v.vtt"></video><audio src="/a.mp3"></audio>`,
			want: []string{m + "v.mp4 requisite video src", m + "v.jpg requisite video poster", m + "v.webm requisite source src",
				m + "v.vtt requisite track src", m + "a.mp3 requisite audio src"}},
		{name: "embed and object", ct: "text/html", body: `<embed src="/e.swf"><object data="/o.swf" codebase="/cb/"><param name="movie" value="/m.swf"><param name=quality value=high></object>`,
			want: []string{m + "e.swf requisite embed src", m + "o.swf requisite object data", m + "cb/ reference object codebase", m + "m.swf reference param value"}},
		{name: "applet", ct: "text/html", body: `<applet code="A.class" codebase="/j/" archive="/a.jar, /b.jar"></applet>`,
			want: []string{m + "dir/A.class reference applet code", m + "j/ reference applet codebase", m + "a.jar reference applet archive", m + "b.jar reference applet archive"}},
		{name: "input image", ct: "text/html", body: `<input type="IMAGE" src="/btn.png"><input type=text src="/odd">`,
			want: []string{m + "btn.png requisite input src", m + "odd reference input src"}},
		{name: "background", ct: "text/html", body: `<body background="/bg.png"><table background="/t.png"><tr><td background="/td.png">`,
			want: []string{m + "bg.png requisite body background", m + "t.png requisite table background", m + "td.png requisite td background"}},
		{name: "style attribute", ct: "text/html", body: `<div style="background: URL( '/d.png' ) no-repeat; cursor:url(/c.cur)">`,
			want: []string{m + "d.png requisite style attribute url", m + "c.cur requisite style attribute url"}},
		{name: "style element", ct: "text/html",
			body: `<style>@import "/i.css"; @import url(/j.css) screen; /* url(/no) */ body { background: url("b\2e png") }` +
				` @font-face { font-family: X; src: url(/x.woff2) format("woff2"), local(X) }</style>`,
			want: []string{m + "i.css requisite style @import", m + "j.css requisite style @import", m + "dir/b.png requisite style url", m + "x.woff2 requisite style url"}},
		{name: "image-set", ct: "text/html",
			body: `<div style="background-image:image-set('/v1.png' 1x, url(/v1b.png) 2x)"></div><style>p{background:-WebKit-Image-Set("/v2.png" 1x); b{background:image-set("/v3.avif" type("image/avif"), "/v3.png" type('image/png'))}; i{content:"/not-a-url"}</style>`,
			want: []string{m + "v1.png requisite style attribute url", m + "v1b.png requisite style attribute url", m + "v2.png requisite style url",
				m + "v3.avif requisite style url", m + "v3.png requisite style url"}},
		{name: "bad url()", ct: "text/html",
			body: `<style>p{background:url(sp ace.png)} q{background:url(noclose.png } i{background:url("q.png" junk)} b{background:url( ok.png )}</style>`,
			want: []string{m + "dir/ok.png requisite style url"}},
		{name: "import after a rule", ct: "text/css", body: `@charset "utf-8"; @layer base; @import "/first.css"; p{color:red} @import "/late.css"; q{background:url(/q.png)}`,
			want: []string{m + "first.css requisite css @import", m + "q.png requisite css url"}},
		{name: "svg image src and a spaced http-equiv", ct: "text/html",
			body: `<svg><image src="/svg-src.png" href="/svg-href.png"/></svg><image src="/html-image.png"><meta http-equiv=" refresh" content="0;url=/spaced"><meta http-equiv="REFRESH" content="0;url=/upper">`,
			want: []string{m + "svg-href.png requisite image href", m + "html-image.png requisite img src", m + "upper navigation meta refresh"}},
		{name: "template content is inert", ct: "text/html",
			body: `<template><img src="/t.png"><link rel=stylesheet href="/t.css"><a href="/t.html">t</a><style>p{background:url(/ts.png)}</style><!--[if IE]><img src="/tie.png"><![endif]--></template><img src="/after.png">`,
			want: []string{m + "after.png requisite img src"}},
		{name: "svg in html", ct: "text/html",
			body: `<svg><image xlink:href="/si.png"/><image href="/si2.png"/><script xlink:href="/ss.js"/><a xlink:href="/sa"><text>t</text></a><use href="/sprite.svg#i"/></svg>`,
			want: []string{m + "si.png requisite image xlink:href", m + "si2.png requisite image href", m + "ss.js requisite script xlink:href",
				m + "sa navigation a xlink:href", m + "sprite.svg requisite use href"}},
		{name: "html manifest", ct: "text/html", body: `<html manifest="/app.appcache"><body>`,
			want: []string{m + "app.appcache requisite html manifest"}},

		// References.
		{name: "base href", ct: "text/html", body: `<a href="before">b</a><base href="/b/"><base href="/ignored/"><a href="after">a</a>`,
			want: []string{m + "b/before navigation a href", m + "b/ reference base href", m + "ignored/ reference base href", m + "b/after navigation a href"}},
		{name: "doctype system identifier", ct: "text/html",
			body: `<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Strict//EN" "http://www.w3.org/TR/xhtml1/DTD/xhtml1-strict.dtd"><p>`,
			want: []string{"http://www.w3.org/TR/xhtml1/DTD/xhtml1-strict.dtd reference doctype"}},
		{name: "doctype system", ct: "image/svg+xml", body: `<!DOCTYPE svg SYSTEM 'http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd'><svg/>`,
			want: []string{"http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd reference doctype"}},
		{name: "msapplication-config", ct: "text/html", body: `<meta name="msapplication-config" content="/browserconfig.xml">`,
			want: []string{m + "browserconfig.xml reference meta msapplication-config"}},
		{name: "csp report-uri", ct: "text/html",
			header: http.Header{"Content-Security-Policy": {"default-src 'self'; report-uri /csp1 https://r.example/csp2"}},
			body:   `<meta http-equiv="Content-Security-Policy" content="img-src *; report-uri /csp3">`,
			want: []string{m + "csp1 reference header Content-Security-Policy", "https://r.example/csp2 reference header Content-Security-Policy",
				m + "csp3 reference meta content-security-policy"}},
		{name: "isindex", ct: "text/html", body: `<isindex action="/find">`,
			want: []string{m + "find reference isindex action"}},
		{name: "IE import", ct: "text/html", body: `<IMPORT namespace="ns" implementation="/b.htc" /></IMPORT>`,
			want: []string{m + "b.htc reference import implementation"}},
		{name: "param value that is a path", ct: "text/html",
			body: `<object classid="clsid:1"><param name="ref" value="/clip.wmv"><param name="ref" value="/not a path"><param name="title" value="/"></object>`,
			want: []string{m + "clip.wmv reference param value"}},
		{name: "legacy attributes", ct: "text/html", body: `<head profile="http://gmpg.org/xfn/11"><img vrml="/w.wrl"><bgsound src="/s.mid"><div datasrc="/data.xml"><embed pluginspage="/plugin">`,
			want: []string{"http://gmpg.org/xfn/11 reference head profile", m + "w.wrl reference img vrml", m + "s.mid requisite bgsound src",
				m + "data.xml reference div datasrc", m + "plugin reference embed pluginspage"}},

		// Markup inside markup.
		{name: "iframe srcdoc", ct: "text/html", body: `<base href="/b/"><iframe srcdoc="&lt;a href=&quot;sd&quot;&gt;x&lt;/a&gt;&lt;img src=/sdi.png&gt;"></iframe>`,
			want: []string{m + "b/ reference base href", m + "b/sd navigation a href", m + "sdi.png requisite img src"}},
		{name: "conditional comment", ct: "text/html", body: `<!--[if lt IE 9]><script src="/html5shiv.js"></script><link rel=stylesheet href="/ie.css"><![endif]--><!-- <a href="/plain"> -->`,
			want: []string{m + "html5shiv.js requisite script src", m + "ie.css requisite link href"}},
		{name: "downlevel-revealed conditional", ct: "text/html", body: `<![if !IE]><a href="/notie">x</a><![endif]>`,
			want: []string{m + "notie navigation a href"}},
		{name: "data: html", ct: "text/html", body: `<iframe src="data:text/html,%3Ca%20href%3D%22https%3A%2F%2Fd.example%2Fx%22%3Ex%3C%2Fa%3E%3Ca href=rel%3E"></iframe>`,
			want: []string{"https://d.example/x navigation a href"}},
		{name: "data: svg base64", ct: "text/html",
			body: `<img src="data:image/svg+xml;base64,PHN2Zz48aW1hZ2UgaHJlZj0iaHR0cHM6Ly9kLmV4YW1wbGUvaS5wbmciLz48L3N2Zz4=">`,
			want: []string{"https://d.example/i.png requisite image href"}},
		{name: "data: css", ct: "text/html", body: `<link rel=stylesheet href="data:text/css,body{background:url(https://d.example/bg.png)}">`,
			want: []string{"https://d.example/bg.png requisite css url"}},
		{name: "data: of another type", ct: "text/html", body: `<img src="data:image/png;base64,aHR0cHM6Ly9kLmV4YW1wbGUv">`},
		{name: "data: svg embedded, relative", ct: "text/html",
			body: `<img src="data:image/svg+xml,<svg%20xmlns:xlink='%68ttp:%2f/www.w3.org/1999/xlink'><image%20xlink:hr%65f='/ds.png'/></svg>">`,
			want: []string{m + "ds.png requisite image xlink:href"}},
		{name: "meta content of markup", ct: "text/html",
			body: `<meta name="copyright" content="<img src='/rv.png'> <a href=/rva>x</a>"><meta name="description" content="a < b, 1<2"><meta name="robots" content="<img src=/no.png>">`,
			want: []string{m + "rv.png requisite img src", m + "rva navigation a href"}},
		{name: "noscript is markup", ct: "text/html", body: `<noscript><img src="/ns.gif"></noscript>`,
			want: []string{m + "ns.gif requisite img src"}},

		// Other bodies.
		{name: "css body", ct: "text/css",
			body: `@import url("theme.css"); @charset "x"; .a{background-image:url(img/a.png)} @font-face{src:url('/f.woff')}`,
			want: []string{m + "dir/theme.css requisite css @import", m + "dir/img/a.png requisite css url", m + "f.woff requisite css url"}},
		{name: "svg body", ct: "image/svg+xml",
			body: `<?xml version="1.0"?><svg xmlns:xlink="http://www.w3.org/1999/xlink"><a xlink:href="/n"><image xlink:href="i.png"/></a><style>rect{fill:url(/g.svg#g)}</style><feImage href="/fe.png"/></svg>`,
			want: []string{m + "n navigation a xlink:href", m + "dir/i.png requisite image xlink:href", m + "g.svg requisite style url", m + "fe.png requisite feimage href"}},
		{name: "xhtml body", ct: "application/xhtml+xml",
			body: `<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"><head><script src="/x.js"/><style/></head><body><a href="/after">a</a></body></html>`,
			want: []string{m + "x.js requisite script src", m + "after navigation a href"}},
		{name: "script/ in html", ct: "text/html", body: `<script src="/x.js"/><a href="/in-script">`,
			want: []string{m + "x.js requisite script src"}},
		{name: "sitemap body", ct: "application/xml",
			body: `<?xml version="1.0"?><urlset xmlns:image="http://www.google.com/schemas/sitemap-image/1.1"><url><loc> https://maze.example/s1 </loc><image:image><image:loc>https://maze.example/i.jpg</image:loc></image:image></url><url><loc>/s2</loc></url></urlset>`,
			want: []string{m + "s1 navigation sitemap loc", m + "i.jpg requisite sitemap image:loc", m + "s2 navigation sitemap loc"}},
		{name: "sitemap index", ct: "text/xml",
			body: `<sitemapindex><sitemap><loc>https://maze.example/sitemap-1.xml</loc></sitemap></sitemapindex>`,
			want: []string{m + "sitemap-1.xml navigation sitemap loc"}},
		{name: "loc in html is text", ct: "text/html", body: `<loc>/no</loc>`},
		{name: "plain text body", ct: "text/plain", body: `<a href="/no">`},

		// What is left out or changed.
		{name: "non-http and fragments", ct: "text/html",
			body: `<a href="mailto:x@example.com">m</a><a href="javascript:go()">j</a><a href="ftp://f.example/">f</a><a href="#top">t</a><a href="/s#frag">s</a><a href="http://[::1">bad</a>`,
			want: []string{mazePage + " navigation a href", m + "s navigation a href"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := linkStrings(typedLinks(t, tt.ct, tt.header, tt.body))
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("ExtractTypedLinks(%s %q, header %v):\ngot  %q\nwant %q", tt.ct, tt.body, tt.header, got, tt.want)
			}
		})
	}
}

// TestExtractTypedLinksFields checks Rel, Text and Page, and that
// nofollow links are reported, not dropped.
func TestExtractTypedLinksFields(t *testing.T) {
	body := `<meta name="robots" content="nofollow">
<a href="/one" rel="NoFollow  noopener">  Go   to
<b>page</b> &amp; one <img src="/i.png" alt="icon"></a>
<area href="/ar" alt=" Map  area ">
<link rel="Next" href="/n">
<a href="/long">` + strings.Repeat("é", 150) + `</a>
<a href="/open">unclosed <a href="/second">second</a>`
	links := typedLinks(t, "text/html", http.Header{"Link": {`</h>; rel="NEXT  prev"; rel=ignored`}}, body)
	type want struct{ url, rel, text string }
	wants := []want{
		{"https://maze.example/h", "next prev", ""},
		{"https://maze.example/one", "nofollow noopener", "Go to page & one icon"},
		{"https://maze.example/i.png", "", ""},
		{"https://maze.example/ar", "", "Map area"},
		{"https://maze.example/n", "next", ""},
		{"https://maze.example/long", "", strings.Repeat("é", 100)},
		{"https://maze.example/open", "", "unclosed"},
		{"https://maze.example/second", "", "second"},
	}
	if len(links) != len(wants) {
		t.Fatalf("got %d links %q, want %d", len(links), linkStrings(links), len(wants))
	}
	for i, w := range wants {
		l := links[i]
		if l.URL.String() != w.url || l.Rel != w.rel || l.Text != w.text || l.Page != mazePage {
			t.Errorf("link %d: got %s rel %q text %q page %q, want %s rel %q text %q page %q",
				i, l.URL, l.Rel, l.Text, l.Page, w.url, w.rel, w.text, mazePage)
		}
	}
}

func TestLinkRoleString(t *testing.T) {
	for r, want := range map[crawl.LinkRole]string{
		crawl.Navigation: "navigation", crawl.Requisite: "requisite", crawl.Reference: "reference", 9: "LinkRole(9)",
	} {
		if got := r.String(); got != want {
			t.Errorf("LinkRole(%d).String(): got %q, want %q", uint8(r), got, want)
		}
	}
}

func TestExtractTypedLinksEncodedBody(t *testing.T) {
	h := http.Header{"Content-Encoding": {"br"}, "Content-Location": {"/cl"}}
	got := linkStrings(typedLinks(t, "text/html", h, `<a href="/a">`))
	want := []string{"https://maze.example/cl navigation header Content-Location"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("body in br: got %q, want %q", got, want)
	}
}

func TestTyped(t *testing.T) {
	ext := func(ctx context.Context, p *crawl.Page) ([]*url.URL, error) {
		var us []*url.URL
		for _, s := range []string{"/rel#f", "https://o.example/x", "mailto:a@b"} {
			u, err := url.Parse(s)
			if err != nil {
				return nil, err
			}
			us = append(us, u)
		}
		return us, nil
	}
	u, _ := url.Parse(mazePage)
	links, err := crawl.Typed(ext)(context.Background(), &crawl.Page{URL: u})
	if err != nil {
		t.Fatal(err)
	}
	got := linkStrings(links)
	want := []string{"https://maze.example/rel navigation extractor", "https://o.example/x navigation extractor"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Typed: got %q, want %q", got, want)
	}
	for _, l := range links {
		if l.Page != mazePage {
			t.Errorf("Typed: got Page %q, want %q", l.Page, mazePage)
		}
	}
}

// BenchmarkExtractTypedLinks runs ExtractTypedLinks on the page
// BenchmarkExtractLinks reads; compare the two in one run:
//
//	go test -run '^$' -bench 'ExtractLinks|ExtractTypedLinks' .
func BenchmarkExtractTypedLinks(b *testing.B) {
	body := benchLinksPage()
	u, err := url.Parse("https://blog.example.com/2024/05/async-crawlers")
	if err != nil {
		b.Fatal(err)
	}
	p := &crawl.Page{URL: u, Status: 200, ContentType: "text/html", Body: body}
	links, err := crawl.ExtractTypedLinks(context.Background(), p)
	if err != nil {
		b.Fatal(err)
	}
	nav := 0
	for _, l := range links {
		if l.Role == crawl.Navigation {
			nav++
		}
	}
	if nav < 25 {
		b.Fatalf("page has %d navigation links, want at least 25", nav)
	}
	var n atomic.Int64 // keeps the result alive
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		links, _ := crawl.ExtractTypedLinks(context.Background(), p)
		n.Add(int64(len(links)))
	}
	b.ReportMetric(float64(len(links)), "links/page")
}

func FuzzExtractTypedLinks(f *testing.F) {
	seeds := []string{
		`<a href="/a" ping="/p">x</a><img srcset="a.png 1x, b.png 2x"><base href="//h.example/b/">`,
		`<meta http-equiv=refresh content="0;url='/x'"><style>@import "i.css"; a{b:url(x)}</style>`,
		`<!--[if IE]><a href=/ie><![endif]--><iframe srcdoc="<a href=/sd>"></iframe>`,
		`<iframe src="data:text/html,<iframe src='data:text/html,<a href=http://x.example/>'>">`,
		`<!DOCTYPE html SYSTEM "http://d.example/dtd"><svg><image xlink:href="x"/></svg>`,
		`@import url(a.css); @font-face{src:url("\66 .woff")}`,
		`<a href="http://[::1">`, `<a href=" //::">`, "<img srcset=',,, ,(,x'>",
		`<svg><p>x</p><base href=/b/><math><mi><template><svg></template></mi><annotation-xml encoding=text/html><a href=x><font color=red></a>`,
	}
	for _, s := range seeds {
		f.Add(s, "text/html", `</l>; rel="next", <x>; rel=stylesheet`)
	}
	f.Add(`a{background:url(/x)}`, "text/css", "")
	f.Add(`<svg><a href="/x"/></svg>`, "image/svg+xml", "")
	u, err := url.Parse("https://fuzz.example/d/p")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body, ct, link string) {
		p := &crawl.Page{URL: u, ContentType: ct, Header: http.Header{"Link": {link}, "Refresh": {body}}, Body: []byte(body)}
		links, err := crawl.ExtractTypedLinks(context.Background(), p)
		if err != nil {
			t.Fatalf("ExtractTypedLinks(%q): got error %v, want none", body, err)
		}
		for _, l := range links {
			if l.URL == nil || !l.URL.IsAbs() || l.URL.Scheme != "http" && l.URL.Scheme != "https" || l.URL.Host == "" {
				t.Errorf("got link %v (%s), want an absolute http(s) URL", l.URL, l.Source)
				continue
			}
			if l.URL.Fragment != "" || strings.Contains(l.URL.String(), "#") {
				t.Errorf("got link %s (%s), want no fragment", l.URL, l.Source)
			}
			// A Link.URL works with net/http as it is (a path net/url
			// cannot hold, such as "/a%zz", is in Opaque), and its
			// String is the URL Standard's serialisation, which a
			// crawl keys as it keys the link.
			req := &http.Request{Method: "GET", URL: l.URL, Header: http.Header{}, Host: l.URL.Host}
			if err := req.Write(io.Discard); err != nil {
				t.Errorf("got link %s (%s) that net/http cannot send: %v", l.URL, l.Source, err)
			}
			if k := crawl.URLKey(l.URL.String()); k != crawl.URLKey(k) {
				t.Errorf("got link %s (%s) whose key %s is not its own key (%s)", l.URL, l.Source, k, crawl.URLKey(k))
			}
			if len(l.Text) > 200 {
				t.Errorf("got text of %d bytes, want at most 200", len(l.Text))
			}
			if l.Role > crawl.Reference {
				t.Errorf("got role %v, want one of the three", l.Role)
			}
		}
	})
}

// ExampleExtractTypedLinks shows the roles of a page's links.
func ExampleExtractTypedLinks() {
	u, _ := url.Parse("https://example.com/post")
	p := &crawl.Page{URL: u, ContentType: "text/html", Body: []byte(
		`<link rel=stylesheet href="/s.css"><a href="/next" rel=nofollow>Next</a><form method=post action="/comment">`)}
	links, _ := crawl.ExtractTypedLinks(context.Background(), p)
	for _, l := range links {
		fmt.Printf("%s %s (%s) rel=%q text=%q\n", l.Role, l.URL, l.Source, l.Rel, l.Text)
	}
	// Output:
	// requisite https://example.com/s.css (link href) rel="stylesheet" text=""
	// navigation https://example.com/next (a href) rel="nofollow" text="Next"
	// reference https://example.com/comment (form action) rel="" text=""
}

// TestExtractTypedLinksAgreesWithExtractLinks checks that on an ordinary
// page the navigation links are the links ExtractLinks returns, in order.
func TestExtractTypedLinksAgreesWithExtractLinks(t *testing.T) {
	u, err := url.Parse("https://blog.example.com/2024/05/async-crawlers")
	if err != nil {
		t.Fatal(err)
	}
	p := &crawl.Page{URL: u, Status: 200, ContentType: "text/html", Body: benchLinksPage()}
	old, err := crawl.ExtractLinks(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	typed, err := crawl.ExtractTypedLinks(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	var want, got []string
	for _, l := range old {
		want = append(want, l.String())
	}
	for _, l := range typed {
		if l.Role == crawl.Navigation {
			got = append(got, l.URL.String())
		}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("navigation links:\ngot  %q\nwant %q (ExtractLinks)", got, want)
	}
}

// Feeds: an RSS 2.0 feed's <link> (text), permalink <guid> and <enclosure
// url>, an Atom feed's <link href>, under their own media types as under
// application/xml; a <guid> that is no URL names nothing.
func TestExtractFeeds(t *testing.T) {
	u, _ := url.Parse("https://s.example/feed")
	const rss = `<?xml version="1.0"?><rss version="2.0"><channel><title>t</title><link>https://s.example/</link>
<item><title>one</title><link> https://s.example/post/1 </link><guid isPermaLink="true">https://s.example/p/1</guid>
<enclosure url="https://cdn.example/a.mp3" length="1" type="audio/mpeg"/></item>
<item><link>/post/2</link><guid isPermaLink="false">https://s.example/not-a-permalink</guid><guid>12345</guid></item></channel></rss>`
	const atom = `<?xml version="1.0" encoding="utf-8"?><feed xmlns="http://www.w3.org/2005/Atom"><link href="https://s.example/"/>
<entry><link rel="alternate" href="/e/1"/><link rel="enclosure" href="/m.mp3"/></entry></feed>`
	for _, tt := range []struct {
		ct, body string
		want     []string // "source URL"
	}{
		{"application/rss+xml", rss, []string{"rss link https://s.example/", "rss link https://s.example/post/1", "rss guid https://s.example/p/1",
			"enclosure url https://cdn.example/a.mp3", "rss link https://s.example/post/2"}},
		{"application/xml", rss, []string{"rss link https://s.example/", "rss link https://s.example/post/1", "rss guid https://s.example/p/1",
			"enclosure url https://cdn.example/a.mp3", "rss link https://s.example/post/2"}},
		{"application/atom+xml", atom, []string{"link href https://s.example/", "link href https://s.example/e/1", "link href https://s.example/m.mp3"}},
	} {
		links, err := crawl.ExtractTypedLinks(context.Background(), &crawl.Page{URL: u, ContentType: tt.ct, Body: []byte(tt.body)})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, l := range links {
			got = append(got, l.Source+" "+l.URL.String())
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: links %q, want %q", tt.ct, got, tt.want)
		}
	}
}
