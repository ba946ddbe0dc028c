//go:build linux

package sandbox

// memoryLeft is what a /proc/meminfo says the machine has left, in
// bytes: the memory available without swapping, and the swap free.
// It is read every diskInterval (20 ms), so it keeps no map of the fields.
func memoryLeft(meminfo []byte) (left int64) {
	eachProcNumber(meminfo, func(key string, n int64) {
		if key == "MemAvailable" || key == "SwapFree" {
			left += n
		}
	})
	return left
}

// memoryTotal is a /proc/meminfo's MemTotal, in bytes.
func memoryTotal(meminfo []byte) (total int64) {
	eachProcNumber(meminfo, func(key string, n int64) {
		if key == "MemTotal" {
			total = n
		}
	})
	return total
}

// Memory no process's resident size counts.
//
// When the machine runs out of memory the kernel's OOM killer ends the
// process with the largest resident size, weighed by its oom_score_adj.
// A contained program can hold memory that no resident size counts: a
// memfd it writes without mapping, a tmpfs of any size or a ramfs it
// mounts as root of user and mount namespaces of its own. Where planex
// sets every contained process's score floor at 1000 (root with
// CAP_SYS_RESOURCE: oom_linux.go) the holder is still chosen first; where
// it cannot (an ordinary user, a root without that capability) the
// program lowers its score to 0, and the killer ended planex or the
// runner instead. So the init looks at the machine's memory as it looks
// at its disks, every 20 ms, and ends the step once the memory and swap
// left fall below a floor and the step has seen them fall: the killer
// would have ended one of its processes next anyway, as long as they
// keep the score they started with.

// Bounds of the floor: a thirty-second of the machine's memory, at least
// memFloorLeast and at most memFloorMost; memSlack is how far below what
// was left at the step's start the memory must fall, so that a machine
// already short of memory does not end every step it starts.
const (
	memFloorLeast = 128 << 20
	memFloorMost  = 1 << 30
	memSlack      = 64 << 20
)

// memGuard watches the machine's memory and swap left for one step.
type memGuard struct {
	read  func() ([]byte, error)
	floor int64
	start int64
}

// newMemGuard starts watching what read returns (a /proc/meminfo) with
// floor, or, when floor is 0, a thirty-second of the machine's memory
// within the bounds above.
func newMemGuard(read func() ([]byte, error), floor int64) *memGuard {
	g := &memGuard{read: read, floor: floor}
	b, err := read()
	if err != nil {
		return g
	}
	if g.floor == 0 {
		g.floor = min(max(memoryTotal(b)/32, memFloorLeast), memFloorMost)
	}
	g.start = memoryLeft(b)
	return g
}

// check returns what is left, in bytes, and whether that is below the
// floor and at least memSlack below the step's start.
func (g *memGuard) check() (left int64, low bool) {
	if g.start == 0 {
		return 0, false // nothing read at the start
	}
	b, err := g.read()
	if err != nil {
		return 0, false
	}
	left = memoryLeft(b)
	return left, left < g.floor && left+memSlack < g.start
}
