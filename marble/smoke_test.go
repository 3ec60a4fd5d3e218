package marble

import (
	"context"
	"testing"

	"github.com/reactivex/rxgo/v2"
)

func TestSmoke(t *testing.T) {
	Run(t, func(s *Scheduler) {
		src := s.Cold("a-b-c|", nil)
		s.ExpectObservable(src).ToBe("a-b-c|", nil)
		m := src.Map(func(_ context.Context, v any) (any, error) { return v.(string) + "!", nil })
		s.ExpectObservable(m).ToBe("a-b-c|", map[string]any{"a": "a!", "b": "b!", "c": "c!"})
		s.ExpectSubscriptions(src).ToBe("^----!", "^----!")
		_ = rxgo.Just
	})
}

func TestSmokeFail(t *testing.T) {
	Run(t, func(s *Scheduler) {
		src := s.Cold("a-b-c|", nil)
		s.ExpectObservable(src).ToBe("a--b-c|", nil)
	})
}
