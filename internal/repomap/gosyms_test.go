package repomap

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// TestParseGoMatchesParser checks the declaration lexer against go/parser
// on this module's sources and a slice of the standard library: same
// package, imports and symbols (kinds, receivers, lines) for every file
// go/parser accepts.
func TestParseGoMatchesParser(t *testing.T) {
	roots := []string{"../.."}
	if dir := os.Getenv("PLANEX_GOSYMS_ROOT"); dir != "" {
		roots = []string{dir}
	} else {
		out, err := exec.Command("go", "env", "GOROOT").Output()
		if err != nil {
			t.Fatalf("go env GOROOT: %v", err)
		}
		goroot := strings.TrimSpace(string(out))
		for _, d := range []string{"go", "net/http", "strconv", "slices", "encoding/json", "runtime"} {
			roots = append(roots, filepath.Join(goroot, "src", d))
		}
	}
	files := 0
	for _, root := range roots {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") {
				return err
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if _, err := parser.ParseFile(token.NewFileSet(), p, data, parser.SkipObjectResolution); err != nil {
				return nil // testdata with deliberate syntax errors
			}
			files++
			want, got := parseGoAST(p, data), parseGo(data)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s:\n got  %+v\n want %+v", p, got, want)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("walking %s: %v", root, err)
		}
	}
	if files < 100 {
		t.Fatalf("compared only %d files", files)
	}
}

func TestParseGoCorners(t *testing.T) {
	src := "package p\n\nimport (\n\tx \"a/b\"\n\t. `c`\n)\n\nvar s = `\nfunc Fake() {}\n`\n\n/* func AlsoFake()\n*/\ntype (\n\tA[T any] interface{ M() }\n\tB [4]interface{}\n\tC = interface{}\n)\n\nconst (\n\tX, y, Z = 1, 2, '}'\n\t_ = iota\n)\n\nfunc (r *Recv[K, V]) Get(k K) V { return \"{\" }\n\nfunc main() {}\n"
	if got, want := parseGo([]byte(src)), parseGoAST("x.go", []byte(src)); !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

func parseGoAST(p string, data []byte) parsed {
	var out parsed
	fset := token.NewFileSet()
	// Partial ASTs are still useful: keep whatever parsed before an error.
	f, _ := parser.ParseFile(fset, p, data, parser.SkipObjectResolution)
	if f == nil {
		return out
	}
	if f.Name != nil {
		out.pkg = f.Name.Name
		out.isMain = f.Name.Name == "main"
	}
	for _, imp := range f.Imports {
		if s, err := strconv.Unquote(imp.Path.Value); err == nil {
			out.imports = append(out.imports, s)
		}
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			s := Symbol{Name: d.Name.Name, Kind: KindFunc, Line: int32(fset.Position(d.Pos()).Line)}
			if d.Recv != nil && len(d.Recv.List) > 0 {
				s.Kind = KindMethod
				s.Parent = recvName(d.Recv.List[0].Type)
			}
			out.symbols = append(out.symbols, s)
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch spec := spec.(type) {
				case *ast.TypeSpec:
					kind := KindType
					if _, ok := spec.Type.(*ast.InterfaceType); ok {
						kind = KindInterface
					}
					out.symbols = append(out.symbols, Symbol{Name: spec.Name.Name, Kind: kind, Line: int32(fset.Position(spec.Pos()).Line)})
				case *ast.ValueSpec:
					if d.Tok != token.CONST && d.Tok != token.VAR {
						continue
					}
					for _, n := range spec.Names {
						if n.Name != "_" && ast.IsExported(n.Name) {
							out.symbols = append(out.symbols, Symbol{Name: n.Name, Kind: KindVar, Line: int32(fset.Position(n.Pos()).Line)})
						}
					}
				}
			}
		}
	}
	return out
}

func recvName(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return recvName(t.X)
	case *ast.Ident:
		return t.Name
	case *ast.IndexExpr:
		return recvName(t.X)
	case *ast.IndexListExpr:
		return recvName(t.X)
	}
	return ""
}

