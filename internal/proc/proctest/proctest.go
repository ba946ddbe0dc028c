// Package proctest holds the tests' helpers about planex's own process.
package proctest

import (
	"errors"
	"testing"

	"github.com/planexhq/planex/internal/proc"
)

// BoundedMemory is the peak resident set size planex must stay under
// whatever an agent prints or a repository holds (docs/security.md).
const BoundedMemory = 512 << 20

// CheckPeakRSS fails t when this process's peak resident set size has
// passed BoundedMemory, and skips it where the system does not say.
func CheckPeakRSS(t testing.TB) {
	t.Helper()
	hwm, err := proc.PeakRSS()
	if errors.Is(err, proc.ErrNoPeakRSS) {
		t.Skipf("no peak RSS to measure with: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if hwm > BoundedMemory {
		t.Errorf("peak RSS %d MiB, want under %d MiB", hwm>>20, BoundedMemory>>20)
	}
}
