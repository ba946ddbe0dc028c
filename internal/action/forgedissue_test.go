package action

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestRedTeamForgedStateClosesAnotherIssue: the pull request of a plan
// made on an issue says "Closes #<issue>", with the issue number read
// from the thread's record. A forged state ref keeps the approved plan
// but names another issue there (a security report, say): merging the
// pull request closed that one. The record's thread and issue must be the
// thread it was read for; such a record is refused and nothing runs.
func TestRedTeamForgedStateClosesAnotherIssue(t *testing.T) {
	w := newParallelWorld(t)
	w.agent.setPlan(wTask{ID: "T1", Title: "one", Scope: "a/**"})
	other := w.fake.AddIssue(wRepo, "reporter", "Security report", "Keep open until fixed.")
	n := w.fake.AddIssue(wRepo, "maintainer", "Add a file", "One file.")
	if _, err := w.handle(w.comment(n, "maintainer", "/planex add a file")); err != nil {
		t.Fatal(err)
	}
	issueRe := regexp.MustCompile(`"issue": \d+`)
	forgeState(t, w, n, rewriteStateFiles([]string{recordFile}, func(s string) string {
		return issueRe.ReplaceAllString(s, `"issue": `+strconv.Itoa(other))
	}))
	r, err := w.handle(w.comment(n, "maintainer", "/planex approve "+w.planID(n)))
	if err == nil || !strings.Contains(err.Error(), "names thread") {
		t.Errorf("the forged record was taken: %v, status %q", err, r.Outputs.Status)
	}
	for _, pr := range w.fake.PullRequests(wRepo) {
		if strings.Contains(pr.Body, "Closes #"+strconv.Itoa(other)) {
			t.Errorf("the pull request closes #%d, which nobody asked planex about (%v, %q)", other, err, r.Outputs.Status)
		}
	}
}
