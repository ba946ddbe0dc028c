//go:build linux

package sandbox

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// A network namespace contains a process's IP, Unix (abstract) and
// netlink sockets, but not every kind of socket the kernel has:
//   - AF_VSOCK (virtio-vsock, VMware, Hyper-V sockets) is not per network
//     namespace (kernels before 6.19 know no namespaces for it; later ones
//     share it between namespaces unless told otherwise), so a contained
//     process on a virtual machine reaches its hypervisor's vsock
//     services, and through them whatever those do: a guest agent that
//     runs commands, a WSL host, a sandboxing product's control channel;
//   - io_uring makes sockets (IORING_OP_SOCKET) and does much else of a
//     process's work without the system calls a filter looks at;
//   - request_key starts the kernel's upcall, /sbin/request-key, as root
//     in the host's namespaces: for a dns_resolver key it looks the key's
//     name up in the host's DNS (a query for <data>.attacker.example
//     carries data out), and other key types run the helpers
//     /etc/request-key.conf names.
//
// Two more calls reach past the namespaces:
//   - perf_event_open: where perf_event_paranoid is 0 or less (machines
//     set up for profiling), a process may sample a whole CPU, every
//     process on it included, with their registers and user stacks:
//     planex's, holding the token, among them;
//   - lowering the core size limit: a crash of a process whose limit is
//     not 1 starts the core_pattern's pipe handler (apport,
//     systemd-coredump, a vendor's agent) as root in the host's
//     namespaces, with arguments the crashed program chose (its name,
//     its executable's path). The limit is 1 for every contained program
//     (limits_linux.go), which the kernel reads as "no dump, to a file
//     or a pipe"; 0 would still start the handler.
//
// One fills a disk faster than any look at it: fallocate takes a file's
// space in one call, at once, so a program took the whole free space of
// the file system it writes (the runner's and planex's) between two of
// the init's looks (diskGuard), each file under the file-size limit. It
// is refused with EOPNOTSUPP, as a file system without it answers:
// posix_fallocate and the programs that use the call then write, at the
// disk's pace, which the looks keep up with.
//
// And one gives a kernel exploit its favourite tool: userfaultfd, which
// an unprivileged process may make in its user-mode-only form, lets it
// hold the kernel at a page fault of its choosing in the middle of a
// copy from its memory, widening any race it wants to win. Programs
// seldom need it (live migration, CRIU's lazy pages). bpf is the other:
// where kernel.unprivileged_bpf_disabled is 0 (older kernels' default,
// and an admin's choice) an unprivileged process loads socket filters
// and makes maps, and the verifier that judges them has given root on
// the host again and again; no build needs it unprivileged.
//
// The kernel's keyrings reach past them too: a key is found by its
// serial number as well as by a search, and /proc/keys lists the serial
// of every key of a uid the reader's user namespace maps. A program of
// planex run as an ordinary user has planex's uid, so it listed the keys
// of the user's login (outside its namespace, its session keyring and
// user keyring its own) and read by number each the user may read (a
// Kerberos ticket cache's, a key a tool stored for its user). Docker's
// default profile refuses the keyring calls for the same reason.
//
// Linux AIO draws on a pool the kernel keeps for the whole machine,
// whatever namespace asks: fs.aio-max-nr, 65536 events by default, and
// one io_setup of 32768 events takes half of it. A program that took it
// all left every other process on the machine (a database's native AIO,
// QEMU, another job's) with EAGAIN until its step ended. Programs that
// use it fall back to ordinary reads and writes where the kernel has no
// AIO; nothing else makes contexts, so refusing io_setup is enough.
//
// The kernel's log is the machine's: where kernel.dmesg_restrict is 0
// (the kernel's default, kept by several distributions) syslog(2) reads
// it for any process in any namespace, with the machine's devices,
// other jobs' crashes and OOM kills and a firewall's logged packets.
// /dev/kmsg is not in the sandbox's /dev and /proc/kmsg is root's; the
// call is refused whatever the setting.
//
// And one slows the whole machine's kernel past the step: memfd_secret
// gives a process memory the kernel takes out of its own direct map,
// the map of all memory it keeps in huge pages, and each page taken
// splits the huge page holding it, which the kernel does not join again
// when the memory is freed. A program that made and touched secret
// memory until its locked-memory limit, in every process it may start,
// left the kernel's map of the machine's memory in small pages, each
// kernel access to it costlier on the TLB, until the machine restarts.
// Only a process guarding a key from its own kernel needs it.
//
// And a program reaches kernel code no unprivileged user otherwise
// does: as root of user and network namespaces of its own (unshare
// -Urn) it holds CAP_NET_ADMIN and CAP_NET_RAW over its own network,
// which is all nf_tables (netlink's netfilter protocol), packet sockets
// and XDP sockets ask, and each has given root on the host to programs
// that could: the nf_tables bugs of 2022 to 2024, the packet socket bugs
// of 2016, 2017 and 2020, exploited from exactly such namespaces. On a
// kernel with modules the rarer families (AppleTalk, RDS, TIPC, X.25,
// …) are loaded at a program's first socket of theirs, as root, and
// stay loaded after the step. Ubuntu refuses capabilities in such
// namespaces by default, which the Action turns off for the sandbox;
// builds and agents use Unix, IP and netlink sockets only.
//
// So the program of every sandbox starts under a seccomp filter that
// refuses a socket of any family but Unix, IPv4, IPv6 and netlink
// (EAFNOSUPPORT, as a kernel without it answers: AF_VSOCK among them)
// and netlink's protocols but routing, socket diagnostics, audit and
// device events (EPROTONOSUPPORT: familyGuard), io_uring, request_key, add_key, keyctl, perf_event_open,
// userfaultfd, bpf, io_setup, syslog, memfd_secret and clone3 (ENOSYS, as a kernel without them answers;
// Node.js and the rest fall back to ordinary calls, glibc and Rust to
// clone, and a Kerberos client to a file cache: clone3's
// CLONE_INTO_CGROUP starts a child in any cgroup whose cgroup.procs
// the program's uid may write, a read-only view of the tree
// notwithstanding, and its flags lie in memory, out of a filter's
// sight), fallocate (EOPNOTSUPP) and file leases (leaseGuard), and ignores any change of
// RLIMIT_CORE through setrlimit or prlimit64 (the call succeeds and
// changes nothing; reading it passes), and refuses a best-effort or
// real-time I/O priority (ioprioGuard). Everything else passes.

