package packaging

import (
	"fmt"
	"go/ast"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/planexhq/planex/"

// These tests hold docs/architecture.md to the code: the table of layers
// is read from the page itself, and each rule the page states is a check
// below (the page's last section says which test holds which rule).

// pendingPackages are named by the table before the branch that adds them
// is merged: internal/egress (the agents' HTTP egress proxy and model
// gateway, issue 32). Remove a name once its package exists.
var pendingPackages = map[string]bool{"egress": true}

// layer is one row of the page's table.
type layer struct {
	name  string
	pkgs  []string // as written: "agent", "render/md"
	index int      // 0 at the top
}

type layers struct {
	rows []layer
	// of maps a table name to its row.
	of map[string]*layer
}

// rowOf returns the row of a module package ("internal/agent/mcp"): the
// row naming its longest prefix. ok is false for a package no row names.
func (ls *layers) rowOf(pkg string) (*layer, bool) {
	rel, ok := strings.CutPrefix(pkg, "internal/")
	if !ok {
		return nil, false
	}
	for {
		if l, ok := ls.of[rel]; ok {
			return l, true
		}
		i := strings.LastIndex(rel, "/")
		if i < 0 {
			return nil, false
		}
		rel = rel[:i]
	}
}

// architecturePage is docs/architecture.md without its fenced blocks
// (drawings, whose backticks are not code spans).
func architecturePage(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(mustSource(t).root, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	return fence.ReplaceAllString(string(b), "")
}

var fence = regexp.MustCompile("(?ms)^```.*?^```$")

var codeSpan = regexp.MustCompile("`([^`]+)`")

// readLayers parses the table under "## Who owns what".
func readLayers(t *testing.T) *layers {
	t.Helper()
	page := architecturePage(t)
	_, section, ok := strings.Cut(page, "## Who owns what\n")
	if !ok {
		t.Fatal(`docs/architecture.md has no "## Who owns what" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	ls := &layers{of: map[string]*layer{}}
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 4 || strings.HasPrefix(strings.TrimSpace(cells[1]), "---") || strings.TrimSpace(cells[1]) == "layer" {
			continue
		}
		l := layer{name: strings.TrimSpace(cells[1]), index: len(ls.rows)}
		for _, m := range codeSpan.FindAllStringSubmatch(cells[2], -1) {
			l.pkgs = append(l.pkgs, m[1])
		}
		ls.rows = append(ls.rows, l)
	}
	for i := range ls.rows {
		for _, p := range ls.rows[i].pkgs {
			if prev, dup := ls.of[p]; dup {
				t.Errorf("the table names %s in two rows: %s and %s", p, prev.name, ls.rows[i].name)
			}
			ls.of[p] = &ls.rows[i]
		}
	}
	if len(ls.rows) < 5 {
		t.Fatalf("read only %d rows from the table in docs/architecture.md", len(ls.rows))
	}
	return ls
}

// TestArchitectureTable: every package of internal/ is in a row, and
// every name in the table is a package.
func TestArchitectureTable(t *testing.T) {
	t.Parallel()
	s := mustSource(t)
	ls := readLayers(t)
	for _, p := range s.sorted() {
		if _, ok := ls.rowOf(p.dir); !ok && strings.HasPrefix(p.dir, "internal/") {
			t.Errorf("%s is in no row of the table in docs/architecture.md: add it where its imports put it", p.dir)
		}
	}
	for name := range ls.of {
		if _, ok := s.pkgs["internal/"+name]; ok {
			continue
		}
		if pendingPackages[name] {
			t.Logf("%s: named by the table, not merged yet", name)
			continue
		}
		t.Errorf("the table in docs/architecture.md names %s, which is no package under internal/", name)
	}
}

// TestLayers: every import of a module package points to the importer's
// own row or a row below it; cmd/planex imports cli alone; no package
// imports a test helper.
func TestLayers(t *testing.T) {
	t.Parallel()
	s := mustSource(t)
	ls := readLayers(t)
	edges := 0
	for _, p := range s.sorted() {
		from, ok := ls.rowOf(p.dir)
		for _, dep := range p.imports() {
			if !strings.HasPrefix(dep, "internal/") {
				continue
			}
			edges++
			if d := s.pkgs[dep]; d != nil && d.testHelper() && !p.testHelper() {
				t.Errorf("%s imports the test helper %s: test helpers are for tests", p.dir, dep)
			}
			to, known := ls.rowOf(dep)
			if ok && known && to.index < from.index {
				t.Errorf("%s (%s) imports %s (%s), a row above it: dependencies point down the table", p.dir, from.name, dep, to.name)
			}
		}
	}
	if edges < 100 {
		t.Fatalf("found only %d imports between the module's packages", edges)
	}
	main := s.pkgs["cmd/planex"]
	if main == nil {
		t.Fatal("no cmd/planex")
	}
	for _, dep := range main.imports() {
		if strings.HasPrefix(dep, "internal/") && dep != "internal/cli" {
			t.Errorf("cmd/planex imports %s: it only wires, through internal/cli", dep)
		}
	}
}

// gitHubCode is what "GitHub code" means in the nevers.
func gitHubCode(ls *layers) []string {
	out := []string{"github.com/google/go-github", "github.com/gofri/go-github-ratelimit"}
	for _, r := range ls.rows {
		if r.name == "GitHub" {
			for _, p := range r.pkgs {
				out = append(out, "internal/"+p)
			}
		}
	}
	return out
}

// rowPackages are the module packages of the named row.
func rowPackages(s *source, ls *layers, row string) []string {
	var out []string
	for _, p := range s.sorted() {
		if l, ok := ls.rowOf(p.dir); ok && l.name == row {
			out = append(out, p.dir)
		}
	}
	return out
}

// TestNevers holds the import rules of the nevers: what a package never
// reaches, directly or through others, and the libraries only one place
// imports.
func TestNevers(t *testing.T) {
	t.Parallel()
	s := mustSource(t)
	ls := readLayers(t)
	github := gitHubCode(ls)
	agentRow := rowPackages(s, ls, "agents")
	reaches := []struct {
		from    []string
		never   []string
		because string
	}{
		{[]string{"internal/engine"}, github, "the engine imports no GitHub code"},
		{agentRow, github, "agents never get a GitHub client"},
		{[]string{"internal/session", "internal/plan"}, agentRow, "state never depends on the agents"},
	}
	for _, r := range reaches {
		if len(r.from) == 0 || len(r.never) < 2 {
			t.Fatalf("rule %q has nothing to check: %v never %v", r.because, r.from, r.never)
		}
		for _, from := range r.from {
			reached := reach(s, from)
			deps := make([]string, 0, len(reached))
			for dep := range reached {
				deps = append(deps, dep)
			}
			sort.Strings(deps)
			for _, dep := range deps {
				via := reached[dep]
				if slices.ContainsFunc(r.never, func(bad string) bool { return dep == bad || strings.HasPrefix(dep, bad+"/") }) {
					t.Errorf("%s reaches %s (imported by %s): %s", from, dep, via, r.because)
				}
			}
		}
	}

	entryAndGitHub := append(rowPackages(s, ls, "entry"), rowPackages(s, ls, "GitHub")...)
	owners := []struct {
		lib     []string // import path prefixes
		only    []string // the packages that may import them
		because string
	}{
		{[]string{"github.com/go-git/", "gopkg.in/src-d/go-git", "github.com/libgit2/"}, []string{"internal/gitrepo"}, "all git goes through gitrepo"},
		{[]string{"github.com/bluekeyes/go-gitdiff"}, []string{"internal/review"}, "unified diffs are parsed in review and nowhere else"},
		{github, entryAndGitHub, "only the entry layer talks to GitHub"},
	}
	for _, o := range owners {
		for _, p := range s.sorted() {
			if slices.Contains(o.only, p.dir) {
				continue
			}
			for _, dep := range p.imports() {
				if slices.ContainsFunc(o.lib, func(lib string) bool { return strings.HasPrefix(dep, lib) }) {
					t.Errorf("%s imports %s: %s", p.dir, dep, o.because)
				}
			}
		}
	}
}

// reach returns every import pkg reaches through the module's packages,
// each with the module package it was first reached through.
func reach(s *source, pkg string) map[string]string {
	seen := map[string]string{}
	queue := []string{pkg}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		p := s.pkgs[cur]
		if p == nil {
			continue
		}
		for _, d := range p.imports() {
			if _, ok := seen[d]; ok {
				continue
			}
			seen[d] = cur
			if strings.HasPrefix(d, "internal/") {
				queue = append(queue, d)
			}
		}
	}
	return seen
}

// startsGit reports the calls in f that start a program named git: a
// literal "git" (or a path ending in /git) handed to os/exec, os or
// syscall.
func startsGit(f *ast.File) []ast.Node {
	imports := fileImports(f)
	var out []ast.Node
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		pkg, ok := sel.X.(*ast.Ident)
		if !ok || pkg.Obj != nil {
			return true
		}
		switch imports[pkg.Name] {
		case "os/exec", "os", "syscall":
		default:
			return true
		}
		for _, a := range call.Args {
			if lit, ok := a.(*ast.BasicLit); ok && (lit.Value == `"git"` || strings.HasSuffix(lit.Value, `/git"`)) {
				out = append(out, call)
			}
		}
		return true
	})
	return out
}

