//go:build linux

package repomap

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// listTree names every path below dir (links not followed), so a test
// can tell whether anything was written there.
func listTree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		out = append(out, fmt.Sprintf("%s %v %d", p, fi.Mode(), fi.Size()))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// TestRedTeamSharedTempCache: with no HOME and no git repository the
// map is cached under the temporary folder, which every user shares.
// Another user gets there first, under the name planex used before
// (planex-cache) and the one it uses now (planex-cache-UID): a link to a
// folder of theirs, a folder of theirs (as root), a folder anyone may
// write, or, in a folder of ours, cache entries that are links to a map
// of theirs. planex reads none of their maps and writes nothing in
// their folders nor in one it did not make private; the map is built
// from the files. In a private folder of its own (made by planex, or the
// one holding the links, which it replaces) the second map comes from
// the cache, so the rows can fail.
func TestRedTeamSharedTempCache(t *testing.T) {
	uid := os.Getuid()
	names := []string{"planex-cache", fmt.Sprintf("planex-cache-%d", uid)}
	cases := []struct {
		name   string
		root   bool // chown needs root
		plant  func(t *testing.T, shared, attacker string, poison func(dir string))
		cached bool // the second build may come from the cache
	}{
		{"planex's own private folder", false, func(*testing.T, string, string, func(string)) {}, true},
		{"a link to another user's folder", false, func(t *testing.T, shared, attacker string, poison func(string)) {
			poison(attacker)
			poison(filepath.Join(attacker, "repomap"))
			for _, n := range names {
				must(t, os.Symlink(attacker, filepath.Join(shared, n)))
			}
		}, false},
		{"another user's folder", true, func(t *testing.T, shared, _ string, poison func(string)) {
			for _, n := range names {
				d := filepath.Join(shared, n)
				poison(d)
				poison(filepath.Join(d, "repomap"))
				for _, p := range []string{filepath.Join(d, "repomap"), d} {
					must(t, os.Chmod(p, 0o777))
					must(t, os.Chown(p, 65534, 65534))
				}
			}
		}, false},
		{"a folder anyone may write", false, func(t *testing.T, shared, _ string, poison func(string)) {
			for _, n := range names {
				d := filepath.Join(shared, n)
				poison(d)
				poison(filepath.Join(d, "repomap"))
				must(t, os.Chmod(filepath.Join(d, "repomap"), 0o777))
				must(t, os.Chmod(d, 0o777))
			}
		}, false},
		{"entries linked to another user's map", false, func(t *testing.T, shared, attacker string, poison func(string)) {
			poison(attacker)
			entries, err := os.ReadDir(attacker)
			must(t, err)
			for _, n := range names {
				for _, d := range []string{filepath.Join(shared, n), filepath.Join(shared, n, "repomap")} {
					must(t, os.MkdirAll(d, 0o700))
					for _, e := range entries {
						must(t, os.Symlink(filepath.Join(attacker, e.Name()), filepath.Join(d, e.Name())))
					}
				}
			}
		}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.root && os.Getuid() != 0 {
				t.Skip("making a folder another user owns needs root")
			}
			ctx := context.Background()
			root := t.TempDir()
			must(t, os.WriteFile(filepath.Join(root, "main.go"), []byte("package main\n\nfunc Real() {}\n"), 0o644))
			key, _, err := StateKey(ctx, root, Options{CacheDir: t.TempDir()})
			must(t, err)
			evil := t.TempDir()
			must(t, os.WriteFile(filepath.Join(evil, "planted.go"), []byte("package main\n\nfunc Planted() {}\n"), 0o644))
			poisoned, err := Build(ctx, evil, Options{NoCache: true})
			must(t, err)
			poison := func(dir string) { must(t, saveCache(dir, key, poisoned)) }

			shared, attacker := t.TempDir(), t.TempDir()
			must(t, os.Chmod(shared, 0o1777))
			must(t, os.Chmod(attacker, 0o777))
			c.plant(t, shared, attacker, poison)
			before := listTree(t, shared)
			attackerBefore := listTree(t, attacker)
			t.Setenv("HOME", "")
			t.Setenv("XDG_CACHE_HOME", "")
			t.Setenv("TMPDIR", shared)

			for i := 0; i < 2; i++ {
				m, err := Build(ctx, root, Options{NoGit: true})
				if err != nil {
					t.Fatalf("build %d: %v", i+1, err)
				}
				if len(m.Entries) != 1 || m.Entries[0].Path != "main.go" {
					t.Fatalf("build %d mapped %v, want main.go alone (another user's map was read)", i+1, m.Entries)
				}
				if want := c.cached && i == 1; m.FromCache != want {
					t.Errorf("build %d from the cache: %v, want %v", i+1, m.FromCache, want)
				}
			}
			if after := listTree(t, attacker); fmt.Sprint(after) != fmt.Sprint(attackerBefore) {
				t.Errorf("planex wrote in another user's folder:\nbefore %v\nafter  %v", attackerBefore, after)
			}
			if c.cached {
				fi, err := os.Lstat(filepath.Join(shared, names[1]))
				if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
					t.Errorf("planex's cache folder: %v %v, want a folder of mode 0700", fi, err)
				}
				return
			}
			if after := listTree(t, shared); fmt.Sprint(after) != fmt.Sprint(before) {
				t.Errorf("planex wrote in the shared folder:\nbefore %v\nafter  %v", before, after)
			}
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
