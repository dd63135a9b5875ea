module github.com/asyncrawl/crawl/scrape

go 1.26.0

require (
	github.com/PuerkitoBio/goquery v1.13.0
	github.com/andybalholm/cascadia v1.3.4
	github.com/asyncrawl/crawl v0.0.0
	golang.org/x/net v0.58.0
)

require (
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/text v0.41.0 // indirect
)

// The workspace (go.work at the repository's root) supplies the crawl
// package; this replace does when the module is built on its own
// (GOWORK=off).
replace github.com/asyncrawl/crawl v0.0.0 => ../
