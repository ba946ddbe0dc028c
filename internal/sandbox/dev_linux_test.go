//go:build linux

package sandbox

import (
	"os"
	"strings"
	"testing"
)

// TestMinimalDev: the program looks for host devices (KVM, loop, vsock,
// consoles, disks, memory), tries to make or remount its way to one, and
// uses the few devices it is given.
func TestMinimalDev(t *testing.T) {
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
echo fd-ok > /dev/stdout`
	out, err := run(t, s, Policy{Writable: []string{work}}, work, []string{"PATH=" + os.Getenv("PATH")}, script)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	listing, rest, _ := strings.Cut(out, "\n")
	if got, want := strings.Join(sortedCopy(strings.Fields(listing)), " "), strings.Join(DevEntries(), " "); got != want {
		t.Errorf("/dev holds %q, want %q", got, want)
	}
	for _, bad := range []string{"OPENED", "MKNOD", "DEVTMPFS", "REMOUNTED", "PLANTED"} {
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
	for _, want := range []string{"null-ok", "full-ok", "urandom-ok", "zero-ok", "ptmx-ok", "shm-ok", "fd-ok"} {
		if !strings.Contains(rest, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
