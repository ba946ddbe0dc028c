package gitrepo

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The Ignorer agrees with git about which files of a tree are ignored:
// nested files, anchored and directory-only patterns, negation, and
// .git/info/exclude.
func TestIgnorerAgreesWithGit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mustGit(t, dir, "init", "-q", "-b", "main")
	files := map[string]string{
		".gitignore":          "build/\n*.log\n!keep.log\n/top-only.txt\n# a comment\n\ndocs/*.tmp\n",
		".git/info/exclude":   "local.cfg\n",
		"build/out.txt":       "",
		"src/build/deep.txt":  "",
		"src/debug.log":       "",
		"src/keep.log":        "",
		"top-only.txt":        "",
		"src/top-only.txt":    "",
		"docs/a.tmp":          "",
		"docs/sub/b.tmp":      "",
		"local.cfg":           "",
		"src/local.cfg":       "",
		"vendor/.gitignore":   "skip.go\n!/also.log\n",
		"vendor/skip.go":      "",
		"vendor/keep.go":      "",
		"vendor/also.log":     "",
		"vendor/sub/skip.go":  "",
		"vendor/sub/also.log": "",
		"main.go":             "",
	}
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want := strings.Fields(mustGit(t, dir, "ls-files", "--others", "--exclude-standard"))
	if !slices.Contains(want, "src/keep.log") || slices.Contains(want, "src/debug.log") {
		t.Fatalf("git lists %v: the test tree is not what it means to be", want)
	}

	ig := NewIgnorer(dir, filepath.Join(dir, ".git", "info", "exclude"))
	var got []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if rel == ".git" {
			return filepath.SkipDir
		}
		if ig.Ignored(rel, d.IsDir()) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.IsDir() {
			got = append(got, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("not ignored:\n got %v\nwant %v (git)", got, want)
	}
}
