//go:build unix

package safefile

import (
	"errors"
	"os"
	"syscall"
)

// NoFollow, or-ed into os.OpenFile's flags, refuses to open a symbolic
// link (where the system can tell).
const NoFollow = syscall.O_NOFOLLOW

// TryLock takes an exclusive lock on the open file f without waiting:
// false, nil when another holder has it. The system drops the lock when
// its holder exits, however it exits.
func TryLock(f *os.File) (bool, error) {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EWOULDBLOCK):
			return false, nil
		}
		return false, err
	}
}

// Unlock releases a lock TryLock took.
func Unlock(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
}
