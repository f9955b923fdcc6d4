package follow

import (
	"context"
	"time"
)

// background runs f in a goroutine of its own, with a context that stop
// cancels; stop then waits for f to return, and done reports whether it has.
func background(ctx context.Context, f func(context.Context)) (stop func(), done func() bool) {
	ctx, cancel := context.WithCancel(ctx)
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		f(ctx)
	}()
	stop = func() {
		cancel()
		<-finished
	}
	done = func() bool {
		select {
		case <-finished:
			return true
		default:
			return false
		}
	}
	return stop, done
}

// every calls f each period, from a goroutine of its own, until stop or f
// returns false; stop waits for the goroutine.
func every(ctx context.Context, period time.Duration, f func(context.Context) bool) (stop func()) {
	stop, _ = background(ctx, func(ctx context.Context) {
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if !f(ctx) {
					return
				}
			}
		}
	})
	return stop
}
