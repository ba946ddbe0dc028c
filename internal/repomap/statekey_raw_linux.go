//go:build linux && (amd64 || arm64)

package repomap

import (
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// haveRawFstatat is set where fstatatRaw makes the call itself.
const haveRawFstatat = true

// fstatatRaw is fstatat(2) of the NUL-terminated name relative to dirfd,
// not following a final symlink, made without telling the scheduler: a
// key stats every file of the tree, and on a local disk each call is a
// microsecond or two in the kernel, so the runtime's bookkeeping around
// an ordinary system call (handing the processor off, the monitor thread
// woken to retake it) cost a tenth of the key's CPU. The price is that a
// stat which blocks holds its processor meanwhile; newStamper takes this
// path only on local disk file systems (localDiskFS).
func fstatatRaw(dirfd int, name []byte, st *unix.Stat_t) syscall.Errno {
	_, _, e := syscall.RawSyscall6(unix.SYS_NEWFSTATAT, uintptr(dirfd), uintptr(unsafe.Pointer(&name[0])),
		uintptr(unsafe.Pointer(st)), unix.AT_SYMLINK_NOFOLLOW, 0, 0)
	return e
}
