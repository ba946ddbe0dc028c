//go:build linux

package sandbox

import (
	"bufio"
	"fmt"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// TestRedTeamLockedSharedMemoryShared: a contained program makes System
// V segments of 1 MiB in its own IPC namespace and locks each in memory
// (shmctl SHM_LOCK) until the kernel refuses one. Locked segments count
// against RLIMIT_MEMLOCK per user in every user namespace up to planex's
// user on the host, whatever id the program has, and a step's limit was
// 8 MiB, the kernel's default and so all of that user's: an ordinary
// user's planex (the runner user's) could then lock no segment while the
// step ran. Contained, a step takes a quarter of planex's limit, and
// planex's user outside still locks one (where it lacks CAP_IPC_LOCK,
// which root holds: as root only the step's count is looked at).
func TestRedTeamLockedSharedMemoryShared(t *testing.T) {
	t.Parallel()
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_MEMLOCK, &lim); err != nil {
		t.Fatal(err)
	}
	if lim.Cur == unix.RLIM_INFINITY || lim.Cur > 8<<20 || lim.Cur < 4<<20 {
		t.Skipf("planex's locked memory limit is %d: the test needs one between 4 MiB and a step's cap, 8 MiB", lim.Cur)
	}
	var hostErr error = errNotTried
	line, stderr := runHolding(t, "shmlock:16", "shmlock: ", func() {
		if os.Getuid() != 0 {
			hostErr = lockSegment()
		}
	})
	made := probeCount(line)
	if made < 0 {
		t.Fatalf("the probe did not run:\n%s", stderr)
	}
	if os.Getuid() != 0 && hostErr != nil {
		t.Errorf("while a contained program held %d locked segments of 1 MiB, planex's user outside could lock none: %v", made, hostErr)
	}
	if most := int64(lim.Cur) / stepCountShare / (1 << 20); made > most {
		t.Errorf("a contained program locked %d segments of 1 MiB, more than a step's share of planex's user's %d bytes", made, lim.Cur)
	}
}

// shmLock is shmctl's SHM_LOCK (linux/shm.h), which x/sys/unix lacks.
const shmLock = 11

// lockSegment makes a private segment of 1 MiB and locks it in memory;
// the segment goes when its IPC namespace does, or when removed.
func lockSegment() error {
	id, err := unix.SysvShmGet(unix.IPC_PRIVATE, 1<<20, unix.IPC_CREAT|0o600)
	if err != nil {
		return err
	}
	_, err = unix.SysvShmCtl(id, shmLock, nil)
	if os.Getenv("PLANEX_COUNTS_PROBE") == "" {
		_, _ = unix.SysvShmCtl(id, unix.IPC_RMID, nil)
	}
	return err
}

// holdLockedSegments is the locked segment probe: it locks up to most
// segments of 1 MiB, says how many, and holds them until its standard
// input closes.
func holdLockedSegments(most int) {
	n, err := 0, error(nil)
	for ; n < most; n++ {
		if err = lockSegment(); err != nil {
			break
		}
	}
	fmt.Printf("shmlock: %d, then %v\n", n, err)
	os.Stdout.Sync()
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
	fmt.Println("held to the end")
}
