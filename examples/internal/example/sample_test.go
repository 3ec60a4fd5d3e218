package example

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const output = `The API at http://127.0.0.1:41234 allows each client 30 requests per 1m0s.

unthrottled
    0:00  429 Too Many Requests: "unthrottled" is blocked until 5:00
    5:00  accepted again, after 10 refusals in a row
  done in 10:00: 90 of 90 accepted, 20 refusals
throttled
  done in 2:00: 90 of 90 accepted, 0 refusals
     9:30      1     1 x
    10:00     30     0 ###############
`

// rows matches the rows of the timeline in output.
var rows = regexp.MustCompile(`^\s*\d+:\d\d[\d\s#x]*$`)

func TestMatchSample(t *testing.T) {
	steps := []struct {
		name   string
		sample string
		want   string // "" for a match
	}{
		{"all of it", output, ""},
		{"trimmed", "unthrottled\n  done in 10:00: 90 of 90 accepted, 20 refusals\nthrottled\n", ""},
		{"later clocks, within the slack", "    0:04  429 Too Many Requests: \"unthrottled\" is blocked until 5:04\n  done in 10:14: 90 of 90 accepted, 20 refusals\n", ""},
		{"another port", "The API at http://127.0.0.1:35891 allows each client 30 requests per 1m0s.\n", ""},
		{"a wider clock, other spaces", "  done in  10:00: 90 of 90  accepted, 20 refusals\n", ""},
		{"cuts", "unthrottled\n...\n  done in 10:00: 90 of 90 accepted, 20 refusals\n    ...\n    10:00     30     0 ###############\n", ""},
		{"rows with other counts", "     9:30      2     1 #\n    10:00     29     0 ##############\n", ""},
		{"a row of another slot", "     9:00      1     1 x\n",
			`example: line 1 of the sample, "     9:00      1     1 x", is not in the output after its line 0`},
		{"a row out of order", "    10:00     30     0 ###############\n     9:30      1     1 x\n",
			`example: line 2 of the sample, "     9:30      1     1 x", is not in the output after its line 10`},
		{"a clock later than the slack", "  done in 10:16: 90 of 90 accepted, 20 refusals\n",
			`example: line 1 of the sample, "  done in 10:16: 90 of 90 accepted, 20 refusals", is not in the output after its line 0; nearest: "  done in 10:00: 90 of 90 accepted, 20 refusals" (10:16 is not 10:00 or up to 15s later)`},
		{"a clock earlier", "  done in 1:59: 90 of 90 accepted, 0 refusals\n",
			`example: line 1 of the sample, "  done in 1:59: 90 of 90 accepted, 0 refusals", is not in the output after its line 0; nearest: "  done in 2:00: 90 of 90 accepted, 0 refusals" (1:59 is not 2:00 or up to 15s later)`},
		{"another count", "  done in 10:00: 90 of 90 accepted, 21 refusals\n",
			`example: line 1 of the sample, "  done in 10:00: 90 of 90 accepted, 21 refusals", is not in the output after its line 0`},
		{"out of order", "throttled\nunthrottled\n",
			`example: line 2 of the sample, "unthrottled", is not in the output after its line 7`},
		{"a line twice", "throttled\nthrottled\n",
			`example: line 2 of the sample, "throttled", is not in the output after its line 7`},
	}
	for i, s := range steps {
		err := MatchSample(s.sample, output, Tolerance{Slack: 15 * time.Second, Rows: rows})
		if s.want == "" {
			assert.NoError(t, err, "step %d (%s)", i, s.name)
		} else {
			assert.EqualError(t, err, s.want, "step %d (%s)", i, s.name)
		}
	}
}

func TestREADMEBlock(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, []byte(text), 0o600))
		return path
	}
	good := write("good.md", "# T\n\n```sh\nnot this\n```\n\n## The demo\n\nIt prints:\n```text\nline 1\n\nline 3\n```\n\n```text\nnor this\n```\n")
	block, err := READMEBlock(good, "## The demo")
	require.NoError(t, err)
	assert.Equal(t, "line 1\n\nline 3\n", block)

	for _, s := range []struct{ path, heading, want string }{
		{good, "## Missing", "example: " + good + ` has no line "## Missing"`},
		{write("none.md", "## The demo\n\ntext\n## Next\n```\nx\n```\n"), "## The demo",
			"example: " + dir + `/none.md: the section "## The demo" (line 1) has no code block`},
		{write("end.md", "x\n## The demo\n\ntext\n"), "## The demo",
			"example: " + dir + `/end.md: the section "## The demo" (line 2) has no code block`},
		{write("open.md", "## The demo\n```\nx\n"), "## The demo",
			"example: " + dir + `/open.md: the code block of section "## The demo" (line 1) is not closed`},
	} {
		_, err := READMEBlock(s.path, s.heading)
		assert.EqualError(t, err, s.want)
	}
	_, err = READMEBlock(filepath.Join(dir, "absent.md"), "## The demo")
	assert.ErrorIs(t, err, os.ErrNotExist)
}
