// Package redisfrontier is a crawl.Frontier kept in Redis, so that crawler
// processes on several machines share one crawl.
package redisfrontier
