package packaging

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The release binary's budget (issue #15): the Action downloads it on
// every job that misses the tool cache.
const maxReleaseMiB = 30

// goBuildRe finds the go build command lines of a workflow or action.
var goBuildRe = regexp.MustCompile(`go build [^\n]*\./cmd/planex`)

// TestReleaseBuildsAreStripped: wherever a binary people run is built
// (the release workflow, the action's build-from-source fallback), it is
// built without local paths, symbols or DWARF.
func TestReleaseBuildsAreStripped(t *testing.T) {
	for _, rel := range []string{".github/workflows/release.yml", "action.yml"} {
		b, err := os.ReadFile(filepath.Join(repoRoot(t), rel))
		if err != nil {
			t.Fatal(err)
		}
		builds := goBuildRe.FindAllString(string(b), -1)
		if len(builds) == 0 {
			t.Errorf("%s: no go build of ./cmd/planex", rel)
		}
		for _, cmd := range builds {
			if !strings.Contains(cmd, "-trimpath") || !regexp.MustCompile(`-ldflags "-s -w\b`).MatchString(cmd) {
				t.Errorf("%s: %q is not built with -trimpath -ldflags \"-s -w …\"", rel, cmd)
			}
		}
	}
}

// BenchmarkReleaseBinarySize builds planex as the release workflow does
// (linux/amd64) and reports its size against the budget:
//
//	go test ./internal/packaging -run '^$' -bench ReleaseBinarySize -benchtime 1x
func BenchmarkReleaseBinarySize(b *testing.B) {
	out := filepath.Join(b.TempDir(), "planex")
	for i := 0; i < b.N; i++ {
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w -X main.version=bench", "-o", out, "./cmd/planex")
		cmd.Dir = moduleRoot(b)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64")
		if msg, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("go build: %v\n%s", err, msg)
		}
	}
	fi, err := os.Stat(out)
	if err != nil {
		b.Fatal(err)
	}
	mib := float64(fi.Size()) / (1 << 20)
	b.ReportMetric(mib, "MiB")
	b.ReportMetric(mib/maxReleaseMiB, "x-budget")
	b.Logf("release binary (linux/amd64): %.1f MiB, %.2f× the %d MiB budget", mib, mib/maxReleaseMiB, maxReleaseMiB)
	if mib > maxReleaseMiB {
		b.Errorf("release binary is %.1f MiB, over the %d MiB budget; see bench/action.md for how to find what keeps code alive "+
			"(go build -ldflags=-dumpdep: a reachable <ReflectMethod> symbol keeps every exported method)", mib, maxReleaseMiB)
	}
}

// TestNoDynamicMethodLookup: nothing in planex reaches
// reflect.Value.MethodByName with a name known only at run time, as
// text/template and html/template do. Once a binary can, the linker keeps
// every exported method of every reachable type, which put 20 MB of dead
// SDK code into the release binary (issue #15). Templates go through
// internal/tmpl, which reads fields only.
func TestNoDynamicMethodLookup(t *testing.T) {
	root := repoRoot(t)
	for _, p := range mustSource(t).sorted() {
		for _, d := range p.imports() {
			if d == "text/template" || d == "html/template" {
				t.Errorf("%s imports %s: execute templates with internal/tmpl", p.dir, d)
			}
		}
	}
	fset := token.NewFileSet()
	err := filepath.WalkDir(filepath.Join(root, "internal"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok && sel.Sel.Name == "MethodByName" {
				t.Errorf("%s: MethodByName keeps every exported method in the binary", fset.Position(sel.Pos()))
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// moduleRoot is the directory of go.mod, as the go command finds it.
func moduleRoot(tb testing.TB) string {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil || strings.TrimSpace(string(out)) == "" {
		tb.Fatalf("finding go.mod: %v", err)
	}
	return filepath.Dir(strings.TrimSpace(string(out)))
}
