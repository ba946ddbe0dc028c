//go:build linux

package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Sandbox wraps commands so they run contained. A nil *Sandbox wraps
// nothing, so callers need no branch for `--sandbox off`.
type Sandbox struct {
	// Log receives warnings planex's own process gives about the
	// sandbox (a folder it could not give back); nil is slog.Default().
	// They name files a contained program made, so they go where
	// planex's other logs go, never straight to standard error.
	Log *slog.Logger

	exe string

	once   sync.Once
	probed error
	lent   lender
	// net is ProbeNetwork's answer, found by Probe.
	net netProbe
	// oomFloor: planex may set its programs' OOM score floor
	// (oom_linux.go).
	oomFloor bool
	// cpuParent is the folder where each step's CPU cgroup is made
	// (cpugroup_linux.go), "" where planex can make none; cpuWhyNot
	// says why, logged once at the first step.
	cpuParent  string
	cpuWhyNot  error
	cpuLogOnce sync.Once
	// counts hands out the steps' shares of the kernel's per-user counts
	// (ucounts_linux.go), read once: twelve /proc/sys/user files each
	// step cost about 0.15 ms, and the machine's maxima seldom change
	// while planex runs.
	countsOnce sync.Once
	counts     *countBudget
	// pids share the machine's process ids between the sandboxes' process
	// limits (ucounts_linux.go); nil when pid_max cannot be read. Tests
	// put one of a smaller machine's in its place.
	pids *countBudget
	// netMem are the machine's low marks of network memory, read once.
	netMemOnce sync.Once
	netMem     netMemLimits
	// memFloor, when not 0, is the memory and swap left (bytes) below
	// which the init ends a step, in place of memGuard's floor: tests set
	// it near what the machine has, not to take its memory.
	memFloor int64
	// ptyFloor, when not 0, is the terminals left in the machine's pool
	// below which the init ends a step, in place of ptyGuard's floor:
	// tests set it near what the machine has, not to take its terminals.
	ptyFloor int64
	// fileFloor, when not 0, is the files left in the machine's table
	// below which the init ends a step that grew it by more than its
	// open-file limit, in place of fileGuard's floor: tests set it near
	// what the machine has, not to fill its table.
	fileFloor int64
	// netMemLow, when not 0, replaces the machine's tcp_mem and udp_mem
	// low thresholds (pages) the init's network memory guard reads
	// (netmem_linux.go): tests set it low, not to take the machine's.
	netMemLow int64
	// epollWatches, when not 0, replaces a step's share of its user's
	// epoll watches (epoll_linux.go): tests set it low, not to take the
	// machine's kernel memory.
	epollWatches int64
}

