package repomap

import (
	"bytes"
	"context"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/planexhq/planex/internal/repomap/repomaptest"
)

// settle waits until everything written so far is older than the racy
// window, so the next key relies on stamps alone.
func settle() { time.Sleep(racyWindow + 100*time.Millisecond) }

func writeFile(t *testing.T, dir, rel, content string) {
	t.Helper()
	repomaptest.WriteFiles(t, dir, map[string]string{rel: content})
}

// TestStateKeyChanges makes every kind of change to a work tree whose
// state record was saved and checks the key changes, while the key of an
// unchanged tree (or of a change to an ignored file) stays and is
// computed from stamps alone, without listing the tree with git again.
// The user's index file is never written.
func TestStateKeyChanges(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		// prepare runs after the tree settled, just before the first key.
		prepare func(t *testing.T, dir string)
		change  func(t *testing.T, dir string)
		// then, when set, is a further change after change's key, which
		// must change the key again.
		then func(t *testing.T, dir string)
		// same is true when the key must not change.
		same bool
		// frozen, when set, is a file whose stamp the keyer's stater keeps
		// at what it was before change (size, mtime, ctime and inode all
		// the same, as when a same-size rewrite lands within one clock
		// tick of the stamp); the keyer's clock then reads that mtime plus
		// age, so the change is inside the racy window or outside it.
		frozen string
		age    time.Duration
	}{
		{name: "nothing", change: func(*testing.T, string) {}, same: true},
		{name: "edit tracked, same size, same second", prepare: func(t *testing.T, dir string) {
			writeFile(t, dir, "src/app.go", "package src // v2\n")
		}, change: func(t *testing.T, dir string) {
			writeFile(t, dir, "src/app.go", "package src // v3\n")
		}},
		{name: "edit tracked, size and mtime put back", change: func(t *testing.T, dir string) {
			p := filepath.Join(dir, "src", "app.go")
			st, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			writeFile(t, dir, "src/app.go", "package src // v9\n")
			if err := os.Chtimes(p, st.ModTime(), st.ModTime()); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "same-size edit, stamp unchanged (faked), within the racy window", frozen: "src/app.go", age: racyWindow / 2,
			change: func(t *testing.T, dir string) { writeFile(t, dir, "src/app.go", "package src // v9\n") }},
		// Outside the window the stamp is trusted: the key hashes no
		// contents, so this edit (which no stamp shows) keeps the key.
		{name: "same-size edit, stamp unchanged (faked), outside the racy window", frozen: "src/app.go", age: 5 * racyWindow,
			change: func(t *testing.T, dir string) { writeFile(t, dir, "src/app.go", "package src // v9\n") }, same: true},
		{name: "chmod", change: func(t *testing.T, dir string) {
			if err := os.Chmod(filepath.Join(dir, "src", "app.go"), 0o755); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "new untracked file in a new deep folder", change: func(t *testing.T, dir string) {
			writeFile(t, dir, "src/a/b/c/d/new.py", "x = 1\n")
		}},
		{name: "new file in a folder of ignored files", change: func(t *testing.T, dir string) {
			writeFile(t, dir, "logs/notes.txt", "kept\n")
		}},
		{name: "new file in an empty folder", change: func(t *testing.T, dir string) {
			writeFile(t, dir, "empty/inner/first.go", "package inner\n")
		}},
		{name: "rename", change: func(t *testing.T, dir string) {
			if err := os.Rename(filepath.Join(dir, "src", "app.go"), filepath.Join(dir, "src", "main.go")); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "delete", change: func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, "lib", "util.py")); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "git add", change: func(t *testing.T, dir string) {
			repomaptest.Git(t, dir, "add", "notes.md")
		}},
		{name: "checkout of another branch", change: func(t *testing.T, dir string) {
			repomaptest.Git(t, dir, "checkout", "-q", "other")
		}},
		{name: "edit an untracked file", change: func(t *testing.T, dir string) {
			writeFile(t, dir, "notes.md", "draft two, longer\n")
		}},
		{name: "edit an untracked file, same size, same second", prepare: func(t *testing.T, dir string) {
			writeFile(t, dir, "notes.md", "draft 2\n")
		}, change: func(t *testing.T, dir string) {
			writeFile(t, dir, "notes.md", "draft 3\n")
		}},
		{name: "an ignore rule no longer ignores a file, then that file is edited", change: func(t *testing.T, dir string) {
			writeFile(t, dir, "lib/.gitignore", "#\n")
		}, then: func(t *testing.T, dir string) {
			writeFile(t, dir, "lib/skip.py", "hidden = 2, now seen\n")
		}},
		// The key stamps no .gitignore that was missing from a watched
		// folder: the folder's own stamp shows one created there.
		{name: "a new .gitignore in a folder that had none ignores an untracked file", prepare: func(t *testing.T, dir string) {
			writeFile(t, dir, "src/scratch.py", "x = 1\n")
		}, change: func(t *testing.T, dir string) {
			writeFile(t, dir, "src/.gitignore", "scratch.py\n.gitignore\n")
		}},
		{name: "edit an ignored file", change: func(t *testing.T, dir string) {
			writeFile(t, dir, "logs/run.log", "another line, longer than before\n")
		}, same: true},
	}
	// One tree is made and copied for every case, and all settle at once.
	tmpl := t.TempDir()
	repomaptest.InitRepo(t, tmpl, map[string]string{
		"src/app.go": "package src // v1\n", "lib/util.py": "def f():\n    pass\n",
		".gitignore": "*.log\n", "lib/.gitignore": "skip.py\n",
	})
	repomaptest.Git(t, tmpl, "checkout", "-q", "-b", "other")
	writeFile(t, tmpl, "src/app.go", "package src // other branch\n")
	repomaptest.Git(t, tmpl, "commit", "-q", "-am", "other", "--no-gpg-sign")
	repomaptest.Git(t, tmpl, "checkout", "-q", "main")
	writeFile(t, tmpl, "notes.md", "draft 1\n")
	writeFile(t, tmpl, "logs/run.log", "log\n")
	writeFile(t, tmpl, "lib/skip.py", "hidden = 1\n")
	if err := os.MkdirAll(filepath.Join(tmpl, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	dirs := make([]string, len(cases))
	for i := range cases {
		dirs[i] = t.TempDir()
		if err := os.CopyFS(dirs[i], os.DirFS(tmpl)); err != nil {
			t.Fatal(err)
		}
	}
	settle()
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := dirs[i]
			ctx := context.Background()
			k := newStateKeyer(ctx, t, dir)
			g := k.git
			if tc.frozen != "" {
				f := &frozenStat{path: tc.frozen, held: statStamp(filepath.Join(dir, tc.frozen))}
				k.stat = f
				k.now = func() time.Time { return time.Unix(0, f.held.Mtime).Add(tc.age) }
			}
			index := func() []byte {
				data, err := os.ReadFile(g.index)
				if err != nil {
					t.Fatal(err)
				}
				return data
			}
			if tc.prepare != nil {
				tc.prepare(t, dir)
			} else {
				// The second key of a settled tree needs no listing.
				first, err := k.key(ctx)
				if err != nil {
					t.Fatal(err)
				}
				again, err := k.key(ctx)
				// Inside a faked racy window the directories are as recent
				// as the frozen file, so no record is trusted: each key lists.
				want := 1
				if tc.frozen != "" && tc.age <= racyWindow {
					want = 2
				}
				if err != nil || again != first || k.listings != want {
					t.Fatalf("unchanged tree: keys %s then %s (%v), %d listings, want one key and %d listings", first, again, err, k.listings, want)
				}
			}
			indexBefore, stampBefore := index(), statStamp(g.index)
			before, err := k.key(ctx)
			if err != nil {
				t.Fatal(err)
			}
			listed := k.listings
			tc.change(t, dir)
			after, err := k.key(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if tc.same && after != before {
				t.Errorf("key changed from %s to %s", before, after)
			}
			if tc.same && tc.prepare == nil && k.listings != listed {
				t.Errorf("the key listed the tree again (%d listings, want %d)", k.listings, listed)
			}
			if tc.frozen != "" && tc.age > racyWindow && k.contentReads != 0 {
				t.Errorf("outside the racy window the key hashed %d files by their contents, want none", k.contentReads)
			}
			if !tc.same && after == before {
				t.Errorf("key %s did not change", before)
			}
			if tc.then != nil {
				tc.then(t, dir)
				if again, err := k.key(ctx); err != nil || again == after {
					t.Errorf("key %s did not change after the second change (%v)", after, err)
				}
			}
			if tc.name != "git add" && tc.name != "checkout of another branch" &&
				(!bytes.Equal(index(), indexBefore) || statStamp(g.index) != stampBefore) {
				t.Error("computing the key wrote the user's index file")
			}
		})
	}
}

