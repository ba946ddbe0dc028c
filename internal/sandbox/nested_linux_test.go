//go:build linux

package sandbox

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/planexhq/planex/internal/sandbox/sandboxtest"
	"golang.org/x/sys/unix"
)

// TestNestedNamespaceGainsNothing: the program makes user, mount and
// network namespaces of its own (unshare -Urmn), where it is root with
// every capability, and tries to use that: raise its hard limits, fork
// past the process limit, make the read-only file system writable again,
// and reach the host from a network it administers. None of it works:
// rlimits and the process count hold across nested namespaces (the
// kernel counts a nested namespace's processes against every parent's
// limit), the mounts are locked read-only, the covers over hidden
// folders and masked files neither come off nor stay behind in a bind or
// clone of the folder above them, and a new network is as empty as the
// step's. (Mounting over a folder in its own mount
// namespace changes only its own view.)
func TestNestedNamespaceGainsNothing(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("the attack is util-linux's unshare; not installed here")
	}
	if err := s.ProbeNetwork(context.Background()); err != nil {
		t.Fatalf("this machine makes network namespaces (CI too), yet: %v", err)
	}
	probe := probeBuild.Path(t)
	loop := sandboxtest.Listen(t, "tcp", "127.0.0.1:0")
	outside := t.TempDir()
	writeFile(t, filepath.Join(outside, "kept"), "original\n", 0o644)
	// A hidden folder and a masked file below it, whose covers the
	// nested namespace tries to take off or see past.
	if err := os.Mkdir(filepath.Join(outside, "hidden"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(outside, "hidden", "secret"), "nested-cover-secret\n", 0o644)
	writeFile(t, filepath.Join(outside, "masked"), "nested-cover-secret\n", 0o644)
	work := t.TempDir()
	p := Policy{Writable: []string{work}, ReadOnly: []string{filepath.Dir(probe), outside, filepath.Dir(os.Args[0])}, Limits: Limits{Processes: 48, FileSize: 1 << 20},
		Hide: []string{filepath.Join(outside, "hidden")}, Mask: []string{filepath.Join(outside, "masked")}}
	script := `unshare -Urmn sh -c '
id -u
ulimit -H -f unlimited 2>/dev/null && echo RAISED-FSIZE
ulimit -H -u unlimited 2>/dev/null && echo RAISED-NPROC
mount -o remount,rw / 2>/dev/null; mount -o remount,rw ` + outside + ` 2>/dev/null
echo tampered > ` + outside + `/kept 2>/dev/null && echo WROTE-OUTSIDE
PLANEX_MOUNT_PROBE=` + outside + ` ` + os.Args[0] + ` -test.run=^TestMountAPIProbeHelper$
ip link set lo up 2>/dev/null
` + probe + ` tcp ` + loop.Addr().String() + ` nested
n=0; i=0
while [ $i -lt 120 ]; do sleep 5 2>/dev/null & [ $? -eq 0 ] && n=$((n+1)); i=$((i+1)); done
set -- /proc/[0-9]*; echo procs=$#
'`
	out, err := run(t, s, p, work, []string{"PATH=" + os.Getenv("PATH")}, script)
	if strings.HasPrefix(out, "unshare:") {
		t.Logf("nested namespaces are refused here, which also holds: %s", out)
	}
	if !strings.Contains(out, "mount API probed") {
		t.Errorf("the new mount API probe did not run to its end:\n%s", out)
	}
	for _, bad := range []string{"RAISED-FSIZE", "RAISED-NPROC", "WROTE-OUTSIDE", "ok: pong", "REACHED", "nested-cover-secret"} {
		if strings.Contains(out, bad) {
			t.Errorf("from a nested namespace the program got %s:\n%s (%v)", bad, out, err)
		}
	}
	if got := loop.Got(); len(got) > 0 {
		t.Errorf("the host's loopback listener heard from the nested network: %q", got)
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "kept")); string(b) != "original\n" {
		t.Errorf("a read-only file was changed: %q", b)
	}
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(line, "procs="); ok {
			if n, _ := strconv.Atoi(v); n > 48+2 {
				t.Errorf("the nested namespace ran %d processes past the limit of 48:\n%s", n, out)
			}
		}
	}
	if !strings.Contains(out, "process limit 48 hit") {
		t.Errorf("the nested namespace's forks were not held at the step's process limit:\n%s", out)
	}
}

