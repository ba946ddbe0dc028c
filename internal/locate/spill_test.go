package locate

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/planexhq/planex/internal/repomap"
	"github.com/planexhq/planex/internal/repomap/repomaptest"
)

// TestMergeFanInIsBounded checks that a table with more runs than the
// merge's fan-in, merged in passes of a few runs at a time, comes out
// byte for byte as one merge of every run writes it, for every table
// kind, and that the passes write into the spill's own file (no file is
// left behind).
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
	// Four spill files, one a table: the passes wrote into them, and the
	// merges' section directories are gone.
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

// TestReduceRewritesOnlyTheExcess checks that a table with a few runs
// more than the fan-in has only as many runs merged again as bring it
// down to the fan-in: with 70 runs and a fan-in of 64, the first 7 become
// one run written after the others, and the other 63 are left where they
// were, not read or copied.
func TestReduceRewritesOnlyTheExcess(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	repomaptest.GenerateRepo(t, dir, 70)
	b, err := newStreamBuilder(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer b.close()
	if _, err := repomap.Stream(context.Background(), dir, repomap.Options{NoCache: true, ChunkFiles: 1}, b.chunk); err != nil {
		t.Fatal(err)
	}
	s := b.content
	before := slices.Clone(s.runs)
	if len(before) <= 64 {
		t.Fatalf("%d runs from a tree of 70 files, one a chunk, want more than 64", len(before))
	}
	size := s.size
	if err := s.reduce(64); err != nil {
		t.Fatal(err)
	}
	merged := len(before) - 64 + 1
	if len(s.runs) != 64 {
		t.Fatalf("%d runs after the reduce, want 64", len(s.runs))
	}
	if s.runs[0].off != size || s.runs[0].first != before[0].first {
		t.Errorf("first run %+v, want the merge of the first %d written at %d", s.runs[0], merged, size)
	}
	if !slices.Equal(s.runs[1:], before[merged:]) {
		t.Errorf("runs after the first were moved: %v, want %v", s.runs[1:], before[merged:])
	}
	var grew int64
	for _, r := range before[:merged] {
		grew += r.end - r.off
	}
	// Merging joins a key's postings across runs, so the merged run is no
	// longer than its parts; it is not empty either.
	if got := s.size - size; got <= 0 || got > grew {
		t.Errorf("the reduce wrote %d bytes, want between 1 and the %d bytes of the runs it merged", got, grew)
	}
}

// TestKeyPrefixOrdersAsKeys checks that wherever two keys' prefixes
// differ they order as bytes.Compare orders the keys, on keys built to
// catch the edge cases: shorter than eight bytes, ending or holding zero
// bytes, high bytes, and equal first eight bytes.
func TestKeyPrefixOrdersAsKeys(t *testing.T) {
	t.Parallel()
	keys := [][]byte{nil, {0}, {0, 0}, {0, 1}, {1}, {0xff}, {0xff, 0}, []byte("a"), []byte("a\x00"), []byte("a\x00b"),
		[]byte("ab"), []byte("abcdefg"), []byte("abcdefgh"), []byte("abcdefgh\x00"), []byte("abcdefghi"), []byte("abcdefgi"),
		[]byte("abcdefg\xff"), []byte("b"), []byte("\x80abcdefghij")}
	differ := 0
	for _, a := range keys {
		for _, b := range keys {
			pa, pb := keyPrefix(a), keyPrefix(b)
			if pa == pb {
				continue
			}
			differ++
			if want := bytes.Compare(a, b) < 0; (pa < pb) != want {
				t.Errorf("keys %q and %q: prefixes %#x and %#x order the other way", a, b, pa, pb)
			}
		}
	}
	if differ == 0 {
		t.Fatal("no two prefixes differ")
	}
	h := runHeap{{key: []byte("ab"), pre: keyPrefix([]byte("ab")), seq: 1}, {key: []byte("ab"), pre: keyPrefix([]byte("ab")), seq: 0}}
	if !h.less(1, 0) || h.less(0, 1) {
		t.Error("equal keys are not ordered by run")
	}
}
