package locate

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestQuotedPhrases(t *testing.T) {
	cases := []struct {
		name, issue string
		want        []string
	}{
		{"double backticks cut at an ellipsis", "the only thing shown is the ``alias of ...`` text", []string{"alias of"}},
		{"quotation marks, case and spaces folded", `it warns "Unknown   interpreted Text role." every time`, []string{"unknown interpreted text role"}},
		{"cut at format placeholders", `the log says 'cannot convert %s to float here'`, []string{"cannot convert", "to float here"}},
		{"braces are placeholders too", "`no such option {name} was given`", []string{"no such option", "was given"}},
		{"a call is code", "calling `merge(a, b)` fails", nil},
		{"a file name is code", "edit `docs/conf.py` and `setup.cfg`", nil},
		{"an import is code", "after `import numpy as np` it fails", nil},
		{"one word is a name, not a message", "the `verbose` flag", nil},
		{"fenced code is read elsewhere", "```\nprint(\"inside the fence here\")\n```\n", nil},
		{"each phrase once", "`two words` and again `Two  words`", []string{"two words"}},
		{"a value quoted inside a quote is cut out", "selecting fails with `unexpected character \"/\"` here", []string{"unexpected character"}},
		{"a single-quoted value inside is cut out too", "it says `no such column 'a/b' in the table`", []string{"no such column", "in the table"}},
		{"an apostrophe inside is no quote", "it says `can't parse the header`", []string{"can't parse the header"}},
		{"a call with a quoted argument is still code", "calling `merge(\"a\", b)` fails", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := quotedPhrases(c.issue); !reflect.DeepEqual(got, c.want) {
				t.Errorf("quotedPhrases(%q) = %q, want %q", c.issue, got, c.want)
			}
		})
	}
}

func TestErrorPhrases(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, issue string
		want        []string
	}{
		{"python traceback's last line, cut at quoted values", "```\nTraceback (most recent call last):\n  File \"x.py\", line 1\nValueError: datatype 'datetime64' of column 'tbs' is not in allowed values ('bool', 'int8')\r\n```",
			[]string{"is not in allowed values", "datatype of column is not in allowed values"}},
		{"numbers, reprs and sentence ends", "TypeError: cannot reshape array of size 6 into shape <Shape 4>. Expected a positive length",
			[]string{"cannot reshape array of size", "expected a positive length", "cannot reshape array of size into shape"}},
		{"a dotted Java exception", `Exception in thread "main" java.lang.IllegalStateException: connection pool is already closed`,
			[]string{"connection pool is already closed"}},
		{"a JavaScript error", "Uncaught TypeError: handler is not a function\n    at dispatch (src/bus.ts:12:5)",
			[]string{"handler is not a function"}},
		{"a Go panic, cut at its runtime prefix", "panic: runtime error: invalid memory address or nil pointer dereference",
			[]string{"invalid memory address or nil pointer dereference"}},
		{"a Rust compiler error", "error[E0599]: no method named `frobnicate` found for struct `Widget` in the current scope",
			[]string{"no method named", "found for struct", "in the current scope", "no method named found for struct in the current scope"}},
		{"a logged warning after a path", "/docs/index.rst:3: WARNING: duplicate label intro, other instance in usage.rst",
			[]string{"duplicate label intro, other instance in"}},
		{"paths are values", "OSError: unable to open /tmp/data/file.h5 for reading now",
			[]string{"unable to open", "for reading now", "unable to open for reading now"}},
		{"an apostrophe is not a quote", "UnicodeDecodeError: 'ascii' codec can't decode byte 0xcf in position 140",
			[]string{"codec can't decode byte", "codec can't decode byte in position"}},
		{"glue between two values is dropped", "KeyError: 'a' not in 'b'", nil},
		{"pieces too short alone make a skeleton", "ValueError: No name 'errors' in module 'list'", []string{"no name in module"}},
		{"a skeleton stops at a clause's end", "Error: no shard 12 in ring \"east\". Retry in 5 s", []string{"no shard in ring"}},
		{"dotted and snake_case names are values", "WARNING: duplicate object description of _io.StringIO, other instance in index",
			[]string{"duplicate object description of", "other instance in index", "duplicate object description of other instance in index"}},
		{"a snake_case name is a value", "ValueError: column time_bin_start of table is not sorted", []string{"of table is not sorted", "column of table is not sorted"}},
		{"prose that only mentions an error is no message", "this raises a ValueError when the list is empty", nil},
		{"each piece once", "ValueError: the frame is empty here\nValueError: The frame is  empty here", []string{"the frame is empty here"}},
		{"quoted in prose as inline code, ending at its backtick", "The message `ValueError: TimeSeries object is invalid - expected 'time' as the first columns but found 'time'` misleads users of the series",
			[]string{"timeseries object is invalid - expected", "as the first columns but found", "timeseries object is invalid - expected as the first columns but found"}},
		{"inline in prose beside a fenced one", "It fails with `Error: the pool is closed now`.\n```\nwarning: lease renewal was skipped\n```", []string{"lease renewal was skipped", "the pool is closed now"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if got := errorPhrases(c.issue); !reflect.DeepEqual(got, c.want) {
				t.Errorf("errorPhrases(%q) = %q, want %q", c.issue, got, c.want)
			}
		})
	}
}

