package action

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/planexhq/planex/internal/event"
)

// These flows were end-to-end tests in internal/cli (TestActionRefusals,
// TestActionCommandsWithoutAPlan, TestActionCancelAndSettings,
// TestActionDispatch, TestActionLabeledIssueIsPlanned); what only a
// process shows (event files, exit codes, stderr) stays there.

// TestCommandsWithoutAPlan: every command on a thread with no plan gets
// a reply that says so, and nothing else happens.
func TestCommandsWithoutAPlan(t *testing.T) {
	w := newParallelWorld(t)
	n := w.fake.AddIssue(wRepo, "maintainer", "Idea", "")
	cases := []struct{ body, want string }{
		{"/planex help", "approve"},
		{"/planex status", "No plan here yet"},
		{"/planex cancel", "Nothing to cancel: no plan"},
		{"/planex approve abcdef0123", "There is no plan to approve here"},
		{"/planex retry", "Nothing to retry"},
		{"/planex revise smaller", "no plan waiting for approval"},
	}
	for _, c := range cases {
		if _, err := w.handle(w.comment(n, "maintainer", c.body)); err != nil || !strings.Contains(w.lastComment(n), c.want) {
			t.Errorf("%s: %v, last comment %q, want %q", c.body, err, w.lastComment(n), c.want)
		}
	}
	if calls := w.agent.takeCalls(); len(calls) > 0 {
		t.Errorf("the agent ran: %q", calls)
	}
	if l := w.labels(n); len(l) != 0 {
		t.Errorf("labels = %v", l)
	}
	w.noRefusedRequests()
}

// TestSettingsTriggerAndCancel: .github/planex.yml on the default branch
// replaces the trigger phrase (the default one is then ignored); a
// cancelled plan cannot be approved; a settings file with an unknown
// field fails the run, naming the file, line and field.
func TestSettingsTriggerAndCancel(t *testing.T) {
	w := newParallelWorld(t)
	w.agent.setPlan(wTask{ID: "T1", Title: "one", Scope: "a/**"})
	w.fake.SetFile(wRepo, "main", ".github/planex.yml", []byte("trigger-phrase: /bot\n"))
	n := w.fake.AddIssue(wRepo, "maintainer", "Idea", "")
	if r, err := w.handle(w.comment(n, "maintainer", "/planex do it")); err != nil || r.Outputs.Status != StatusIgnored {
		t.Errorf("the default trigger still worked: %v %+v", err, r.Outputs)
	}
	if r, err := w.handle(w.comment(n, "maintainer", "/bot do it")); err != nil || r.Outputs.Status != StatusPlanned {
		t.Fatalf("configured trigger: %v %+v", err, r.Outputs)
	}
	id := w.planID(n)
	if _, err := w.handle(w.comment(n, "maintainer", "/bot cancel")); err != nil || !strings.Contains(w.lastComment(n), "is cancelled") {
		t.Errorf("cancel: %v %q", err, w.lastComment(n))
	}
	if _, err := w.handle(w.comment(n, "maintainer", "/bot approve "+id)); err != nil || !strings.Contains(w.lastComment(n), "was cancelled") {
		t.Errorf("approving a cancelled plan: %v %q", err, w.lastComment(n))
	}
	w.fake.SetFile(wRepo, "main", ".github/planex.yml", []byte("colour: blue\n"))
	if _, err := w.handle(w.comment(n, "maintainer", "/bot status")); err == nil || !strings.Contains(err.Error(), ".github/planex.yml line 1: field colour not found") {
		t.Errorf("bad settings: %v", err)
	}
}

// TestDispatchAndLabelEvents: a dispatched requirement without an issue
// opens one and, with auto-approve, runs to a pull request that closes
// it; a dispatch with neither input fails saying which inputs it needs.
// The planex label plans only when someone with write access adds it;
// another label is ignored; the plan reaches the job summary and the
// session is named after the issue.
func TestDispatchAndLabelEvents(t *testing.T) {
	w := newParallelWorld(t)
	w.agent.setPlan(wTask{ID: "T1", Title: "one", Scope: "a/**"})
	maintainer := event.User{Login: "maintainer", Type: "User"}
	dispatch := func(in event.Inputs) *event.Event {
		return &event.Event{Name: event.WorkflowDispatch, Owner: wOwner, Repo: wName, DefaultBranch: "main", Sender: maintainer, Inputs: in}
	}
	r, err := w.handle(dispatch(event.Inputs{Requirement: "Add a health check", AutoApprove: true}))
	if err != nil || r.Outputs.Status != StatusDone || r.Outputs.PullRequestURL == "" {
		t.Fatalf("dispatch: %v %+v", err, r.Outputs)
	}
	if prs := w.fake.PullRequests(wRepo); len(prs) != 1 || !strings.Contains(prs[0].Body, "Closes #") {
		t.Fatalf("pull requests = %+v", prs)
	}
	r, err = w.handle(dispatch(event.Inputs{}))
	if err == nil || r.Outputs.Status != StatusFailed || !strings.Contains(err.Error(), "needs the input `issue` or `requirement`") {
		t.Errorf("dispatch without inputs: %v %+v", err, r.Outputs)
	}

	n := w.fake.AddIssue(wRepo, "maintainer", "Cache the results", "They are slow.")
	labeled := func(label, sender string) *event.Event {
		return &event.Event{Name: event.Issues, Action: "labeled", Owner: wOwner, Repo: wName, DefaultBranch: "main", Number: n,
			Sender: event.User{Login: sender, Type: "User"}, Label: label,
			Issue: &event.Issue{Number: n, Title: "Cache the results", Body: "They are slow.", Author: maintainer}}
	}
	if r, err := w.handle(labeled("bug", "maintainer")); err != nil || r.Outputs.Status != StatusIgnored {
		t.Fatalf("another label: %v %+v", err, r.Outputs)
	}
	if r, err := w.handle(labeled("planex", "reader")); err != nil || r.Outputs.Status != StatusRefused {
		t.Fatalf("label by a reader: %v %+v", err, r.Outputs)
	}
	r, err = w.handle(labeled("planex", "maintainer"))
	if err != nil || r.Outputs.Status != StatusPlanned || !strings.HasPrefix(r.Outputs.SessionID, strconv.Itoa(n)+"-cache-the-results") {
		t.Fatalf("label by a maintainer: %v %+v", err, r.Outputs)
	}
	if !strings.Contains(r.Outputs.Summary, "## planex plan") {
		t.Errorf("job summary lacks the plan:\n%s", r.Outputs.Summary)
	}
	if !slices.Contains(w.labels(n), LabelPlanned) {
		t.Errorf("labels = %v", w.labels(n))
	}
	w.noRefusedRequests()
}
