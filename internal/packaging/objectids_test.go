package packaging

import (
	"go/ast"
	"go/token"
	"regexp"
	"strings"
	"testing"
)

// fixedIDLength matches what assumes an object id's length in a string
// literal: forty or sixty-four zeros, or hex digits repeated exactly 40
// or 64 times, or at most 40 (which no SHA-256 id fits).
var fixedIDLength = regexp.MustCompile(`^"?(0{40}|0{64})"?$|\[(0-9|a-f|A-F)+\]\{(40|64|\d+,40)\}`)

// TestNoFixedObjectIDLength: outside the GitHub row (GitHub's object ids
// are SHA-1) and the test helpers, no code writes an object id's length
// down: a SHA-256 repository's ids are 64 hex digits, a SHA-1 one's 40,
// and gitrepo.ObjectFormat says which.
func TestNoFixedObjectIDLength(t *testing.T) {
	t.Parallel()
	s := mustSource(t)
	ls := readLayers(t)
	checked := 0
	for _, p := range s.sorted() {
		if l, ok := ls.rowOf(p.dir); (ok && l.name == "GitHub") || p.testHelper() {
			continue
		}
		for _, f := range p.files {
			checked++
			for _, n := range fixedLengths(f) {
				t.Errorf("%s: an object id's length written down; ask the repository's gitrepo.ObjectFormat", s.where(n.Pos()))
			}
		}
	}
	if checked < 100 {
		t.Fatalf("checked only %d files", checked)
	}
}

// fixedLengths finds, in f, literals matching fixedIDLength and calls
// strings.Repeat("0", 40 or 64).
func fixedLengths(f *ast.File) []ast.Node {
	var out []ast.Node
	ast.Inspect(f, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.BasicLit:
			if x.Kind == token.STRING && fixedIDLength.MatchString(x.Value) {
				out = append(out, x)
			}
		case *ast.CallExpr:
			if callName(x.Fun) != "strings.Repeat" || len(x.Args) != 2 {
				break
			}
			s, ok1 := x.Args[0].(*ast.BasicLit)
			n, ok2 := x.Args[1].(*ast.BasicLit)
			if ok1 && ok2 && s.Value == `"0"` && (n.Value == "40" || n.Value == "64") {
				out = append(out, x)
			}
		}
		return true
	})
	return out
}

func TestFixedLengthsFound(t *testing.T) {
	t.Parallel()
	cases := []struct {
		src  string
		want int
	}{
		{`var a = strings.Repeat("0", 40)`, 1},
		{`var a = strings.Repeat("0", 64)`, 1},
		{`var a = "` + strings.Repeat("0", 40) + `"`, 1},
		{"var a = regexp.MustCompile(`^[0-9a-f]{40}$`)", 1},
		{"var a = regexp.MustCompile(`[0-9a-f]{7,40}`)", 1},
		{"var a = regexp.MustCompile(`[a-f0-9]{64}`)", 1},
		{"var a = regexp.MustCompile(`[0-9a-f]{6,64}`)", 0},
		{"var a = regexp.MustCompile(`[A-Za-z0-9_-]{1,40}`)", 0},
		{`var a = strings.Repeat("0", n)`, 0},
		{"var a = regexp.MustCompile(`[0-9a-f]{6,65}`)", 0},
		{`var a = strings.Repeat("-", 40)`, 0},
	}
	for _, c := range cases {
		f := parseFile(t, "package x\n"+c.src)
		if got := len(fixedLengths(f)); got != c.want {
			t.Errorf("%s: %d found, want %d", c.src, got, c.want)
		}
	}
}
