package rxthrottle

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/reactivex/rxgo/v2"
	"github.com/stretchr/testify/require"
)

// TestOperatorsHonourTheSubscriptionsPriority: an operator's items carry
// the priority of the Observe context (WithPriority), over a shared
// *Bucket (ThrottleWith) as over a shared *Keyed (ThrottleByWith), so an
// item of priority 1 goes before a plain Wait of priority 0 that was
// already waiting (SPEC.md, "Priorities"); and with no priority, after it.
func TestOperatorsHonourTheSubscriptionsPriority(t *testing.T) {
	for _, tc := range []struct {
		name string
		make func(t *testing.T) (wait func(context.Context) error, op func(rxgo.Observable) rxgo.Observable)
	}{
		{"ThrottleWith over a *Bucket", func(t *testing.T) (func(context.Context) error, func(rxgo.Observable) rxgo.Observable) {
			b, err := NewBucket(Per(1, time.Second))
			require.NoError(t, err)
			return b.Wait, ThrottleWith(b)
		}},
		{"ThrottleByWith over a *Keyed", func(t *testing.T) (func(context.Context) error, func(rxgo.Observable) rxgo.Observable) {
			k, err := NewKeyed(Per(1, time.Second))
			require.NoError(t, err)
			wait := func(ctx context.Context) error { return k.Wait(ctx, "a") }
			return wait, ThrottleByWith(k, func(any) string { return "a" })
		}},
	} {
		for _, prio := range []int{0, 1} {
			t.Run(fmt.Sprintf("%s/priority %d", tc.name, prio), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					wait, op := tc.make(t)
					start := time.Now()
					require.NoError(t, wait(context.Background())) // the one token, until 1s
					waited := make(chan time.Duration, 1)
					go func() {
						if err := wait(context.Background()); err != nil {
							t.Error(err)
						}
						waited <- time.Since(start)
					}()
					synctest.Wait() // the Wait of priority 0 waits
					ctx := WithPriority(t.Context(), prio)
					var item time.Duration
					for it := range op(rxgo.Just(1)()).Observe(rxgo.WithContext(ctx)) {
						require.NoError(t, it.E)
						item = time.Since(start)
					}
					w := <-waited
					if prio > 0 {
						require.Equal(t, []time.Duration{time.Second, 2 * time.Second}, []time.Duration{item, w},
							"the item of priority %d, then the Wait of priority 0", prio)
					} else {
						require.Equal(t, []time.Duration{2 * time.Second, time.Second}, []time.Duration{item, w},
							"the Wait first, then the item of the same priority")
					}
				})
			})
		}
	}
}

// TestReserveHasPriorityZero: Reserve takes no context, so its reservation
// has priority 0: it goes before a caller of priority -1 that waited
// first, and a caller of priority 1 arriving later goes before it, its
// Time moving one window later.
func TestReserveHasPriorityZero(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, err := NewBucket(Per(1, time.Second))
		require.NoError(t, err)
		start := time.Now()
		require.NoError(t, b.Wait(context.Background())) // the one token, until 1s
		went := make(chan string, 2)
		waitWith := func(p int, name string) {
			if err := b.Wait(WithPriority(context.Background(), p)); err != nil {
				t.Error(err)
			}
			went <- fmt.Sprintf("%s at %v", name, time.Since(start))
		}
		go waitWith(-1, "priority -1")
		synctest.Wait()
		r := b.Reserve()
		require.True(t, r.OK())
		require.Equal(t, start.Add(time.Second), r.Time(), "before the caller of priority -1")
		go waitWith(1, "priority 1")
		synctest.Wait()
		require.Equal(t, start.Add(2*time.Second), r.Time(), "after the caller of priority 1")
		<-r.Ready()
		require.Equal(t, 2*time.Second, time.Since(start))
		require.Equal(t, "priority 1 at 1s", <-went)
		require.Equal(t, "priority -1 at 3s", <-went)
	})
}
