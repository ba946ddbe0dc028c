//go:build !unix

package proc

import "os/exec"

// ownGroup: without Unix process groups (Windows) the command's own
// process is what planex can end.
func ownGroup(*exec.Cmd) {}

// terminate has no gentle form here; killGroup follows it.
func terminate(int) {}

// killGroup kills cmd's process.
func killGroup(cmd *exec.Cmd) { cmd.Process.Kill() }
