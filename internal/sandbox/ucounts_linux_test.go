//go:build linux

package sandbox

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
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

// TestRedTeamStepsShareKernelCounts: each contained process is
// a sandbox of its own (every task's agent, each MCP server a
// repository's configuration names, each command a built-in agent runs),
// and each step's namespace allowed a quarter of planex's user's counts:
// four at once (--concurrency 4, or one agent with three MCP servers of
// the repository's) took all 128 inotify instances of root (or the
// runner user), and systemd, the runner and planex got none. The test
// starts six hogs at once from one Sandbox, as planex does, and the user
// outside must still make an instance; together they hold at most half
// of the user's count, what planex's steps share.
func TestRedTeamStepsShareKernelCounts(t *testing.T) {
	s := newSandbox(t)
	hostMax := readInt(t, "/proc/sys/fs/inotify/max_user_instances")
	const steps = 6
	type hog struct {
		held    int
		release func()
	}
	hogs := make(chan hog, steps)
	for range steps {
		go func() {
			held, release := holdInotify(t, s)
			hogs <- hog{held, release}
		}()
	}
	total := 0
	for range steps {
		h := <-hogs
		total += max(h.held, 0)
		defer h.release()
	}
	fd, err := syscall.InotifyInit1(syscall.IN_CLOEXEC)
	if err != nil {
		t.Errorf("while %d contained programs hold %d inotify instances, their user outside cannot make one: %v", steps, total, err)
	} else {
		syscall.Close(fd)
	}
	if total > hostMax/2 {
		t.Errorf("%d steps at once held %d inotify instances; want at most half of the user's %d", steps, total, hostMax)
	}
}

// holdInotify starts TestInotifyHogHelper contained by s and returns how
// many instances it holds once it says so (-1 when it said nothing) and
// what ends it: it holds them until its standard input closes.
func holdInotify(t *testing.T, s *Sandbox) (int, func()) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestInotifyHogHelper$")
	cmd.Dir = "/"
	cmd.Env = []string{"PLANEX_INOTIFY_HOG=until-stdin-closes"}
	stdin, err1 := cmd.StdinPipe()
	stdout, err2 := cmd.StdoutPipe()
	cleanup, err3 := s.Wrap(cmd, Policy{ReadOnly: []string{filepath.Dir(os.Args[0])}})
	if err := errors.Join(err1, err2, err3); err != nil {
		cancel()
		t.Error(err)
		return -1, func() {}
	}
	if err := cmd.Start(); err != nil {
		cancel()
		cleanup()
		t.Error(err)
		return -1, func() {}
	}
	release := func() {
		stdin.Close()
		_ = cmd.Wait()
		cleanup()
		cancel()
	}
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		var held int
		if _, err := fmt.Sscanf(sc.Text(), "held %d", &held); err == nil {
			go func() { _, _ = io.Copy(io.Discard, stdout) }()
			return held, release
		}
	}
	return -1, release
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
// many it holds, and keeps them a moment (or, told so, until its
// standard input closes).
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
	if os.Getenv("PLANEX_INOTIFY_HOG") == "until-stdin-closes" {
		_, _ = io.Copy(io.Discard, os.Stdin)
		return
	}
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

// TestCountBudget: steps at once get at most a quarter each and half in
// all (each at most half of what is left), a count of none stays none,
// and a step's share comes back once when it ends.
func TestCountBudget(t *testing.T) {
	t.Parallel()
	b := newCountBudget(map[string]int64{"max_inotify_instances": 32, "max_cgroup_namespaces": 0})
	var gives []func()
	var got []int64
	for range 8 {
		shares, give := b.take(nil)
		if shares["max_cgroup_namespaces"] != 0 {
			t.Errorf("a count of none was shared: %v", shares)
		}
		got = append(got, shares["max_inotify_instances"])
		gives = append(gives, give)
	}
	if want := []int64{32, 16, 8, 4, 2, 1, 1, 0}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("shares of eight steps at once: %v, want %v", got, want)
	}
	gives[1]()
	gives[1]()
	if shares, _ := b.take(nil); shares["max_inotify_instances"] != 8 {
		t.Errorf("after the second step's 16 came back (given twice), the next got %d, want 8", shares["max_inotify_instances"])
	}
}

