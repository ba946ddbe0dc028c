//go:build linux

package sandbox

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestMinimalDev: the program looks for host devices (KVM, loop, vsock,
// consoles, disks, memory), tries to make or remount its way to one, and
// uses the few devices it is given.
func TestMinimalDev(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	work := t.TempDir()
	script := `ls -A /dev | tr '\n' ' '; echo
for d in kvm loop-control loop0 vsock tty0 tty1 console mem kmem port sda vda nvme0n1 fuse net/tun autofs btrfs-control kmsg; do
  if [ -e /dev/$d ] || (exec 3<>/dev/$d) 2>/dev/null; then echo "OPENED $d"; fi
done
mknod /dev/shm/kvm c 10 232 2>/dev/null && echo MKNOD
mknod ./kvm c 10 232 2>/dev/null && echo MKNOD-WORK
mount -t devtmpfs none /mnt 2>/dev/null && echo DEVTMPFS
mount -o remount,rw /dev 2>/dev/null && echo REMOUNTED
touch /dev/planted 2>/dev/null && echo PLANTED
ls /dev/pts | tr '\n' ' '; echo
echo x > /dev/null && echo null-ok
echo x 2>/dev/null > /dev/full || echo full-ok
[ "$(head -c 16 /dev/urandom | wc -c)" = 16 ] && echo urandom-ok
[ "$(head -c 16 /dev/zero | wc -c)" = 16 ] && echo zero-ok
(exec 3<>/dev/ptmx) && echo ptmx-ok
touch /dev/shm/x && echo shm-ok
echo fd-ok > /dev/stdout
read -r stat < /proc/$$/stat; set -- $stat; [ "$6" = "$$" ] && echo own-session
(exec 3<>/dev/tty) 2>/dev/null && echo TTY-OPENED; true`
	out, err := run(t, s, Policy{Writable: []string{work}}, work, []string{"PATH=" + os.Getenv("PATH")}, script)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	listing, rest, _ := strings.Cut(out, "\n")
	if got, want := strings.Join(sortedCopy(strings.Fields(listing)), " "), strings.Join(DevEntries(), " "); got != want {
		t.Errorf("/dev holds %q, want %q", got, want)
	}
	for _, bad := range []string{"OPENED", "TTY-OPENED", "MKNOD", "DEVTMPFS", "REMOUNTED", "PLANTED"} {
		if strings.Contains(rest, bad) {
			t.Errorf("%s inside the sandbox:\n%s", bad, out)
		}
	}
	if _, err := os.Stat(work + "/kvm"); err == nil {
		t.Error("a device node was made in the worktree")
	}
	if !strings.HasPrefix(rest, "ptmx \n") {
		t.Errorf("/dev/pts holds more than its own ptmx:\n%s", out)
	}
	for _, want := range []string{"null-ok", "full-ok", "urandom-ok", "zero-ok", "ptmx-ok", "shm-ok", "fd-ok", "own-session"} {
		if !strings.Contains(rest, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestNoControllingTerminal: planex runs in a terminal; the program
// tries to open it through /dev/tty (to push input into the user's shell
// with TIOCSTI) and fails: it runs in a session of its own.
func TestNoControllingTerminal(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal to stand for the user's: %v", err)
	}
	defer ptmx.Close()
	if err := unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(ptmx.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	pts, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer pts.Close()
	go io.Copy(io.Discard, ptmx)
	cmd := exec.Command("sh", "-c", `(exec 3<>/dev/tty) 2>/dev/null && echo TTY-OPENED; echo done`)
	cmd.Dir = "/"
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	cmd.Stdin = pts
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	// The sandbox's init gets the terminal as its controlling terminal,
	// as planex started from a shell would have it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	cleanup, err := s.Wrap(cmd, Policy{})
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "done") || strings.Contains(out.String(), "TTY-OPENED") {
		t.Errorf("the program opened the controlling terminal:\n%s", out.String())
	}
}

// TestRedTeamHostDeviceNodesOutOfReach: the host keeps device nodes
// outside /dev (a build chroot's or a container image's own /dev under
// /srv or /var/lib, made with mknod), which the sandbox's read-only view
// showed as they are: a node of the kernel's log (kmsg, 0666 as a chroot
// makes it) opened for writing there would put lines of the program's in
// the machine's kernel log, and one of KVM gave virtual machines. The
// test (as root, to make the nodes) plants kmsg and null nodes in a
// folder the view shows and has the program open them: neither opens.
func TestRedTeamHostDeviceNodesOutOfReach(t *testing.T) {
	t.Parallel()
	needRoot(t)
	dir := visibleDir(t)
	for _, n := range []struct {
		name         string
		major, minor uint32
	}{{"kmsg", 1, 11}, {"null", 1, 3}} {
		p := dir + "/" + n.name
		if err := unix.Mknod(p, unix.S_IFCHR|0o666, int(unix.Mkdev(n.major, n.minor))); err != nil {
			t.Skipf("cannot make a device node here: %v", err)
		}
		if err := os.Chmod(p, 0o666); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	s := newSandbox(t)
	// kmsg is opened for writing only: nothing is written to the log.
	out, err := run(t, s, Policy{}, "/", []string{"PATH=" + os.Getenv("PATH")},
		`(exec 3>`+dir+`/kmsg) 2>/dev/null && echo OPENED-kmsg; (exec 3<>`+dir+`/null) 2>/dev/null && echo OPENED-null; ls `+dir)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out, "kmsg") {
		t.Fatalf("the planted nodes are not in the program's view:\n%s", out)
	}
	if strings.Contains(out, "OPENED") {
		t.Errorf("a contained program opened a device node of the host's file system outside /dev:\n%s", out)
	}
}
