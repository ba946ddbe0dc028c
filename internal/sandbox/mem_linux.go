//go:build linux

package sandbox

import (
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
)

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
//
// What it cannot tell: memory taken faster than between two looks (a
// GiB in 20 ms takes many cores) still reaches the killer, and which
// process took it: every step running when the memory runs low, and
// that saw it fall, is ended, each by its own init, as the killer would
// have ended one of them.

// Bounds of the floor: a thirty-second of the machine's memory, at least
// memFloorLeast and at most memFloorMost; memSlack is how far below what
// was left at the step's start the memory must fall, so that a machine
// already short of memory does not end every step it starts.
const (
	memFloorLeast = 128 << 20
	memFloorMost  = 1 << 30
	memSlack      = 64 << 20
)

// memGuard watches the machine's memory and swap left for one step, and
// that of the memory cgroups planex runs in that have a limit (levels).
type memGuard struct {
	fsys   fs.FS
	levels []memCgroup
	floor  int64
	start  int64
}

// newMemGuard starts watching, in fsys (the machine's root: its
// proc/meminfo, proc/self/cgroup and sys/fs/cgroup), with floor or,
// when floor is 0, a thirty-second of the memory the step may take (the
// machine's, or the smallest limit of its cgroups) within the bounds
// above.
func newMemGuard(fsys fs.FS, floor int64) *memGuard {
	g := &memGuard{fsys: fsys, floor: floor}
	b, err := fs.ReadFile(fsys, "proc/meminfo")
	if err != nil {
		return g
	}
	g.levels = memCgroups(fsys)
	if g.floor == 0 {
		total := memoryTotal(b)
		for _, l := range g.levels {
			total = min(total, l.limit)
		}
		g.floor = min(max(total/32, memFloorLeast), memFloorMost)
	}
	g.start = g.left(b)
	return g
}

// left is the least of what the machine (meminfo) and each limited
// cgroup have left, in bytes.
func (g *memGuard) left(meminfo []byte) int64 {
	left := memoryLeft(meminfo)
	swapFree := swapFree(meminfo)
	for _, l := range g.levels {
		if n, ok := l.left(g.fsys, swapFree); ok {
			left = min(left, n)
		}
	}
	return left
}

// check returns what is left, in bytes, and whether that is below the
// floor and at least memSlack below the step's start.
func (g *memGuard) check() (left int64, low bool) {
	if g.start == 0 {
		return 0, false // nothing read at the start
	}
	b, err := fs.ReadFile(g.fsys, "proc/meminfo")
	if err != nil {
		return 0, false
	}
	left = g.left(b)
	return left, left < g.floor && left+memSlack < g.start
}

// swapFree is a /proc/meminfo's SwapFree, in bytes.
func swapFree(meminfo []byte) (free int64) {
	eachProcNumber(meminfo, func(key string, n int64) {
		if key == "SwapFree" {
			free = n
		}
	})
	return free
}

// Memory cgroups.
//
// In a container or a pod with a memory limit (docker --memory, a
// Kubernetes runner's limits) /proc/meminfo still shows the machine, and
// the limit runs out first: the kernel then ends a process of the
// cgroup, chosen as on the machine, planex or the runner where the
// program lowered its score. planex uses no cgroup of its own, so a step's
// processes are charged to planex's cgroups, and the guard reads each of
// them that has a limit as it reads the machine.

// memCgroup is one cgroup planex is in that has a memory limit: its
// folder under fsys, whether it is of the first cgroup version (file
// names differ), and its limit in bytes.
type memCgroup struct {
	dir   string
	v1    bool
	limit int64
}

// cgroupRoot is where the cgroup file systems are mounted, under fsys.
const cgroupRoot = "sys/fs/cgroup"

// maxCgroupDepth bounds the levels walked up from planex's cgroup.
const maxCgroupDepth = 64

