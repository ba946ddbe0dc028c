//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestKernelInterfacesOutOfReach: a program tries what the kernel offers
// a process past its namespaces: raise the machine's and its own step's
// kernel limits (the file table, the step's inotify cap) through
// /proc/sys, drop the page cache, raise its
// cgroup's limits, read kernel memory and debug files, load a module or
// a new kernel, make a userfaultfd (fixed: it was made), a secret
// memory area (memfd_secret; fixed: it was made) or a BPF map
// (fixed: refused by the filter, not only by the kernel's setting), read
// the kernel's log (fixed likewise: read where dmesg_restrict is 0), open
// a file system's root by a file handle (open_by_handle_at), and reach the sandbox's init (planex re-executed, which
// holds the relays) by process_vm_readv, ptrace and pidfd_getfd. None
// works, and the values read outside afterwards are unchanged. All but
// userfaultfd held before this test was written. (The step's System V caps an
// ordinary user's program may raise: TestSysVCapsRaisedEndTheStep; its
// own PID namespace's pid_max it may set, which bounds only itself.)
func TestKernelInterfacesOutOfReach(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	fileMax, _ := os.ReadFile("/proc/sys/fs/file-max")
	out, err := run(t, s, Policy{ReadOnly: []string{filepath.Dir(os.Args[0])}}, "/", []string{"PLANEX_KERNEL_PROBE=1"},
		os.Args[0]+" -test.run=^TestKernelProbeHelper$")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out, "probed") {
		t.Fatalf("the probe did not run to its end:\n%s", out)
	}
	if strings.Contains(out, "REACHED") {
		t.Errorf("a contained program reached the kernel past its sandbox:\n%s", out)
	}
	if now, _ := os.ReadFile("/proc/sys/fs/file-max"); string(now) != string(fileMax) {
		t.Errorf("the machine's file-max is now %q (was %q)", now, fileMax)
	}
}

