package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// vsock connects to CID:PORT over AF_VSOCK, which a network namespace
// does not contain, sends msg and returns the answer. The error says
// which step failed: "socket: …" when the family is refused.
func vsock(target, msg string) (string, error) {
	c, p, ok := strings.Cut(target, ":")
	cid, err1 := strconv.ParseUint(c, 10, 32)
	port, err2 := strconv.ParseUint(p, 10, 32)
	if !ok || err1 != nil || err2 != nil {
		return "", fmt.Errorf("vsock target %q is not CID:PORT", target)
	}
	fd, err := unix.Socket(unix.AF_VSOCK, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return "", fmt.Errorf("socket: %w", err)
	}
	defer unix.Close(fd)
	tv := unix.NsecToTimeval(int64(2 * time.Second))
	_ = unix.SetsockoptTimeval(fd, unix.AF_VSOCK, unix.SO_VM_SOCKETS_CONNECT_TIMEOUT, &tv)
	if err := unix.Connect(fd, &unix.SockaddrVM{CID: uint32(cid), Port: uint32(port)}); err != nil {
		return "", fmt.Errorf("connect: %w", err)
	}
	if _, err := unix.Write(fd, []byte(msg+"\n")); err != nil {
		return "", fmt.Errorf("write: %w", err)
	}
	buf := make([]byte, 4096)
	n, err := unix.Read(fd, buf)
	if err != nil {
		return "", fmt.Errorf("read: %w", err)
	}
	return string(buf[:n]), nil
}

// uring sets up an io_uring, which makes sockets (IORING_OP_SOCKET)
// without the system call a filter sees.
func uring() (string, error) {
	var params [120]byte // struct io_uring_params
	fd, _, e := unix.Syscall(unix.SYS_IO_URING_SETUP, 1, uintptr(unsafe.Pointer(&params[0])), 0)
	if e != 0 {
		return "", fmt.Errorf("io_uring_setup: %w", e)
	}
	unix.Close(int(fd))
	return "io_uring fd " + strconv.Itoa(int(fd)), nil
}

// requestKey asks the kernel for a dns_resolver key named name, which
// starts the host's /sbin/request-key to look the name up in the host's
// DNS.
func requestKey(name string) (string, error) {
	id, err := unix.RequestKey("dns_resolver", name, "", unix.KEY_SPEC_PROCESS_KEYRING)
	if err != nil {
		return "", fmt.Errorf("request_key: %w", err)
	}
	return "key " + strconv.Itoa(id), nil
}
