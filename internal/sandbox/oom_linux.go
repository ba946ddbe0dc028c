//go:build linux

package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// The OOM floor.
//
// Every contained program starts with oom_score_adj 1000, the kernel's
// first choice when memory runs out (limits_linux.go). Any process may
// raise its own score, and lower it again down to oom_score_adj_min,
// which is 0 unless the score was last written by a process holding
// CAP_SYS_RESOURCE in the machine's first user namespace: such a write
// also sets the floor. No process of the sandbox holds that capability
// there (the init's are its own namespace's), so a program could put its
// score back to 0 and leave planex or the runner to be killed in its
// place. When planex runs as root, it writes the init's score itself,
// from outside, before the init starts the program: the floor is then
// 1000, copied to every process the init starts, and a program's write
// of a lower score is refused (EACCES). That needs root with
// CAP_SYS_RESOURCE, which root in a container often lacks. The init
// waits for that write: it connects to a socket planex listens on in the
// sandbox's root folder, and planex, having learnt its pid from the
// connection, writes the score and answers. An ordinary user's planex cannot set a floor;
// its programs start at 1000 and may lower it, and so may those of a
// root without the capability.

// oomSocketName is the socket's name in the sandbox's root folder.
const oomSocketName = ".planex-oom.sock"

// oomScoreFloor is the score and floor of every contained process.
const oomScoreFloor = "1000"

// oomReady is planex's answer once the score is written.
const oomReady = "ok\n"

// oomWait bounds the init's wait for planex's answer.
const oomWait = 30 * time.Second

// canSetOOMFloor reports whether this process runs in the machine's
// first user namespace (its uid map is the whole range, unshifted) and
// holds CAP_SYS_RESOURCE there: only then does its write of a score set
// the floor. Root in a container or a microVM often lacks the capability
// (Docker's default set has none), and root of a rootless container
// holds it only in a namespace of its own.
func canSetOOMFloor() bool {
	if m, err := os.ReadFile("/proc/self/uid_map"); err != nil || strings.Join(strings.Fields(string(m)), " ") != "0 0 4294967295" {
		return false
	}
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return false
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte("CapEff:")); ok {
			caps, err := strconv.ParseUint(string(bytes.TrimSpace(v)), 16, 64)
			return err == nil && caps&(1<<unix.CAP_SYS_RESOURCE) != 0
		}
	}
	return false
}

// inDir names the file name in the folder open as dirFd by way of
// /proc/self/fd, which keeps a socket's path short whatever $TMPDIR is
// (a Unix socket's path holds at most 107 bytes).
func inDir(dirFd int, name string) string {
	return "/proc/self/fd/" + strconv.Itoa(dirFd) + "/" + name
}

// placement is what planex does to a step's init from outside before the
// init starts the program: set its OOM score and floor, move it into the
// step's CPU cgroup (cpugroup_linux.go), or both.
type placement struct {
	oomFloor bool
	cpuGroup string // "" for none
}

// serveOOMFloor listens in root for the init started with cfgFile and,
// when it connects, places it as pl says and answers; an init that could
// not be moved into its CPU cgroup gets no answer, and its step fails.
// stop ends the wait and removes the socket; it must be called before
// root is removed.
func serveOOMFloor(root, cfgFile string, pl placement) (stop func(), err error) {
	dir, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("sandbox: opening its root: %w", err)
	}
	defer unix.Close(dir)
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: inDir(dir, oomSocketName), Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("sandbox: listening for its init: %w", err)
	}
	// Close would remove the socket by the name it was made under,
	// which names this process's descriptor: it is removed by its path.
	ln.SetUnlinkOnClose(false)
	sock := filepath.Join(root, oomSocketName)
	go func() {
		c, err := ln.AcceptUnix()
		if err != nil {
			return
		}
		defer c.Close()
		pid, err := peerPID(c)
		if err != nil || !isInitOf(pid, cfgFile) {
			return
		}
		if pl.cpuGroup != "" && joinCPUGroup(pl.cpuGroup, pid) != nil {
			return
		}
		if pl.oomFloor {
			// Best effort, as the program's own write: a /proc that
			// refuses it changes nothing else.
			_ = os.WriteFile("/proc/"+strconv.Itoa(pid)+"/oom_score_adj", []byte(oomScoreFloor), 0)
		}
		_, _ = io.WriteString(c, oomReady)
	}()
	return func() { ln.Close(); os.Remove(sock) }, nil
}

// peerPID is the pid, in planex's namespace, of the process that
// connected c.
func peerPID(c *net.UnixConn) (int, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return 0, err
	}
	var cred *unix.Ucred
	var serr error
	if err := raw.Control(func(fd uintptr) { cred, serr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED) }); err != nil {
		return 0, err
	}
	if serr != nil {
		return 0, serr
	}
	return int(cred.Pid), nil
}

// isInitOf reports whether pid is the sandbox init started with
// cfgFile: only that process gets an answer.
func isInitOf(pid int, cfgFile string) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	return err == nil && bytes.Equal(b, []byte(initArg0+"\x00"+cfgFile+"\x00"))
}

// errNoOOMFloor means planex did not answer the init's request.
var errNoOOMFloor = errors.New("planex did not set the OOM score")

// awaitOOMFloor, in the init, asks planex to set its OOM score and
// floor and waits until it has. root is the sandbox's root folder as
// the host shows it (before buildRoot).
func awaitOOMFloor(root string) error {
	dir, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("opening the root folder for the OOM score: %w", err)
	}
	defer unix.Close(dir)
	c, err := net.DialTimeout("unix", inDir(dir, oomSocketName), oomWait)
	if err != nil {
		return fmt.Errorf("asking planex to set the OOM score: %w", err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(oomWait))
	buf := make([]byte, len(oomReady))
	if _, err := io.ReadFull(c, buf); err != nil || string(buf) != oomReady {
		return fmt.Errorf("%w (%v)", errNoOOMFloor, err)
	}
	return nil
}
