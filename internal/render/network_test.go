package render

import (
	"strings"
	"testing"
)

// TestNetworkRefusedShown: a task's refused destinations reach the pull
// request's task table (a column only when some task has any) and its
// section of context.md; a hostile host name stays text.
func TestNetworkRefusedShown(t *testing.T) {
	t.Parallel()
	r := sample()
	without := PRBody(PRView{Report: r, Issue: 7})
	if strings.Contains(without, "Network refused") {
		t.Errorf("a column for refusals nobody had:\n%s", without)
	}
	r.Tasks[1].NetworkRefused = "exfil.example.net:443 (3 times), \"evil|<img src=x>\":80"
	pr := PRBody(PRView{Report: r, Issue: 7})
	if !strings.Contains(pr, "| Commit | Network refused |") || !strings.Contains(pr, "exfil.example.net:443 (3 times)") {
		t.Errorf("the PR body's task table lacks the refusals:\n%s", pr)
	}
	if strings.Contains(pr, "<img") {
		t.Errorf("a host name's markup reached the PR body unescaped:\n%s", pr)
	}
	for _, line := range strings.Split(pr, "\n") {
		if strings.HasPrefix(line, "| T") && strings.Count(strings.ReplaceAll(line, `\|`, ""), "|") != 9 {
			t.Errorf("a task row does not have the table's 8 columns: %q", line)
		}
	}
	ctx := Context(r)
	if !strings.Contains(ctx, "- Network refused") || !strings.Contains(ctx, "exfil.example.net:443 (3 times)") {
		t.Errorf("context.md lacks the refusals:\n%s", ctx)
	}
}
