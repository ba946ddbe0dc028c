package locate

import (
	"strings"
	"testing"
)

// TestCodeLine: lines of a fenced block that read as code in any of the
// languages locate maps count as the issue's code; a program's routine
// output does not.
func TestCodeLine(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		line string
		code bool
	}{
		{"from io import StringIO", true},
		{">>> posify(x)", true},
		{"In [4]: xp, _ = posify(x)", true},
		{"$ sphinx-build . build", true},
		{".. autoclass:: example.StringIO", true},
		{"x = Symbol('x', finite=True)", true},
		{"ds.stack(z=[\"x\", \"y\"])", true},
		{"if err != nil {", true},
		{"\treturn nil, fmt.Errorf(\"lease: %w\", err)", true},
		{"let total: u32 = items.iter().sum();", true},
		{"const client = new EventClient(url);", true},
		{"@pytest.mark.parametrize", true},
		{"}", true},
		{"making output directory... done", false},
		{"reading sources... [100%] index", false},
		{"dumping search index in English (code: en)... done", false},
		{"build succeeded, 1 warning.", false},
		{"Out[2]: {'finite': True, 'infinite': False}", true}, // a line ending in a brace reads as code
		{"Out[3]: True", false},
		{"ok  \tgithub.com/acme/svc/lease\t0.012s", false},
		{"   Compiling acme v0.1.0 (/src/acme)", false},
		{"", false},
		{"   ", false},
	} {
		if got := codeLine(c.line); got != c.code {
			t.Errorf("codeLine(%q) = %v, want %v", c.line, got, c.code)
		}
	}
}

// TestIssueCodeLeavesOutOutput: the issue's code keeps the code a user
// ran, the line of the log that reports the fault and the inline code of
// the prose, not the fence's language tag nor the routine lines of the
// build log pasted beside it.
func TestIssueCodeLeavesOutOutput(t *testing.T) {
	t.Parallel()
	issue := "autodoc: duplication warning with `autoclass`\n\n```python\nfrom io import StringIO\n```\n" +
		"```\nRunning Sphinx v4.0.0\nreading sources... [100%] index\n" +
		"index.rst:1: WARNING: duplicate object description of io.StringIO\npickling environment... done\n```\n"
	got := issueCode(issue)
	for _, want := range []string{"from io import StringIO", "autoclass", "WARNING: duplicate object description"} {
		if !strings.Contains(got, want) {
			t.Errorf("issue code %q lacks %q", got, want)
		}
	}
	for _, not := range []string{"python", "Running Sphinx", "reading sources", "pickling"} {
		if strings.Contains(got, not) {
			t.Errorf("issue code %q holds %q, which is not code", got, not)
		}
	}
}
