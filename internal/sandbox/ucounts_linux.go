//go:build linux

package sandbox

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// The kernel counts some of what a process makes against its user on
// the host, whichever user namespace makes it: each user namespace
// keeps a count per user and a maximum (/proc/sys/user/max_*), and a
// thing made counts in the maker's namespace and in every one above it,
// against each one's maximum. A contained program's inotify instances
// therefore counted against planex's user (root, or the runner user) on
// the host, where 128 is the default: a program that made them until it
// could not left every other process of that user (systemd, the runner,
// planex, another step) without one while it ran. The same holds for
// inotify watches, fanotify groups and marks, and namespaces.
//
// A fresh namespace allows any number, so the init, which holds every
// capability over its own, sets its namespace's maximum of each to a
// quarter of what planex's namespace allows: whatever the program does
// (a namespace of its own included, which counts against the init's
// too), its step makes at most that, and the user keeps the rest.

// stepCountShare is the part of each count a step may use (1/n).
const stepCountShare = 4

// One count is set to none: cgroup namespaces. The sandbox makes no
// cgroup of its own, so a step runs in planex's cgroup, and a program
// that made user, mount and cgroup namespaces (unshare -UrmC) could
// mount the cgroup2 file system there, rooted at that cgroup, which is
// the program's to write wherever its files are the program's user's: a
// desktop session delegates each terminal's and application's cgroup
// to its user (systemd --user). Run by that user, a program wrote
// cgroup.kill (ending planex and every process of the user's terminal,
// its shell and editor among them), cgroup.freeze (stopping them all) or
// the memory and process limits of them all. A program can make no
// cgroup namespace in a namespace whose maximum is 0, nor in any below,
// and without one it holds no right to mount a cgroup file system (the
// host's cgroup tree stays bound read-only). Nested sandboxes still make
// every other namespace.
const noCgroupNamespaces = "max_cgroup_namespaces"

// kernelCountNames are the counts of /proc/sys/user each step is held
// to a share of.
var kernelCountNames = []string{
	"max_inotify_instances", "max_inotify_watches",
	"max_fanotify_groups", "max_fanotify_marks",
	"max_user_namespaces", "max_mnt_namespaces", "max_pid_namespaces",
	"max_net_namespaces", "max_ipc_namespaces", "max_uts_namespaces",
	"max_cgroup_namespaces", "max_time_namespaces",
}

