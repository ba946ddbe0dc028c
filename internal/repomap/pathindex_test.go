package repomap

import (
	"fmt"
	"testing"
)

// TestPathIndexFindsEveryPath checks the import lookup's path table on
// trees of several sizes (so tables of several sizes, some nearly half
// full): every path is found at its number, paths not in the tree and
// prefixes of paths are not, and an empty tree finds nothing.
func TestPathIndexFindsEveryPath(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, 1, 8, 9, 100, 1000} {
		entries := make([]File, n)
		for i := range entries {
			entries[i].Path = fmt.Sprintf("pkg%d/mod%d.py", i%7, i)
		}
		ix := newPathIndex(fileSet{entries: entries})
		for i := range entries {
			if got, ok := ix.find(entries[i].Path); !ok || got != int32(i) {
				t.Fatalf("%d files: %s found at %d (%v), want %d", n, entries[i].Path, got, ok, i)
			}
		}
		for _, p := range []string{"", "pkg0", "pkg0/mod0", "pkg1/mod0.py", fmt.Sprintf("pkg0/mod%d.py", n+7)} {
			if got, ok := ix.find(p); ok {
				t.Fatalf("%d files: %q, not in the tree, found at %d", n, p, got)
			}
		}
	}
	if _, ok := (pathIndex{}).find("a.py"); ok {
		t.Fatal("a zero path index found a path")
	}
}

// TestPathIndexLastOfARepeatedPath checks that a path listed twice names
// the later file, as the map it replaces did.
func TestPathIndexLastOfARepeatedPath(t *testing.T) {
	t.Parallel()
	ix := newPathIndex(fileSet{entries: []File{{Path: "a.py"}, {Path: "b.py"}, {Path: "a.py"}}})
	if got, ok := ix.find("a.py"); !ok || got != 2 {
		t.Fatalf("a.py found at %d (%v), want 2", got, ok)
	}
}
