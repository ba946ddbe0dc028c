package main

import (
	"strings"

	"golang.org/x/sys/unix"
)

// int80 makes a system call through int 0x80: the i386 convention,
// which the kernel also runs for a 64-bit process (seccomp sees the call
// with AUDIT_ARCH_I386 and i386's numbers).
func int80(nr, a1, a2, a3 uintptr) uintptr

// compat tries the ways round a system call filter that x86-64 offers:
// i386's socket (359) and io_uring_setup (425) through int 0x80, and
// x32's socket (41 with bit 30 set). Each result is the errno's name or
// "ok" when the kernel made what was asked.
func compat() (string, error) {
	const x32 = 0x40000000
	results := []string{
		"i386-socket " + compatResult(int80(359, unix.AF_VSOCK, unix.SOCK_STREAM, 0)),
		"i386-socketcall " + compatResult(int80(102, 1, 0, 0)),
		"i386-io_uring_setup " + compatResult(int80(425, 1, 0, 0)),
	}
	r, _, e := unix.RawSyscall(x32|unix.SYS_SOCKET, unix.AF_VSOCK, unix.SOCK_STREAM, 0)
	if e != 0 {
		results = append(results, "x32-socket "+unix.ErrnoName(e))
	} else {
		unix.Close(int(r))
		results = append(results, "x32-socket ok")
	}
	return strings.Join(results, "; "), nil
}

// compatResult names the errno of a raw i386 result, closing a
// descriptor made.
func compatResult(r uintptr) string {
	if v := int64(int32(uint32(r))); v < 0 && v > -4096 {
		return unix.ErrnoName(unix.Errno(-v))
	} else if v >= 0 {
		unix.Close(int(v))
	}
	return "ok"
}
