//go:build !unix

package gitrepo

import "os/exec"

// ownProcessGroup does nothing here: a cancelled git is killed alone, and
// WaitDelay bounds the wait for what its children hold open.
func ownProcessGroup(*exec.Cmd) {}
