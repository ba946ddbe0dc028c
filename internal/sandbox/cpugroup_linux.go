//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// A CPU cgroup of the step's own.
//
// The kernel groups the processes of the root CPU cgroup by session
// (kernel.sched_autogroup_enabled, on by default in Ubuntu's and Fedora's
// kernels) and weighs each session like any other: a step whose busy
// processes each start a session of their own (setsid) takes a share of
// the machine's CPU that grows with its sessions, planex's and the
// runner's shrinking to nothing. A process outside the root CPU cgroup
// joins no such group, so where planex may make a cgroup with the CPU
// controller (as root: the first version's cpu hierarchy, or the unified
// one where the controller is enabled below planex's cgroup, which is
// then the root), every step's init is moved into one of its own before
// it starts the program: the step, however many sessions and processes
// it makes, weighs as one session. Inside it the init and the program
// have a group each (cpuGroupInit, cpuGroupProgram): the init moves
// itself out of the program's once it has started it, so its guards,
// waking every 20 ms, are not weighed as one process among the
// program's thousands. The program cannot leave its group: a
// cgroup's files are root's, and its view of them is read-only. Where
// planex cannot make one (an ordinary user, a container's cgroup holding
// processes), steps run as before, and the log says so once.

// errNoCPUGroup means planex has no place to make a step's CPU cgroup.
var errNoCPUGroup = errors.New("no CPU cgroup can be made for a step")

// cpuGroupPrefix begins the name of every step's CPU cgroup.
const cpuGroupPrefix = "planex-step-"

// cpuGroupParentIn finds, under fsys (the machine's root), the folder of
// the cgroup of the CPU controller that planex's process is in, where a
// step's cgroup is made: of the first version's hierarchy holding cpu
// (N:cpu,cpuacct:/path), else of the unified one (0::/path) when its
// cgroup.subtree_control enables cpu for its children.
func cpuGroupParentIn(fsys fs.FS) (string, error) {
	b, err := fs.ReadFile(fsys, "proc/self/cgroup")
	if err != nil {
		return "", fmt.Errorf("%w: %w", errNoCPUGroup, err)
	}
	unified := ""
	for _, line := range strings.Split(string(b), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[0] == "0" && parts[1] == "" {
			unified = path.Join(cgroupRoot, path.Clean("/"+parts[2]))
			continue
		}
		if !slices.Contains(strings.Split(parts[1], ","), "cpu") {
			continue
		}
		dir := path.Join(cgroupRoot, parts[1], path.Clean("/"+parts[2]))
		if _, err := fs.Stat(fsys, path.Join(dir, "cpu.shares")); err != nil {
			return "", fmt.Errorf("%w: the cpu hierarchy's folder %s: %w", errNoCPUGroup, dir, err)
		}
		return dir, nil
	}
	if unified == "" {
		return "", fmt.Errorf("%w: planex is in no cpu cgroup", errNoCPUGroup)
	}
	sub, err := fs.ReadFile(fsys, path.Join(unified, "cgroup.subtree_control"))
	if err != nil {
		return "", fmt.Errorf("%w: %w", errNoCPUGroup, err)
	}
	if !slices.Contains(strings.Fields(string(sub)), "cpu") {
		return "", fmt.Errorf("%w: the cpu controller is not enabled below %s", errNoCPUGroup, unified)
	}
	return unified, nil
}

// cpuGroupParent is cpuGroupParentIn of the machine, as an absolute
// path, when this process may make a folder there.
func cpuGroupParent() (string, error) {
	dir, err := cpuGroupParentIn(os.DirFS("/"))
	if err != nil {
		return "", err
	}
	dir = "/" + dir
	if err := unix.Access(dir, unix.W_OK); err != nil {
		return "", fmt.Errorf("%w: %s: %w", errNoCPUGroup, dir, err)
	}
	return dir, nil
}

// The groups inside a step's: the init's and the program's, both leaves
// (the unified hierarchy lets only leaves hold processes).
const (
	cpuGroupInit    = "init"
	cpuGroupProgram = "program"
)

