package redisstore

// ConcurrencyCap returns key's cap on holds open now, 0 without one:
// with rxthrottle.WithAdaptiveConcurrency this process's cap for key as it
// has moved (each key learns its own, in each process; a key this process
// has not used reports the starting cap, min), with
// rxthrottle.WithConcurrency the cap in force across processes.
// rxthrottle.ForKey(k, key).Stats().ConcurrencyCap is this value.
func (k *Keyed) ConcurrencyCap(key string) int { return k.s.capOf(k.keys(key)[0]) }

// capOf returns the cap on holds open of the schedule stored under key:
// this process's adaptive one, or the fixed one in force, or 0.
func (s *schedule) capOf(key string) int {
	if s.gates != nil {
		return s.gates.capOf(key)
	}
	return s.lim.Load().concurrency
}
