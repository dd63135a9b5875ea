module github.com/asyncrawl/crawl/redisfrontier

go 1.26.0

require (
	github.com/asyncrawl/crawl v0.0.0
	github.com/cespare/xxhash/v2 v2.3.0
	github.com/redis/go-redis/v9 v9.23.0
)

require (
	go.uber.org/atomic v1.12.0 // indirect
	golang.org/x/net v0.58.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
	golang.org/x/text v0.41.0 // indirect
)

// The workspace (go.work at the repository's root) supplies the crawl
// package; this replace does when the module is built on its own
// (GOWORK=off).
replace github.com/asyncrawl/crawl v0.0.0 => ../
