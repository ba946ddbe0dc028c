//go:build linux

package sandbox

import (
	"cmp"
	"errors"
	"fmt"
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

// TestLimitsStopRunawaySteps: a step writes a huge file, forks without
// end, or allocates until it cannot; each is stopped at its limit, the
// step's error output says which limit, and planex carries on.
func TestLimitsStopRunawaySteps(t *testing.T) {
	s := newSandbox(t)
	hogDir := filepath.Dir(os.Args[0]) // the test binary, our memory hog
	rows := []struct {
		name   string
		limits Limits
		script string
		want   string
		check  func(t *testing.T, work, out string, err error)
	}{
		{"huge file in a script that stops at a failure", Limits{FileSize: 1 << 20}, `set -e; head -c 8M /dev/zero > big; echo "not reached"`, "file size limit 1M hit",
			func(t *testing.T, work, out string, err error) {
				if fi, serr := os.Stat(filepath.Join(work, "big")); serr != nil || fi.Size() > 1<<20 {
					t.Errorf("the file grew past the limit: %v, %v", fi, serr)
				}
				var ee *exec.ExitError
				if !errors.As(err, &ee) || ee.ExitCode() != 153 || strings.Contains(out, "not reached") {
					t.Errorf("the writer was not stopped by SIGXFSZ: %v\n%s", err, out)
				}
			}},
		{"huge file as the program itself", Limits{FileSize: 1 << 20}, `exec head -c 8M /dev/zero > big`, "file size limit 1M hit",
			func(t *testing.T, work, out string, err error) {
				var ee *exec.ExitError
				if !errors.As(err, &ee) || ee.ExitCode() != 153 {
					t.Errorf("want exit status 153 (SIGXFSZ), got %v", err)
				}
			}},
		{"fork bomb", Limits{Processes: 64}, `perl -e "fork while 1" &
i=0; while [ $i -lt 100000 ]; do set -- /proc/[0-9]*; [ $# -ge 64 ] && break; i=$((i+1)); done; echo $#`, "process limit 64 hit",
			func(t *testing.T, work, out string, err error) {
				// A line counts the processes the program saw.
				k := 0
				for _, line := range strings.Split(out, "\n") {
					if n, err := strconv.Atoi(strings.TrimSpace(line)); err == nil {
						k = n
					}
				}
				if k < 32 || k > 64+1 {
					t.Errorf("want the bomb held at 64 processes (and the init), saw %d:\n%s", k, out)
				}
			}},
		// The machine's file table: a step that held 20,000
		// descriptors in each of its processes (as many as this
		// machine lets one process hold) filled it, and every process
		// but root's got ENFILE. The hog is ended once it holds more
		// than the step may, long before its 5 s are up.
		{"descriptor hog", Limits{OpenFiles: 2048}, os.Args[0] + ` -test.run=^TestDescriptorHogHelper$`, "open file limit 2048 hit",
			func(t *testing.T, work, out string, err error) {
				if strings.Contains(out, "hog still running") || err == nil {
					t.Errorf("the hog was not ended: %v\n%s", err, out)
				}
			}},
		// The same hog made not dumpable first: its /proc files are
		// then readable only with CAP_SYS_PTRACE over its user
		// namespace, which the init holds (the program's namespace is
		// nested in the init's), so its descriptors are still counted.
		{"descriptor hog, not dumpable", Limits{OpenFiles: 2048}, `PLANEX_HOG_UNDUMPABLE=1 ` + os.Args[0] + ` -test.run=^TestDescriptorHogHelper$`, "open file limit 2048 hit",
			func(t *testing.T, work, out string, err error) {
				if strings.Contains(out, "hog still running") || err == nil || !strings.Contains(out, "not dumpable") {
					t.Errorf("the hog was not ended: %v\n%s", err, out)
				}
			}},
		{"memory hog", Limits{Memory: 1 << 30}, os.Args[0] + ` -test.run=^TestMemoryHogHelper$`, "memory limit 1G hit",
			func(t *testing.T, work, out string, err error) {
				if !strings.Contains(out, "hog stopped at") {
					t.Errorf("the hog was not stopped by the limit:\n%s", out)
				}
			}},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			if strings.Contains(r.script, "perl") {
				if _, err := exec.LookPath("perl"); err != nil {
					t.Skip("the fork bomb is perl's `fork while 1` (it keeps forking when a fork fails, where a shell gives up); no perl here")
				}
			}
			work := t.TempDir()
			p := Policy{Writable: []string{work}, ReadOnly: []string{hogDir}, Limits: r.limits}
			out, err := run(t, s, p, work, []string{"PATH=" + os.Getenv("PATH"), "PLANEX_MEMORY_HOG=1"}, r.script)
			if !strings.Contains(out, "planex sandbox: "+r.want) {
				t.Errorf("the step's output does not report %q:\n%s", r.want, out)
			}
			r.check(t, work, out, err)
			// planex survives and starts the next step.
			if out, err := run(t, s, Policy{}, "/", nil, "echo next"); err != nil || out != "next\n" {
				t.Errorf("the next step: %q, %v", out, err)
			}
		})
	}
}