// syscallArch is what the filter needs of one system call convention.
type syscallArch struct {
	audit      uint32 // AUDIT_ARCH_* as seccomp reports it
	socket     uint32
	socketpair uint32
	ioUring    uint32 // io_uring_setup
	requestKey uint32
	addKey     uint32
	keyctl     uint32
	perfEvent  uint32 // perf_event_open
	uffd       uint32 // userfaultfd
	bpf        uint32
	fallocate  uint32
	// io_setup, and x32's own compat entry beside amd64's.
	aioSetup []uint32
	syslog   uint32
	// ioctl's numbers (x32's own compat entry beside amd64's) and the
	// direction bit _IOW sets (bit 30, bit 31 on powerpc).
	ioctls     []uint32
	iocWrite   uint32
	fcntls     []uint32 // fcntl, and fcntl64 where the convention has it
	setrlimit  uint32
	prlimit    uint32 // prlimit64
	ioprioSet  uint32 // ioprio_set
	socketcall uint32 // the socket multiplexer (i386, powerpc), 0 where there is none
	x32        bool   // x86-64's x32 calls share its arch, with bit 30 set
}

// Numbers from the kernel's syscall tables (asm-generic for the newer
// architectures: io_uring_setup is 425 everywhere).
var (
	archAMD64   = syscallArch{audit: unix.AUDIT_ARCH_X86_64, socket: 41, socketpair: 53, ioUring: 425, requestKey: 249, addKey: 248, keyctl: 250, perfEvent: 298, uffd: 323, bpf: 321, fallocate: 285, aioSetup: []uint32{206, 543}, syslog: 103, ioctls: []uint32{16, 514}, iocWrite: 1 << 30, fcntls: []uint32{72}, setrlimit: 160, prlimit: 302, ioprioSet: 251, x32: true}
	arch386     = syscallArch{audit: unix.AUDIT_ARCH_I386, socket: 359, socketpair: 360, ioUring: 425, requestKey: 287, addKey: 286, keyctl: 288, perfEvent: 336, uffd: 374, bpf: 357, fallocate: 324, aioSetup: []uint32{245}, syslog: 103, ioctls: []uint32{54}, iocWrite: 1 << 30, fcntls: []uint32{55, 221}, setrlimit: 75, prlimit: 340, ioprioSet: 289, socketcall: 102}
	archARM64   = syscallArch{audit: unix.AUDIT_ARCH_AARCH64, socket: 198, socketpair: 199, ioUring: 425, requestKey: 218, addKey: 217, keyctl: 219, perfEvent: 241, uffd: 282, bpf: 280, fallocate: 47, aioSetup: []uint32{0}, syslog: 116, ioctls: []uint32{29}, iocWrite: 1 << 30, fcntls: []uint32{25}, setrlimit: 164, prlimit: 261, ioprioSet: 30}
	archARM     = syscallArch{audit: unix.AUDIT_ARCH_ARM, socket: 281, socketpair: 288, ioUring: 425, requestKey: 310, addKey: 309, keyctl: 311, perfEvent: 364, uffd: 388, bpf: 386, fallocate: 352, aioSetup: []uint32{243}, syslog: 103, ioctls: []uint32{54}, iocWrite: 1 << 30, fcntls: []uint32{55, 221}, setrlimit: 75, prlimit: 369, ioprioSet: 314}
	archRISCV64 = syscallArch{audit: unix.AUDIT_ARCH_RISCV64, socket: 198, socketpair: 199, ioUring: 425, requestKey: 218, addKey: 217, keyctl: 219, perfEvent: 241, uffd: 282, bpf: 280, fallocate: 47, aioSetup: []uint32{0}, syslog: 116, ioctls: []uint32{29}, iocWrite: 1 << 30, fcntls: []uint32{25}, setrlimit: 164, prlimit: 261, ioprioSet: 30}
	archPPC64LE = syscallArch{audit: unix.AUDIT_ARCH_PPC64LE, socket: 326, socketpair: 333, ioUring: 425, requestKey: 270, addKey: 269, keyctl: 271, perfEvent: 319, uffd: 364, bpf: 361, fallocate: 309, aioSetup: []uint32{227}, syslog: 103, ioctls: []uint32{54}, iocWrite: 4 << 29, fcntls: []uint32{55}, setrlimit: 75, prlimit: 325, ioprioSet: 273, socketcall: 102}
)

