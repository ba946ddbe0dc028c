package packaging

import (
	"go/ast"
	"go/token"
	"testing"
)

// textMatchers are the strings functions that, given an error's text,
// classify the error by its message.
var textMatchers = map[string]bool{
	"strings.Contains": true, "strings.HasPrefix": true, "strings.HasSuffix": true,
	"strings.EqualFold": true, "strings.Index": true, "strings.ContainsAny": true,
	"regexp.MatchString": true,
}

// TestNoErrorTextMatching: product code tells errors apart with errors.Is
// and errors.As, never by matching the text of err.Error() (a message is
// for people and may change; a sentinel or a type is the contract).
func TestNoErrorTextMatching(t *testing.T) {
	t.Parallel()
	s := mustSource(t)
	checked := 0
	for _, p := range s.sorted() {
		if p.testHelper() {
			continue
		}
		for _, f := range p.files {
			checked++
			for _, n := range errorTextMatches(f) {
				t.Errorf("%s: an error classified by its message text; wrap a sentinel error or a type and use errors.Is/As", s.where(n.Pos()))
			}
		}
	}
	if checked < 100 {
		t.Fatalf("checked only %d files", checked)
	}
}

// errorTextMatches finds, in f, an err.Error() (any x.Error() without
// arguments) inside the arguments of a textMatchers call, compared with
// == or !=, or switched on.
func errorTextMatches(f *ast.File) []ast.Node {
	var out []ast.Node
	ast.Inspect(f, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.CallExpr:
			if !textMatchers[callName(x.Fun)] {
				break
			}
			for _, a := range x.Args {
				if hasErrorCall(a) {
					out = append(out, x)
					break
				}
			}
		case *ast.BinaryExpr:
			if (x.Op == token.EQL || x.Op == token.NEQ) && (hasErrorCall(x.X) || hasErrorCall(x.Y)) {
				out = append(out, x)
			}
		case *ast.SwitchStmt:
			if x.Tag != nil && hasErrorCall(x.Tag) {
				out = append(out, x)
			}
		}
		return true
	})
	return out
}

// hasErrorCall reports whether e calls a method Error with no arguments.
func hasErrorCall(e ast.Node) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if c, ok := n.(*ast.CallExpr); ok && len(c.Args) == 0 {
			if sel, ok := c.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Error" {
				found = true
			}
		}
		return !found
	})
	return found
}

func TestErrorTextMatchesFound(t *testing.T) {
	t.Parallel()
	cases := []struct {
		src  string
		want int
	}{
		{`func f(err error) bool { return strings.Contains(err.Error(), "not valid") }`, 1},
		{`func f(err error) bool { return strings.HasPrefix(strings.ToLower(err.Error()), "no") }`, 1},
		{`func f(err error) bool { return err.Error() == "EOF" }`, 1},
		{`func f(err error) bool { return "EOF" != err.Error() }`, 1},
		{`func f(err error) int { switch err.Error() { case "a": return 1 }; return 0 }`, 1},
		{`func f(err error) bool { return errors.Is(err, io.EOF) }`, 0},
		{`func f(err error) string { return "failed: " + err.Error() }`, 0},
		{`func f(s string) bool { return strings.Contains(s, "x") }`, 0},
		{`func f(err error) bool { return err == nil || err.Error() != "" }`, 1},
	}
	for _, c := range cases {
		f := parseFile(t, "package x\n"+c.src)
		if got := len(errorTextMatches(f)); got != c.want {
			t.Errorf("%s: %d found, want %d", c.src, got, c.want)
		}
	}
}
