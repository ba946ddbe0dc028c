//go:build linux

package sandbox

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/planexhq/planex/internal/sandbox/sandboxtest"
)

// parkScript is the malicious program of
// TestRedTeamParkedNamespaceDiesWithTheStep: in an IPC namespace of its
// own (a user namespace with it) it makes a System V segment of argv[1]
// bytes and touches every page, then parks a descriptor of the namespace
// in a Unix socket's queue, with the socket's own two ends (a cycle no
// process holds), and exits: no process is in the namespace, so the
// init's System V guard, which reads the namespaces the step's processes
// are in, does not see it, and the open-files guard counts no descriptor
// in flight.
const parkScript = `
import ctypes, os, socket, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.shmget.argtypes = [ctypes.c_int, ctypes.c_size_t, ctypes.c_int]
libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
libc.shmat.restype = ctypes.c_void_p
libc.shmdt.argtypes = [ctypes.c_void_p]
size = int(sys.argv[1])
if libc.unshare(0x10000000 | 0x08000000) != 0:
    print("unshare refused", ctypes.get_errno()); sys.exit(0)
shm = libc.shmget(0, size, 0o1600)
addr = libc.shmat(shm, None, 0)
if shm < 0 or addr in (None, ctypes.c_void_p(-1).value):
    print("no segment", ctypes.get_errno()); sys.exit(0)
ctypes.memset(addr, 1, size)
libc.shmdt(addr)
ns = os.open("/proc/self/ns/ipc", os.O_RDONLY)
a, b = socket.socketpair()
socket.send_fds(a, [b"x"], [ns, a.fileno(), b.fileno()])
os.close(ns)
print("parked", flush=True)
`

// shmem is the machine's shared memory in bytes (/proc/meminfo's Shmem):
// System V segments' pages count there.
func shmem(t *testing.T) int64 {
	t.Helper()
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "Shmem:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no Shmem in /proc/meminfo")
	return 0
}

