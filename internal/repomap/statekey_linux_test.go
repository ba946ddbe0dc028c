package repomap

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/planexhq/planex/internal/repomap/repomaptest"
)

// TestStateKeyHostileFiles: an agent leaves, just before the key, a FIFO,
// links to /dev/zero, a 3 GiB sparse file and (as root) a device node
// among the files git lists. Their stamps are recent, so the key looks at
// contents, but only of regular files the map would read: it returns
// promptly instead of waiting on the pipe or reading without end, and
// changes when the planted files change.
func TestStateKeyHostileFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	repomaptest.InitRepo(t, dir, map[string]string{"app.py": "def main():\n    pass\n"})
	for _, name := range []string{"zero.py", "Makefile"} {
		if err := os.Symlink("/dev/zero", filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe.py"), 0o644); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.py")
	writeFile(t, dir, "big.py", "x = 1\n")
	if err := os.Truncate(big, 3<<30); err != nil {
		t.Fatal(err)
	}
	if os.Getuid() == 0 {
		if err := syscall.Mknod(filepath.Join(dir, "dev.py"), syscall.S_IFCHR|0o644, 1<<8|5); err != nil {
			t.Logf("no device node (%v)", err)
		}
	}
	ctx := context.Background()
	k := newStateKeyer(ctx, t, dir)
	type result struct {
		key string
		err error
	}
	keyWithin := func() string {
		t.Helper()
		done := make(chan result, 1)
		go func() {
			key, err := k.key(ctx)
			done <- result{key, err}
		}()
		select {
		case r := <-done:
			if r.err != nil {
				t.Fatal(r.err)
			}
			return r.key
		case <-time.After(30 * time.Second):
			t.Fatal("the key did not return within 30 s")
			return ""
		}
	}
	first := keyWithin()
	if err := os.Truncate(big, 2<<30); err != nil {
		t.Fatal(err)
	}
	if second := keyWithin(); second == first {
		t.Errorf("key %s did not change when the sparse file shrank", first)
	}
}

// TestStamperRawCallMatches: the stamper's fstatat made without the
// scheduler (raw) gives every kind of entry the stamp the ordinary call
// and a stat of the whole path give, a missing name and a name holding a
// NUL byte (which the kernel would cut short) included.
func TestStamperRawCallMatches(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir, "pkg/a.go", "package pkg\n")
	writeFile(t, dir, "pkg/b.py", "x = 1\n")
	if err := os.Symlink("a.go", filepath.Join(dir, "pkg", "link.go")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "pkg", "pipe.py"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "pkg", "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	names := []struct{ path, want string }{
		{"pkg/a.go", "regular"}, {"pkg/b.py", "regular"}, {"pkg/link.go", "link"}, {"pkg/pipe.py", "fifo"},
		{"pkg/sub", "dir"}, {"pkg/gone.go", "missing"}, {"pkg/a.go\x00.py", "missing"}, {"top.go", "missing"},
	}
	for _, raw := range []bool{false, true} {
		if raw && !haveRawFstatat {
			continue
		}
		st := newStamper(dir)
		st.raw = raw
		for _, n := range names {
			got := st.stamp(n.path)
			want := stamp{Missing: true}
			if !strings.ContainsRune(n.path, 0) {
				want = statStamp(filepath.Join(dir, n.path))
			}
			if got != want {
				t.Errorf("raw=%t %q (%s): stamp %+v, want %+v", raw, n.path, n.want, got, want)
			}
			if got.Missing != (n.want == "missing") || got.Regular != (n.want == "regular") {
				t.Errorf("raw=%t %q: stamp %+v, want a %s entry", raw, n.path, got, n.want)
			}
		}
		st.close()
	}
}

// TestLocalDiskMagic: only local disk and memory file systems take the
// raw stat call; a network or user-space file system, and one unknown,
// keep the scheduler's.
func TestLocalDiskMagic(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		magic int64
		want  bool
	}{
		{"ext4", unix.EXT4_SUPER_MAGIC, true},
		{"xfs", unix.XFS_SUPER_MAGIC, true},
		{"btrfs", unix.BTRFS_SUPER_MAGIC, true},
		{"tmpfs", unix.TMPFS_MAGIC, true},
		{"overlay", unix.OVERLAYFS_SUPER_MAGIC, true},
		{"nfs", unix.NFS_SUPER_MAGIC, false},
		{"fuse", unix.FUSE_SUPER_MAGIC, false},
		{"cifs", unix.CIFS_SUPER_MAGIC, false},
		{"unknown", 0x12345678, false},
	} {
		if got := localDiskMagic(c.magic); got != c.want {
			t.Errorf("%s: localDiskMagic = %t, want %t", c.name, got, c.want)
		}
	}
}

