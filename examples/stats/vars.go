package main

import (
	"encoding/json"
	"expvar"
	"sync"
	"sync/atomic"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/guard"
)

// varName is the name under which the example publishes its expvar: the
// "rxthrottle" member of /debug/vars.
const varName = "rxthrottle"

// limiterVars is what /debug/vars shows under varName: the limiters' own
// Stats, and what the hooks counted. Durations are in seconds, as metrics
// systems expect them.
type limiterVars struct {
	Keyed keyedVars `json:"keyed"`
	Guard guardVars `json:"guard"`
	Hooks hookVars  `json:"hooks"`
}

// keyedVars is rxthrottle.Stats of the keyed limiter.
type keyedVars struct {
	Admitted         uint64  `json:"admitted"`
	Waited           uint64  `json:"waited"`
	Cancelled        uint64  `json:"cancelled"`
	Failed           uint64  `json:"failed"` // of a shared store (redisstore); 0 here, in memory
	TotalWaitSeconds float64 `json:"total_wait_seconds"`
	MaxWaitSeconds   float64 `json:"max_wait_seconds"`
	Queued           int     `json:"queued"`
	KeysLive         int     `json:"keys_live"`
	KeysBlocked      int     `json:"keys_blocked"`
}

// guardVars is guard.Stats.
type guardVars struct {
	Checks      uint64 `json:"checks"`
	Allowed     uint64 `json:"allowed"`
	Refused     uint64 `json:"refused"`
	Errors      uint64 `json:"errors"`
	Blocks      uint64 `json:"blocks"`
	KeysLive    int    `json:"keys_live"`
	KeysBlocked int    `json:"keys_blocked"`
}

// hookVars is what the OnWait, OnAdmit, OnLimited and OnBlocked hooks
// counted by key (expvar.Maps, whose String is JSON). The wait histogram is
// left to /metrics, where a histogram reads better.
type hookVars struct {
	WaitsByKey    json.RawMessage `json:"waits_by_key"`
	AdmittedByKey json.RawMessage `json:"admitted_by_key"`
	RefusedByKey  json.RawMessage `json:"guard_refused_by_key"`
	BlocksByKey   json.RawMessage `json:"guard_blocks_by_key"`
}

// snapshot gathers the variables. It runs on every GET /debug/vars, so it
// only reads: Stats allocates nothing and takes no lock a caller waits on.
func snapshot(k *rxthrottle.Keyed, g *guard.Guard, m *metrics) limiterVars {
	ks, gs := k.Stats(), g.Stats()
	return limiterVars{
		Keyed: keyedVars{
			Admitted:         ks.Admitted,
			Waited:           ks.Waited,
			Cancelled:        ks.Cancelled,
			Failed:           ks.Failed,
			TotalWaitSeconds: ks.TotalWait.Seconds(),
			MaxWaitSeconds:   ks.MaxWait.Seconds(),
			Queued:           ks.Queued,
			KeysLive:         ks.KeysLive,
			KeysBlocked:      ks.KeysBlocked,
		},
		Guard: guardVars{
			Checks:      gs.Checks,
			Allowed:     gs.Allowed,
			Refused:     gs.Refused,
			Errors:      gs.Errors,
			Blocks:      gs.Blocks,
			KeysLive:    gs.KeysLive,
			KeysBlocked: gs.KeysBlocked,
		},
		Hooks: hookVars{
			WaitsByKey:    json.RawMessage(m.waits.String()),
			AdmittedByKey: json.RawMessage(m.admitted.String()),
			RefusedByKey:  json.RawMessage(m.refused.String()),
			BlocksByKey:   json.RawMessage(m.blocks.String()),
		},
	}
}

// In a program, one line publishes the variables, once, at start:
//
//	expvar.Publish("rxthrottle", expvar.Func(func() any { return snapshot(k, g, m) }))
//
// The expvar registry is global and Publish panics when a name is used
// twice, while run may run several times in one process (its tests do). So
// publish registers the Func once, and the Func reads whichever limiters the
// latest run set up.
var (
	publishOnce sync.Once
	published   atomic.Pointer[func() any]
)

func publish(f func() any) {
	published.Store(&f)
	publishOnce.Do(func() {
		expvar.Publish(varName, expvar.Func(func() any {
			if f := published.Load(); f != nil {
				return (*f)()
			}
			return nil
		}))
	})
}
