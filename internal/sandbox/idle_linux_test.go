//go:build linux

package sandbox

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestRedTeamProgramStaysIdle: where planex makes no CPU cgroup for a
// step (an ordinary user's planex, a runner service's cgroup holding the
// runner, planex and the step), each busy process of the program weighed
// as much as planex's threads and the runner's, so a few hundred of them
// left those a few thousandths of the CPU. The program runs under
// SCHED_IDLE, and tries to leave it for an ordinary, batch or real-time
// policy, for SCHED_DEADLINE, to set the reset-on-fork flag (which
// resets a real-time or deadline parent's children, and with SCHED_IDLE
// itself then forks a child), to lower its nice value, from a session of
// its own, a child and as root of a user namespace of its own (unshare
// -Ur): every process stays SCHED_IDLE. It also asks for a best-effort
// or real-time I/O priority (ioprio_set, ionice), which a process may
// take for itself unprivileged: SCHED_IDLE's I/O class is idle, below
// planex's and the runner's best-effort one, and stays so.
func TestRedTeamProgramStaysIdle(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"chrt", "renice", "setsid", "ionice"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("the attack uses util-linux's %s; not installed here", tool)
		}
	}
	s := newSandbox(t)
	escape := `chrt -o -p 0 $$ 2>/dev/null; chrt -b -p 0 $$ 2>/dev/null; chrt -f -p 1 $$ 2>/dev/null; chrt -r -p 1 $$ 2>/dev/null; chrt -d -T 1000000 -P 10000000 -D 10000000 -p 0 $$ 2>/dev/null; chrt -R -o -p 0 $$ 2>/dev/null; chrt -R -i -p 0 $$ 2>/dev/null; chrt -p 0; renice -n -5 -p $$ >/dev/null 2>&1; renice -n 0 -p $$ >/dev/null 2>&1; chrt -p $$`
	script := "echo start; chrt -p $$\n" +
		"echo self; " + escape + "\n" +
		"echo session; setsid sh -c '" + escape + "'\n" +
		"echo child; sh -c 'chrt -p $$'\n" +
		"echo started-other; chrt -o 0 sh -c 'chrt -p $$' 2>&1\n" +
		"echo io; ionice -c 1 -n 0 -p $$ 2>/dev/null; ionice -c 2 -n 0 -p $$ 2>/dev/null; echo io-class: $(ionice -p $$); ionice -c 2 -n 0 sh -c 'echo io-class: $(ionice -p $$)' 2>&1\n"
	if _, err := exec.LookPath("unshare"); err == nil {
		script += "echo userns; unshare -Ur sh -c '" + escape + "'\n"
	}
	out, err := run(t, s, Policy{}, "/", []string{"PATH=" + os.Getenv("PATH")}, script)
	t.Logf("%v\n%s", err, out)
	policies := 0
	for _, line := range strings.Split(out, "\n") {
		if !strings.Contains(line, "scheduling policy") {
			continue
		}
		policies++
		if !strings.Contains(line, "SCHED_IDLE") {
			t.Errorf("a process of the program left SCHED_IDLE: %q\n%s", line, out)
		}
	}
	classes := 0
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, "io-class:") {
			continue
		}
		classes++
		if strings.Contains(line, "best-effort") || strings.Contains(line, "realtime") {
			t.Errorf("a process of the program left the idle I/O class SCHED_IDLE gives: %q\n%s", line, out)
		}
	}
	if classes < 1 {
		t.Errorf("the program reported no I/O class:\n%s", out)
	}
	if policies < 5 {
		t.Errorf("the program reported %d policies, want at least 5:\n%s", policies, out)
	}
}

// TestRedTeamProgramLowersNoOutsideProcess: a process may lower the CPU
// and I/O priority of every process of its user at once (setpriority
// and ioprio_set by user). Where the program has planex's user (an
// ordinary user's planex, TestAttacksAsOrdinaryUser), it tries so to
// make planex, the runner and every other process of that user nice 19
// and idle for I/O, below its own share: the call reaches only the
// processes its PID namespace shows, and planex's (this test's) stay as
// they were.
func TestRedTeamProgramLowersNoOutsideProcess(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"renice", "ionice", "id"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("the attack uses %s; not installed here", tool)
		}
	}
	nice, err := unix.Getpriority(unix.PRIO_PROCESS, 0)
	if err != nil {
		t.Fatal(err)
	}
	ioprio := func() uintptr {
		p, _, _ := unix.Syscall(unix.SYS_IOPRIO_GET, 1, 0, 0) // IOPRIO_WHO_PROCESS, this process
		return p
	}
	io := ioprio()
	s := newSandbox(t)
	out, err := run(t, s, Policy{}, "/", []string{"PATH=" + os.Getenv("PATH")},
		"renice -n 19 -u $(id -u) 2>&1; ionice -c 3 -u $(id -u) 2>&1; echo done")
	t.Logf("%v\n%s", err, out)
	if !strings.Contains(out, "done") {
		t.Fatalf("the program did not run to its end:\n%s", out)
	}
	after, err := unix.Getpriority(unix.PRIO_PROCESS, 0)
	if err != nil {
		t.Fatal(err)
	}
	if after != nice {
		t.Errorf("planex's priority went from %d to %d (getpriority's 20-nice) after the program reniced its user", nice, after)
	}
	if now := ioprio(); now != io {
		t.Errorf("planex's I/O priority went from %#x to %#x after the program set its user's", io, now)
	}
}