// TestRedTeamParkedNamespaceDiesWithTheStep: what a step leaves behind
// where no process of it is must not outlive it. The program keeps an
// IPC namespace holding a 512 MiB segment alive by nothing but a
// descriptor parked in a Unix socket's queue (parkScript), so neither the
// System V guard nor the open-files guard sees it while the step runs
// (docs/security.md says so); then the step ends. Every process of the
// step is gone (the PID namespace's init ended), so are their sockets
// and what was in flight in them, and with the last reference the
// namespace and its segment: the machine's shared memory falls back.
func TestRedTeamParkedNamespaceDiesWithTheStep(t *testing.T) {
	// A system python3: the program runs as an ordinary user, and a
	// home's (pyenv's) is hidden from it.
	python := "/usr/bin/python3"
	if _, err := os.Stat(python); err != nil {
		t.Skip("the malicious program is a python3 script; no /usr/bin/python3 here")
	}
	s := newSandbox(t)
	const size = 512 << 20
	work := t.TempDir()
	script := filepath.Join(work, "park.py")
	writeFile(t, script, parkScript, 0o644)
	before := shmem(t)
	during := make(chan int64, 1)
	go func() {
		// Shared memory while the step still runs, after the park.
		for i := 0; i < 100; i++ {
			if b, _ := os.ReadFile(filepath.Join(work, "out")); strings.Contains(string(b), "parked") {
				during <- shmem(t)
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
		during <- 0
	}()
	out, err := run(t, s, Policy{Writable: []string{work}}, work, []string{"PATH=/usr/bin:/bin"},
		fmt.Sprintf("%s park.py %d > out 2>&1; cat out; sleep 1", python, size))
	held := <-during
	if strings.Contains(out, "unshare refused") {
		t.Skipf("this machine lets no contained program make a user namespace of its own, which the attack needs:\n%s", out)
	}
	if !strings.Contains(out, "parked") {
		t.Fatalf("the program could not park its namespace, so the test shows nothing (%v):\n%s", err, out)
	}
	if held-before < size/2 {
		t.Fatalf("shared memory grew by %d MiB only while the segment was parked, so the test shows nothing", (held-before)>>20)
	}
	var after int64
	for i := 0; i < 30; i++ {
		if after = shmem(t); after-before < size/4 {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Errorf("the step ended, yet the machine holds %d MiB more shared memory than before it (%d MiB while it ran): the parked namespace outlived the step",
		(after-before)>>20, (held-before)>>20)
}

// outliveScript is the malicious program of
// TestRedTeamNothingOutlivesTheStep, tagged TAG (sleep's argument), NS
// the file it lists the namespaces it made in. Each line tries another
// way to outlive the step: a double fork into a session of its own, a
// stopped process, a nested PID namespace (with a user, mount and
// network namespace, a tmpfs mounted there holding a file open), a
// child subreaper adopting an orphan, a zombie left unreaped under a
// sleeping parent, and descriptors of a nested namespace, a memfd, an
// eventfd and a pidfd parked in a Unix socket cycle no process holds.
const outliveScript = `
for n in user mnt pid ipc net uts cgroup; do readlink /proc/self/ns/$n >> NS; done
(setsid sleep TAG </dev/null >/dev/null 2>&1 &) &
sleep TAG </dev/null >/dev/null 2>&1 & kill -STOP $!
unshare -Urpfmn sh -c 'for n in user mnt pid net; do readlink /proc/self/ns/$n; done >> NS
mount -t tmpfs t /mnt && exec 3>/mnt/held; exec sleep TAG' </dev/null >/dev/null 2>&1 &
/usr/bin/python3 -c '
import ctypes, os, socket, time
libc = ctypes.CDLL(None, use_errno=True)
libc.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
if os.fork() == 0:
    if os.fork() == 0:
        os.execvp("sleep", ["sleep", "TAG"])
    os._exit(0)
if os.fork() == 0:
    os._exit(0)  # a zombie: its parent never waits
if libc.unshare(0x10000000 | 0x08000000 | 0x40000000) == 0:  # user, ipc, net
    with open("NS", "a") as f:
        for n in ("user", "ipc", "net"):
            f.write(os.readlink("/proc/self/ns/" + n) + "\n")
    fds = [os.open("/proc/self/ns/" + n, os.O_RDONLY) for n in ("user", "ipc", "net")]
    fds.append(os.memfd_create("parked"))
    fds.append(libc.eventfd(0, 0))
    pid = os.fork()
    if pid == 0:
        os.execvp("sleep", ["sleep", "TAG"])
    fds.append(os.pidfd_open(pid))
    a, b = socket.socketpair()
    socket.send_fds(a, [b"x"], fds + [a.fileno(), b.fileno()])
    for fd in fds:
        os.close(fd)
    a.detach(); b.detach()
print("all parked", flush=True)
os.execvp("sleep", ["sleep", "TAG"])
' &
sleep 0.5; echo started`

// TestRedTeamNothingOutlivesTheStep: a program tries every way it has to
// leave something running, or holding a namespace, past its step
// (outliveScript). When the step has ended, no process anywhere on the
// machine carries its tag, and none is in, or holds a descriptor of, a
// namespace the step or anything it started made (what lsns would
// list): the PID namespace's end killed every process in it and in the
// namespaces nested in it, and what was parked in flight was collected.
func TestRedTeamNothingOutlivesTheStep(t *testing.T) {
	// A system python3: the program runs as an ordinary user, and a
	// home's (pyenv's) is hidden from it.
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("part of the malicious program is a python3 script; no /usr/bin/python3 here")
	}
	s := newSandbox(t)
	work := t.TempDir()
	tag := fmt.Sprintf("%d.4545", 900000+os.Getpid())
	nsFile := filepath.Join(work, "ns")
	script := strings.NewReplacer("TAG", tag, "NS", nsFile).Replace(outliveScript)
	out, err := run(t, s, Policy{Writable: []string{work}}, work, []string{"PATH=/usr/bin:/bin"}, script)
	if err != nil || !strings.Contains(out, "started") {
		t.Fatalf("the program did not run (%v):\n%s", err, out)
	}
	ended := uptimeTicks(t)
	b, _ := os.ReadFile(nsFile)
	made := map[string]bool{}
	for _, l := range strings.Fields(string(b)) {
		made[l] = true
	}
	// The namespaces the sandbox shares with the host (its UTS and
	// cgroup ones) are not the step's.
	for _, n := range []string{"user", "mnt", "pid", "ipc", "net", "uts", "cgroup"} {
		if l, err := os.Readlink("/proc/self/ns/" + n); err == nil {
			delete(made, l)
		}
	}
	// The step's own five, the nested PID namespace's four and the
	// parked three: fewer means a part of the attack did not run.
	if len(made) < 12 || !strings.Contains(out, "all parked") {
		t.Fatalf("the program made %d namespaces (want 12) or parked nothing, so the test shows less than it says:\n%s\n%s", len(made), b, out)
	}
	var left []string
	for i := 0; i < 30; i++ {
		left = sandboxtest.Processes(t, tag)
		left = append(left, holders(made, ended)...)
		if len(left) == 0 {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Errorf("after the step ended: %v", left)
}

// holders lists the processes of the machine started by the clock tick
// before (since boot) that are in, or hold a descriptor of, one of the
// namespaces ns names ("pid:[4026532000]"). The kernel numbers a new
// namespace with the lowest number free, so once the step's are gone a
// sandbox of another test may take theirs: its processes start later.
// (A namespace parked in flight is in no process: it is not seen here,
// TestRedTeamParkedNamespaceDiesWithTheStep measures its memory.)
func holders(ns map[string]bool, before int64) []string {
	var out []string
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		if _, err := strconv.Atoi(p.Name()); err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", p.Name(), "stat"))
		if err != nil {
			continue
		}
		// Field 22, starttime, counted after the command's closing ")".
		i := strings.LastIndexByte(string(stat), ')')
		fields := strings.Fields(string(stat[i+1:]))
		if len(fields) < 20 {
			continue
		}
		if start, err := strconv.ParseInt(fields[19], 10, 64); err != nil || start > before {
			continue
		}
		for _, sub := range []string{"ns", "fd"} {
			dir := filepath.Join("/proc", p.Name(), sub)
			entries, _ := os.ReadDir(dir)
			for _, e := range entries {
				if l, err := os.Readlink(filepath.Join(dir, e.Name())); err == nil && ns[l] {
					out = append(out, fmt.Sprintf("process %s has %s in %s", p.Name(), l, sub))
				}
			}
		}
	}
	return out
}

// uptimeTicks is the time since boot in clock ticks (USER_HZ, 100 on
// every Linux architecture), the unit of /proc/<pid>/stat's starttime.
func uptimeTicks(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/uptime")
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b))
	secs, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		t.Fatal(err)
	}
	return int64(secs*100) + 1
}
