package proc

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strings"
)

// ErrNoPeakRSS means this system does not say how much memory a process
// has used at most (no /proc/self/status, as off Linux).
var ErrNoPeakRSS = errors.New("this system does not report a process's peak memory")

// PeakRSS is this process's peak resident set size in bytes (VmHWM in
// /proc/self/status), which tests of bounded memory compare to a bound.
func PeakRSS() (uint64, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, fmt.Errorf("%w: %v", ErrNoPeakRSS, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			var kb uint64
			if _, err := fmt.Sscan(strings.TrimSuffix(strings.TrimSpace(v), " kB"), &kb); err != nil {
				return 0, fmt.Errorf("reading VmHWM %q: %w", v, err)
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("%w: no VmHWM line in /proc/self/status", ErrNoPeakRSS)
}
