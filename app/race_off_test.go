//go:build !race

package app

// raceDetector reports that the test binary runs under the race detector.
const raceDetector = false
