package pipeline

import (
	"context"
	"sync"
	"time"
)

// stopper holds the stopping rules. Reading stops when ctx is done or a reader,
// writer or callback fails. Writing goes on so the batches read are written and
// the summary describes the table, unless a writer or callback failed or grace
// passed since ctx was done.
type stopper struct {
	reading, writing         context.Context
	stopReading, stopWriting context.CancelCauseFunc
	// unwatch stops waiting for ctx; mu guards grace, the timer started then.
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

func (s *stopper) fail(err error) error {
	s.stopWriting(err)
	s.stopReading(err)
	return err
}

// readErr is the cause that stopped reading (not the cancellation it caused),
// else err.
func (s *stopper) readErr(err error) error {
	if s.reading.Err() != nil {
		return context.Cause(s.reading)
	}
	return err
}

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
