package redisstore

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/redisstore/redistest"
	"github.com/stretchr/testify/require"
)

// crc16 is Redis Cluster's key hash: CRC16-CCITT (XMODEM), as in the
// cluster specification.
func crc16(s string) uint16 {
	var crc uint16
	for i := 0; i < len(s); i++ {
		crc ^= uint16(s[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}

// slot is the cluster specification's HASH_SLOT: the hash of the part
// between the first '{' and the next '}' if that part is not empty, of the
// whole key otherwise, modulo 16384.
func slot(key string) int {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	return int(crc16(key) % 16384)
}

func TestSlotFunction(t *testing.T) {
	require.Equal(t, uint16(0x31C3), crc16("123456789"), "the specification's test vector")
	require.Equal(t, 12182, slot("foo"), "CLUSTER KEYSLOT foo")
	require.Equal(t, slot("bar"), slot("{bar}zap"))
	require.Equal(t, slot("{}x"), int(crc16("{}x")%16384), "an empty tag hashes the whole key")
}

// awkwardKeys are keys a caller of a Keyed limiter may pass: braces
// anywhere, an empty-looking tag, separators, UTF-8.
var awkwardKeys = []string{"user-42", "}", "}x", "a}b", "{", "{}", "{x}", "a{b}c", ":", " ", "ü", "emits", strings.Repeat("k", 300)}

// TestKeysShareOneSlot: every Redis key of one schedule is in one slot,
// whatever the caller's key, and distinct keys never share a Redis key.
func TestKeysShareOneSlot(t *testing.T) {
	b, err := NewBucket(nopClient(t), "api", rxthrottle.Per(1, time.Second))
	require.NoError(t, err)
	require.Equal(t, []string{"rxthrottle:{api}:done", "rxthrottle:{api}:held", "rxthrottle:{api}:state", "rxthrottle:{api}:runs"}, b.Keys())
	require.Equal(t, slot(b.Keys()[0]), slot(b.Keys()[1]))
	require.Equal(t, slot(b.Keys()[0]), slot(b.Keys()[2]))
	require.Equal(t, slot(b.Keys()[0]), slot(b.Keys()[3]))

	k, err := NewKeyed(nopClient(t), "users", rxthrottle.Per(1, time.Second))
	require.NoError(t, err)
	require.Equal(t, []string{"rxthrottle:{users:42}:done", "rxthrottle:{users:42}:held", "rxthrottle:{users:42}:state"}, k.Keys("42"))
	seen := map[string]string{}
	for _, key := range awkwardKeys {
		keys := k.Keys(key)
		require.Equal(t, slot(keys[0]), slot(keys[1]), "key %q: %v", key, keys)
		require.Equal(t, slot(keys[0]), slot(keys[2]), "key %q: %v", key, keys)
		require.Equal(t, slot(keys[0]), slot(k.keys(key)[3]), "key %q: %v", key, keys)
		for _, rk := range keys {
			if prev, dup := seen[rk]; dup {
				t.Fatalf("keys %q and %q share the Redis key %q", prev, key, rk)
			}
			seen[rk] = key
		}
	}
}

// TestOnCluster runs a Bucket and a Keyed limiter on a one-node Redis
// Cluster, which refuses with CROSSSLOT any script whose keys are in
// different slots, just as a many-node cluster does.
func TestOnCluster(t *testing.T) {
	srv := redistest.StartCluster(t)
	cc := srv.ClusterClient(t)
	ctx := context.Background()

	// The control: keys without a common tag are refused, so the test
	// below can fail.
	err := batchScript.Run(ctx, cc, []string{"rxthrottle:api:done", "rxthrottle:api:held", "rxthrottle:api:state", "rxthrottle:api:runs"}, 1, 0, 1000000, 1000000, 1, 1, 1000000, "0", 1, -1).Err()
	require.ErrorContains(t, err, "CROSSSLOT")

	for _, key := range awkwardKeys {
		v, err := srv.Do("CLUSTER", "KEYSLOT", scheduleKeys(keyedTag("users", key))[0])
		require.NoError(t, err)
		require.Equal(t, int64(slot(scheduleKeys(keyedTag("users", key))[0])), v, "our slot function agrees with the server for %q", key)
	}

	b, err := NewBucket(cc, "api", rxthrottle.Per(2, time.Hour), WithTimeout(suiteTimeout))
	require.NoError(t, err)
	require.NoError(t, b.Wait(ctx))
	ok, err := b.Allow(ctx)
	require.NoError(t, err)
	require.True(t, ok)
	ok, err = b.Allow(ctx)
	require.NoError(t, err)
	require.False(t, ok)
	b.Pause(time.Now().Add(time.Minute))
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, b.Wait(short), context.DeadlineExceeded)

	var log errorLog
	k, err := NewKeyed(cc, "users", rxthrottle.Per(1, time.Hour), OnError(log.hook), WithTimeout(suiteTimeout))
	require.NoError(t, err)
	for _, key := range awkwardKeys {
		require.NoError(t, k.Wait(ctx, key), "key %q", key)
		k.Pause(key, time.Now().Add(time.Minute))
		ok, err := k.Allow(ctx, key)
		require.NoError(t, err, "key %q", key)
		require.False(t, ok, "key %q is used up", key)
	}
	require.Zero(t, log.len(), "no call failed: %v", log.errs)
}
