//go:build linux

package sandbox

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// limitsArg0 marks planex re-executed, inside the sandbox, to set the
// step's limits on itself and then become the program.
const limitsArg0 = "planex-sandbox-limits"

func init() {
	if len(os.Args) >= 4 && os.Args[0] == limitsArg0 {
		os.Exit(limitsMain(os.Stderr, os.Args[1], os.Args[2], os.Args[3:]))
	}
}

// withLimits makes cmd start through planex's limit setter. The init
// cannot set the limits on itself for its child to inherit: the
// program's processes also count against the init's process limit, so
// the init could then no longer start a thread of its own. /proc/self/exe
// reaches planex's binary even where the new root does not show it.
func withLimits(cmd *exec.Cmd, l Limits) error {
	b, err := json.Marshal(l)
	if err != nil {
		return fmt.Errorf("encoding the limits: %w", err)
	}
	cmd.Args = append([]string{limitsArg0, string(b), cmd.Path}, cmd.Args...)
	cmd.Path = "/proc/self/exe"
	return nil
}

// limitsMain sets the limits, the system call filter
// (syscalls_linux.go) and the Landlock scope (landlock_linux.go), then
// executes the program in its place.
func limitsMain(stderr io.Writer, raw, path string, argv []string) int {
	var l Limits
	if err := json.Unmarshal([]byte(raw), &l); err != nil {
		fmt.Fprintf(stderr, "planex sandbox: reading the limits: %v\n", err)
		return exitSetup
	}
	// The address-space limit comes last, just before the program
	// replaces this one: a Go process reserves much of its address space
	// up front, so once the limit is set the runtime may be unable to grow
	// its heap at all, and an allocation after it (os.Environ, the
	// filter's program, exec's argument lists) killed this helper with
	// "out of memory" before the program started. Everything is allocated
	// before it, and the exec is the raw system call.
	memory := l.Memory
	l.Memory = 0
	if err := applyLimits(l); err != nil {
		fmt.Fprintf(stderr, "planex sandbox: %v\n", err)
		return exitSetup
	}
	preferOOMVictim()
	// Landlock's domain is the thread's: this one makes it and execs.
	runtime.LockOSThread()
	if err := idlePolicy(); err != nil {
		fmt.Fprintf(stderr, "planex sandbox: %v\n", err)
		return exitSetup
	}
	if err := filterSyscalls(); err != nil {
		fmt.Fprintf(stderr, "planex sandbox: %v\n", err)
		return exitSetup
	}
	if err := scopeAbstractSockets(); err != nil {
		fmt.Fprintf(stderr, "planex sandbox: %v\n", err)
		return exitSetup
	}
	err := execWithMemoryLimit(path, argv, os.Environ(), memory)
	fmt.Fprintf(stderr, "planex sandbox: starting %s: %v\n", path, err)
	return 127
}

// The program runs under SCHED_IDLE.
//
// Where planex makes no CPU cgroup for a step (an ordinary user's
// planex: a GitHub-hosted runner's, whose service's cgroup holds the
// runner, planex and every step), the kernel weighs each of the step's
// processes like one of planex's threads or the runner's: a program
// that started a few hundred busy processes (up to its process limit)
// left planex, the init's guards and the runner's listener a few
// thousandths of the CPU, within that cgroup. A SCHED_IDLE task weighs
// 3 where a nice-0 one weighs 1024, and any ordinary task that wakes
// preempts it, so planex and the guards run when they need to however
// many processes the step has, and the step has the CPU otherwise (on a
// runner, nearly always). The policy is inherited by every child, and a
// process may leave it only for a nice value its RLIMIT_NICE allows,
// which is 0 for every contained program (inheritedCaps): none. Where
// the step has a CPU cgroup, or where the kernel groups by session
// (autogroups, in the root CPU cgroup), a group's weight is its own and
// the policy only orders the program's processes among themselves.

// idlePolicy gives the calling thread, which then executes the program,
// the SCHED_IDLE policy. A kernel or emulator that does not know it
// (EINVAL, ENOSYS) leaves the program as it was.
func idlePolicy() error {
	attr := unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_IDLE}
	err := unix.SchedSetAttr(0, &attr, 0)
	if err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOSYS) {
		return fmt.Errorf("setting the program's scheduling policy to SCHED_IDLE: %w", err)
	}
	return nil
}