// memfdSecret is memfd_secret's number in every convention that has it,
// clone3 clone3's: the calls from io_uring_setup (425) on share one
// table.
const (
	memfdSecret = 447
	clone3      = 435
)

// archsFor lists the conventions a process on goarch's kernel may use:
// its own first, then the 32-bit one a 64-bit kernel also runs.
func archsFor(goarch string) ([]syscallArch, error) {
	switch goarch {
	case "amd64":
		return []syscallArch{archAMD64, arch386}, nil
	case "arm64":
		return []syscallArch{archARM64, archARM}, nil
	case "386":
		return []syscallArch{arch386}, nil
	case "arm":
		return []syscallArch{archARM}, nil
	case "riscv64":
		return []syscallArch{archRISCV64}, nil
	case "ppc64le":
		return []syscallArch{archPPC64LE}, nil
	}
	return nil, fmt.Errorf("no system call filter for %s: the sandbox cannot keep vsock, io_uring, request_key, perf events, userfaultfd and core dump handlers from its programs there", goarch)
}

// seccomp_data offsets: the call's number, its arch, the low 32 bits of
// its first and second arguments, both halves of its third (every
// architecture listed is little-endian).
const (
	offNr     = 0
	offArch   = 4
	offArg0   = 16
	offArg1   = 24
	offArg2   = 32
	offArg2Hi = 36
)

