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