// TestGitOnlyThroughGitrepo: no package but gitrepo (and the test
// helpers, which make fixtures) starts git.
func TestGitOnlyThroughGitrepo(t *testing.T) {
	t.Parallel()
	s := mustSource(t)
	found := 0
	for _, p := range s.sorted() {
		for _, f := range p.files {
			for _, call := range startsGit(f) {
				found++
				if p.dir != "internal/gitrepo" && !p.testHelper() {
					t.Errorf("%s starts git: all git goes through gitrepo (gitrepo.Command streams its output)", s.where(call.Pos()))
				}
			}
		}
	}
	if found == 0 {
		t.Fatal("found no call that starts git, not even gitrepo's: the check is broken")
	}
}

// TestActionGitHubInterfaces: each field of action.GitHub is an interface
// of at most ten methods, declared beside the code that uses it (not in
// the file that gathers them).
func TestActionGitHubInterfaces(t *testing.T) {
	t.Parallel()
	s := mustSource(t)
	st, file := findType(s, "internal/action", "GitHub")
	if st == nil {
		t.Fatal("internal/action declares no type GitHub")
	}
	fields, ok := st.Type.(*ast.StructType)
	if !ok {
		t.Fatalf("action.GitHub is a %T, not a struct of interfaces", st.Type)
	}
	if len(fields.Fields.List) < 5 {
		t.Fatalf("action.GitHub has only %d fields", len(fields.Fields.List))
	}
	for _, f := range fields.Fields.List {
		pkg, name := "internal/action", ""
		switch x := f.Type.(type) {
		case *ast.Ident:
			name = x.Name
		case *ast.SelectorExpr:
			path := fileImports(file)[x.X.(*ast.Ident).Name]
			pkg, name = strings.TrimPrefix(path, module), x.Sel.Name
		}
		n, where, err := countMethods(s, pkg, name)
		if err != nil {
			t.Errorf("action.GitHub field %v: %v", f.Names, err)
			continue
		}
		t.Logf("action.GitHub %v: %s.%s, %d methods", f.Names, pkg, name, n)
		if n > 10 {
			t.Errorf("%s.%s (%s), action.GitHub's %v, has %d methods (at most 10): split the part", pkg, name, s.where(where.Pos()), f.Names, n)
		}
		if iface, ifile := findType(s, pkg, name); ifile == file {
			t.Errorf("%s (%s) is declared with action.GitHub: declare it beside the code that uses it", name, s.where(iface.Pos()))
		}
	}
}

