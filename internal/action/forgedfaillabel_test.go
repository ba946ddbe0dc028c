package action

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/planexhq/planex/internal/ghfake"
)

// TestRedTeamForgedStateFailureLabelsAnotherPullRequest: a run that
// stops with an error (here its approver loses write access during the
// task) reports the failure and labels the thread and "its" pull request
// planex:failed, taking the pull request's number from the thread's
// record. A forged state ref of a plan on an issue names someone's pull
// request there: the failure labelled that pull request, which the run
// never opened. As on a run's normal end, the run's pull request is the
// one its branch heads, looked up on GitHub.
func TestRedTeamForgedStateFailureLabelsAnotherPullRequest(t *testing.T) {
	w := newParallelWorld(t)
	human := w.fake.AddPullRequest(wRepo, ghfake.PullRequest{Title: "by hand", Author: "maintainer", Head: "feature/y"})
	w.agent.setPlan(wTask{ID: "T1", Title: "one", Scope: "a/**"})
	w.agent.mu.Lock()
	w.agent.during = map[string]func(context.Context){"T1": func(context.Context) {
		w.fake.SetPermission(wRepo, "maintainer", "read")
		w.clock.advance(2 * DefaultAccessRecheck)
	}}
	w.agent.mu.Unlock()
	n := w.fake.AddIssue(wRepo, "maintainer", "Add a file", "One file.")
	if _, err := w.handle(w.comment(n, "maintainer", "/planex add a file")); err != nil {
		t.Fatal(err)
	}
	forgeState(t, w, n, rewriteStateFiles([]string{recordFile}, func(s string) string {
		return strings.Replace(s, "{", "{\n  \"pr_number\": "+strconv.Itoa(human)+",", 1)
	}))
	r, err := w.handle(w.comment(n, "maintainer", "/planex approve "+w.planID(n)))
	if err != nil {
		t.Logf("approve: %v", err)
	}
	if r.Outputs.Status != StatusFailed {
		t.Errorf("status %q, want the run to have failed (its approver lost access)", r.Outputs.Status)
	}
	for _, pr := range w.fake.PullRequests(wRepo) {
		if pr.Number == human && len(pr.Labels) != 0 {
			t.Errorf("planex labelled someone's pull request #%d: %v", human, pr.Labels)
		}
	}
	if cs := w.fake.Comments(wRepo, human); len(cs) != 0 {
		t.Errorf("planex commented on someone's pull request #%d:\n%s", human, cs[0].Body)
	}
}
