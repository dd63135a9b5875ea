//go:build !linux

package redistest

import "os/exec"

// dieWithParent does nothing where the kernel cannot kill a child with its
// parent: a test binary that dies without running its cleanups leaves its
// redis-servers running there.
func dieWithParent(cmd *exec.Cmd) {}