// stepCounts reads the maxima of planex's user namespace under
// procSysUser (/proc/sys/user) and returns a step's share of each (none
// of cgroup namespaces); a count this kernel lacks is left out.
func stepCounts(procSysUser string) map[string]int64 {
	out := map[string]int64{}
	for _, name := range kernelCountNames {
		b, err := os.ReadFile(filepath.Join(procSysUser, name))
		if err != nil {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil || n < 0 {
			continue
		}
		out[name] = n / stepCountShare
		if name == noCgroupNamespaces {
			out[name] = 0
		}
	}
	return out
}

// But every contained process is a sandbox of its own (each task's
// agent, each MCP server, each command a built-in agent runs), and four
// at once took a quarter each: all of the user's inotify instances. So
// the steps of one planex also share half of each count (countBudget):
// a step gets at most its quarter, and at most half of what planex's
// live steps have not been given, so that together they never take more
// than half, however many run.

// countBudget hands each step of one planex its share of each count it
// is held to, out of half of the count for all its live steps.
type countBudget struct {
	mu sync.Mutex
	// most is a step's share when planex's steps have taken nothing (a
	// quarter, stepCounts); left what its live steps have not been given
	// of twice that.
	most, left map[string]int64
}

// newCountBudget starts the budget of a step's shares most.
func newCountBudget(most map[string]int64) *countBudget {
	b := &countBudget{most: most, left: map[string]int64{}}
	for name, n := range most {
		b.left[name] = 2 * n
	}
	return b
}

// take returns a new step's share of each count, at most what want
// names for it (nil: no more than its most), and what gives it back
// once the step has ended (once; calls after the first do nothing).
func (b *countBudget) take(want map[string]int64) (shares map[string]int64, give func()) {
	b.mu.Lock()
	defer b.mu.Unlock()
	shares = map[string]int64{}
	for name, most := range b.most {
		if w, ok := want[name]; ok {
			most = min(most, w)
		}
		n := min(most, (b.left[name]+1)/2)
		shares[name] = n
		b.left[name] -= n
	}
	var once sync.Once
	return shares, func() {
		once.Do(func() {
			b.mu.Lock()
			defer b.mu.Unlock()
			for name, n := range shares {
				b.left[name] += n
			}
		})
	}
}

// capKernelCounts, in the init, sets its user namespace's maxima to
// counts, under procSysUser. Best effort, as capSysVShm: a kernel that
// refuses one keeps its default.
func capKernelCounts(procSysUser string, counts map[string]int64) {
	for name, n := range counts {
		if !strings.HasPrefix(name, "max_") || strings.ContainsRune(name, '/') {
			continue
		}
		f, err := os.OpenFile(filepath.Join(procSysUser, name), os.O_WRONLY|os.O_TRUNC, 0)
		if err != nil {
			continue
		}
		_, _ = f.WriteString(strconv.FormatInt(n, 10))
		f.Close()
	}
}

// Process ids.
//
// Every process and thread of a step takes one of the machine's process
// ids (kernel.pid_max), whatever PID namespace it is in, and each
// sandbox's process limit (RLIMIT_NPROC, 4096 by default) bounds only
// its own: where the kernel's default of 32768 is kept, eight sandboxes
// at once (tasks with --concurrency, an MCP server beside each) took
// them all, and nothing else on the machine could start a process. So
// the sandboxes of one planex share half of them as they share the
// counts above: a sandbox's limit is at most half of what the live ones
// have not been given (and never below minProcesses).
//
// The same holds of planex's user's process limit where planex is not
// root: a user namespace's processes and threads count in every
// namespace up to the host's, each level held to the RLIMIT_NPROC its
// creator had, so a step's count up to its own 4096 was also the
// user's, and where the user's limit is low (RHEL gives every user a
// soft 4096) a program that forked until refused left planex, the
// runner and every process of the user unable to start a process or a
// thread (Go's runtime ends a program that cannot make one). Root's
// limit is not enforced on root's namespaces, and an infinite one has
// nothing to share.

// pidsName names the process ids in a countBudget, nprocName planex's
// user's process limit.
const (
	pidsName  = "pids"
	nprocName = "nproc"
)

// newPidBudget is the budget of the process ids of a machine whose
// kernel.pid_max is pidMax, and of planex's user's process limit nproc
// (0: none is enforced): half of each for planex's sandboxes together,
// a quarter at most for one. Nil when neither is known.
func newPidBudget(pidMax, nproc int64) *countBudget {
	most := map[string]int64{}
	if pidMax > 0 {
		most[pidsName] = pidMax / 4
	}
	if nproc > 0 {
		most[nprocName] = nproc / 4
	}
	if len(most) == 0 {
		return nil
	}
	return newCountBudget(most)
}

// enforcedProcessLimit returns planex's soft process limit where the
// kernel holds its sandboxes' processes to it (planex not the machine's
// root, the limit finite), else 0.
func enforcedProcessLimit(machineRoot bool, getrlimit func(res int, r *unix.Rlimit) error) int64 {
	var r unix.Rlimit
	if machineRoot || getrlimit(unix.RLIMIT_NPROC, &r) != nil || r.Cur == unix.RLIM_INFINITY || r.Cur > math.MaxInt64 {
		return 0
	}
	return int64(r.Cur)
}

// isMachineRoot reports whether uid, with the uid map uidMap
// (/proc/self/uid_map), is root of the machine's first user namespace:
// root of a rootless container's has its process limit enforced.
func isMachineRoot(uid int, uidMap []byte) bool {
	return uid == 0 && strings.Join(strings.Fields(string(uidMap)), " ") == "0 0 4294967295"
}

// shareProcesses returns a new sandbox's process limit, limit or its
// share of b if that is lower (a limit turned off stays off, as does
// every limit without a budget), and what gives the share back.
func (b *countBudget) shareProcesses(limit int64) (int64, func()) {
	if b == nil || limit <= 0 {
		return limit, func() {}
	}
	shares, give := b.take(map[string]int64{pidsName: limit, nprocName: limit})
	n := limit
	for _, share := range shares {
		n = min(n, share)
	}
	return max(n, minProcesses), give
}

// Limits the kernel counts per user the same way.
//
// Signals queued to a process (a POSIX timer holds one from its
// creation, sigqueue queues real-time ones) count against
// RLIMIT_SIGPENDING in the sender's user namespace and in every one
// above it, up to planex's user on the host, each level held to the
// limit its namespace was made with: a contained program that made
// timers until the kernel refused one took all of planex's user's count
// (about 96,000 on 24 GiB), and every other process of that user (the
// runner, planex, a service run as root) got EAGAIN from timer_create
// and sigqueue while it ran. A step is held to a share of planex's limit
// as it is to the counts above: the init lowers its own limit to the
// share before it makes the program's namespace, which takes that as its
// level's most, and the program inherits it, soft and hard.

// rlimitCount is a limit counted per user up the user namespaces: its
// name in a countBudget and in the init's configuration, its resource,
// and the least share a step is given.
type rlimitCount struct {
	name  string
	res   int
	floor int64
}

// rlimitCounts lists them. A step holds at least 64 pending signals,
// whatever its share: a program may need a few timers.
//
// POSIX message queues' bytes (RLIMIT_MSGQUEUE) are counted alike: the
// limits helper caps the step's at 800 KiB, the kernel's default
// (inheritedCaps), which is all of planex's user's when planex keeps the
// default, and a program that made queues of the default size (about 80
// KiB each) until refused left root or the runner user unable to open
// one while it ran, whatever id the program has. Programs seldom use
// them; a step's share holds two of the default size.
//
// So is memory locked through System V segments (shmctl SHM_LOCK) and
// huge page mappings against RLIMIT_MEMLOCK: a step's cap was 8 MiB, the
// kernel's default and all of planex's user's, and a program that locked
// segments until refused left the runner user unable to lock one. A
// step holds at least 64 KiB (a gpg-agent's secure memory); mlock of a
// process's own pages is held to the same share.
var rlimitCounts = []rlimitCount{
	{"rlimit_sigpending", unix.RLIMIT_SIGPENDING, 64},
	{"rlimit_msgqueue", unix.RLIMIT_MSGQUEUE, 0},
	{"rlimit_memlock", unix.RLIMIT_MEMLOCK, 64 << 10},
}

// stepRlimits returns a step's share of each of rlimitCounts, out of
// the soft limit getrlimit gives for it (planex's); a limit it cannot
// read, or that is infinite, is left out (no count to share).
func stepRlimits(getrlimit func(res int, r *unix.Rlimit) error) map[string]int64 {
	out := map[string]int64{}
	for _, c := range rlimitCounts {
		var r unix.Rlimit
		if err := getrlimit(c.res, &r); err != nil || r.Cur == unix.RLIM_INFINITY || r.Cur > math.MaxInt64 {
			continue
		}
		out[c.name] = int64(r.Cur) / stepCountShare
	}
	return out
}

// capRlimits, in the init, lowers its own limits of rlimitCounts to the
// step's shares in counts (soft and hard, never below a count's floor
// nor above what it was), before the program's user namespace is made.
func capRlimits(counts map[string]int64) error {
	var caps []inheritedCap
	for _, c := range rlimitCounts {
		if n, ok := counts[c.name]; ok {
			caps = append(caps, inheritedCap{name: c.name, res: c.res, most: uint64(max(n, c.floor))})
		}
	}
	return capInherited(caps)
}
