package example

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// demoConfig is what the flags of the test program set.
type demoConfig struct{ n int }

func (c demoConfig) validate() error {
	if c.n < 1 {
		return fmt.Errorf("demo: -n %d: must be at least 1", c.n)
	}
	return nil
}

// parseDemo is a program's parseFlags, as the examples write it.
func parseDemo(args []string, stderr io.Writer) (demoConfig, error) {
	cfg := demoConfig{n: 1}
	fs := NewFlagSet("demo", stderr, "Usage: demo [flags]\n\nFlags:\n")
	fs.IntVar(&cfg.n, "n", cfg.n, "how many")
	return cfg, Parse(fs, args, func() error { return cfg.validate() })
}

func TestParse(t *testing.T) {
	var stderr bytes.Buffer
	cfg, err := parseDemo([]string{"-n", "3"}, &stderr)
	require.NoError(t, err)
	assert.Equal(t, demoConfig{n: 3}, cfg)
	assert.Empty(t, stderr.String())

	stderr.Reset()
	_, err = parseDemo([]string{"-h"}, &stderr)
	assert.ErrorIs(t, err, flag.ErrHelp)
	assert.Equal(t, "Usage: demo [flags]\n\nFlags:\n  -n int\n    \thow many (default 1)\n", stderr.String())

	for _, s := range []struct {
		args        []string
		err, stderr string
	}{
		{[]string{"-n", "0"}, "demo: -n 0: must be at least 1", "demo: -n 0: must be at least 1\n"},
		{[]string{"extra"}, `demo: unexpected argument "extra"`, "demo: unexpected argument \"extra\"\nUsage: demo [flags]\n"},
		{[]string{"-n", "x"}, `invalid value "x" for flag -n: parse error`, "invalid value \"x\" for flag -n: parse error\nUsage: demo [flags]\n"},
	} {
		stderr.Reset()
		_, err := parseDemo(s.args, &stderr)
		assert.EqualError(t, err, s.err, "%v", s.args)
		assert.Contains(t, stderr.String(), s.stderr, "%v", s.args)
	}
}

func TestMainStatus(t *testing.T) {
	run := func(_ context.Context, cfg demoConfig, stdout io.Writer) error {
		if cfg.n == 2 {
			return errors.New("demo: two is too many")
		}
		_, err := fmt.Fprintf(stdout, "ran with %d\n", cfg.n)
		return err
	}
	for _, s := range []struct {
		args           []string
		status         int
		stdout, stderr string
	}{
		{nil, 0, "ran with 1\n", ""},
		{[]string{"-h"}, 0, "", "Usage: demo [flags]\n"},
		{[]string{"-n", "0"}, 2, "", "demo: -n 0: must be at least 1\n"},
		{[]string{"-n", "2"}, 1, "", "demo: two is too many\n"},
	} {
		var stdout, stderr bytes.Buffer
		assert.Equal(t, s.status, mainStatus(s.args, &stdout, &stderr, parseDemo, run), "%v", s.args)
		assert.Equal(t, s.stdout, stdout.String(), "%v", s.args)
		assert.Contains(t, stderr.String(), s.stderr, "%v", s.args)
	}
}