// TestRedTeamStampStopsAtALinkedFolder: a folder of the work tree
// replaced by a link (to a folder elsewhere, which could be on a network
// or user-space file system where a stat waits, and the raw call with
// it) after the key's record listed the files under it: a file named
// through the link is missing, as git status says, and nothing beyond
// the link is stamped. A root reached through a link of its own still
// stamps its files.
func TestRedTeamStampStopsAtALinkedFolder(t *testing.T) {
	t.Parallel()
	top, outside := t.TempDir(), t.TempDir()
	dir := filepath.Join(top, "repo")
	writeFile(t, dir, "pkg/a.go", "package pkg\n")
	writeFile(t, outside, "a.go", "package elsewhere\n")
	writeFile(t, outside, "sub/b.go", "package elsewhere\n")
	for link, to := range map[string]string{"lib": outside, "pkg/inner": outside} {
		if err := os.Symlink(to, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	viaLink := filepath.Join(top, "root-link")
	if err := os.Symlink(dir, viaLink); err != nil {
		t.Fatal(err)
	}
	names := []struct{ path, want string }{
		{"lib/a.go", "missing"}, {"lib/sub/b.go", "missing"}, {"pkg/inner/a.go", "missing"},
		{"pkg/inner/sub/b.go", "missing"}, {"lib", "link"}, {"pkg/a.go", "regular"},
	}
	for _, root := range []string{dir, viaLink} {
		for _, raw := range []bool{false, true} {
			if raw && !haveRawFstatat {
				continue
			}
			st := newStamper(root)
			st.raw = raw
			for _, n := range names {
				got := st.stamp(n.path)
				if got.Missing != (n.want == "missing") || got.Regular != (n.want == "regular") {
					t.Errorf("root %s raw=%t %q: stamp %+v, want a %s entry", root, raw, n.path, got, n.want)
				}
			}
			st.close()
		}
	}
}

// TestMountsUnder: a mount point strictly inside the root (escaped as
// the kernel writes a space) is found; the root itself, its parents and
// a sibling sharing its name's start are not.
func TestMountsUnder(t *testing.T) {
	t.Parallel()
	line := func(at string) string { return "36 35 98:0 / " + at + " rw,noatime shared:1 - fuse.sshfs host:/ rw\n" }
	for _, c := range []struct {
		name string
		info string
		want bool
	}{
		{"inside", line("/work/repo/sub"), true},
		{"deep inside", line("/work/repo/a/b/c"), true},
		{"escaped space", line(`/work/my\040repo/sub`), true},
		{"the root", line("/work/repo"), false},
		{"a parent", line("/work") + line("/"), false},
		{"a sibling", line("/work/repo2/sub"), false},
		{"short line", "36 35 98:0 /\n", false},
	} {
		roots := []string{"/work/repo", "/work/my repo"}
		if got := mountsUnder([]byte(c.info), roots); got != c.want {
			t.Errorf("%s: mountsUnder = %t, want %t", c.name, got, c.want)
		}
	}
}

// TestRedTeamMountInsideTheTreeTakesNoRawStat: a file system mounted on
// a folder of the work tree (an sshfs or FUSE mount a user or an agent
// run without the sandbox made under the repository) is stamped through
// its own stat, which may wait on its server: the stamper chose the raw
// call, which holds its processor while it waits, from the root's file
// system alone. With a mount inside the root, the ordinary call is made.
// A tmpfs mount stands in for the FUSE one (root only).
func TestRedTeamMountInsideTheTreeTakesNoRawStat(t *testing.T) {
	if !haveRawFstatat {
		t.Skip("no raw stat call on this architecture")
	}
	if os.Geteuid() != 0 {
		t.Skip("mounting a file system inside the tree needs root")
	}
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir, "pkg/a.go", "package pkg\n")
	if !localDiskFS(dir) {
		t.Skip("the temporary folder is not on a local disk file system")
	}
	if !newStamper(dir).raw {
		t.Fatal("the stamper takes no raw call on a local disk without a mount inside; nothing to test")
	}
	sub := filepath.Join(dir, "mnt")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("tmpfs", sub, "tmpfs", 0, "size=64k"); err != nil {
		t.Skipf("cannot mount here: %v", err)
	}
	defer func() {
		if err := unix.Unmount(sub, unix.MNT_DETACH); err != nil {
			t.Error(err)
		}
	}()
	st := newStamper(dir)
	defer st.close()
	if st.raw {
		t.Error("a mount inside the tree, and the stamper still takes the raw stat call for it")
	}
	if got := st.stamp("pkg/a.go"); !got.Regular {
		t.Errorf("pkg/a.go stamped %+v, want a regular file", got)
	}
}
