//go:build linux

package sandbox

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
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
// segments or queued messages are past the caps: the namespace, and all
// it holds, goes with the init.

// msgBytesCap is what a step's message queues may hold together: its
// queues at the default 16 KiB each.
const msgBytesCap = msgQueues * 16 << 10

// shmSegments is the most segments a step's namespace allows (shmmni's
// default, which the init leaves as it is).
const shmSegments = 4096

// sysvGuard watches the System V memory of the step's IPC namespace.
type sysvGuard struct {
	proc   string
	shmCap uint64 // bytes; 0 watches nothing
}

// check returns what the namespace holds past a cap, in a sentence, or
// "". More segments or queues than the caps allow is past them too (and
// bounds how much of /proc/sysvipc is read).
func (g sysvGuard) check() string {
	if g.shmCap == 0 {
		return ""
	}
	n, rows := sumColumn(filepath.Join(g.proc, "sysvipc", "shm"), 3, shmSegments)
	if n > g.shmCap || rows > shmSegments {
		return fmt.Sprintf("System V shared memory of %d MiB (%d segments), past the step's %d MiB (or %d segments)", n>>20, rows, g.shmCap>>20, shmSegments)
	}
	n, rows = sumColumn(filepath.Join(g.proc, "sysvipc", "msg"), 3, msgQueues)
	if n > msgBytesCap || rows > msgQueues {
		return fmt.Sprintf("System V messages of %d KiB (%d queues), past the step's %d KiB (or %d queues)", n>>10, rows, msgBytesCap>>10, msgQueues)
	}
	return ""
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
