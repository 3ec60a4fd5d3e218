package main

import (
	"bytes"
	"regexp"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle/examples/internal/example"
)

// readmeTolerance is where README's sample, a real run, may differ from
// the demo's output on virtual time:
//
//   - its clock readings may be up to 30s of demo time later (150ms of real
//     time at the default -speed 200, over the whole run): a real run's
//     requests take the network and the scheduler, which only ever delay
//     them. Five runs on a busy 2-core machine (load average 5 to 6)
//     finished the unthrottled batch at 10:09 to 10:16, where virtual time
//     says 10:00;
//   - the counts of a timeline row: a request that reaches the API near the
//     end of a row's 30s may be counted in the next row.
var readmeTolerance = example.Tolerance{
	Slack: 30 * time.Second,
	Rows:  regexp.MustCompile(`^\s*\d+:\d\d[\d\s#x]*$`),
}

// TestREADMESample checks that the sample output in README.md's "The demo"
// section is what the demo prints: its lines, in order (the sample is
// trimmed), against a run with the default settings on virtual time, where
// the output is exact, but where readmeTolerance allows.
// When the demo's output changes, run it and paste the lines into README.
func TestREADMESample(t *testing.T) {
	sample, err := example.READMEBlock("../../README.md", "## The demo")
	require.NoError(t, err)
	synctest.Test(t, func(t *testing.T) {
		cfg := defaultConfig()
		cfg.serve = example.InMemory("http://127.0.0.1:8080")
		var out bytes.Buffer
		require.NoError(t, run(t.Context(), cfg, &out))
		require.NoError(t, example.MatchSample(sample, out.String(), readmeTolerance),
			"README.md's sample against the output on virtual time:\n%s", out.String())
	})
}