// TestRedTeamStepsSharePids: every task's agent, MCP server and command
// is a sandbox of its own with the step's process limit (4096), and
// every process or thread of any takes one of the machine's process ids
// (kernel.pid_max, 32768 here and wherever the kernel's default is
// kept): eight fork bombs at once (--concurrency 4 with an MCP server
// each) took every id, and nothing else on the machine could start a
// process. The sandboxes of one planex share half of the ids: the test
// says the machine has 16384 (not to fork-bomb it) and holds three
// sandboxes at once, whose limits must add up to at most 8192.
func TestRedTeamStepsSharePids(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	s.pids = newPidBudget(16384, 0)
	var total int64
	for range 3 {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "sh", "-c", `grep '^Max processes' /proc/self/limits; read -r _`)
		cmd.Dir = "/"
		cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
		stdin, err1 := cmd.StdinPipe()
		stdout, err2 := cmd.StdoutPipe()
		cleanup, err3 := s.Wrap(cmd, Policy{})
		if err := errors.Join(err1, err2, err3); err != nil {
			t.Fatal(err)
		}
		defer cleanup()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer cmd.Wait()
		defer stdin.Close()
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		f := strings.Fields(line)
		if len(f) < 4 {
			t.Fatalf("no process limit read: %q", line)
		}
		n, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		t.Logf("a sandbox's process limit: %d", n)
		total += n
	}
	if total > 8192 {
		t.Errorf("three sandboxes at once may run %d processes together; want at most half of the machine's 16384 ids", total)
	}
}

// TestPidBudget: a sandbox's process limit is its own when the budget
// has room, its share when that is lower, never below the least limit,
// and untouched when turned off or when pid_max is not known.
func TestPidBudget(t *testing.T) {
	t.Parallel()
	b := newPidBudget(32768, 0) // 16384 for planex's sandboxes, 8192 at most each
	var got []int64
	for _, limit := range []int64{4096, 100000, 4096, 4096, Unlimited, 4096, 4096, 4096, 4096, 4096} {
		n, _ := b.shareProcesses(limit)
		got = append(got, n)
	}
	if want := []int64{4096, 6144, 3072, 1536, Unlimited, 768, 384, 192, 96, 48}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("process limits of sandboxes at once: %v, want %v", got, want)
	}
	for range 3 {
		b.shareProcesses(4096)
	}
	if n, _ := b.shareProcesses(4096); n != minProcesses {
		t.Errorf("with the budget spent, a limit of %d, want the least, %d", n, minProcesses)
	}
	if n, give := newPidBudget(0, 0).shareProcesses(4096); n != 4096 {
		t.Errorf("without pid_max the limit became %d", n)
	} else {
		give()
	}
}

// TestPidBudgetHoldsToTheUsersLimit: where planex's user's process limit
// is enforced, a sandbox's limit is also at most its share of that, and
// the live ones share half of it.
func TestPidBudgetHoldsToTheUsersLimit(t *testing.T) {
	t.Parallel()
	b := newPidBudget(4194304, 4096) // 2048 of the user's 4096 for planex's sandboxes
	var got []int64
	for range 4 {
		n, _ := b.shareProcesses(4096)
		got = append(got, n)
	}
	if want := []int64{1024, 512, 256, 128}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("process limits of sandboxes at once: %v, want %v", got, want)
	}
	if n, _ := newPidBudget(0, 400).shareProcesses(4096); n != 100 {
		t.Errorf("without pid_max, a limit of %d, want 100 (a quarter of the user's 400)", n)
	}
}

// TestEnforcedProcessLimit: planex's soft process limit counts only
// where the kernel holds its sandboxes to it.
func TestEnforcedProcessLimit(t *testing.T) {
	t.Parallel()
	limit := func(cur uint64, err error) func(int, *unix.Rlimit) error {
		return func(_ int, r *unix.Rlimit) error {
			r.Cur, r.Max = cur, unix.RLIM_INFINITY
			return err
		}
	}
	tests := []struct {
		name string
		root bool
		get  func(int, *unix.Rlimit) error
		want int64
	}{
		{"an ordinary user's limit", false, limit(4096, nil), 4096},
		{"the machine's root's, not enforced", true, limit(4096, nil), 0},
		{"infinite", false, limit(unix.RLIM_INFINITY, nil), 0},
		{"unreadable", false, limit(4096, errors.New("no")), 0},
	}
	for _, tt := range tests {
		if got := enforcedProcessLimit(tt.root, tt.get); got != tt.want {
			t.Errorf("%s: %d, want %d", tt.name, got, tt.want)
		}
	}
}

// TestIsMachineRoot: only root of the first user namespace is exempt
// from its process limit; root of a rootless container's is not.
func TestIsMachineRoot(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		uid    int
		uidMap string
		want   bool
	}{
		{"the machine's root", 0, "         0          0 4294967295\n", true},
		{"a rootless container's root", 0, "         0       1000          1\n         1     100000      65536\n", false},
		{"an ordinary user", 1001, "         0          0 4294967295\n", false},
		{"no map read", 0, "", false},
	}
	for _, tt := range tests {
		if got := isMachineRoot(tt.uid, []byte(tt.uidMap)); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}
