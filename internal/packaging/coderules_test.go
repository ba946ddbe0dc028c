package packaging

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"testing"
)

// The code rules docs/architecture.md states ("Rules the code keeps"),
// each checked over the module's own Go. A rule the code broke when the
// rule was written down lists its offenders as known exceptions below, so
// that any new offender fails; an exception that no longer offends fails
// too, so each list only shrinks.

// The rules hold for every non-test file. Test helper packages (ghfake,
// …test) are not product code for the method count: ghfake.Fake is one
// fake GitHub with a method per endpoint family (76 today).
const (
	maxMethods    = 50  // methods declared on one type
	maxFuncLines  = 100 // lines of one function
	maxComplexity = 20  // cyclomatic complexity of one function
)

// typesOverMethods are the product types over maxMethods today: none
// since issue 32 split action.Runner and engine.Engine. An entry added
// here must say which issue splits the type.
var typesOverMethods = map[string]bool{}

// funcsOverComplexity are the functions over maxComplexity today: none
// since locate reads its index file in parts (readIndex, readFiles).
var funcsOverComplexity = map[string]bool{}

// checkExceptions reports known exceptions that no longer offend.
func checkExceptions(t *testing.T, rule string, known, offending map[string]bool) {
	t.Helper()
	for name := range known {
		if !offending[name] {
			t.Errorf("%s no longer breaks the rule on %s: remove it from the known exceptions", name, rule)
		}
	}
}

// funcName names a function declaration as pkg.Func or pkg.Type.Method.
func funcName(p *srcPkg, fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return p.dir + "." + fn.Name.Name
	}
	return p.dir + "." + recvType(fn.Recv.List[0].Type) + "." + fn.Name.Name
}

// recvType is the base type name of a receiver: T for T, *T, T[K], *T[K].
func recvType(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.ParenExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return fmt.Sprintf("%T", e)
		}
	}
}

// eachFunc calls fn for every function declaration in the module's
// non-test files.
func eachFunc(s *source, fn func(p *srcPkg, d *ast.FuncDecl)) {
	for _, p := range s.sorted() {
		for _, f := range p.files {
			for _, d := range f.Decls {
				if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil {
					fn(p, fd)
				}
			}
		}
	}
}

// TestMethodCounts: no type in product code declares more than
// maxMethods methods (a type that does is a hub to split).
func TestMethodCounts(t *testing.T) {
	t.Parallel()
	s := mustSource(t)
	counts := map[string]int{}
	eachFunc(s, func(p *srcPkg, d *ast.FuncDecl) {
		if d.Recv != nil && len(d.Recv.List) > 0 && !p.testHelper() {
			counts[p.dir+"."+recvType(d.Recv.List[0].Type)]++
		}
	})
	offending := map[string]bool{}
	for typ, n := range counts {
		if n <= maxMethods {
			continue
		}
		offending[typ] = true
		t.Logf("%s: %d methods", typ, n)
		if !typesOverMethods[typ] {
			t.Errorf("%s has %d methods (at most %d): split it into types that each do one part", typ, n, maxMethods)
		}
	}
	checkExceptions(t, "methods per type", typesOverMethods, offending)
	if len(counts) < 100 {
		t.Fatalf("counted methods of only %d types: the source was not read", len(counts))
	}
}

// TestFunctionLength: no function is longer than maxFuncLines lines from
// its func keyword to its closing brace.
func TestFunctionLength(t *testing.T) {
	t.Parallel()
	s := mustSource(t)
	funcs := 0
	eachFunc(s, func(p *srcPkg, d *ast.FuncDecl) {
		funcs++
		from, to := s.fset.Position(d.Pos()).Line, s.fset.Position(d.End()).Line
		if n := to - from + 1; n > maxFuncLines {
			t.Errorf("%s (%s) is %d lines (at most %d)", funcName(p, d), s.where(d.Pos()), n, maxFuncLines)
		}
	})
	if funcs < 1000 {
		t.Fatalf("measured only %d functions: the source was not read", funcs)
	}
}

// complexity is a function's cyclomatic complexity as gocyclo counts it:
// one, plus one for each if, for, range, non-default case of a switch or
// select, and each && and ||, function literals inside included.
func complexity(body ast.Node) int {
	n := 1
	ast.Inspect(body, func(node ast.Node) bool {
		switch x := node.(type) {
		case *ast.IfStmt, *ast.ForStmt, *ast.RangeStmt:
			n++
		case *ast.CaseClause:
			if x.List != nil {
				n++
			}
		case *ast.CommClause:
			if x.Comm != nil {
				n++
			}
		case *ast.BinaryExpr:
			if x.Op == token.LAND || x.Op == token.LOR {
				n++
			}
		}
		return true
	})
	return n
}

func TestComplexityCounting(t *testing.T) {
	t.Parallel()
	cases := []struct {
		src  string
		want int
	}{
		{"func f() {}", 1},
		{"func f(a, b bool) { if a && b || !a {} }", 4},
		{"func f(x int) { switch x { case 1, 2: case 3: default: } }", 3},
		{"func f(c chan int) { for { select { case <-c: default: } } }", 3},
		{"func f(xs []int) { for range xs { g := func() { if true {} }; g() } }", 3},
	}
	for _, c := range cases {
		fd := parseFunc(t, c.src)
		if got := complexity(fd.Body); got != c.want {
			t.Errorf("complexity(%s) = %d, want %d", c.src, got, c.want)
		}
	}
}

// TestCyclomaticComplexity: no function is over maxComplexity.
func TestCyclomaticComplexity(t *testing.T) {
	t.Parallel()
	s := mustSource(t)
	offending := map[string]bool{}
	eachFunc(s, func(p *srcPkg, d *ast.FuncDecl) {
		if n := complexity(d.Body); n > maxComplexity {
			name := funcName(p, d)
			offending[name] = true
			if !funcsOverComplexity[name] {
				t.Errorf("%s (%s) has cyclomatic complexity %d (at most %d)", name, s.where(d.Pos()), n, maxComplexity)
			}
		}
	})
	checkExceptions(t, "cyclomatic complexity", funcsOverComplexity, offending)
}

func parseFunc(t *testing.T, src string) *ast.FuncDecl {
	t.Helper()
	return parseFile(t, "package x\n"+src).Decls[0].(*ast.FuncDecl)
}

func parseFile(t *testing.T, src string) *ast.File {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "x.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	return f
}