// execWithMemoryLimit sets the address-space limit (none when memory is
// 0) and executes path in this process's place, allocating nothing
// between the two. It returns only on failure.
func execWithMemoryLimit(path string, argv, env []string, memory int64) error {
	name, err := syscall.BytePtrFromString(path)
	if err != nil {
		return err
	}
	args, err := syscall.SlicePtrFromStrings(argv)
	if err != nil {
		return err
	}
	envp, err := syscall.SlicePtrFromStrings(env)
	if err != nil {
		return err
	}
	lim := &unix.Rlimit{Cur: uint64(memory), Max: uint64(memory)}
	if memory > 0 {
		if err := unix.Setrlimit(unix.RLIMIT_AS, lim); err != nil {
			return fmt.Errorf("setting the memory limit to %d: %w", memory, err)
		}
	}
	_, _, errno := syscall.RawSyscall(syscall.SYS_EXECVE, uintptr(unsafe.Pointer(name)),
		uintptr(unsafe.Pointer(&args[0])), uintptr(unsafe.Pointer(&envp[0])))
	return errno
}

// coreLimit is the core size limit of every contained program: 1 byte,
// not 0. Below a page no core file is written, and 1 is the value the
// kernel takes to mean "no dump" for a core_pattern pipe too (0 still
// starts the pipe's handler, as root on the host, for the crash of a
// program the agent wrote). The system call filter keeps the program
// from lowering it to 0.
const coreLimit = 1

// applyLimits sets l on this process, soft and hard alike, so that
// neither it nor what it starts can raise them. Core dumps are always
// off: a dump holds the memory of a process that may hold a key, in a
// file the next step could read, and a pipe handler would run on the
// host.
func applyLimits(l Limits) error {
	if err := unix.Setrlimit(unix.RLIMIT_CORE, &unix.Rlimit{Cur: coreLimit, Max: coreLimit}); err != nil {
		return fmt.Errorf("turning core dumps off: %w", err)
	}
	if err := capInherited(inheritedCaps()); err != nil {
		return err
	}
	for _, r := range []struct {
		name string
		res  int
		v    int64
	}{{"file size", unix.RLIMIT_FSIZE, l.FileSize}, {"process", unix.RLIMIT_NPROC, l.Processes}, {"memory", unix.RLIMIT_AS, l.Memory}} {
		if r.v <= 0 {
			continue
		}
		if err := unix.Setrlimit(r.res, &unix.Rlimit{Cur: uint64(r.v), Max: uint64(r.v)}); err != nil {
			return fmt.Errorf("setting the %s limit to %d: %w", r.name, r.v, err)
		}
	}
	return nil
}

// inheritedCaps lists the limits a step would otherwise take from planex
// as they are, with the most each may be: a root that raised them (a
// service manager's LimitRTPRIO=, LimitMEMLOCK=infinity, a CI image's
// limits.conf) passed them on to every contained program.
//   - RLIMIT_RTPRIO 0: a real-time priority (SCHED_FIFO, SCHED_RR) lets
//     a program that never sleeps keep a CPU from every other process of
//     the machine, the runner's and planex's among them;
//   - RLIMIT_NICE 0: no nice value below the one it started with, so it
//     cannot go ahead of them either;
//   - RLIMIT_MEMLOCK 8 MiB (the kernel's default): memory locked with
//     mlock is never swapped out nor given back under pressure;
//   - RLIMIT_MSGQUEUE 800 KiB (the kernel's default): POSIX message
//     queues' bytes, kernel memory counted per user, not per step.
//
// A limit already lower stays as it is.
func inheritedCaps() []inheritedCap {
	return []inheritedCap{
		{"real-time priority", unix.RLIMIT_RTPRIO, 0},
		{"nice", unix.RLIMIT_NICE, 0},
		{"locked memory", unix.RLIMIT_MEMLOCK, 8 << 20},
		{"message queue", unix.RLIMIT_MSGQUEUE, 800 << 10},
	}
}

// inheritedCap is one limit of inheritedCaps: its name for errors, its
// resource and the most it may be.
type inheritedCap struct {
	name string
	res  int
	most uint64
}

