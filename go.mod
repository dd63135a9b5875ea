module github.com/asyncrawl/crawl

go 1.26.0

require (
	go.etcd.io/bbolt v1.5.0
	golang.org/x/net v0.58.0
	golang.org/x/sync v0.24.0
	golang.org/x/text v0.41.0
)

require golang.org/x/sys v0.47.0 // indirect
