package rxthrottle

import "context"

// MaxInWindow lends the SPEC reference helper of spec_test.go to the tests
// of package rxthrottle_test.
var MaxInWindow = maxInWindow

// AllowNow is Allow for tests on a live bucket with nothing to go wrong: it
// fails loudly on an error.
func AllowNow(b *Bucket) bool {
	ok, err := b.Allow(context.Background())
	if err != nil {
		panic(err)
	}
	return ok
}

// allowKey is Keyed.Allow for tests, failing loudly on an error other than
// an expected refusal (empty key, too many keys), which reads as false.
func allowKey(k *Keyed, key string) bool {
	ok, _ := k.Allow(context.Background(), key)
	return ok
}
