package repomap

import (
	"fmt"
	"testing"
)

// TestInterner numbers far more distinct strings than the table starts
// with, each seen three times in turn, as bytes and as a string: every
// string keeps the number it got first, through every growth, and the
// strings are listed once, in order.
func TestInterner(t *testing.T) {
	t.Parallel()
	const n = 50_000
	ids := NewInterner(1 << 10)
	for round := range 3 {
		for i := range n {
			k := fmt.Sprintf("name%d", i)
			got := ids.IDString(k)
			if round == 1 {
				got = ids.ID([]byte(k))
			}
			if got != uint32(i) {
				t.Fatalf("round %d: %q numbered %d, want %d", round, k, got, i)
			}
		}
	}
	keys := ids.Strings()
	if len(keys) != n || keys[0] != "name0" || keys[n-1] != fmt.Sprintf("name%d", n-1) {
		t.Fatalf("%d strings listed (first %q), want %d", len(keys), keys[0], n)
	}
	if 2*n > len(ids.slots) {
		t.Fatalf("%d strings in %d slots, want at least twice as many slots", n, len(ids.slots))
	}
}
