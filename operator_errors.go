package rxthrottle

import (
	"context"
	"fmt"
	"reflect"
	"runtime/debug"
	"strings"

	"github.com/reactivex/rxgo/v2"
)

// PanicError is the error item an operator emits in place of an item when
// code it calls for that item panics (a ThrottleBy key function, a
// ThrottleMap function, a Limiter): the process goes on, and the item's
// error item says what happened. Unwrap returns the panic value if it is an
// error, so errors.Is and errors.As see through it.
type PanicError struct {
	// Op names what panicked, such as "ThrottleBy: the key function".
	Op string
	// Item is the position of the item in the source, from 1 (error items
	// included).
	Item int
	// Value is what was passed to panic.
	Value any
	// Stack is the stack of the goroutine that panicked, at the panic.
	Stack []byte
}

// Error says what panicked, on which item, and with what value.
func (e *PanicError) Error() string {
	return fmt.Sprintf("rxthrottle: %s panicked on item #%d: %v", e.Op, e.Item, e.Value)
}

// Unwrap returns the panic value if it is an error, else nil.
func (e *PanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}

// recovered turns the value of recover() into a *PanicError, or returns nil
// for nil. Call it in the deferred function that recovers.
func recovered(r any, op string, item int) error {
	if r == nil {
		return nil
	}
	return &PanicError{Op: op, Item: item, Value: r, Stack: debug.Stack()}
}

// errNoToken is the error item for an item that got no token because the
// limiter failed: it says which item and wraps the cause.
func errNoToken(op string, item int, cause error) error {
	return fmt.Errorf("rxthrottle: %s: item #%d got no token, the limiter failed: %w", op, item, cause)
}

// itemError is the error item for an item that the operator op refused
// with err, an error of this package: it says which item, and does not
// repeat the package's name in the middle of the message.
type itemError struct {
	op   string
	item int
	err  error
}

func (e *itemError) Error() string {
	return fmt.Sprintf("rxthrottle: %s: item #%d: %s", e.op, e.item, strings.TrimPrefix(e.err.Error(), "rxthrottle: "))
}

func (e *itemError) Unwrap() error { return e.err }

// isNil reports whether v is nil or an interface holding a nil pointer
// (such as (*Bucket)(nil)), whose methods would panic.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}

// observe subscribes to src for op with ctx, or returns the error to emit
// if src is nil or its Observe panics.
func observe(ctx context.Context, op string, src rxgo.Observable) (in <-chan rxgo.Item, err error) {
	if isNil(src) {
		return nil, fmt.Errorf("rxthrottle: %s: the source Observable is nil", op)
	}
	defer func() {
		if r := recover(); r != nil {
			in, err = nil, fmt.Errorf("rxthrottle: %s: the source's Observe panicked: %v", op, r)
		}
	}()
	return src.Observe(rxgo.WithContext(ctx)), nil
}

// usableBucket returns an error to emit if b cannot be used: nil, or not
// made by NewBucket.
func usableBucket(op string, b *Bucket) error {
	switch {
	case b == nil:
		return fmt.Errorf("rxthrottle: %s: the *Bucket is nil", op)
	case b.usable() != nil:
		return fmt.Errorf("rxthrottle: %s: the *Bucket was not made by NewBucket", op)
	}
	return nil
}

// stopped reports whether ctx, the subscription's, has ended: a wait that
// failed then stops the operator quietly, as rxgo operators stop, since
// nobody is listening; otherwise the failure is the limiter's, and the
// operator emits it.
func stopped(ctx context.Context) bool { return ctx.Err() != nil }
