// Package proc runs child processes that must not outlive their step: an
// agent, a task's verification commands, a command a model asked for.
package proc

import (
	"context"
	"fmt"
	"os/exec"
	"syscall"
)

// Run starts cmd in a process group of its own and waits for it. If ctx
// ends first, the whole group is killed and ctx.Err() is returned, so
// callers can tell a timeout (context.DeadlineExceeded) from the
// command's own failure (an *exec.ExitError). Either way, processes the
// command left running in the background are killed before Run returns.
func Run(ctx context.Context, cmd *exec.Cmd) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", cmd.Path, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		err = ctx.Err()
	}
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	return err
}
