package locate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/planexhq/planex/internal/repomap"
	"github.com/planexhq/planex/internal/repomap/repomaptest"
)

// buildLeftovers lists what a cold query left in cache besides index
// files: its temporary build directories must be gone.
func buildLeftovers(t *testing.T, cache string) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(cache, buildDirPrefix+"*"))
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// savedIndex is the one index file a cold query saved in cache.
func savedIndex(t *testing.T, cache string) string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(cache, "locate-*.idx"))
	if err != nil || len(names) != 1 {
		t.Fatalf("index files in %s: %v (%v), want one", cache, names, err)
	}
	return names[0]
}

// TestStreamedIndexIsTheBuiltOne checks that a cold query, which streams
// the map a chunk at a time through spilled runs, saves byte for byte the
// index NewIndex builds from the whole map and encode writes, ranks from
// that file as the built index ranks, and leaves nothing behind in the
// cache or the repository. Small chunks make many runs to merge.
func TestStreamedIndexIsTheBuiltOne(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, query := repomaptest.GenerateRepo(t, dir, 400)
	ctx := context.Background()
	for _, chunk := range []int{1, 29, 0} {
		cache := t.TempDir()
		ix, err := Open(ctx, dir, repomap.Options{CacheDir: cache, ChunkFiles: chunk})
		if err != nil {
			t.Fatal(err)
		}
		if ix.src == nil || ix.fromCache {
			t.Fatalf("chunks of %d: a cold query did not serve from the saved file (or called it cached)", chunk)
		}
		saved, err := os.ReadFile(savedIndex(t, cache))
		if err != nil {
			t.Fatal(err)
		}
		mem := builtIndex(t, dir)
		if !bytes.Equal(saved, mem.encode()) {
			t.Fatalf("chunks of %d: the streamed index file (%d bytes) differs from the built one's encoding (%d)", chunk, len(saved), len(mem.encode()))
		}
		got, err := ix.Rank(query, 50, Options{})
		if err != nil {
			t.Fatal(err)
		}
		want, err := mem.Rank(query, 50, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) == 0 || rankingHash(got) != rankingHash(want) {
			t.Fatalf("chunks of %d: ranked %s, built index %s", chunk, rankingHash(got), rankingHash(want))
		}
		if err := ix.Close(); err != nil {
			t.Fatal(err)
		}
		if left := buildLeftovers(t, cache); len(left) != 0 {
			t.Fatalf("a cold query left %v", left)
		}
	}
	if st := repomaptest.Git(t, dir, "status", "--porcelain", "--ignored"); st != "" {
		t.Fatalf("cold queries wrote into the repository:\n%s", st)
	}
}

// TestStreamedIndexCleansUpOnFailure checks that a cold query whose build
// fails removes its temporary files: cancelled while mapping, and when
// the index cannot take its place (a directory is in the way), where the
// query still ranks from an index built in memory.
func TestStreamedIndexCleansUpOnFailure(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, query := repomaptest.GenerateRepo(t, dir, 200)
	opts := repomap.Options{ChunkFiles: 16}

	cache := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	dest := indexPath(cache, "k")
	if _, err := streamIndex(ctx, dir, opts, historySource{dir: dir, rev: "HEAD"}, cache, dest); !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled build returned %v", err)
	}
	if left := buildLeftovers(t, cache); len(left) != 0 {
		t.Fatalf("a cancelled build left %v", left)
	}
	if _, err := os.Lstat(dest); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a cancelled build saved an index: %v", err)
	}

	// The index's own name taken by a directory: the rename fails
	// after every run was written and merged.
	cache = t.TempDir()
	first, err := Open(context.Background(), dir, repomap.Options{CacheDir: cache})
	if err != nil {
		t.Fatal(err)
	}
	want, err := first.Rank(query, 20, Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := savedIndex(t, cache)
	first.Close()
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(p, "taken"), 0o700); err != nil {
		t.Fatal(err)
	}
	opts.CacheDir = cache
	ix, err := Open(context.Background(), dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if ix.src != nil {
		t.Fatal("the query claims to serve from a file it could not save")
	}
	got, err := ix.Rank(query, 20, Options{})
	if err != nil || rankingHash(got) != rankingHash(want) {
		t.Fatalf("the in-memory fallback ranked %s (%v), want %s", rankingHash(got), err, rankingHash(want))
	}
	if left := buildLeftovers(t, cache); len(left) != 0 {
		t.Fatalf("a build whose index could not be saved left %v", left)
	}
}

