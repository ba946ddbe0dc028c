//go:build linux

package sandbox

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// cgroupAttack is the program of TestDelegatedCgroupAttack: it makes
// user, mount and cgroup namespaces of its own, mounts the cgroup2 file
// system there (rooted at the cgroup it runs in, planex's) and writes
// what it may. cgroup.kill and cgroup.freeze would end or stop planex
// and every process beside it; the attack writes two of the cgroup's
// own limits instead, which show the same right without ending the test.
const cgroupAttack = `unshare -UrmC sh -c '
mkdir -p /tmp/cg
mount -t cgroup2 none /tmp/cg 2>&1 && echo MOUNTED-CGROUP2
echo 3 > /tmp/cg/cgroup.max.depth && echo WROTE-MAX-DEPTH
echo 0 > /tmp/cg/cgroup.max.descendants && echo WROTE-MAX-DESCENDANTS
'; echo attacked`

// TestRedTeamDelegatedCgroupOutOfReach: planex run by an ordinary user
// in a cgroup that user owns, as a desktop session's systemd --user gives
// each terminal and application. The contained program made a cgroup
// namespace of its own, mounted the cgroup2 file system and wrote the
// cgroup planex runs in: cgroup.kill there ends planex and the user's
// shell and editor beside it. The step's user namespace now allows no
// cgroup namespace, so no cgroup file system is mounted and the cgroup's
// files stay as they were. Needs root to make the cgroup, give it to
// the ordinary user and start the test binary there.
func TestRedTeamDelegatedCgroupOutOfReach(t *testing.T) {
	t.Parallel()
	needRoot(t)
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("the attack is util-linux's unshare; not installed here")
	}
	root := cgroup2Mount(t)
	cg, err := os.MkdirTemp(root, "planex-test-")
	if err != nil {
		t.Skipf("cannot make a cgroup under %s (a container's read-only cgroup tree): %v", root, err)
	}
	t.Cleanup(func() { os.Remove(cg) })
	delegate(t, cg, 65534)
	fd, err := syscall.Open(cg, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	out := asOrdinaryUserIn(t, "TestDelegatedCgroupAttack", fd)
	if !strings.Contains(out, "the program ran in a cgroup delegated to it") {
		t.Fatalf("the attack did not run in the delegated cgroup:\n%s", out)
	}
	for name, want := range map[string]string{"cgroup.max.depth": "max", "cgroup.max.descendants": "max"} {
		if b, _ := os.ReadFile(filepath.Join(cg, name)); strings.TrimSpace(string(b)) != want {
			t.Errorf("the contained program set planex's cgroup's %s to %q", name, strings.TrimSpace(string(b)))
		}
	}
}

// TestDelegatedCgroupAttack is TestRedTeamDelegatedCgroupOutOfReach's
// attack, run as an ordinary user in a cgroup that user owns; it skips
// anywhere else (in the package's own run).
func TestDelegatedCgroupAttack(t *testing.T) {
	t.Parallel()
	cg := ownCgroup(t)
	s := newSandbox(t)
	out, err := run(t, s, Policy{}, "/", []string{"PATH=" + os.Getenv("PATH")}, cgroupAttack)
	t.Logf("the program ran in a cgroup delegated to it (%s): %v\n%s", cg, err, out)
	if !strings.Contains(out, "attacked") {
		t.Fatalf("the attack did not run to its end: %v\n%s", err, out)
	}
	for _, bad := range []string{"MOUNTED-CGROUP2", "WROTE-MAX-DEPTH", "WROTE-MAX-DESCENDANTS"} {
		if strings.Contains(out, bad) {
			t.Errorf("the contained program reached planex's cgroup: %s\n%s", bad, out)
		}
	}
}

// ownCgroup returns the folder of the cgroup2 hierarchy this process
// runs in, skipping unless it is an ordinary user's own.
func ownCgroup(t *testing.T) string {
	t.Helper()
	if os.Getuid() == 0 {
		t.Skip("the attack of TestRedTeamDelegatedCgroupOutOfReach, which runs it as an ordinary user")
	}
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		t.Skipf("no cgroups: %v", err)
	}
	var rel string
	for _, line := range strings.Split(string(b), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			rel = p
		}
	}
	dir := filepath.Join(cgroup2Mount(t), rel)
	var st syscall.Stat_t
	if rel == "" || syscall.Stat(dir, &st) != nil || int(st.Uid) != os.Getuid() {
		t.Skip("the attack of TestRedTeamDelegatedCgroupOutOfReach, which runs it in a cgroup of the user's own")
	}
	return dir
}

