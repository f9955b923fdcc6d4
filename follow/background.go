package follow

import (
	"context"
	"time"
)

// background runs f in a goroutine; stop cancels f's context and waits for
// it, done reports whether f returned.
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

// every calls f each period in a goroutine, until stop or f returns false.
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
