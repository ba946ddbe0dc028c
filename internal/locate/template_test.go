package locate

import (
	"slices"
	"testing"
)

func TestParseTemplate(t *testing.T) {
	t.Parallel()
	cases := []struct {
		lit   string
		ok    bool
		parts []string
	}{
		{`unexpected character "{input[pos]}"`, true, []string{`unexpected character "`, `"`}},
		{`at column {self.column}: {self.message}`, true, []string{"at column ", ": ", ""}},
		{`no shard %d in ring %q`, true, []string{"no shard ", " in ring ", ""}},
		{`%(name)s is not valid`, true, []string{"", " is not valid"}},
		{`${name} is not a function`, true, []string{"", " is not a function"}},
		// No placeholder: the quoted-text and error-text signals read those.
		{`cannot merge two empty frames`, false, nil},
		// A dotted name is one word, not prose of two.
		{`sphinx.ext.{}`, false, nil},
		// No part of two words.
		{`%s: %s`, false, nil},
		{`got %s`, false, nil},
	}
	for _, c := range cases {
		got, ok := parseTemplate(c.lit)
		if ok != c.ok || (ok && !slices.Equal(got.parts, c.parts)) {
			t.Errorf("parseTemplate(%q) = %q, %v; want %q, %v", c.lit, got.parts, ok, c.parts, c.ok)
		}
	}
}

func TestTemplateMatches(t *testing.T) {
	t.Parallel()
	cases := []struct {
		lit, line string
		want      bool
	}{
		{`unexpected character "{}"`, `error: at column 23: unexpected character "\"`, true},
		{`at column {}: {}`, `error: at column 23: unexpected character "\"`, true},
		{`no shard %d in ring %q`, `error: no shard 12 in ring "east"`, true},
		{`${name} is not a function`, `typeerror: client.replay is not a function`, true},
		// Each placeholder takes a value of one byte or more.
		{`no shard %d in ring %q`, `no shard in ring`, false},
		// The fixed text in its order.
		{`no shard %d in ring %q`, `in ring "east" there is no shard 12`, false},
	}
	for _, c := range cases {
		tp, ok := parseTemplate(c.lit)
		if !ok {
			t.Fatalf("parseTemplate(%q) failed", c.lit)
		}
		if got := tp.matches(c.line); got != c.want {
			t.Errorf("%q matches %q = %v, want %v", c.lit, c.line, got, c.want)
		}
	}
}

func TestStringLiterals(t *testing.T) {
	t.Parallel()
	got := stringLiterals(`raise parseerror(pos, f'unexpected character "{input[pos]}"') # it's "a \"quoted\" word"`)
	// The apostrophe of "it's" opens nothing: no closing one follows.
	want := []string{`unexpected character "{input[pos]}"`, `a "quoted" word`}
	if !slices.Equal(got, want) {
		t.Errorf("stringLiterals = %q, want %q", got, want)
	}
}

// The message signal's pieces need three words; a message of two between
// its values is matched by its literal's whole shape.
func TestMessageTemplateFindsAShortMessage(t *testing.T) {
	t.Parallel()
	files := map[string]string{
		"src/mark/expression.py": "class ParseError(Exception):\n    def __str__(self):\n        return f\"at column {self.column}: {self.message}\"\n\n" +
			"def lex(input, pos):\n    raise ParseError(pos + 1, f'unexpected character \"{input[pos]}\"')\n",
		// The same words, no literal that prints them.
		"src/mark/structures.py": "# an unexpected character in a mark's name is kept as it is\n# column widths\ndef names():\n    return []\n",
		// The message's words in a test's expected text: not code that raises it.
		"testing/test_mark_expression.py": "def test_bad():\n    assert str(err) == 'at column 3: unexpected character \"/\"'\n",
		"ring/shard.go":                   "package ring\n\nfunc (r *Ring) Shard(n int) error {\n\treturn fmt.Errorf(\"no shard %d in ring %q\", n, r.name)\n}\n",
		"ring/ring.go":                    "package ring\n\n// no shard is kept twice; every shard lives in ring order\ntype Ring struct{ name string }\n",
		"web/client.ts":                   "export function call(name: string) {\n  throw new TypeError(`${name} is not a function`)\n}\n",
		"web/registry.ts":                 "// a function is registered once; calling is not allowed before\nexport const registry = {}\n",
	}
	root, m := mapTree(t, files)
	ix := NewIndex(m)
	cases := []struct {
		name, issue, holder string
		apart               []string
	}{
		{"a Python f-string message of two words", "pytest -k fails\n```\nERROR: Wrong expression passed to '-k': a\\b: at column 23: unexpected character \"\\\"\n```",
			"src/mark/expression.py", []string{"src/mark/structures.py", "testing/test_mark_expression.py"}},
		{"a Go format string", "Shard lookup\n```\npanic: no shard 12 in ring \"east\"\n```", "ring/shard.go", []string{"ring/ring.go"}},
		{"a TypeScript template literal quoted in prose", "Replay breaks\nCalling it throws `TypeError: client.replay is not a function`.",
			"web/client.ts", []string{"web/registry.ts"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ev := ix.evidence(c.issue, root)
			for _, p := range append([]string{c.holder}, c.apart...) {
				i, ok := ix.byPath(p)
				if !ok {
					t.Fatalf("%s is not in the index", p)
				}
				if got, want := ev.feats.at(fMsgTemplate, i) > 0, p == c.holder; got != want {
					t.Errorf("%s: message_template %v, want credit %v (lines %q)", p, ev.feats.at(fMsgTemplate, i), want, shownLines(c.issue))
				}
			}
		})
	}
}
