package rxthrottle

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/require"
)

// TestThrottleMapWaitRoomSetsTheWatchdog: waitRoom, the acquirer waiting
// for room again, sets the watchdog for a call started while it was awake
// before it blocks (sleepLocked; operator_map_guard.go). No subscription
// reaches that on virtual time: the clock stands still while the acquirer
// is awake, so no deadline passes meanwhile, and a call started unguarded
// then means either that none ran when the acquirer was woken (and the
// backlog, below mapBacklog when it was, has not grown back: so waitRoom
// returns, and the grant or the exit sets the watchdog) or that one ran,
// and the watchdog set for it covers the new call. On the real clock the
// watchdog may fire while the acquirer is awake, finding no call running,
// and the calls that ran before then fill the backlog again: so the
// mapper is put in that state by hand here. Without the sleepLocked in
// waitRoom, the call's context never ends.
func TestThrottleMapWaitRoomSetsTheWatchdog(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const holdTimeout = 50 * time.Millisecond
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		m := &mapper{op: "ThrottleMap", ctx: ctx, clock: clock.New(), realClock: true, epoch: time.Now(),
			holdTimeout: holdTimeout, room: make(chan struct{}, 1), lazy: true}
		job := &mapJob{slot: new(mapSlot), seq: 1, deadline: int64(holdTimeout)}
		m.mu.Lock()
		m.jobs = make([]mapJob, mapBacklog) // the backlog full again
		m.acqAwake = true                   // woken by roomLocked, not yet run
		c := m.startLocked(job)
		require.True(t, m.unguarded, "a call started while the acquirer is awake leaves the watchdog unset")
		m.wg.Add(1) // the worker inside fn, whose place the watchdog takes
		m.mu.Unlock()
		done := make(chan bool, 1) // so that a failure (cancel, deferred) ends it
		go func() { done <- m.waitRoom(ctx) }()
		time.Sleep(holdTimeout)
		synctest.Wait()
		require.ErrorIs(t, c.Err(), context.DeadlineExceeded, "the call's context ends at its deadline")
		cancel()
		require.False(t, <-done)
		m.stopWatchdog()
	})
}