const (
	retAllow = unix.SECCOMP_RET_ALLOW
	// A call in a convention the filter has no numbers for (a 64-bit
	// kernel built to run another 32-bit one: ppc32 on ppc64le, rv32 on
	// riscv64) kills the process: its numbers mean other calls, and
	// letting them through would leave vsock, io_uring and request_key
	// open by that door.
	retForeign = unix.SECCOMP_RET_KILL_PROCESS
	// socketcall's SYS_SOCKET and SYS_SOCKETPAIR: their family sits in
	// memory, out of a filter's sight, so every socket they would make
	// is refused.
	sysSocket     = 1
	sysSocketpair = 8
	x32Bit        = 0x40000000
	// sockTypeMask is the part of socket's type that names the type
	// (the kernel's SOCK_TYPE_MASK); the flags above it are not types.
	sockTypeMask = 0xf
)

func retErrno(errno unix.Errno) uint32 { return unix.SECCOMP_RET_ERRNO | uint32(errno) }

// retIgnored returns 0 without making the call: success, nothing done.
const retIgnored = unix.SECCOMP_RET_ERRNO

// syscallFilter is the program of the filter for the conventions archs.
func syscallFilter(archs []syscallArch) []bpf.Instruction {
	var prog []bpf.Instruction
	prog = append(prog, bpf.LoadAbsolute{Off: offArch, Size: 4})
	for _, a := range archs {
		body := archBody(a)
		prog = append(prog, bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: a.audit, SkipTrue: uint8(len(body))})
		prog = append(prog, body...)
	}
	return append(prog, bpf.RetConstant{Val: retForeign})
}

// archBody checks one convention's call (the arch already matched) and
// always returns.
func archBody(a syscallArch) []bpf.Instruction {
	refuseFamily := familyGuard()
	b := []bpf.Instruction{bpf.LoadAbsolute{Off: offNr, Size: 4}}
	if a.x32 {
		b = append(b, bpf.ALUOpConstant{Op: bpf.ALUOpAnd, Val: ^uint32(x32Bit)})
	}
	for _, nr := range append([]uint32{a.ioUring, a.requestKey, a.addKey, a.keyctl, a.perfEvent, a.uffd, a.bpf, a.syslog, memfdSecret, clone3}, a.aioSetup...) {
		b = append(b,
			bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: nr, SkipTrue: 1},
			bpf.RetConstant{Val: retErrno(unix.ENOSYS)})
	}
	b = append(b,
		bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: a.fallocate, SkipTrue: 1},
		bpf.RetConstant{Val: retErrno(unix.EOPNOTSUPP)})
	b = append(b, preallocGuard(a)...)
	b = append(b, leaseGuard(a)...)
	b = append(b, coreLimitGuard(a)...)
	b = append(b, ioprioGuard(a)...)
	if a.socketcall != 0 {
		b = append(b,
			bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: a.socketcall, SkipTrue: 5},
			bpf.LoadAbsolute{Off: offArg0, Size: 4},
			bpf.JumpIf{Cond: bpf.JumpEqual, Val: sysSocket, SkipTrue: 1},
			bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: sysSocketpair, SkipTrue: 1},
			bpf.RetConstant{Val: retErrno(unix.EAFNOSUPPORT)},
			bpf.RetConstant{Val: retAllow},
		)
	}
	// socketpair makes its two sockets as socket does (a module loaded
	// for the family, TIPC's pair usable), and only Unix sockets are
	// made in pairs by the programs a step runs.
	b = append(b,
		bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: a.socketpair, SkipTrue: 4},
		bpf.LoadAbsolute{Off: offArg0, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.AF_UNIX, SkipTrue: 1},
		bpf.RetConstant{Val: retErrno(unix.EAFNOSUPPORT)},
		bpf.RetConstant{Val: retAllow},
	)
	b = append(b, bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: a.socket, SkipTrue: uint8(len(refuseFamily))})
	b = append(b, refuseFamily...)
	return append(b, bpf.RetConstant{Val: retAllow})
}

