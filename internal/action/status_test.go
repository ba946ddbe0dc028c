package action

import (
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/planexhq/planex/internal/plan"
)

// docStatuses reads the values listed under "### The status output" in
// docs/action.md: the code span that starts each bullet.
func docStatuses(t *testing.T) []Status {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "action.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n### The status output\n")
	if !ok {
		t.Fatal(`docs/action.md has no "### The status output" section`)
	}
	if i := strings.Index(section, "\n#"); i >= 0 {
		section = section[:i]
	}
	bullet := regexp.MustCompile("(?m)^- `([^`]+)`")
	var out []Status
	for _, m := range bullet.FindAllStringSubmatch(section, -1) {
		out = append(out, Status(m[1]))
	}
	return out
}

// TestStatusesMatchTheDocs: the `status` output's closed set is the list
// docs/action.md gives, value for value and in order.
func TestStatusesMatchTheDocs(t *testing.T) {
	t.Parallel()
	doc := docStatuses(t)
	if len(doc) < 5 {
		t.Fatalf("read only %d values from docs/action.md: %v", len(doc), doc)
	}
	if !slices.Equal(doc, Statuses()) {
		t.Errorf("docs/action.md lists %v; the code has %v", doc, Statuses())
	}
	for _, s := range Statuses() {
		if strings.ContainsAny(string(s), " 0123456789") {
			t.Errorf("status %q holds a count or more than one word", s)
		}
	}
}

// TestStatusOnlyFromConstants: product code gives a status only as a
// Status constant or a mapping function's result, never as a string
// literal (which Go would accept for a string type, and which is how
// values such as "planned 3" got into the output): not to any .Status,
// not in an Outputs{}, not to planOutputs, not in a Status(…) conversion.
func TestStatusOnlyFromConstants(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for _, pos := range literalStatuses(f) {
			t.Errorf("%s: a status given as a string literal; use a Status constant", fset.Position(pos))
		}
	}
	if checked < 10 {
		t.Fatalf("checked only %d files", checked)
	}
	probe, err := parser.ParseFile(fset, "probe.go", `package x
func f(r *R, o Outputs) {
	r.Outputs.Status = "planned 3"; r.Outputs = Outputs{Status: "taken over"}; r.Outputs.Status = StatusDone
	o.Status = "stopped early"; o = planOutputs(rec, "half done"); o = planOutputs(rec, ""); o.Status = Status("x")
	q := gh.RunFilter{Status: "failure"}
}`, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(literalStatuses(probe)); got != 5 {
		t.Errorf("the check found %d literal statuses in the probe, want 5", got)
	}
}

// literalStatuses finds non-empty string literals given as a status: assigned to a
// .Status, given as Status in an Outputs{}, passed to planOutputs, or
// converted with Status(…).
func literalStatuses(f *ast.File) []token.Pos {
	var out []token.Pos
	isLit := func(e ast.Expr) bool {
		l, ok := e.(*ast.BasicLit)
		return ok && l.Kind == token.STRING && l.Value != `""`
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.AssignStmt:
			for i, lhs := range x.Lhs {
				if sel, ok := lhs.(*ast.SelectorExpr); ok && sel.Sel.Name == "Status" && i < len(x.Rhs) && isLit(x.Rhs[i]) {
					out = append(out, x.Rhs[i].Pos())
				}
			}
		case *ast.CallExpr:
			if id, ok := x.Fun.(*ast.Ident); ok && (id.Name == "planOutputs" || id.Name == "Status") && len(x.Args) > 0 && isLit(x.Args[len(x.Args)-1]) {
				out = append(out, x.Args[len(x.Args)-1].Pos())
			}
		case *ast.CompositeLit:
			if id, ok := x.Type.(*ast.Ident); !ok || id.Name != "Outputs" {
				return true
			}
			for _, e := range x.Elts {
				if kv, ok := e.(*ast.KeyValueExpr); ok && isLit(kv.Value) {
					if k, ok := kv.Key.(*ast.Ident); ok && k.Name == "Status" {
						out = append(out, kv.Value.Pos())
					}
				}
			}
		}
		return true
	})
	return out
}

func TestRecordAndTaskStatus(t *testing.T) {
	t.Parallel()
	records := map[State]Status{StatePlanned: StatusPlanned, StateRunning: StatusRunning, StateDone: StatusDone,
		StateFailed: StatusFailed, StateCancelled: StatusCancelled, "": StatusFailed, "weird": StatusFailed}
	for state, want := range records {
		if got := recordStatus(state); got != want {
			t.Errorf("recordStatus(%q) = %q, want %q", state, got, want)
		}
	}
	tasks := map[plan.Status]Status{plan.StatusCompleted: StatusDone, plan.StatusFailed: StatusFailed,
		plan.StatusSkipped: StatusFailed, plan.StatusPending: StatusRunning, plan.StatusRunning: StatusRunning}
	for s, want := range tasks {
		if got := taskStatus(s); got != want {
			t.Errorf("taskStatus(%q) = %q, want %q", s, got, want)
		}
	}
	for _, s := range append(slices.Collect(maps.Values(records)), slices.Collect(maps.Values(tasks))...) {
		if !slices.Contains(Statuses(), s) {
			t.Errorf("%q is not in the set", s)
		}
	}
}
