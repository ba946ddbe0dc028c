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
