package proc

import (
	"fmt"
	"syscall"
)

// WaitReaping waits for the child pid to end while reaping every other
// process that ends meanwhile (orphans re-parented to this one, which is
// a subreaper or a namespace's init), and returns pid's exit code as a
// shell reports it: its status, or 128 plus the signal that killed it.
func WaitReaping(pid int) (int, error) {
	for {
		var ws syscall.WaitStatus
		got, err := syscall.Wait4(-1, &ws, 0, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return 0, err
		}
		if got != pid {
			continue // an orphan re-parented here
		}
		switch {
		case ws.Exited():
			return ws.ExitStatus(), nil
		case ws.Signaled():
			return 128 + int(ws.Signal()), nil
		}
		return 0, fmt.Errorf("process %d reported wait status %#x", pid, uint32(ws))
	}
}
