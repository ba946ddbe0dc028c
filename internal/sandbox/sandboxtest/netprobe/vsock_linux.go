package main

import (
	"fmt"
	"net"
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

// coreLimit lowers the core size limit to 0 by each call that sets it
// (setrlimit, prlimit64), so that a crash would start the core_pattern's
// pipe handler on the host, reads it back through prlimit64 without a
// new value, and reports each outcome.
func coreLimit() (string, error) {
	zero := unix.Rlimit{Cur: 0, Max: 0}
	var got unix.Rlimit
	var out []string
	report := func(what string, e unix.Errno) {
		if e != 0 {
			out = append(out, what+" "+unix.ErrnoName(e))
			return
		}
		out = append(out, what+" ok")
	}
	_, _, e := unix.RawSyscall(unix.SYS_SETRLIMIT, unix.RLIMIT_CORE, uintptr(unsafe.Pointer(&zero)), 0)
	report("setrlimit", e)
	_, _, e = unix.RawSyscall6(unix.SYS_PRLIMIT64, 0, unix.RLIMIT_CORE, uintptr(unsafe.Pointer(&zero)), 0, 0, 0)
	report("prlimit64", e)
	_, _, e = unix.RawSyscall6(unix.SYS_PRLIMIT64, 0, unix.RLIMIT_CORE, 0, uintptr(unsafe.Pointer(&got)), 0, 0)
	report("read", e)
	return fmt.Sprintf("%s; limit %d/%d", strings.Join(out, "; "), got.Cur, got.Max), nil
}

// perfEvent opens a software perf event on this process: where
// perf_event_paranoid allows, the same call samples a whole CPU, other
// processes' registers and stacks included.
func perfEvent() (string, error) {
	attr := unix.PerfEventAttr{Type: unix.PERF_TYPE_SOFTWARE, Config: unix.PERF_COUNT_SW_TASK_CLOCK, Bits: unix.PerfBitExcludeKernel | unix.PerfBitExcludeHv}
	attr.Size = uint32(unsafe.Sizeof(attr))
	fd, err := unix.PerfEventOpen(&attr, 0, -1, -1, unix.PERF_FLAG_FD_CLOEXEC)
	if err != nil {
		return "", fmt.Errorf("perf_event_open: %w", err)
	}
	unix.Close(fd)
	return "perf event opened", nil
}

// hold opens up to n TCP connections to addr, one after another, keeps
// them open for secs seconds, and reports how many it made: a program
// that ties up whatever serves addr (the sandbox's relay to planex's
// proxy).
func hold(addr string, n, secs int) (string, error) {
	var conns []net.Conn
	var last error
	for i := 0; i < n; i++ {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			last = err
			break
		}
		conns = append(conns, c)
	}
	time.Sleep(time.Duration(secs) * time.Second)
	for _, c := range conns {
		c.Close()
	}
	return fmt.Sprintf("held %d connections (stopped by %v)", len(conns), last), nil
}

// families makes a socket of every address family and type the kernel
// may know (AF_MAX is below 64) and lists those it got, as
// "family/type", space-separated.
func families() (string, error) {
	var got []string
	for fam := 1; fam < 64; fam++ {
		for _, typ := range []int{unix.SOCK_STREAM, unix.SOCK_DGRAM, unix.SOCK_RAW, unix.SOCK_SEQPACKET, unix.SOCK_RDM} {
			fd, err := unix.Socket(fam, typ|unix.SOCK_CLOEXEC, 0)
			if err == nil {
				unix.Close(fd)
				got = append(got, fmt.Sprintf("%d/%d", fam, typ))
			}
		}
	}
	return strings.Join(got, " "), nil
}
