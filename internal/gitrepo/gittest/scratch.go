package gittest

import (
	"fmt"
	"os"
)

// InMemory runs run with TMPDIR pointing at a fresh folder under /dev/shm
// (a tmpfs on Linux) when the caller set no TMPDIR and it has 2 GiB free,
// removes the folder after and returns run's exit code; it is for a test
// package's TestMain, named prefix in the folder's name. Tests of git
// make and delete thousands of small files (repositories, clones,
// worktrees, git's objects, lock files and temporary indexes); on a disk
// file system, and worse on ext4 mounted with discard as this project's
// build machines' root is, that costs kernel time and journal waits that
// memory does not (issue 32, item 4: about half of the git-heavy
// packages' CPU was system time). Processes the tests start inherit the
// folder, as a user's TMPDIR would be. A TMPDIR the caller set is kept;
// a small /dev/shm (a container's 64 MiB) would fill up mid-run, so
// there the tests use the usual temporary folder.
func InMemory(prefix string, run func() int) int {
	if os.Getenv("TMPDIR") != "" || !roomInMemory("/dev/shm", 2<<30) {
		return run()
	}
	dir, err := os.MkdirTemp("/dev/shm", prefix+"-")
	if err != nil {
		return run()
	}
	defer os.RemoveAll(dir)
	if err := os.Setenv("TMPDIR", dir); err != nil {
		fmt.Fprintln(os.Stderr, "setting TMPDIR for the tests:", err)
		return 1
	}
	return run()
}
