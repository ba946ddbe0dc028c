// Package sandboxtest holds what tests of contained processes share.
package sandboxtest

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Processes lists the host's processes whose command line contains arg,
// as "pid: command line": a test tags what a contained program starts
// with an unusual argument and checks nothing of it is left.
func Processes(t testing.TB, arg string) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(b, []byte(arg)) {
			found = append(found, e.Name()+": "+strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return found
}
