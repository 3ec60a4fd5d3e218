package redisstore

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/redisstore/redistest"
)

// TestConfigGarbage: another client of the Redis overwrites a Bucket's
// stored configuration with something confScript or parseConf cannot use
// while the Bucket is in use. config.go's contract (ensureConf): a failed
// read leaves the configuration in force, still good for confBound, and an
// admission fails only once no configuration read from Redis can be used.
// So every call returns at once, with its limits the last good ones, and
// either admits under them or fails with an error that names the trouble:
// a failure of the store (ErrStoreUnavailable, so the FailurePolicy and
// the breaker apply), not a mismatch; none panics or hangs. Once the
// garbage is gone, the breaker's probe reads the conf again, stores the
// Bucket's own configuration and admissions go on.
func TestConfigGarbage(t *testing.T) {
	srv := redistest.Start(t)
	good := []rxthrottle.Limit{rxthrottle.Per(1000, time.Hour)}
	for _, tc := range []struct {
		name  string
		write []any // the garbage, after the key is deleted
		says  string
	}{
		{"a list", []any{"RPUSH", "rxthrottle:{garbage-list}:conf", "4/3600000000"}, "WRONGTYPE"},
		{"a string", []any{"SET", "rxthrottle:{garbage-string}:conf", "l=4/3600000000"}, "WRONGTYPE"},
		{"unparsable limits", []any{"HSET", "rxthrottle:{garbage-limits}:conf", "l", "1/-18446744073709551"}, "want N/W"},
		{"a version that is no number", []any{"HSET", "rxthrottle:{garbage-version}:conf", "v", "soon"}, "malformed reply"},
		{"a negative hold timeout", []any{"HSET", "rxthrottle:{garbage-hold}:conf", "h", "-1"}, "hold timeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := tc.write[1].(string)
			name := key[len("rxthrottle:{") : len(key)-len("}:conf")]
			var errs errorLog
			b, err := NewBucket(srv.Client(t), name, good[0], OnError(errs.hook), WithTimeout(suiteTimeout))
			require.NoError(t, err)
			require.Equal(t, 1, allowN(t, b, 1), "the Bucket stores its configuration")
			if tc.write[0] == "HSET" {
				// The other fields stay: only the one named is garbage.
				_, err = srv.Do(tc.write...)
			} else {
				_, err = srv.Do("DEL", key)
				require.NoError(t, err)
				_, err = srv.Do(tc.write...)
			}
			require.NoError(t, err)

			// Past confBound the read in force is too old for the
			// scripts: a call reads the garbage and fails, and the
			// breaker that opens keeps the next ones back, failing.
			var failed error
			for end := time.Now().Add(3 * confBound); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
				if err := allowOnce(t, b); err != nil {
					failed = err
				}
				assert.Equal(t, good, b.Limits(), "the last good limits stay in force")
			}
			require.Error(t, failed, "an admission under a configuration read more than confBound ago")
			assert.Contains(t, failed.Error(), tc.says)
			require.ErrorIs(t, failed, ErrStoreUnavailable)
			assert.NotErrorIs(t, failed, ErrConfigMismatch, "garbage is no configuration to compare")
			assert.NotEmpty(t, errs.get(), "OnError hears of the failed reads")

			// Gone again: the probe after the breaker's back-off (at most
			// DefaultRetryMax) stores the Bucket's own.
			_, err = srv.Do("DEL", key)
			require.NoError(t, err)
			deadline := time.Now().Add(DefaultRetryMax + 3*time.Second)
			for err = allowOnce(t, b); err != nil && time.Now().Before(deadline); err = allowOnce(t, b) {
				time.Sleep(20 * time.Millisecond)
			}
			require.NoError(t, err, "the Bucket stores its configuration again")
			assert.Equal(t, good, b.Limits())
			v, err := srv.Do("HGET", key, "l")
			require.NoError(t, err)
			assert.Equal(t, "1000/3600000000", v)
		})
	}
}

// allowOnce runs one Allow that must answer within suiteTimeout and a
// margin (a hang fails the test instead of the suite), and returns its
// error.
func allowOnce(t *testing.T, b *Bucket) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), suiteTimeout+5*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := b.Allow(ctx)
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		t.Fatal("Allow hangs on a garbage configuration")
		return nil
	}
}