// TestKernelProbeHelper is the program of TestKernelInterfacesOutOfReach:
// it prints REACHED and what for each attempt that worked.
func TestKernelProbeHelper(t *testing.T) {
	if os.Getenv("PLANEX_KERNEL_PROBE") == "" {
		t.Skip("the program of TestKernelInterfacesOutOfReach")
	}
	for _, w := range []struct{ path, value string }{
		{"/proc/sys/fs/file-max", "9999999"},
		{"/proc/sys/vm/drop_caches", "3"},
		{"/proc/sys/user/max_inotify_instances", "100000"},
		{"/sys/fs/cgroup/pids.max", "max"},
		{"/sys/fs/cgroup/memory.max", "max"},
		{"/sys/fs/cgroup/memory/memory.limit_in_bytes", "-1"},
		{"/sys/kernel/mm/transparent_hugepage/enabled", "never"},
	} {
		if err := os.WriteFile(w.path, []byte(w.value), 0); err == nil {
			fmt.Printf("REACHED writing %s\n", w.path)
		}
	}
	for _, r := range []string{"/proc/kcore", "/proc/1/mem", "/proc/1/environ", "/sys/kernel/debug/tracing/trace", "/sys/kernel/tracing/trace", "/dev/mem", "/dev/kmsg"} {
		if f, err := os.Open(r); err == nil {
			b := make([]byte, 16)
			if n, _ := f.Read(b); n > 0 {
				fmt.Printf("REACHED reading %s\n", r)
			}
			f.Close()
		}
	}
	if err := unix.InitModule([]byte("\x7fELF"), ""); err == nil {
		fmt.Println("REACHED init_module")
	}
	if err := unix.DeleteModule("planex_none", 0); err == nil {
		fmt.Println("REACHED delete_module")
	}
	if _, _, e := unix.Syscall6(unix.SYS_KEXEC_LOAD, 0, 0, 0, 0, 0, 0); e == 0 {
		fmt.Println("REACHED kexec_load")
	}
	// UFFD_USER_MODE_ONLY (1), which needs no privilege: a fault
	// handler of the program's own that holds the kernel mid-copy,
	// widening the race a kernel exploit needs.
	if fd, _, e := unix.Syscall(unix.SYS_USERFAULTFD, 1|unix.O_CLOEXEC, 0, 0); e == 0 {
		fmt.Printf("REACHED userfaultfd (%d)\n", fd)
	}
	// A secret memory area (memfd_secret, 447 on every architecture
	// that has it), whose pages the kernel takes out of its own direct
	// map: each splits the huge pages the kernel maps all memory with,
	// and they are not joined again when it is freed, so a step left the
	// whole machine's kernel slower on the TLB for good. Whatever the
	// kernel's secretmem setting, the answer must be the filter's.
	if fd, _, e := unix.Syscall(447, 0, 0, 0); e != unix.ENOSYS {
		fmt.Printf("REACHED memfd_secret: made %d, or the kernel answered (%v), not the filter\n", int(fd), e)
	}
	// An array map, which an unprivileged process may make where
	// kernel.unprivileged_bpf_disabled is 0. Whatever that setting, the
	// answer must be the filter's (ENOSYS), not the kernel's (EPERM).
	attr := [5]uint32{unix.BPF_MAP_TYPE_ARRAY, 4, 8, 1, 0}
	if fd, _, e := unix.Syscall(unix.SYS_BPF, unix.BPF_MAP_CREATE, uintptr(unsafe.Pointer(&attr[0])), unsafe.Sizeof(attr)); e != unix.ENOSYS {
		fmt.Printf("REACHED bpf: made map %d, or the kernel answered (%v), not the filter\n", fd, e)
	}
	// The kernel's log (syslog(2), SYSLOG_ACTION_READ_ALL), which every
	// process reads where kernel.dmesg_restrict is 0: the machine's
	// devices, other jobs' crashes and OOM kills, a firewall's logged
	// packets. Whatever that setting, the answer must be the filter's
	// (ENOSYS), not the kernel's (EPERM).
	if n, err := unix.Klogctl(3, make([]byte, 4096)); !errors.Is(err, unix.ENOSYS) {
		fmt.Printf("REACHED syslog: read %d bytes of the kernel's log, or the kernel answered (%v), not the filter\n", n, err)
	}
	// The "shocker" escape: a file handle of the root of the file
	// system holding / (taken by name here; on ext4 a forged one of inode
	// 2 works as well), opened with open_by_handle_at, is that file
	// system's root whatever covers the program's view. The call needs
	// CAP_DAC_READ_SEARCH in the machine's own user namespace.
	if h, _, err := unix.NameToHandleAt(unix.AT_FDCWD, "/", 0); err == nil {
		if mnt, err := unix.Open("/", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0); err == nil {
			if fd, err := unix.OpenByHandleAt(mnt, h, unix.O_RDONLY|unix.O_CLOEXEC); err == nil {
				fmt.Printf("REACHED open_by_handle_at (%d)\n", fd)
			}
			unix.Close(mnt)
		}
	}
	buf := make([]byte, 64)
	local := []unix.Iovec{{Base: &buf[0], Len: uint64(len(buf))}}
	remote := []unix.RemoteIovec{{Base: uintptr(unsafe.Pointer(&buf[0])), Len: len(buf)}}
	if _, err := unix.ProcessVMReadv(1, local, remote, 0); err == nil {
		fmt.Println("REACHED process_vm_readv of the init")
	}
	if err := unix.PtraceAttach(1); err == nil {
		fmt.Println("REACHED ptrace of the init")
	}
	if pfd, err := unix.PidfdOpen(1, 0); err == nil {
		for fd := range 16 {
			if got, err := unix.PidfdGetfd(pfd, fd, 0); err == nil {
				fmt.Printf("REACHED the init's descriptor %d (as %d)\n", fd, got)
			}
		}
	}
	fmt.Println("probed")
}
