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

// sysvGuard watches the System V memory of the step's IPC namespace.
type sysvGuard struct {
	proc   string
	shmCap uint64 // bytes; 0 watches nothing
}

// check returns what the namespace holds past a cap, in a sentence, or
// "".
func (g sysvGuard) check() string {
	if g.shmCap == 0 {
		return ""
	}
	if n := sumColumn(filepath.Join(g.proc, "sysvipc", "shm"), 3); n > g.shmCap {
		return fmt.Sprintf("System V shared memory of %d MiB, past the step's %d MiB", n>>20, g.shmCap>>20)
	}
	if n := sumColumn(filepath.Join(g.proc, "sysvipc", "msg"), 3); n > msgBytesCap {
		return fmt.Sprintf("System V messages of %d KiB queued, past the step's %d KiB", n>>10, msgBytesCap>>10)
	}
	return ""
}

// sumColumn adds up the col'th (from 0) number of each line of a
// /proc/sysvipc table but its header.
func sumColumn(p string, col int) uint64 {
	b, err := os.ReadFile(p)
	if err != nil {
		return 0
	}
	var sum uint64
	sc := bufio.NewScanner(bytes.NewReader(b))
	for first := true; sc.Scan(); first = false {
		f := bytes.Fields(sc.Bytes())
		if first || len(f) <= col {
			continue
		}
		if n, err := strconv.ParseUint(string(f[col]), 10, 64); err == nil {
			sum += n
		}
	}
	return sum
}
