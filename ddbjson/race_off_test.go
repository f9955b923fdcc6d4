//go:build !race

package ddbjson

const raceOn = false
