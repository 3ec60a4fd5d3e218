package redisstore_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/httpthrottle"
	"github.com/rxthrottle/rxthrottle/redisstore"
)

// README.md's snippet of a shared quota, compiled and run here because
// package redisstore is a module of its own: the root module's
// TestREADMESnippets finds it in this file.

// readmeRedisClient is README's http.Client over Redis.
func readmeRedisClient(redisClient *redis.Client) (*http.Client, error) {
	quota, err := redisstore.NewBucket(redisClient, "github-api", rxthrottle.Per(5000, time.Hour))
	if err != nil {
		return nil, err
	}
	transport, err := httpthrottle.NewTransport(quota) // also honours 429 Retry-After
	if err != nil {
		return nil, err
	}
	client := &http.Client{Transport: transport}
	return client, nil
}

func TestREADMERedisClient(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}) // not contacted
	defer rdb.Close()
	client, err := readmeRedisClient(rdb)
	require.NoError(t, err)
	require.NotNil(t, client.Transport)
}