// New returns a sandbox for mode: nil for ModeOff; for ModeOn an error
// when this machine cannot contain a process; for ModeAuto nil and
// ErrUnavailable (wrapped with the reason) when it cannot, so the caller
// decides how loudly to say so.
func New(ctx context.Context, mode Mode) (*Sandbox, error) {
	if mode == ModeOff {
		return nil, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("%w: locating planex's own executable: %v", ErrUnavailable, err)
	}
	s := &Sandbox{exe: exe, oomFloor: canSetOOMFloor()}
	if s.cpuParent, s.cpuWhyNot = cpuGroupParent(); s.cpuParent != "" {
		removeStaleCPUGroups(s.cpuParent, processAlive)
	}
	if err := s.Probe(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// Probe reports, found once, whether this machine can contain a
// process. It starts one contained no-op process with a network of its
// own: when that works, it has answered ProbeNetwork too, so a planex
// command starts one probe, not two. Only when it fails does a second
// no-op process, with the machine's network, tell a sandbox that cannot
// contain the network (ProbeNetwork's ErrNoNetworkNamespace, with the
// first probe's reason) from one that cannot start at all.
func (s *Sandbox) Probe(ctx context.Context) error {
	s.once.Do(func() {
		netMsg, ok := s.probeOnce(ctx, NetworkContained)
		if ok {
			return
		}
		if msg, ok := s.probeOnce(ctx, NetworkOpen); !ok {
			s.probed = fmt.Errorf("%w: %s", ErrUnavailable, msg)
			return
		}
		s.net.probed = fmt.Errorf("%w: %s", ErrNoNetworkNamespace, netMsg)
	})
	return s.probed
}

// probeOnce runs `true` contained with network n: ok, or why not (its
// standard error, or the error starting it when it said nothing).
func (s *Sandbox) probeOnce(ctx context.Context, n Network) (msg string, ok bool) {
	truePath, err := exec.LookPath("true")
	if err != nil {
		return fmt.Sprintf("no `true` program to test with: %v", err), false
	}
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, truePath)
	cmd.Dir = "/"
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cleanup, err := s.Wrap(cmd, Policy{Network: n})
	if err != nil {
		return err.Error(), false
	}
	defer cleanup()
	if err := cmd.Run(); err != nil {
		msg = strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return msg, false
	}
	return "", true
}

// initArg0 marks planex re-executed as the sandbox's first process.
const initArg0 = "planex-sandbox-init"

// configFile is the name of the init's configuration in its root folder.
const configFile = ".planex-sandbox.json"

// maxConfig bounds the configuration the init reads.
const maxConfig = 16 << 20

// config is what the first process needs to build the sandbox. It holds
// paths and the command line only: no secret ever passes through it.
type config struct {
	Root     string    `json:"root"`
	Path     string    `json:"path"`
	Args     []string  `json:"args"`
	Dir      string    `json:"dir"`
	Writable []string  `json:"writable"`
	ReadOnly []string  `json:"readonly"`
	Hide     []string  `json:"hide"`
	Mask     []string  `json:"mask"`
	Overlay  []Overlay `json:"overlay"`
	UID      int       `json:"uid"`
	GID      int       `json:"gid"`
	Limits   Limits    `json:"limits"`
	// Outer is the init's id the program's uid and gid map to (ids_linux.go).
	Outer int       `json:"outer"`
	Net   netConfig `json:"net"`
	// OOMFloor has the init wait for planex to set its OOM score and
	// floor before it starts the program (oom_linux.go): planex runs as
	// root.
	OOMFloor bool `json:"oom_floor,omitempty"`
	// CPUGroup, when not "", is the step's CPU cgroup (cpugroup_linux.go):
	// the init waits, as for OOMFloor, for planex to move it into the
	// program's group there, and leaves it for its own once the program
	// has started.
	CPUGroup string `json:"cpu_group,omitempty"`
	// Counts are the step's maxima of what the kernel counts per user
	// (ucounts_linux.go).
	Counts map[string]int64 `json:"counts,omitempty"`
	// MemFloor replaces the memory guard's floor when not 0 (tests).
	MemFloor int64 `json:"mem_floor,omitempty"`
	// PtyFloor replaces the terminal guard's floor when not 0 (tests).
	PtyFloor int64 `json:"pty_floor,omitempty"`
	// FileFloor replaces the open-file guard's floor when not 0 (tests).
	FileFloor int64 `json:"file_floor,omitempty"`
	// NetMem are the machine's low marks of network memory
	// (netmem_linux.go), which the init's network namespace does not show.
	NetMem netMemLimits `json:"net_mem"`
}

// Wrap turns cmd, not yet started, into the same command run inside a
// sandbox with policy p. The command keeps its stdin, stdout, stderr,
// environment and directory; its process becomes planex's sandbox init,
// which runs the real program and exits with its status. cleanup removes
// the empty folder used as the sandbox's root and must be called after
// the command ended.
func (s *Sandbox) Wrap(cmd *exec.Cmd, p Policy) (cleanup func(), err error) {
	noop := func() {}
	if s == nil {
		return noop, nil
	}
	if cmd.Process != nil {
		return noop, errors.New("sandbox: the command was already started")
	}
	path := cmd.Path
	if cmd.Err != nil {
		return noop, cmd.Err
	}
	if !filepath.IsAbs(path) {
		// exec.Command resolved it already when it could; a relative
		// path with a directory is relative to cmd.Dir.
		path = filepath.Join(cmd.Dir, path)
	}
	dir := cmd.Dir
	if dir == "" {
		if dir, err = os.Getwd(); err != nil {
			return noop, fmt.Errorf("sandbox: working directory: %w", err)
		}
	}
	c := config{Path: path, Args: cmd.Args, UID: innerID(os.Getuid()), GID: innerID(os.Getgid()), Limits: p.Limits.WithDefaults()}
	if c.Dir, err = canonical(dir); err != nil {
		return noop, fmt.Errorf("sandbox: working directory: %w", err)
	}
	if err := c.setPaths(p); err != nil {
		return noop, err
	}
	ids := planIDs(os.Getuid(), os.Getgid(), rootProgramID())
	c.Outer = ids.outer
	netFlags, err := setNetwork(&c, p)
	if err != nil {
		return noop, err
	}
	root, err := os.MkdirTemp("", "planex-sandbox-")
	if err != nil {
		return noop, fmt.Errorf("sandbox: creating its root: %w", err)
	}
	c.Root = root
	c.OOMFloor = s.oomFloor
	c.MemFloor = s.memFloor
	c.PtyFloor = s.ptyFloor
	c.FileFloor = s.fileFloor
	c.NetMem = s.netMemLimits()
	cpuGroup, removeGroup, err := s.stepCPUGroup(&c)
	if err != nil {
		os.Remove(root)
		return noop, err
	}
	var giveCounts, givePids func()
	c.Counts, giveCounts = s.takeCounts()
	c.Limits.Processes, givePids = s.pids.shareProcesses(c.Limits.Processes)
	// The configuration goes in a file, not on the init's command line,
	// which every process of the sandbox reads in /proc/1/cmdline: it
	// names what is hidden and masked (where the credentials are) and the
	// sockets the network leads to. The file lies in the root folder,
	// under the host's file system once the init has bound it there, and
	// the init removes it as soon as it has read it.
	cfgFile := filepath.Join(root, configFile)
	undo := func() { giveCounts(); givePids(); removeGroup(); os.Remove(cfgFile); os.Remove(root) }
	b, err := json.Marshal(c)
	if err != nil {
		undo()
		return noop, fmt.Errorf("sandbox: encoding its configuration: %w", err)
	}
	if err := os.WriteFile(cfgFile, b, 0o600); err != nil {
		undo()
		return noop, fmt.Errorf("sandbox: writing its configuration: %w", err)
	}
	cmd.Path = s.exe
	cmd.Args = []string{initArg0, cfgFile}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	attr := cmd.SysProcAttr
	attr.Cloneflags |= syscall.CLONE_NEWUSER | syscall.CLONE_NEWPID | syscall.CLONE_NEWNS | syscall.CLONE_NEWIPC | netFlags
	ids.apply(attr)
	// If planex dies, so does the init, and with it every process of
	// the step.
	attr.Pdeathsig = syscall.SIGKILL
	stopOOM, err := serveInit(root, cfgFile, c, cpuGroup)
	if err != nil {
		undo()
		return noop, err
	}
	giveBack, err := s.lend(c.Writable, ids.host)
	if err != nil {
		stopOOM()
		undo()
		return noop, err
	}
	return func() { stopOOM(); undo(); giveBack(); collectInFlight() }, nil
}

// serveInit answers the init's request to be placed (its OOM floor, its
// CPU cgroup) when c has it make one.
// takeCounts returns a new step's shares of what the kernel counts per
// user (ucounts_linux.go, epoll_linux.go), reading the machine's maxima
// and process ids at the first step, and what gives them back.
func (s *Sandbox) takeCounts() (map[string]int64, func()) {
	s.countsOnce.Do(func() {
		most := stepCounts("/proc/sys/user")
		maps.Copy(most, stepRlimits(unix.Getrlimit))
		maps.Copy(most, stepEpollWatches("/proc/sys/fs/epoll/max_user_watches"))
		s.counts = newCountBudget(most)
		s.pids = newPidBudget(readFirstInt("/proc/sys/kernel/pid_max"), enforcedProcessLimit(machineRoot(), unix.Getrlimit))
	})
	counts, give := s.counts.take(nil)
	if s.epollWatches != 0 {
		counts = maps.Clone(counts)
		counts[epollWatchesName] = s.epollWatches
	}
	return counts, give
}

// machineRoot reports whether planex is root of the machine's first user
// namespace (isMachineRoot).
func machineRoot() bool {
	m, _ := os.ReadFile("/proc/self/uid_map")
	return isMachineRoot(os.Getuid(), m)
}

func serveInit(root, cfgFile string, c config, cpuGroup string) (stop func(), err error) {
	if !c.OOMFloor && c.CPUGroup == "" {
		return func() {}, nil
	}
	return serveOOMFloor(root, cfgFile, placement{oomFloor: c.OOMFloor, cpuGroup: cpuGroup})
}

// stepCPUGroup makes a step's CPU cgroup where planex can, and has c's
// init wait to be moved into it; where it cannot, it says why once and
// the step runs without one.
func (s *Sandbox) stepCPUGroup(c *config) (dir string, remove func(), err error) {
	if s.cpuParent == "" {
		s.cpuLogOnce.Do(func() {
			log := s.Log
			if log == nil {
				log = slog.Default()
			}
			log.Debug("sandbox: steps share the CPU by their sessions", "reason", s.cpuWhyNot)
		})
		return "", func() {}, nil
	}
	if dir, remove, err = makeCPUGroup(s.cpuParent); err != nil {
		return "", nil, err
	}
	c.CPUGroup = dir
	return dir, remove, nil
}

// netMemLimits are the machine's low marks of network memory, read once
// (or netMemLow's, for tests).
func (s *Sandbox) netMemLimits() netMemLimits {
	if s.netMemLow != 0 {
		return netMemLimits{TCP: s.netMemLow, UDP: s.netMemLow}
	}
	s.netMemOnce.Do(func() { s.netMem = readNetMemLimits("/proc/sys/net/ipv4", machineMemory()) })
	return s.netMem
}

// collectInFlight has the kernel collect what the ended step left in
// flight in Unix sockets no process holds any more. A program can send a
// socket's own ends through it (SCM_RIGHTS) with any descriptor beside
// them (its IPC namespace's, holding segments; a memfd, a file of its
// /tmp, holding that whole tmpfs): no process then holds the cycle, and
// the kernel frees it only when its collector next runs, which a Unix
// socket's release anywhere on the machine sets off. On a quiet machine
// that was seconds to minutes after the step, its memory held all the
// while by no process (TestRedTeamParkedNamespaceDiesWithTheStep). By the
// time the caller cleans up, the step's init has ended and with it every
// process of the step, so their sockets are released: one release more,
// of a socket with a descriptor in flight, sets the collector off.
func collectInFlight() {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return
	}
	_ = unix.Sendmsg(fds[0], []byte{0}, unix.UnixRights(fds[0]), nil, 0)
	unix.Close(fds[0])
	unix.Close(fds[1])
}

