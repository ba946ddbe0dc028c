package proc

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The reaper's parts (WaitReaping, killDescendants) wait for and kill
// whatever is below the calling process. The reaper runs them as a
// process of its own; here they run in the test process, so these tests
// do not call t.Parallel: Go runs them while no parallel test (and so no
// other child of this process) is running.

// TestWaitReaping: the waited-for child's exit comes back as a shell
// reports it (its status, or 128 plus the signal), orphans that end
// meanwhile are reaped and left as no zombie, and a process with nothing
// to wait for gets ECHILD.
func TestWaitReaping(t *testing.T) {
	tests := []struct {
		script    string
		subreaper bool
		want      int
	}{
		{script: "exit 7", want: 7},
		{script: "exit 0", want: 0},
		{script: "kill -KILL $$", want: 128 + 9},
		{script: "kill -TERM $$", want: 128 + 15},
		// An orphan: the subshell's child outlives it and, with this
		// process a subreaper, is re-parented here and ends first.
		{script: `(sh -c 'exit 3' &); sleep 0.3; exit 5`, subreaper: true, want: 5},
	}
	for _, tc := range tests {
		if tc.subreaper {
			if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
				t.Fatal(err)
			}
		}
		cmd := exec.Command("sh", "-c", tc.script)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		code, err := WaitReaping(cmd.Process.Pid)
		if tc.subreaper {
			unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)
		}
		if err != nil || code != tc.want {
			t.Errorf("%q: WaitReaping = %d, %v; want %d", tc.script, code, err, tc.want)
		}
		if z := zombieChildren(t); len(z) > 0 {
			t.Errorf("%q: zombies left below this process: %v", tc.script, z)
		}
	}
	if code, err := WaitReaping(1 << 22); !errors.Is(err, syscall.ECHILD) {
		t.Errorf("WaitReaping with no child = %d, %v; want ECHILD", code, err)
	}
}

// zombieChildren lists this process's children that ended unreaped.
func zombieChildren(t *testing.T) []string {
	t.Helper()
	var out []string
	self := strconv.Itoa(os.Getpid())
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) >= 2 && f[0] == "Z" && f[1] == self {
			out = append(out, e.Name())
		}
	}
	return out
}

// comm is a process's command name, or "" once it is gone.
func comm(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	return strings.TrimSpace(string(b))
}

// TestDescendants: every live process below a pid is found, children
// before grandchildren, including one whose name holds ") " (the stat
// line's name is not split on spaces) and one that moved to a session
// of its own; a zombie is not.
func TestDescendants(t *testing.T) {
	odd := filepath.Join(t.TempDir(), "x) 1 2")
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(sleep)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(odd, b, 0o755); err != nil {
		t.Fatal(err)
	}
	// The first `sleep 0` ends at once and, its parent having become a
	// sleep that never waits, stays a zombie.
	cmd := exec.Command("sh", "-c", `"$ODD" 30 & (setsid sleep 31 & wait) & sleep 0 & exec sleep 32`)
	cmd.Env = append(os.Environ(), "ODD="+odd)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	defer func() {
		// The setsid sleep left the group: kill it while it is found.
		for _, p := range descendants(pid) {
			syscall.Kill(p, syscall.SIGKILL)
		}
		syscall.Kill(-pid, syscall.SIGKILL)
		cmd.Wait()
	}()
	// The processes start (and exec) on their own time: poll until the
	// tree is as built, or say how it differs.
	check := func() string {
		got := descendants(pid)
		var names []string
		for _, p := range got {
			names = append(names, comm(p))
		}
		// Children (the odd sleep, the subshell) in either order, then
		// the grandchild.
		if len(names) != 3 || names[2] != "sleep" {
			return fmt.Sprintf("descendants = %v %q, want the two children, then the subshell's sleep", got, names)
		}
		first := []string{names[0], names[1]}
		sort.Strings(first)
		if first[0] != "sh" || first[1] != "x) 1 2" {
			return fmt.Sprintf("children = %q, want the subshell and the oddly named sleep", first)
		}
		if z := zombiesOf(pid); len(z) != 1 || contains(got, z[0]) {
			return fmt.Sprintf("zombies %v with descendants %v: want one, not listed", z, got)
		}
		return ""
	}
	msg := check()
	for deadline := time.Now().Add(5 * time.Second); msg != "" && time.Now().Before(deadline); msg = check() {
		time.Sleep(10 * time.Millisecond)
	}
	if msg != "" {
		t.Error(msg)
	}
	if d := descendants(1 << 22); len(d) != 0 {
		t.Errorf("descendants of no process = %v", d)
	}
}

