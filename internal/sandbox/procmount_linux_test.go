//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestRedTeamOtherProcMountHidden: the host has a procfs mounted
// somewhere besides /proc (a container given the host's with -v
// /proc:/host/proc, a monitoring agent's /host/proc, a chroot's). The
// sandbox mounts a /proc of the step's own processes, but the other
// one showed every process of the machine: their command lines, and,
// to a program of the same uid as planex (planex run as an ordinary
// user), planex's own environment with its token. Every procfs mount
// but /proc is now covered. (The test mounts one as root under /srv
// and starts a process outside whose command line the program looks
// for.)
func TestRedTeamOtherProcMountHidden(t *testing.T) {
	t.Parallel()
	needRoot(t)
	s := newSandbox(t)
	dir, err := os.MkdirTemp("/srv", "planex-procmount-")
	if err != nil {
		t.Skipf("needs a folder under /srv: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	host := filepath.Join(dir, "host", "proc")
	if err := os.MkdirAll(host, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("proc", host, "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		t.Skipf("cannot mount a procfs here: %v", err)
	}
	t.Cleanup(func() { unix.Unmount(host, unix.MNT_DETACH) })
	outside := exec.Command("sh", "-c", "sleep 60; :", "loot-outside-cmdline")
	if err := outside.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { outside.Process.Kill(); outside.Wait() })
	pid := strconv.Itoa(outside.Process.Pid)
	// Readable to any uid outside the sandbox: the attack is real. (The
	// command line may be read before the process's exec is seen.)
	var b []byte
	for range 100 {
		if b, err = os.ReadFile(filepath.Join(host, pid, "cmdline")); err == nil && strings.Contains(string(b), "loot-outside-cmdline") {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !strings.Contains(string(b), "loot-outside-cmdline") {
		t.Fatalf("the planted procfs does not show the outside process: %v %q", err, b)
	}
	devices := filepath.Join(dir, "host", "dev")
	if err := os.MkdirAll(devices, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("devtmpfs", devices, "devtmpfs", unix.MS_NOSUID|unix.MS_NOEXEC, ""); err != nil {
		t.Skipf("cannot mount a devtmpfs here: %v", err)
	}
	t.Cleanup(func() { unix.Unmount(devices, unix.MNT_DETACH) })
	for _, network := range []Network{NetworkContained, NetworkOpen} {
		out, err := run(t, s, Policy{Network: network}, "/", nil,
			"tr '\\0' ' ' < "+filepath.Join(host, pid, "cmdline")+"; echo \"listed: $(ls "+host+" | head -3 | tr '\\n' ' ')end\"; "+
				"echo \"devices: $(ls "+devices+" | head -3 | tr '\\n' ' ')end\"")
		if err != nil && !strings.Contains(out, "listed: ") {
			t.Fatalf("%s: %v\n%s", network, err, out)
		}
		if strings.Contains(out, "loot-outside-cmdline") || !strings.Contains(out, "listed: end") || !strings.Contains(out, "devices: end") {
			t.Errorf("%s network: the program read the machine's processes or devices through another procfs or devtmpfs:\n%s", network, out)
		}
	}
}

// TestOtherProcMounts: which mount table lines are a procfs or devtmpfs
// elsewhere than /proc and /dev (a device node's mount is listed; the
// sandbox covers folders only).
func TestOtherProcMounts(t *testing.T) {
	t.Parallel()
	mountinfo := strings.Join([]string{
		"22 1 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw",
		"23 22 0:22 / /proc/sys/fs/binfmt_misc rw,relatime shared:13 - autofs systemd-1 rw",
		"40 1 0:21 / /host/proc rw,relatime - proc proc rw",
		"41 1 0:21 / /srv/a\\040b/proc rw,relatime shared:20 master:1 - proc none rw,hidepid=2",
		"42 22 0:45 / /proc/self/fake rw - proc proc rw",
		"43 1 0:46 / /sys rw - sysfs sysfs rw",
		"44 1 0:5 / /dev rw,nosuid - devtmpfs udev rw,size=4012k",
		"45 44 0:5 /null /dev/null rw - devtmpfs udev rw",
		"46 1 0:5 / /host/dev rw - devtmpfs udev rw",
		"47 1 0:5 /kvm /srv/kvm rw - devtmpfs udev rw",
		"garbage line",
	}, "\n")
	got := otherProcMounts(mountinfo)
	want := []string{"/host/proc", "/srv/a b/proc", "/host/dev", "/srv/kvm"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("otherProcMounts = %q, want %q", got, want)
	}
}

// TestOtherProcMountsInALargeTable: a machine with tens of thousands of
// mounts (a Kubernetes node's pods, snaps) has a mount table past 4 MiB,
// and a procfs mounted after that point (/host/proc, mounted last) was
// not read, so not covered: a program listed the machine's processes
// through it. The whole table is read, a line at a time.
func TestOtherProcMountsInALargeTable(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for i := 0; b.Len() < 5<<20; i++ {
		fmt.Fprintf(&b, "%d 1 0:%d / /var/lib/kubelet/pods/%08d/volumes/kubernetes.io~projected/kube-api-access rw,relatime - tmpfs tmpfs rw,size=4096k\n", 100+i, 50+i, i)
	}
	// A line past the bound on one line (skipped), then the procfs.
	fmt.Fprintf(&b, "99998 1 0:99 / /srv/%s rw - proc proc rw\n", strings.Repeat("x", maxMountLine))
	b.WriteString("99999 1 0:21 / /host/proc rw,relatime - proc proc rw")
	if got := readOtherProcMounts(strings.NewReader(b.String())); strings.Join(got, "|") != "/host/proc" {
		t.Errorf("a procfs mounted past the table's first %d MiB: got %q, want it covered", b.Len()>>20, got)
	}
}