// findType finds a package-level type declaration and its file.
func findType(s *source, pkg, name string) (*ast.TypeSpec, *ast.File) {
	p := s.pkgs[pkg]
	if p == nil {
		return nil, nil
	}
	for _, f := range p.files {
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok {
				continue
			}
			for _, spec := range gd.Specs {
				if ts, ok := spec.(*ast.TypeSpec); ok && ts.Name.Name == name {
					return ts, f
				}
			}
		}
	}
	return nil, nil
}

// countMethods counts an interface's methods, embedded interfaces of the
// module included.
func countMethods(s *source, pkg, name string) (int, *ast.TypeSpec, error) {
	ts, file := findType(s, pkg, name)
	if ts == nil {
		return 0, nil, fmt.Errorf("%s.%s is not declared in the module", pkg, name)
	}
	it, ok := ts.Type.(*ast.InterfaceType)
	if !ok {
		return 0, ts, fmt.Errorf("%s.%s is not an interface", pkg, name)
	}
	n := 0
	for _, m := range it.Methods.List {
		switch x := m.Type.(type) {
		case *ast.FuncType:
			n += len(m.Names)
		case *ast.Ident:
			k, _, err := countMethods(s, pkg, x.Name)
			if err != nil {
				return 0, ts, err
			}
			n += k
		case *ast.SelectorExpr:
			path := strings.TrimPrefix(fileImports(file)[x.X.(*ast.Ident).Name], module)
			k, _, err := countMethods(s, path, x.Sel.Name)
			if err != nil {
				return 0, ts, err
			}
			n += k
		default:
			return 0, ts, fmt.Errorf("%s.%s embeds a %T, which this test cannot count", pkg, name, m.Type)
		}
	}
	return n, ts, nil
}

// docName is a `package.Name` the page writes in code.
var docName = regexp.MustCompile(`^([a-z][a-z0-9]*(?:/[a-z0-9]+)*)\.([A-Za-z_][A-Za-z0-9_]*)$`)

// fileExtensions are what a `name.ext` span is when it is a file.
var fileExtensions = []string{"yml", "yaml", "md", "csv", "json", "ndjson", "sh", "go", "txt"}

