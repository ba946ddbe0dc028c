package locate

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/planexhq/planex/internal/repomap"
	"github.com/planexhq/planex/internal/repomap/repomaptest"
)

// TestGuessedIndexIsChecked checks the speculative open (guess.go): a
// query on an unchanged tree is answered from the index the last query
// used, while after an edit the ranking on that index, though computed,
// is not what Rank returns: the edited tree's own index is.
func TestGuessedIndexIsChecked(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	repomaptest.InitRepo(t, dir, project)
	opts := repomap.Options{CacheDir: t.TempDir()}
	ctx := context.Background()
	const q = "lambert conformal conic"
	first, err := Open(ctx, dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	if first.pending != nil {
		t.Fatal("a first query guessed an index")
	}
	want, err := first.Rank(q, 10, Options{})
	if err != nil {
		t.Fatal(err)
	}

	second, err := Open(ctx, dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	if second.pending == nil || second.pending.guess == "" {
		t.Fatal("a second query on an unchanged tree did not load the last index before its key")
	}
	got, err := second.Rank(q, 10, Options{})
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("guessed index ranked %v (%v), want %v", pathsOf(got), err, pathsOf(want))
	}
	if second.src == nil || !second.fromCache {
		t.Error("a confirmed guess was replaced")
	}

	// The edit adds the answer, geo/conic.py; the guessed index (the
	// tree before it) does not hold that file.
	repomaptest.WriteFiles(t, dir, map[string]string{"geo/conic.py": "def lambert_conformal_conic(lat, lon):\n    return lat\n"})
	third, err := Open(ctx, dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer third.Close()
	if third.pending == nil || third.pending.guess != second.pending.guess {
		t.Fatal("the query after the edit did not guess the last index")
	}
	// What the stale index ranks, which Rank must not return.
	stale, err := third.rankSettled(q, 3, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(stale) > 0 && stale[0].Path == "geo/conic.py" {
		t.Fatalf("the index before the edit already ranks the edited file first: %v", pathsOf(stale))
	}
	rs, err := third.Rank(q, 3, Options{})
	if err != nil || len(rs) == 0 || rs[0].Path != "geo/conic.py" {
		t.Fatalf("after the edit: %v %v, want geo/conic.py first", pathsOf(rs), err)
	}
	if third.fromCache {
		t.Error("the edited tree's index claims to be the cached one")
	}
	fresh, err := Open(ctx, dir, repomap.Options{NoCache: true})
	if err != nil {
		t.Fatal(err)
	}
	wantFresh, err := fresh.Rank(q, 3, Options{})
	if err != nil || !reflect.DeepEqual(rs, wantFresh) {
		t.Errorf("after the edit ranked %v, an uncached index %v (%v)", pathsOf(rs), pathsOf(wantFresh), err)
	}
	if n := third.NumFiles(); n != fresh.NumFiles() {
		t.Errorf("NumFiles %d, uncached index %d", n, fresh.NumFiles())
	}
}

// TestGuessedIndexClosed checks that closing a guessed index before its
// key is known leaves nothing to rank on.
func TestGuessedIndexClosed(t *testing.T) {
	t.Parallel()
	ix := reopenProject(t)
	if ix.pending == nil {
		t.Fatal("no guessed index")
	}
	closeThenRankFails(t, ix)
}

// TestLastKeyFileIsData checks that the file naming the last index is
// read as a key only: a path leading out of the cache directory (to a
// valid index of the same tree), a link or an oversized file in its place
// is ignored, and the query opens as if nothing were remembered.
func TestLastKeyFileIsData(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	repomaptest.InitRepo(t, dir, project)
	other := t.TempDir()
	if _, err := Open(context.Background(), dir, repomap.Options{CacheDir: other}); err != nil {
		t.Fatal(err)
	}
	idx, _ := filepath.Glob(filepath.Join(other, "locate-*.idx"))
	if len(idx) != 1 {
		t.Fatalf("index files = %v", idx)
	}
	valid := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(idx[0]), "locate-"), ".idx")
	for _, tc := range []struct {
		name  string
		plant func(t *testing.T, cache, p string)
	}{
		{"path out of the cache", func(t *testing.T, cache, p string) {
			rel, err := filepath.Rel(cache, other)
			if err != nil {
				t.Fatal(err)
			}
			// indexPath joins it to the other cache's index.
			key := "/../" + rel + "/locate-" + valid
			if indexPath(cache, key) != idx[0] {
				t.Fatalf("planted key leads to %s, not %s", indexPath(cache, key), idx[0])
			}
			plantFile(t, p, key)
		}},
		{"upper case", func(t *testing.T, cache, p string) { plantFile(t, p, strings.ToUpper(valid)) }},
		{"link to a key", func(t *testing.T, cache, p string) {
			plantFile(t, filepath.Join(other, "key"), valid)
			if err := os.Symlink(filepath.Join(other, "key"), p); err != nil {
				t.Fatal(err)
			}
		}},
		{"oversized", func(t *testing.T, cache, p string) { plantFile(t, p, valid+strings.Repeat("\n", 4096)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cache := t.TempDir()
			tc.plant(t, cache, lastKeyPath(cache, dir))
			ix, err := Open(context.Background(), dir, repomap.Options{CacheDir: cache})
			if err != nil {
				t.Fatal(err)
			}
			defer ix.Close()
			if ix.pending != nil {
				t.Errorf("guessed index %q from a planted file", ix.pending.guess)
			}
			if rs, err := ix.Rank("`to_metres`", 1, Options{}); err != nil || len(rs) == 0 || rs[0].Path != "geo/units.py" {
				t.Errorf("ranked %v %v", pathsOf(rs), err)
			}
			got := readLastKey(cache, dir)
			if _, err := os.Stat(indexPath(cache, got)); !indexKeyName(got) || err != nil {
				t.Errorf("the planted file was not replaced by the key of the index saved: %q (%v)", got, err)
			}
		})
	}
}

func plantFile(t *testing.T, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// waitKey waits until ix, if Open loaded it before the tree's key was
// known, is known to be the tree's index or has been replaced by it.
func waitKey(ix *Index) error {
	if ix.pending == nil {
		return nil
	}
	return ix.pending.wait(ix)
}
