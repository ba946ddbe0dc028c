//go:build unix

package proc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestRun(t *testing.T) {
	if err := Run(context.Background(), exec.Command("sh", "-c", "exit 0")); err != nil {
		t.Fatalf("exit 0: %v", err)
	}
	var ee *exec.ExitError
	if err := Run(context.Background(), exec.Command("sh", "-c", "exit 3")); !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Fatalf("exit 3: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := Run(ctx, exec.Command("sh", "-c", "sleep 30 & sleep 30")); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("timeout: %v", err)
	}
	if time.Since(start) > 10*time.Second {
		t.Fatal("the group was not killed promptly")
	}
}

func TestBackgroundChildrenDoNotOutliveTheCommand(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "late")
	// The command exits at once; its background child would write the
	// marker a moment later if it were still alive.
	if err := Run(context.Background(), exec.Command("sh", "-c", "(sleep 0.3; touch "+marker+") &")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(600 * time.Millisecond)
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a background child survived its command")
	}
}

// TestCommandDiesWithAKilledParent SIGKILLs a process that runs a command
// through Run and checks that nothing of the command outlives it: not the
// command, not a child it left in the background, not one that moved to
// a session of its own.
func TestCommandDiesWithAKilledParent(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the reaper is Linux's")
	}
	dir := t.TempDir()
	helper := exec.Command(os.Args[0], "-test.run=TestRunHelper")
	helper.Env = append(os.Environ(), "PLANEX_PROC_HELPER="+dir)
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	pids := waitPids(t, dir, helper, "fg", "bg", "setsid")
	// The command's parent is the reaper, and says so.
	if comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", ppid(pids[0]))); strings.TrimSpace(string(comm)) != "planex-reaper" {
		t.Errorf("the command's parent is %q, not the reaper", comm)
	}
	helper.Process.Signal(syscall.SIGKILL)
	helper.Wait()
	assertDead(t, pids)
}

// TestBackgroundChildrenDieWhenTheCommandIsCancelled: a cancelled command
// loses everything it started, also what left its process group.
func TestBackgroundChildrenDieWhenTheCommandIsCancelled(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the reaper is Linux's")
	}
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- Run(ctx, helperCommand(dir)) }()
	pids := waitPids(t, dir, nil, "fg", "bg", "setsid")
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("Run = %v", err)
	}
	assertDead(t, pids)
}

// helperCommand starts a foreground sleep, a background one and one in a
// session of its own, and writes their pids to dir.
func helperCommand(dir string) *exec.Cmd {
	return exec.Command("sh", "-c", `cd "$1"
(sleep 300 & echo $! > bg.tmp; mv bg.tmp bg)
setsid sleep 300 & echo $! > setsid.tmp; mv setsid.tmp setsid
echo $$ > fg.tmp; mv fg.tmp fg
sleep 300`, "sh", dir)
}

func waitPids(t *testing.T, dir string, helper *exec.Cmd, names ...string) []int {
	t.Helper()
	var pids []int
	for _, name := range names {
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			b, _ := os.ReadFile(filepath.Join(dir, name))
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				pids = append(pids, pid)
				break
			}
			if time.Now().After(deadline) {
				if helper != nil {
					helper.Process.Kill()
				}
				t.Fatalf("the command never wrote %s", name)
			}
		}
	}
	return pids
}

func assertDead(t *testing.T, pids []int) {
	t.Helper()
	for _, pid := range pids {
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			if !alive(pid) {
				break
			}
			if time.Now().After(deadline) {
				syscall.Kill(pid, syscall.SIGKILL)
				t.Errorf("process %d outlived its command", pid)
				break
			}
		}
	}
}

// ppid is pid's parent.
func ppid(pid int) int {
	b, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 2 {
		return 0
	}
	n, _ := strconv.Atoi(f[1])
	return n
}

// alive reports whether pid is a live process (not gone, not a zombie).
func alive(pid int) bool {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(f) > 0 && f[0] != "Z"
}

// TestRunHelper runs helperCommand through Run until it is killed (for
// the test above).
func TestRunHelper(t *testing.T) {
	dir := os.Getenv("PLANEX_PROC_HELPER")
	if dir == "" {
		t.Skip("helper process only")
	}
	Run(context.Background(), helperCommand(dir))
}
