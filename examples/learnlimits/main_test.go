package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRunLoopback runs the program against its two loopback servers:
// neither refuses a request, and each run says what it learned.
func TestRunLoopback(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), config{rate: 10, count: 25, workers: 16}, &out))
	t.Log("\n" + out.String())
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 4)
	for i, api := range []string{"GitHub-like API", "OpenAI-like API"} {
		require.Contains(t, lines[2*i], api)
		require.Contains(t, lines[2*i], "25 requests from 16 goroutines")
		require.True(t, strings.HasSuffix(lines[2*i], ", 0 refused"), lines[2*i])
		require.Contains(t, lines[2*i+1], "learned: [10 per ")
	}
}

func TestParseFlags(t *testing.T) {
	var stderr bytes.Buffer
	_, err := parseFlags([]string{"-rate", "0"}, &stderr)
	require.Error(t, err)
	require.Contains(t, stderr.String(), "learnlimits: -rate, -count and -workers must be at least 1")
	cfg, err := parseFlags([]string{"-rate", "5", "-count", "7"}, &stderr)
	require.NoError(t, err)
	require.Equal(t, config{rate: 5, count: 7, workers: 32}, cfg)
}
