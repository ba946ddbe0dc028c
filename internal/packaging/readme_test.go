package packaging

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestReadmeLayoutListsEveryPackage: the README's layout paragraph names
// every Go package under internal/ (by its path under internal/, or by
// its own name next to its parent's).
func TestReadmeLayoutListsEveryPackage(t *testing.T) {
	root := repoRoot(t)
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	start := strings.Index(readme, "Layout: ")
	if start < 0 {
		t.Fatal("README.md has no layout paragraph")
	}
	layout := readme[start:]
	if end := strings.Index(layout, "\n\n"); end >= 0 {
		layout = layout[:end]
	}
	named := map[string]bool{}
	for _, m := range regexp.MustCompile("`([a-z0-9/]+)`").FindAllStringSubmatch(layout, -1) {
		named[m[1]] = true
	}
	pkgs := 0
	err = filepath.WalkDir(filepath.Join(root, "internal"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() || d.Name() == "testdata" {
			if d != nil && d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return err
		}
		goFiles, _ := filepath.Glob(filepath.Join(p, "*.go"))
		if len(goFiles) == 0 {
			return nil
		}
		rel, _ := filepath.Rel(filepath.Join(root, "internal"), p)
		rel = filepath.ToSlash(rel)
		pkgs++
		if !named[rel] && !named[filepath.Base(rel)] {
			t.Errorf("the README's layout paragraph does not name internal/%s", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if pkgs < 30 {
		t.Errorf("only %d packages found under internal/", pkgs)
	}
}

// The README says what the first test run costs and how to run the fast
// part alone, with a command that leaves out the end-to-end package and
// the CLI downloads.
func TestReadmeSaysWhatTestsCost(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	for _, want := range []string{
		"What the first `go test ./...` costs", "two cores", "~/.cache/planex-test-clis", "MB installed",
		"go test -short $(go list ./... | grep -v '/internal/cli$')",
	} {
		if !strings.Contains(readme, want) {
			t.Errorf("README.md does not say %q", want)
		}
	}
}
