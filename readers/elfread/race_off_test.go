//go:build !race

package elfread

// raceEnabled: the tests run under the race detector, where a whole
// library's graph takes seconds.
const raceEnabled = false