// capInherited lowers each limit of caps to its most, soft and hard
// alike, where it is higher.
func capInherited(caps []inheritedCap) error {
	for _, c := range caps {
		var cur unix.Rlimit
		if err := unix.Getrlimit(c.res, &cur); err != nil {
			return fmt.Errorf("reading the %s limit: %w", c.name, err)
		}
		want := unix.Rlimit{Cur: min(cur.Cur, c.most), Max: min(cur.Max, c.most)}
		if want == cur {
			continue
		}
		if err := unix.Setrlimit(c.res, &want); err != nil {
			return fmt.Errorf("lowering the %s limit to %d: %w", c.name, c.most, err)
		}
	}
	return nil
}

// preferOOMVictim makes this process, and all it starts, the kernel's
// first choice when the machine runs out of memory (oom_score_adj 1000,
// which any process may raise its own to). A step has no total memory
// limit, and what it keeps in its /tmp (a tmpfs) counts for no process:
// the largest process was killed, planex or the runner itself. A program
// may lower its score again, to 0, where it competes as before. Best
// effort: a /proc that refuses the write changes nothing else.
func preferOOMVictim() {
	_ = os.WriteFile("/proc/self/oom_score_adj", []byte("1000"), 0)
}

// watchInterval is how often the init looks at the step's processes.
const watchInterval = 200 * time.Millisecond

// diskInterval is how often it looks at the disk the step writes: a
// program writing steadily took the last 6 MiB past the floor of a
// small file system within one watchInterval, and a fast disk takes
// hundreds of MiB in that time (TestRedTeamDiskFillBetweenLooks). A look
// is one statfs per file system, a few microseconds.
const diskInterval = watchInterval / 10

// watcher follows how many tasks the step has and the largest address
// space among them, from the namespace's own /proc, until stopped, and
// calls end (endStep in the init) once when the step holds more
// descriptors than it may (fileGuard), has filled a file system it
// writes (diskGuard), holds System V memory past its caps (sysvGuard),
// more terminals (ptyGuard) or epoll watches (epollGuard) than it may,
// or when the machine's memory
// (memGuard) or network buffers (netMemGuard) run low.
type watcher struct {
	stop chan struct{}
	done chan usage
}

// watchPlan is what a watcher guards: the step's limits, the folders it
// writes, its System V shared memory cap in bytes (0: its System V
// memory is not watched), the memory guard's floor (0: memGuard's own),
// the terminal guard's (0: ptyGuard's own), the machine's low marks of
// network memory, the epoll watches it may hold (0: not watched),
// whether its user's room for more watches is probed (the program has
// the init's user on the host), and what ends the step.
type watchPlan struct {
	limits    Limits
	writable  []string
	shmCap    uint64
	memFloor  int64
	ptyFloor  int64
	fileFloor int64
	netMem    netMemLimits
	epoll     int64
	epollRoom bool
	end       func()
}

// guards are the init's looks at one step.
type guards struct {
	files *fileGuard
	disk  *diskGuard
	sysv  sysvGuard
	ptys  *ptyGuard
	mem   *memGuard
	net   *netMemGuard
}

// fast looks at what a step can take within one watchInterval (its
// disks, the machine's memory and network buffers), records in u the
// first time each is past its bound, and reports whether one is.
func (g guards) fast(u *usage) (past bool) {
	if p, left, full := g.disk.check(); full && u.diskFull == "" {
		u.diskFull, u.diskLeft, past = p, left, true
	}
	if left, low := g.mem.check(); low && u.memLeft == 0 {
		u.memLeft, past = left, true
	}
	if proto, pages := g.net.check(); proto != "" && u.netMemProto == "" {
		u.netMemProto, u.netMemBytes, past = proto, pages*int64(os.Getpagesize()), true
	}
	return past
}

// slow looks at the step's processes (recording their tasks and largest
// address space in u), descriptors, System V memory and terminals, and
// reports whether one is past its bound the first time.
func (g guards) slow(u *usage) (past bool) {
	tasks, mem := sampleProcs("/proc")
	u.tasks = max(u.tasks, tasks)
	u.peakMemory = max(u.peakMemory, mem)
	if v := g.files.check(); (v.held > 0 || v.low) && u.openFiles == 0 && !u.fileTableLow {
		u.openFiles, u.openFilesLimit, u.fileTableLow, u.fileTableLeft, past = v.held, g.files.limit, v.low, v.left, true
	}
	if what := g.sysv.check(); what != "" && u.sysvPast == "" {
		u.sysvPast, past = what, true
	}
	if v := g.ptys.check(); (v.held > 0 || v.low) && u.ptys == 0 && !u.ptyPoolLow {
		u.ptys, u.ptyLimit, u.ptyPoolLow, u.ptyPoolLeft, past = v.held, ptyDescriptors, v.low, v.left, true
	}
	return past
}

