package gitrepo

import (
	"context"
	"fmt"
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

// TestOtherCommits: the commits on a branch since its base that are no
// task commit of the session (none of planex's trailers, another
// session's) are listed, oldest first, at most MaxOtherCommits of them,
// with how many there are.
func TestOtherCommits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRepo(t)
	base, _ := r.Head(ctx)
	tip := base
	commit := func(msg string) {
		c, err := r.CommitChanges(ctx, tip, nil, msg)
		if err != nil {
			t.Fatal(err)
		}
		tip = c
	}
	commit(TaskMessage("s1", "T1", "mine", ""))
	commit("a fix someone pushed")
	commit(TaskMessage("s0", "T1", "another session's", ""))
	for i := range MaxOtherCommits {
		commit(fmt.Sprintf("flood %d", i))
	}
	if err := r.UpdateBranch(ctx, "planex/s1", tip, "", "test"); err != nil {
		t.Fatal(err)
	}
	list, n, err := OtherCommits(ctx, r, "planex/s1", base, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if n != MaxOtherCommits+2 || len(list) != MaxOtherCommits || list[0].Subject != "a fix someone pushed" || list[1].Subject != "T1: another session's" {
		t.Errorf("OtherCommits = %d listed of %d, first %+v", len(list), n, list[:2])
	}
}
