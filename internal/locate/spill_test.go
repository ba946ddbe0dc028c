package locate

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/planexhq/planex/internal/repomap"
	"github.com/planexhq/planex/internal/repomap/repomaptest"
)

// TestMergeFanInIsBounded checks that a table with more runs than the
// merge's fan-in, merged in passes of a few runs at a time, comes out
// byte for byte as one merge of every run writes it, for every table
// kind, and that each pass removes the spill file it replaced.
func TestMergeFanInIsBounded(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	repomaptest.GenerateRepo(t, dir, 70)
	var want [][]byte
	for _, fanIn := range []int{1 << 20, 2, 3, 64} {
		got := mergedTables(t, dir, fanIn)
		if want == nil {
			want = got
			continue
		}
		for i := range want {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("fan-in %d: table %d is %d bytes, one merge of every run wrote %d", fanIn, i, len(got[i]), len(want[i]))
			}
		}
	}
}

// mergedTables streams the tree at dir one file a chunk (so a run per
// file) and returns its four merged tables as written into an index
// file, merged with at most fanIn runs at a time.
func mergedTables(t *testing.T, dir string, fanIn int) [][]byte {
	t.Helper()
	tmp := t.TempDir()
	b, err := newStreamBuilder(tmp)
	if err != nil {
		t.Fatal(err)
	}
	defer b.close()
	if _, err := repomap.Stream(context.Background(), dir, repomap.Options{NoCache: true, ChunkFiles: 1}, b.chunk); err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for _, s := range []*spill{b.content, b.paths, b.syms, b.defs} {
		if len(s.runs) < 60 {
			t.Fatalf("%d runs from a tree of 70 files, one a chunk", len(s.runs))
		}
		s.fanIn = fanIn
		var buf bytes.Buffer
		w := bufio.NewWriter(&buf)
		if err := mergeInto(w, s, tmp); err != nil {
			t.Fatal(err)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if len(s.runs) > max(fanIn, 2) {
			t.Fatalf("fan-in %d: %d runs left after the merge", fanIn, len(s.runs))
		}
		out = append(out, buf.Bytes())
	}
	// Four spill files, one a table: every pass removed the one it
	// replaced, and the merges' section directories are gone.
	left, err := filepath.Glob(filepath.Join(tmp, "*"))
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 4 {
		t.Fatalf("fan-in %d: %d files left in the build directory (%v), want the 4 spills", fanIn, len(left), left)
	}
	for _, name := range left {
		if _, err := os.Stat(name); err != nil {
			t.Fatal(err)
		}
	}
	return out
}
