package gitrepo

import (
	"regexp"
	"strings"
	"testing"
)

// closingRe finds what GitHub reads as a closing reference in a commit
// message that reaches the default branch: a keyword, then an issue by
// number, GH- number, owner/repo#number or URL.
var closingRe = regexp.MustCompile(`(?i)\b(close[sd]?|fix(e[sd])?|resolve[sd]?)\b:?\s*(([\w.-]+/[\w.-]+)?#\d+|GH-\d+|https?://\S+/(issues|pull)/\d+)`)

// TestRedTeamTaskMessageClosesNoIssue: a task title and findings (both an
// agent's text) naming issues with closing keywords do not put a closing
// reference in the task's commit message, which would close those issues
// when the pull request is merged.
func TestRedTeamTaskMessageClosesNoIssue(t *testing.T) {
	t.Parallel()
	refs := "Fixes #12, closes octo/demo#3, resolves GH-4, fixed: #5, closes https://github.com/octo/demo/issues/6"
	msg := TaskMessage("s1", "T1", refs, "done.\n"+refs)
	if m := closingRe.FindAllString(msg, -1); len(m) > 0 {
		t.Fatalf("the commit message closes issues %q:\n%s", m, msg)
	}
	for _, keep := range []string{"Fixes #", "octo/demo#", "GH-", "github.com/octo/demo/issues/6", "Planex-Task: T1"} {
		if !strings.Contains(msg, keep) {
			t.Errorf("the message lost %q:\n%s", keep, msg)
		}
	}
	if !closingRe.MatchString(refs) {
		t.Fatal("closingRe finds no closing reference in the plain text")
	}
}
