package action

import (
	"strings"
	"testing"
	"time"

	"github.com/planexhq/planex/internal/event"
	"github.com/planexhq/planex/internal/ghfake"
)

// TestRedeliveredPlanEvent: the same /planex comment delivered twice
// plans once; and when the job failed after saving the plan but before
// its comment got out (GitHub refused every attempt to post it), the
// redelivery posts it without asking the agent again. (Was internal/cli's
// TestActionRedeliveredPlanEvent.)
func TestRedeliveredPlanEvent(t *testing.T) {
	w := newParallelWorld(t)
	// GitHub's 502s are retried after milliseconds, not seconds.
	w.retry.BaseDelay, w.retry.MaxDelay = 5*time.Millisecond, 20*time.Millisecond
	w.agent.setPlan(diamond()...)
	n := w.fake.AddIssue(wRepo, "maintainer", "Add four files", "")
	ev := w.comment(n, "maintainer", "/planex add four files")
	if _, err := w.handle(ev); err != nil {
		t.Fatalf("plan: %v", err)
	}
	id := w.planID(n)
	if r, err := w.handle(ev); err != nil || r.Outputs.PlanID != id || r.Outputs.Status != StatusPlanned {
		t.Fatalf("redelivery: %v %+v", err, r.Outputs)
	}
	if plans := w.commentsWith(n, "<!-- planex:plan "); len(plans) != 1 {
		t.Errorf("%d plan comments after a redelivery", len(plans))
	}

	m := w.fake.AddIssue(wRepo, "maintainer", "Add four files again", "")
	ev = w.comment(m, "maintainer", "/planex add four files")
	w.fake.InjectFault("POST /repos/{owner}/{repo}/issues/{issue_number}/comments", 5, ghfake.ServerError(502))
	if r, err := w.handle(ev); err == nil {
		t.Fatalf("a plan whose comment never got out succeeded: %+v", r.Outputs)
	}
	if plans := w.commentsWith(m, "<!-- planex:plan "); len(plans) != 0 {
		t.Fatalf("%d plan comments", len(plans))
	}
	w.agent.takeCalls()
	if r, err := w.handle(ev); err != nil || r.Outputs.Status != StatusPlanned {
		t.Fatalf("redelivery: %v %+v", err, r.Outputs)
	}
	if plans := w.commentsWith(m, "<!-- planex:plan "); len(plans) != 1 {
		t.Errorf("%d plan comments after the redelivery", len(plans))
	}
	if again := w.agent.takeCalls(); len(again) != 0 {
		t.Errorf("the redelivery planned again: agent calls %q", again)
	}
}

// TestRerunDispatchDoesNotPlanAgain: a workflow_dispatch run with a
// requirement whose first attempt lost GitHub's answer to the issue it
// opened (the create is not repeated), re-run (same run id, attempt 2),
// finds that issue and its plan instead of opening and planning another.
// (Was internal/cli's TestActionRerunDispatchDoesNotPlanAgain.)
func TestRerunDispatchDoesNotPlanAgain(t *testing.T) {
	w := newParallelWorld(t)
	w.agent.setPlan(wTask{ID: "T1", Title: "one", Scope: "a/**"})
	ev := &event.Event{Name: event.WorkflowDispatch, Owner: wOwner, Repo: wName, DefaultBranch: "main",
		Sender: event.User{Login: "maintainer", Type: "User"}, Inputs: event.Inputs{Requirement: "Add a health check"}}
	attempt := func(a string) func(*Config) { return func(c *Config) { c.RunID, c.RunAttempt = "77", a } }
	w.fake.InjectFault("POST /repos/{owner}/{repo}/issues", 1, ghfake.LostResponse(502))
	first, err := w.handle(ev, attempt("1"))
	if err != nil || first.Outputs.Status != StatusPlanned {
		t.Fatalf("dispatch: %v %+v", err, first.Outputs)
	}
	again, err := w.handle(ev, attempt("2"))
	if err != nil || again.Outputs.PlanID != first.Outputs.PlanID || again.Outputs.SessionID != first.Outputs.SessionID {
		t.Fatalf("re-run: %v %+v, first %+v", err, again.Outputs, first.Outputs)
	}
	issues := 0
	for n := 1; ; n++ {
		is, ok := w.fake.Issue(wRepo, n)
		if !ok {
			break
		}
		if strings.HasPrefix(is.Title, "planex: ") {
			issues++
			if plans := w.commentsWith(n, "<!-- planex:plan "); len(plans) != 1 {
				t.Errorf("#%d has %d plan comments", n, len(plans))
			}
		}
	}
	if issues != 1 {
		t.Errorf("%d issues opened for one dispatch", issues)
	}
}
