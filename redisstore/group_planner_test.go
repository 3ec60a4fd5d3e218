package redisstore

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
	front "github.com/rxthrottle/rxthrottle/internal/admission"
)

// TestWindowGrantsDepartures: the window's front grants the departures
// the script gave in its order, on its one timer: a departure comes, its
// caller is granted, the next head's arms the timer; a waiter whose
// departure came behind a head whose has not waits for it (the answers'
// latencies may order them so on the local clock: later, never earlier);
// a head whose caller gives up lets the callers behind it go; and a
// caller admitted at once goes at once, wherever it stands. No Redis: the
// answers are made up.
func TestWindowGrantsDepartures(t *testing.T) {
	clk := clock.NewMock()
	g := &group{clock: clk}
	now := offsetOf(clk.Now())
	g.mu.Lock()
	win := g.windowLocked("k")
	win.flight = &flight{key: "k"} // a call in flight keeps the window
	ask := func(ctx context.Context) *pending {
		p := &pending{ctx: ctx, req: request{n: 1, departs: true}}
		g.fairArriveLocked(win, p)
		return p
	}
	depart := func(p *pending, in time.Duration) *departure {
		p.res = admission{admitted: true, e: 2, now: 1}
		p.res.dep = g.departLocked("k", p, now+int64(in))
		return p.res.dep
	}
	ctxA, giveUpA := context.WithCancel(context.Background())
	a, b, c := ask(ctxA), ask(context.Background()), ask(context.Background())
	at := ask(rxthrottle.WithPriority(context.Background(), 1)) // ahead of them all
	da := depart(a, 3*time.Second)
	db := depart(b, time.Second) // before a's, behind it
	dc := depart(c, 4*time.Second)
	at.res = admission{admitted: true, e: 1, now: 1}
	g.fairSettleLocked("k", at, nil) // admitted at once: served at once
	require.Equal(t, 3, win.front.Waiting())
	win.dispatchLocked()
	g.mu.Unlock()

	granted := func(d *departure) bool { return isClosed(d.w.Ready) }
	clk.Add(2 * time.Second)
	require.False(t, granted(db), "b's departure came, behind a's, which has not")
	require.Equal(t, gaveUp, g.giveUp("k", da), "a gives up before its departure")
	giveUpA()
	require.Eventually(t, func() bool { return granted(db) }, 5*time.Second, time.Millisecond, "a gone, b goes")
	require.False(t, granted(dc))
	clk.Add(2 * time.Second)
	require.Eventually(t, func() bool { return granted(dc) }, 5*time.Second, time.Millisecond, "the timer, armed for c's, wakes it")
	require.Equal(t, goes, g.giveUp("k", dc), "granted as its context ended: it goes")
	g.mu.Lock()
	defer g.mu.Unlock()
	require.Zero(t, win.front.Waiting())
	require.Empty(t, win.departing)
}

// TestDepartAtSaturates: a departure further ahead than an offset goes
// (a pause centuries ahead, on the real clock) is the last offset before
// Never, not one that wrapped round into the past.
func TestDepartAtSaturates(t *testing.T) {
	now := offsetOf(time.Now())
	require.Equal(t, now+int64(time.Second), departAt(now, time.Second))
	require.Equal(t, front.Never-1, departAt(now, time.Duration(math.MaxInt64)))
	require.Equal(t, front.Never-1, departAt(now, time.Duration(front.Never-now)))
}
