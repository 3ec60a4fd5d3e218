package redisstore

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/redisstore/redistest"
	"github.com/stretchr/testify/require"
)

// specModel is SPEC.md's schedule with held tokens, spacing and weights,
// written as the formula reads, in terms of c*, the completions of the
// earlier tokens in time order (the scripts count tokens instead):
//
//	d_i = max(a_i, pause, d_(i-1) + S, max over limits of c*_(j-N) + W)
//
// where j is the index of the admission's last token (an admission of n
// tokens is n items arriving together). A token still held has no
// completion (+inf: the caller is blocked); one past its lease deadline
// completes at the deadline. It is fed the events in the order Redis ran
// them, at the nows Redis saw.
type specModel struct {
	limits  []rxthrottle.Limit
	s, h    int64 // spacing, hold timeout (µs)
	pause   int64
	lmax    int64          // the latest departure given, or MinInt64
	dead    map[int64]bool // admissions withdrawn or given back unused
	newest  int64          // id of the newest admission (the model's ids)
	seq     int64
	tokens  map[int64][]*modelToken // by admission id
	departs map[int64]int64
}

type modelToken struct {
	c        int64 // completion, if known
	held     bool
	deadline int64
}

func newSpecModel(limits []rxthrottle.Limit, s, h int64) *specModel {
	return &specModel{limits: limits, s: s, h: h, lmax: math.MinInt64, dead: map[int64]bool{}, tokens: map[int64][]*modelToken{}, departs: map[int64]int64{}}
}

func (m *specModel) expire(now int64) {
	for _, ts := range m.tokens {
		for _, t := range ts {
			if t.held && t.deadline <= now {
				t.held, t.c = false, t.deadline
			}
		}
	}
}

// next returns the departure of an admission of n tokens at now, or
// blocked with the earliest lease deadline.
func (m *specModel) next(now int64, n int) (d int64, blocked bool, until int64) {
	m.expire(now)
	var cs []int64
	until = math.MaxInt64
	for _, ts := range m.tokens {
		for _, t := range ts {
			if t.held {
				cs = append(cs, math.MaxInt64)
				until = min(until, t.deadline)
			} else {
				cs = append(cs, t.c)
			}
		}
	}
	slices.Sort(cs)
	d = max(now, m.pause)
	if base, ok := m.base(now); ok {
		d = max(d, base+m.s)
	}
	// soon: the earliest instant a held token could complete; a known
	// completion later than it that binds is not final (lua/admit.lua).
	soon := int64(math.MaxInt64)
	for id, ts := range m.tokens {
		for _, t := range ts {
			if t.held {
				soon = min(soon, max(m.departs[id], now))
			}
		}
	}
	j := len(cs) + n // 1-based index of the admission's last token
	for _, l := range m.limits {
		if k := j - l.N; k >= 1 {
			c := cs[k-1]
			if c == math.MaxInt64 || c+micros(l.Window) > d && c > soon {
				return 0, true, until
			}
			d = max(d, c+micros(l.Window))
		}
	}
	return d, false, 0
}

func (m *specModel) record(id, d int64, n int, hold bool) {
	ts := make([]*modelToken, n)
	for k := range ts {
		ts[k] = &modelToken{c: d, held: hold, deadline: d + m.h}
	}
	m.tokens[id] = ts
	m.departs[id] = d
	m.lmax, m.newest = max(m.lmax, d), id
}

// base is what FIFO and the spacing count from (scripts.go): the latest
// departure given if it is not later than now, else the latest live one
// later than now, else (every one of those withdrawn) now if there is a
// spacing.
func (m *specModel) base(now int64) (int64, bool) {
	if m.lmax == math.MinInt64 {
		return 0, false
	}
	if m.lmax <= now {
		return m.lmax, true
	}
	f, ok := int64(math.MinInt64), false
	for id, d := range m.departs {
		if !m.dead[id] && d > now {
			f, ok = max(f, d), true
		}
	}
	if !ok && m.s > 0 {
		return now, true
	}
	return f, ok
}

// end mirrors lua/end.lua: "release", "cancel" or "withdraw" at now.
func (m *specModel) end(id int64, now int64, how string) int {
	m.expire(now)
	ts := m.tokens[id]
	done := 0
	kept := ts[:0]
	for _, t := range ts {
		switch {
		case t.held && how == "release":
			t.held, t.c = false, max(now, m.departs[id])
			done++
			kept = append(kept, t)
		case t.held, !t.held && how == "withdraw":
			done++
		default:
			kept = append(kept, t)
		}
	}
	m.tokens[id] = kept
	if done > 0 && how != "release" {
		m.dead[id] = true
	}
	return done
}

