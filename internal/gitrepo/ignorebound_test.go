package gitrepo

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestRedTeamIgnorerBounded: a repository ships a root .gitignore of
// 60,000 patterns and 1,000 folders with a .gitignore of one line each;
// an agent's list_files (planex's own Ignorer, outside the sandbox)
// walks them. Each folder's patterns were a copy of everything above
// it, so the walk allocated a gigabyte (and more with more folders); the
// patterns are now shared, and the rules still hold: a deeper file's
// negation wins over the root's pattern. A root file of 400,000 lines
// (read whole before) keeps at most maxIgnorePatterns, and the patterns
// read within the bound still ignore.
//
// Not parallel: it measures the process's allocations.
func TestRedTeamIgnorerBounded(t *testing.T) {
	root := t.TempDir()
	var b strings.Builder
	b.WriteString("*.tmp\nkeep*\n")
	for i := range 60_000 {
		fmt.Fprintf(&b, "p%d\n", i)
	}
	write := func(rel, body string) {
		t.Helper()
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(".gitignore", b.String())
	const folders = 1000
	for i := range folders {
		write(fmt.Sprintf("d%d/.gitignore", i), "!keep.me\n")
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	ig := NewIgnorer(root)
	for i := range folders {
		dir := fmt.Sprintf("d%d", i)
		if ig.Ignored(dir+"/keep.me", false) {
			t.Errorf("%s/keep.me ignored: the folder's negation must win", dir)
		}
		if i < 3 && !ig.Ignored(dir+"/x.tmp", false) {
			t.Errorf("%s/x.tmp not ignored: the root's patterns must hold", dir)
		}
	}
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 256<<20 {
		t.Errorf("walking %d folders allocated %d MiB; want at most 256 MiB", folders, got>>20)
	}

	for i := 60_000; i < 400_000; i++ {
		fmt.Fprintf(&b, "p%d\n", i)
	}
	write(".gitignore", b.String())
	big := NewIgnorer(root)
	if !big.Ignored("d0/x.tmp", false) || big.Ignored("d0/other", false) {
		t.Error("the patterns read within the bound do not decide as before")
	}
	if big.held > maxIgnorePatterns {
		t.Errorf("kept %d patterns; want at most %d", big.held, maxIgnorePatterns)
	}
}

// TestRedTeamIgnorerBoundsPatternText: the Ignorer kept at most 65,536
// patterns, but a pattern is a line of up to 64 KiB: an agent's folders
// (or a repository's, one blob checked out many times) each holding a
// .gitignore of 15 such lines made a walk keep all of their text, up to
// 4 GiB within the pattern count. Here 64 folders, 60 MiB of patterns.
//
// Not parallel: it measures the process's allocations.
func TestRedTeamIgnorerBoundsPatternText(t *testing.T) {
	root := t.TempDir()
	var b strings.Builder
	for i := range 15 {
		fmt.Fprintf(&b, "%s%02d\n", strings.Repeat("x", 64<<10-8), i)
	}
	const folders = 64
	for i := range folders {
		dir := filepath.Join(root, fmt.Sprintf("d%02d", i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte(b.String()+"*.tmp\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var ig *Ignorer
	ignored := 0
	got := allocated(func() {
		ig = NewIgnorer(root)
		for i := range folders {
			if ig.Ignored(fmt.Sprintf("d%02d/x.tmp", i), false) {
				ignored++
			}
		}
	})
	if got > 32<<20 {
		t.Errorf("walking %d folders of long patterns allocated %d MiB; want at most 32 MiB", folders, got>>20)
	}
	if ignored == 0 {
		t.Error("no folder's *.tmp was ignored: the first files read must hold")
	}
	runtime.KeepAlive(ig)
}
