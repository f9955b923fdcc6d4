package testenv

import (
	"fmt"
	"time"
)

// PollInterval is how often Poll asks its condition again.
const PollInterval = 10 * time.Millisecond

// Poll waits for an event a test cannot be told of (an output line, a released
// slot), asking done every PollInterval until true. It errs, naming what it
// waited for, when ended (nil: never) closes or receives first (after one last
// ask), or at limit: a bound on a hang, not a speed measure.
func Poll[T any](what string, limit time.Duration, ended <-chan T, done func() bool) error {
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	tick := time.NewTicker(PollInterval)
	defer tick.Stop()
	for !done() {
		select {
		case <-ended:
			if done() {
				return nil
			}
			return fmt.Errorf("waiting for %s: the run ended first", what)
		case <-deadline.C:
			return fmt.Errorf("waiting for %s: not seen in %s", what, limit)
		case <-tick.C:
		}
	}
	return nil
}