// inetProtocols are the protocol numbers an IPv4 or IPv6 socket that
// is not raw may name: none (the type's own), TCP, UDP, ICMP and ICMPv6
// (ping sockets) and MPTCP, each built into every kernel that has it.
// Any other number is a protocol the kernel loads as a module at a
// program's first ask (SCTP, DCCP, L2TP, SMC; net-pf-2-proto-N) or one
// no program a step runs needs (UDP-Lite): refused with
// EPROTONOSUPPORT, as a kernel without it answers. A raw socket takes
// any number and loads nothing.
func inetProtocols() []uint32 {
	return []uint32{0, unix.IPPROTO_TCP, unix.IPPROTO_UDP, unix.IPPROTO_ICMP, unix.IPPROTO_ICMPV6, unix.IPPROTO_MPTCP}
}

// familyGuard checks socket(family, type, protocol), its arguments
// loaded from the call: Unix, IPv4 and IPv6 sockets pass, and netlink
// sockets of the protocols programs use unprivileged (routing, which
// the C library asks for addresses, socket diagnostics, audit, device
// events); netlink's other protocols are refused with EPROTONOSUPPORT
// (as a kernel without them answers): netfilter (nf_tables), generic
// netlink (openvswitch, TIPC, the tunnel families, loaded as modules at
// first ask) and IPsec's xfrm, each code a program reaches as root of a
// network namespace of its own. Every other family is refused with
// EAFNOSUPPORT, as a kernel without it answers, and so is an IP socket
// of the obsolete type SOCK_PACKET, which the kernel makes a packet
// socket for IPv4 (its type's flags, SOCK_NONBLOCK and SOCK_CLOEXEC,
// masked off as the kernel masks them). An IP socket that is not raw
// is a stream or datagram one (SOCK_SEQPACKET is SCTP's, SOCK_DCCP
// DCCP's, each loaded as a module by its type alone: ESOCKTNOSUPPORT, as
// a kernel without them answers) and names one of inetProtocols or is
// refused with EPROTONOSUPPORT. It always returns.
func familyGuard() []bpf.Instruction {
	protocols := inetProtocols()
	const inet = 5 // where an IP socket's type is read
	// after the IP part: the netlink part, then the two endings
	netlink := inet + 8 + len(protocols) + 1
	noFamily := netlink + 7
	allowCall := noFamily + 1
	to := func(at, target int) uint8 { return uint8(target - at - 1) }
	b := []bpf.Instruction{
		bpf.LoadAbsolute{Off: offArg0, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.AF_NETLINK, SkipTrue: to(1, netlink)},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.AF_UNIX, SkipTrue: to(2, allowCall)},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.AF_INET, SkipTrue: to(3, inet)},
		bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: unix.AF_INET6, SkipTrue: to(4, noFamily)},
		// inet: the type, then the protocol
		bpf.LoadAbsolute{Off: offArg1, Size: 4},
		bpf.ALUOpConstant{Op: bpf.ALUOpAnd, Val: sockTypeMask},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.SOCK_PACKET, SkipTrue: to(inet+2, noFamily)},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.SOCK_RAW, SkipTrue: to(inet+3, allowCall)},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.SOCK_STREAM, SkipTrue: 2},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.SOCK_DGRAM, SkipTrue: 1},
		bpf.RetConstant{Val: retErrno(unix.ESOCKTNOSUPPORT)},
		bpf.LoadAbsolute{Off: offArg2, Size: 4},
	}
	for _, p := range protocols {
		b = append(b, bpf.JumpIf{Cond: bpf.JumpEqual, Val: p, SkipTrue: to(len(b), allowCall)})
	}
	b = append(b,
		bpf.RetConstant{Val: retErrno(unix.EPROTONOSUPPORT)},
		// netlink
		bpf.LoadAbsolute{Off: offArg2, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.NETLINK_ROUTE, SkipTrue: 4},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.NETLINK_SOCK_DIAG, SkipTrue: 3},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.NETLINK_AUDIT, SkipTrue: 2},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.NETLINK_KOBJECT_UEVENT, SkipTrue: 1},
		bpf.RetConstant{Val: retErrno(unix.EPROTONOSUPPORT)},
		bpf.RetConstant{Val: retAllow},
		bpf.RetConstant{Val: retErrno(unix.EAFNOSUPPORT)},
		bpf.RetConstant{Val: retAllow},
	)
	return b
}

