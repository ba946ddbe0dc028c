package repomap

import (
	"bytes"
	"regexp"
	"testing"
)

// TestPyDeclNameMatchesRegexp checks the hand-written def and class
// matcher against the regular expressions it replaced, on every
// combination of indentation, async, keyword, spacing and name shape.
func TestPyDeclNameMatchesRegexp(t *testing.T) {
	refs := map[string]*regexp.Regexp{
		"def":   regexp.MustCompile(`^(\s*)(?:async\s+)?def\s+([A-Za-z_]\w*)`),
		"class": regexp.MustCompile(`^(\s*)class\s+([A-Za-z_]\w*)`),
	}
	indents := []string{"", " ", "\t", "    ", " \f\r", "\n"}
	asyncs := []string{"", "async ", "async\t ", "async", "asyncx ", "async  async "}
	keywords := []string{"def", "class", "de", "define", "classy", "Def"}
	gaps := []string{"", " ", "\t", "  \f"}
	names := []string{"", "f", "_x1", "1x", "Foo(self):", "x y", "caf\xe9", "a_b_C9 = 1", "éx"}
	n := 0
	for _, in := range indents {
		for _, as := range asyncs {
			for _, kw := range keywords {
				for _, gap := range gaps {
					for _, name := range names {
						line := []byte(in + as + kw + gap + name)
						for keyword, re := range refs {
							var want []byte
							if m := re.FindSubmatch(line); m != nil {
								want = m[2]
							}
							got := pyDeclName(line, keyword, keyword == "def")
							if !bytes.Equal(got, want) || (got == nil) != (want == nil) {
								t.Errorf("pyDeclName(%q, %s) = %q, regexp gives %q", line, keyword, got, want)
							}
							n++
						}
					}
				}
			}
		}
	}
	if n < 1000 {
		t.Fatalf("only %d lines tried", n)
	}
}
