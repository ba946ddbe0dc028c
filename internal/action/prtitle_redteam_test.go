package action

import (
	"regexp"
	"strings"
	"testing"
)

// closingRef is a GitHub closing keyword followed by an issue reference:
// "#N", "owner/repo#N", "GH-N" or an issue's URL.
var closingRef = regexp.MustCompile(`(?i)\b(close[sd]?|fix(e[sd])?|resolve[sd]?):?\s+([\w.-]+/[\w.-]+)?(#\d|gh-\d|https?://\S+/issues/\d)`)

// TestRedTeamPullRequestTitleClosesNoIssue: anyone who may open an issue
// titles it "Fix the typo, closes #1" (or another issue's URL). planex
// titled its pull request after the requirement's first line, and the
// merge commit GitHub makes (or the squash commit) carries the pull
// request's title: merging it closed issue #1, which nobody asked planex
// about. The title keeps its words, and references no issue.
func TestRedTeamPullRequestTitleClosesNoIssue(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.agent.setPlan(wTask{ID: "T1", Title: "one", Scope: "a/**"})
	title := "Fix the typo, closes #1 and fixes octo/demo#2, resolves https://github.com/octo/demo/issues/3"
	if !closingRef.MatchString(title) {
		t.Fatal("closingRef finds no reference in the plain title")
	}
	n := w.fake.AddIssue(wRepo, "someone", title, "The README has a typo.")
	if r, err := w.handle(w.comment(n, "maintainer", "/planex")); err != nil || r.Outputs.Status != StatusPlanned {
		t.Fatalf("plan: %v %+v\n%s", err, r.Outputs, w.lastComment(n))
	}
	id := w.planID(n)
	if r, err := w.handle(w.comment(n, "maintainer", "/planex approve "+id)); err != nil || r.Outputs.Status != StatusDone {
		t.Fatalf("approve: %v, outputs %+v", err, r.Outputs)
	}
	prs := w.fake.PullRequests(wRepo)
	if len(prs) != 1 {
		t.Fatalf("pull requests = %+v", prs)
	}
	if m := closingRef.FindAllString(prs[0].Title, -1); len(m) > 0 {
		t.Errorf("the pull request's title %q closes issues on merge: %q", prs[0].Title, m)
	}
	if !strings.Contains(prs[0].Title, "Fix the typo, closes #") {
		t.Errorf("the title lost its words: %q", prs[0].Title)
	}
}