// TestSymbolKindText: a symbol's kind is written and read by name (JSON,
// the map cache), every kind round-trips, and an unknown name is refused.
func TestSymbolKindText(t *testing.T) {
	t.Parallel()
	data, err := json.Marshal(Symbol{Name: "Run", Kind: KindMethod, Parent: "Job", Line: 7})
	if err != nil || string(data) != `{"Name":"Run","Parent":"Job","Line":7,"Kind":"method"}` {
		t.Fatalf("json %s (%v)", data, err)
	}
	for k := KindNone; k <= KindModule; k++ {
		var back SymbolKind
		text, _ := k.MarshalText()
		if err := back.UnmarshalText(text); err != nil || back != k {
			t.Errorf("kind %d as %q read back as %d (%v)", k, text, back, err)
		}
	}
	var k SymbolKind
	if err := k.UnmarshalText([]byte("struct")); err == nil {
		t.Error("an unknown kind name was accepted")
	}
}

// skipStatementByTokens is skipStatement as it was before skipNested:
// every token of the statement lexed and bracket depth counted on them.
func (l *goLexer) skipStatementByTokens(t goTok) {
	depth := 0
	for ; t.kind != 0; t = l.next() {
		switch {
		case opens(t.kind):
			depth++
		case closes(t.kind):
			depth = max(depth-1, 0)
		case t.kind == ';' && depth == 0:
			return
		}
	}
}

// TestSkipNestedMatchesTokens skips every statement of each text twice,
// with skipStatement and with the token-by-token skip it replaced, and
// requires the lexer in the same state (position, line, pending
// semicolon) after each one: Go sources, the corners of literals and
// comments inside brackets, and random bytes drawn from Go's punctuation.
func TestSkipNestedMatchesTokens(t *testing.T) {
	t.Parallel()
	texts := []string{
		"func f() {\n\tx := \"}\"\n\ty := '{'\n\tz := `\n}\n`\n}\nvar a = 1\n",
		"f(a, b[1], map[string]int{\"a\": 1})\n(",
		"{ /* } \n */ } // }\n{ // {\n}",
		"{ \"a\\\n}\" }\nnext", // an escaped newline inside a string
		"{ 'a\n' }\n",          // a rune literal cut by a newline
		"{ x++\n y--\n }++\n",  // ++ after a closing bracket
		"{ /* unterminated",    // a comment running off the end
		"{ `unterminated",      // a raw string running off the end
		"{{{ } \n",             // brackets left open at the end
		"} ) ] ; x",            // closers with nothing open
		"{ 1.5e+3 .5 0x1p-2 a/b a/=b }\n",
		"{ \xff\xfe日本 }\n",
	}
	if src, err := os.ReadFile("gosyms.go"); err == nil {
		texts = append(texts, string(src))
	} else {
		t.Fatal(err)
	}
	seed := uint64(1)
	const alphabet = "{}()[]\"'`/*\\\n ;ab1.+-\xc3"
	for n := 0; n < 2000; n++ {
		b := make([]byte, 1+n%97)
		for i := range b {
			seed = seed*6364136223846793005 + 1442695040888963407
			b[i] = alphabet[(seed>>33)%uint64(len(alphabet))]
		}
		texts = append(texts, string(b))
	}
	type state struct {
		pos, line int
		semi      bool
	}
	for _, text := range texts {
		fast := &goLexer{data: []byte(text), line: 1}
		slow := &goLexer{data: []byte(text), line: 1}
		for step := 0; ; step++ {
			ft, st := fast.next(), slow.next()
			if ft.kind != st.kind {
				t.Fatalf("%q: statement %d starts with %q, want %q", text, step, ft.kind, st.kind)
			}
			if ft.kind == 0 {
				break
			}
			fast.skipStatement(ft)
			slow.skipStatementByTokens(st)
			got, want := state{fast.pos, fast.line, fast.semi}, state{slow.pos, slow.line, slow.semi}
			if got != want {
				t.Fatalf("%q: after statement %d the lexer is at %+v, want %+v", text, step, got, want)
			}
		}
	}
}
