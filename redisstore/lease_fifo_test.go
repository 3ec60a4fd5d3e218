package redisstore

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/redisstore/redistest"
	"github.com/stretchr/testify/require"
)

// TestLeaseFIFOBehindAPartialLease: on Per(5, W) with leases, A takes 3
// tokens, B asks for 3 (a lease can grant only 2: B takes the normal path)
// and C, arriving after B, for 1: C must not go before B (SPEC.md's FIFO),
// although one token is free. The pool used to send B and C to the normal
// path together, where C could reach Redis first and take that token.
func TestLeaseFIFOBehindAPartialLease(t *testing.T) {
	srv := redistest.Start(t)
	limit := rxthrottle.Per(5, 300*time.Millisecond)
	for round := range 8 {
		b, err := NewBucket(srv.Client(t), fmt.Sprintf("fifo%d", round), limit, WithLease(0), WithTimeout(suiteTimeout))
		require.NoError(t, err)
		ctx := context.Background()
		require.NoError(t, b.WaitN(ctx, 3))
		done := make(chan string, 2)
		go func() {
			require.NoError(t, b.WaitN(ctx, 3))
			done <- "B"
		}()
		// C arrives once B waits (B is counted from its arrival).
		redistest.WaitFor(t, "B to wait", func() error {
			if st := b.Stats(); st.Queued < 1 {
				return fmt.Errorf("queued %d", st.Queued)
			}
			return nil
		})
		go func() {
			require.NoError(t, b.Wait(ctx))
			done <- "C"
		}()
		require.Equal(t, "B", <-done, "round %d: C went before B", round)
		require.Equal(t, "C", <-done)
		require.NoError(t, b.Close())
	}
}
