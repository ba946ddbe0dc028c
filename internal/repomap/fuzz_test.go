package repomap

import (
	"strings"
	"testing"
	"unicode/utf8"
)

var fuzzLangs = []string{LangGo, LangPython, LangJavaScript, LangTypeScript, LangJava, LangRust}

// FuzzParseFile: any file content gives symbols whose names are valid,
// non-empty UTF-8 without line breaks and whose lines exist in the file.
func FuzzParseFile(f *testing.F) {
	for _, s := range []string{
		"package main\n\nfunc main() {}\ntype T struct{}\nfunc (t *T) M() {}\n",
		"class A:\n    def f(self):\n        pass\nasync def g():\n    pass\nfrom x import (a,\n  b)\n",
		"export function f() {}\nexport class C {}\nimport x from 'y'\n",
		"public class A { public static void main(String[] a) {} }\n",
		"pub fn f() {}\nimpl T { fn g(&self) {} }\nmod m;\n",
		"`unterminated raw\n/* open comment", "\xff\xfe\x00",
	} {
		for i := range fuzzLangs {
			f.Add(uint8(i), []byte(s))
		}
	}
	f.Fuzz(func(t *testing.T, lang uint8, data []byte) {
		l := fuzzLangs[int(lang)%len(fuzzLangs)]
		lines := strings.Count(string(data), "\n") + 1
		p := parseFile(l, "f", data)
		for _, s := range p.symbols {
			if s.Name == "" || !utf8.ValidString(s.Name) || strings.ContainsAny(s.Name, "\n\r") {
				t.Fatalf("%s symbol %q", l, s.Name)
			}
			if s.Line < 1 || int(s.Line) > lines {
				t.Fatalf("%s symbol %q on line %d of %d", l, s.Name, s.Line, lines)
			}
		}
		for _, imp := range p.imports {
			if !utf8.ValidString(imp) {
				t.Fatalf("%s import %q", l, imp)
			}
		}
	})
}

// FuzzTOMLSection: a section's body is part of the document.
func FuzzTOMLSection(f *testing.F) {
	f.Add("[tool.pytest.ini_options]\naddopts = \"-q\"\n[other]\n", "tool.pytest.ini_options")
	f.Add("[project.scripts]\nx = \"m:f\"", "project.scripts")
	f.Fuzz(func(t *testing.T, doc, name string) {
		body, ok := tomlSectionBody(doc, name)
		if ok && !strings.Contains(doc, body) {
			t.Fatalf("section %q body %q is not in the document", name, body)
		}
	})
}
