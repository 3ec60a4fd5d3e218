//go:build !linux

package redistest

import "os/exec"

// dieWithParent does nothing outside Linux: there, a test process that dies
// without its cleanups leaves its redis-server running.
func dieWithParent(*exec.Cmd) {}
