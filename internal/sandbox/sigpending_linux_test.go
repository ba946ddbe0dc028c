//go:build linux

package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestRedTeamPendingSignalsShared: a contained program makes POSIX
// timers (timer_create) until the kernel refuses one. Each timer holds a
// queued signal the kernel counts against RLIMIT_SIGPENDING, and the
// count is kept per user in every user namespace up to the host's: a
// step's timers count against planex's user (root, or the runner user)
// there, so a program that made them to its limit (planex's own, about
// 96,000 here) left every other process of that user without a timer or
// a queued real-time signal (timer_create and sigqueue fail with EAGAIN)
// while it ran. The probe stops at half of planex's limit, not to take
// the user's whole count in the test; contained, a step makes at most a
// quarter, and planex's user outside sees no more than that taken.
func TestRedTeamPendingSignalsShared(t *testing.T) {
	t.Parallel()
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_SIGPENDING, &lim); err != nil {
		t.Fatal(err)
	}
	if lim.Cur == unix.RLIM_INFINITY || lim.Cur < 1024 {
		t.Skipf("planex's pending signal limit is %d: nothing to share", lim.Cur)
	}
	share := int64(lim.Cur) / stepCountShare
	before := pendingSignals(t)
	during := before
	line, stderr := runHolding(t, "timers:"+strconv.FormatUint(lim.Cur/2, 10), "timers: ", func() { during = pendingSignals(t) })
	made := probeCount(line)
	if made < 0 {
		t.Fatalf("the probe did not run:\n%s", stderr)
	}
	// Other processes of the user may queue a few signals meanwhile.
	const slack = 256
	if made > share {
		t.Errorf("a contained program made %d timers, more than a step's share %d of planex's user's %d pending signals", made, share, lim.Cur)
	}
	if grown := during - before; grown > share+slack {
		t.Errorf("while a contained program held %d timers, planex's user on the host had %d more signals pending (%d of %d), more than a step's share %d", made, grown, during, lim.Cur, share)
	}
}

// runHolding runs the machine counts probe (TestMachineCountsProbeHelper)
// what in a sandbox, calls whileHeld once it has printed its line
// starting with prefix, then closes its standard input (the probe lets
// go) and returns that line ("" when none came) and its standard error.
func runHolding(t *testing.T, what, prefix string, whileHeld func()) (line, stderr string) {
	t.Helper()
	s := newSandbox(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestMachineCountsProbeHelper$")
	cmd.Dir = "/"
	cmd.Env = []string{"PLANEX_COUNTS_PROBE=" + what}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errBuf bytes.Buffer
	cmd.Stderr = &errBuf
	cleanup, err := s.Wrap(cmd, Policy{ReadOnly: []string{filepath.Dir(os.Args[0])}})
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), prefix) {
			line = sc.Text()
			t.Log(line)
			whileHeld()
			break
		}
	}
	stdin.Close()
	_, _ = io.Copy(io.Discard, stdout)
	_ = cmd.Wait()
	return line, errBuf.String()
}

// probeCount is the number after the prefix of a probe's line ("timers:
// 12, then …"), or -1.
func probeCount(line string) int64 {
	_, v, ok := strings.Cut(line, ": ")
	if !ok {
		return -1
	}
	f := strings.Fields(v)
	if len(f) == 0 {
		return -1
	}
	n, err := strconv.ParseInt(strings.TrimSuffix(f[0], ","), 10, 64)
	if err != nil {
		return -1
	}
	return n
}

// pendingSignals reads how many signals this process's user has queued
// (SigQ in /proc/self/status), the count RLIMIT_SIGPENDING bounds.
func pendingSignals(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "SigQ:"); ok {
			n, _, _ := strings.Cut(strings.TrimSpace(v), "/")
			q, err := strconv.ParseInt(n, 10, 64)
			if err != nil {
				t.Fatalf("SigQ of %q: %v", line, err)
			}
			return q
		}
	}
	t.Fatal("no SigQ in /proc/self/status")
	return 0
}

// makeTimers makes up to most POSIX timers that deliver nothing
// (SIGEV_NONE), each holding a queued signal of the user's count, and
// returns how many it made and the error that stopped it (nil: none).
func makeTimers(most int) (int, error) {
	// struct sigevent: sigev_value (8 bytes), sigev_signo, sigev_notify,
	// then a union the kernel reads as 48 bytes.
	var ev [64]byte
	*(*int32)(unsafe.Pointer(&ev[12])) = 1 // SIGEV_NONE
	for n := range most {
		var id int32
		if _, _, e := unix.Syscall(unix.SYS_TIMER_CREATE, uintptr(unix.CLOCK_MONOTONIC), uintptr(unsafe.Pointer(&ev[0])), uintptr(unsafe.Pointer(&id))); e != 0 {
			return n, e
		}
	}
	return most, nil
}

// holdTimers is the timers probe: it makes them, says how many, and
// holds them until its standard input closes.
func holdTimers(most int) {
	n, err := makeTimers(most)
	fmt.Printf("timers: %d, then %v\n", n, err)
	os.Stdout.Sync()
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
	fmt.Println("held to the end")
}

