//go:build linux

package gitrepo

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// coarseTimesDir mounts a small ext4 file system whose inodes are 128
// bytes, so its files' times are kept in whole seconds (as on ext3, on an
// ext4 made that way, on FAT and on many network file systems), and
// returns a folder on it. It needs root, a loop device and mkfs.ext4: the
// test is skipped, saying which, where one is missing.
func coarseTimesDir(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a file system with whole-second file times needs root (CI runs as root)")
	}
	mkfs, err := exec.LookPath("mkfs.ext4")
	if err != nil {
		t.Skipf("no mkfs.ext4 to make a file system with whole-second file times: %v", err)
	}
	base := t.TempDir()
	img, mnt := filepath.Join(base, "fs.img"), filepath.Join(base, "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("truncate", "-s", "8M", img).CombinedOutput(); err != nil {
		t.Fatalf("truncate: %v\n%s", err, out)
	}
	if out, err := exec.Command(mkfs, "-q", "-F", "-I", "128", img).CombinedOutput(); err != nil {
		t.Fatalf("mkfs.ext4: %v\n%s", err, out)
	}
	if out, err := exec.Command("mount", "-o", "loop", img, mnt).CombinedOutput(); err != nil {
		t.Skipf("no loop mount here (a container without loop devices): %v\n%s", err, out)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(mnt, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmounting %s: %v", mnt, err)
		}
	})
	return mnt
}

// TestRedTeamDriverAddedWithinTheSameSecond: on a file system that keeps
// file times in whole seconds, a same-size rewrite of .git/config (a
// clean filter's name swapped for another's) made in the second planex
// last scanned the config kept the file's size, inode, modification and
// change times, so planex reused its remembered scan and left the new
// filter on: git ran the writer's program with planex's environment.
// Such a file's times tell nothing within a second, so its scan is not
// remembered.
func TestRedTeamDriverAddedWithinTheSameSecond(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(coarseTimesDir(t), "repo")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"config", "user.name", "Test"}, {"config", "user.email", "test@example.com"}} {
		mustGit(t, dir, args...)
	}
	e := newEvil(t)
	prog := e.prog("late-clean")
	cfg := filepath.Join(dir, ".git", "config")
	appendFile(t, filepath.Join(dir, ".gitattributes"), "*.txt filter=late\n")
	appendFile(t, filepath.Join(dir, "a.txt"), "one\n")
	ctx := context.Background()
	r, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	r.TempDir = t.TempDir()
	// Start early in a second, so the write, planex's call and the
	// rewrite all fall in it with time to spare.
	for tries := 0; ; tries++ {
		now := time.Now()
		if now.Nanosecond() < 300e6 && now.Nanosecond() > 150e6 {
			break
		}
		if tries > 40 {
			t.Fatal("no quiet start of a second within 2 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	start := time.Now().Unix()
	appendFile(t, cfg, "[filter \"safe\"]\n\tclean = "+prog+"\n")
	if _, err := r.Git(ctx, "", "add", "--", "a.txt"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(cfg, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte(strings.Replace(string(b), `"safe"`, `"late"`, 1)), 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	appendFile(t, filepath.Join(dir, "a.txt"), "two\n")
	if _, err := r.Git(ctx, "", "add", "--", "a.txt"); err != nil {
		t.Fatal(err)
	}
	if end := time.Now().Unix(); end != start {
		t.Skipf("the machine was too slow to fit the attack in one second (%d s): nothing shown", end-start)
	}
	e.assertNothingRan()
	// The attack was live: git left to itself runs the filter.
	appendFile(t, filepath.Join(dir, "a.txt"), "three\n")
	cmd := exec.Command("git", "add", "--", "a.txt")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git add: %v\n%s", err, out)
	}
	if len(e.ran()) == 0 {
		t.Error("the planted filter does not run even without planex's protection; the test proves nothing")
	}
}

// TestCoarseTimes: which pairs of file times are taken for a file
// system's coarse ones.
func TestCoarseTimes(t *testing.T) {
	t.Parallel()
	at := func(sec, nsec int64) time.Time { return time.Unix(sec, nsec) }
	for _, c := range []struct {
		name         string
		mtime, ctime time.Time
		want         bool
	}{
		{"whole seconds", at(10, 0), at(12, 0), true},
		{"FAT's two seconds and a change time of hundredths", at(10, 0), at(11, 20e6), true},
		{"nanoseconds", at(10, 123456789), at(11, 987654321), false},
		{"a modification time set to a whole second, the change time fine", at(10, 0), at(11, 5), false},
		{"a change time on a whole second, the modification time fine", at(10, 7), at(11, 0), false},
	} {
		if got := coarseTimes(c.mtime, c.ctime); got != c.want {
			t.Errorf("%s: coarseTimes = %v, want %v", c.name, got, c.want)
		}
	}
}
