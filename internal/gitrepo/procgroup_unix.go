//go:build unix

package gitrepo

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// ownProcessGroup starts cmd in a process group of its own and makes the
// cancelling of its context kill that whole group: git's children (an
// upload-pack, a remote helper, ssh) are in it too, and one of them left
// alive holds git's output open.
func ownProcessGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.Cancel = func() error {
		err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		if err != nil && !errors.Is(err, syscall.ESRCH) {
			return cmd.Process.Kill()
		}
		if err != nil {
			return os.ErrProcessDone
		}
		return nil
	}
}
