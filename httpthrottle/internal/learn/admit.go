package learn

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/limiterkit"
)

// Acquire takes what a request of key waits for before it goes: the
// first-answer gate's slot while no answer was read, the token budget of
// its WithTokenEstimate, a token of each learned schedule, then inner's
// token (the Transport's limiter). The token returned holds them all.
func (l *Learner) Acquire(ctx context.Context, key string, inner func(context.Context) (rxthrottle.Token, error)) (rxthrottle.Token, error) {
	lt := &learnToken{l: l}
	if fg := l.firstGate(key); !fg.open.Load() {
		select {
		case fg.slot <- struct{}{}:
			lt.first = fg
			if fg.open.Load() { // opened while this one waited
				lt.endFirst()
			}
		case <-ctx.Done():
			return rxthrottle.Token{}, ctx.Err()
		}
	}
	budget, err := l.acquireBudget(ctx, key)
	if err != nil {
		lt.CancelToken(0)
		return rxthrottle.Token{}, err
	}
	lt.budget = budget
	for _, b := range l.schedules(key) {
		tok, err := b.Acquire(ctx)
		if err != nil {
			lt.CancelToken(0)
			cancelBudget(ctx)
			return rxthrottle.Token{}, err
		}
		lt.parts = append(lt.parts, tok)
	}
	tok, err := inner(ctx)
	if err != nil {
		lt.CancelToken(0)
		cancelBudget(ctx)
		return rxthrottle.Token{}, err
	}
	lt.parts = append(lt.parts, tok)
	lt.departed = l.cfg.Clock.Now()
	return limiterkit.NewToken(lt, 0), nil
}

// learnToken is the hold of one request of a learning Transport: its
// tokens of every schedule, and the first-answer gate if it went through
// it. Release and Cancel end them all, once.
type learnToken struct {
	l        *Learner
	parts    []rxthrottle.Token
	first    *firstGate // the gate whose slot this request holds, if any
	once     sync.Once
	departed time.Time // when the tokens were all granted
	// budget is the token budget's tokens this attempt took (the zero
	// Token if none): given back if it is never sent, and otherwise
	// released by ReportTokens or the answer's Close, not by Release.
	budget rxthrottle.Token
}

func (t *learnToken) endFirst() {
	if t.first != nil {
		<-t.first.slot
		t.first = nil
	}
}

// firstGate lets one request of a route go at a time until the first
// answer to one of them is read.
type firstGate struct {
	open atomic.Bool
	slot chan struct{} // holds the one request in flight before open
}

// firstGate returns key's route's gate.
func (l *Learner) firstGate(key string) *firstGate {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.routeLocked(key).first
}

// ReleaseToken releases every part: the request was answered or failed.
func (t *learnToken) ReleaseToken(uint64) {
	t.once.Do(func() {
		t.l.noteRTT(t.l.cfg.Clock.Since(t.departed))
		for _, p := range t.parts {
			p.Release()
		}
		t.endFirst()
	})
}

// CancelToken gives every part back, the budget tokens too: the request
// was never sent.
func (t *learnToken) CancelToken(uint64) {
	t.once.Do(func() {
		for _, p := range t.parts {
			p.Cancel()
		}
		t.budget.Cancel()
		t.endFirst()
	})
}

// noteRTT adds a round trip to the moving average (weight 1/8) and to the
// low mark (which takes a shorter one at once and drifts up to longer ones
// by 1/64 of the difference, so that it follows a network that slowed),
// lock free: a lost update among racing ones only delays them a little.
func (l *Learner) noteRTT(d time.Duration) {
	old := l.rtt.Load()
	if old == 0 {
		l.rtt.Store(int64(d))
		l.rttLow.Store(int64(d))
		return
	}
	l.rtt.Store(old + (int64(d)-old)/8)
	if low := l.rttLow.Load(); int64(d) < low {
		l.rttLow.Store(int64(d))
	} else {
		l.rttLow.Store(low + (int64(d)-low)/64)
	}
}
