package proc

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// CloseInherited marks every descriptor above 2 close-on-exec, so no
// program this process starts inherits one. Go opens its own files
// close-on-exec, but a descriptor planex's caller left open (a secret
// file as fd 7, say) is inherited by planex as it is, and exec passes it
// on. The sandbox's init and the reaper call it before they start the
// program; both still use their own descriptors until then. planex calls
// it as it starts (cli.Run), for every program it runs on any system.
func CloseInherited() error {
	err := unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
	if err == nil {
		return nil
	}
	// Before Linux 5.11: one descriptor at a time.
	ents, rerr := os.ReadDir("/proc/self/fd")
	if rerr != nil {
		return rerr
	}
	for _, e := range ents {
		fd, aerr := strconv.Atoi(e.Name())
		if aerr != nil || fd <= 2 {
			continue
		}
		// The directory's own descriptor is gone by now: EBADF is fine.
		if _, ferr := unix.FcntlInt(uintptr(fd), unix.F_SETFD, unix.FD_CLOEXEC); ferr != nil && ferr != unix.EBADF {
			return ferr
		}
	}
	return nil
}