func watch(p watchPlan) *watcher {
	w := &watcher{stop: make(chan struct{}), done: make(chan usage, 1)}
	g := guards{
		files: newFileGuard("/proc", p.limits.OpenFiles, p.fileFloor),
		disk:  newDiskGuard(p.writable, unix.Statfs),
		sysv:  sysvGuard{proc: "/proc", shmCap: p.shmCap},
		ptys:  newPtyGuard("/proc", p.ptyFloor),
		mem:   newMemGuard(os.DirFS("/"), p.memFloor),
		net:   newNetMemGuard("/proc/net/sockstat", p.netMem),
	}
	// The epoll watches are counted apart: a count can take seconds
	// (epoll_linux.go), which must not hold up the looks above.
	var room func() bool
	if p.epollRoom {
		// The probe's descriptors stay open as long as the init.
		if probe, err := newRoomProbe(); err == nil {
			room = probe.room
		}
	}
	epoll := newEpollGuard("/proc", p.epoll, room)
	go epoll.run(w.stop, p.end)
	go func() {
		var u usage
		t := time.NewTicker(diskInterval)
		defer t.Stop()
		for tick := 0; ; tick++ {
			if g.fast(&u) {
				p.end()
			}
			if tick%int(watchInterval/diskInterval) == 0 && g.slow(&u) {
				p.end()
			}
			select {
			case <-w.stop:
				// What the program left running is still there: one
				// last look.
				tasks, mem := sampleProcs("/proc")
				u.tasks = max(u.tasks, tasks)
				u.peakMemory = max(u.peakMemory, mem)
				u.epollWatches, u.epollLimit, u.epollSpent = epoll.past()
				w.done <- u
				return
			case <-t.C:
			}
		}
	}()
	return w
}

// endStep, in the init, kills every process of its PID namespace but
// itself: the step ends, and its descriptors are closed. Anywhere but as
// a namespace's first process it does nothing (kill(-1) there would
// reach every process the caller may signal).
func endStep() {
	if os.Getpid() == 1 {
		_ = syscall.Kill(-1, syscall.SIGKILL)
	}
}

// fileGuard watches the machine's file table for one step: limit is
// the most descriptors the step may hold (its OpenFiles, at most a
// quarter of fs.file-max; 0 watches nothing), base the table's count
// when the step started, max the table's size and floor what must stay
// free of it.
//
// A file stays in the table while anything holds it, and a descriptor
// is only one of those: a file mapped into memory (mmap) and its
// descriptor closed, or sent in flight through a Unix socket
// (SCM_RIGHTS) and closed, is in no process's descriptors. A program
// that mapped files so (up to vm.max_map_count, 65530, in each of its
// processes) filled the table unseen. So the guard also ends a step
// that has grown the table by more than its limit once less than the
// floor is left (a quarter of the table), whoever holds the files, as
// the terminal guard does with terminals parked in flight.
type fileGuard struct {
	proc  string
	limit int64
	base  int64
	max   int64
	floor int64
}

// fileVerdict is what one look of fileGuard found: the descriptors the
// step held past its limit (0: not past it), or the table low (the
// files left in it).
type fileVerdict struct {
	held int64
	low  bool
	left int64
}

// newFileGuard starts watching for a step limited to openFiles, under
// the /proc at proc; floor, when not 0, replaces a quarter of the table
// as what must stay free of it.
func newFileGuard(proc string, openFiles, floor int64) *fileGuard {
	g := &fileGuard{proc: proc}
	if openFiles <= 0 {
		return g // off
	}
	g.limit = openFiles
	g.max = readFirstInt(filepath.Join(proc, "sys", "fs", "file-max"))
	if g.max > 0 {
		g.limit = min(g.limit, max(g.max/4, minOpenFiles))
	}
	g.floor = g.max / 4
	if floor != 0 {
		g.floor = floor
	}
	g.base = readFirstInt(filepath.Join(proc, "sys", "fs", "file-nr"))
	return g
}