// TestStaleBuildsArePruned checks that a cold query removes the build
// directory a killed query left behind, once it is old enough not to be
// another query's at work, and leaves a recent one alone.
func TestStaleBuildsArePruned(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	repomaptest.GenerateRepo(t, dir, 50)
	cache := t.TempDir()
	stale, fresh := filepath.Join(cache, buildDirPrefix+"killed"), filepath.Join(cache, buildDirPrefix+"running")
	for _, d := range []string{stale, fresh} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "run-1"), []byte("partial"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-staleBuildAge - time.Minute)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	ix, err := Open(context.Background(), dir, repomap.Options{CacheDir: cache})
	if err != nil {
		t.Fatal(err)
	}
	ix.Close()
	if _, err := os.Lstat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a stale build directory survived a cold query: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(fresh, "run-1")); err != nil {
		t.Errorf("a recent build directory was removed: %v", err)
	}
}

// TestStreamedHistoryIsTheBuiltOne checks that a cold query, which indexes
// the history beside the index's tables with the records' paths looked up
// in the map's, saves the history and cited commits NewIndex's build
// saves: commits citing numbers and not, a commit changing a skipped
// (binary) file that comes before the others in path order, so a file's
// number in the listing is not its number in the index, and a removed
// file.
func TestStreamedHistoryIsTheBuiltOne(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	repomaptest.GenerateRepo(t, dir, 60)
	files := strings.Fields(repomaptest.Git(t, dir, "ls-files", "*.py", "*.go"))
	if len(files) < 6 {
		t.Fatalf("generated %d source files", len(files))
	}
	commit := func(msg string, edit ...string) {
		t.Helper()
		for _, f := range edit {
			fh, err := os.OpenFile(filepath.Join(dir, f), os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(fh, "\n// %s\n", msg)
			fh.Close()
		}
		repomaptest.Git(t, dir, "add", "-A")
		repomaptest.Git(t, dir, "commit", "-q", "-m", msg)
	}
	if err := os.WriteFile(filepath.Join(dir, "aaa.bin"), []byte("\x00\x01binary"), 0o644); err != nil {
		t.Fatal(err)
	}
	commit("Add a blob beside the parser (#7)")
	commit("Fix the parser's cache lookup (#12)", files[0], files[3])
	commit("Tidy the worker's batches", files[1])
	repomaptest.Git(t, dir, "rm", "-q", files[2])
	commit("Drop an old module, see #12 and #30")
	commit("Rename a helper in the tracker (fixes #41)\n\nLonger body naming #5.", files[4], files[5], "aaa.bin")

	cache := t.TempDir()
	ix, err := Open(context.Background(), dir, repomap.Options{CacheDir: cache, ChunkFiles: 16})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	mem := builtIndex(t, dir)
	if mem.hist.commits() != 3 || len(mem.cited.off) != 3 {
		t.Fatalf("the built index kept %d commits and %d cited commits, want 3 and 2 (the others change no indexed file or too many)", mem.hist.commits(), len(mem.cited.off)-1)
	}
	saved, err := os.ReadFile(savedIndex(t, cache))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(saved, mem.encode()) {
		t.Fatalf("the streamed index file (%d bytes) differs from the built one's encoding (%d)", len(saved), len(mem.encode()))
	}
}
