//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestRedTeamAIOContextsOutOfReach: a contained program makes Linux AIO
// contexts (io_setup), which the kernel counts in one pool for the whole
// machine (fs.aio-max-nr, 65536 events by default), whatever namespace
// asks: one io_setup(32768) took half of it and a second the rest, and
// every other process on the machine (a database's native AIO, QEMU,
// another job) then got EAGAIN until the step ended. Contained, the call
// is refused as a kernel without AIO refuses it (ENOSYS), and the
// programs that use it fall back to ordinary reads and writes. The probe
// stops at two contexts, not to take the machine's pool in the test.
func TestRedTeamAIOContextsOutOfReach(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	out, err := run(t, s, Policy{ReadOnly: []string{filepath.Dir(os.Args[0])}}, "/", []string{"PLANEX_COUNTS_PROBE=aio"},
		os.Args[0]+" -test.run=^TestMachineCountsProbeHelper$")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out, "aio: 0 contexts, then function not implemented") {
		t.Errorf("a contained program made AIO contexts from the machine's pool, or was refused otherwise than by the filter:\n%s", out)
	}
}

// TestRedTeamPtysBounded: a contained program opens pseudo-terminals
// until none is left, through the step's own /dev/ptmx and through a
// devpts it mounts itself as root of user and mount namespaces of its
// own (unshare -Urm), then holds them. The kernel keeps one count of
// them for the whole machine (kernel.pty.max, 4096 by default, of which
// every devpts but the host's first may use all but kernel.pty.reserve,
// 1024): a step took all 3071 this machine had for them, and every
// container's and other step's terminal (docker run -t, a CLI's shell
// tool, ssh into a container) failed with ENOSPC while it ran. The probe
// stops at 512, not to take the machine's pool in the test (nor, with
// the other tests of terminals running beside it, to bring the pool
// below the floor past which every step running is ended). Contained,
// the step's /dev/pts gives at most maxPtys, and a step holding more
// terminal descriptors than ptyDescriptors, however it made them, is
// ended: it never holds them to its end.
func TestRedTeamPtysBounded(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	helper := os.Args[0] + " -test.run=^TestMachineCountsProbeHelper$"
	bound := strconv.Itoa(ptyDescriptors)
	cases := []struct{ name, script string }{
		{"the step's /dev/ptmx", "PLANEX_COUNTS_PROBE=pty:/dev/ptmx:" + bound + " " + helper},
	}
	if _, err := exec.LookPath("unshare"); err == nil {
		cases = append(cases, struct{ name, script string }{"a devpts of its own",
			"unshare -Urm sh -c 'mkdir -p /tmp/pts && mount -t devpts -o newinstance,ptmxmode=0666 devpts /tmp/pts && PLANEX_COUNTS_PROBE=pty:/tmp/pts/ptmx:" + bound + " " + helper + "'"},
			// Bound over a file of another name, its descriptors' links
			// name that file, not a ptmx.
			struct{ name, script string }{"a devpts of its own, its ptmx bound elsewhere",
				"unshare -Urm sh -c 'mkdir -p /tmp/pts && mount -t devpts -o newinstance,ptmxmode=0666 devpts /tmp/pts && touch /tmp/notes.txt && mount --bind /tmp/pts/ptmx /tmp/notes.txt && PLANEX_COUNTS_PROBE=pty:/tmp/notes.txt:" + bound + " " + helper + "'"})
	} else {
		t.Log("util-linux's unshare is not installed: the nested devpts case is not tried")
	}
	for _, c := range cases {
		out, _ := run(t, s, Policy{ReadOnly: []string{filepath.Dir(os.Args[0])}}, "/", []string{"PATH=" + os.Getenv("PATH")}, c.script)
		n := -1
		for _, line := range strings.Split(out, "\n") {
			if v, ok := strings.CutPrefix(line, "ptys: "); ok {
				n, _ = strconv.Atoi(strings.TrimSuffix(strings.Fields(v)[0], ","))
			}
		}
		ended := strings.Contains(out, "pseudo-terminal limit")
		if n < 0 && !ended {
			t.Errorf("%s: the probe did not run:\n%s", c.name, out)
			continue
		}
		if n < 0 {
			t.Logf("%s: ended while it opened terminals", c.name)
		} else {
			t.Logf("%s: %d terminals", c.name, n)
		}
		if n > ptyDescriptors && strings.Contains(out, "held to the end") {
			t.Errorf("%s: the program held %d terminals to its end (the machine has %d for every container and step together):\n%s", c.name, n, readPtyMax(t), out)
		}
		if n > ptyDescriptors && !ended {
			t.Errorf("%s: a step holding %d terminals was not reported:\n%s", c.name, n, out)
		}
	}
}

