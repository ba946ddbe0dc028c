// Package proc runs child processes that must not outlive their step: an
// agent, a task's verification commands, a command a model asked for.
package proc

import (
	"context"
	"fmt"
	"os/exec"
	"time"
)

// reaperGrace is how long a cancelled command's reaper gets to kill what
// is below it before the process group is killed outright.
const reaperGrace = 5 * time.Second

// Run starts cmd in a process group of its own and waits for it. If ctx
// ends first, everything the command started is killed and ctx.Err() is
// returned, so callers can tell a timeout (context.DeadlineExceeded) from
// the command's own failure (an *exec.ExitError). Either way, processes
// the command left running in the background are killed before Run
// returns.
//
// On Linux a command that is not in the sandbox runs under a reaper (see
// reaper_linux.go): planex itself, re-executed as a child subreaper that
// kills every descendant of the command when the command ends, when it is
// told to, and when planex dies, SIGKILL included. (A command in the
// sandbox has the sandbox's init for that.)
func Run(ctx context.Context, cmd *exec.Cmd) error {
	ownGroup(cmd)
	path := cmd.Path
	reaped := underReaper(cmd)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", path, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		finished := false
		if reaped {
			// The reaper also reaches what left the process group.
			terminate(cmd.Process.Pid)
			t := time.NewTimer(reaperGrace)
			select {
			case <-done:
				finished = true
			case <-t.C:
			}
			t.Stop()
		}
		killGroup(cmd)
		if !finished {
			<-done
		}
		err = ctx.Err()
	}
	killGroup(cmd)
	return err
}
