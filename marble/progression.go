package marble

import (
	"fmt"
	"math/big"
	"strings"
	"time"
)

// progressionAt reports whether a time progression starts at column i:
// like rxjs, only at the start of the marble or after a space, and only as
// digits, an optional decimal part and a unit (ms, s or m). Whether its
// trailing space is there is checked by progression, so that "10ms" at the
// end of a marble is an error rather than four values.
func (p *parser) progressionAt(i int) bool {
	if i > 0 && p.src[i-1] != ' ' {
		return false
	}
	_, ok := p.scanProgression(i)
	return ok
}

// scanProgression returns the length of the time progression text (number
// and unit, without the trailing space) at column i.
func (p *parser) scanProgression(i int) (int, bool) {
	j := i
	for j < len(p.src) && isDigit(p.src[j]) {
		j++
	}
	if j == i {
		return 0, false
	}
	if j < len(p.src) && p.src[j] == '.' {
		k := j + 1
		for k < len(p.src) && isDigit(p.src[k]) {
			k++
		}
		if k == j+1 {
			return 0, false
		}
		j = k
	}
	switch {
	case j+1 < len(p.src) && p.src[j] == 'm' && p.src[j+1] == 's':
		j += 2
	case j < len(p.src) && (p.src[j] == 's' || p.src[j] == 'm'):
		j++
	default:
		return 0, false
	}
	return j - i, true
}

// progression parses the time progression at column i and returns how many
// columns it takes, its trailing space included. As in rxjs, it advances
// the position by its exact duration, which need not be a whole number of
// frames: "10.2ms " with frames of 1ms puts the next symbol 0.2ms past a
// frame, and every later one too (each symbol still takes one frame).
func (p *parser) progression(i int) (int, error) {
	n, _ := p.scanProgression(i)
	text := string(p.src[i : i+n])
	if p.group >= 0 {
		return 0, p.errorf(i, "time progression %q inside a group", text)
	}
	if i+n >= len(p.src) || p.src[i+n] != ' ' {
		return 0, p.errorf(i, "time progression %q needs a trailing space", text)
	}
	d, err := progressionDuration(text)
	if err != nil {
		return 0, p.errorf(i, "time progression %q %v", text, err)
	}
	total := p.offset + d
	frames := int64(total / p.frameLen)
	if frames > p.maxFrames-p.frame {
		return 0, p.errorf(i, "marble longer than %d frames", p.maxFrames)
	}
	p.frame += frames
	p.offset = total % p.frameLen
	return n + 1, nil
}

// units are the durations of the units of a time progression.
var units = map[string]time.Duration{"ms": time.Millisecond, "s": time.Second, "m": time.Minute}

// progressionDuration returns the exact duration of a time progression
// such as "10.2ms" (digits, an optional decimal part, a unit), or why it
// has none: beyond maxDuration, or not a whole number of nanoseconds.
func progressionDuration(text string) (time.Duration, error) {
	num := strings.TrimRight(text, "ms")
	unit := text[len(num):]
	r, ok := new(big.Rat).SetString(num)
	if !ok {
		return 0, fmt.Errorf("is not a number")
	}
	r.Mul(r, new(big.Rat).SetInt64(int64(units[unit])))
	if !r.IsInt() {
		return 0, fmt.Errorf("is not a whole number of nanoseconds")
	}
	ns := r.Num()
	if !ns.IsInt64() || ns.Int64() > int64(maxDuration) {
		return 0, fmt.Errorf("out of range")
	}
	return time.Duration(ns.Int64()), nil
}
