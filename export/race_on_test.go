//go:build race

package export

// raceOn: under the race detector, sync.Pool drops items at random.
const raceOn = true
