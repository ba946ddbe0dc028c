package proc

import (
	"errors"
	"testing"
)

func TestPeakRSS(t *testing.T) {
	t.Parallel()
	before, err := PeakRSS()
	if errors.Is(err, ErrNoPeakRSS) {
		t.Skipf("no peak memory on this system: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	// Touch 64 MiB: the peak must rise to hold it.
	buf := make([]byte, 64<<20)
	for i := range buf {
		if i%4096 == 0 {
			buf[i] = 1
		}
	}
	after, err := PeakRSS()
	if err != nil {
		t.Fatal(err)
	}
	if after < before || after < 64<<20 {
		t.Errorf("peak RSS %d after touching 64 MiB (before: %d)", after, before)
	}
	_ = buf[len(buf)-1]
}
