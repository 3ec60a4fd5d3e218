package marble

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"
)

// randomMarble builds a valid source marble from random pieces: dashes,
// values, groups, spaces, a time progression, and maybe a terminal.
func randomMarble(r *rand.Rand) string {
	const letters = "abcdefxyz0123"
	var b strings.Builder
	for n := r.IntN(12); n > 0; n-- {
		switch r.IntN(6) {
		case 0, 1:
			b.WriteString(strings.Repeat("-", 1+r.IntN(3)))
		case 2, 3:
			b.WriteByte(letters[r.IntN(len(letters))])
		case 4:
			b.WriteByte('(')
			for k := 1 + r.IntN(3); k > 0; k-- {
				b.WriteByte(letters[r.IntN(6)]) // letters only: no "1m" lookalikes
			}
			b.WriteByte(')')
		case 5:
			b.WriteString(" 20ms ")
		}
	}
	switch r.IntN(3) {
	case 0:
		b.WriteByte('|')
	case 1:
		b.WriteByte('#')
	}
	return b.String()
}

// TestIdentityProperty checks, on random marbles, that a cold source seen
// directly and through an identity Map gives back its own marble, and a
// hot one too, one frame after its ^: the scheduler loses, adds and moves
// nothing.
func TestIdentityProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 50; i++ {
		m := randomMarble(r)
		Run(t, func(s *Scheduler) {
			src := s.Cold(m, nil)
			s.ExpectObservable(src).ToBe(m, nil)
			id := src.Map(func(_ context.Context, v any) (any, error) { return v, nil })
			s.ExpectObservable(id).ToBe(m, nil)
			// ^ takes a frame, like every symbol.
			s.ExpectObservable(s.Hot("--^"+m, nil)).ToBe("-"+m, nil)
		})
		if t.Failed() {
			t.Fatalf("marble %q", m)
		}
	}
}