// check reports the descriptors the step holds when that is more than
// its limit, else whether the table is low. It counts descriptors only
// when the machine's table has grown by half the limit since the step
// started (a step that holds more must have opened them), and finds the
// table low when it has grown by more than the limit and has less than
// the floor left.
func (g *fileGuard) check() fileVerdict {
	if g.limit == 0 {
		return fileVerdict{}
	}
	now := readFirstInt(filepath.Join(g.proc, "sys", "fs", "file-nr"))
	if now-g.base <= g.limit/2 {
		return fileVerdict{}
	}
	if n := countDescriptors(g.proc, g.limit); n > g.limit {
		return fileVerdict{held: n}
	}
	if left := g.max - now; g.max > 0 && now-g.base > g.limit && left < g.floor {
		return fileVerdict{low: true, left: left}
	}
	return fileVerdict{}
}

// countDescriptors counts the open descriptors of the processes under
// proc but the init, stopping once past limit.
func countDescriptors(proc string, limit int64) int64 {
	return countPerProcess(proc, limit, descriptorsOf)
}

// countPerProcess adds up what count finds in the fd folder of each
// process under proc but the init, stopping once past limit; count is
// given what is left of the limit.
func countPerProcess(proc string, limit int64, count func(fdDir string, limit int64) int64) int64 {
	ents, err := os.ReadDir(proc)
	if err != nil {
		return 0
	}
	var n int64
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil || e.Name() == "1" {
			continue
		}
		n += count(filepath.Join(proc, e.Name(), "fd"), limit-n)
		if n > limit {
			break
		}
	}
	return n
}

// descriptorsOf counts the descriptors listed in the fd folder dir,
// stopping once past limit.
func descriptorsOf(dir string, limit int64) int64 {
	f, err := os.Open(dir)
	if err != nil {
		return 0
	}
	defer f.Close()
	var n int64
	for n <= limit {
		names, err := f.Readdirnames(1024)
		n += int64(len(names))
		if err != nil {
			break
		}
	}
	return n
}

// readFirstInt reads the first number of a /proc file (file-nr holds
// three), or 0.
func readFirstInt(p string) int64 {
	b, err := os.ReadFile(p)
	if err != nil {
		return 0
	}
	f := bytes.Fields(b)
	if len(f) == 0 {
		return 0
	}
	n, _ := strconv.ParseInt(string(f[0]), 10, 64)
	return n
}

// finish stops the watcher and returns what it saw, with the program's
// status.
func (w *watcher) finish(status int) usage {
	close(w.stop)
	u := <-w.done
	u.status = status
	return u
}

// sampleProcs counts the tasks (threads) of every process under proc but
// the init (pid 1), and returns the largest VmPeak among them, in bytes.
func sampleProcs(proc string) (tasks, peak int64) {
	ents, err := os.ReadDir(proc)
	if err != nil {
		return 0, 0
	}
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil || e.Name() == "1" {
			continue
		}
		// A process caught starting or ending still counts, as one.
		b, _ := os.ReadFile(filepath.Join(proc, e.Name(), "status"))
		threads, vmPeak := parseStatus(b)
		tasks += max(threads, 1)
		peak = max(peak, vmPeak)
	}
	return tasks, peak
}

// parseStatus reads Threads and VmPeak (in bytes) from a
// /proc/<pid>/status.
func parseStatus(b []byte) (threads, vmPeak int64) {
	eachProcNumber(b, func(key string, n int64) {
		switch key {
		case "Threads":
			threads = n
		case "VmPeak":
			vmPeak = n
		}
	})
	return threads, vmPeak
}

// eachProcNumber calls f with each "Key: number [kB]" line of a /proc
// file (status, meminfo), the number in bytes when its unit is kB.
func eachProcNumber(b []byte, f func(key string, n int64)) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		key, val, ok := bytes.Cut(sc.Bytes(), []byte(":"))
		if !ok {
			continue
		}
		fs := bytes.Fields(val)
		if len(fs) == 0 {
			continue
		}
		n, err := strconv.ParseInt(string(fs[0]), 10, 64)
		if err != nil {
			continue
		}
		if len(fs) > 1 && string(fs[1]) == "kB" {
			n <<= 10
		}
		f(string(key), n)
	}
}

// reportLimits tells the step's error output which limits the step hit.
func reportLimits(w io.Writer, l Limits, u usage) {
	for _, h := range limitsHit(l, u) {
		fmt.Fprintf(w, "planex sandbox: %s (--sandbox-limits, docs/security.md)\n", h)
	}
}