// TestDefaultLimitsAreSet: without limits in the policy the program gets
// the defaults as hard limits it cannot raise (memory: none), no core
// dumps, and the OOM killer's first place.
func TestDefaultLimitsAreSet(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	out, err := run(t, s, Policy{}, "/", []string{"PATH=" + os.Getenv("PATH")},
		`grep -E '^Max (file size|processes|address space|core file size)' /proc/self/limits; ulimit -f unlimited 2>/dev/null && echo RAISED; echo "oom_score_adj $(cat /proc/self/oom_score_adj)"`)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	d := Limits{}.WithDefaults()
	for _, want := range []string{
		fmt.Sprintf("Max file size %d %d bytes", d.FileSize, d.FileSize),
		fmt.Sprintf("Max processes %d %d processes", d.Processes, d.Processes),
		"Max address space unlimited unlimited bytes",
		"Max core file size 1 1 bytes",
		// The OOM killer's first choice, not planex or the runner.
		"oom_score_adj 1000",
	} {
		if !strings.Contains(strings.Join(strings.Fields(out), " "), want) {
			t.Errorf("limits inside lack %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "RAISED") {
		t.Errorf("the program raised its file size limit:\n%s", out)
	}
}

// TestDescriptorHogHelper opens descriptors until it cannot (or has
// 16,384), then holds them 5 s.
func TestDescriptorHogHelper(t *testing.T) {
	if os.Getenv("PLANEX_MEMORY_HOG") == "" {
		t.Skip("the descriptor hog of TestLimitsStopRunawaySteps")
	}
	if os.Getenv("PLANEX_HOG_UNDUMPABLE") != "" {
		if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
			t.Fatal(err)
		}
		fmt.Println("not dumpable")
	}
	n := 0
	for ; n < 1<<14; n++ {
		r, w, err := os.Pipe()
		if err != nil {
			break
		}
		defer r.Close()
		defer w.Close()
		n++
	}
	fmt.Printf("holding %d descriptors\n", n)
	time.Sleep(5 * time.Second)
	fmt.Println("hog still running")
}

// TestMemoryHogHelper maps memory until the address space runs out, then
// stays a moment, as a program that caught the failure would.
func TestMemoryHogHelper(t *testing.T) {
	if os.Getenv("PLANEX_MEMORY_HOG") == "" {
		t.Skip("the memory hog of TestLimitsStopRunawaySteps")
	}
	// Everything the report needs is allocated before the address space
	// runs out, and the mappings are made by the raw system call
	// (syscall.Mmap records each in a map on the heap, whose growth
	// past the limit made the runtime itself die of "out of memory"
	// before the hog could say where it stopped).
	msg := make([]byte, 0, 64)
	n := 0
	for ; n < 1<<16; n++ {
		// Reserved, never touched: no real memory is used.
		_, _, errno := syscall.Syscall6(syscall.SYS_MMAP, 0, 4<<20, syscall.PROT_READ|syscall.PROT_WRITE,
			syscall.MAP_PRIVATE|syscall.MAP_ANON, ^uintptr(0), 0)
		if errno != 0 {
			break
		}
	}
	msg = append(msg, "hog stopped at "...)
	msg = strconv.AppendInt(msg, int64(4*n), 10)
	msg = append(msg, " MiB more\n"...)
	os.Stdout.Write(msg)
	time.Sleep(3 * watchInterval)
}

// TestOOMScoreFloor: a program that fills memory first puts its OOM
// score back to 0 (and -17 through the legacy oom_adj), in itself and in
// a child, so that the kernel kills planex or the runner in its place
// when memory runs out. planex as root sets the score from outside, which
// makes 1000 the floor: every write is refused and the score stays 1000.
// Before, the program's own write of 1000 set no floor, and 0 was read
// back. An ordinary user's planex cannot set one, nor can root without
// the capability (docs/security.md).
func TestOOMScoreFloor(t *testing.T) {
	t.Parallel()
	needRoot(t)
	if !canSetOOMFloor() {
		t.Skip("needs CAP_SYS_RESOURCE, which this machine's root lacks (CapEff in /proc/self/status): without it no write sets an OOM score floor")
	}
	s := newSandbox(t)
	script := `for v in 0 500 999 -1000; do echo $v > /proc/self/oom_score_adj 2>/dev/null && echo "LOWERED to $v"; done
echo -17 > /proc/self/oom_adj 2>/dev/null && echo "LOWERED oom_adj"
sh -c 'echo 0 > /proc/self/oom_score_adj 2>/dev/null && echo "CHILD LOWERED"; echo "child $(cat /proc/self/oom_score_adj)"'
echo "score $(cat /proc/self/oom_score_adj)"`
	out, err := run(t, s, Policy{}, "/", []string{"PATH=" + os.Getenv("PATH")}, script)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if strings.Contains(out, "LOWERED") {
		t.Errorf("a contained program lowered its OOM score:\n%s", out)
	}
	if !strings.Contains(out, "score 1000\n") || !strings.Contains(out, "child 1000\n") {
		t.Errorf("want the OOM score 1000 in the program and its child:\n%s", out)
	}
}

// TestOOMFloorHandshake runs the init's wait for planex's write of its
// OOM score where the machine's root lacks the capability that makes it
// a floor (TestOOMScoreFloor covers the floor): a step still starts, at
// score 1000, and a process other than the init that connects to the
// socket gets no answer, so it learns nothing and sets nothing.
func TestOOMFloorHandshake(t *testing.T) {
	t.Parallel()
	needRoot(t)
	s := newSandbox(t)
	s.oomFloor = true
	out, err := run(t, s, Policy{}, "/", []string{"PATH=" + os.Getenv("PATH")}, `echo "score $(cat /proc/self/oom_score_adj)"`)
	if err != nil || out != "score 1000\n" {
		t.Fatalf("a step with the OOM handshake: %q, %v", out, err)
	}
	root := t.TempDir()
	stop, err := serveOOMFloor(root, filepath.Join(root, configFile), placement{oomFloor: true})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if err := awaitOOMFloor(root); !errors.Is(err, errNoOOMFloor) {
		t.Errorf("a process that is not the init was answered: %v", err)
	}
}

// TestFileGuard: the step's share is at most a quarter of the machine's
// table; its descriptors are counted only once the machine's count grew
// by half of it, the init's own are not, and only a step past its share
// is reported (here on a /proc laid out in a folder).
func TestFileGuard(t *testing.T) {
	t.Parallel()
	proc := t.TempDir()
	if err := os.MkdirAll(filepath.Join(proc, "sys", "fs"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(proc, "sys", "fs", "file-max"), "8192\n", 0o644)
	writeFile(t, filepath.Join(proc, "sys", "fs", "file-nr"), "100\t0\t8192\n", 0o644)
	fds := func(pid string, n int) {
		if err := os.MkdirAll(filepath.Join(proc, pid, "fd"), 0o755); err != nil {
			t.Fatal(err)
		}
		for i := range n {
			writeFile(t, filepath.Join(proc, pid, "fd", strconv.Itoa(i)), "", 0o644)
		}
	}
	fds("1", 5000)
	fds("42", 1500)
	g := newFileGuard(proc, 4096, 0)
	if g.limit != 2048 || g.base != 100 || g.floor != 2048 {
		t.Fatalf("guard = %+v, want a limit and a floor of a quarter of 8192 and the count at its start", g)
	}
	if v := g.check(); v != (fileVerdict{}) {
		t.Errorf("found %+v with the machine's table unchanged", v)
	}
	nr := func(n int) {
		writeFile(t, filepath.Join(proc, "sys", "fs", "file-nr"), fmt.Sprintf("%d\t0\t8192\n", n), 0o644)
	}
	nr(2000)
	if v := g.check(); v != (fileVerdict{}) {
		t.Errorf("a step within its share (the init's 5000 not counted), the table grown by less than the limit, was reported: %+v", v)
	}
	// The table grew by more than the limit, its descriptors do not
	// show it (files mapped or parked), and less than the floor is left.
	nr(7000)
	if v := g.check(); !v.low || v.left != 1192 || v.held != 0 {
		t.Errorf("a table grown past the limit and below its floor = %+v, want low with 1192 left", v)
	}
	// Grown past the limit but with more than the floor left: nothing.
	roomy := newFileGuard(proc, 4096, 1000)
	roomy.base = 4000
	if v := roomy.check(); v != (fileVerdict{}) {
		t.Errorf("a table with more than the floor left was reported low: %+v", v)
	}
	fds("43", 600)
	if v := g.check(); v.held <= 2048 {
		t.Errorf("a step past its share was not reported: %+v", v)
	}
	if off := newFileGuard(proc, Unlimited, 0); off.check() != (fileVerdict{}) || off.limit != 0 {
		t.Errorf("open-files=off still watched: %+v", off)
	}
}

// TestDiskFillEndsTheStep: a program writes file after file, each under
// the file-size limit, until the file system holding its worktree is
// full (the runner's and planex's disk too), then would go on running.
// The init ends the step once that file system has less than its floor
// left (a twentieth of this 64 MiB one), and says so. Before, the step
// ran on with the disk full. Root mounts the small file system.
func TestDiskFillEndsTheStep(t *testing.T) {
	needRoot(t)
	s := newSandbox(t)
	work := t.TempDir()
	if err := syscall.Mount("tmpfs", work, "tmpfs", 0, "size=64m,mode=0777"); err != nil {
		t.Skipf("mounting a small file system for the worktree: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(work, syscall.MNT_DETACH) })
	script := `i=0; while head -c 1048576 /dev/zero > f$i 2>/dev/null; do i=$((i+1)); done; echo "wrote $i files"; sleep 5; echo "hog still running"`
	out, err := run(t, s, Policy{Writable: []string{work}, Limits: Limits{FileSize: 2 << 20}}, work, []string{"PATH=" + os.Getenv("PATH")}, script)
	if strings.Contains(out, "hog still running") || err == nil {
		t.Errorf("the step ran on with its disk full: %v\n%s", err, out)
	}
	if !strings.Contains(out, "planex sandbox: disk nearly full: the file system holding "+work) {
		t.Errorf("the step's output does not say the disk was full:\n%s", out)
	}
}

// TestInodeFillEndsTheStep: a program takes every inode of the file
// system holding its worktree with empty files, which no block count
// shows: git, the runner and planex could then create nothing there. The
// init ends the step near the inode floor (a twentieth of 20,000 here).
func TestInodeFillEndsTheStep(t *testing.T) {
	needRoot(t)
	s := newSandbox(t)
	work := t.TempDir()
	if err := syscall.Mount("tmpfs", work, "tmpfs", 0, "size=64m,nr_inodes=20000,mode=0777"); err != nil {
		t.Skipf("mounting a small file system for the worktree: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(work, syscall.MNT_DETACH) })
	script := `i=0; while true 2>/dev/null > f$i; do i=$((i+1)); done; echo "made $i files"; sleep 5; echo "hog still running"`
	out, err := run(t, s, Policy{Writable: []string{work}}, work, []string{"PATH=" + os.Getenv("PATH")}, script)
	if strings.Contains(out, "hog still running") || err == nil {
		t.Errorf("the step ran on with no inode left: %v\n%s", err, out)
	}
	if !strings.Contains(out, "planex sandbox: disk nearly full: the file system holding "+work) || !strings.Contains(out, "inodes") {
		t.Errorf("the step's output does not say the inodes ran out (%v):\n%s", err, out)
	}
}

// TestDiskGuard: each file system is watched once, through any of its
// folders; it trips below its floor (256 MiB, or a twentieth of a small
// one) only when the step has used space since it started.
func TestDiskGuard(t *testing.T) {
	t.Parallel()
	const mib = 1 << 20
	type fs struct {
		id           int32
		total, avail uint64 // MiB
		files, free  uint64 // inodes (0: the file system counts none)
	}
	disks := map[string]*fs{"/big": {1, 100_000, 10_000, 0, 0}, "/big/cache": {1, 100_000, 10_000, 0, 0}, "/small": {2, 64, 60, 0, 0},
		"/nearlyfull": {3, 100_000, 100, 0, 0}, "/inodes": {4, 100_000, 50_000, 4_000_000, 3_000_000}}
	statfs := func(p string, st *unix.Statfs_t) error {
		d, ok := disks[p]
		if !ok {
			return syscall.ENOENT
		}
		*st = unix.Statfs_t{Bsize: mib, Blocks: d.total, Bavail: d.avail, Files: d.files, Ffree: d.free, Fsid: unix.Fsid{Val: [2]int32{d.id, 0}}}
		return nil
	}
	g := newDiskGuard([]string{"/big", "/big/cache", "/small", "/nearlyfull", "/gone", "/inodes"}, statfs)
	if len(g.fss) != 4 || g.fss[0].floor != 256*mib || g.fss[1].floor != 64*mib/20 || g.fss[3].inodeFloor != 1<<16 {
		t.Fatalf("guard = %+v", g.fss)
	}
	if _, _, full := g.check(); full {
		t.Error("tripped with nothing written (a disk below its floor from the start counts only once the step writes)")
	}
	// Written at 50 MiB a look down to 300 MiB, above the floor: at
	// that pace the disk lasts for more than four looks more.
	for disks["/big"].avail > 300 {
		disks["/big"].avail -= 50
		if _, _, full := g.check(); full {
			t.Fatalf("tripped above the floor, at %d MiB", disks["/big"].avail)
		}
	}
	// Several writers at memory speed: 20 MiB gone in one look and 30
	// left, above the floor (3.2 MiB), is full within two looks more.
	disks["/small"].avail = 50
	if _, _, full := g.check(); full {
		t.Error("tripped with 50 MiB left, 10 gone since the last look")
	}
	disks["/small"].avail = 30
	if p, left, full := g.check(); !full || p != "/small" || !strings.HasPrefix(left, "30 MiB (falling 20 MiB in 20ms)") {
		t.Errorf("check = %q, %q, %v; want /small falling by 20 MiB a look with 30 left", p, left, full)
	}
	disks["/small"].avail = 2
	if p, left, full := g.check(); !full || p != "/small" || left != "2 MiB" {
		t.Errorf("check = %q, %q, %v; want /small with 2 MiB left", p, left, full)
	}
	disks["/small"].avail = 60
	disks["/nearlyfull"].avail = 99
	if p, _, full := g.check(); !full || p != "/nearlyfull" {
		t.Errorf("a disk below its floor from the start, written to: %q, %v", p, full)
	}
	disks["/nearlyfull"].avail = 100
	// The attack: millions of empty files (or folders, or links) take
	// no space a block count shows, and leave no inode for anyone.
	disks["/inodes"].free = 70_000
	if _, _, full := g.check(); full {
		t.Error("tripped above the inode floor")
	}
	disks["/inodes"].free = 1_000
	if p, left, full := g.check(); !full || p != "/inodes" || !strings.HasPrefix(left, "1000 inodes") {
		t.Errorf("inodes nearly all taken, 50 GB free: check = %q, %q, %v; want /inodes with 1000 inodes left", p, left, full)
	}
}

// resvspScript reserves 32 MiB in each of five files with the kernel's
// FS_IOC_RESVSP64, FS_IOC_RESVSP and FS_IOC_ZERO_RANGE ioctls (struct
// space_resv: whence and start 0, the length), each in one call, and
// says how many it got; then it stays, as a hog would. (tmpfs answers
// the zero range one with EOPNOTSUPP; ext4 and XFS take it.)
const resvspScript = `/usr/bin/python3 -c '
import fcntl, os, struct
n = 0
for i, cmd in enumerate([0x4030582a, 0x40305828, 0x4030582a, 0x40305828, 0x40305839]):
    fd = os.open("f%d" % i, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.ioctl(fd, cmd, struct.pack("hhxxxxqqiI4i", 0, 0, 0, 32 << 20, 0, 0, 0, 0, 0, 0))
        n += 1
    except OSError as e:
        print("refused:", e)
print("reserved", n, flush=True)
'; sleep 0.5; echo "hog still running"`

// TestRedTeamDiskFillBetweenLooks: the init looks at the disk a step
// writes now and then, and a program fills it between two looks, to the
// last block: the runner's and planex's writes there fail with ENOSPC
// until the step's files are gone. fallocate takes the whole free space
// in one call, at once, each file under the file-size limit; writing
// steadily (1 MiB every 10 ms here) overshot the floor (a twentieth of
// this 128 MiB file system) within the 200 ms between looks. With
// fallocate refused (EOPNOTSUPP, as a file system without it answers:
// posix_fallocate then writes) and the disk looked at every 20 ms, the
// file system keeps space left. A hog that got its space sleeps half a
// second, 25 looks, before it would end by itself. Root mounts the small
// file system.
func TestRedTeamDiskFillBetweenLooks(t *testing.T) {
	needRoot(t)
	s := newSandbox(t)
	// size is the file system's: 128m where a row names none.
	for _, row := range []struct{ name, script, size string }{
		{"fallocate the free space at once", `n=0; for i in 1 2 3 4; do fallocate -l 32M f$i 2>&1 && n=$((n+1)); done; echo "allocated $n"; sleep 0.5; echo "hog still running"`, ""},
		// The kernel's generic preallocation ioctls (FS_IOC_RESVSP,
		// FS_IOC_RESVSP64, FS_IOC_ZERO_RANGE: XFS's, answered for every
		// file system with fallocate) reach the same call by another
		// door.
		{"reserve the free space through the preallocation ioctl", resvspScript, ""},
		// Writers at once, at the speed of memory: past the floor of
		// this small file system and to its last block between two
		// looks 20 ms apart (six writers of 60 MiB into 256 MiB: with
		// four into 128 MiB a look delayed by a loaded machine came
		// after the last block in one full run of three).
		{"several writers at once", `for i in 1 2 3 4 5 6; do head -c 60M /dev/zero > f$i 2>/dev/null & done; wait; echo wrote; sleep 2; echo "hog still running"`, "256m"},
		{"write steadily", `i=0; while head -c 1048576 /dev/zero > f$i 2>/dev/null; do i=$((i+1)); sleep 0.01; done; echo "wrote $i files"; sleep 2; echo "hog still running"`, ""},
	} {
		t.Run(row.name, func(t *testing.T) {
			if strings.Contains(row.script, "/usr/bin/python3") {
				if _, err := os.Stat("/usr/bin/python3"); err != nil {
					t.Skip("the malicious program is a python3 script; no /usr/bin/python3 here")
				}
			}
			work := t.TempDir()
			size := cmp.Or(row.size, "128m")
			if err := syscall.Mount("tmpfs", work, "tmpfs", 0, "size="+size+",mode=0777"); err != nil {
				t.Skipf("mounting a small file system for the worktree: %v", err)
			}
			t.Cleanup(func() { syscall.Unmount(work, syscall.MNT_DETACH) })
			out, err := run(t, s, Policy{Writable: []string{work}, Limits: Limits{FileSize: 64 << 20}}, work, []string{"PATH=" + os.Getenv("PATH")}, row.script)
			var st unix.Statfs_t
			if err := unix.Statfs(work, &st); err != nil {
				t.Fatal(err)
			}
			// The step's files are still there: what is left now is the
			// least there was.
			if left := st.Bavail * uint64(st.Bsize); left < 1<<20 {
				t.Errorf("the step left %d KiB of its file system (%v):\n%s", left>>10, err, out)
			}
		})
	}
}

// TestRedTeamInheritedLimitsCapped: planex started by a root that raised
// its real-time priority, nice, locked memory and message queue limits
// (a service's LimitRTPRIO=99, LimitMEMLOCK=infinity) passed them on to
// every contained program, which could then run at a real-time priority
// (chrt -f 99: a loop that never sleeps keeps a CPU from the runner and
// planex), lock memory the kernel never reclaims, or fill POSIX message
// queues. The test raises them on its own process, as such a root, and
// reads what the contained program gets: the kernel's defaults at most.
// Raising a hard limit needs CAP_SYS_RESOURCE, which this project's test
// machine's root lacks; it skips there, saying so.
func TestRedTeamInheritedLimitsCapped(t *testing.T) {
	t.Parallel()
	raised := []struct {
		res  int
		line string // /proc/self/limits' row, its soft and hard values wanted
	}{
		{unix.RLIMIT_RTPRIO, "Max realtime priority 0 0"},
		{unix.RLIMIT_NICE, "Max nice priority 0 0"},
		{unix.RLIMIT_MEMLOCK, fmt.Sprintf("Max locked memory %d %d bytes", 8<<20, 8<<20)},
		{unix.RLIMIT_MSGQUEUE, fmt.Sprintf("Max msgqueue size %d %d bytes", 800<<10, 800<<10)},
	}
	for _, r := range raised {
		var old unix.Rlimit
		if err := unix.Getrlimit(r.res, &old); err != nil {
			t.Fatal(err)
		}
		high := unix.Rlimit{Cur: max(old.Cur, 1<<30), Max: max(old.Max, 1<<30)}
		if r.res == unix.RLIMIT_RTPRIO || r.res == unix.RLIMIT_NICE {
			high = unix.Rlimit{Cur: 40, Max: 40}
		}
		if err := unix.Setrlimit(r.res, &high); err != nil {
			t.Skipf("raising a hard limit needs CAP_SYS_RESOURCE, which this process lacks: %v", err)
		}
		t.Cleanup(func() { _ = unix.Setrlimit(r.res, &old) })
	}
	s := newSandbox(t)
	out, err := run(t, s, Policy{}, "/", []string{"PATH=" + os.Getenv("PATH")},
		`grep -E '^Max (realtime priority|nice priority|locked memory|msgqueue size)' /proc/self/limits; chrt -f 10 true 2>/dev/null && echo REALTIME`)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	got := strings.Join(strings.Fields(out), " ")
	for _, r := range raised {
		if !strings.Contains(got, r.line) {
			t.Errorf("the program's limits lack %q (planex's raised limit passed through):\n%s", r.line, out)
		}
	}
	if strings.Contains(out, "REALTIME") {
		t.Errorf("the program ran at a real-time priority:\n%s", out)
	}
}

// TestCapInherited: a limit above its cap is lowered to it, soft and
// hard, and one below stays. It runs in a child process (TestCapInheritedHelper),
// since a lowered hard limit cannot be raised again; the caps are below
// this machine's limits, which the red-team test above cannot raise here.
func TestCapInherited(t *testing.T) {
	t.Parallel()
	var memlock unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_MEMLOCK, &memlock); err != nil || memlock.Max < 2<<20 || memlock.Cur < 2<<20 {
		t.Skipf("the locked memory limit here is below 2 MiB already (%+v, %v)", memlock, err)
	}
	var nofile unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &nofile); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestCapInheritedHelper$")
	cmd.Env = append(os.Environ(), "PLANEX_CAP_INHERITED=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	got := strings.Join(strings.Fields(string(out)), " ")
	for _, want := range []string{
		fmt.Sprintf("Max locked memory %d %d bytes", 1<<20, 1<<20),
		fmt.Sprintf("Max msgqueue size %d %d bytes", 4096, 4096),
		// Below its cap: left as it is.
		fmt.Sprintf("Max open files %d %d files", nofile.Cur, nofile.Max),
	} {
		if !strings.Contains(got, want) {
			t.Errorf("limits after capInherited lack %q:\n%s", want, out)
		}
	}
}

// TestCapInheritedHelper lowers its own locked memory and message queue
// limits with capInherited and prints its limits.
func TestCapInheritedHelper(t *testing.T) {
	if os.Getenv("PLANEX_CAP_INHERITED") == "" {
		t.Skip("TestCapInherited's child")
	}
	err := capInherited([]inheritedCap{
		{"locked memory", unix.RLIMIT_MEMLOCK, 1 << 20},
		{"message queue", unix.RLIMIT_MSGQUEUE, 4096},
		{"open files", unix.RLIMIT_NOFILE, 1 << 40},
	})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("/proc/self/limits")
	if err != nil {
		t.Fatal(err)
	}
	fmt.Print(string(b))
}