// TestMountAPIProbeHelper is a program of TestNestedNamespaceGainsNothing,
// run as root of its own user and mount namespaces: with the new mount
// API it clones the read-only folder named by PLANEX_MOUNT_PROBE
// (open_tree), clears the clone's read-only flag (mount_setattr),
// attaches it elsewhere (move_mount) and writes through it, and clears
// the flag of the folder's own mount. Then it tries to see past the
// covers below that folder (its hidden folder "hidden" and masked file
// "masked"): unmounting each (plainly and detached), and binding or
// cloning the folder without what is mounted below it. It prints REACHED
// for each step that let it write or read what a cover hides, then
// "mount API probed".
func TestMountAPIProbeHelper(t *testing.T) {
	dir := os.Getenv("PLANEX_MOUNT_PROBE")
	if dir == "" {
		t.Skip("a program of TestNestedNamespaceGainsNothing")
	}
	clear := &unix.MountAttr{Attr_clr: unix.MOUNT_ATTR_RDONLY}
	write := func(how, p string) {
		if err := os.WriteFile(p, []byte("tampered\n"), 0o644); err == nil {
			fmt.Printf("REACHED writing the read-only folder %s\n", how)
		}
	}
	if fd, err := unix.OpenTree(unix.AT_FDCWD, dir, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE); err == nil {
		if unix.MountSetattr(fd, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, clear) == nil {
			fmt.Println("REACHED clearing a clone's read-only flag")
		}
		write("through its clone", fmt.Sprintf("/proc/self/fd/%d/kept", fd))
		target, _ := os.MkdirTemp("", "clone-")
		if unix.MoveMount(fd, "", unix.AT_FDCWD, target, unix.MOVE_MOUNT_F_EMPTY_PATH) == nil {
			write("through its attached clone", filepath.Join(target, "kept"))
		}
	}
	if unix.MountSetattr(unix.AT_FDCWD, dir, unix.AT_RECURSIVE, clear) == nil {
		fmt.Println("REACHED clearing the folder's read-only flag")
	}
	write("directly", filepath.Join(dir, "kept"))
	probeCovers(dir)
	fmt.Println("mount API probed")
}

// probeCovers tries to see what the covers below dir hide (the hidden
// folder dir/hidden, the masked file dir/masked) from a mount namespace
// of the program's own: the kernel locks the mounts a less privileged
// namespace inherits together, so none comes off and no bind or clone
// leaves them behind.
func probeCovers(dir string) {
	read := func(how, p string) {
		if b, err := os.ReadFile(p); err == nil && len(b) > 0 {
			fmt.Printf("REACHED %s: %s", how, b)
		}
	}
	for _, cover := range []string{filepath.Join(dir, "hidden"), filepath.Join(dir, "masked")} {
		for _, flags := range []int{0, unix.MNT_DETACH} {
			if unix.Unmount(cover, flags) == nil {
				fmt.Printf("REACHED unmounting the cover of %s (flags %d)\n", cover, flags)
			}
		}
	}
	read("the hidden folder", filepath.Join(dir, "hidden", "secret"))
	read("the masked file", filepath.Join(dir, "masked"))
	if target, err := os.MkdirTemp("", "bind-"); err == nil {
		if unix.Mount(dir, target, "", unix.MS_BIND, "") == nil {
			read("a bind without what is below", filepath.Join(target, "hidden", "secret"))
			read("a bind without what is below", filepath.Join(target, "masked"))
		}
	}
	if fd, err := unix.OpenTree(unix.AT_FDCWD, dir, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC); err == nil {
		read("a clone without what is below", fmt.Sprintf("/proc/self/fd/%d/hidden/secret", fd))
		read("a clone without what is below", fmt.Sprintf("/proc/self/fd/%d/masked", fd))
	}
}

// TestInitIsOutOfReach: the program looks at and pokes the sandbox's
// first process (planex re-executed, which holds the forwarded ports'
// listeners and runs as a more privileged user than the program): its
// descriptors, root, memory map, environment, and signals that would stop or
// end it. Nothing is readable and the step runs on to its end.
func TestInitIsOutOfReach(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	sockDir := t.TempDir()
	sandboxtest.Listen(t, "unix", filepath.Join(sockDir, "egress.sock"))
	p := Policy{Forward: []Forward{{Port: 3128, Socket: filepath.Join(sockDir, "egress.sock")}}}
	script := `ls /proc/1/fd/ 2>/dev/null | grep . && echo FDS-LISTED
ls /proc/1/root/ 2>/dev/null | grep . && echo ROOT-LISTED
cat /proc/1/environ 2>/dev/null | grep -q . && echo ENVIRON-READ
grep -q . /proc/1/maps 2>/dev/null && echo MAPS-READ
for fd in 0 1 2 3 4 5 6 7 8 9; do (: </proc/1/fd/$fd) 2>/dev/null && echo FD-OPENED; done
kill -STOP 1 2>/dev/null; kill -TERM 1 2>/dev/null; kill -KILL 1 2>/dev/null
sleep 0.2; echo survived`
	out, err := run(t, s, p, "/", []string{"PATH=" + os.Getenv("PATH")}, script)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, bad := range []string{"FDS-LISTED", "ROOT-LISTED", "ENVIRON-READ", "MAPS-READ", "FD-OPENED"} {
		if strings.Contains(out, bad) {
			t.Errorf("the program reached the init: %s\n%s", bad, out)
		}
	}
	if !strings.HasSuffix(out, "survived\n") {
		t.Errorf("the step did not run to its end after signalling the init:\n%s", out)
	}
}

// asOrdinaryUser runs the named tests of this package's test binary as
// uid and gid 65534, as planex runs in the Action (the runner user):
// root's sandbox gives the program an id of its own, an ordinary user's
// shares the user's, and attacks that need the same uid show only so.
// The binary is copied where that user may run it. Skips unless root.
func asOrdinaryUser(t *testing.T, run string) string {
	t.Helper()
	return asOrdinaryUserIn(t, run, -1)
}

