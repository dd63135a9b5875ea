module github.com/asyncrawl/crawl/render

go 1.26.0

require (
	github.com/asyncrawl/crawl v0.0.0
	github.com/chromedp/cdproto v0.159.0
	github.com/chromedp/chromedp v0.23.0
)

require (
	github.com/go-json-experiment/json v0.0.0-20260213210345-44df1a37e875 // indirect
	golang.org/x/net v0.58.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/text v0.41.0 // indirect
)

// The workspace (go.work at the repository's root) supplies the crawl
// package; this replace does when the module is built on its own
// (GOWORK=off).
replace github.com/asyncrawl/crawl v0.0.0 => ../
