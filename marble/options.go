package marble

import (
	"errors"
	"fmt"
	"time"
)

// ErrMarble is the error a # stands for, unless WithError names another.
var ErrMarble = errors.New("marble: error")

// RunOption configures Run.
type RunOption interface {
	applyRun(*runConfig) error
}

type runConfig struct {
	frame time.Duration
	idle  int64         // frames
	stall time.Duration // real time without progress before Run says why (tests shorten it)
}

const (
	defaultFrame = time.Millisecond
	defaultIdle  = 1000
	defaultStall = 10 * time.Second
)

func buildRunConfig(opts []RunOption) (runConfig, error) {
	c := runConfig{frame: defaultFrame, idle: defaultIdle, stall: defaultStall}
	for _, o := range opts {
		if o == nil {
			return c, errors.New("marble: nil RunOption")
		}
		if err := o.applyRun(&c); err != nil {
			return c, err
		}
	}
	return c, nil
}

type frameOption time.Duration

func (o frameOption) applyRun(c *runConfig) error {
	if o <= 0 {
		return fmt.Errorf("marble: WithFrame(%v): the frame must be positive", time.Duration(o))
	}
	c.frame = time.Duration(o)
	return nil
}

// WithFrame sets how long one frame (one - of a marble) lasts in virtual
// time. The default is 1ms, as in rxjs run mode, so a time progression
// "10ms " is ten frames. Every delay of the pipeline under test should be
// a whole number of frames, or be written in the expected marble with a
// time progression ("2.5ms "): an output that falls between two frames
// where the expected marble has nothing fails the test with a message
// that says so.
func WithFrame(d time.Duration) RunOption { return frameOption(d) }

type idleOption int64

func (o idleOption) applyRun(c *runConfig) error {
	if o < 1 {
		return fmt.Errorf("marble: WithIdle(%d): need at least one frame", int64(o))
	}
	c.idle = int64(o)
	return nil
}

// WithIdle sets how many frames Run keeps watching, after the last source
// event and the end of the longest marble, for an observable that never
// completes (a hot source without |, Never, an Interval) or a channel that
// is never closed. Run stops earlier when every ExpectObservable and
// ExpectChan has seen its observable end (its channel closed) or its !
// unsubscribe it. The default is 1000 frames; virtual frames cost almost
// nothing, so raise it for pipelines with long timers.
func WithIdle(frames int64) RunOption { return idleOption(frames) }

// MarbleOption configures how a source (Cold, Hot, ColdChan, HotChan and
// their Result variants) or a ToBe reads a marble: WithError for all of
// them, WithBuffer for the channel sources only.
type MarbleOption interface {
	applyMarble(*marbleConfig) error
}

type marbleConfig struct {
	err error
}

func buildMarbleConfig(opts []MarbleOption) (marbleConfig, error) {
	c := marbleConfig{err: ErrMarble}
	for _, o := range opts {
		if o == nil {
			return c, errors.New("marble: nil MarbleOption")
		}
		if err := o.applyMarble(&c); err != nil {
			return c, err
		}
	}
	return c, nil
}

type errorOption struct{ err error }

func (o errorOption) applyMarble(c *marbleConfig) error {
	if o.err == nil {
		return errors.New("marble: WithError(nil): # needs a non-nil error")
	}
	c.err = o.err
	return nil
}

// WithError sets the error a # stands for in this marble (ErrMarble by
// default): the Err of the Result a ColdResultChan or HotResultChan sends
// for it, too. In ToBe, an observed error matches when errors.Is(got,
// err).
func WithError(err error) MarbleOption { return errorOption{err} }
