package plan

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestParseTestResult(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in   string
		want TestResult
		bad  bool
	}{
		{"true", TestsPass, false},
		{"false", TestsFail, false},
		{"", TestsNotRun, false},
		{" TRUE ", TestsPass, false},
		{"False", TestsFail, false},
		{"claimed", TestsClaimed, false},
		{" Claimed", TestsClaimed, false},
		{"yes", TestsNotRun, true},
		{"1", TestsNotRun, true},
	}
	for _, c := range cases {
		got, err := ParseTestResult(c.in)
		if got != c.want || (err != nil) != c.bad {
			t.Errorf("ParseTestResult(%q) = %q, %v; want %q (error: %v)", c.in, got, err, c.want, c.bad)
		}
	}
	if !TestsPass.Passed() || !TestsClaimed.Passed() || TestsFail.Passed() || TestsNotRun.Passed() {
		t.Error("Passed is true only for TestsPass and TestsClaimed")
	}
	if TestsFrom(true) != TestsPass || TestsFrom(false) != TestsFail {
		t.Error("TestsFrom does not map booleans to pass and fail")
	}
	if ClaimedFrom(true) != TestsClaimed || ClaimedFrom(false) != TestsFail {
		t.Error("ClaimedFrom does not map an agent's booleans to a claim and a failure")
	}
}

// TestTestResultWireFormat: tasks.csv keeps "true", "false" and an empty
// cell, older files (any case) still read, and a JSON result refuses
// anything else.
func TestTestResultWireFormat(t *testing.T) {
	t.Parallel()
	tasks := []Task{
		{ID: "T1", Title: "a", Scope: "a/**", Status: StatusCompleted, TestsPassed: TestsPass},
		{ID: "T2", Title: "b", Scope: "b/**", Status: StatusFailed, TestsPassed: TestsFail},
		{ID: "T3", Title: "c", Scope: "c/**", Status: StatusPending},
	}
	csv := string(WriteTasks(tasks))
	for _, row := range []string{"T1,", "T2,", "T3,"} {
		if !strings.Contains(csv, row) {
			t.Fatalf("no row %s in:\n%s", row, csv)
		}
	}
	back, err := ReadTasks("tasks.csv", []byte(csv))
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []TestResult{TestsPass, TestsFail, TestsNotRun} {
		if back[i].TestsPassed != want {
			t.Errorf("%s: tests_passed %q after a round trip, want %q", back[i].ID, back[i].TestsPassed, want)
		}
	}
	old := strings.Replace(csv, ",true,", ",TRUE,", 1)
	if back, err := ReadTasks("tasks.csv", []byte(old)); err != nil || back[0].TestsPassed != TestsPass {
		t.Errorf("an older TRUE cell: %v, %+v", err, back)
	}
	bad := strings.Replace(csv, ",true,", ",maybe,", 1)
	if _, err := ReadTasks("tasks.csv", []byte(bad)); err == nil || !strings.Contains(err.Error(), "tests_passed") {
		t.Errorf("a bad tests_passed cell read without an error naming it: %v", err)
	}

	var res struct {
		T TestResult `json:"tests_passed,omitempty"`
	}
	for in, want := range map[string]TestResult{`{"tests_passed":"true"}`: TestsPass, `{"tests_passed":"false"}`: TestsFail, `{"tests_passed":"claimed"}`: TestsClaimed, `{}`: TestsNotRun} {
		res.T = TestsNotRun
		if err := json.Unmarshal([]byte(in), &res); err != nil || res.T != want {
			t.Errorf("%s: %q, %v; want %q", in, res.T, err, want)
		}
	}
	if err := json.Unmarshal([]byte(`{"tests_passed":"sure"}`), &res); err == nil {
		t.Error("a JSON result with tests_passed \"sure\" was accepted")
	}
	if b, _ := json.Marshal(struct {
		T TestResult `json:"tests_passed"`
	}{TestsFail}); string(b) != `{"tests_passed":"false"}` {
		t.Errorf("marshalled %s", b)
	}
}

func TestHintsCell(t *testing.T) {
	t.Parallel()
	cases := []struct {
		cell  string
		want  Hints
		canon string // String() of the parsed cell
	}{
		{"reuse the helper || a/x.go;b/y.go", Hints{"reuse the helper", []string{"a/x.go", "b/y.go"}}, "reuse the helper || a/x.go;b/y.go"},
		{"just a tip", Hints{Tips: "just a tip"}, "just a tip"},
		{"|| a.go", Hints{Files: []string{"a.go"}}, "|| a.go"},
		{" tip ||a.go; b.go ;", Hints{"tip", []string{"a.go", "b.go"}}, "tip || a.go;b.go"},
		{"", Hints{}, ""},
		{"tip ||", Hints{Tips: "tip"}, "tip"},
		{"a || b || c", Hints{"a", []string{"b || c"}}, "a || b || c"},
	}
	for _, c := range cases {
		got := ParseHints(c.cell)
		if got.Tips != c.want.Tips || strings.Join(got.Files, "\n") != strings.Join(c.want.Files, "\n") {
			t.Errorf("ParseHints(%q) = %+v, want %+v", c.cell, got, c.want)
		}
		if s := got.String(); s != c.canon {
			t.Errorf("ParseHints(%q).String() = %q, want %q", c.cell, s, c.canon)
		}
		if again := ParseHints(got.String()).String(); again != c.canon {
			t.Errorf("%q: the canonical form does not read back to itself: %q", c.cell, again)
		}
		if got.Empty() != (c.canon == "") {
			t.Errorf("%q: Empty() = %v", c.cell, got.Empty())
		}
	}
}