// asOrdinaryUserIn is asOrdinaryUser with the test binary started in the
// cgroup cgroupFD opens (none when it is negative).
func asOrdinaryUserIn(t *testing.T, run string, cgroupFD int) string {
	t.Helper()
	return asUser(t, run, cgroupFD, 65534)
}

// asUser is asOrdinaryUserIn as uid and gid id, which need not be an
// account's: a test that spends what the kernel counts per user takes
// an id no other test shares.
func asUser(t *testing.T, run string, cgroupFD, id int) string {
	t.Helper()
	needRoot(t)
	dir, err := os.MkdirTemp("/srv", "planex-asuser-")
	if err != nil {
		t.Skipf("needs a folder outside /tmp for the copied test binary: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	b, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "sandbox.test")
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^("+run+")$", "-test.v")
	cmd.Dir = dir
	probe := filepath.Join(dir, "netprobe")
	if b, err = os.ReadFile(probeBuild.Path(t)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(probe, b, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "TMPDIR=/tmp", "PLANEX_TEST_NETPROBE=" + probe}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(id), Gid: uint32(id)}}
	if cgroupFD >= 0 {
		cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, cgroupFD
	}
	out, err := cmd.CombinedOutput()
	if strings.Contains(string(out), "sandbox unavailable") {
		// An AppArmor policy (Ubuntu 24.04's) or a sysctl that keeps user
		// namespaces from unprivileged users.
		t.Skipf("an ordinary user cannot make a sandbox on this machine:\n%s", out)
	}
	if err != nil {
		t.Errorf("as an ordinary user: %v\n%s", err, out)
	}
	for _, name := range strings.Split(run, "|") {
		if !strings.Contains(string(out), "--- PASS: "+name+" ") {
			t.Errorf("as an ordinary user, %s did not pass:\n%s", name, out)
		}
	}
	return string(out)
}

// TestAttacksAsOrdinaryUser runs attacks whose outcome depends on
// planex's uid with planex an ordinary user: TestInitIsOutOfReach, whose
// init then shares the program's uid (before, the program listed the
// init's descriptors and its SIGTERM to the init came back to it, ending
// the step), the keyrings of that uid, the core limit, perf events and
// the network's ways out, the inotify instances counted against
// that user, the kernel interfaces past the namespaces, the machine's
// terminals, the step's System V semaphores and the memory no
// process's resident size counts.
func TestAttacksAsOrdinaryUser(t *testing.T) {
	t.Parallel()
	asOrdinaryUser(t, "TestInitIsOutOfReach|TestUserKeyringsOutOfReach|TestUserKeysReadByID|TestCoreHandlerAndPerfOutOfReach|TestNetworkContainment|TestKernelCountsBoundedPerStep|TestKernelInterfacesOutOfReach|TestSysVCapsRaisedEndTheStep|TestSysVInNestedIPCNamespace|TestRedTeamPtysBounded|TestRedTeamSysVSemaphoresBounded|TestRedTeamMemoryNoProcessCounts|TestRedTeamLockedSharedMemoryShared|TestRedTeamEpollWatchesShared|TestRedTeamProgramStaysIdle|TestRedTeamProgramLowersNoOutsideProcess|TestRedTeamMappedFilesFillTheTable")
}

// TestRedTeamFreshProcAndSys: the program makes namespaces of its own
// (unshare -Urm, and -Urmpf with a PID namespace it owns) and mounts a
// fresh procfs and sysfs there, where it holds every capability, hoping
// for a /proc without hidepid (the init's entries, or the host's
// processes) or a sysfs of the host's network. Either the kernel refuses
// the mount or it shows only the step's own: no process outside the
// step (this test's binary, planex's init) and no interface of the host.
func TestRedTeamFreshProcAndSys(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("the attack is util-linux's unshare; not installed here")
	}
	mounts := `mkdir -p /tmp/p /tmp/s
mount -t proc proc /tmp/p 2>/dev/null && echo MOUNTED-PROC && for d in /tmp/p/[0-9]*; do tr "\0" " " < $d/cmdline 2>/dev/null; echo; done
mount -t sysfs sysfs /tmp/s 2>/dev/null && echo MOUNTED-SYS && ls /tmp/s/class/net`
	script := "unshare -Urm sh -c '" + mounts + "'; unshare -Urmpf sh -c '" + mounts + "'"
	out, err := run(t, s, Policy{}, "/", []string{"PATH=/usr/bin:/bin"}, script)
	t.Logf("%v\n%s", err, out)
	bad := []string{initArg0, filepath.Base(os.Args[0])}
	ifaces, _ := net.Interfaces()
	for _, i := range ifaces {
		if i.Name != "lo" {
			bad = append(bad, i.Name)
		}
	}
	for _, b := range bad {
		if strings.Contains(out, b) {
			t.Errorf("a fresh procfs or sysfs of the program's showed %q, from outside the step:\n%s", b, out)
		}
	}
}
