package packaging

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/planexhq/planex/"

// TestLayers holds the import rules docs/architecture.md states, over the
// non-test code of the module: state never depends on the agents, the
// engine never on GitHub, and git's libraries only in gitrepo.
func TestLayers(t *testing.T) {
	graph := importGraph(t, repoRoot(t))
	rules := []struct {
		from    string
		never   []string // import path prefixes, reached directly or not
		because string
	}{
		{"internal/session", []string{module + "internal/agent"}, "the session records state; the agents sit above it"},
		{"internal/plan", []string{module + "internal/agent", module + "internal/session"}, "plans are pure data"},
		{"internal/engine", []string{module + "internal/gh", module + "internal/action", module + "internal/event", "github.com/google/go-github"},
			"the engine runs the same locally and in the Action and knows nothing of GitHub"},
		{"internal/agent", []string{module + "internal/gh", module + "internal/action", module + "internal/engine", "github.com/google/go-github"},
			"agents never get a GitHub client"},
	}
	for _, r := range rules {
		for pkg := range graph {
			if pkg != r.from && !strings.HasPrefix(pkg, r.from+"/") {
				continue
			}
			for dep, via := range reach(graph, pkg) {
				for _, bad := range r.never {
					if dep == bad || strings.HasPrefix(dep, bad+"/") {
						t.Errorf("%s imports %s (via %s): %s", pkg, dep, via, r.because)
					}
				}
			}
		}
	}
	for pkg, deps := range graph {
		for _, d := range deps {
			if strings.HasPrefix(d, "github.com/go-git/") && pkg != "internal/gitrepo" {
				t.Errorf("%s imports %s: git goes through internal/gitrepo", pkg, d)
			}
		}
	}
}

// importGraph maps every package directory under internal/ and cmd/ (as
// a path from the root) to the imports of its non-test files.
func importGraph(t *testing.T, root string) map[string][]string {
	t.Helper()
	graph := map[string][]string{}
	fset := token.NewFileSet()
	for _, top := range []string{"internal", "cmd"} {
		err := filepath.WalkDir(filepath.Join(root, top), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && d.Name() == "testdata" {
				return filepath.SkipDir
			}
			if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
				return nil
			}
			src, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			f, err := parser.ParseFile(fset, p, src, parser.ImportsOnly)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, filepath.Dir(p))
			pkg := filepath.ToSlash(rel)
			for _, imp := range f.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				graph[pkg] = append(graph[pkg], path)
			}
			if _, ok := graph[pkg]; !ok {
				graph[pkg] = nil
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(graph) < 30 {
		t.Fatalf("found only %d packages", len(graph))
	}
	return graph
}

// reach returns every import pkg reaches, each with the module package it
// was first reached through.
func reach(graph map[string][]string, pkg string) map[string]string {
	seen := map[string]string{}
	queue := []string{pkg}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		for _, d := range graph[cur] {
			if _, ok := seen[d]; ok {
				continue
			}
			seen[d] = cur
			if local, ok := strings.CutPrefix(d, module); ok {
				queue = append(queue, local)
			}
		}
	}
	return seen
}
