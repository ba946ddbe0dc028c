package repomap

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/planexhq/planex/internal/repomap/repomaptest"
)

// TestRedTeamMapListingBounded: a repository commits 100,000 files named
// with 1,000 bytes each (one blob; the names repeat, so the push is
// small), and a user maps a clone of it (planex locate, explore, a plan's
// prompt). Every listing of the tree was read whole, then split into a
// string per name: 100 MB of names became some 700 MB of planex's
// allocations (848 MiB resident for 300,000 names of 450 bytes), growing
// with the names. Each listing is now read as git writes it and stops
// past 64 MiB of names (each counted with 64 bytes more), failing the map
// with ErrTreeTooLarge. Not parallel: it measures the process's
// allocations.
func TestRedTeamMapListingBounded(t *testing.T) {
	dir := t.TempDir()
	repomaptest.InitRepo(t, dir, map[string]string{"main.go": "package main\n"})
	blob := strings.TrimSpace(gitOut(t, dir, nil, "hash-object", "-w", "--stdin"))
	var info bytes.Buffer
	long := strings.Repeat("d", 240)
	for i := range 70_000 {
		fmt.Fprintf(&info, "100644 %s\t%s/%s/%s/%s%07d.go\n", blob, long, long, long, long[:230], i)
	}
	gitOut(t, dir, &info, "update-index", "--index-info")
	gitOut(t, dir, nil, "commit", "-q", "-m", "many long names")
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		opts Options
	}{
		{"with the tree's state key", Options{CacheDir: t.TempDir()}},
		{"tracked files only", Options{NoCache: true, TrackedOnly: true}},
	} {
		var err error
		got := allocatedBy(func() { _, err = Build(ctx, dir, tc.opts) })
		if !errors.Is(err, ErrTreeTooLarge) {
			t.Errorf("%s: mapping = %v, want ErrTreeTooLarge", tc.name, err)
		}
		t.Logf("%s: %v, %d MiB allocated", tc.name, err, got>>20)
		if got > 192<<20 {
			t.Errorf("%s: mapping allocated %d MiB; want at most 192 MiB", tc.name, got>>20)
		}
	}
}

// TestListingBudget: a large ordinary tree is listed whole; the bound
// counts each name with what the map keeps per file.
func TestListingBudget(t *testing.T) {
	t.Parallel()
	b := newListingBudget()
	for i := range 700_000 {
		if err := b.take(fmt.Sprintf("src/pkg%04d/file%06d.go", i%1000, i)); err != nil {
			t.Fatalf("file %d of a large ordinary tree: %v", i, err)
		}
	}
	big := newListingBudget()
	var err error
	for i := 0; err == nil; i++ {
		if i > maxListingBytes/listingEntryCost {
			t.Fatal("the bound never held")
		}
		err = big.take(strings.Repeat("x", 1000))
	}
	if !errors.Is(err, ErrTreeTooLarge) {
		t.Errorf("past the bound: %v, want ErrTreeTooLarge", err)
	}
}

func gitOut(t *testing.T, dir string, stdin *bytes.Buffer, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@example.com", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@example.com")
	if stdin != nil {
		cmd.Stdin = stdin
	} else {
		cmd.Stdin = strings.NewReader("x\n")
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// allocatedBy is how many bytes fn allocated.
func allocatedBy(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}
