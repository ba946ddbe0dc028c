package locate

import (
	"strings"
	"testing"
)

func TestIssueLanguageVotes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		issue string
		want  string   // the family the votes point at most; "" for no vote or a tie
		among []string // families that must get a vote
		never []string // families that must get no vote
	}{
		{"python traceback", "Crash\nTraceback (most recent call last):\n  File \"/srv/app/views.py\", line 3, in <module>\nValueError: bad",
			"Python", nil, []string{"Go", "JavaScript"}},
		{"python prompt", "Wrong sum\n>>> total([1, 2])\n4\n", "Python", nil, []string{"Go"}},
		{"ipython prompt", "In [3]: x.plot()\n", "Python", nil, nil},
		{"python exception name", "it raises an AttributeError on NoneType", "Python", nil, []string{"Go"}},
		{"exception names Ruby shares are no evidence", "it raises NameError, then KeyError and IndexError", "", nil, []string{"Python"}},
		{"go panic", "panic: runtime error: index out of range [3] with length 3\n\ngoroutine 7 [running]:\nmain.main()\n", "Go", nil, []string{"Python"}},
		{"go path and line", "the check at internal/store/save.go:41 is inverted", "Go", nil, []string{"Python"}},
		{"node stack", "TypeError: x is not a function\n    at Object.render (/app/src/view.ts:12:5)\n", "JavaScript", nil, []string{"Python", "Go"}},
		{"browser error", "Uncaught TypeError: Cannot read properties of null (reading 'id')", "JavaScript", nil, []string{"Go"}},
		{"java stack", "Exception in thread \"main\" java.lang.IllegalStateException\n\tat com.acme.Store.save(Store.java:40)\n", "Java", nil, []string{"Python"}},
		{"rust panic", "thread 'main' panicked at src/parse.rs:10:5:\nindex out of bounds", "Rust", nil, []string{"Python", "Go"}},
		{"rust compiler error", "error[E0502]: cannot borrow `v` as mutable", "Rust", nil, nil},
		{"fenced python", "Repro:\n```python\nimport acme\n```\n", "Python", nil, []string{"Go"}},
		{"fenced go", "Repro:\n```go\nx := acme.New()\n```\n", "Go", nil, []string{"Python"}},
		{"fenced typescript counts as JavaScript", "```tsx\n<Panel />\n```", "JavaScript", nil, nil},
		{"shell fence is no evidence", "```bash\nmake test\n```\n", "", nil, nil},
		// A name's spelling fits several languages: a weak vote for each.
		{"snake_case call", "calling load_config() twice leaks", "", []string{"Python", "Rust"}, []string{"Go", "JavaScript", "Java"}},
		{"lowerCamelCase call", "calling loadConfig() twice leaks", "", []string{"JavaScript", "Java", "Go"}, []string{"Python", "Rust"}},
		{"capitalised method call", "calling cfg.Load() twice leaks", "", []string{"Go"}, []string{"Python", "JavaScript"}},
		{"plain prose", "The settings page forgets my choice after a restart.", "", nil, nil},
		{"documentation path", "docs/usage.md has a typo", "", nil, nil},
		{"call in a link is ignored", "see https://example.com/load_config()", "", nil, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v := issueLanguageVotes(tc.issue, extractMentions(tc.issue))
			if got := v.leading(); got != tc.want {
				t.Errorf("leading = %q, want %q (votes %v)", got, tc.want, v)
			}
			for _, f := range tc.among {
				if v[f] <= 0 {
					t.Errorf("%s got no vote (votes %v)", f, v)
				}
			}
			for _, f := range tc.never {
				if v[f] > 0 {
					t.Errorf("%s got a vote %.2f (votes %v)", f, v[f], v)
				}
			}
		})
	}
}

func TestCallStyle(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		afterDot bool
		want     nameStyle
	}{
		{"lookup_digest", true, styleSnake},
		{"lookup_digest", false, styleSnake},
		{"lookupDigest", true, styleCamel},
		{"LookupDigest", true, stylePascalCall},
		{"LookupDigest", false, styleNone}, // a constructor or class: any language
		{"lookup", true, styleNone},
		{"MAX_SIZE", false, styleNone},
		{"Lookup_digest", false, styleNone},
	}
	for _, tc := range cases {
		if got := callStyle(tc.name, tc.afterDot); got != tc.want {
			t.Errorf("callStyle(%q, %v) = %d, want %d", tc.name, tc.afterDot, got, tc.want)
		}
	}
}

