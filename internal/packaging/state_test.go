package packaging

import (
	"go/ast"
	"go/parser"
	"go/token"
	"sort"
	"strings"
	"testing"
)

// addressTaken are the variables whose address is taken though no code
// writes through it: none since locate copies startWeights before handing
// it to a reader (issue 32).
var addressTaken = map[string]bool{}

// TestNoMutableGlobals holds "no package-level mutable state" as a rule
// the syntax can decide. A package-level variable in a non-test file
//
//   - has an initializer (an error, a compiled regexp, a lookup table, a
//     value computed once) or is filled by //go:embed;
//   - is not of a type that exists to be changed in place: nothing from
//     sync (but sync.OnceValue and friends, which compute a value once) or
//     sync/atomic, no channel;
//   - is never written after: not assigned (whole, element or field),
//     incremented, deleted from, cleared, copied into, sorted in place or
//     reversed, and its address is never taken, by its own package, its
//     tests, or (when exported) any other package of the module.
//
// Writes through an alias (m := table; m[k] = v) or inside a function the
// table is passed to are out of the syntax's reach; review keeps those.

func TestNoMutableGlobals(t *testing.T) {
	t.Parallel()
	s := mustSource(t)
	vars := 0
	seenTaken := map[string]bool{}
	for _, p := range s.sorted() {
		globals := packageVars(p)
		vars += len(globals)
		for name, g := range globals {
			where := s.where(g.spec.Pos())
			if g.value == nil && !g.embedded {
				t.Errorf("%s.%s (%s) has no initializer: a package-level variable is set once, where it is declared", p.dir, name, where)
			}
			if bad := mutableType(g); bad != "" {
				t.Errorf("%s.%s (%s) is a %s, state that is changed in place; keep it in a value that is passed", p.dir, name, where, bad)
			}
		}
		for _, w := range writes(s, p, globals) {
			if w.how == "taking the address" && addressTaken[p.dir+"."+w.name] {
				seenTaken[p.dir+"."+w.name] = true
				continue
			}
			t.Errorf("%s: %s writes package-level %s.%s: package-level variables are never written after they are declared", s.where(w.pos), w.how, p.dir, w.name)
		}
	}
	checkExceptions(t, "package-level state", addressTaken, seenTaken)
	if vars < 100 {
		t.Fatalf("found only %d package-level variables: the source was not read", vars)
	}
}

type global struct {
	spec     *ast.ValueSpec
	value    ast.Expr // nil without an initializer
	embedded bool
	imports  map[string]string // of the declaring file
}

func packageVars(p *srcPkg) map[string]global {
	out := map[string]global{}
	for _, f := range p.files {
		imports := fileImports(f)
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.VAR {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				embedded := hasEmbed(gd.Doc) || hasEmbed(vs.Doc)
				for i, n := range vs.Names {
					if n.Name == "_" {
						continue
					}
					g := global{spec: vs, embedded: embedded, imports: imports}
					if i < len(vs.Values) {
						g.value = vs.Values[i]
					} else if len(vs.Values) == 1 {
						g.value = vs.Values[0] // a, b = f()
					}
					out[n.Name] = g
				}
			}
		}
	}
	return out
}

func hasEmbed(doc *ast.CommentGroup) bool {
	if doc == nil {
		return false
	}
	for _, c := range doc.List {
		if strings.HasPrefix(c.Text, "//go:embed ") {
			return true
		}
	}
	return false
}

// mutableType names what makes a variable's type state, or "".
func mutableType(g global) string {
	bad := ""
	check := func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.ChanType:
			bad = "channel"
		case *ast.SelectorExpr:
			pkg, ok := x.X.(*ast.Ident)
			if !ok {
				break
			}
			switch g.imports[pkg.Name] {
			case "sync/atomic":
				bad = "sync/atomic." + x.Sel.Name
			case "sync":
				if !strings.HasPrefix(x.Sel.Name, "Once") || x.Sel.Name == "Once" {
					bad = "sync." + x.Sel.Name
				}
			}
		}
		return bad == ""
	}
	if g.spec.Type != nil {
		ast.Inspect(g.spec.Type, check)
	}
	if g.value != nil && bad == "" {
		ast.Inspect(g.value, check)
	}
	return bad
}