// TestDocNames: every package.Name the page writes in code is declared
// in that package, and every test it names exists.
func TestDocNames(t *testing.T) {
	t.Parallel()
	s := mustSource(t)
	page := architecturePage(t)
	names, tests := 0, 0
	declared := map[string]bool{} // "internal/pkg.Name"
	testFuncs := map[string]bool{}
	for _, p := range s.sorted() {
		for _, f := range p.files {
			for name := range topLevelNames(f) {
				declared[p.dir+"."+name] = true
			}
		}
		for _, f := range append(append([]*ast.File{}, p.tests...), p.xtests...) {
			for name := range topLevelNames(f) {
				testFuncs[name] = true
			}
		}
	}
	for _, m := range codeSpan.FindAllStringSubmatch(page, -1) {
		span := strings.Join(strings.Fields(m[1]), " ")
		if strings.HasPrefix(span, "Test") && !strings.ContainsAny(span, " .") {
			tests++
			if !testFuncs[span] {
				t.Errorf("docs/architecture.md names %s, which no test file declares", span)
			}
			continue
		}
		parts := docName.FindStringSubmatch(span)
		if parts == nil || slices.Contains(fileExtensions, parts[2]) {
			continue
		}
		if _, ok := s.pkgs["internal/"+parts[1]]; !ok {
			continue
		}
		names++
		if !declared["internal/"+parts[1]+"."+parts[2]] {
			t.Errorf("docs/architecture.md names %s, which internal/%s does not declare", span, parts[1])
		}
	}
	if names < 5 || tests < 5 {
		t.Fatalf("read only %d package names and %d test names from the page", names, tests)
	}
}

// topLevelNames are the names a file declares at package level.
func topLevelNames(f *ast.File) map[string]bool {
	out := map[string]bool{}
	for _, d := range f.Decls {
		switch x := d.(type) {
		case *ast.FuncDecl:
			if x.Recv == nil {
				out[x.Name.Name] = true
			}
		case *ast.GenDecl:
			for _, spec := range x.Specs {
				switch sp := spec.(type) {
				case *ast.TypeSpec:
					out[sp.Name.Name] = true
				case *ast.ValueSpec:
					for _, n := range sp.Names {
						out[n.Name] = true
					}
				}
			}
		}
	}
	return out
}

// TestRowOf: a package belongs to the row naming its longest prefix.
func TestRowOf(t *testing.T) {
	t.Parallel()
	ls := readLayers(t)
	cases := map[string]string{
		"internal/render":            "pipeline",
		"internal/render/md":         "text",
		"internal/render/md/mdtest":  "text",
		"internal/agent/mcp/mcptest": "agents",
		"internal/slash":             "entry",
		"internal/gitrepo":           "repository",
		"internal/renderer":          "",
		"cmd/planex":                 "",
	}
	for pkg, want := range cases {
		got := ""
		if l, ok := ls.rowOf(pkg); ok {
			got = l.name
		}
		if got != want {
			t.Errorf("rowOf(%s) = %q, want %q", pkg, got, want)
		}
	}
}

// TestStartsGitFound: what counts as starting git, and what does not.
func TestStartsGitFound(t *testing.T) {
	t.Parallel()
	cases := []struct {
		src  string
		want int
	}{
		{`import "os/exec"; var _ = exec.Command("git", "status")`, 1},
		{`import "os/exec"; func f(ctx context.Context) { exec.CommandContext(ctx, "/usr/bin/git", "log") }`, 1},
		{`import x "os/exec"; var _, _ = x.LookPath("git")`, 1},
		{`import "syscall"; var _ = syscall.Exec("/usr/bin/git", nil, nil)`, 1},
		{`import "os/exec"; var _ = exec.Command("sh", "-c", "git status")`, 0},
		{`import "os/exec"; func f(exec fake) { exec.Command("git") }`, 0},
		{`var _ = gitrepo.Command(ctx, "", "log")`, 0},
	}
	for _, c := range cases {
		if got := len(startsGit(parseFile(t, "package x\n"+c.src))); got != c.want {
			t.Errorf("%s: %d found, want %d", c.src, got, c.want)
		}
	}
}

// TestCountMethods: embedded interfaces count with their methods, from
// the same package and from another of the module.
func TestCountMethods(t *testing.T) {
	t.Parallel()
	s := &source{pkgs: map[string]*srcPkg{
		"internal/a": {dir: "internal/a", files: []*ast.File{parseFile(t, `package a
import "`+module+`internal/b"
type small interface{ A(); B() }
type big interface { small; C(); b.I }
type notIface struct{}`)}},
		"internal/b": {dir: "internal/b", files: []*ast.File{parseFile(t, "package b\ntype I interface{ D(); E() }")}},
	}}
	cases := []struct {
		name string
		want int
		err  bool
	}{{"small", 2, false}, {"big", 5, false}, {"notIface", 0, true}, {"missing", 0, true}}
	for _, c := range cases {
		n, _, err := countMethods(s, "internal/a", c.name)
		if n != c.want || (err != nil) != c.err {
			t.Errorf("countMethods(%s) = %d, %v; want %d (error %v)", c.name, n, err, c.want, c.err)
		}
	}
}
