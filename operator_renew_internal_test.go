package rxthrottle

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/benbjohnson/clock"
)

// TestSendHeldRenewsAnOldTokenBeforeOffering: a token taken longer ago
// than the renewal (ThrottleByWith's item that waited behind others of its
// key) is changed for a new one before the item is offered, even to a
// receiver already waiting: its hold may have timed out, and its token
// come back, while it waited.
func TestSendHeldRenewsAnOldTokenBeforeOffering(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, err := NewBucket(Per(2, time.Hour), WithHoldTimeout(time.Second))
		if err != nil {
			t.Fatal(err)
		}
		r := renewal{clock.New(), 500 * time.Millisecond} // half the hold timeout, as renewalOf makes it
		old, err := b.Acquire(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		since := time.Now()
		time.Sleep(2 * time.Second) // past the hold timeout: old has ended
		out := make(chan int)
		got := make(chan int)
		go func() { got <- <-out }()
		synctest.Wait() // the receiver waits
		renewed := 0
		again := func() (Token, error) { renewed++; return b.Acquire(context.Background()) }
		sent, err := sendHeld(t.Context(), r, out, 7, old, since, again)
		if !sent || err != nil || <-got != 7 {
			t.Fatalf("sendHeld: sent %v, %v", sent, err)
		}
		if renewed != 1 {
			t.Fatalf("the item went under the token taken %v before, renewed %d times; want it renewed once first", 2*time.Second, renewed)
		}
		if st := b.Stats(); st.Released != 2 || st.Held != 0 {
			t.Fatalf("Stats: %d released (the old token at its timeout, the new at the send), %d held; want 2, 0", st.Released, st.Held)
		}
	})
}