func zombiesOf(pid int) []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		s := string(b)
		if i := strings.LastIndexByte(s, ')'); i > 0 {
			f := strings.Fields(s[i+1:])
			if len(f) >= 2 && f[0] == "Z" && f[1] == strconv.Itoa(pid) {
				out = append(out, p)
			}
		}
	}
	return out
}

func contains(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// TestKillDescendants: everything below this process dies and is reaped,
// including processes that ignore SIGTERM or moved to a session of their
// own. As in the reaper, this process is a subreaper meanwhile, so the
// orphans of a killed process are its to reap.
func TestKillDescendants(t *testing.T) {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		t.Fatal(err)
	}
	defer unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)
	marker := filepath.Join(t.TempDir(), "late")
	cmd := exec.Command("sh", "-c", `trap '' TERM INT HUP; sleep 30 & setsid sleep 31 & (sleep 0.5; touch `+marker+`) & wait`)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	deadline := time.Now().Add(5 * time.Second)
	for len(descendants(pid)) < 3 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	below := append([]int{pid}, descendants(pid)...)
	if len(below) < 4 {
		t.Fatalf("the command's processes did not start: %v", below)
	}
	killDescendants()
	for _, p := range below {
		if err := syscall.Kill(p, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("process %d (%s) is still there: %v", p, comm(p), err)
		}
	}
	if d := descendants(os.Getpid()); len(d) != 0 {
		t.Errorf("processes left below this one: %v", d)
	}
	if z := zombieChildren(t); len(z) != 0 {
		t.Errorf("killed children left unreaped: %v", z)
	}
	// killDescendants reaped the command itself.
	if err := cmd.Wait(); err == nil {
		t.Error("the killed command's Wait reported success")
	}
	time.Sleep(700 * time.Millisecond)
	if _, err := os.Stat(marker); err == nil {
		t.Error("a killed background job still ran")
	}
}

// TestCloseInheritedKeepsOwnUse: a descriptor this process holds without
// close-on-exec (as a caller's `7<file` leaves it) reaches a program it
// starts until CloseInherited; afterwards the program cannot read it,
// while this process still can, and every descriptor above 2 is
// close-on-exec.
func TestCloseInheritedKeepsOwnUse(t *testing.T) {
	const secret = "inherited-secret-88"
	p := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(p, []byte(secret), 0o600); err != nil {
		t.Fatal(err)
	}
	fd, err := syscall.Open(p, syscall.O_RDONLY, 0) // no O_CLOEXEC
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	read := func() string {
		out, _ := exec.Command("sh", "-c", fmt.Sprintf("cat /proc/self/fd/%d 2>/dev/null || echo unreachable", fd)).Output()
		return strings.TrimSpace(string(out))
	}
	if got := read(); got != secret {
		t.Fatalf("before: the program read %q; the test shows nothing unless it reaches the descriptor", got)
	}
	if err := CloseInherited(); err != nil {
		t.Fatal(err)
	}
	if got := read(); got != "unreachable" {
		t.Errorf("after CloseInherited the program read %q", got)
	}
	buf := make([]byte, 64)
	if n, err := syscall.Pread(fd, buf, 0); err != nil || string(buf[:n]) != secret {
		t.Errorf("this process lost its own use of the descriptor: %q, %v", buf[:n], err)
	}
	ents, _ := os.ReadDir("/proc/self/fd")
	for _, e := range ents {
		n, _ := strconv.Atoi(e.Name())
		if n <= 2 {
			continue
		}
		flags, err := unix.FcntlInt(uintptr(n), unix.F_GETFD, 0)
		if err == nil && flags&unix.FD_CLOEXEC == 0 {
			t.Errorf("descriptor %d is not close-on-exec", n)
		}
	}
}
