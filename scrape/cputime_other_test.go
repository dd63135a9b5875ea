//go:build !unix

package scrape_test

import "time"

// cpuTime is not known here: BenchmarkCrawl reports no cpu-ns/page.
func cpuTime() (time.Duration, bool) { return 0, false }
