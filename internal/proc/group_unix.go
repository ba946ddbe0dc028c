//go:build unix

package proc

import (
	"os/exec"
	"syscall"
)

// ownGroup starts cmd in a process group of its own, so that killGroup
// reaches what it starts in the background too.
func ownGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
}

// terminate asks the process pid to end.
func terminate(pid int) { syscall.Kill(pid, syscall.SIGTERM) }

// killGroup kills cmd's process group.
func killGroup(cmd *exec.Cmd) { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