// TestStateKeyStampsNoMissingIgnoreFile checks that a key from a saved
// record stamps the .gitignore files that exist and the folders, but not
// the .gitignore missing from each folder, and that creating one there
// is still seen (by its folder's stamp): the key lists the tree again.
func TestStateKeyStampsNoMissingIgnoreFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	repomaptest.InitRepo(t, dir, map[string]string{"src/app.go": "package src\n", "lib/.gitignore": "*.tmp\n", "lib/util.py": "x = 1\n"})
	writeFile(t, dir, "src/scratch.py", "y = 2\n")
	settle()
	ctx := context.Background()
	g := findGit(ctx, dir)
	if g == nil {
		t.Fatal("no git work tree found")
	}
	seen := &countStat{}
	k := &stateKeyer{root: dir, git: g, cache: t.TempDir(), opts: Options{MaxFileBytes: DefaultMaxFileBytes}, now: time.Now, stat: seen}
	first, err := k.key(ctx)
	if err != nil {
		t.Fatal(err)
	}
	seen.paths = map[string]int{}
	if again, err := k.key(ctx); err != nil || again != first || k.listings != 1 {
		t.Fatalf("unchanged tree: keys %s then %s (%v), %d listings", first, again, err, k.listings)
	}
	// lib/.gitignore is a watched ignore source and a listed file.
	for p, want := range map[string]int{"src": 1, "lib": 1, "lib/.gitignore": 2, "src/app.go": 1, "src/scratch.py": 1} {
		if seen.paths[p] != want {
			t.Errorf("%s stamped %d times, want %d", p, seen.paths[p], want)
		}
	}
	for _, p := range []string{".gitignore", "src/.gitignore"} {
		if seen.paths[p] != 0 {
			t.Errorf("missing %s stamped %d times, want none", p, seen.paths[p])
		}
	}
	writeFile(t, dir, "src/.gitignore", "scratch.py\n")
	after, err := k.key(ctx)
	if err != nil || after == first || k.listings != 2 {
		t.Errorf("after a new src/.gitignore: key %s (was %s, %v), %d listings, want a new key and 2", after, first, err, k.listings)
	}
}

