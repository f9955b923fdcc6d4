package testenv

import (
	"fmt"
	"time"
)

// PollInterval is how often Poll asks its condition again.
const PollInterval = 10 * time.Millisecond

// Poll waits for an event a test cannot be told of otherwise (a line in a
// process's output, a slot released): it asks done every PollInterval
// until it returns true, and returns nil then. It returns an error naming
// what it waited for when ended (nil: never) is closed or receives first,
// after asking done once more, or when limit passes: a bound on a hang,
// never a measure of speed.
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