// setPaths puts p's directories and files into c as the contained process
// will see them (links resolved); hidden and masked paths that do not
// exist are left out.
func (c *config) setPaths(p Policy) error {
	for _, w := range p.Writable {
		cw, err := canonical(w)
		if err != nil {
			return fmt.Errorf("sandbox: writable directory: %w", err)
		}
		c.Writable = append(c.Writable, cw)
	}
	for _, ro := range p.ReadOnly {
		cr, err := canonical(ro)
		if err != nil {
			return fmt.Errorf("sandbox: read-only directory: %w", err)
		}
		c.ReadOnly = append(c.ReadOnly, cr)
	}
	for _, h := range p.Hide {
		if ch, err := canonical(h); err == nil {
			c.Hide = append(c.Hide, ch)
		}
	}
	for _, o := range p.Overlay {
		cp, err := canonical(o.Path)
		if err != nil {
			continue // nothing there to cover
		}
		src, err := canonical(o.Source)
		if err != nil {
			return fmt.Errorf("sandbox: overlay for %s: %w", o.Path, err)
		}
		c.Overlay = append(c.Overlay, Overlay{Path: cp, Source: src})
	}
	for _, m := range append(DefaultMasks(), p.Mask...) {
		if cm, err := canonical(m); err == nil {
			c.Mask = append(c.Mask, cm)
		}
	}
	return nil
}

// innerID is the uid (or gid) the contained program runs as: the real one
// for an ordinary user, so files look as they do outside, and nobody's
// for root, so the program is not root even inside its own namespace.
func innerID(id int) int {
	if id == 0 {
		return 65534
	}
	return id
}

// canonical resolves symlinks so a bind lands on the path the contained
// process will see, not on a link into the old root.
func canonical(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}
