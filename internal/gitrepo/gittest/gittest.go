// Package gittest holds the tests' helpers about the git processes
// planex starts.
package gittest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// CountGit puts a git first on PATH that logs each of its invocations and
// then runs the real one, and returns a function reading the log: one
// line per git process, its arguments (the log starts again after each
// read). It sets the process's PATH: the calling test may not be parallel.
func CountGit(t *testing.T) func() []string {
	t.Helper()
	real, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	log := filepath.Join(dir, "calls.log")
	shim := "#!/bin/sh\nprintf '%s\\n' \"$*\" >> '" + log + "'\nexec '" + real + "' \"$@\"\n"
	if err := os.WriteFile(filepath.Join(dir, "git"), []byte(shim), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return func() []string {
		b, err := os.ReadFile(log)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		calls := strings.Split(strings.TrimSpace(string(b)), "\n")
		if len(calls) == 1 && calls[0] == "" {
			return nil
		}
		os.Remove(log)
		return calls
	}
}
