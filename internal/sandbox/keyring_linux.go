//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"runtime"

	"golang.org/x/sys/unix"
)

// leaveSessionKeyring gives the init, and so the program it starts, a
// new empty session keyring in place of planex's. A process possesses
// the keys of its session keyring whatever its uid, so the one inherited
// from planex (Kerberos tickets, AFS tokens and other credentials of the
// user's login live there) would be readable to the program. Keyrings
// are per thread until exec: the caller's goroutine stays on this thread
// so the program is started from it.
func leaveSessionKeyring() error {
	runtime.LockOSThread()
	// A NULL name makes a new anonymous keyring: a named one could be
	// an existing keyring of that name, joined instead.
	_, _, errno := unix.Syscall(unix.SYS_KEYCTL, unix.KEYCTL_JOIN_SESSION_KEYRING, 0, 0)
	var err error
	if errno != 0 {
		err = errno
	}
	if errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM) {
		// No keyrings in this kernel, or keyctl forbidden here (as it
		// is then for the program too).
		return nil
	}
	if err != nil {
		return fmt.Errorf("leaving planex's session keyring: %w", err)
	}
	return nil
}