// TestQuotedTextFindsTheErrorMessage checks that the message of an error
// the issue shows in a traceback credits the code whose literal prints it,
// in any language, while a file that only shares its words, a test that
// checks the message and a document that explains it are not credited.
func TestQuotedTextFindsTheErrorMessage(t *testing.T) {
	t.Parallel()
	files := map[string]string{
		"pkg/coerce.py":      "def coerce(col):\n    raise ValueError(f\"datatype {col.dtype!r} of column {col.name!r} is not in allowed values {ALLOWED}\")\n",
		"pkg/allowed.py":     "# allowed values: is the column not in there?\nALLOWED = ('bool',)\n",
		"server/pool.go":     "package server\n\nfunc (p *Pool) Get() error {\n\treturn fmt.Errorf(\"connection pool is already closed\")\n}\n",
		"server/poolconf.go": "package server\n\n// a pool of connections; closed is already a state\nvar closed = true\n",
		// A test checks the message and a document explains it; neither
		// raises it.
		"tests/test_coerce.py": "import pytest\n\ndef test_coerce():\n    with pytest.raises(ValueError, match='is not in allowed values'):\n        coerce(None)\n",
		"docs/errors.rst":      "Errors\n======\n\nconnection pool is already closed: call open first.\n",
	}
	root, m := mapTree(t, files)
	ix := NewIndex(m)
	cases := []struct {
		issue, holder, other string
	}{
		{"Writing fails\n```\nTraceback (most recent call last):\n  File \"w.py\", line 3, in <module>\nValueError: datatype 'datetime64' of column 'start' is not in allowed values ('bool', 'int8')\n```",
			"pkg/coerce.py", "pkg/allowed.py"},
		{"Get after shutdown\n```\nError: connection pool is already closed\n```", "server/pool.go", "server/poolconf.go"},
	}
	for _, c := range cases {
		checkErrorTextCredit(t, ix, root, c.issue, c.holder, c.other, "tests/test_coerce.py", "docs/errors.rst")
	}
}

// checkErrorTextCredit checks that issue's error text credits holder,
// and none of apart, in ix's evidence for the tree at root.
func checkErrorTextCredit(t *testing.T, ix *Index, root, issue, holder string, apart ...string) {
	t.Helper()
	ev := ix.evidence(issue, root)
	for _, p := range append([]string{holder}, apart...) {
		i, ok := ix.byPath(p)
		if !ok {
			t.Fatalf("%s is not in the index", p)
		}
		if got, want := ev.feats.at(fErrorText, i) > 0, p == holder; got != want {
			t.Errorf("%s: error_text %v, want credit %v (issue %q, pieces %q)", p, ev.feats.at(fErrorText, i), want, issue, errorPhrases(issue))
		}
	}
}