type write struct {
	pos  token.Pos
	how  string
	name string
}

// writes finds every write to p's package-level variables in the module.
func writes(s *source, p *srcPkg, globals map[string]global) []write {
	if len(globals) == 0 {
		return nil
	}
	var out []write
	own := append(append([]*ast.File{}, p.files...), p.tests...)
	for _, f := range own {
		refers := func(e ast.Expr) string {
			id, ok := e.(*ast.Ident)
			if !ok {
				return ""
			}
			g, ok := globals[id.Name]
			if ok && (id.Obj == nil || id.Obj.Decl == g.spec) {
				return id.Name
			}
			return ""
		}
		out = append(out, writesIn(f, refers)...)
	}
	for _, q := range s.sorted() {
		for _, f := range append(append(append([]*ast.File{}, q.files...), q.tests...), q.xtests...) {
			local := ""
			for name, path := range fileImports(f) {
				if path == module+p.dir {
					local = name
				}
			}
			if local == "" {
				continue
			}
			refers := func(e ast.Expr) string {
				sel, ok := e.(*ast.SelectorExpr)
				if !ok {
					return ""
				}
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == local && id.Obj == nil {
					if _, ok := globals[sel.Sel.Name]; ok {
						return sel.Sel.Name
					}
				}
				return ""
			}
			out = append(out, writesIn(f, refers)...)
		}
	}
	return out
}

// inPlace are the library functions that change their first argument.
var inPlace = map[string]bool{
	"sort.Strings": true, "sort.Ints": true, "sort.Float64s": true, "sort.Slice": true, "sort.SliceStable": true, "sort.Sort": true, "sort.Stable": true,
	"slices.Sort": true, "slices.SortFunc": true, "slices.SortStableFunc": true, "slices.Reverse": true,
	"copy": true, "delete": true, "clear": true,
}

// writesIn finds the writes in f to whatever refers names (the variable's
// name, or "" for anything else), looking through index, field, slice
// and dereference to the variable written.
func writesIn(f *ast.File, refers func(ast.Expr) string) []write {
	root := func(e ast.Expr) string {
		for {
			if name := refers(e); name != "" {
				return name
			}
			switch x := e.(type) {
			case *ast.IndexExpr:
				e = x.X
			case *ast.SelectorExpr:
				e = x.X
			case *ast.StarExpr:
				e = x.X
			case *ast.ParenExpr:
				e = x.X
			case *ast.SliceExpr:
				e = x.X
			default:
				return ""
			}
		}
	}
	var out []write
	add := func(pos token.Pos, how string, e ast.Expr) {
		if name := root(e); name != "" {
			out = append(out, write{pos, how, name})
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.AssignStmt:
			if x.Tok != token.DEFINE {
				for _, l := range x.Lhs {
					add(x.Pos(), "an assignment", l)
				}
			}
		case *ast.IncDecStmt:
			add(x.Pos(), x.Tok.String(), x.X)
		case *ast.RangeStmt:
			if x.Tok == token.ASSIGN {
				for _, e := range []ast.Expr{x.Key, x.Value} {
					if e != nil {
						add(x.Pos(), "a range assignment", e)
					}
				}
			}
		case *ast.UnaryExpr:
			if x.Op == token.AND {
				add(x.Pos(), "taking the address", x.X)
			}
		case *ast.CallExpr:
			if name := callName(x.Fun); inPlace[name] && len(x.Args) > 0 {
				add(x.Pos(), name, x.Args[0])
			}
		}
		return true
	})
	return out
}

func callName(fun ast.Expr) string {
	switch x := fun.(type) {
	case *ast.Ident:
		return x.Name
	case *ast.SelectorExpr:
		if id, ok := x.X.(*ast.Ident); ok {
			return id.Name + "." + x.Sel.Name
		}
	}
	return ""
}

