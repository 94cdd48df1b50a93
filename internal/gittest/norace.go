//go:build !race

package gittest

// RaceEnabled reports whether the test binary was built with -race.
const RaceEnabled = false
