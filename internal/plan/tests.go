package plan

import (
	"fmt"
	"strings"
)

// TestResult says whether a task's tests passed, and who says so. It is
// written to tasks.csv (and a matrix task's result) as "true", "false", an
// empty cell (the format those files always had) or "claimed".
type TestResult string

// The values of TestResult.
const (
	TestsNotRun TestResult = ""      // no test ran, or none was reported
	TestsPass   TestResult = "true"  // the tests passed
	TestsFail   TestResult = "false" // the tests failed
	// TestsClaimed: the agent says its tests passed and planex ran none to
	// check (the task has no execution_directives). The report shows it as
	// the agent's word, never as a pass planex saw.
	TestsClaimed TestResult = "claimed"
)

// TestsFrom is the result an agent or a check reported as a boolean.
func TestsFrom(passed bool) TestResult {
	if passed {
		return TestsPass
	}
	return TestsFail
}

// ClaimedFrom is what an agent's own tests_passed is worth: a claim when
// it says they passed, a failure when it says they did not.
func ClaimedFrom(passed bool) TestResult {
	if passed {
		return TestsClaimed
	}
	return TestsFail
}

// Passed reports whether the tests passed, by planex's check or by the
// agent's word (a task is not failed for lack of a check).
func (r TestResult) Passed() bool { return r == TestsPass || r == TestsClaimed }

// ParseTestResult reads a tests_passed cell: true, false, claimed or empty, in any
// case and with spaces around it (as older planex and people wrote it).
func ParseTestResult(s string) (TestResult, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true":
		return TestsPass, nil
	case "false":
		return TestsFail, nil
	case "":
		return TestsNotRun, nil
	case "claimed":
		return TestsClaimed, nil
	}
	return TestsNotRun, fmt.Errorf("%q must be true, false, claimed or empty", s)
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
