//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestRedTeamAIOContextsOutOfReach: a contained program makes Linux AIO
// contexts (io_setup), which the kernel counts in one pool for the whole
// machine (fs.aio-max-nr, 65536 events by default), whatever namespace
// asks: one io_setup(32768) took half of it and a second the rest, and
// every other process on the machine (a database's native AIO, QEMU,
// another job) then got EAGAIN until the step ended. Contained, the call
// is refused as a kernel without AIO refuses it (ENOSYS), and the
// programs that use it fall back to ordinary reads and writes. The probe
// stops at two contexts, not to take the machine's pool in the test.
func TestRedTeamAIOContextsOutOfReach(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	out, err := run(t, s, Policy{ReadOnly: []string{filepath.Dir(os.Args[0])}}, "/", []string{"PLANEX_COUNTS_PROBE=aio"},
		os.Args[0]+" -test.run=^TestMachineCountsProbeHelper$")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out, "aio: 0 contexts, then function not implemented") {
		t.Errorf("a contained program made AIO contexts from the machine's pool, or was refused otherwise than by the filter:\n%s", out)
	}
}

// TestMachineCountsProbeHelper is the program of the tests of what the
// kernel counts for the whole machine. PLANEX_COUNTS_PROBE says what it
// takes: "aio", AIO contexts of 8192 events (at most two).
func TestMachineCountsProbeHelper(t *testing.T) {
	what := os.Getenv("PLANEX_COUNTS_PROBE")
	switch {
	case what == "":
		t.Skip("the program of the machine-wide count tests")
	case what == "aio":
		n, err := takeAIOContexts(2, 8192)
		fmt.Printf("aio: %d contexts, then %v\n", n, err)
	}
}

// takeAIOContexts makes up to most AIO contexts of events each, and
// returns how many it made and the error that stopped it (nil: none).
func takeAIOContexts(most, events int) (int, error) {
	for n := range most {
		var ctx uintptr
		if _, _, e := unix.Syscall(unix.SYS_IO_SETUP, uintptr(events), uintptr(unsafe.Pointer(&ctx)), 0); e != 0 {
			if errors.Is(e, unix.EAGAIN) {
				return n, fmt.Errorf("%w (the machine's fs.aio-max-nr is spent)", e)
			}
			return n, e
		}
	}
	return most, nil
}
