module github.com/asyncrawl/crawl/cmd/crawl

go 1.26.0

require (
	github.com/andybalholm/cascadia v1.3.4
	github.com/asyncrawl/crawl v0.0.0
	github.com/asyncrawl/crawl/redisfrontier v0.0.0
	github.com/asyncrawl/crawl/render v0.0.0
	github.com/asyncrawl/crawl/scrape v0.0.0
	github.com/creack/pty v1.1.24
	github.com/redis/go-redis/v9 v9.23.0
	golang.org/x/net v0.58.0
)

require (
	github.com/PuerkitoBio/goquery v1.13.0 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/chromedp/cdproto v0.159.0 // indirect
	github.com/chromedp/chromedp v0.23.0 // indirect
	github.com/go-json-experiment/json v0.0.0-20260213210345-44df1a37e875 // indirect
	go.etcd.io/bbolt v1.5.0 // indirect
	go.uber.org/atomic v1.12.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
	golang.org/x/text v0.41.0 // indirect
)

// The command is built from this repository: the workspace (go.work at the
// repository's root) supplies the packages; this replace does when the
// module is built on its own (GOWORK=off).
replace (
	github.com/asyncrawl/crawl v0.0.0 => ../..
	github.com/asyncrawl/crawl/redisfrontier v0.0.0 => ../../redisfrontier
	github.com/asyncrawl/crawl/render v0.0.0 => ../../render
	github.com/asyncrawl/crawl/scrape v0.0.0 => ../../scrape
)