// countStat stamps from the file system and counts the relative paths
// it was asked for.
type countStat struct {
	mu    sync.Mutex
	paths map[string]int
}

func (c *countStat) stamps(dst []stamp, root string, paths []string) []stamp {
	c.mu.Lock()
	if c.paths != nil {
		for _, p := range paths {
			c.paths[p]++
		}
	}
	c.mu.Unlock()
	return osStat{}.stamps(dst, root, paths)
}

func (c *countStat) stamp(name string) stamp { return osStat{}.stamp(name) }

// frozenStat stamps from the file system, except that path (relative to
// the root) keeps the stamp held whatever happens to it.
type frozenStat struct {
	path string
	held stamp
}

func (f *frozenStat) stamps(dst []stamp, root string, paths []string) []stamp {
	out := osStat{}.stamps(dst, root, paths)
	for i, p := range paths {
		if p == f.path {
			out[i] = f.held
		}
	}
	return out
}

func (f *frozenStat) stamp(name string) stamp { return osStat{}.stamp(name) }

// TestStateKeyOfASubdirectory maps a subdirectory: a .gitignore above it
// that stops ignoring one of its files sends the key back to git, so an
// edit of that file then changes the key.
func TestStateKeyOfASubdirectory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	repomaptest.InitRepo(t, dir, map[string]string{"sub/app.go": "package sub\n", ".gitignore": "*.gen\n"})
	writeFile(t, dir, "sub/out.gen", "generated\n")
	settle()
	ctx := context.Background()
	sub := filepath.Join(dir, "sub")
	g := findGit(ctx, sub)
	if g == nil || g.prefix != "sub/" {
		t.Fatalf("git info %+v, want prefix sub/", g)
	}
	k := &stateKeyer{root: sub, git: g, cache: t.TempDir(), opts: Options{MaxFileBytes: DefaultMaxFileBytes}, now: time.Now}
	first, err := k.key(ctx)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, ".gitignore", "*.tmp\n")
	second, err := k.key(ctx)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "sub/out.gen", "generated again\n")
	third, err := k.key(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if second == first || third == second {
		t.Errorf("keys %s, %s, %s: want each change to change the key", first, second, third)
	}
}