// TestRedTeamParkedPtysBounded: a contained program mounts a devpts of
// its own (unshare -Urm), opens terminals there and parks them in flight
// in a Unix socket it never reads (SCM_RIGHTS), closing its own
// descriptors: the terminals live on, counted in the machine's pool
// (kernel.pty.max), but no process's descriptor table lists them, so
// the guard that counts the step's terminal descriptors saw none. The
// kernel bounds what a user has in flight only by the sender's
// descriptor limit (20,000 here), far above the 3071 terminals every
// container and step shares. The test sets the floor of the pool 128
// below what is left now and parks 384, not to take the machine's
// terminals; the step must not hold them to its end. It runs alone: the
// other tests' terminals would move the pool under it.
func TestRedTeamParkedPtysBounded(t *testing.T) {
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("util-linux's unshare is not installed: no devpts of the program's own to park terminals from")
	}
	left := ptyPoolLeft("/proc")
	if left < 1024 {
		t.Skipf("the machine has %d terminals left for containers; the test parks 384", left)
	}
	s := newSandbox(t)
	s.ptyFloor = left - 128
	helper := os.Args[0] + " -test.run=^TestMachineCountsProbeHelper$"
	script := "unshare -Urm sh -c 'mkdir -p /tmp/pts && mount -t devpts -o newinstance,ptmxmode=0666 devpts /tmp/pts && PLANEX_COUNTS_PROBE=ptypark:/tmp/pts/ptmx:384 " + helper + "'"
	out, err := run(t, s, Policy{ReadOnly: []string{filepath.Dir(os.Args[0])}}, "/", []string{"PATH=" + os.Getenv("PATH")}, script)
	if !strings.Contains(out, "parked: ") && !strings.Contains(out, "terminals nearly spent") {
		t.Fatalf("the probe did not run (%v):\n%s", err, out)
	}
	if strings.Contains(out, "held to the end") {
		t.Errorf("the program held terminals parked in flight past the pool's floor to its end (%v):\n%s", err, out)
	}
	if !strings.Contains(out, "terminals nearly spent") {
		t.Errorf("the step was not ended for the terminals it parked, or said nothing (%v):\n%s", err, out)
	}
}

