package repomap

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestPruneCache keeps the newest files of one kind and touches nothing
// else in the directory.
func TestPruneCache(t *testing.T) {
	dir := t.TempDir()
	old := time.Now().Add(-time.Hour)
	for i := 0; i < 5; i++ {
		p := filepath.Join(dir, fmt.Sprintf("locate-%d.idx", i))
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		// locate-4 is the newest, locate-0 the oldest.
		at := old.Add(time.Duration(i) * time.Minute)
		if err := os.Chtimes(p, at, at); err != nil {
			t.Fatal(err)
		}
	}
	for _, other := range []string{"repomap-a.gob", "locate-notes.txt", "unrelated.idx"} {
		if err := os.WriteFile(filepath.Join(dir, other), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	PruneCache(dir, "locate-", ".idx", 2)
	var left []string
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		left = append(left, e.Name())
	}
	want := []string{"locate-3.idx", "locate-4.idx", "locate-notes.txt", "repomap-a.gob", "unrelated.idx"}
	if !slices.Equal(left, want) {
		t.Errorf("left %v, want %v", left, want)
	}
	PruneCache(filepath.Join(dir, "missing"), "locate-", ".idx", 2) // no directory: nothing to do
}
