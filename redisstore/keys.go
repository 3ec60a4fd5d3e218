package redisstore

import (
	"fmt"
	"strings"
)

// Every Redis key of one schedule has the form
//
//	rxthrottle:{<tag>}:<suffix>
//
// where <tag> is the Bucket's name, or "<prefix>:<key>" for a key of a Keyed
// limiter or a GuardStore. Redis Cluster hashes only the part between the
// first "{" and the first "}" after it when that part is not empty, so every
// key of one schedule maps to the same hash slot and one Lua script may touch
// them all. The reasoning holds for any key a caller passes:
//
//   - "rxthrottle:" has no brace, so the first "{" is ours;
//   - the name and the prefix are checked to hold no brace (checkName), so the
//     tag starts with at least one character that is not "}": it is never
//     empty;
//   - a caller's key may hold a "}"; the tag then ends there, but it still
//     ends inside the part that every key of the schedule shares, so they
//     still hash alike. The suffixes hold no brace after their leading "}",
//     so the last "}" of a full key is always ours: within one limiter,
//     distinct keys never share a Redis key.
//
// Across limiters, names are the caller's to keep apart: a Keyed limiter
// with prefix "users" and key "42" uses the keys of a Bucket named
// "users:42", and prefixes "a" and "a:b" overlap the same way.
const keyPrefix = "rxthrottle:{"

// Suffixes of the keys of one schedule.
const (
	suffixDone  = "}:done"  // ZSET: the completion of each token (scripts.go)
	suffixHeld  = "}:held"  // ZSET: the lease deadline of each held token
	suffixState = "}:state" // HASH: pause, newest departures, ids, expiry
	suffixRuns  = "}:runs"  // ZSET: the completions of leased tokens, a member a run (lua/runs.lua)
	suffixGuard = "}:guard" // HASH: a guard key's window or block

	suffixConf      = "}:conf"    // HASH: a Bucket's configuration (config.go)
	suffixKeyedConf = "}:keyconf" // HASH: a Keyed limiter's configuration
)

// checkName reports why s cannot serve as a Bucket's name or a key prefix.
func checkName(what, s string) error {
	switch {
	case s == "":
		return fmt.Errorf("redisstore: empty %s: it names the Redis keys of the limiter", what)
	case strings.ContainsAny(s, "{}"):
		return fmt.Errorf("redisstore: %s %q contains '{' or '}': it is the Redis Cluster hash tag of the limiter's keys", what, s)
	}
	return nil
}

// scheduleKeys returns the keys of the schedule tagged tag, in the order
// the scripts take them: done, held, state, runs (one allocation for the
// four strings, one for the slice). Only a Bucket's schedule with leases
// (WithLease) ever makes runs; the others' scripts find it empty.
func scheduleKeys(tag string) []string {
	all := keyPrefix + tag + suffixDone + keyPrefix + tag + suffixHeld + keyPrefix + tag + suffixState + keyPrefix + tag + suffixRuns
	a := len(keyPrefix) + len(tag) + len(suffixDone)
	b := a + len(keyPrefix) + len(tag) + len(suffixHeld)
	c := b + len(keyPrefix) + len(tag) + len(suffixState)
	return []string{all[:a], all[a:b], all[b:c], all[c:]}
}

// keyedTag is the hash tag of key under prefix.
func keyedTag(prefix, key string) string { return prefix + ":" + key }
