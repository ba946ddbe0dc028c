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
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := quotedPhrases(c.issue); !reflect.DeepEqual(got, c.want) {
				t.Errorf("quotedPhrases(%q) = %q, want %q", c.issue, got, c.want)
			}
		})
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
		note := ""
		if ev.notes[fQuotedText] != nil {
			note = ev.notes[fQuotedText][i]
		}
		return ev.feats[i][fQuotedText], note
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
