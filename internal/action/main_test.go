package action

import (
	"fmt"
	"os"
	"testing"
)

// TestMain runs the package's tests with their scratch in memory where
// the caller chose no TMPDIR (issue 32, item 4: the package took 93 to
// 136 s of wall time for 62 to 82 s of CPU, half of it system time).
func TestMain(m *testing.M) {
	os.Exit(runWithScratchInMemory(m))
}

// runWithScratchInMemory runs the tests with TMPDIR in a fresh folder
// under /dev/shm (a tmpfs on Linux) when TMPDIR is unset, and removes it
// after. Every test makes and deletes thousands of small files there
// (clones, git's objects and lock files, temporary indexes); on a disk
// file system mounted with discard, as this project's build machines'
// ext4 is, creating and deleting them cost kernel time and waits for the
// journal that memory does not. A TMPDIR the caller set is kept, and
// where there is no /dev/shm with 2 GiB free the tests use the usual
// temporary folder.
func runWithScratchInMemory(m *testing.M) int {
	if os.Getenv("TMPDIR") != "" {
		return m.Run()
	}
	if !roomInMemory("/dev/shm", 2<<30) {
		// A small /dev/shm (a container's 64 MiB) would fill up mid-run.
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
