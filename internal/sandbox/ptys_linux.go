//go:build linux

package sandbox

import (
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// The kernel counts pseudo-terminals once for the whole machine
// (kernel.pty.max, 4096 by default), and every devpts but the host's
// first shares all of them but kernel.pty.reserve (1024): every
// container's, every other step's. A step that opened them until none
// was left (3071 on the machine tested, in well under a second) had
// every container's terminal (docker run -t, ssh into one, a CLI's shell
// tool in another step) fail with ENOSPC while it ran.
//
// The step's own /dev/pts gives at most maxPtys. A devpts is one of the
// file systems a user namespace's root may mount, so a program making
// user and mount namespaces of its own mounts one without that bound:
// the init's watcher (ptyGuard) ends a step whose processes hold more
// than ptyDescriptors descriptors of terminals, wherever they were made.
// A terminal lives while either of its ends is open, so a step holds at
// most as many as it has such descriptors; one using maxPtys terminals
// through both ends stays within the bound.
//
// But a descriptor sent through a Unix socket and not received
// (SCM_RIGHTS) is in flight, in no process's table, and its terminal
// lives on: a program parked them so, as many as its descriptor limit
// allows (20,000 here), and the count of descriptors saw none. So the
// guard also watches the pool itself: a step that has seen the machine's
// count grow by more than ptyDescriptors since it started is ended once
// what the pool has left for containers falls below a quarter of it
// (ptyPoolFloor). Whoever took them, the step is ended then, as the
// memory guard ends it when another process takes the memory.
const (
	maxPtys        = 64
	ptyDescriptors = 2 * maxPtys
)

// Device numbers of terminals: every devpts's ptmx is 5:2 (what a
// terminal's controlling end opens as), and the other ends are
// UNIX98_PTY_SLAVE_MAJOR's 136 and the seven majors after it.
const (
	ptmxMajor, ptmxMinor = 5, 2
	ptsMajorFirst        = 136
	ptsMajorLast         = 143
)

// ptyGuard watches the machine's count of terminals for one step: base
// is the lowest kernel.pty.nr seen since the step started (others on the
// machine closing terminals lower it, so what the step opens after that
// is growth all the same), floor the terminals the pool must keep for
// containers (ptyPoolFloor).
type ptyGuard struct {
	proc  string
	base  int64
	floor int64
	looks int
}

// ptyFullLookEvery is how often, in looks, the step's terminal
// descriptors are counted whatever the machine's count did: others
// giving terminals back between two looks while the step opens as many
// hide the growth, for at most this many looks.
const ptyFullLookEvery = 10

// newPtyGuard starts watching under the /proc at proc, with floor or,
// when floor is 0, ptyPoolFloor.
func newPtyGuard(proc string, floor int64) *ptyGuard {
	g := &ptyGuard{proc: proc, base: readFirstInt(filepath.Join(proc, "sys", "kernel", "pty", "nr")), floor: floor}
	if g.floor == 0 {
		g.floor = ptyPoolFloor(proc)
	}
	return g
}

// ptyPoolFloor is a quarter of the terminals the machine's pool gives
// every devpts but the host's first (kernel.pty.max less its reserve).
func ptyPoolFloor(proc string) int64 {
	dir := filepath.Join(proc, "sys", "kernel", "pty")
	return (readFirstInt(filepath.Join(dir, "max")) - readFirstInt(filepath.Join(dir, "reserve"))) / 4
}

// ptyVerdict is what one look of a ptyGuard found: held, the terminal
// descriptors the step holds when that is past ptyDescriptors (else 0);
// low, the pool below its floor after the step saw it grow by more than
// ptyDescriptors, with left what it had left.
type ptyVerdict struct {
	held, left int64
	low        bool
}

// check looks at the step's terminals when the machine's count has
// grown by more than half of ptyDescriptors from the lowest it was since
// the step started (a step that holds more must have opened them), and
// every ptyFullLookEvery looks in any case. Then it counts the step's
// terminal descriptors, and, within the bound, what the pool has left.
func (g *ptyGuard) check() ptyVerdict {
	nr := readFirstInt(filepath.Join(g.proc, "sys", "kernel", "pty", "nr"))
	g.base = min(g.base, nr)
	grown := nr - g.base
	g.looks++
	if grown <= ptyDescriptors/2 && g.looks%ptyFullLookEvery != 0 {
		return ptyVerdict{}
	}
	if n := countPtyDescriptors(g.proc, ptyDescriptors); n > ptyDescriptors {
		return ptyVerdict{held: n}
	}
	left := ptyPoolLeft(g.proc)
	return ptyVerdict{left: left, low: grown > ptyDescriptors && left < g.floor}
}

// countPtyDescriptors counts the descriptors of terminals the processes
// under proc but the init hold, stopping once past limit.
func countPtyDescriptors(proc string, limit int64) int64 {
	return countPerProcess(proc, limit, ptyDescriptorsOf)
}

// ptyDescriptorsOf counts the terminals among the descriptors listed in
// the fd folder dir, stopping once past limit. Every descriptor of a
// file with a path is asked for its device, whatever its name: a
// program bound its devpts's ptmx over a file of another name
// (notes.txt), and the descriptors it opened there were named so. The
// attributes are those the kernel holds (AT_STATX_DONT_SYNC), so a file
// of a FUSE file system the program serves itself, or of a slow network
// one, is never asked for them and cannot stall the look.
func ptyDescriptorsOf(dir string, limit int64) int64 {
	f, err := os.Open(dir)
	if err != nil {
		return 0
	}
	defer f.Close()
	var n int64
	for n <= limit {
		names, err := f.Readdirnames(1024)
		for _, name := range names {
			p := filepath.Join(dir, name)
			// Pipes, sockets and anonymous files have no path.
			if target, err := os.Readlink(p); err != nil || !strings.HasPrefix(target, "/") {
				continue
			}
			var st unix.Statx_t
			if unix.Statx(unix.AT_FDCWD, p, unix.AT_STATX_DONT_SYNC, unix.STATX_TYPE, &st) == nil && isPty(uint32(st.Mode), st.Rdev_major, st.Rdev_minor) {
				n++
			}
		}
		if err != nil {
			break
		}
	}
	return n
}

// isPty reports whether a file of mode and device number major:minor
// is a terminal's end.
func isPty(mode, major, minor uint32) bool {
	if mode&unix.S_IFMT != unix.S_IFCHR {
		return false
	}
	return major == ptmxMajor && minor == ptmxMinor || major >= ptsMajorFirst && major <= ptsMajorLast
}

// ptyPoolLeft is how many terminals the machine's pool still gives
// every devpts but the host's first (kernel.pty.max less its reserve and
// those open), under the /proc at proc.
func ptyPoolLeft(proc string) int64 {
	dir := filepath.Join(proc, "sys", "kernel", "pty")
	return readFirstInt(filepath.Join(dir, "max")) - readFirstInt(filepath.Join(dir, "reserve")) - readFirstInt(filepath.Join(dir, "nr"))
}
