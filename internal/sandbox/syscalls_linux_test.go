//go:build linux

package sandbox

import (
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// TestSyscallEscapesRefused: a contained program tries the ways out a
// network namespace does not hold. Uncontained, on this machine, an
// AF_VSOCK socket is made (its connection leads to the hypervisor; the
// test dials only CID 1, this machine itself, never the host), an
// io_uring is set up and request_key reaches the kernel (which would
// start the host's /sbin/request-key to resolve the name: one under
// .invalid); contained, all three are refused before anything is sent,
// whichever network the sandbox has.
func TestSyscallEscapesRefused(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	probe := probeBuild.Path(t)
	const vsockTarget = "1:47391" // VMADDR_CID_LOCAL: never the hypervisor
	plain := func(args ...string) string {
		out, err := exec.Command(probe, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("netprobe %v uncontained: %v\n%s", args, err, out)
		}
		return string(out)
	}
	vsockHere := !strings.HasPrefix(plain("vsock", vsockTarget, "planex-vsock"), "fail: socket:")
	uringHere := !strings.HasPrefix(plain("uring", "x"), "fail: io_uring_setup:")
	const keyName = "planex-sandbox-test.invalid"
	if got := plain("requestkey", keyName); strings.Contains(got, "function not implemented") {
		t.Logf("this kernel has no request_key even uncontained (%q): the request_key rows show nothing here", got)
	}
	if !vsockHere {
		t.Log("this kernel makes no AF_VSOCK socket even uncontained: the vsock rows show nothing here")
	}
	if !uringHere {
		t.Log("this kernel sets up no io_uring even uncontained: the io_uring rows show nothing here")
	}
	for _, network := range []Network{NetworkContained, NetworkOpen} {
		p := Policy{Network: network, ReadOnly: []string{filepath.Dir(probe)}}
		out, err := run(t, s, p, "/", nil, probe+" vsock "+vsockTarget+" planex-vsock; "+probe+" uring x; "+probe+" requestkey "+keyName)
		if err != nil {
			t.Fatalf("%s network: %v\n%s", network, err, out)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != 3 {
			t.Fatalf("%s network: want three probe lines, got %q", network, out)
		}
		if want := "fail: socket: address family not supported by protocol"; lines[0] != want {
			t.Errorf("%s network: the vsock probe said %q, want %q", network, lines[0], want)
		}
		if want := "fail: io_uring_setup: function not implemented"; lines[1] != want {
			t.Errorf("%s network: the io_uring probe said %q, want %q", network, lines[1], want)
		}
		if want := "fail: request_key: function not implemented"; lines[2] != want {
			t.Errorf("%s network: the request_key probe said %q, want %q", network, lines[2], want)
		}
	}
}

// TestCoreHandlerAndPerfOutOfReach: a contained program lowers its core
// size limit to 0, by setrlimit and by prlimit64, so that the crash it
// would cause next starts the machine's core_pattern pipe handler
// (apport, systemd-coredump) as root on the host with a name and path of
// its choosing; and opens a perf event, the call that samples a whole
// CPU, planex's registers and stack included, where
// perf_event_paranoid is 0 or less. Uncontained both work here; contained
// the limit stays 1 (no dump, to a file or a pipe) and reading it still
// works, and perf_event_open is refused as on a kernel without it.
func TestCoreHandlerAndPerfOutOfReach(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	probe := probeBuild.Path(t)
	for _, args := range [][]string{{"corelimit", "x"}, {"perf", "x"}} {
		out, err := exec.Command(probe, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("netprobe %v uncontained: %v\n%s", args, err, out)
		}
		t.Logf("uncontained %s: %s", args[0], strings.TrimSpace(string(out)))
	}
	out, err := run(t, s, Policy{ReadOnly: []string{filepath.Dir(probe)}}, "/", nil, probe+" corelimit x; "+probe+" perf x")
	if err != nil {
		t.Fatalf("contained: %v\n%s", err, out)
	}
	// Setting it "succeeds" (a program that stops when it cannot turn
	// core dumps off goes on) and changes nothing.
	want := "ok: setrlimit ok; prlimit64 ok; read ok; limit 1/1\nfail: perf_event_open: function not implemented"
	if got := strings.TrimSpace(out); got != want {
		t.Errorf("contained, the probes said\n%s\nwant\n%s", got, want)
	}
}

// TestSyscallCompatRefused: a contained 64-bit program on x86-64 makes
// its calls in the other conventions the kernel runs for it (i386's
// numbers through int 0x80, x32's with bit 30 set), to reach vsock and
// io_uring by numbers the x86-64 rows do not name. Uncontained the test
// logs what the kernel does (i386's socket makes a vsock socket where
// the kernel has vsock and ia32 emulation); contained each is refused
// as its x86-64 twin is.
func TestSyscallCompatRefused(t *testing.T) {
	t.Parallel()
	if runtime.GOARCH != "amd64" {
		t.Skip("the i386 and x32 conventions are x86-64's")
	}
	s := newSandbox(t)
	probe := probeBuild.Path(t)
	plain, err := exec.Command(probe, "compat", "x").CombinedOutput()
	if err != nil {
		t.Fatalf("netprobe compat uncontained: %v\n%s", err, plain)
	}
	t.Logf("uncontained: %s", strings.TrimSpace(string(plain)))
	out, err := run(t, s, Policy{Network: NetworkOpen, ReadOnly: []string{filepath.Dir(probe)}}, "/", nil, probe+" compat x")
	if err != nil {
		t.Fatalf("contained: %v\n%s", err, out)
	}
	want := "ok: i386-socket EAFNOSUPPORT; i386-socketcall EAFNOSUPPORT; i386-io_uring_setup ENOSYS; x32-socket EAFNOSUPPORT"
	if got := strings.TrimSpace(out); got != want {
		t.Errorf("contained, the compat calls gave %q, want %q", got, want)
	}
}

// TestSyscallFilter runs the filter's program for each convention on
// the calls it must refuse and on neighbours it must pass.
func TestSyscallFilter(t *testing.T) {
	t.Parallel()
	allow := uint32(unix.SECCOMP_RET_ALLOW)
	noFamily := retErrno(unix.EAFNOSUPPORT)
	noSys := retErrno(unix.ENOSYS)
	ignored := uint32(retIgnored)
	type call struct {
		name string
		arch uint32
		nr   uint32
		arg0 uint32
		want uint32
		// prlimit64's resource and new limit (low and high halves)
		arg1, arg2, arg2Hi uint32
	}
	mk := func(name string, arch, nr, arg0, want uint32) call {
		return call{name: name, arch: arch, nr: nr, arg0: arg0, want: want}
	}
	for _, goarch := range []string{"amd64", "arm64", "386", "arm", "riscv64", "ppc64le"} {
		archs, err := archsFor(goarch)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := bpf.Assemble(syscallFilter(archs))
		if err != nil {
			t.Fatalf("%s: %v", goarch, err)
		}
		insts, ok := bpf.Disassemble(raw)
		if !ok {
			t.Fatalf("%s: the program does not disassemble", goarch)
		}
		vm, err := bpf.NewVM(insts)
		if err != nil {
			t.Fatalf("%s: %v", goarch, err)
		}
		var calls []call
		for _, a := range archs {
			// A conditional jump skips at most 255 instructions: a longer
			// body would wrap the jump over the next convention's check.
			if n := len(archBody(a)); n > 255 {
				t.Fatalf("%s: the filter's body for arch %#x is %d instructions, more than a jump skips", goarch, a.audit, n)
			}
			calls = append(calls,
				mk("vsock socket", a.audit, a.socket, unix.AF_VSOCK, noFamily),
				call{name: "a best-effort I/O priority (ionice -c 2 -n 0)", arch: a.audit, nr: a.ioprioSet, arg0: 1, arg2: ioprioClassBE << ioprioClassShift, want: retErrno(unix.EPERM)},
				call{name: "a real-time I/O priority", arch: a.audit, nr: a.ioprioSet, arg0: 1, arg2: ioprioClassRT<<ioprioClassShift | 4, want: retErrno(unix.EPERM)},
				call{name: "the idle I/O class", arch: a.audit, nr: a.ioprioSet, arg0: 1, arg2: 3 << ioprioClassShift, want: allow},
				call{name: "no I/O class (the policy's)", arch: a.audit, nr: a.ioprioSet, arg0: 1, arg2: 0, want: allow},
				mk("packet socket", a.audit, a.socket, unix.AF_PACKET, noFamily),
				mk("Unix socket pair", a.audit, a.socketpair, unix.AF_UNIX, allow),
				mk("TIPC socket pair", a.audit, a.socketpair, unix.AF_TIPC, noFamily),
				mk("IPv4 socket pair", a.audit, a.socketpair, unix.AF_INET, noFamily),
				mk("XDP socket", a.audit, a.socket, unix.AF_XDP, noFamily),
				mk("AppleTalk socket", a.audit, a.socket, unix.AF_APPLETALK, noFamily),
				call{name: "IPv6 socket", arch: a.audit, nr: a.socket, arg0: unix.AF_INET6, arg1: unix.SOCK_DGRAM, want: allow},
				call{name: "routing netlink socket", arch: a.audit, nr: a.socket, arg0: unix.AF_NETLINK, arg2: unix.NETLINK_ROUTE, want: allow},
				call{name: "netfilter netlink socket", arch: a.audit, nr: a.socket, arg0: unix.AF_NETLINK, arg2: unix.NETLINK_NETFILTER, want: retErrno(unix.EPROTONOSUPPORT)},
				call{name: "a raw IPv4 socket of netfilter's protocol number (a netlink number only for netlink)", arch: a.audit, nr: a.socket, arg0: unix.AF_INET, arg1: unix.SOCK_RAW, arg2: unix.NETLINK_NETFILTER, want: allow},
				call{name: "an SCTP stream socket (a module loaded at first ask)", arch: a.audit, nr: a.socket, arg0: unix.AF_INET, arg1: unix.SOCK_STREAM, arg2: unix.IPPROTO_SCTP, want: retErrno(unix.EPROTONOSUPPORT)},
				call{name: "an IPv6 SCTP packet socket", arch: a.audit, nr: a.socket, arg0: unix.AF_INET6, arg1: unix.SOCK_SEQPACKET | unix.SOCK_CLOEXEC, arg2: unix.IPPROTO_SCTP, want: retErrno(unix.ESOCKTNOSUPPORT)},
				call{name: "a DCCP socket by its type alone (the module's alias names protocol 0)", arch: a.audit, nr: a.socket, arg0: unix.AF_INET, arg1: unix.SOCK_DCCP, arg2: 0, want: retErrno(unix.ESOCKTNOSUPPORT)},
				call{name: "an SCTP packet socket by its type alone", arch: a.audit, nr: a.socket, arg0: unix.AF_INET6, arg1: unix.SOCK_SEQPACKET | unix.SOCK_NONBLOCK, arg2: 0, want: retErrno(unix.ESOCKTNOSUPPORT)},
				call{name: "a reliably delivered message socket", arch: a.audit, nr: a.socket, arg0: unix.AF_INET, arg1: unix.SOCK_RDM, arg2: 0, want: retErrno(unix.ESOCKTNOSUPPORT)},
				call{name: "a DCCP socket", arch: a.audit, nr: a.socket, arg0: unix.AF_INET, arg1: unix.SOCK_DCCP, arg2: unix.IPPROTO_DCCP, want: retErrno(unix.ESOCKTNOSUPPORT)},
				call{name: "an L2TP/IP socket", arch: a.audit, nr: a.socket, arg0: unix.AF_INET, arg1: unix.SOCK_DGRAM, arg2: unix.IPPROTO_L2TP, want: retErrno(unix.EPROTONOSUPPORT)},
				call{name: "an SMC socket through IPv4 (IPPROTO_SMC)", arch: a.audit, nr: a.socket, arg0: unix.AF_INET, arg1: unix.SOCK_STREAM, arg2: 256, want: retErrno(unix.EPROTONOSUPPORT)},
				call{name: "a UDP-Lite socket", arch: a.audit, nr: a.socket, arg0: unix.AF_INET6, arg1: unix.SOCK_DGRAM, arg2: unix.IPPROTO_UDPLITE, want: retErrno(unix.EPROTONOSUPPORT)},
				call{name: "a protocol number past 255", arch: a.audit, nr: a.socket, arg0: unix.AF_INET, arg1: unix.SOCK_STREAM, arg2: 0x10006, want: retErrno(unix.EPROTONOSUPPORT)},
				call{name: "a TCP socket named by number", arch: a.audit, nr: a.socket, arg0: unix.AF_INET, arg1: unix.SOCK_STREAM | unix.SOCK_NONBLOCK, arg2: unix.IPPROTO_TCP, want: allow},
				call{name: "a UDP socket named by number", arch: a.audit, nr: a.socket, arg0: unix.AF_INET6, arg1: unix.SOCK_DGRAM, arg2: unix.IPPROTO_UDP, want: allow},
				call{name: "an IPv4 ping socket", arch: a.audit, nr: a.socket, arg0: unix.AF_INET, arg1: unix.SOCK_DGRAM, arg2: unix.IPPROTO_ICMP, want: allow},
				call{name: "an IPv6 ping socket", arch: a.audit, nr: a.socket, arg0: unix.AF_INET6, arg1: unix.SOCK_DGRAM, arg2: unix.IPPROTO_ICMPV6, want: allow},
				call{name: "an MPTCP socket (built in, Go's listeners ask for it)", arch: a.audit, nr: a.socket, arg0: unix.AF_INET6, arg1: unix.SOCK_STREAM, arg2: unix.IPPROTO_MPTCP, want: allow},
				call{name: "a raw IPv6 socket of SCTP's number (raw sockets load nothing)", arch: a.audit, nr: a.socket, arg0: unix.AF_INET6, arg1: unix.SOCK_RAW, arg2: unix.IPPROTO_SCTP, want: allow},
				call{name: "an IPv4 socket of the obsolete type SOCK_PACKET (a packet socket)", arch: a.audit, nr: a.socket, arg0: unix.AF_INET, arg1: unix.SOCK_PACKET, arg2: 0x0300, want: retErrno(unix.EAFNOSUPPORT)},
				call{name: "the same with SOCK_NONBLOCK and SOCK_CLOEXEC", arch: a.audit, nr: a.socket, arg0: unix.AF_INET, arg1: unix.SOCK_PACKET | unix.SOCK_NONBLOCK | unix.SOCK_CLOEXEC, arg2: 0x0300, want: retErrno(unix.EAFNOSUPPORT)},
				call{name: "a raw IPv4 socket", arch: a.audit, nr: a.socket, arg0: unix.AF_INET, arg1: unix.SOCK_RAW | unix.SOCK_CLOEXEC, arg2: unix.IPPROTO_ICMP, want: allow},
				call{name: "an IPv6 socket of type SOCK_PACKET (the kernel refuses it too)", arch: a.audit, nr: a.socket, arg0: unix.AF_INET6, arg1: unix.SOCK_PACKET, want: retErrno(unix.EAFNOSUPPORT)},
				call{name: "generic netlink socket", arch: a.audit, nr: a.socket, arg0: unix.AF_NETLINK, arg2: unix.NETLINK_GENERIC, want: retErrno(unix.EPROTONOSUPPORT)},
				call{name: "xfrm netlink socket", arch: a.audit, nr: a.socket, arg0: unix.AF_NETLINK, arg2: unix.NETLINK_XFRM, want: retErrno(unix.EPROTONOSUPPORT)},
				call{name: "socket diagnostics netlink socket", arch: a.audit, nr: a.socket, arg0: unix.AF_NETLINK, arg2: unix.NETLINK_SOCK_DIAG, want: allow},
				call{name: "audit netlink socket", arch: a.audit, nr: a.socket, arg0: unix.AF_NETLINK, arg2: unix.NETLINK_AUDIT, want: allow},
				call{name: "device events netlink socket", arch: a.audit, nr: a.socket, arg0: unix.AF_NETLINK, arg2: unix.NETLINK_KOBJECT_UEVENT, want: allow},
				call{name: "inet socket", arch: a.audit, nr: a.socket, arg0: unix.AF_INET, arg1: unix.SOCK_STREAM | unix.SOCK_CLOEXEC, want: allow},
				call{name: "an inet socket of no type", arch: a.audit, nr: a.socket, arg0: unix.AF_INET, want: retErrno(unix.ESOCKTNOSUPPORT)},
				mk("unix socket", a.audit, a.socket, unix.AF_UNIX, allow),
				mk("io_uring_setup", a.audit, a.ioUring, 0, noSys),
				mk("io_uring_setup's neighbour", a.audit, a.ioUring+1, 0, allow),
				mk("request_key", a.audit, a.requestKey, 0, noSys),
				mk("add_key", a.audit, a.addKey, 0, noSys),
				mk("keyctl", a.audit, a.keyctl, 0, noSys),
				mk("add_key's neighbour", a.audit, a.addKey-1, 0, allow),
				mk("keyctl's neighbour", a.audit, a.keyctl+1, 0, allow),
				mk("a call with AF_VSOCK as first argument", a.audit, a.socket+2, unix.AF_VSOCK, allow),
				call{name: "perf_event_open", arch: a.audit, nr: a.perfEvent, want: noSys},
				call{name: "userfaultfd", arch: a.audit, nr: a.uffd, want: noSys},
				call{name: "memfd_secret", arch: a.audit, nr: memfdSecret, want: noSys},
				call{name: "memfd_secret's neighbour", arch: a.audit, nr: memfdSecret + 1, want: allow},
				call{name: "clone3 (CLONE_INTO_CGROUP)", arch: a.audit, nr: clone3, want: noSys},
				call{name: "clone3's neighbour (close_range)", arch: a.audit, nr: clone3 + 1, want: allow},
				call{name: "bpf", arch: a.audit, nr: a.bpf, want: noSys},
				call{name: "bpf's neighbour", arch: a.audit, nr: a.bpf + 1, want: allow},
				call{name: "syslog", arch: a.audit, nr: a.syslog, want: noSys},
				call{name: "syslog's neighbour", arch: a.audit, nr: a.syslog + 1, want: allow},
				call{name: "io_setup", arch: a.audit, nr: a.aioSetup[0], want: noSys},
				call{name: "io_setup's neighbour (io_destroy)", arch: a.audit, nr: a.aioSetup[0] + 1, want: allow},
				call{name: "fallocate", arch: a.audit, nr: a.fallocate, want: retErrno(unix.EOPNOTSUPP)},
				call{name: "fallocate's neighbour", arch: a.audit, nr: a.fallocate + 1, want: allow},
				call{name: "ioctl FS_IOC_RESVSP64", arch: a.audit, nr: a.ioctls[0], arg1: a.iocWrite | 48<<16 | 'X'<<8 | 42, want: retErrno(unix.EOPNOTSUPP)},
				call{name: "ioctl FS_IOC_RESVSP, i386's struct", arch: a.audit, nr: a.ioctls[0], arg1: a.iocWrite | 44<<16 | 'X'<<8 | 40, want: retErrno(unix.EOPNOTSUPP)},
				call{name: "ioctl FS_IOC_ZERO_RANGE", arch: a.audit, nr: a.ioctls[0], arg1: a.iocWrite | 48<<16 | 'X'<<8 | 57, want: retErrno(unix.EOPNOTSUPP)},
				call{name: "ioctl FS_IOC_UNRESVSP64 (frees)", arch: a.audit, nr: a.ioctls[0], arg1: a.iocWrite | 48<<16 | 'X'<<8 | 43, want: allow},
				call{name: "ioctl TCGETS", arch: a.audit, nr: a.ioctls[0], arg1: unix.TCGETS, want: allow},
				call{name: "FS_IOC_RESVSP64's number as another call's second argument", arch: a.audit, nr: a.fallocate + 1, arg1: a.iocWrite | 48<<16 | 'X'<<8 | 42, want: allow},
				call{name: "setrlimit(RLIMIT_CORE)", arch: a.audit, nr: a.setrlimit, arg0: unix.RLIMIT_CORE, want: ignored},
				call{name: "setrlimit(RLIMIT_NOFILE)", arch: a.audit, nr: a.setrlimit, arg0: unix.RLIMIT_NOFILE, want: allow},
				call{name: "prlimit64 setting RLIMIT_CORE", arch: a.audit, nr: a.prlimit, arg1: unix.RLIMIT_CORE, arg2: 0x7ffc1000, want: ignored},
				call{name: "prlimit64 setting RLIMIT_CORE from above 4 GiB", arch: a.audit, nr: a.prlimit, arg1: unix.RLIMIT_CORE, arg2Hi: 0x7ffc, want: ignored},
				call{name: "prlimit64 reading RLIMIT_CORE", arch: a.audit, nr: a.prlimit, arg1: unix.RLIMIT_CORE, want: allow},
				call{name: "prlimit64 setting RLIMIT_NOFILE", arch: a.audit, nr: a.prlimit, arg1: unix.RLIMIT_NOFILE, arg2: 0x7ffc1000, want: allow},
			)
			for _, nr := range a.fcntls {
				calls = append(calls,
					call{name: "fcntl F_SETLEASE", arch: a.audit, nr: nr, arg1: unix.F_SETLEASE, arg2: unix.F_RDLCK, want: retErrno(unix.EINVAL)},
					call{name: "fcntl F_GETLEASE", arch: a.audit, nr: nr, arg1: unix.F_GETLEASE, want: allow},
					call{name: "fcntl F_SETLK", arch: a.audit, nr: nr, arg1: unix.F_SETLK, want: allow},
					call{name: "fcntl F_SETFD", arch: a.audit, nr: nr, arg1: unix.F_SETFD, arg2: unix.FD_CLOEXEC, want: allow})
			}
			calls = append(calls, call{name: "F_SETLEASE as ioctl's command", arch: a.audit, nr: a.ioctls[0], arg1: unix.F_SETLEASE, want: allow})
			if a.socketcall != 0 {
				calls = append(calls,
					mk("socketcall(SYS_SOCKET)", a.audit, a.socketcall, sysSocket, noFamily),
					mk("socketcall(SYS_SOCKETPAIR)", a.audit, a.socketcall, sysSocketpair, noFamily),
					mk("socketcall(SYS_CONNECT)", a.audit, a.socketcall, 3, allow))
			}
			if a.x32 {
				calls = append(calls,
					mk("x32 vsock socket", a.audit, a.socket|x32Bit, unix.AF_VSOCK, noFamily),
					mk("x32 io_uring_setup", a.audit, a.ioUring|x32Bit, 0, noSys),
					mk("x32 keyctl", a.audit, a.keyctl|x32Bit, 0, noSys),
					mk("x32 io_setup (its own entry)", a.audit, 543|x32Bit, 0, noSys),
					call{name: "x32 ioctl FS_IOC_RESVSP64", arch: a.audit, nr: 514 | x32Bit, arg1: 1<<30 | 48<<16 | 'X'<<8 | 42, want: retErrno(unix.EOPNOTSUPP)},
					call{name: "x32 fcntl F_SETLEASE", arch: a.audit, nr: 72 | x32Bit, arg1: unix.F_SETLEASE, want: retErrno(unix.EINVAL)},
					call{name: "x32 prlimit64 setting RLIMIT_CORE", arch: a.audit, nr: a.prlimit | x32Bit, arg1: unix.RLIMIT_CORE, arg2: 0x1000, want: ignored})
			}
		}
		// A convention the filter has no numbers for is not let through:
		// its calls could be anything, vsock's socket among them.
		kill := uint32(unix.SECCOMP_RET_KILL_PROCESS)
		calls = append(calls,
			mk("another arch's socket number", unix.AUDIT_ARCH_S390X, archs[0].socket, unix.AF_VSOCK, kill),
			mk("another arch's harmless call", unix.AUDIT_ARCH_S390X, 0, 0, kill),
			mk("ppc32 on a ppc64 kernel", unix.AUDIT_ARCH_PPC, 326, unix.AF_VSOCK, kill),
			mk("rv32 on a riscv64 kernel", unix.AUDIT_ARCH_RISCV32, 198, unix.AF_VSOCK, kill))
		for _, c := range calls {
			// struct seccomp_data. The kernel loads its words in the
			// machine's order, the VM in network order: each field is
			// written so that the VM reads the value the kernel would.
			var data [64]byte
			putWord(data[0:], c.nr)
			putWord(data[4:], c.arch)
			putWord(data[16:], c.arg0)
			putWord(data[24:], c.arg1)
			putWord(data[32:], c.arg2)
			putWord(data[36:], c.arg2Hi)
			got, err := vm.Run(data[:])
			if err != nil {
				t.Fatalf("%s %s: %v", goarch, c.name, err)
			}
			if uint32(got) != c.want {
				t.Errorf("%s arch %#x %s (nr %d, arg0 %d): got %#x, want %#x", goarch, c.arch, c.name, c.nr, c.arg0, got, c.want)
			}
		}
	}
	if _, err := archsFor("mips"); err == nil {
		t.Error("archsFor(mips) found conventions it has no numbers for")
	}
}

func putWord(b []byte, v uint32) { binary.BigEndian.PutUint32(b, v) }

// TestHostSettingsOutOfReach: a contained program tries to change what
// the whole machine shares: its clock (to make tokens or certificates
// look valid or expired for every other process), its host name, the
// core_pattern handler every crash starts as root, and the magic SysRq
// trigger (reboot, kill all). Each is refused; the host's values stay.
func TestHostSettingsOutOfReach(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	host, _ := os.Hostname()
	pattern, _ := os.ReadFile("/proc/sys/kernel/core_pattern")
	before := time.Now()
	script := `date -s '2001-01-01 00:00:00' >/dev/null 2>&1 && echo CLOCK
hostname planex-redteam 2>/dev/null && echo HOSTNAME
echo '|/bin/sh -c id' 2>/dev/null > /proc/sys/kernel/core_pattern && echo CORE_PATTERN
echo s 2>/dev/null > /proc/sysrq-trigger && echo SYSRQ
echo tried`
	out, err := run(t, s, Policy{}, "/", []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin"}, script)
	if err != nil || strings.TrimSpace(out) != "tried" {
		t.Errorf("the program changed a setting of the machine (%v):\n%s", err, out)
	}
	if now, _ := os.Hostname(); now != host {
		t.Errorf("the host name is now %q", now)
	}
	if now, _ := os.ReadFile("/proc/sys/kernel/core_pattern"); string(now) != string(pattern) {
		t.Errorf("core_pattern is now %q", now)
	}
	if time.Now().Before(before) {
		t.Error("the clock went back")
	}
}

// scratchShare is the share of the machine's memory (percent) each of a
// step's scratch folders may hold: 30% in all, where each could take half.
var scratchShare = map[string]uint64{"/tmp": 20, "/var/tmp": 5, "/dev/shm": 5}

// TestScratchSpaceBounded: a program that fills the step's /tmp, /var/tmp
// or /dev/shm holds memory no process owns (tmpfs), which the OOM killer
// cannot take back by ending it; each defaulted to half the machine's
// memory, the three one and a half times it. Now /tmp holds at most a
// fifth and the others a twentieth (scratchShare): the capacity the
// program sees from inside is checked, as
// filling gigabytes in a test would be the attack itself.
func TestScratchSpaceBounded(t *testing.T) {
	t.Parallel()
	ram, s := totalRAM(t), newSandbox(t)
	out, err := run(t, s, Policy{}, "/", []string{"PATH=/usr/bin:/bin"}, `for d in /tmp /var/tmp /dev/shm; do [ -d $d ] && stat -f -c "$d %b %S" $d; done`)
	if err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	seen := 0
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var dir string
		var blocks, size uint64
		if _, err := fmt.Sscanf(line, "%s %d %d", &dir, &blocks, &size); err != nil {
			t.Fatalf("reading %q: %v", line, err)
		}
		seen++
		if c := blocks * size; c > ram*scratchShare[dir]/100+4096 {
			t.Errorf("%s holds %d MiB, over %d%% of the machine's %d MiB", dir, c>>20, scratchShare[dir], ram>>20)
		}
	}
	if seen < 2 {
		t.Errorf("only %d scratch folders seen:\n%s", seen, out)
	}
}

// TestScratchInodesBounded: a program fills the step's /tmp, /var/tmp
// and /dev/shm with empty files (or user xattrs, counted against the
// same inode space), which their size limit does not count: each inode
// is kernel memory no process owns (the kernel reckons about 1 KiB),
// and by default a tmpfs allows half the machine's pages as inodes, an
// eighth of its memory each, past the quarter the size limit leaves.
// Each scratch folder now allows inodes worth at most a 32nd of the
// memory (the kernel refuses files past its count), and a file can still
// be made.
func TestScratchInodesBounded(t *testing.T) {
	t.Parallel()
	ram, s := totalRAM(t), newSandbox(t)
	out, err := run(t, s, Policy{}, "/", []string{"PATH=/usr/bin:/bin"}, `for d in /tmp /var/tmp /dev/shm; do [ -d $d ] && stat -f -c "$d %c %d" $d; done; : > /dev/shm/a && echo made`)
	if err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if !strings.Contains(out, "made") {
		t.Errorf("no file could be made in /dev/shm:\n%s", out)
	}
	seen := 0
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == "made" {
			continue
		}
		var dir string
		var total, free uint64
		if _, err := fmt.Sscanf(line, "%s %d %d", &dir, &total, &free); err != nil {
			t.Fatalf("reading %q: %v", line, err)
		}
		seen++
		if want := max(ram/1024*scratchShare[dir]/100/8, 4096); total > want+1 {
			t.Errorf("%s allows %d inodes (%d MiB of kernel memory), want at most %d (an eighth of its %d%% of the machine's %d MiB)", dir, total, total>>10, want, scratchShare[dir], ram>>20)
		}
		if free == 0 || free >= total {
			t.Errorf("%s: %d of %d inodes free", dir, free, total)
		}
	}
	if seen < 2 {
		t.Errorf("only %d scratch folders seen:\n%s", seen, out)
	}
}

// TestSysVSharedMemoryBounded: a program makes System V shared memory
// segments, which outlive it while the step's init holds its IPC
// namespace (memory no process owns, which the OOM killer cannot free,
// as a tmpfs's), in a namespace that allowed any amount; then raises the
// cap. Segments of more than an eighth of the machine's memory in all
// are now refused (the kernel counts a segment's size when it is made,
// so none is filled here), a small one is made, and the cap stays; as
// are message queues past msgQueues (a namespace allowed 32,000 of 16
// KiB).
func TestSysVSharedMemoryBounded(t *testing.T) {
	t.Parallel()
	ram, s := sysVSandbox(t)
	script := fmt.Sprintf(`ipcmk -M %d >/dev/null 2>&1 && echo made-big; ipcmk -M 1048576 >/dev/null && echo made-small; i=0; while [ $i -lt 300 ] && ipcmk -Q >/dev/null 2>&1; do i=$((i+1)); done; echo "queues $i"; echo 32000 > /proc/sys/kernel/msgmni 2>/dev/null; echo 0 > /proc/sys/kernel/shmall 2>/dev/null; echo 18446744073692774399 > /proc/sys/kernel/shmall 2>/dev/null; cat /proc/sys/kernel/shmall`, ram/8+(1<<20))
	out, err := run(t, s, Policy{}, "/", []string{"PATH=/usr/bin:/bin"}, script)
	if err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if strings.Contains(out, "made-big") {
		t.Errorf("a segment of %d MiB was made, more than an eighth of the machine's %d MiB:\n%s", (ram/8+(1<<20))>>20, ram>>20, out)
	}
	if !strings.Contains(out, "made-small") {
		t.Errorf("a 1 MiB segment could not be made:\n%s", out)
	}
	if !strings.Contains(out, fmt.Sprintf("queues %d\n", msgQueues)) {
		t.Errorf("want %d message queues made, no more:\n%s", msgQueues, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if pages := lines[len(lines)-1]; pages != fmt.Sprint(ram/8/uint64(os.Getpagesize())) {
		t.Errorf("shmall is %s pages after the program's writes, want an eighth of the memory", pages)
	}
}

// sysVSandbox skips a test without ipcmk (util-linux), which makes its
// System V segments, and returns the machine's memory in bytes and a
// sandbox to make them in.
func sysVSandbox(t *testing.T) (uint64, *Sandbox) {
	t.Helper()
	if _, err := exec.LookPath("ipcmk"); err != nil {
		t.Skip("needs ipcmk (util-linux) to make System V segments")
	}
	return totalRAM(t), newSandbox(t)
}

// totalRAM is the machine's memory in bytes, which the step's scratch
// folders and System V caps are shares of; read here apart from
// machineMemory, so that the tests do not take its word.
func totalRAM(t *testing.T) uint64 {
	t.Helper()
	var si unix.Sysinfo_t
	if err := unix.Sysinfo(&si); err != nil {
		t.Fatal(err)
	}
	return uint64(si.Totalram) * uint64(si.Unit)
}

// TestSysVCapsRaisedEndTheStep: the step's IPC namespace caps System V
// memory (TestSysVSharedMemoryBounded), but an ordinary user's program
// runs as that namespace's root and may raise the caps again (as
// TestAttacksAsOrdinaryUser runs it): it then made a segment of a
// quarter of the machine's memory, memory no process owns, and ran on.
// Now the init ends a step whose segments pass the cap, whoever raised
// it. Root's program cannot raise them (no segment is made).
func TestSysVCapsRaisedEndTheStep(t *testing.T) {
	t.Parallel()
	ram, s := sysVSandbox(t)
	script := fmt.Sprintf(`echo 18446744073692774399 > /proc/sys/kernel/shmall 2>/dev/null && echo raised-shmall
echo 18446744073692774399 > /proc/sys/kernel/shmmax 2>/dev/null
ipcmk -M %d >/dev/null 2>&1 && echo made-big
sleep 3; echo "still running"`, ram/4)
	out, err := run(t, s, Policy{}, "/", []string{"PATH=/usr/bin:/bin"}, script)
	if strings.Contains(out, "made-big") && strings.Contains(out, "still running") {
		t.Errorf("the program raised the step's caps, made a segment of %d MiB and ran on (%v):\n%s", (ram/4)>>20, err, out)
	}
	if strings.Contains(out, "made-big") && !strings.Contains(out, "planex sandbox: the step held System V shared memory of") {
		t.Errorf("the step was ended without saying why:\n%s", out)
	}
	t.Logf("uid %d: %s", os.Getuid(), out)
}

// TestSysVInNestedIPCNamespace: the program makes a user namespace of
// its own and in it a new IPC namespace, whose System V limits are the
// kernel's defaults (no shmall the init capped) and whose segments the
// init's /proc/sysvipc does not list; there it makes a segment of a
// quarter of the memory, which outlives every process that maps it.
func TestSysVInNestedIPCNamespace(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"ipcmk", "unshare"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s (util-linux)", tool)
		}
	}
	var si unix.Sysinfo_t
	if err := unix.Sysinfo(&si); err != nil {
		t.Fatal(err)
	}
	ram := uint64(si.Totalram) * uint64(si.Unit)
	s := newSandbox(t)
	script := fmt.Sprintf(`unshare -Ui sh -c 'ipcmk -M %d >/dev/null 2>&1 && echo made-big; sleep 3; echo "still running"'`, ram/4)
	out, err := run(t, s, Policy{}, "/", []string{"PATH=/usr/bin:/bin"}, script)
	if strings.Contains(out, "made-big") && strings.Contains(out, "still running") {
		t.Errorf("the program made a segment of %d MiB in an IPC namespace of its own and ran on (%v):\n%s", (ram/4)>>20, err, out)
	}
	if strings.Contains(out, "made-big") && !strings.Contains(out, "planex sandbox: the step held System V shared memory of") {
		t.Errorf("the step was ended without saying why:\n%s", out)
	}
	t.Logf("uid %d: %v %s", os.Getuid(), err, out)
}

// TestRedTeamSysVSemaphoresBounded: a program makes System V semaphore
// sets of 32000 semaphores each (about 3 MiB of kernel memory a set),
// which outlive it while the step's init holds its IPC namespace, memory
// no process owns, as a segment's: the step's namespace allowed 32000
// sets, about 100 GiB, and neither its caps nor the init's guard counted
// semaphores (64 sets were made and held here, where the probe stops).
// It first raises the namespace's semaphore limits (an ordinary user's
// program may: TestAttacksAsOrdinaryUser runs it), then does the same in
// an IPC namespace of its own (unshare -Ui), whose limits are the
// kernel's defaults. Either the sets past the step's semaphores are
// refused, or the step is ended, saying why; it never holds them and
// runs on.
func TestRedTeamSysVSemaphoresBounded(t *testing.T) {
	t.Parallel()
	_, s := sysVSandbox(t)
	sets := `echo "32000 1024000000 500 32000" 2>/dev/null >/proc/sys/kernel/sem
i=0; while [ $i -lt 64 ] && ipcmk -S 32000 >/dev/null 2>&1; do i=$((i+1)); done; echo sets $i; sleep 3; echo still running`
	scripts := map[string]string{"the step's namespace": sets}
	if _, err := exec.LookPath("unshare"); err == nil {
		scripts["a namespace of its own"] = "unshare -Ui sh -c '" + sets + "'"
	}
	for name, script := range scripts {
		out, err := run(t, s, Policy{}, "/", []string{"PATH=/usr/bin:/bin"}, script)
		var made int
		for _, line := range strings.Split(out, "\n") {
			if v, ok := strings.CutPrefix(line, "sets "); ok {
				made, _ = strconv.Atoi(v)
			}
		}
		past := made*32000 > semCount
		if past && strings.Contains(out, "still running") {
			t.Errorf("%s: the program made %d semaphores, past the step's %d, and ran on (%v):\n%s", name, made*32000, semCount, err, out)
		}
		if past && !strings.Contains(out, "planex sandbox: the step held System V semaphores") {
			t.Errorf("%s: the step was ended without saying why:\n%s", name, out)
		}
		t.Logf("%s, uid %d: %v %s", name, os.Getuid(), err, out)
	}
}

// TestSysVGuard: segments and queued message bytes are added up from
// /proc/sysvipc (laid out in a folder here), headers skipped; past a cap
// the guard says which, and with no cap it watches nothing.
func TestSysVGuard(t *testing.T) {
	t.Parallel()
	proc := t.TempDir()
	if err := os.MkdirAll(filepath.Join(proc, "sysvipc"), 0o755); err != nil {
		t.Fatal(err)
	}
	shm := "       key      shmid perms                  size  cpid\n         0          1   600               1048576   10\n         0          2   600               2097152   11\n"
	msg := "       key      msqid perms      cbytes       qnum\n         0          1   600        4096          1\n"
	writeFile(t, filepath.Join(proc, "sysvipc", "shm"), shm, 0o644)
	writeFile(t, filepath.Join(proc, "sysvipc", "msg"), msg, 0o644)
	if got := (sysvGuard{proc: proc, shmCap: 4 << 20}).check(); got != "" {
		t.Errorf("3 MiB of segments and 4 KiB of messages under the caps: %q", got)
	}
	if got := (sysvGuard{proc: proc, shmCap: 2 << 20}).check(); !strings.Contains(got, "shared memory of 3 MiB (2 segments), past the step's 2 MiB") {
		t.Errorf("segments past the cap: %q", got)
	}
	writeFile(t, filepath.Join(proc, "sysvipc", "msg"), msg+"         0          2   600     8388608          9\n", 0o644)
	if got := (sysvGuard{proc: proc, shmCap: 4 << 20}).check(); !strings.Contains(got, "System V messages of 8196 KiB (2 queues)") {
		t.Errorf("messages past the cap: %q", got)
	}
	if got := (sysvGuard{proc: proc}).check(); got != "" {
		t.Errorf("a guard without a cap watched: %q", got)
	}
	// More queues than the step may make (msgmni raised): past the cap
	// whatever they hold, and the table is read no further.
	writeFile(t, filepath.Join(proc, "sysvipc", "msg"), msg+strings.Repeat("         0          3   600           0          0\n", 2*msgQueues), 0o644)
	if got := (sysvGuard{proc: proc, shmCap: 4 << 20}).check(); !strings.Contains(got, fmt.Sprintf("(%d queues), past", msgQueues+1)) {
		t.Errorf("queues past the count: %q", got)
	}
	// Semaphores: their count is the sets' fourth column.
	writeFile(t, filepath.Join(proc, "sysvipc", "msg"), msg, 0o644)
	sem := "       key      semid perms      nsems   uid\n         0          1   600         17     0\n"
	writeFile(t, filepath.Join(proc, "sysvipc", "sem"), sem, 0o644)
	if got := (sysvGuard{proc: proc, shmCap: 4 << 20}).check(); got != "" {
		t.Errorf("17 semaphores under the cap: %q", got)
	}
	writeFile(t, filepath.Join(proc, "sysvipc", "sem"), sem+strings.Repeat("         0          2   600      32000     0\n", 3), 0o644)
	if got := (sysvGuard{proc: proc, shmCap: 4 << 20}).check(); !strings.Contains(got, "System V semaphores: 96017 (4 sets), past the step's 65536") {
		t.Errorf("semaphores past the cap: %q", got)
	}
	writeFile(t, filepath.Join(proc, "sysvipc", "sem"), sem+strings.Repeat("         0          3   600          1     0\n", 2*semSets), 0o644)
	if got := (sysvGuard{proc: proc, shmCap: 4 << 20}).check(); !strings.Contains(got, fmt.Sprintf("(%d sets), past", semSets+1)) {
		t.Errorf("sets past the count: %q", got)
	}
}
