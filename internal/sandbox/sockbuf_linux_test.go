//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestRedTeamSocketBuffersCounted: a contained program fills the
// buffers of Unix socket pairs it never reads, a GiB in all. That is
// neither TCP nor UDP memory, which the network buffer guard watches,
// nor any process's resident size, nor memory charged to a memory
// cgroup: kernel memory no OOM choice counts. The machine's available
// memory counts it, so the memory guard ends the step as it does a
// memfd's GiB (TestRedTeamMemoryNoProcessCounts). The test sets the floor
// 256 MiB below what is left now, not to take the machine's memory; the
// program never holds its GiB.
func TestRedTeamSocketBuffersCounted(t *testing.T) {
	t.Parallel()
	left := memoryLeft(readFile(t, "/proc/meminfo"))
	if left < 3<<30 {
		t.Skipf("the machine has %d MiB of memory and swap left; the test takes 1 GiB", left>>20)
	}
	s := newSandbox(t)
	s.memFloor = left - 256<<20
	out, err := run(t, s, Policy{ReadOnly: []string{filepath.Dir(os.Args[0])}}, "/", []string{"PLANEX_COUNTS_PROBE=unixbuf"},
		os.Args[0]+" -test.run=^TestMachineCountsProbeHelper$")
	if strings.Contains(out, "held to the end") {
		t.Errorf("the program held a GiB in socket buffers past the floor, and ran on (%v):\n%s", err, out)
	}
	if !strings.Contains(out, "memory nearly exhausted") {
		t.Errorf("the step was not ended for the buffers it filled, or said nothing (%v):\n%s", err, out)
	}
}

// fillSocketBuffers is the buffer probe: it fills both ends of Unix
// socket pairs, reading nothing, until a GiB is queued or the kernel
// refuses a pair, says how much, and holds it.
func fillSocketBuffers() {
	var total int64
	var err error
	chunk := make([]byte, 64<<10)
	for total < 1<<30 {
		var ends [2]int
		if ends, err = unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0); err != nil {
			break
		}
		for _, fd := range ends {
			for {
				n, werr := unix.Write(fd, chunk)
				if werr != nil || n <= 0 {
					break
				}
				total += int64(n)
			}
		}
	}
	fmt.Printf("unixbuf: %d MiB queued, then %v\n", total>>20, err)
	os.Stdout.Sync()
	time.Sleep(5 * time.Second)
	fmt.Println("held to the end")
}
