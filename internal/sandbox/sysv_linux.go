//go:build linux

package sandbox

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"

	"golang.org/x/sys/unix"
)

// System V memory past the step's caps.
//
// capSysVShm caps the step's IPC namespace (shmall, msgmni), and a
// program of root's planex cannot raise them: the namespace's sysctls
// are writable only by its root, host root's id. An ordinary user's
// program runs as the user, whose id is also that namespace's root, so
// it could raise them again and keep as much shared memory as it liked,
// memory no process owns. So the init also looks at what the namespace
// holds (/proc/sysvipc), every 200 ms, and ends the step when its
// segments, queued messages or semaphores are past the caps: the namespace, and all
// it holds, goes with the init. A program may also make IPC namespaces
// of its own (in a user namespace of its own), with the kernel's default
// limits: the init reads those too, and adds them up with its own.

// msgBytesCap is what a step's message queues may hold together: its
// queues at the default 16 KiB each.
const msgBytesCap = msgQueues * 16 << 10

// shmSegments is the most segments a step's namespace allows (shmmni's
// default, which the init leaves as it is).
const shmSegments = 4096

// semCount is the most System V semaphores a step's IPC namespaces may
// hold together, and semSets the most sets: a semaphore is about 100
// bytes of kernel memory, and a fresh namespace allowed 32000 sets of
// 32000 each (about 100 GiB) that outlive their program as a segment
// does. 65536 is about 6 MiB; a PostgreSQL server of 100 connections
// uses a few hundred in sets of 17.
const (
	semCount = 65536
	semSets  = 4096
)

// sysvGuard watches the System V memory of the step's IPC namespace.
type sysvGuard struct {
	proc   string
	shmCap uint64 // bytes; 0 watches nothing
}

// check returns what the step's IPC namespaces hold past a cap, in a
// sentence, or "". More segments or queues than the caps allow is past
// them too (and bounds how much of /proc/sysvipc is read). The step's
// own namespace is read where the init is; one a program made for itself
// (unshare -Ui: a user namespace of its own, then an IPC namespace with
// the kernel's default limits, which this /proc/sysvipc does not list)
// is read from inside it, and what all hold is added up.
func (g sysvGuard) check() string {
	if g.shmCap == 0 {
		return ""
	}
	u := readSysV(g.proc, sysvRows{shmSegments, msgQueues, semSets})
	nested, many := nestedIPC(g.proc)
	if many {
		return fmt.Sprintf("more than %d IPC namespaces of its own, whose System V memory the init does not read", maxNestedIPC)
	}
	for _, ns := range nested {
		if u.shmRows > shmSegments || u.msgRows > msgQueues || u.semRows > semSets {
			break
		}
		if v, ok := readSysVIn(ns, g.proc, sysvRows{shmSegments - u.shmRows, msgQueues - u.msgRows, semSets - u.semRows}); ok {
			u = u.add(v)
		}
	}
	if u.shm > g.shmCap || u.shmRows > shmSegments {
		return fmt.Sprintf("System V shared memory of %d MiB (%d segments), past the step's %d MiB (or %d segments)", u.shm>>20, u.shmRows, g.shmCap>>20, shmSegments)
	}
	if u.msg > msgBytesCap || u.msgRows > msgQueues {
		return fmt.Sprintf("System V messages of %d KiB (%d queues), past the step's %d KiB (or %d queues)", u.msg>>10, u.msgRows, msgBytesCap>>10, msgQueues)
	}
	if u.sem > semCount || u.semRows > semSets {
		return fmt.Sprintf("System V semaphores: %d (%d sets), past the step's %d (or %d sets)", u.sem, u.semRows, semCount, semSets)
	}
	return ""
}

// sysvUse is what IPC namespaces hold: segment and queued message
// bytes, semaphores, and how many segments, queues and semaphore sets.
type sysvUse struct {
	shm, msg, sem             uint64
	shmRows, msgRows, semRows int
}

func (u sysvUse) add(v sysvUse) sysvUse {
	return sysvUse{shm: u.shm + v.shm, msg: u.msg + v.msg, sem: u.sem + v.sem,
		shmRows: u.shmRows + v.shmRows, msgRows: u.msgRows + v.msgRows, semRows: u.semRows + v.semRows}
}

// sysvRows bounds the rows read of each /proc/sysvipc table.
type sysvRows struct{ shm, msg, sem int }

// readSysV reads the /proc/sysvipc tables under proc, at most one row
// more of each than most allows. The fourth column is a segment's size,
// a queue's bytes, a set's semaphores.
func readSysV(proc string, most sysvRows) sysvUse {
	var u sysvUse
	u.shm, u.shmRows = sumColumn(filepath.Join(proc, "sysvipc", "shm"), 3, max(most.shm, 0))
	u.msg, u.msgRows = sumColumn(filepath.Join(proc, "sysvipc", "msg"), 3, max(most.msg, 0))
	u.sem, u.semRows = sumColumn(filepath.Join(proc, "sysvipc", "sem"), 3, max(most.sem, 0))
	return u
}

// maxNestedIPC is how many IPC namespaces besides its own a step may
// make: the init reads each every 200 ms.
const maxNestedIPC = 64

// nestedIPC lists, for each IPC namespace a process under proc is in
// other than the init's own, the namespace file of one such process
// (proc/<pid>/ns/ipc); many is true past maxNestedIPC of them.
func nestedIPC(proc string) (nsFiles []string, many bool) {
	own, err := os.Readlink(filepath.Join(proc, "1", "ns", "ipc"))
	if err != nil {
		return nil, false
	}
	ents, err := os.ReadDir(proc)
	if err != nil {
		return nil, false
	}
	seen := map[string]bool{own: true}
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		f := filepath.Join(proc, e.Name(), "ns", "ipc")
		ns, err := os.Readlink(f)
		if err != nil || seen[ns] {
			continue
		}
		seen[ns] = true
		if len(nsFiles) == maxNestedIPC {
			return nsFiles, true
		}
		nsFiles = append(nsFiles, f)
	}
	return nsFiles, false
}

// readSysVIn reads what the IPC namespace of nsFile holds, from a thread
// that enters it (/proc/sysvipc shows the reader's namespace). The
// thread is left locked, so it ends with its goroutine instead of
// running anything else in that namespace. ok is false when the
// namespace could not be entered (its process gone).
func readSysVIn(nsFile, proc string, most sysvRows) (u sysvUse, ok bool) {
	type result struct {
		u  sysvUse
		ok bool
	}
	done := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		fd, err := unix.Open(nsFile, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			done <- result{}
			return
		}
		err = unix.Setns(fd, unix.CLONE_NEWIPC)
		unix.Close(fd)
		if err != nil {
			done <- result{}
			return
		}
		done <- result{readSysV(proc, most), true}
	}()
	r := <-done
	return r.u, r.ok
}

// sumColumn adds up the col'th (from 0) number of each row of a
// /proc/sysvipc table, its header skipped, reading at most maxRows+1
// rows; it returns the sum and the rows read.
func sumColumn(p string, col, maxRows int) (sum uint64, rows int) {
	f, err := os.Open(p)
	if err != nil {
		return 0, 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for first := true; rows <= maxRows && sc.Scan(); first = false {
		fields := bytes.Fields(sc.Bytes())
		if first || len(fields) <= col {
			continue
		}
		rows++
		if n, err := strconv.ParseUint(string(fields[col]), 10, 64); err == nil {
			sum += n
		}
	}
	return sum, rows
}