// preallocCommands are the ioctl commands through which the kernel
// preallocates or zeroes a file's range for any file system with
// fallocate (FS_IOC_RESVSP, FS_IOC_RESVSP64 and FS_IOC_ZERO_RANGE, XFS's
// numbers, which fs/ioctl.c answers for every regular file by calling
// fallocate itself): each is _IOW('X', nr, struct space_resv), the
// struct 48 bytes, or 44 where a 64-bit integer is aligned to 4 (i386,
// and its programs on an amd64 kernel). FS_IOC_UNRESVSP frees space and
// passes.
func preallocCommands(a syscallArch) []uint32 {
	var out []uint32
	for _, size := range []uint32{48, 44} {
		for _, nr := range []uint32{40, 42, 57} {
			out = append(out, a.iocWrite|size<<16|'X'<<8|nr)
		}
	}
	return out
}

// preallocGuard refuses the preallocating ioctl commands with
// EOPNOTSUPP, as fallocate is refused: they took a file system's free
// space in one call between two of the disk guard's looks
// (TestRedTeamDiskFillBetweenLooks). Any other call falls through with
// its number still loaded; any other ioctl passes.
func preallocGuard(a syscallArch) []bpf.Instruction {
	cmds := preallocCommands(a)
	inner := []bpf.Instruction{bpf.LoadAbsolute{Off: offArg1, Size: 4}}
	for _, c := range cmds {
		inner = append(inner,
			bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: c, SkipTrue: 1},
			bpf.RetConstant{Val: retErrno(unix.EOPNOTSUPP)})
	}
	inner = append(inner, bpf.RetConstant{Val: retAllow})
	var b []bpf.Instruction
	for _, nr := range a.ioctls {
		b = append(b, bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: nr, SkipTrue: uint8(len(inner))})
		b = append(b, inner...)
	}
	return b
}

// leaseGuard refuses fcntl(fd, F_SETLEASE, …) with EINVAL, as a machine
// with leases turned off (fs.leases-enable 0) answers. A lease needs
// only a descriptor open for reading and a file the caller owns, so a
// read-only view does not stop it: a program of planex run as an
// ordinary user took a read lease on a file of the user's it could read
// (a reflog, a module cache's file), and every host process that then
// opened the file for writing, planex's own git or another job's,
// waited up to the kernel's lease-break time (45 s) each time, while
// the step lasted. Programs do not need leases (file servers such as
// Samba and NFS's server take them). Any other call falls through with
// its number still loaded; every other fcntl passes.
func leaseGuard(a syscallArch) []bpf.Instruction {
	inner := []bpf.Instruction{
		bpf.LoadAbsolute{Off: offArg1, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: unix.F_SETLEASE, SkipTrue: 1},
		bpf.RetConstant{Val: retErrno(unix.EINVAL)},
		bpf.RetConstant{Val: retAllow},
	}
	var b []bpf.Instruction
	for _, nr := range a.fcntls {
		b = append(b, bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: nr, SkipTrue: uint8(len(inner))})
		b = append(b, inner...)
	}
	return b
}