// TestStepRlimits: a step's share of a limit counted per user is a
// quarter of planex's soft limit; one that is infinite or cannot be
// read is not shared.
func TestStepRlimits(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		cur  uint64
		err  error
		want map[string]int64
	}{
		{"planex's limit", 96365, nil, map[string]int64{"rlimit_memlock": 24091, "rlimit_sigpending": 24091, "rlimit_msgqueue": 24091}},
		{"infinite", unix.RLIM_INFINITY, nil, map[string]int64{}},
		{"unreadable", 0, unix.EPERM, map[string]int64{}},
	} {
		got := stepRlimits(func(res int, r *unix.Rlimit) error {
			r.Cur, r.Max = c.cur, c.cur
			return c.err
		})
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s: stepRlimits = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestRedTeamMessageQueueBytesShared: a contained program makes POSIX
// message queues (mq_open, the kernel's default size, about 80 KiB
// each) in its own IPC namespace until the kernel refuses one. Their
// bytes count against RLIMIT_MSGQUEUE per user in every user namespace
// up to planex's user on the host, and the sandbox capped the step's
// limit at 800 KiB, the kernel's default, which is that user's whole
// count: the step took it all, and planex's user outside (root, or the
// runner user) could open no queue while it ran. Contained, a step takes
// a quarter of planex's limit, and the user still opens one.
func TestRedTeamMessageQueueBytesShared(t *testing.T) {
	t.Parallel()
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_MSGQUEUE, &lim); err != nil {
		t.Fatal(err)
	}
	if lim.Cur == unix.RLIM_INFINITY || lim.Cur > 800<<10 || lim.Cur < 320<<10 {
		t.Skipf("planex's message queue limit is %d: the test needs one between 320 KiB and a step's cap, 800 KiB", lim.Cur)
	}
	hostQueue := fmt.Sprintf("planex-redteam-mq-%d", os.Getpid())
	if err := openQueue(hostQueue, false); err != nil {
		t.Skipf("this process cannot open a message queue: %v", err)
	}
	var hostErr error = errNotTried
	line, stderr := runHolding(t, "mqueues:64", "mqueues: ", func() { hostErr = openQueue(hostQueue, false) })
	made := probeCount(line)
	if made < 0 {
		t.Fatalf("the probe did not run:\n%s", stderr)
	}
	if hostErr != nil {
		t.Errorf("while a contained program held %d message queues, planex's user outside could open none: %v", made, hostErr)
	}
	if most := int64(lim.Cur) / stepCountShare / (80 << 10); made > most {
		t.Errorf("a contained program made %d message queues of about 80 KiB, more than a step's share of planex's user's %d bytes", made, lim.Cur)
	}
}

var errNotTried = errors.New("not tried")

// openQueue makes a POSIX message queue of the kernel's default size
// named name, and removes it again unless keep; it returns what refused
// it. A queue kept lives until its IPC namespace ends.
func openQueue(name string, keep bool) error {
	cname, err := unix.BytePtrFromString(name)
	if err != nil {
		return err
	}
	fd, _, e := unix.Syscall6(unix.SYS_MQ_OPEN, uintptr(unsafe.Pointer(cname)), unix.O_CREAT|unix.O_EXCL|unix.O_RDWR|unix.O_CLOEXEC, 0o600, 0, 0, 0)
	if e != 0 {
		return e
	}
	unix.Close(int(fd))
	if keep {
		return nil
	}
	_, _, _ = unix.Syscall(unix.SYS_MQ_UNLINK, uintptr(unsafe.Pointer(cname)), 0, 0)
	return nil
}

// holdQueues is the message queue probe: it makes up to most queues of
// the kernel's default size, says how many, and holds them until its
// standard input closes.
func holdQueues(most int) {
	n, err := 0, error(nil)
	for ; n < most; n++ {
		if err = openQueue(fmt.Sprintf("planex-probe-%d", n), true); err != nil {
			break
		}
	}
	fmt.Printf("mqueues: %d, then %v\n", n, err)
	os.Stdout.Sync()
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
	fmt.Println("held to the end")
}

// TestRedTeamPendingSignalsFromNestedNamespaces: as above, the program
// makes its timers from user namespaces of its own, one and two levels
// below its own (unshare -Ur), and from two processes at once, hoping
// that a new namespace's count starts again from nothing, or each
// process has a share. Neither: the kernel charges every level up to
// planex's user, each held to the limit its namespace was made with, and
// the step's own level was made with the step's share, so all together
// they make at most a share. This held before the test was written.
func TestRedTeamPendingSignalsFromNestedNamespaces(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("util-linux's unshare is not installed: no namespaces of the program's own")
	}
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_SIGPENDING, &lim); err != nil {
		t.Fatal(err)
	}
	if lim.Cur == unix.RLIM_INFINITY || lim.Cur < 1024 {
		t.Skipf("planex's pending signal limit is %d: nothing to share", lim.Cur)
	}
	share := int64(lim.Cur) / stepCountShare
	probe := "PLANEX_COUNTS_PROBE=timers:" + strconv.FormatUint(lim.Cur/2, 10) + " " + os.Args[0] + " -test.run=^TestMachineCountsProbeHelper$"
	// The first of the two, in a namespace of its own, holds its timers
	// until its input ends; the shell reads its line, runs the second,
	// and only then closes the first's input.
	script := "unshare -Ur unshare -Ur sh -c '" + probe + "' </dev/null; mkfifo /tmp/hold && " +
		"unshare -Ur sh -c '" + probe + "' </tmp/hold | { read -r line; echo \"$line\"; " + probe + " </dev/null; exec 3>&-; cat; } 3>/tmp/hold"
	s := newSandbox(t)
	out, err := run(t, s, Policy{ReadOnly: []string{filepath.Dir(os.Args[0])}}, "/", []string{"PATH=" + os.Getenv("PATH")}, script)
	var total []int64
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "timers: ") {
			total = append(total, probeCount(line))
		}
	}
	if len(total) != 3 {
		t.Fatalf("the probes did not all run (%v):\n%s", err, out)
	}
	if total[0] > share {
		t.Errorf("two user namespaces below its own, a contained program made %d timers, more than a step's share %d", total[0], share)
	}
	if total[1]+total[2] > share {
		t.Errorf("two contained processes, one in a user namespace of its own, held %d and %d timers at once, more than a step's share %d together", total[1], total[2], share)
	}
}
