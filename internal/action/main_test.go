package action

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"testing"
)

// TestMain runs the package's tests with two settings of their own, each
// only where the caller chose nothing (issue 32, item 4: the package took
// 93 to 136 s of wall time for 62 to 77 s of CPU).
func TestMain(m *testing.M) {
	flag.Parse()
	parallelByDefault()
	os.Exit(runWithScratchInMemory(m))
}

// parallelByDefault lets four tests a CPU run side by side unless
// -test.parallel says otherwise. go test's default, one a CPU, suits
// tests that compute; these mostly wait for git processes and for the
// disk, so with one a CPU a core stood idle much of the time.
func parallelByDefault() {
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		flag.Set("test.parallel", strconv.Itoa(4*runtime.GOMAXPROCS(0)))
	}
}

// runWithScratchInMemory runs the tests with TMPDIR in a fresh folder
// under /dev/shm (a tmpfs on Linux) when TMPDIR is unset, and removes it
// after. Every test makes and deletes thousands of small files there
// (clones, git's objects and lock files, temporary indexes); on a disk
// file system mounted with discard, as this project's build machines'
// ext4 is, creating and deleting them cost kernel time and waits for the
// journal that memory does not. A TMPDIR the caller set is kept, and
// where there is no /dev/shm the tests use the usual temporary folder.
func runWithScratchInMemory(m *testing.M) int {
	if os.Getenv("TMPDIR") != "" {
		return m.Run()
	}
	dir, err := os.MkdirTemp("/dev/shm", "planex-action-test-")
	if err != nil {
		return m.Run()
	}
	defer os.RemoveAll(dir)
	if err := os.Setenv("TMPDIR", dir); err != nil {
		fmt.Fprintln(os.Stderr, "setting TMPDIR for the tests:", err)
		return 1
	}
	return m.Run()
}