func TestQuotedTextCreditsTheFileHoldingTheQuote(t *testing.T) {
	files := map[string]string{
		"frames/merge.py": "def merge(a, b):\n    if not a and not b:\n        raise ValueError(\"\"\"Cannot merge two\n            empty frames\"\"\")\n",
		// The same words, not in the quoted order.
		"frames/empty.py": "# frames: two kinds. empty frames cannot merge\ndef empty():\n    return []\n",
		"frames/other.py": "def other():\n    return 1\n",
	}
	// A phrase that more than quoteMaxFiles files hold is common, not a
	// message.
	for i := 0; i <= quoteMaxFiles; i++ {
		files[fmt.Sprintf("common/m%02d.py", i)] = "# see the user guide\nx = 1\n"
	}
	root, m := mapTree(t, files)
	ix := NewIndex(m)
	query := "merge fails\nCalling merge on two empty lists raises \"cannot merge two empty frames\"; see \"the user guide\" for more."
	ev := ix.evidence(query, root)
	get := func(p string) (float64, string) {
		i, ok := ix.byPath(p)
		if !ok {
			t.Fatalf("%s is not in the index", p)
		}
		return ev.feats.at(fQuotedText, i), ev.noteOf(fQuotedText, i)
	}
	if v, note := get("frames/merge.py"); v <= 0 || !strings.Contains(note, "“cannot merge two empty frames”") {
		t.Errorf("frames/merge.py: quoted_text %v, note %q; want credit for the quote", v, note)
	}
	if v, _ := get("frames/empty.py"); v != 0 {
		t.Errorf("frames/empty.py holds the words out of order, yet quoted_text is %v", v)
	}
	if v, _ := get("common/m00.py"); v != 0 {
		t.Errorf("a phrase %d files hold got credit %v", quoteMaxFiles+1, v)
	}
	// Without the tree (an index alone) the signal is skipped, not guessed.
	ev = ix.evidence(query, "")
	if v, _ := get("frames/merge.py"); v != 0 {
		t.Errorf("without a root quoted_text is %v", v)
	}
}

func TestMessageWindows(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, piece string
		want        []string
		words       int
	}{
		{"runs of three words, punctuation gone", "timeseries object is invalid - expected",
			[]string{"timeseries object is", "object is invalid", "is invalid expected"}, 5},
		{"one letter and digits are no words", "can't decode byte x in utf8 stream",
			[]string{"can decode byte", "decode byte in", "byte in utf", "in utf stream"}, 6},
		{"too short for a run", "no such", nil, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if got, words := messageWindows(c.piece); !reflect.DeepEqual(got, c.want) || words != c.words {
				t.Errorf("messageWindows(%q) = %q, %d words, want %q, %d", c.piece, got, words, c.want, c.words)
			}
		})
	}
}

