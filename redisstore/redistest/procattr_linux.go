package redistest

import (
	"os/exec"
	"syscall"
)

// dieWithParent makes the kernel kill the server if the test process dies
// without running its cleanups (a test timeout's panic, a kill), so that no
// redis-server outlives the tests.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
