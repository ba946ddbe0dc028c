package plan

import (
	"fmt"
	"strings"
)

// TestResult says whether a task's tests passed. It is written to
// tasks.csv (and a matrix task's result) as "true", "false" or an empty
// cell, the format those files always had.
type TestResult string

// The values of TestResult.
const (
	TestsNotRun TestResult = ""      // no test ran, or none was reported
	TestsPass   TestResult = "true"  // the tests passed
	TestsFail   TestResult = "false" // the tests failed
)

// TestsFrom is the result an agent or a check reported as a boolean.
func TestsFrom(passed bool) TestResult {
	if passed {
		return TestsPass
	}
	return TestsFail
}

// Passed reports whether the tests ran and passed.
func (r TestResult) Passed() bool { return r == TestsPass }

// ParseTestResult reads a tests_passed cell: true, false or empty, in any
// case and with spaces around it (as older planex and people wrote it).
func ParseTestResult(s string) (TestResult, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true":
		return TestsPass, nil
	case "false":
		return TestsFail, nil
	case "":
		return TestsNotRun, nil
	}
	return TestsNotRun, fmt.Errorf("%q must be true, false or empty", s)
}

// UnmarshalText reads the value as ParseTestResult does (JSON strings).
func (r *TestResult) UnmarshalText(b []byte) error {
	v, err := ParseTestResult(string(b))
	if err != nil {
		return err
	}
	*r = v
	return nil
}
