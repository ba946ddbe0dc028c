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

// TestPyFromPartsMatchesRegexp checks the hand-written from-import
// matcher against the regular expression it replaced, on every
// combination of indentation, spacing, module shape, keyword spelling,
// parenthesis and names (with and without a comment).
func TestPyFromPartsMatchesRegexp(t *testing.T) {
	t.Parallel()
	re := regexp.MustCompile(`^\s*from\s+(\.*[\w.]*)\s+import\s+\(?\s*([^#]*)`)
	indents := []string{"", " ", "\t\f"}
	froms := []string{"from", "fro", "frommy", "From"}
	gaps := []string{"", " ", "  ", "\t \r"}
	mods := []string{"", "a", "..", ".a.b_1", "import", "import.x", "a-b", "é", "x(y"}
	imports := []string{"import", "imports", "impor", "import("}
	opens := []string{"", "(", " ( ", "(\t"}
	names := []string{"", "a, b", "a as b, c # note", "#", "x)", "\\", "a\n"}
	n := 0
	for _, in := range indents {
		for _, from := range froms {
			for _, g1 := range gaps {
				for _, mod := range mods {
					for _, g2 := range gaps {
						for _, imp := range imports {
							for _, g3 := range gaps {
								for _, open := range opens {
									for _, name := range names {
										line := []byte(in + from + g1 + mod + g2 + imp + g3 + open + name)
										m := re.FindSubmatch(line)
										gotMod, gotRest, ok := pyFromParts(line)
										switch {
										case ok != (m != nil):
											t.Fatalf("pyFromParts(%q) matched %v, the regexp %v", line, ok, m != nil)
										case ok && (!bytes.Equal(gotMod, m[1]) || !bytes.Equal(gotRest, m[2])):
											t.Fatalf("pyFromParts(%q) = %q, %q; the regexp gives %q, %q", line, gotMod, gotRest, m[1], m[2])
										}
										n++
									}
								}
							}
						}
					}
				}
			}
		}
	}
	if n < 100000 {
		t.Fatalf("only %d lines tried", n)
	}
}
