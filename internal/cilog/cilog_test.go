package cilog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func readLog(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// noNoise checks what every excerpt must not contain.
func noNoise(t *testing.T, ex Excerpt) {
	t.Helper()
	for _, bad := range []string{"\x1b", "2026-11-23T", "\r", "Post job cleanup", "Syncing repository", "shell: /usr/bin/bash", "pythonLocation"} {
		if strings.Contains(ex.Text, bad) {
			t.Errorf("excerpt contains %q:\n%s", bad, ex.Text)
		}
	}
	if len(ex.Text) > DefaultMaxBytes {
		t.Errorf("excerpt is %d bytes, over %d", len(ex.Text), DefaultMaxBytes)
	}
}

func TestExtractPytest(t *testing.T) {
	ex := Extract(readLog(t, "pytest.log"), Options{Step: "Run pytest -q"})
	noNoise(t, ex)
	for _, want := range []string{
		"E       assert False is True",
		"tests/test_rates.py:18: AssertionError",
		"FAILED tests/test_rates.py::test_limit_resets - assert False is True",
		"1 failed, 13 passed in 0.42s",
		"##[error]Process completed with exit code 1.",
	} {
		if !strings.Contains(ex.Text, want) {
			t.Errorf("excerpt lacks %q:\n%s", want, ex.Text)
		}
	}
	// The earlier, successful step is not part of it.
	if strings.Contains(ex.Text, "Successfully installed") {
		t.Errorf("excerpt has the install step:\n%s", ex.Text)
	}
}

func TestExtractGoTestKeepsErrorsAboveTheTail(t *testing.T) {
	ex := Extract(readLog(t, "gotest.log"), Options{Step: "Run go test ./..."})
	noNoise(t, ex)
	if !ex.Truncated {
		t.Error("a 130-line step was not cut")
	}
	lines := strings.Split(ex.Text, "\n")
	if n := len(lines); n > DefaultMaxLines+20 {
		t.Errorf("%d lines", n)
	}
	// The failure is 120 lines above the end: kept, with its explanation,
	// and the left-out lines between are marked.
	for _, want := range []string{
		"--- FAIL: TestLimiter (0.00s)",
		"limiter_test.go:42: Allowed() = false after reset, want true",
		"FAIL\tgithub.com/octo/demo/internal/limit\t0.004s",
		"…",
		"##[error]Process completed with exit code 1.",
	} {
		if !strings.Contains(ex.Text, want) {
			t.Errorf("excerpt lacks %q:\n%s", want, ex.Text)
		}
	}
	if strings.Contains(ex.Text, "pkg05\t") {
		t.Errorf("excerpt keeps passing packages far above the tail:\n%s", ex.Text)
	}
	if strings.Contains(ex.Text, "Setup go version") {
		t.Errorf("excerpt has the setup-go step:\n%s", ex.Text)
	}
}

func TestExtractJest(t *testing.T) {
	// A step named in the workflow ("Test") does not match the echoed
	// command; the step that reported the error is found anyway.
	ex := Extract(readLog(t, "jest.log"), Options{Step: "Test"})
	noNoise(t, ex)
	for _, want := range []string{
		"FAIL  src/limit.test.js",
		"● limiter › resets after a minute",
		"Expected: true",
		"Received: false",
		"> 13 |   expect(limiter.allowed()).toBe(true);",
		"Tests:       1 failed, 7 passed, 8 total",
		"::error file=src/limit.test.js,line=13::limiter › resets after a minute",
	} {
		if !strings.Contains(ex.Text, want) {
			t.Errorf("excerpt lacks %q:\n%s", want, ex.Text)
		}
	}
	if strings.Contains(ex.Text, "added 312 packages") {
		t.Errorf("excerpt has npm ci's output:\n%s", ex.Text)
	}
}

func TestExtractCapsSize(t *testing.T) {
	var b strings.Builder
	b.WriteString("2026-11-23T10:00:00.0000000Z ##[group]Run make check\n2026-11-23T10:00:00.0000000Z ##[endgroup]\n")
	for i := 0; i < 500; i++ {
		b.WriteString("2026-11-23T10:00:01.0000000Z error: line " + strings.Repeat("x", 200) + "\n")
	}
	b.WriteString("2026-11-23T10:00:02.0000000Z " + strings.Repeat("y", 10000) + "\n")
	b.WriteString("2026-11-23T10:00:02.0000000Z ##[error]Process completed with exit code 2.\n")
	ex := Extract(b.String(), Options{MaxBytes: 2048, MaxLines: 40})
	if len(ex.Text) > 2048+64 || !ex.Truncated {
		t.Errorf("excerpt is %d bytes (truncated %v)", len(ex.Text), ex.Truncated)
	}
	if !strings.HasSuffix(ex.Text, "##[error]Process completed with exit code 2.") {
		t.Errorf("the end of the step was lost:\n%s", ex.Text)
	}
}

func TestCleanRemovesHiddenAndControlText(t *testing.T) {
	in := "2026-11-23T10:00:00.1234567Z \x1b[31mFAIL\x1b[0m \x1b]8;;https://x\x07link\x1b]8;;\x07 ok\u200b\U000E0041 10%\r50%\r100%\x07"
	if got, want := Clean(in), "100%"; got != want {
		t.Errorf("Clean = %q, want %q", got, want)
	}
	if got, want := Clean("2026-11-23T10:00:00.1234567Z \x1b[1m\x1b[31mE   assert 1 == 2\x1b[0m\u202e"), "E   assert 1 == 2"; got != want {
		t.Errorf("Clean = %q, want %q", got, want)
	}
}

func TestExtractWithoutSteps(t *testing.T) {
	if ex := Extract("", Options{}); ex.Text != "" {
		t.Errorf("empty log: %+v", ex)
	}
	ex := Extract("2026-11-23T10:00:00Z building\n2026-11-23T10:00:01Z boom: it broke\n", Options{})
	if ex.Text != "building\nboom: it broke" {
		t.Errorf("plain log: %q", ex.Text)
	}
}
