//go:build unix && !linux

package proc

import (
	"os"
	"strconv"
	"syscall"
)

// CloseInherited marks every descriptor above 2 close-on-exec (see the
// Linux version), one at a time from /dev/fd.
func CloseInherited() error {
	ents, err := os.ReadDir("/dev/fd")
	if err != nil {
		return err
	}
	for _, e := range ents {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			syscall.CloseOnExec(fd)
		}
	}
	return nil
}