// newStateKeyer finds the git work tree at dir and returns a keyer of it
// with the default limits, the real clock and a fresh cache folder.
func newStateKeyer(ctx context.Context, t *testing.T, dir string) *stateKeyer {
	t.Helper()
	g := findGit(ctx, dir)
	if g == nil {
		t.Fatal("no git work tree found")
	}
	return &stateKeyer{root: dir, git: g, cache: t.TempDir(), opts: Options{MaxFileBytes: DefaultMaxFileBytes}, now: time.Now}
}

// keyedTree makes a settled git tree of files and returns a keyer of it
// (newStateKeyer) and the key it gave first, which saved its record.
func keyedTree(ctx context.Context, t *testing.T, files map[string]string) (*stateKeyer, string) {
	t.Helper()
	dir := t.TempDir()
	repomaptest.InitRepo(t, dir, files)
	settle()
	k := newStateKeyer(ctx, t, dir)
	key, err := k.key(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return k, key
}

// TestStateRecordOutsideTheTree: a saved record that lists a path outside
// the tree (planted in the cache) is not used, so the map never reads it;
// the key lists the tree with git again.
func TestStateRecordOutsideTheTree(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	k, key := keyedTree(ctx, t, map[string]string{"app.go": "package app\n"})
	for _, bad := range []string{"../secret", "/etc/passwd", "a/../../b", "./app.go", ""} {
		rec, err := k.load()
		if err != nil {
			t.Fatal(err)
		}
		rec.Files = append(rec.Files, bad)
		if err := k.save(rec); err != nil {
			t.Fatal(err)
		}
		if files, ok := k.listing(key); ok {
			t.Errorf("a record listing %q gave the map %v", bad, files)
		}
		listed := k.listings
		if _, err := k.key(ctx); err != nil || k.listings != listed+1 {
			t.Errorf("with %q in the record: %v, %d listings, want one more than %d", bad, err, k.listings, listed)
		}
	}
}

// TestGeneratedTreesSettle: the benchmarks wait repomaptest.Settle
// after generating a tree, so that their timed queries find every file
// older than the racy window.
func TestGeneratedTreesSettle(t *testing.T) {
	t.Parallel()
	if repomaptest.Settle <= racyWindow {
		t.Errorf("repomaptest.Settle = %v, want more than the racy window %v", repomaptest.Settle, racyWindow)
	}
}

// TestStateRecordDamaged: a saved record cut short, or claiming more
// files or a longer path than it holds, is not used: the key lists the
// tree with git again and comes out the same.
func TestStateRecordDamaged(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	k, key := keyedTree(ctx, t, map[string]string{"app.go": "package app\n", "lib/util.py": "x = 1\n"})
	good, err := os.ReadFile(k.recordPath())
	if err != nil {
		t.Fatal(err)
	}
	// The record ends with its last path, "lib/util.py", after its length.
	last := len(good) - len("lib/util.py") - 1
	for name, data := range map[string][]byte{
		"cut in its header": good[:len(good)/3],
		"cut in a path":     good[:len(good)-3],
		"a longer path":     append(append(slices.Clone(good[:last]), 0x7f), good[last+1:]...),
		"no header length":  {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01},
	} {
		if err := os.WriteFile(k.recordPath(), data, 0o644); err != nil {
			t.Fatal(err)
		}
		listed := k.listings
		if again, err := k.key(ctx); err != nil || again != key || k.listings != listed+1 {
			t.Errorf("%s: key %s (%v), %d listings, want %s after one more than %d", name, again, err, k.listings, key, listed)
		}
	}
}

// TestStateKeyStableAsFilesAge: a file counted by its contents while it
// was young keeps the key it gave when it ages (a tree used right after
// it was written hits the cache of the same tree later), unless a write
// its stamp did not show happened meanwhile. The stamp of src/app.go is
// frozen and the clock faked: 1 s after its mtime (young), then 10 s and
// 20 s after (old).
func TestStateKeyStableAsFilesAge(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		// hidden rewrites src/app.go with the same size between the
		// young key and the first old one; its stamp stays frozen.
		hidden bool
	}{
		{name: "unchanged"},
		{name: "rewritten within the stamp's tick", hidden: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			repomaptest.InitRepo(t, dir, map[string]string{"src/app.go": "package src // v1\n", "lib/util.py": "x = 1\n"})
			ctx := context.Background()
			g := findGit(ctx, dir)
			if g == nil {
				t.Fatal("no git work tree found")
			}
			f := &frozenStat{path: "src/app.go", held: statStamp(filepath.Join(dir, "src", "app.go"))}
			var age time.Duration
			k := &stateKeyer{root: dir, git: g, cache: t.TempDir(), opts: Options{MaxFileBytes: DefaultMaxFileBytes}, stat: f,
				now: func() time.Time { return time.Unix(0, f.held.Mtime).Add(age) }}
			keyAt := func(a time.Duration) (string, int) {
				t.Helper()
				age = a
				reads := k.contentReads
				key, err := k.key(ctx)
				if err != nil {
					t.Fatal(err)
				}
				return key, k.contentReads - reads
			}
			young, youngReads := keyAt(racyWindow / 2)
			if youngReads == 0 {
				t.Fatal("a young tree's key read no contents")
			}
			if tc.hidden {
				writeFile(t, dir, "src/app.go", "package src // v2\n")
			}
			old, oldReads := keyAt(5 * racyWindow)
			later, laterReads := keyAt(10 * racyWindow)
			t.Logf("contents read: %d young, %d at the first old key, %d after", youngReads, oldReads, laterReads)
			if oldReads == 0 || laterReads != 0 {
				t.Errorf("the first old key read %d files, the next %d: want the young ones read again once, then none", oldReads, laterReads)
			}
			if later != old {
				t.Errorf("two old keys of one tree differ: %s, %s", old, later)
			}
			if tc.hidden && old == young {
				t.Errorf("a rewrite its stamp did not show kept the key %s", young)
			}
			if !tc.hidden && old != young {
				t.Errorf("the key changed from %s to %s as the tree aged", young, old)
			}
		})
	}
}

// TestLocalPath checks the element scan a key runs on every path of its
// record against what it replaced: path.Clean leaves the path alone, and
// it is neither ".", "..", above the root nor absolute.
func TestLocalPath(t *testing.T) {
	t.Parallel()
	cleaned := func(p string) bool {
		return p != "" && !strings.HasPrefix(p, "/") && path.Clean(p) == p && p != "." && p != ".." &&
			!strings.HasPrefix(p, "../") && filepath.IsLocal(filepath.FromSlash(p))
	}
	paths := []string{
		"", ".", "..", "/", "//", "a", "a/b", "a/b/c.go", "/a", "a/", "a//b", "./a", "a/.", "a/./b",
		"../a", "a/..", "a/../b", "..a", "a..", "a/..b/c", ".a/.b", "...", "a/.../b", "a\\..\\b",
		"a\x00b", "é/ü.py", "a/b/", "///a", ".git/config", " /a", "a/ ",
	}
	for _, p := range paths {
		if got, want := localPath(p), cleaned(p); got != want {
			t.Errorf("localPath(%q) = %v, want %v", p, got, want)
		}
	}
}