// TestErrorTextFindsAMessageFilledInAtRunTime checks that an error message
// whose literal the issue's copy does not hold verbatim (a class name and a
// plural filled in, the literal cut across lines, in Python and in Go) still
// credits the code that prints it, by runs of its words, while files that
// hold the same words apart, and tests, are not credited.
func TestErrorTextFindsAMessageFilledInAtRunTime(t *testing.T) {
	t.Parallel()
	files := map[string]string{
		"series/core.py": "class Base:\n    def check(self):\n        raise ValueError(\"{} object is invalid - expected '{}' \"\n" +
			"                         \"as the first column{} but found '{}'\".format(type(self).__name__, req[0], plural, names[0]))\n",
		// The same words, never three of them in a row.
		"series/sampled.py": "# An invalid series object: the expected first column is time.\n# Is it found? Invalid object, expected time.\ndef sampled():\n    return None\n",
		// Three of the message's words in a row, a rare run, but not the
		// message: most of its words are not there in order.
		"series/binned.py": "def bin(x):\n    raise TypeError('this object is invalid here')\n",
		"auth/token.go":    "package auth\n\nfunc renew(svc string) error {\n\treturn errors.New(svc + \" could not be renewed before its \" +\n\t\t\"lease ran out\")\n}\n",
		// Renewal words apart, and a test that checks the message.
		"auth/renew.go":      "package auth\n\n// renewed tokens are kept in time order; a renewal could fail, not be retried\nvar renewed = 0\n",
		"auth/token_test.go": "package auth\n\nfunc TestRenew(t *testing.T) {\n\twant := \"could not be renewed before its lease ran out\"\n\t_ = want\n}\n",
	}
	root, m := mapTree(t, files)
	ix := NewIndex(m)
	cases := []struct {
		issue, holder string
		apart         []string
	}{
		{"TimeSeries: misleading exception\n```\nValueError: TimeSeries object is invalid - expected 'time' as the first columns but found 'time'\n```",
			"series/core.py", []string{"series/sampled.py", "series/binned.py"}},
		{"Renewal fails\n```\nError: billing could not be renewed before its lease ran out\n```",
			"auth/token.go", []string{"auth/renew.go", "auth/token_test.go"}},
		{"Misleading exception\nRemoving a column raises `ValueError: TimeSeries object is invalid - expected 'time' as the first columns but found 'time'`, which names no missing column.",
			"series/core.py", []string{"series/sampled.py", "series/binned.py"}},
	}
	for _, c := range cases {
		// The pieces are not in the holder verbatim: only runs of their
		// words are.
		text := strings.Join(strings.Fields(strings.ToLower(files[c.holder])), " ")
		for _, p := range errorPhrases(c.issue) {
			if strings.Contains(text, p) {
				t.Fatalf("%s holds the piece %q verbatim; the case shows nothing", c.holder, p)
			}
		}
		checkErrorTextCredit(t, ix, root, c.issue, c.holder, c.apart...)
	}
}

// TestErrorTextFindsAMessageByItsSkeleton checks that a message whose
// run-time values cut it into pieces of two words, too short to count
// alone, credits the code whose literal prints its words around
// placeholders (Python's %r, Go's %d and %q, a str.format's {}), and that
// a name in code shown in the message (a dotted or snake_case name) is a
// value too; files holding the pieces apart, and a test holding the whole
// message, are not credited.
func TestErrorTextFindsAMessageByItsSkeleton(t *testing.T) {
	t.Parallel()
	files := map[string]string{
		"lint/variables.py": "MSGS = {\n    \"E0611\": (\n        \"No name %r in module %r\",\n        \"no-name-in-module\",\n    ),\n}\n",
		// "no name" and "in module" apart, as glue found anywhere.
		"lint/imports.py":    "# no name is checked here\ndef check(node):\n    # the import in module scope\n    return node\n",
		"ring/shard.go":      "package ring\n\nfunc (r *Ring) Shard(n int) error {\n\treturn fmt.Errorf(\"no shard %d in ring %q\", n, r.name)\n}\n",
		"ring/ring.go":       "package ring\n\n// no shard is kept twice; every shard lives in ring order\ntype Ring struct{ name string }\n",
		"ring/shard_test.go": "package ring\n\nfunc TestShard(t *testing.T) {\n\twant := \"no shard 12 in ring \\\"east\\\"\"\n\t_ = want\n}\n",
		"domains/python.py":  "def note(name, other):\n    logger.warning(__('duplicate object description of %s, '\n                      'other instance in %s'), name, other)\n",
		"domains/objects.py": "def describe(obj):\n    # the object's description: a duplicate is dropped\n    return obj\n",
	}
	root, m := mapTree(t, files)
	ix := NewIndex(m)
	cases := []struct {
		name, issue, holder string
		apart               []string
	}{
		{"a linter's message with two quoted values", "False positive\n```\nValueError: No name 'errors' in module 'list'\n```",
			"lint/variables.py", []string{"lint/imports.py"}},
		{"a Go error with a number and a quoted value", "Shard lookup fails\n```\nError: no shard 12 in ring \"east\"\n```",
			"ring/shard.go", []string{"ring/ring.go", "ring/shard_test.go"}},
		{"a dotted name is a value", "Aliased object\n```\nindex.rst:1: WARNING: duplicate object description of _io.StringIO, other instance in index\n```",
			"domains/python.py", []string{"domains/objects.py"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			checkErrorTextCredit(t, ix, root, c.issue, c.holder, c.apart...)
		})
	}
}
