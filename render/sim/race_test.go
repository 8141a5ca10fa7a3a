//go:build race

package sim

// raceDetector says the tests run under the race detector, whose shadow memory
// counts in the process's RSS (several times the program's own).
const raceDetector = true
