//go:build linux && !amd64 && !arm64

package repomap

import (
	"errors"
	"syscall"

	"golang.org/x/sys/unix"
)

// haveRawFstatat is unset where struct stat's layout or the call's number
// differ (fstatat64): the stamper makes the ordinary call.
const haveRawFstatat = false

// fstatatRaw is the ordinary call here (never reached: haveRawFstatat).
func fstatatRaw(dirfd int, name []byte, st *unix.Stat_t) syscall.Errno {
	err := unix.Fstatat(dirfd, string(name[:len(name)-1]), st, unix.AT_SYMLINK_NOFOLLOW)
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno
	}
	return 0
}
