package proc

import (
	"bytes"
	"runtime"
	"strings"
	"testing"
)

func TestTail(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		max     int
		writes  []string
		want    string
		dropped int64
	}{
		{"less than max", 10, []string{"abc", "def"}, "abcdef", 0},
		{"exactly max", 6, []string{"abc", "def"}, "abcdef", 0},
		{"many small writes", 4, []string{"a", "b", "c", "d", "e", "f", "g", "h", "i"}, "fghi", 5},
		{"one write longer than max", 4, []string{"ab", "0123456789"}, "6789", 8},
		{"a long write then short ones", 4, []string{"0123456789", "x", "y"}, "89xy", 8},
		{"nothing", 4, nil, "", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tl := NewTail(c.max)
			for _, w := range c.writes {
				if n, err := tl.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			if tl.String() != c.want || tl.Dropped() != c.dropped {
				t.Errorf("tail = %q (dropped %d), want %q (dropped %d)", tl.String(), tl.Dropped(), c.want, c.dropped)
			}
		})
	}
}

// TestTailBoundedMemory: writing 1 GiB through a Tail of 1 MiB keeps the
// heap small and the last bytes exact.
func TestTailBoundedMemory(t *testing.T) {
	tl := NewTail(1 << 20)
	chunk := bytes.Repeat([]byte("x"), 64<<10)
	for i := 0; i < (1<<30)/len(chunk); i++ {
		tl.Write(chunk)
	}
	tl.Write([]byte("END"))
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if ms.HeapInuse > 64<<20 {
		t.Errorf("heap in use after 1 GiB = %d MiB", ms.HeapInuse>>20)
	}
	if s := tl.String(); len(s) != 1<<20 || !strings.HasSuffix(s, "xxEND") {
		t.Errorf("tail = %d bytes ending %q", len(s), s[len(s)-5:])
	}
	if want := int64(1<<30) + 3 - 1<<20; tl.Dropped() != want {
		t.Errorf("dropped %d, want %d", tl.Dropped(), want)
	}
}