// memCgroups lists the cgroups with a memory limit of the process
// reading fsys's proc/self/cgroup, from its own up: of the unified
// hierarchy (0::/path, at sys/fs/cgroup) and of the first version's
// memory controller (N:memory:/path, at sys/fs/cgroup/memory). A cgroup
// whose folder is not there (a container shown another's paths) is
// skipped.
func memCgroups(fsys fs.FS) []memCgroup {
	b, err := fs.ReadFile(fsys, "proc/self/cgroup")
	if err != nil {
		return nil
	}
	var out []memCgroup
	for _, line := range strings.Split(string(b), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		switch {
		case parts[0] == "0" && parts[1] == "":
			out = append(out, limitedLevels(fsys, cgroupRoot, parts[2], false)...)
		case slices.Contains(strings.Split(parts[1], ","), "memory"):
			out = append(out, limitedLevels(fsys, path.Join(cgroupRoot, "memory"), parts[2], true)...)
		}
	}
	return out
}

// limitedLevels walks from the cgroup rel of the hierarchy mounted at
// base up to base, and returns the levels with a memory limit.
func limitedLevels(fsys fs.FS, base, rel string, v1 bool) []memCgroup {
	var out []memCgroup
	dir := path.Join(base, path.Clean("/"+rel))
	for range maxCgroupDepth {
		limitFile := "memory.max"
		if v1 {
			limitFile = "memory.limit_in_bytes"
		}
		if limit, ok := readLimit(fsys, path.Join(dir, limitFile)); ok {
			out = append(out, memCgroup{dir: dir, v1: v1, limit: limit})
		}
		if dir == base {
			break
		}
		dir = path.Dir(dir)
	}
	return out
}

// unlimited is where a first-version cgroup's limits start to mean none
// (it writes 9223372036854771712, a page short of the largest int64).
const unlimited = int64(1) << 62

// readLimit reads a limit file: a number below unlimited is a limit;
// "max", a larger number or no file is none.
func readLimit(fsys fs.FS, name string) (int64, bool) {
	n, ok := readNumber(fsys, name)
	return n, ok && n < unlimited
}

// readNumber reads the one number of a cgroup file.
func readNumber(fsys fs.FS, name string) (int64, bool) {
	b, err := fs.ReadFile(fsys, name)
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return n, err == nil
}

// left is what the cgroup has left: its limit less what it uses, plus
// what it holds that the kernel gives back before it ends a process
// (givenBack) and the swap it may still use, at most swapFree, the
// machine's. ok is false when its use cannot be read.
func (c memCgroup) left(fsys fs.FS, swapFree int64) (int64, bool) {
	usage, swap := "memory.current", "memory.swap.max"
	if c.v1 {
		usage, swap = "memory.usage_in_bytes", "memory.memsw.limit_in_bytes"
	}
	used, ok := readNumber(fsys, path.Join(c.dir, usage))
	if !ok {
		return 0, false
	}
	left := c.limit - used
	stat, _ := fs.ReadFile(fsys, path.Join(c.dir, "memory.stat"))
	eachStat(stat, func(key string, n int64) {
		if givenBack(key, c.v1) {
			left += n
		}
	})
	return left + c.swapRoom(fsys, swap, swapFree, c.limit-used), true
}

// givenBack reports whether a memory.stat key counts memory the kernel
// reclaims before it ends a process: the file cache (the hierarchy's
// totals in the first version) and, in the second, reclaimable slab.
func givenBack(key string, v1 bool) bool {
	if v1 {
		return key == "total_inactive_file" || key == "total_active_file"
	}
	return key == "inactive_file" || key == "active_file" || key == "slab_reclaimable"
}

// swapRoom is the swap the cgroup may still use, at most swapFree: all
// of it where its swap is not limited (or not counted); what its
// memory.swap.max leaves (v2), or what its memory and swap limit leaves
// beyond memLeft (v1).
func (c memCgroup) swapRoom(fsys fs.FS, swapFile string, swapFree, memLeft int64) int64 {
	limit, ok := readLimit(fsys, path.Join(c.dir, swapFile))
	if !ok {
		return swapFree
	}
	used := "memory.swap.current"
	if c.v1 {
		used = "memory.memsw.usage_in_bytes"
	}
	n, ok := readNumber(fsys, path.Join(c.dir, used))
	if !ok {
		return 0
	}
	room := limit - n
	if c.v1 {
		room -= memLeft
	}
	return max(min(swapFree, room), 0)
}

// eachStat calls f with each "key number" line of a memory.stat.
func eachStat(b []byte, f func(key string, n int64)) {
	for _, line := range strings.Split(string(b), "\n") {
		key, val, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		if n, err := strconv.ParseInt(val, 10, 64); err == nil {
			f(key, n)
		}
	}
}
