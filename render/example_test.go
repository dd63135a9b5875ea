package render_test

import (
	"context"
	"fmt"
	"log"

	"github.com/asyncrawl/crawl"
	"github.com/asyncrawl/crawl/render"
)

// Example crawls an application whose links its scripts build, rendering
// only the pages that look built by their scripts. It is compiled, not run:
// it needs Chromium and the site; TestRenderFindsWhatScriptsBuild runs a
// like crawl (RenderAll) on real Chromium against a local site.
func Example() {
	r := render.New(render.Options{Tabs: 4})
	c, err := crawl.New(
		crawl.WithRenderer(r, crawl.RenderAuto),
		crawl.WithPageHook(func(p *crawl.Page) {
			for _, l := range p.Links {
				if l.Fate == crawl.LinkFollowed {
					fmt.Println(p.URL, "->", l.URL, l.Source)
				}
			}
		}),
	)
	if err != nil {
		log.Fatal(err)
	}
	stats, err := c.Run(context.Background(), "https://app.example/")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(stats.Done, "URLs")
}
