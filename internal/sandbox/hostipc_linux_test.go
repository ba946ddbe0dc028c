//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestRedTeamHostIPCOutOfReach: planex's machine holds System V IPC
// objects and POSIX message queues open to every user (a build's shared
// memory cache, a database's semaphores, a service's queue), which a
// program reaches by key or name whatever its file system view. A
// contained program looks each up by the key and name the host used,
// and lists what its /proc/sysvipc and /dev/mqueue show: the step's IPC
// namespace is its own, so none is there (held before this test).
func TestRedTeamHostIPCOutOfReach(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	key := 0x504c0000 + os.Getpid()%0xffff
	shm, err := unix.SysvShmGet(key, 4096, unix.IPC_CREAT|unix.IPC_EXCL|0o666)
	if err != nil {
		t.Skipf("cannot make a System V segment here: %v", err)
	}
	t.Cleanup(func() { _, _ = unix.SysvShmCtl(shm, unix.IPC_RMID, nil) })
	msg, _, e := unix.Syscall(unix.SYS_MSGGET, uintptr(key), unix.IPC_CREAT|unix.IPC_EXCL|0o666, 0)
	if e != 0 {
		t.Skipf("cannot make a System V queue here: %v", e)
	}
	t.Cleanup(func() { _, _, _ = unix.Syscall(unix.SYS_MSGCTL, msg, unix.IPC_RMID, 0) })
	sem, _, e := unix.Syscall(unix.SYS_SEMGET, uintptr(key), 1, unix.IPC_CREAT|unix.IPC_EXCL|0o666)
	if e != 0 {
		t.Skipf("cannot make a System V semaphore set here: %v", e)
	}
	t.Cleanup(func() { _, _, _ = unix.Syscall(unix.SYS_SEMCTL, sem, 0, unix.IPC_RMID) })
	name := fmt.Sprintf("planex-redteam-%d", os.Getpid())
	cname, _ := unix.BytePtrFromString(name)
	mq, _, e := unix.Syscall6(unix.SYS_MQ_OPEN, uintptr(unsafe.Pointer(cname)), unix.O_CREAT|unix.O_EXCL|unix.O_RDWR|unix.O_CLOEXEC, 0o666, 0, 0, 0)
	if e != 0 {
		t.Skipf("cannot make a POSIX message queue here: %v", e)
	}
	t.Cleanup(func() {
		unix.Close(int(mq))
		_, _, _ = unix.Syscall(unix.SYS_MQ_UNLINK, uintptr(unsafe.Pointer(cname)), 0, 0)
	})
	out, err := run(t, s, Policy{ReadOnly: []string{filepath.Dir(os.Args[0])}}, "/",
		[]string{"PLANEX_IPC_PROBE=" + strconv.Itoa(key) + ":" + name}, os.Args[0]+" -test.run=^TestHostIPCProbeHelper$")
	if err != nil || !strings.Contains(out, "ipc probed") {
		t.Fatalf("the probe did not run to its end (%v):\n%s", err, out)
	}
	if strings.Contains(out, "REACHED") {
		t.Errorf("a contained program reached the host's IPC objects:\n%s", out)
	}
}

// TestHostIPCProbeHelper is the program of TestRedTeamHostIPCOutOfReach:
// PLANEX_IPC_PROBE is "key:name"; it prints REACHED for each host object
// it finds, then "ipc probed".
func TestHostIPCProbeHelper(t *testing.T) {
	keyName := os.Getenv("PLANEX_IPC_PROBE")
	if keyName == "" {
		t.Skip("the program of TestRedTeamHostIPCOutOfReach")
	}
	k, name, _ := strings.Cut(keyName, ":")
	key, _ := strconv.Atoi(k)
	if id, err := unix.SysvShmGet(key, 0, 0); err == nil {
		fmt.Printf("REACHED the host's segment (%d)\n", id)
	}
	if id, _, e := unix.Syscall(unix.SYS_MSGGET, uintptr(key), 0, 0); e == 0 {
		fmt.Printf("REACHED the host's message queue (%d)\n", id)
	}
	if id, _, e := unix.Syscall(unix.SYS_SEMGET, uintptr(key), 0, 0); e == 0 {
		fmt.Printf("REACHED the host's semaphores (%d)\n", id)
	}
	cname, _ := unix.BytePtrFromString(name)
	if fd, _, e := unix.Syscall6(unix.SYS_MQ_OPEN, uintptr(unsafe.Pointer(cname)), unix.O_WRONLY|unix.O_CLOEXEC, 0, 0, 0, 0); e == 0 {
		fmt.Printf("REACHED the host's POSIX queue (%d)\n", fd)
	}
	for _, table := range []string{"/proc/sysvipc/shm", "/proc/sysvipc/msg", "/proc/sysvipc/sem"} {
		if b, err := os.ReadFile(table); err == nil && strings.Contains(string(b), strconv.Itoa(key)) {
			fmt.Printf("REACHED %s lists the host's key\n", table)
		}
	}
	fmt.Println("ipc probed")
}
