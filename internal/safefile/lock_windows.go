//go:build windows

package safefile

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// NoFollow: Windows' open has no such flag; callers check links themselves.
const NoFollow = 0

// TryLock takes an exclusive lock on the first byte of the open file f
// without waiting: false, nil when another holder has it. Windows drops the
// lock when its holder's handle closes, however the holder exits.
func TryLock(f *os.File) (bool, error) {
	err := windows.LockFileEx(windows.Handle(f.Fd()),
		windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, new(windows.Overlapped))
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, windows.ERROR_LOCK_VIOLATION):
		return false, nil
	}
	return false, err
}

// Unlock releases a lock TryLock took.
func Unlock(f *os.File) error {
	return windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, new(windows.Overlapped))
}