// coreLimitGuard answers setrlimit(RLIMIT_CORE, …) and
// prlimit64(pid, RLIMIT_CORE, new, …) with a new limit with success,
// having done nothing: programs that lower the limit to 0 to keep their
// secrets out of core files (some stop when they cannot) go on, and the
// limit stays 1, which already means no dump. Any other call falls
// through with its number still loaded.
func coreLimitGuard(a syscallArch) []bpf.Instruction {
	perm := bpf.RetConstant{Val: retIgnored}
	return []bpf.Instruction{
		bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: a.setrlimit, SkipTrue: 4},
		bpf.LoadAbsolute{Off: offArg0, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: unix.RLIMIT_CORE, SkipTrue: 1},
		perm,
		bpf.RetConstant{Val: retAllow},

		bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: a.prlimit, SkipTrue: 8},
		bpf.LoadAbsolute{Off: offArg1, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: unix.RLIMIT_CORE, SkipTrue: 5},
		bpf.LoadAbsolute{Off: offArg2, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: 0, SkipTrue: 2},
		bpf.LoadAbsolute{Off: offArg2Hi, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: 0, SkipTrue: 1},
		perm,
		bpf.RetConstant{Val: retAllow},
	}
}

// I/O priority classes (the kernel's IOPRIO_CLASS_*, in bits 13 to 15 of
// ioprio_set's third argument).
const (
	ioprioClassShift = 13
	ioprioClassMask  = 7
	ioprioClassRT    = 1
	ioprioClassBE    = 2
)

// ioprioGuard refuses (EPERM) an ioprio_set that asks for the real-time
// or the best-effort I/O class: a process may take a best-effort
// priority for itself unprivileged, and the program, under SCHED_IDLE,
// has the idle I/O class, below planex's and the runner's best-effort
// one, which a program that asked for best-effort 0 went ahead of
// (before, ionice -c 2 -n 0 passed). The idle class and none (the
// policy's, idle again) pass. It returns only for ioprio_set.
func ioprioGuard(a syscallArch) []bpf.Instruction {
	return []bpf.Instruction{
		bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: a.ioprioSet, SkipTrue: 7},
		bpf.LoadAbsolute{Off: offArg2, Size: 4},
		bpf.ALUOpConstant{Op: bpf.ALUOpShiftRight, Val: ioprioClassShift},
		bpf.ALUOpConstant{Op: bpf.ALUOpAnd, Val: ioprioClassMask},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: ioprioClassRT, SkipTrue: 1},
		bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: ioprioClassBE, SkipTrue: 1},
		bpf.RetConstant{Val: retErrno(unix.EPERM)},
		bpf.RetConstant{Val: retAllow},
	}
}

// filterSyscalls puts this process, and all it will start, under the
// filter. It sets no_new_privs, which an unprivileged process needs to
// install one (set-id programs already run without their ids in the
// sandbox, whose user namespace maps no other user).
func filterSyscalls() error {
	archs, err := archsFor(runtime.GOARCH)
	if err != nil {
		return err
	}
	raw, err := bpf.Assemble(syscallFilter(archs))
	if err != nil {
		return fmt.Errorf("assembling the system call filter: %w", err)
	}
	prog := make([]unix.SockFilter, len(raw))
	for i, r := range raw {
		prog[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	// no_new_privs is a thread's; the filter's TSYNC gives it, with the
	// filter, to the process's other threads.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("setting no_new_privs for the system call filter: %w", err)
	}
	if _, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER,
		unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&fprog))); e != 0 {
		return fmt.Errorf("installing the system call filter: %w", e)
	}
	return nil
}