// makeCPUGroup makes a step's CPU cgroup in parent, with the init's and
// the program's groups in it. remove removes them once every process
// of the step has ended.
func makeCPUGroup(parent string) (dir string, remove func(), err error) {
	dir, err = os.MkdirTemp(parent, cpuGroupPrefix+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return "", nil, fmt.Errorf("sandbox: making the step's CPU cgroup: %w", err)
	}
	remove = func() {
		removeCPUGroup(path.Join(dir, cpuGroupProgram))
		removeCPUGroup(path.Join(dir, cpuGroupInit))
		removeCPUGroup(dir)
	}
	// The unified hierarchy weighs the groups below only with the cpu
	// controller enabled for them.
	if _, err := os.Stat(path.Join(dir, "cgroup.subtree_control")); err == nil {
		err = os.WriteFile(path.Join(dir, "cgroup.subtree_control"), []byte("+cpu"), 0)
		if err != nil {
			remove()
			return "", nil, fmt.Errorf("sandbox: enabling the cpu controller in the step's cgroup: %w", err)
		}
	}
	for _, sub := range []string{cpuGroupInit, cpuGroupProgram} {
		if err := os.Mkdir(path.Join(dir, sub), 0o755); err != nil {
			remove()
			return "", nil, fmt.Errorf("sandbox: making the step's CPU cgroup: %w", err)
		}
	}
	return dir, remove, nil
}

// openInitCPUGroup, in the init, opens the cgroup.procs file of its own
// group in the step's CPU cgroup dir ("" for none), before the init's
// view of the host is made read-only; nil when there is none.
func openInitCPUGroup(dir string) (*os.File, error) {
	if dir == "" {
		return nil, nil
	}
	f, err := os.OpenFile(path.Join(dir, cpuGroupInit, "cgroup.procs"), os.O_WRONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("opening the init's CPU cgroup: %w", err)
	}
	return f, nil
}

// leaveProgramCPUGroup, in the init, once the program has started in
// the program's group, moves the init (every thread of it: "0" is the
// writer's own process) into its own group, through f from
// openInitCPUGroup, and closes f. Best effort: an init left in the
// program's group is only weighed with it.
func leaveProgramCPUGroup(f *os.File) {
	if f == nil {
		return
	}
	_, _ = f.WriteString("0")
	f.Close()
}

// removeStaleCPUGroups removes the steps' CPU cgroups in parent that a
// planex no longer running made (one killed with SIGKILL runs no
// cleanup): a group's name holds its planex's pid. A group whose
// processes are gone is empty; one that is not stays, tried once (a pid
// of another pid namespace's planex may look dead from here, and its
// busy groups must not hold this planex's start).
func removeStaleCPUGroups(parent string, alive func(pid int) bool) {
	groups, _ := filepath.Glob(filepath.Join(parent, cpuGroupPrefix+"*"))
	for _, g := range groups {
		pid, _, ok := strings.Cut(strings.TrimPrefix(filepath.Base(g), cpuGroupPrefix), "-")
		n, err := strconv.Atoi(pid)
		if !ok || err != nil || alive(n) {
			continue
		}
		for _, d := range []string{filepath.Join(g, cpuGroupProgram), filepath.Join(g, cpuGroupInit), g} {
			_ = unix.Rmdir(d)
		}
	}
}

// processAlive reports whether a process pid exists.
func processAlive(pid int) bool {
	return unix.Kill(pid, 0) != unix.ESRCH
}

// removeCPUGroup removes an empty cgroup. The kernel may take a moment
// after the init was reaped to let the group go of the processes it
// killed, so a busy group is tried again a few times.
func removeCPUGroup(dir string) {
	for range 50 {
		err := unix.Rmdir(dir)
		if err == nil || !errors.Is(err, unix.EBUSY) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// joinCPUGroup moves the init pid, with the threads it has, into the
// program's group of the step's CPU cgroup dir, which the program then
// starts in.
func joinCPUGroup(dir string, pid int) error {
	if err := os.WriteFile(path.Join(dir, cpuGroupProgram, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
		return fmt.Errorf("sandbox: moving the init into the step's CPU cgroup: %w", err)
	}
	return nil
}
