//go:build race

package locate

// raceDetector is set when the tests run with -race, whose shadow memory
// multiplies what a process holds: peak-memory bounds do not apply.
const raceDetector = true
