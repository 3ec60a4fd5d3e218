package limiterkit_test

import (
	"fmt"
	"time"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/limiterkit"
)

// A limiter of another package takes rxthrottle's options and its own in
// one list, and names an option it does not read.
func Example() {
	// The package's own option.
	withShards := func(n int) rxthrottle.Option { return limiterkit.NewOption("mystore.WithShards", n) }

	// Its constructor.
	newBucket := func(limit rxthrottle.Limit, opts ...rxthrottle.Option) error {
		s, err := limiterkit.Resolve(opts)
		if err != nil {
			return err
		}
		if err := s.Check("mystore: NewBucket", "rxthrottle.WithLimit", "rxthrottle.OnAdmit", "mystore.WithShards"); err != nil {
			return err
		}
		shards := 1
		for _, e := range s.Extensions() {
			shards = e.Value.(int)
		}
		fmt.Println(append([]rxthrottle.Limit{limit}, s.Limits()...), shards, "shards")
		return nil
	}

	per := rxthrottle.Per(5, time.Second)
	fmt.Println(newBucket(per, rxthrottle.WithLimit(rxthrottle.Per(100, time.Minute)), withShards(4)))
	fmt.Println(newBucket(per, rxthrottle.WithMaxKeys(10)))
	_, err := rxthrottle.NewBucket(per, withShards(4))
	fmt.Println(err)
	// Output:
	// [5 per 1s 100 per 1m0s] 4 shards
	// <nil>
	// mystore: NewBucket does not read rxthrottle.WithMaxKeys
	// rxthrottle: mystore.WithShards is an option of another package's limiters: rxthrottle's limiters do not read it
}