// TestMutableGlobalsFound shows each kind of write and type the rule
// refuses, and what it lets through, on small packages.
func TestMutableGlobalsFound(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, src, test string
		other           string   // a file of internal/y, which imports internal/x as x
		want            []string // "name: how" of each offence
	}{
		{"tables, errors and regexps read only", `
var ErrX = errors.New("x")
var re = regexp.MustCompile("a+")
var table = map[string]int{"a": 1}
var list = []string{"a"}
func f() int { n := table["a"]; for _, s := range list { n += len(s) }; return n }`, "", "", nil},
		{"a local of the same name is not the global", `
var table = map[string]int{}
func f() { table := map[string]int{}; table["a"] = 1; _ = table }`, "", "", nil},
		{"assignments of every shape", `
var table = map[string]int{}
var list = []int{1}
type T struct{ N int }
var rec = T{}
var n = 0
func f() { table["a"] = 1; list[0] = 2; rec.N = 3; n = 4; n++ }`, "",
			"", []string{"list: an assignment", "n: ++", "n: an assignment", "rec: an assignment", "table: an assignment"}},
		{"in place through calls and pointers", `
var list = []string{"b", "a"}
var table = map[string]int{"a": 1}
func f() { sort.Strings(list); delete(table, "a"); p := &list; _ = p }`, "", "",
			[]string{"list: sort.Strings", "list: taking the address", "table: delete"}},
		{"a test seam written by a test", `
var now = time.Now`, `
func TestX(t *testing.T) { now = func() time.Time { return time.Time{} } }`, "",
			[]string{"now: an assignment"}},
		{"an exported table written by another package", `
var Columns = []string{"id"}`, "", `
func f() { x.Columns = nil }
func g(x struct{ Columns []string }) { x.Columns = nil }`,
			[]string{"Columns: an assignment"}},
		{"state types and missing initializers", `
var mu sync.Mutex
var hits atomic.Int64
var jobs = make(chan int)
var once = sync.OnceValue(func() int { return 1 })
var later string`, "", "",
			[]string{"hits: no initializer", "hits: type sync/atomic.Int64", "jobs: type channel", "later: no initializer", "mu: no initializer", "mu: type sync.Mutex"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got := offences(t, c.src, c.test, c.other)
			if strings.Join(got, "; ") != strings.Join(c.want, "; ") {
				t.Errorf("offences\n got %q\nwant %q", got, c.want)
			}
		})
	}
}

// offences runs the rule over a package made of src and test, with
// another package made of other beside it.
func offences(t *testing.T, src, test, other string) []string {
	t.Helper()
	fset := token.NewFileSet()
	header := "package x\nimport (\"errors\"; \"regexp\"; \"sort\"; \"sync\"; \"sync/atomic\"; \"time\"; \"testing\")\n" +
		"var _, _, _, _, _, _ = errors.New, regexp.MustCompile, sort.Strings, sync.OnceValue[int], atomic.AddInt32, time.Now\nvar _ testing.T\n"
	p := &srcPkg{dir: "internal/x", name: "x"}
	f, err := parser.ParseFile(fset, "x.go", header+src, 0)
	if err != nil {
		t.Fatal(err)
	}
	p.files = []*ast.File{f}
	if test != "" {
		tf, err := parser.ParseFile(fset, "x_test.go", header+test, 0)
		if err != nil {
			t.Fatal(err)
		}
		p.tests = []*ast.File{tf}
	}
	s := &source{fset: fset, pkgs: map[string]*srcPkg{p.dir: p}}
	if other != "" {
		of, err := parser.ParseFile(fset, "y.go", "package y\nimport \""+module+"internal/x\"\n"+other, 0)
		if err != nil {
			t.Fatal(err)
		}
		s.pkgs["internal/y"] = &srcPkg{dir: "internal/y", name: "y", files: []*ast.File{of}}
	}
	var out []string
	globals := packageVars(p)
	for name, g := range globals {
		if g.value == nil && !g.embedded {
			out = append(out, name+": no initializer")
		}
		if bad := mutableType(g); bad != "" {
			out = append(out, name+": type "+bad)
		}
	}
	for _, w := range writes(s, p, globals) {
		out = append(out, w.name+": "+w.how)
	}
	sort.Strings(out)
	return out
}
