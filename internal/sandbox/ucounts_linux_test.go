//go:build linux

package sandbox

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestKernelCountsBoundedPerStep: the kernel counts a user's inotify
// instances and watches, fanotify groups and namespaces against that
// user on the host, whichever user namespace makes them: a contained
// program charges planex's user (root, or the runner user), and one that
// makes inotify instances until it cannot (128 by default) left every
// other process of that user without one while it ran (systemd, the
// runner, planex itself, another step). The step's own namespace now
// allows it a quarter of the host's count of each; outside, the user
// still makes an instance while the program holds all it could get.
func TestKernelCountsBoundedPerStep(t *testing.T) {
	s := newSandbox(t)
	hostMax := readInt(t, "/proc/sys/fs/inotify/max_user_instances")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestInotifyHogHelper$")
	cmd.Dir = "/"
	cmd.Env = []string{"PLANEX_INOTIFY_HOG=1"}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cleanup, err := s.Wrap(cmd, Policy{ReadOnly: []string{filepath.Dir(os.Args[0])}})
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	sc := bufio.NewScanner(stdout)
	var held int
	for sc.Scan() {
		if _, err := fmt.Sscanf(sc.Text(), "held %d", &held); err == nil {
			break
		}
	}
	fd, err := syscall.InotifyInit1(syscall.IN_CLOEXEC)
	if err != nil {
		t.Errorf("while a contained program holds %d inotify instances, its user outside cannot make one: %v", held, err)
	} else {
		syscall.Close(fd)
	}
	if held == 0 || held > hostMax/4 {
		t.Errorf("the program held %d inotify instances; want some, at most a quarter of the host's %d", held, hostMax)
	}
}

func readInt(t *testing.T, p string) int {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if _, err := fmt.Sscan(strings.TrimSpace(string(b)), &n); err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	return n
}

// TestInotifyHogHelper makes inotify instances until it cannot, says how
// many it holds, and keeps them a moment.
func TestInotifyHogHelper(t *testing.T) {
	if os.Getenv("PLANEX_INOTIFY_HOG") == "" {
		t.Skip("the inotify hog of TestKernelCountsBoundedPerStep")
	}
	n := 0
	for ; n < 1<<16; n++ {
		if _, err := syscall.InotifyInit1(0); err != nil {
			break
		}
	}
	fmt.Printf("held %d\n", n)
	time.Sleep(2 * time.Second)
}

// TestStepCounts: a step gets a quarter of each maximum planex's
// namespace shows, counts the kernel lacks or cannot be read are left
// out, and the init writes only max_ names of its own folder.
func TestStepCounts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "max_inotify_instances"), "128\n", 0o644)
	writeFile(t, filepath.Join(dir, "max_user_namespaces"), "96365\n", 0o644)
	writeFile(t, filepath.Join(dir, "max_fanotify_groups"), "lots\n", 0o644)
	writeFile(t, filepath.Join(dir, "max_cgroup_namespaces"), "96365\n", 0o644)
	got := stepCounts(dir)
	if len(got) != 3 || got["max_inotify_instances"] != 32 || got["max_user_namespaces"] != 24091 || got["max_cgroup_namespaces"] != 0 {
		t.Errorf("stepCounts = %v", got)
	}
	out := filepath.Join(t.TempDir(), "user")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(out, "max_inotify_instances"), "2147483647\n", 0o644)
	writeFile(t, filepath.Join(out, "other"), "7", 0o644)
	capKernelCounts(out, map[string]int64{"max_inotify_instances": 32, "max_absent": 3, "../escape": 1, "other": 2})
	if b, _ := os.ReadFile(filepath.Join(out, "max_inotify_instances")); string(b) != "32" {
		t.Errorf("the cap written is %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "other")); string(b) != "7" {
		t.Errorf("a name not max_ was written: %q", b)
	}
	if n := names(out); len(n) != 2 || exists(filepath.Join(filepath.Dir(out), "escape")) {
		t.Errorf("files were made: %q", n)
	}
}