// cgroup2Mount returns where the cgroup2 hierarchy is mounted (the
// whole /sys/fs/cgroup, or /sys/fs/cgroup/unified beside version 1's
// controllers), or skips.
func cgroup2Mount(t *testing.T) string {
	t.Helper()
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		t.Skipf("no mount table: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		for i, f := range fields {
			if f == "-" && i+1 < len(fields) && fields[i+1] == "cgroup2" && len(fields) > 4 {
				return fields[4]
			}
		}
	}
	t.Skip("no cgroup2 hierarchy is mounted here")
	return ""
}

// delegate gives the cgroup cg and its files to uid, as systemd does
// for a unit with Delegate=yes.
func delegate(t *testing.T, cg string, uid int) {
	t.Helper()
	entries, err := os.ReadDir(cg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(cg, uid, uid); err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if err := os.Chown(filepath.Join(cg, e.Name()), uid, uid); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRedTeamCloneIntoAnotherCgroup: planex run by an ordinary user in
// a cgroup of a tree that user owns (a desktop session's systemd --user
// gives each terminal and application a cgroup of its own, side by
// side). The cgroup files the sandbox shows are read-only, but clone3's
// CLONE_INTO_CGROUP asks only for the right to write the target's
// cgroup.procs, not for a writable mount: a contained program started a
// child in a sibling cgroup (another application's), out of the limits
// (memory.max, pids.max) set on planex's. The step's programs now get
// ENOSYS from clone3, as from a kernel without it (glibc, Rust and the
// rest fall back to clone), so no child starts elsewhere. Needs root
// to make the cgroups and a cgroup2 hierarchy mounted outside /tmp.
func TestRedTeamCloneIntoAnotherCgroup(t *testing.T) {
	t.Parallel()
	needRoot(t)
	root := cgroup2Mount(t)
	parent, err := os.MkdirTemp(root, "planex-test-")
	if err != nil {
		t.Skipf("cannot make a cgroup under %s (a container's read-only cgroup tree): %v", root, err)
	}
	t.Cleanup(func() {
		os.Remove(filepath.Join(parent, "planex"))
		os.Remove(filepath.Join(parent, "other"))
		os.Remove(parent)
	})
	for _, sub := range []string{"planex", "other"} {
		if err := os.Mkdir(filepath.Join(parent, sub), 0o755); err != nil {
			t.Fatal(err)
		}
		delegate(t, filepath.Join(parent, sub), 65534)
	}
	delegate(t, parent, 65534)
	fd, err := syscall.Open(filepath.Join(parent, "planex"), syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	out := asOrdinaryUserIn(t, "TestCloneIntoCgroupAttack", fd)
	if !strings.Contains(out, "the program ran in a cgroup delegated to it") {
		t.Fatalf("the attack did not run in the delegated cgroup:\n%s", out)
	}
	if strings.Contains(out, "STARTED-IN-THE-OTHER-CGROUP") {
		t.Errorf("a contained program started a child in another cgroup of the user's:\n%s", out)
	}
}

// TestCloneIntoCgroupAttack is TestRedTeamCloneIntoAnotherCgroup's
// attack, run as an ordinary user in a cgroup that user owns beside
// another ("other"); it skips anywhere else (in the package's own run).
func TestCloneIntoCgroupAttack(t *testing.T) {
	t.Parallel()
	cg := ownCgroup(t)
	other := filepath.Join(filepath.Dir(cg), "other")
	s := newSandbox(t)
	out, err := run(t, s, Policy{ReadOnly: []string{filepath.Dir(os.Args[0])}}, "/", []string{"PLANEX_COUNTS_PROBE=intocgroup:" + other},
		os.Args[0]+" -test.run=^TestMachineCountsProbeHelper$")
	t.Logf("the program ran in a cgroup delegated to it (%s): %v\n%s", cg, err, out)
	if !strings.Contains(out, "intocgroup: ") || strings.Contains(out, "not found") {
		t.Fatalf("the attack did not run to its end: %v\n%s", err, out)
	}
}

// startInCgroup is the program of TestCloneIntoCgroupAttack: it starts
// cat /proc/self/cgroup in the cgroup at dir (clone3 with
// CLONE_INTO_CGROUP, as Go's UseCgroupFD does) and says where the child
// ran.
func startInCgroup(dir string) {
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		fmt.Printf("intocgroup: open %s: %v\n", dir, err)
		return
	}
	defer syscall.Close(fd)
	cmd := exec.Command("/bin/cat", "/proc/self/cgroup")
	cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: fd}
	out, err := cmd.CombinedOutput()
	fmt.Printf("intocgroup: %v %s\n", err, out)
	if err == nil && strings.Contains(string(out), "/"+filepath.Base(dir)) {
		fmt.Println("STARTED-IN-THE-OTHER-CGROUP")
	}
}
