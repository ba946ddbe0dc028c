package proc

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Without the sandbox, a command's processes are held by a reaper:
// planex re-executed as the command's parent. It is a child subreaper
// (orphans anywhere below it are re-parented to it, whatever process
// group or session they moved to), and it kills everything below it when
// the command exits, when it gets SIGTERM/SIGINT/SIGHUP, and when planex
// dies: its parent-death signal is SIGTERM, which it can catch, unlike
// the SIGKILL planex may get. Only killing the reaper itself with SIGKILL
// leaves the command's processes to live on.

// reaperArg0 marks planex re-executed as a reaper.
const reaperArg0 = "planex-reaper"

// Any binary that links this package can be the reaper.
func init() {
	if len(os.Args) >= 3 && os.Args[0] == reaperArg0 {
		os.Exit(reaperMain(os.Args[1], os.Args[2:]))
	}
}

// underReaper makes cmd run under the reaper and reports whether it does.
// A command that runs in the sandbox (a PID namespace) is left alone: the
// sandbox's init holds its processes. Either way cmd dies with planex.
func underReaper(cmd *exec.Cmd) bool {
	attr := cmd.SysProcAttr
	exe, err := os.Executable()
	if attr.Cloneflags&syscall.CLONE_NEWPID != 0 || cmd.Err != nil || err != nil {
		if attr.Pdeathsig == 0 {
			attr.Pdeathsig = syscall.SIGKILL
		}
		return false
	}
	cmd.Args = append([]string{reaperArg0, cmd.Path}, cmd.Args...)
	cmd.Path = exe
	attr.Pdeathsig = syscall.SIGTERM
	return true
}

// reaperMain runs path with argv under the reaper and exits as it does.
func reaperMain(path string, argv []string) int {
	// Named so in ps and /proc/<pid>/comm, not after planex's binary.
	name := []byte(reaperArg0 + "\x00")
	_ = unix.Prctl(unix.PR_SET_NAME, uintptr(unsafe.Pointer(&name[0])), 0, 0, 0)
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		fmt.Fprintf(os.Stderr, "planex reaper: %v\n", err)
		return 125
	}
	if err := CloseInherited(); err != nil {
		fmt.Fprintf(os.Stderr, "planex reaper: closing inherited descriptors: %v\n", err)
		return 125
	}
	sigs := make(chan os.Signal, 4)
	// (Had planex died before this, its SIGTERM would have ended the
	// reaper before the command started.)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	cmd := &exec.Cmd{Path: path, Args: argv, Env: os.Environ(), Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "planex reaper: starting %s: %v\n", path, err)
		return 127
	}
	go func() {
		s := <-sigs
		killDescendants()
		os.Exit(128 + int(s.(syscall.Signal)))
	}()
	code, err := WaitReaping(cmd.Process.Pid)
	killDescendants()
	if err != nil {
		fmt.Fprintf(os.Stderr, "planex reaper: waiting: %v\n", err)
		return 125
	}
	return code
}

// killDescendants kills every live process below this one until none is
// left, reaping those re-parented here.
func killDescendants() {
	self := os.Getpid()
	for range 200 {
		pids := descendants(self)
		if len(pids) == 0 {
			// All below are dead, and a dead one's children were
			// re-parented here before it died: what is left to reap is
			// ours, including any that died after the last round's reap.
			reapEnded()
			return
		}
		for _, p := range pids {
			syscall.Kill(p, syscall.SIGKILL)
		}
		reapEnded()
		time.Sleep(2 * time.Millisecond)
	}
}

// reapEnded reaps the children that have ended, without waiting.
func reapEnded() {
	for {
		got, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
		if got <= 0 || err != nil {
			return
		}
	}
}

// descendants lists the live (not zombie) processes below pid, from
// /proc.
func descendants(pid int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// Fields after the command name, which may hold spaces and
		// parentheses: state, ppid, …
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) < 2 || f[0] == "Z" || f[0] == "X" {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		children[ppid] = append(children[ppid], p)
	}
	var out []int
	queue := children[pid]
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		out = append(out, p)
		queue = append(queue, children[p]...)
	}
	return out
}
