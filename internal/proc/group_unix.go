//go:build unix

package proc

import (
	"os/exec"
	"syscall"
)

// ownGroup starts cmd in a session of its own, and so in a process group
// of its own, so that killGroup reaches what it starts in the background
// too. A session of its own has no controlling terminal: a command run
// without the sandbox in planex's session could open the user's terminal
// through /dev/tty, push a command line into its input with TIOCSTI (the
// user's shell ran it once planex exited) and write escape sequences to
// it past planex's output filter.
func ownGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setsid = true
}

// terminate asks the process pid to end.
func terminate(pid int) { syscall.Kill(pid, syscall.SIGTERM) }

// killGroup kills cmd's process group.
func killGroup(cmd *exec.Cmd) { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