// TestPtyGuard: the watcher's look at a step's terminals, on a /proc
// made of links: it counts only while the machine's count has grown by
// more than half the bound since the step started, then only the
// descriptors of terminals (either end, the init's aside), and reports
// a step past the bound; within it, a pool grown past the bound since
// the step started and below its floor (terminals parked in flight).
func TestPtyGuard(t *testing.T) {
	t.Parallel()
	var ptmx unix.Stat_t
	if err := unix.Stat("/dev/ptmx", &ptmx); err != nil || !isPty(ptmx.Mode, unix.Major(ptmx.Rdev), unix.Minor(ptmx.Rdev)) {
		t.Skipf("no /dev/ptmx to stand for a terminal here (%v)", err)
	}
	// A terminal's numbered end, for links named as /dev/pts/N.
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no terminal to open here: %v", err)
	}
	defer master.Close()
	if err := unix.IoctlSetPointerInt(int(master.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	ptn, err := unix.IoctlGetInt(int(master.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	ptsEnd := fmt.Sprintf("/dev/pts/%d", ptn)
	// The pool: 4096 less a reserve of 1024, 3072 for containers, of
	// which a quarter, 768, is the floor. 100 are open at the start.
	for _, c := range []struct {
		name       string
		grown      int
		ptys, init int
		want       int64
		wantLow    bool
		disguised  bool
		released   int // terminals others closed after the step started, before it opened its own
	}{
		{"many terminals, the machine's count unchanged", 0, ptyDescriptors + 10, 0, 0, false, false, 0},
		{"the count grown, few of them the step's", ptyDescriptors, 3, 0, 0, false, false, 0},
		{"the step's, at the bound", ptyDescriptors, ptyDescriptors, 0, 0, false, false, 0},
		{"the step's, past the bound", ptyDescriptors + 1, ptyDescriptors + 1, 0, ptyDescriptors + 1, false, false, 0},
		{"the init's are not the step's", ptyDescriptors + 40, 3, ptyDescriptors + 40, 0, false, false, 0},
		{"numbered ends", ptyDescriptors + 1, -(ptyDescriptors + 1), 0, ptyDescriptors + 1, false, false, 0},
		{"the pool grown past the bound, above its floor", 2000, 3, 0, 0, false, false, 0},
		{"the pool below its floor, none of it shown", 2300, 3, 0, 0, true, false, 0},
		{"the pool below its floor, within the bound", ptyDescriptors, 3, 0, 0, false, false, 0},
		{"terminals under another name (a ptmx bound over notes.txt)", ptyDescriptors + 1, ptyDescriptors + 1, 0, ptyDescriptors + 1, false, true, 0},
		// Another container closed 90 terminals after the step started,
		// then the step opened 130: the count ends 40 above its start,
		// the step's 130 still seen.
		{"the step's, past the bound, after others closed theirs", 40, ptyDescriptors + 2, 0, ptyDescriptors + 2, false, false, 90},
	} {
		proc := t.TempDir()
		pty := filepath.Join(proc, "sys", "kernel", "pty")
		if err := os.MkdirAll(pty, 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(pty, "max"), "4096\n", 0o644)
		writeFile(t, filepath.Join(pty, "reserve"), "1024\n", 0o644)
		start := 100
		if c.name == "the pool below its floor, within the bound" {
			start = 2900 // already short at the step's start
		}
		writeFile(t, filepath.Join(pty, "nr"), strconv.Itoa(start)+"\n", 0o644)
		g := newPtyGuard(proc, 0)
		if g.floor != 768 {
			t.Errorf("%s: floor %d, want a quarter of 3072", c.name, g.floor)
		}
		if c.released > 0 {
			writeFile(t, filepath.Join(pty, "nr"), strconv.Itoa(start-c.released)+"\n", 0o644)
			if got := g.check(); got.held != 0 || got.low {
				t.Errorf("%s: check() after others closed terminals = %+v, want nothing", c.name, got)
			}
		}
		writeFile(t, filepath.Join(pty, "nr"), strconv.Itoa(start+c.grown)+"\n", 0o644)
		links := func(pid string, n int) {
			fd := filepath.Join(proc, pid, "fd")
			if err := os.MkdirAll(fd, 0o755); err != nil {
				t.Fatal(err)
			}
			// A negative count stands for terminals' numbered ends: links
			// named like /dev/pts/N, to the terminal this test opened.
			target := "/dev/ptmx"
			if n < 0 {
				n, target = -n, ptsEnd
			}
			if c.disguised {
				// Its link names notes.txt; the file there is the ptmx.
				target = filepath.Join(proc, "notes.txt")
				_ = os.Symlink("/dev/ptmx", target)
			}
			for i := range n {
				if err := os.Symlink(target, filepath.Join(fd, strconv.Itoa(100+i))); err != nil {
					t.Fatal(err)
				}
			}
			for i, other := range []string{"/dev/null", "pipe:[4242]", "socket:[77]", "/dev/pts/ptmx.bak", "/tmp/12x"} {
				if err := os.Symlink(other, filepath.Join(fd, strconv.Itoa(i))); err != nil {
					t.Fatal(err)
				}
			}
		}
		links("1", c.init)
		// The step's terminals spread over two processes.
		links("7", c.ptys/2)
		links("8", c.ptys-c.ptys/2)
		if got := g.check(); got.held != c.want || got.low != c.wantLow {
			t.Errorf("%s: check() = %+v, want %d held, low %v", c.name, got, c.want, c.wantLow)
		}
	}
}

// readPtyMax is the machine's kernel.pty.max less its reserve: what
// every devpts but the host's first shares.
func readPtyMax(t *testing.T) int64 {
	t.Helper()
	return readFirstInt("/proc/sys/kernel/pty/max") - readFirstInt("/proc/sys/kernel/pty/reserve")
}

// TestRedTeamMemoryNoProcessCounts: a contained program writes a memfd
// (not mapped) a GiB long, memory the resident size the OOM killer
// chooses by does not count, then holds it. Where planex cannot set an
// OOM floor (an ordinary user, a root without CAP_SYS_RESOURCE, as this
// project's test machine) the program lowers its score to 0 and, when
// memory runs out, the kernel ends planex or the runner rather than the
// small process holding it; a tmpfs or ramfs of its own in nested
// namespaces does the same. So the init ends a step once the machine's
// memory and swap left fall below a floor (and below what it had at the
// step's start). The test sets that floor 256 MiB below what is left now,
// not to take the machine's memory; the program writes on until it is
// ended, up to 3 GiB, so memory other tests free meanwhile (a package's
// scratch folders in /dev/shm removed as it ends) cannot lift it back
// above the floor before the guard looks, as a single GiB once did.
func TestRedTeamMemoryNoProcessCounts(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	left := memoryLeft(readFile(t, "/proc/meminfo"))
	if left < 4<<30 {
		t.Skipf("the machine has %d MiB of memory and swap left; the test may take 3 GiB", left>>20)
	}
	s.memFloor = left - 256<<20
	out, err := run(t, s, Policy{ReadOnly: []string{filepath.Dir(os.Args[0])}}, "/", []string{"PLANEX_COUNTS_PROBE=memfd"},
		os.Args[0]+" -test.run=^TestMachineCountsProbeHelper$")
	if strings.Contains(out, "held to the end") {
		t.Errorf("the program held 3 GiB no process's resident size counts, far past the floor, and ran on (%v):\n%s", err, out)
	}
	if !strings.Contains(out, "memory nearly exhausted") {
		t.Errorf("the step was not ended for the memory it held, or said nothing (%v):\n%s", err, out)
	}
}

// TestMemGuard: the memory guard's floor (a thirty-second of the
// machine's memory, or of its cgroups' smallest limit, within its bounds,
// or the one given), what it counts as left (available memory and free
// swap; in a cgroup with a limit, the limit less its use, plus its file
// cache and the swap it may still use), and that a machine already short
// of memory at the step's start ends it only once it falls further.
func TestMemGuard(t *testing.T) {
	t.Parallel()
	const gib = int64(1) << 30
	info := func(total, avail, swap int64) fstest.MapFS {
		return fstest.MapFS{"proc/meminfo": {Data: []byte(fmt.Sprintf("MemTotal:       %d kB\nMemFree:        1 kB\nMemAvailable:   %d kB\nSwapTotal:      %d kB\nSwapFree:       %d kB\n", total>>10, avail>>10, swap>>10, swap>>10))}}
	}
	// v2 is a unified hierarchy's cgroup /a/b whose own level has no
	// limit and whose parent /a has one: used bytes, file cache, and its
	// swap.max ("" for no file).
	v2 := func(m fstest.MapFS, limit, used, cache int64, swapMax string) fstest.MapFS {
		m["proc/self/cgroup"] = &fstest.MapFile{Data: []byte("0::/a/b\n")}
		m["sys/fs/cgroup/a/b/memory.max"] = &fstest.MapFile{Data: []byte("max\n")}
		m["sys/fs/cgroup/a/b/memory.current"] = &fstest.MapFile{Data: []byte("4096\n")}
		m["sys/fs/cgroup/a/memory.max"] = &fstest.MapFile{Data: []byte(fmt.Sprintln(limit))}
		m["sys/fs/cgroup/a/memory.current"] = &fstest.MapFile{Data: []byte(fmt.Sprintln(used))}
		m["sys/fs/cgroup/a/memory.stat"] = &fstest.MapFile{Data: []byte(fmt.Sprintf("anon 5\nfile %d\nactive_file %d\ninactive_file %d\nshmem 0\n", cache, cache/2, cache-cache/2))}
		if swapMax != "" {
			m["sys/fs/cgroup/a/memory.swap.max"] = &fstest.MapFile{Data: []byte(swapMax + "\n")}
			m["sys/fs/cgroup/a/memory.swap.current"] = &fstest.MapFile{Data: []byte("0\n")}
		}
		return m
	}
	// v1 is a first-version memory cgroup /x with a limit, its root's
	// unlimited; memsw its memory and swap limit (0: none counted).
	v1 := func(m fstest.MapFS, limit, used, cache, memsw int64) fstest.MapFS {
		m["proc/self/cgroup"] = &fstest.MapFile{Data: []byte("5:devices:/x\n4:cpu,memory:/x\n0::/\n")}
		m["sys/fs/cgroup/memory/memory.limit_in_bytes"] = &fstest.MapFile{Data: []byte("9223372036854771712\n")}
		m["sys/fs/cgroup/memory/x/memory.limit_in_bytes"] = &fstest.MapFile{Data: []byte(fmt.Sprintln(limit))}
		m["sys/fs/cgroup/memory/x/memory.usage_in_bytes"] = &fstest.MapFile{Data: []byte(fmt.Sprintln(used))}
		m["sys/fs/cgroup/memory/x/memory.stat"] = &fstest.MapFile{Data: []byte(fmt.Sprintf("cache %d\ninactive_file 1\ntotal_active_file %d\ntotal_inactive_file %d\n", cache, cache/2, cache-cache/2))}
		if memsw > 0 {
			m["sys/fs/cgroup/memory/x/memory.memsw.limit_in_bytes"] = &fstest.MapFile{Data: []byte(fmt.Sprintln(memsw))}
			m["sys/fs/cgroup/memory/x/memory.memsw.usage_in_bytes"] = &fstest.MapFile{Data: []byte(fmt.Sprintln(used))}
		}
		return m
	}
	for _, c := range []struct {
		name          string
		floor         int64
		start, now    fstest.MapFS
		wantLow       bool
		wantFloor     int64
		wantLeftAfter int64
	}{
		{"plenty left", 0, info(16*gib, 12*gib, 0), info(16*gib, 10*gib, 0), false, 512 << 20, 10 * gib},
		{"below a thirty-second", 0, info(16*gib, 12*gib, 0), info(16*gib, 400<<20, 0), true, 512 << 20, 400 << 20},
		{"swap counts as left", 0, info(16*gib, 12*gib, 4*gib), info(16*gib, 400<<20, 2*gib), false, 512 << 20, 400<<20 + 2*gib},
		{"a small machine's floor is the least", 0, info(2*gib, 1*gib, 0), info(2*gib, 100<<20, 0), true, memFloorLeast, 100 << 20},
		{"a large machine's floor is the most", 0, info(256*gib, 200*gib, 0), info(256*gib, 2*gib, 0), false, memFloorMost, 2 * gib},
		{"short at the start, steady", 0, info(16*gib, 300<<20, 0), info(16*gib, 280<<20, 0), false, 512 << 20, 280 << 20},
		{"short at the start, falling", 0, info(16*gib, 300<<20, 0), info(16*gib, 200<<20, 0), true, 512 << 20, 200 << 20},
		{"a floor given", 5 * gib, info(16*gib, 6*gib, 0), info(16*gib, 4*gib, 0), true, 5 * gib, 4 * gib},
		{"a parent cgroup's limit runs out, the machine's memory plenty", 0, v2(info(64*gib, 60*gib, 0), 8*gib, 1*gib, 0, ""), v2(info(64*gib, 56*gib, 0), 8*gib, 8*gib-100<<20, 0, ""), true, 256 << 20, 100 << 20},
		{"a cgroup's file cache is given back first", 0, v2(info(64*gib, 60*gib, 0), 8*gib, 1*gib, 0, ""), v2(info(64*gib, 56*gib, 0), 8*gib, 8*gib-100<<20, 3*gib, ""), false, 256 << 20, 3*gib + 100<<20},
		{"a cgroup that may swap", 0, v2(info(64*gib, 60*gib, 2*gib), 8*gib, 1*gib, 0, "max"), v2(info(64*gib, 56*gib, 2*gib), 8*gib, 8*gib-100<<20, 0, "max"), false, 256 << 20, 2*gib + 100<<20},
		{"a cgroup that may not swap", 0, v2(info(64*gib, 60*gib, 2*gib), 8*gib, 1*gib, 0, "0"), v2(info(64*gib, 56*gib, 2*gib), 8*gib, 8*gib-100<<20, 0, "0"), true, 256 << 20, 100 << 20},
		{"a first-version cgroup", 0, v1(info(64*gib, 60*gib, 0), 4*gib, 1*gib, 0, 0), v1(info(64*gib, 56*gib, 0), 4*gib, 4*gib-100<<20, 0, 0), true, memFloorLeast, 100 << 20},
		{"a first-version cgroup's cache", 0, v1(info(64*gib, 60*gib, 0), 4*gib, 1*gib, 0, 0), v1(info(64*gib, 56*gib, 0), 4*gib, 4*gib-100<<20, gib, 0), false, memFloorLeast, gib + 100<<20},
		{"a first-version cgroup's memory and swap limit", 0, v1(info(64*gib, 60*gib, 2*gib), 4*gib, 1*gib, 0, 4*gib), v1(info(64*gib, 56*gib, 2*gib), 4*gib, 4*gib-100<<20, 0, 4*gib), true, memFloorLeast, 100 << 20},
	} {
		m := fstest.MapFS{}
		maps.Copy(m, c.start)
		g := newMemGuard(m, c.floor)
		if g.floor != c.wantFloor {
			t.Errorf("%s: floor %d MiB, want %d MiB", c.name, g.floor>>20, c.wantFloor>>20)
		}
		maps.Copy(m, c.now)
		left, low := g.check()
		if low != c.wantLow || left != c.wantLeftAfter {
			t.Errorf("%s: check() = %d MiB, %v; want %d MiB, %v", c.name, left>>20, low, c.wantLeftAfter>>20, c.wantLow)
		}
	}
	g := newMemGuard(fstest.MapFS{}, 0)
	if _, low := g.check(); low {
		t.Error("a guard that read nothing at the start ended the step")
	}
}

func readFile(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestMachineCountsProbeHelper is the program of the tests of what the
// kernel counts for the whole machine. PLANEX_COUNTS_PROBE says what it
// takes: "aio", AIO contexts of 8192 events (at most two);
// "pty:PATH:BOUND", terminals opened through the ptmx at PATH (at most
// 512), held, when it got more than BOUND, up to ten seconds before it
// says "held to the end"; "memfd", up to 3 GiB written to a memfd (the
// guard ends it long before, at the floor), held three seconds before it
// says "held to the end"; "epoll:N", N epoll watches held up to ten
// seconds (holdEpollWatches); "epollpark", every epoll watch of its
// user added and parked (parkEpollWatches); "mapfiles:N", N files
// mapped and their descriptors closed (mapFiles); "intocgroup:DIR", a child started in the
// cgroup DIR (startInCgroup).
func TestMachineCountsProbeHelper(t *testing.T) {
	what := os.Getenv("PLANEX_COUNTS_PROBE")
	switch {
	case what == "":
		t.Skip("the program of the machine-wide count tests")
	case what == "aio":
		n, err := takeAIOContexts(2, 8192)
		fmt.Printf("aio: %d contexts, then %v\n", n, err)
	case strings.HasPrefix(what, "pty:"):
		ptmx, b, _ := strings.Cut(strings.TrimPrefix(what, "pty:"), ":")
		bound, _ := strconv.Atoi(b)
		var held []*os.File
		var err error
		for len(held) < 512 {
			var f *os.File
			if f, err = os.OpenFile(ptmx, os.O_RDWR|unix.O_NOCTTY, 0); err != nil {
				break
			}
			held = append(held, f)
		}
		fmt.Printf("ptys: %d, then %v\n", len(held), err)
		os.Stdout.Sync()
		if len(held) > bound {
			// The attacker's hold: the step is ended long before.
			time.Sleep(10 * time.Second)
		}
		fmt.Println("held to the end")
	case strings.HasPrefix(what, "ptypark:"):
		ptmx, n, _ := strings.Cut(strings.TrimPrefix(what, "ptypark:"), ":")
		most, _ := strconv.Atoi(n)
		parked, err := parkPtys(ptmx, most)
		fmt.Printf("parked: %d, then %v\n", parked, err)
		os.Stdout.Sync()
		time.Sleep(10 * time.Second)
		fmt.Println("held to the end")
	case strings.HasPrefix(what, "tcp:"):
		n, _ := strconv.Atoi(strings.TrimPrefix(what, "tcp:"))
		mib, err := fillTCPBuffers(n)
		fmt.Printf("tcp: %d MiB queued, then %v\n", mib, err)
		os.Stdout.Sync()
		time.Sleep(5 * time.Second)
		fmt.Println("held to the end")
	case strings.HasPrefix(what, "timers:"):
		n, _ := strconv.Atoi(strings.TrimPrefix(what, "timers:"))
		holdTimers(n)
	case strings.HasPrefix(what, "fhandle:"):
		openByHandle(strings.TrimPrefix(what, "fhandle:"))
	case what == "families":
		probeFamilies()
	case what == "unixbuf":
		fillSocketBuffers()
	case strings.HasPrefix(what, "shmlock:"):
		n, _ := strconv.Atoi(strings.TrimPrefix(what, "shmlock:"))
		holdLockedSegments(n)
	case strings.HasPrefix(what, "mqueues:"):
		n, _ := strconv.Atoi(strings.TrimPrefix(what, "mqueues:"))
		holdQueues(n)
	case strings.HasPrefix(what, "intocgroup:"):
		startInCgroup(strings.TrimPrefix(what, "intocgroup:"))
	case strings.HasPrefix(what, "mapfiles:"):
		n, _ := strconv.Atoi(strings.TrimPrefix(what, "mapfiles:"))
		mapFiles(n)
	case what == "epollpark":
		parkEpollWatches()
	case strings.HasPrefix(what, "epoll:"):
		n, _ := strconv.Atoi(strings.TrimPrefix(what, "epoll:"))
		holdEpollWatches(n)
	case what == "memfd":
		fd, err := unix.MemfdCreate("planex-hog", unix.MFD_CLOEXEC)
		if err != nil {
			fmt.Printf("memfd: %v\n", err)
			return
		}
		chunk := make([]byte, 1<<20)
		for i := range 3072 {
			if _, err := unix.Write(fd, chunk); err != nil {
				fmt.Printf("memfd: %d MiB, then %v\n", i, err)
				return
			}
		}
		fmt.Println("memfd: 3072 MiB")
		os.Stdout.Sync()
		time.Sleep(3 * time.Second)
		fmt.Println("held to the end")
	}
}

// parkPtys opens up to most terminals through the ptmx at path and sends
// each, in batches, through a Unix socket of a pair whose other end is
// never read, closing its own descriptors: the terminals stay open in
// flight, in no process's descriptor table. A batch holds fewer than
// the 128 terminal descriptors a step may hold at once, so the guard
// on those never ends the probe before the pool guard can. It returns
// how many it parked and the error that stopped it (nil: none).
func parkPtys(path string, most int) (int, error) {
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return 0, err
	}
	// Both ends stay open (never read) until the process ends.
	parked := 0
	for parked < most {
		var batch []int
		for len(batch) < 64 && parked+len(batch) < most {
			fd, err := unix.Open(path, unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
			if err != nil {
				break
			}
			batch = append(batch, fd)
		}
		if len(batch) == 0 {
			return parked, errors.New("no terminal opened")
		}
		err := unix.Sendmsg(pair[0], []byte{0}, unix.UnixRights(batch...), nil, 0)
		for _, fd := range batch {
			unix.Close(fd)
		}
		if err != nil {
			return parked, err
		}
		parked += len(batch)
	}
	return parked, nil
}

// fillTCPBuffers opens n TCP connections over the loopback, each end's
// buffer as large as the kernel allows, and writes into each until the
// writer would wait, reading nothing: the queued data is charged to the
// kernel's TCP memory, one count for the whole machine. It returns the
// MiB written and the error that stopped it (nil: none).
func fillTCPBuffers(n int) (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	total := 0
	for range n {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			return total >> 20, err
		}
		peer, err := ln.Accept()
		if err != nil {
			return total >> 20, err
		}
		_ = c.(*net.TCPConn).SetWriteBuffer(64 << 20)
		_ = peer.(*net.TCPConn).SetReadBuffer(64 << 20)
		buf := make([]byte, 1<<20)
		for {
			_ = c.SetWriteDeadline(time.Now().Add(50 * time.Millisecond))
			k, err := c.Write(buf)
			total += k
			if err != nil {
				break
			}
		}
	}
	return total >> 20, nil
}

// takeAIOContexts makes up to most AIO contexts of events each, and
// returns how many it made and the error that stopped it (nil: none).
func takeAIOContexts(most, events int) (int, error) {
	for n := range most {
		var ctx uintptr
		if _, _, e := unix.Syscall(unix.SYS_IO_SETUP, uintptr(events), uintptr(unsafe.Pointer(&ctx)), 0); e != 0 {
			if errors.Is(e, unix.EAGAIN) {
				return n, fmt.Errorf("%w (the machine's fs.aio-max-nr is spent)", e)
			}
			return n, e
		}
	}
	return most, nil
}
