package rxthrottle_test

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/reactivex/rxgo/v2"

	"github.com/rxthrottle/rxthrottle"
)

// ExampleWithTenant shares one API key among the users of a service: a
// heavy user queues four calls, a light one two after them, and the light
// user's calls alternate with the heavy one's instead of waiting behind
// all of them.
func ExampleWithTenant() {
	mock := clock.NewMock()
	bucket, err := rxthrottle.NewBucket(rxthrottle.Per(1, time.Second), rxthrottle.WithClock(mock))
	if err != nil {
		panic(err)
	}
	if err := bucket.Wait(context.Background()); err != nil { // takes this second's token
		panic(err)
	}
	went := make(chan string)
	call := func(user string) {
		ctx := rxthrottle.WithTenant(context.Background(), user, 1) // each user's share: weight 1
		if err := bucket.Wait(ctx); err != nil {
			panic(err)
		}
		went <- user
	}
	for i, user := range []string{"heavy", "heavy", "heavy", "heavy", "light", "light"} {
		go call(user)
		for bucket.Stats().Queued == i { // until it waits
			time.Sleep(time.Millisecond)
		}
	}
	for range 6 {
		mock.Add(time.Second) // one token a second
		fmt.Println(<-went)
	}
	// Output:
	// heavy
	// light
	// heavy
	// light
	// heavy
	// heavy
}

// ExampleWithAdaptiveConcurrency lets the cap on calls in flight follow
// the server: it doubles while the calls that fill it stay fast, and is
// cut when they slow down.
func ExampleWithAdaptiveConcurrency() {
	mock := clock.NewMock()
	bucket, err := rxthrottle.NewBucket(rxthrottle.Per(1000, time.Second), rxthrottle.WithClock(mock),
		rxthrottle.WithAdaptiveConcurrency(1, 8))
	if err != nil {
		panic(err)
	}
	// round makes a round of calls, as many at once as the cap allows,
	// that each take latency, and prints the cap after it.
	round := func(latency time.Duration) {
		for calls := 0; calls < 4 || calls < bucket.Stats().ConcurrencyCap; {
			var tokens []rxthrottle.Token
			for range bucket.Stats().ConcurrencyCap {
				tok, err := bucket.Acquire(context.Background())
				if err != nil {
					panic(err)
				}
				tokens = append(tokens, tok)
			}
			mock.Add(latency) // the calls take latency
			for _, tok := range tokens {
				tok.Release()
			}
			calls += len(tokens)
		}
		fmt.Println("cap", bucket.Stats().ConcurrencyCap)
	}
	round(10 * time.Millisecond)
	round(10 * time.Millisecond)
	round(10 * time.Millisecond)
	round(40 * time.Millisecond) // the server slows down
	round(10 * time.Millisecond) // and recovers
	// Output:
	// cap 2
	// cap 4
	// cap 8
	// cap 2
	// cap 3
}

// ExampleKeyed_Wait_tenants shares each key's quota among tenants: on the
// key of one API, a tenant's two calls after another's four alternate
// with them.
func ExampleKeyed_Wait_tenants() {
	mock := clock.NewMock()
	apis, err := rxthrottle.NewKeyed(rxthrottle.Per(1, time.Second), rxthrottle.WithClock(mock))
	if err != nil {
		panic(err)
	}
	if err := apis.Wait(context.Background(), "search"); err != nil { // takes this second's token
		panic(err)
	}
	went := make(chan string)
	for i, user := range []string{"heavy", "heavy", "heavy", "heavy", "light", "light"} {
		go func() {
			if err := apis.Wait(rxthrottle.WithTenant(context.Background(), user, 1), "search"); err != nil {
				panic(err)
			}
			went <- user
		}()
		for apis.Stats().Queued == i { // until it waits
			time.Sleep(time.Millisecond)
		}
	}
	for range 6 {
		mock.Add(time.Second)
		fmt.Println(<-went)
	}
	// Output:
	// heavy
	// light
	// heavy
	// light
	// heavy
	// heavy
}

