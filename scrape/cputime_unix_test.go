//go:build unix

package scrape_test

import (
	"syscall"
	"time"
)

// cpuTime returns the CPU time the process has used, user and system, so
// that a benchmark can report the work per page on a machine that other
// processes keep busy, where the wall time per page says little.
func cpuTime() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
