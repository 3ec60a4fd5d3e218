package rxthrottle_test

import (
	"context"
	"testing"
	"time"

	"github.com/rxthrottle/rxthrottle"
)

// BenchmarkMetering measures what each metering option costs a call that
// finds its token free (a one-nanosecond window): Wait with no option, with
// WithConcurrency, WithMaxQueue, on a context with a priority or a
// deadline, and Acquire ended by Release against ReleaseN (of as much, of
// less, of a debt), with and without WithConcurrency.
func BenchmarkMetering(b *testing.B) {
	per := rxthrottle.Per(1000, time.Nanosecond)
	bucket := func(b *testing.B, opts ...rxthrottle.Option) *rxthrottle.Bucket {
		bk, err := rxthrottle.NewBucket(per, opts...)
		if err != nil {
			b.Fatal(err)
		}
		return bk
	}
	wait := func(b *testing.B, bk *rxthrottle.Bucket, ctx context.Context) {
		b.ReportAllocs()
		for b.Loop() {
			if err := bk.Wait(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
	ctx := context.Background()
	b.Run("op=wait/opt=none", func(b *testing.B) { wait(b, bucket(b), ctx) })
	b.Run("op=wait/opt=concurrency", func(b *testing.B) { wait(b, bucket(b, rxthrottle.WithConcurrency(4)), ctx) })
	b.Run("op=wait/opt=maxqueue", func(b *testing.B) { wait(b, bucket(b, rxthrottle.WithMaxQueue(16)), ctx) })
	b.Run("op=wait/opt=priority", func(b *testing.B) { wait(b, bucket(b), rxthrottle.WithPriority(ctx, 1)) })
	b.Run("op=wait/opt=deadline", func(b *testing.B) {
		dctx, cancel := context.WithTimeout(ctx, time.Hour)
		defer cancel()
		wait(b, bucket(b), dctx)
	})
	acquire := func(b *testing.B, bk *rxthrottle.Bucket, end func(rxthrottle.Token) error) {
		b.ReportAllocs()
		for b.Loop() {
			tok, err := bk.AcquireN(ctx, 2)
			if err != nil {
				b.Fatal(err)
			}
			if err := end(tok); err != nil {
				b.Fatal(err)
			}
		}
	}
	release := func(tok rxthrottle.Token) error { tok.Release(); return nil }
	b.Run("op=acquire/end=release", func(b *testing.B) { acquire(b, bucket(b), release) })
	b.Run("op=acquire/end=release/opt=concurrency", func(b *testing.B) {
		acquire(b, bucket(b, rxthrottle.WithConcurrency(4)), release)
	})
	for _, used := range []struct {
		name string
		n    int
	}{{"releaseN-same", 2}, {"releaseN-less", 1}, {"releaseN-debt", 5}} {
		b.Run("op=acquire/end="+used.name, func(b *testing.B) {
			acquire(b, bucket(b), func(tok rxthrottle.Token) error { return tok.ReleaseN(used.n) })
		})
	}
	b.Run("op=unlimited-wait", func(b *testing.B) {
		l := rxthrottle.Unlimited()
		b.ReportAllocs()
		for b.Loop() {
			if err := l.Wait(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
}