// ExampleThrottleMapWith_tenants shares one Bucket among ThrottleMap
// streams of two tenants, each stream's tenant that of its Observe
// context: the heavy tenant's three streams and the light tenant's one
// take turns while both wait, where first come, first served would give
// the light tenant one token in four.
func ExampleThrottleMapWith_tenants() {
	mock := clock.NewMock()
	bucket, err := rxthrottle.NewBucket(rxthrottle.Per(1, time.Second), rxthrottle.WithClock(mock))
	if err != nil {
		panic(err)
	}
	if err := bucket.Wait(context.Background()); err != nil { // takes this second's token
		panic(err)
	}
	called := make(chan string)
	call := func(_ context.Context, v any) (any, error) {
		called <- v.(string)
		return v, nil
	}
	left := map[string]int{} // each stream's items not yet called
	var wg sync.WaitGroup
	stream := func(name, tenant string, n int) {
		items := make([]any, n)
		for i := range items {
			items[i] = name
		}
		left[name] = n
		ctx := rxthrottle.WithTenant(context.Background(), tenant, 1)
		out := rxthrottle.ThrottleMapWith(bucket, call)(rxgo.Just(items...)()).Observe(rxgo.WithContext(ctx))
		wg.Go(func() {
			for range out {
			}
		})
		for bucket.Stats().Queued < len(left) { // until its first item waits
			time.Sleep(time.Millisecond)
		}
	}
	stream("heavy 1", "heavy", 2)
	stream("heavy 2", "heavy", 2)
	stream("heavy 3", "heavy", 2)
	stream("light", "light", 3)
	waiting := func() { // until the last call's token is released and every stream with items left waits
		n := 0
		for _, l := range left {
			n += min(l, 1)
		}
		for st := bucket.Stats(); st.Queued != n || st.Held != 0; st = bucket.Stats() {
			time.Sleep(time.Millisecond)
		}
	}
	for range 9 {
		waiting()
		mock.Add(time.Second) // one token a second
		name := <-called
		left[name]--
		fmt.Println(name)
	}
	wg.Wait()
	// Output:
	// heavy 1
	// light
	// heavy 2
	// light
	// heavy 3
	// light
	// heavy 1
	// heavy 2
	// heavy 3
}

// ExampleKeyed_Acquire_adaptive: each key of a Keyed limiter learns its
// own cap on calls in flight (WithAdaptiveConcurrency). The calls of
// "search" stay fast however many run at once; those of "export" slow
// down past 2 at once. Each call is replaced by new ones as it ends, as
// many as its key's cap lets go; each line shows the calls in flight at
// each step: search's cap doubles up to the maximum, export's stays about
// 2, where its calls start to slow down (it tries 3 or 4, finds them slow
// and cuts back). Keyed.ConcurrencyCap reports each key's cap.
func ExampleKeyed_Acquire_adaptive() {
	mock := clock.NewMock()
	apis, err := rxthrottle.NewKeyed(rxthrottle.Per(10000, time.Second), rxthrottle.WithClock(mock),
		rxthrottle.WithAdaptiveConcurrency(1, 16))
	if err != nil {
		panic(err)
	}
	// more takes tokens of key until the next caller would wait for the
	// cap, and returns them.
	more := func(key string) []rxthrottle.Token {
		var toks []rxthrottle.Token
		for {
			ctx, cancel := context.WithCancel(context.Background())
			got := make(chan rxthrottle.Token, 1)
			go func() {
				tok, _ := apis.Acquire(ctx, key) // an error once cancelled
				got <- tok
			}()
			for apis.Stats().Queued == 0 && len(got) == 0 { // until it has a token or waits
				time.Sleep(time.Millisecond)
			}
			waits := apis.Stats().Queued > 0
			cancel()
			if waits {
				<-got
				return toks
			}
			toks = append(toks, <-got)
		}
	}
	latency := map[string]func(inFlight int) time.Duration{
		"search": func(int) time.Duration { return 10 * time.Millisecond },
		"export": func(n int) time.Duration { return 10 * time.Millisecond * time.Duration(max(n*n/4, 1)) },
	}
	for _, key := range []string{"search", "export"} {
		fmt.Print(key, ":")
		calls := more(key)
		for range 20 {
			mock.Add(latency[key](len(calls))) // the calls in flight end
			var next []rxthrottle.Token
			for _, tok := range calls {
				tok.Release()
				next = append(next, more(key)...)
			}
			calls = next
			fmt.Print(" ", len(calls))
		}
		fmt.Println()
	}
	fmt.Println("caps now: search", apis.ConcurrencyCap("search"), "export", apis.ConcurrencyCap("export"))
	// Output:
	// search: 1 1 1 2 2 4 8 8 16 16 16 16 16 16 16 16 16 16 16 16
	// export: 1 1 1 2 2 4 3 1 1 1 1 1 2 2 3 3 1 1 1 1
	// caps now: search 16 export 1
}