func TestLangFamily(t *testing.T) {
	t.Parallel()
	for p, want := range map[string]string{
		"a/b.py": "Python", "x.pyi": "Python", "web/a.ts": "JavaScript", "web/a.tsx": "JavaScript", "a.js": "JavaScript",
		"c/x.h": "C", "c/x.cpp": "C", "A.kt": "Java", "main.go": "Go", "lib.rs": "Rust",
		"README.md": "", "conf.yaml": "", "noext": "",
	} {
		if got := fileFamily(p); got != want {
			t.Errorf("fileFamily(%q) = %q, want %q", p, got, want)
		}
	}
}

// TestFamilyMemo checks a memo walked over a run of paths gives each the
// family fileFamily gives it alone: across changes of extension and case,
// names DetectLanguage reads whole, and names without an extension.
func TestFamilyMemo(t *testing.T) {
	t.Parallel()
	for name, paths := range map[string][]string{
		"runs":         {"a/x.go", "a/y.go", "b/z.py", "b/w.py", "c/v.go", "c/u.ts", "c/t.tsx", "c/s.js"},
		"case":         {"a.PY", "b.py", "c.Py", "d.GO", "e.go"},
		"whole names":  {"a/x.go", "a/Makefile", "a/y.go", "Dockerfile", "Dockerfile.go", "z.go", "Dockerfile.py", "GNUmakefile"},
		"no extension": {"a.py", "LICENSE", "b.py", "c", ".bashrc", "d.py", "e."},
		"not code":     {"README.md", "a.go", "b.yaml", "c.yaml", "d.go", "e.md"},
		"same ext":     {"x.h", "y.cpp", "z.h", "w.kt", "v.java"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var m familyMemo
			for _, p := range paths {
				if got, want := m.of(p), fileFamily(p); got != want {
					t.Errorf("after a run, family of %q = %q, alone %q", p, got, want)
				}
			}
		})
	}
}

// TestLangHoldBack checks, on the generated monorepo, how far each kind of
// evidence holds back the languages it does not point at.
func TestLangHoldBack(t *testing.T) {
	t.Parallel()
	_, m := mapTree(t, polyglotRepo())
	ix := NewIndex(m)
	cases := []struct {
		name  string
		issue string
		lead  string
		// held must be held back by at least 0.4, free not at all.
		held []string
		free string
		// weak: no family may be held back by more than 0.25.
		weak bool
	}{
		{"no evidence: the repository's mix is a weak prior", "The settings page forgets my choice after a restart.", "Go", nil, "Go", true},
		{"a name only Python files define", "LimitPrinter returns the wrong thing for an unknown key", "Python", []string{"Go", "JavaScript", "Rust", "Java"}, "Python", false},
		{"a name only Go files define", "`FlushSample` loses the last sample", "Go", []string{"Python", "JavaScript", "Rust", "Java"}, "Go", false},
		{"a Python traceback outweighs the Go majority", "Traceback (most recent call last):\n  File \"x/acme/quota/ledger.py\", line 3, in charge_allowance\nTypeError: boom", "Python", []string{"Go", "JavaScript"}, "Python", false},
		{"a Java stack trace", "Exception in thread \"main\" java.lang.NullPointerException\n\tat com.acme.audit.EventClient.replayTrail(EventClient.java:21)", "Java", []string{"Go", "Python"}, "Java", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			hold, votes := ix.langHoldBack(tc.issue, extractMentions(tc.issue))
			if got := votes.leading(); got != tc.lead {
				t.Errorf("leading = %q, want %q (votes %v)", got, tc.lead, votes)
			}
			if hold[tc.free] != 0 {
				t.Errorf("%s held back by %.2f (hold %v)", tc.free, hold[tc.free], hold)
			}
			for _, f := range tc.held {
				if hold[f] < 0.4 {
					t.Errorf("%s held back by only %.2f (hold %v, votes %v)", f, hold[f], hold, votes)
				}
			}
			if tc.weak {
				for f, h := range hold {
					if h > 0.25 {
						t.Errorf("no clear evidence, yet %s held back by %.2f (votes %v)", f, h, votes)
					}
				}
			}
		})
	}
	for _, f := range []string{"Go", "Python", "JavaScript", "Rust", "Java"} {
		if _, ok := ix.codeFamilies()[f]; !ok {
			t.Errorf("the generated repository has no %s code: %v", f, ix.codeFamilies())
		}
	}
	if h, _ := ix.langHoldBack("x", mentions{}); strings.Contains(strings.Join(mapKeys(h), ","), "Markdown") {
		t.Errorf("documentation counted as a language: %v", h)
	}
}

func mapKeys(m map[string]float64) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
