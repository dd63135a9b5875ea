package redistest

import (
	"os/exec"
	"syscall"
)

// dieWithParent has the kernel kill cmd's process when the test binary
// dies without running its cleanups (a panic, go test's -timeout, a
// SIGKILL), so that no redis-server outlives it.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
