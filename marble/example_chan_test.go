package marble_test

import (
	"testing"
	"time"

	"github.com/rxthrottle/rxthrottle/marble"
)

func ExampleColdChan() {
	test(func(t *testing.T) {
		marble.Run(t, func(s *marble.Scheduler) {
			values := map[string]int{"a": 1, "b": 2, "c": 3}
			in := marble.ColdChan(s, "a-b-c|", values)
			// The code under test doubles each value and takes 2 frames
			// per value, on the time package: inside Run that is
			// virtual time.
			out := make(chan int)
			go func() {
				defer close(out)
				for v := range in {
					time.Sleep(2 * s.Frame())
					out <- 2 * v
				}
			}()
			// The input closes at 5, while 3 is being doubled: the
			// output closes after 6, at 6.
			marble.ExpectChan(s, out).ToBe("--x-y-(z|)", map[string]int{"x": 2, "y": 4, "z": 6})
		})
	})
	// Output: passed: true
}

func ExampleColdResultChan() {
	test(func(t *testing.T) {
		marble.Run(t, func(s *marble.Scheduler) {
			// Each call plays the marble anew, from the instant of the
			// call: the consumer below reconnects once after an error.
			connect := func() <-chan marble.Result[string] {
				return marble.ColdResultChan[string](s, "a-b-#", nil)
			}
			out := make(chan string)
			go func() {
				defer close(out)
				for range 2 {
					for r := range connect() {
						if r.Err == nil {
							out <- r.Value
						}
					}
				}
			}()
			marble.ExpectChan(s, out).ToBe("a-b-a-b-|", nil)
		})
	})
	// Output: passed: true
}

func ExampleHotChan() {
	test(func(t *testing.T) {
		marble.Run(t, func(s *marble.Scheduler) {
			// A hot channel sends on the clock, whoever receives, with
			// a buffer of 1 here: ^ is frame 0, and a, before it, is
			// never sent.
			in := marble.HotChan[string](s, "a^b-c-d|", nil, marble.WithBuffer(1))
			// ExpectChan starts reading at frame 4 (the ^ of its
			// subscription marble): b, sent at 1, waits in the buffer;
			// c, at 3, finds it full and is dropped (the test log says
			// so); d comes at 5, and the close at 6.
			marble.ExpectChan(s, in, "----^").ToBe("----bd|", nil)
		})
	})
	// Output: passed: true
}
