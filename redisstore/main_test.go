package redisstore

import (
	"fmt"
	"testing"

	"github.com/rxthrottle/rxthrottle/redisstore/redistest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if msg := redistest.Missing(); msg != "" {
		redistest.Announce(fmt.Sprintf("redisstore: %s", msg))
	}
	goleak.VerifyTestMain(m)
}
