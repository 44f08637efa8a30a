//go:build race

package fetchcapture

const raceEnabled = true
