package packaging

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// The architecture tests read the module's Go source once, parsed with
// comments, and share it. Nothing here type-checks: every rule is decided
// from the syntax, which keeps the tests fast and free of build state.

// srcPkg is one package directory of the module.
type srcPkg struct {
	dir    string // "internal/gitrepo", "cmd/planex"
	name   string // the package clause of its non-test files
	files  []*ast.File
	tests  []*ast.File // _test.go files of the same package (they see its unexported names)
	xtests []*ast.File // _test.go files of the external package name_test
}

// imports are the module-relative or external import paths of the
// package's non-test files, each once.
func (p *srcPkg) imports() []string {
	seen := map[string]bool{}
	var out []string
	for _, f := range p.files {
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if local, ok := strings.CutPrefix(path, module); ok {
				path = local
			}
			if !seen[path] {
				seen[path] = true
				out = append(out, path)
			}
		}
	}
	sort.Strings(out)
	return out
}

// testHelper reports whether the package exists only for tests: a fake
// or a helper named for the package it helps test (repomaptest, …), or a
// command under one (installclis).
func (p *srcPkg) testHelper() bool {
	for _, elem := range strings.Split(p.dir, "/") {
		if elem == "ghfake" || (strings.HasSuffix(elem, "test") && elem != "test") {
			return true
		}
	}
	return false
}

type source struct {
	root string
	fset *token.FileSet
	pkgs map[string]*srcPkg
}

// sorted returns the packages in path order, so failures read the same
// on every run.
func (s *source) sorted() []*srcPkg {
	out := make([]*srcPkg, 0, len(s.pkgs))
	for _, p := range s.pkgs {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].dir < out[j].dir })
	return out
}

// where is a position as a path from the module root and a line.
func (s *source) where(pos token.Pos) string {
	p := s.fset.Position(pos)
	rel, err := filepath.Rel(s.root, p.Filename)
	if err != nil {
		rel = p.Filename
	}
	return fmt.Sprintf("%s:%d", filepath.ToSlash(rel), p.Line)
}

var loadSource = sync.OnceValues(func() (*source, error) {
	root, err := findRoot()
	if err != nil {
		return nil, err
	}
	s := &source{root: root, fset: token.NewFileSet(), pkgs: map[string]*srcPkg{}}
	for _, top := range []string{"internal", "cmd"} {
		if err := filepath.WalkDir(filepath.Join(root, top), s.add); err != nil {
			return nil, err
		}
	}
	if len(s.pkgs) < 30 {
		return nil, fmt.Errorf("found only %d packages under %s", len(s.pkgs), root)
	}
	return s, nil
})

func (s *source) add(p string, d fs.DirEntry, err error) error {
	if err != nil {
		return err
	}
	if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
		return filepath.SkipDir
	}
	if d.IsDir() || !strings.HasSuffix(p, ".go") {
		return nil
	}
	f, err := parser.ParseFile(s.fset, p, nil, parser.ParseComments)
	if err != nil {
		return err
	}
	rel, _ := filepath.Rel(s.root, filepath.Dir(p))
	dir := filepath.ToSlash(rel)
	pkg := s.pkgs[dir]
	if pkg == nil {
		pkg = &srcPkg{dir: dir}
		s.pkgs[dir] = pkg
	}
	switch {
	case !strings.HasSuffix(p, "_test.go"):
		pkg.name = f.Name.Name
		pkg.files = append(pkg.files, f)
	case strings.HasSuffix(f.Name.Name, "_test"):
		pkg.xtests = append(pkg.xtests, f)
	default:
		pkg.tests = append(pkg.tests, f)
	}
	return nil
}

func findRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above %s", dir)
		}
		dir = parent
	}
}

func mustSource(t *testing.T) *source {
	t.Helper()
	s, err := loadSource()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// importName is the name a file refers to an import by.
func importName(imp *ast.ImportSpec) string {
	if imp.Name != nil {
		return imp.Name.Name
	}
	path, _ := strconv.Unquote(imp.Path.Value)
	name := path[strings.LastIndex(path, "/")+1:]
	// gopkg.in/yaml.v3, github.com/google/go-github/v60: the package
	// name is the element before a major version.
	if len(name) > 1 && name[0] == 'v' && strings.Trim(name[1:], "0123456789") == "" {
		rest := strings.TrimSuffix(path, "/"+name)
		name = rest[strings.LastIndex(rest, "/")+1:]
	}
	if i := strings.Index(name, ".v"); i > 0 {
		name = name[:i]
	}
	return strings.ReplaceAll(name, "-", "")
}

// fileImports maps the names a file uses for its imports to their paths.
func fileImports(f *ast.File) map[string]string {
	out := map[string]string{}
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		out[importName(imp)] = path
	}
	return out
}
