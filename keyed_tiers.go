package rxthrottle

import (
	"fmt"
	"slices"
)

// tierOf returns the limits WithKeyLimits gives key, validated and copied,
// or nil for the limiter's own (no WithKeyLimits, or it returned none). It
// calls the user's function, so it must be called with no lock held; a
// panic in it is turned into an error.
func (k *Keyed) tierOf(key string) (tier []Limit, err error) {
	if k.tiers == nil {
		return nil, nil
	}
	defer func() {
		if v := recover(); v != nil {
			tier, err = nil, fmt.Errorf("rxthrottle: WithKeyLimits: key %q: the function panicked: %v", key, v)
		}
	}()
	tier = k.tiers(key)
	if len(tier) == 0 {
		return nil, nil
	}
	for i, l := range tier {
		if reason := l.invalid(); reason != "" {
			return nil, fmt.Errorf("rxthrottle: WithKeyLimits: key %q: limit #%d (%v): %s: %w", key, i+1, l, reason, ErrInvalidLimit)
		}
	}
	return slices.Clone(tier), nil
}