// relevant reports whether admission id can still matter at now: a token
// held, or completed less than span ago. Redis may have dropped the others
// (trimmed, or the whole state expired), so what ending them returns is
// not defined.
func (m *specModel) relevant(id, now, span int64) bool {
	m.expire(now)
	for _, t := range m.tokens[id] {
		if t.held || t.c+span > now {
			return true
		}
	}
	return false
}

// endNow runs the end of an admission alone in a script run and returns
// how many tokens it ended and Redis's now.
func endNow(t *testing.T, b *Bucket, id int64, n int, d int64, how string) (int, int64) {
	t.Helper()
	a, err := b.s.admit(context.Background(), b.keys, request{how: how, id: id, n: n, e: d})
	require.NoError(t, err)
	return a.ended, a.now
}

// TestHeldTokensFollowSpec: hundreds of random cases of admissions (Wait
// and Acquire, 1 to N tokens, Allow), alone or in batches with the ends
// of earlier ones (group commit), releases, unused cancels,
// withdrawals of any reservation, lease deadlines, pauses and
// spacing, with 1 to 3 limits, each departure (or block) compared with
// SPEC.md's formula to the microsecond, in the order Redis ran the
// scripts, at the nows Redis saw.
func TestHeldTokensFollowSpec(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	cases := 60
	if testing.Short() {
		cases = 10
	}
	for c := range cases {
		rng := rand.New(rand.NewPCG(uint64(c), 7))
		nl := 1 + rng.IntN(3)
		var limits []rxthrottle.Limit
		for range nl {
			limits = append(limits, rxthrottle.Per(1+rng.IntN(4), time.Duration(1+rng.IntN(8))*time.Millisecond))
		}
		spacing := time.Duration(rng.IntN(3)) * 700 * time.Microsecond
		hold := time.Duration(1+rng.IntN(6)) * time.Millisecond
		// suiteTimeout: the admissions are checked against the model, not
		// the call timeout, and a loaded CI machine's round trip may take
		// more than DefaultTimeout's 500 ms.
		opts := []Option{WithSpacing(spacing), WithHoldTimeout(hold), WithTimeout(suiteTimeout)}
		for _, l := range limits[1:] {
			opts = append(opts, WithLimit(l))
		}
		b, err := NewBucket(rdb, fmt.Sprintf("prop%d", c), limits[0], opts...)
		require.NoError(t, err)
		m := newSpecModel(limits, micros(spacing), micros(hold))
		span := max(b.s.lim.Load().maxW, micros(spacing))
		minN := slices.MinFunc(limits, func(a, b rxthrottle.Limit) int { return a.N - b.N }).N
		type adm struct {
			id   int64 // the model's
			rid  int64 // Redis's (its sequence restarts when the state expires)
			n    int
			d    int64
			hold bool
		}
		var live []adm
		for step := range 60 {
			where := func() string {
				return fmt.Sprintf("case %d (limits %v, spacing %v, hold %v) step %d", c, limits, spacing, hold, step)
			}
			switch op := rng.IntN(10); {
			case op < 4 || op == 4 && rng.IntN(2) == 0: // an admission
				n := 1 + rng.IntN(minN)
				h := rng.IntN(2) == 0
				a, err := b.s.admit(context.Background(), b.keys, request{n: n, hold: h})
				require.NoError(t, err)
				d, blocked, until := m.next(a.now, n)
				require.Equal(t, blocked, a.blocked, "%s: blocked (model d %d, got %+v)", where(), d, a)
				if blocked {
					require.Equal(t, until, a.e, "%s: the earliest lease deadline", where())
					continue
				}
				require.Equal(t, d, a.e, "%s: departure of %d tokens (hold %v) at now %d: %d µs off", where(), n, h, a.now, a.e-d)
				m.seq++
				m.record(m.seq, a.e, n, h)
				live = append(live, adm{m.seq, a.id, n, a.e, h})
			case op == 4 && rng.IntN(2) == 0: // a batch (group commit), in order
				// Admissions, and ends (release, cancel) of earlier ones,
				// as group commit sends them.
				reqs := make([]request, 2+rng.IntN(3))
				ends := map[int]int{} // reqs index -> live index
				used := map[int]bool{}
				for i := range reqs {
					if j := rng.IntN(len(live) + 1); j < len(live) && !used[j] && rng.IntN(3) == 0 {
						used[j], ends[i] = true, j
						reqs[i] = request{how: []string{"release", "cancel"}[rng.IntN(2)], id: live[j].rid, n: live[j].n, e: live[j].d}
						continue
					}
					reqs[i] = request{allowOnly: rng.IntN(4) == 0, n: 1 + rng.IntN(minN), hold: rng.IntN(2) == 0}
					if reqs[i].allowOnly {
						reqs[i].hold = false
					}
				}
				out := make([]admission, len(reqs))
				require.NoError(t, b.s.runBatch(context.Background(), b.keys, reqs, out))
				stopped := false
				var now int64 // one script, one now (a blocked Allow says -1)
				for _, a := range out {
					if a.e != -1 {
						now = a.now
					}
				}
				var added []adm
				for i, r := range reqs {
					a := out[i]
					if a.e != -1 {
						require.Equal(t, now, a.now, "one script, one now")
					}
					if j, ok := ends[i]; ok {
						x := live[j]
						rel := m.relevant(x.id, now, span)
						if want := m.end(x.id, now, r.how); rel {
							require.Equal(t, want, a.ended, "%s: batch %d: %s of %+v", where(), i, r.how, x)
						}
						continue
					}
					d, blocked, until := m.next(now, r.n)
					blocked = blocked || stopped
					if r.allowOnly {
						want := !blocked && d == now
						require.Equal(t, want, a.admitted, "%s: batch %d: Allow(%d) (model d %d, blocked %v)", where(), i, r.n, d, blocked)
						if a.admitted {
							m.seq++
							m.record(m.seq, a.e, r.n, false)
						}
						continue
					}
					require.Equal(t, blocked, a.blocked, "%s: batch %d: blocked (model d %d, got %+v)", where(), i, d, a)
					if blocked {
						if !stopped {
							require.Equal(t, until, a.e, "%s: batch %d: the earliest lease deadline", where(), i)
						}
						stopped = true
						continue
					}
					require.Equal(t, d, a.e, "%s: batch %d: departure of %d tokens (hold %v): %d µs off", where(), i, r.n, r.hold, a.e-d)
					m.seq++
					m.record(m.seq, a.e, r.n, r.hold)
					added = append(added, adm{m.seq, a.id, r.n, a.e, r.hold})
				}
				live = slices.DeleteFunc(live, func(x adm) bool {
					for _, j := range ends {
						if live[j] == x {
							return true
						}
					}
					return false
				})
				live = append(live, added...)
			case op == 5: // Allow
				n := 1 + rng.IntN(minN)
				a, err := b.s.admit(context.Background(), b.keys, request{allowOnly: true, n: n})
				require.NoError(t, err)
				d, blocked, _ := m.next(a.now, n)
				want := !blocked && d == a.now
				require.Equal(t, want, a.admitted, "%s: Allow(%d) at %d (model d %d, blocked %v)", where(), n, a.now, d, blocked)
				if a.admitted {
					m.seq++
					m.record(m.seq, a.e, n, false)
				}
			case op <= 7 && len(live) > 0: // release or cancel a held token
				i := rng.IntN(len(live))
				x := live[i]
				how := "release"
				if op == 7 {
					how = "cancel"
				}
				got, now := endNow(t, b, x.rid, x.n, x.d, how)
				rel := m.relevant(x.id, now, span)
				if want := m.end(x.id, now, how); rel {
					require.Equal(t, want, got, "%s: %s of %+v", where(), how, x)
				}
				live = slices.Delete(live, i, i+1)
			case op == 8 && len(live) > 0: // a caller gives up, whichever it is
				i := rng.IntN(len(live))
				x := live[i]
				got, now := endNow(t, b, x.rid, x.n, x.d, "withdraw")
				rel := m.relevant(x.id, now, span)
				if want := m.end(x.id, now, "withdraw"); rel {
					require.Equal(t, want, got, "%s: withdraw of %+v", where(), x)
				}
				live = slices.Delete(live, i, i+1)
			case op == 9:
				if rng.IntN(4) == 0 {
					p := time.Duration(rng.IntN(5)) * time.Millisecond
					b.Pause(time.Now().Add(p))
					// The pause is sent as a delay: read what Redis set.
					v, err := srv.Do("HGET", b.keys[2], "p")
					if !errors.Is(err, redis.Nil) {
						require.NoError(t, err)
						var u int64
						_, err := fmt.Sscan(v.(string), &u)
						require.NoError(t, err)
						m.pause = u
					}
				} else {
					time.Sleep(time.Duration(rng.IntN(3000)) * time.Microsecond)
				}
			}
		}
	}
}
