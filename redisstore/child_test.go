package redisstore

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// startChild runs this test binary again as a child process that runs only
// the test named run, with cfg as JSON in the environment variable env.
// The child's output is kept, so that waitChild can say why a child
// failed, and the child dies with this process (Pdeathsig).
func startChild(t *testing.T, run string, timeout time.Duration, env string, cfg any) *exec.Cmd {
	t.Helper()
	raw, err := json.Marshal(cfg)
	require.NoError(t, err)
	cmd := exec.Command(os.Args[0], "-test.run=^"+run+"$", "-test.count=1", "-test.timeout="+timeout.String())
	cmd.Env = append(os.Environ(), env+"="+string(raw))
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	return cmd
}

// waitChild waits for the child c, the i-th, started by startChild, and
// fails the test with its output if it failed. A child already waited for
// (its ProcessState is set) is only checked.
func waitChild(t *testing.T, i int, c *exec.Cmd) {
	t.Helper()
	var err error
	if c.ProcessState == nil {
		err = c.Wait()
	}
	out := c.Stdout.(*bytes.Buffer)
	require.NoError(t, err, "child %d: %s", i, out)
	require.True(t, c.ProcessState.Success(), "child %d exited with %v: %s", i, c.ProcessState, out)
}
