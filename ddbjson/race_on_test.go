//go:build race

package ddbjson

// raceOn: under the race detector, sync.Pool drops items at random.
const raceOn = true
