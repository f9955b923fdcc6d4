package pipeline

import (
	"context"
	"sync"
	"time"
)

// stopper holds the run's stopping rules. Reading stops when the run's
// context is done, a reader fails, a writer fails or a callback fails.
// Writing goes on after reading stops, so that the batches already read
// are written and the summary describes the table, unless a writer or a
// callback failed, or grace has passed since the run's context was done.
type stopper struct {
	// reading is the readers' context; writing the writers'.
	reading, writing         context.Context
	stopReading, stopWriting context.CancelCauseFunc
	// unwatch stops waiting for the run's context; mu guards grace, the
	// timer started when it is done.
	unwatch func() bool
	mu      sync.Mutex
	grace   *time.Timer
	ended   bool
}

func newStopper(ctx context.Context, grace time.Duration) *stopper {
	s := &stopper{}
	s.reading, s.stopReading = context.WithCancelCause(ctx)
	s.writing, s.stopWriting = context.WithCancelCause(context.WithoutCancel(ctx))
	s.unwatch = context.AfterFunc(ctx, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if !s.ended {
			s.grace = time.AfterFunc(grace, func() { s.stopWriting(context.Cause(ctx)) })
		}
	})
	return s
}

// fail stops reading and writing with err, and returns it.
func (s *stopper) fail(err error) error {
	s.stopWriting(err)
	s.stopReading(err)
	return err
}

// readErr is what a reader returns for err: the cause of the stop when
// reading was stopped (the error that stopped it, not the cancellation
// it caused), else err.
func (s *stopper) readErr(err error) error {
	if s.reading.Err() != nil {
		return context.Cause(s.reading)
	}
	return err
}

// end releases the contexts and the grace timer; the run is over.
func (s *stopper) end() {
	s.unwatch()
	s.mu.Lock()
	s.ended = true
	if s.grace != nil {
		s.grace.Stop()
	}
	s.mu.Unlock()
	s.stopReading(nil)
	s.stopWriting(nil)
}
