package action

import (
	"testing"
	"time"
)

// TestRedTeamApprovalBeforeSameIDRevision: a maintainer approves plan A;
// before that approval is handled, another maintainer's revise is, and
// the revised plan comes out with the same tasks, so the same id, posted
// again in a new comment with the revised exploration. The approval was
// written before the plan it would run was posted: it is refused, and
// nothing runs until someone approves the revised comment.
func TestRedTeamApprovalBeforeSameIDRevision(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.fake.AddUser("lead", "User")
	w.fake.SetPermission(wRepo, "lead", "write")
	w.agent.setPlan(wTask{ID: "T1", Title: "one", Scope: "a/**"})
	n, id := w.plannedOne("Add a file")
	approve := w.comment(n, "maintainer", "/planex approve "+id)
	w.clock.advance(2 * time.Second)
	if r, err := w.handle(w.comment(n, "lead", "/planex revise keep it as it is")); err != nil || r.Outputs.Status != StatusPlanned {
		t.Fatalf("revise: %v %+v", err, r.Outputs)
	}
	if got := w.planID(n); got != id {
		t.Skipf("the revised plan has another id (%s, was %s): the test shows nothing", got, id)
	}
	r, err := w.handle(approve)
	if r.Outputs.Status == StatusDone || w.agent.executed("T1") || len(w.fake.PullRequests(wRepo)) != 0 {
		t.Errorf("an approval written before the revised plan was posted ran it: %v %+v", err, r.Outputs)
	}
	w.clock.advance(2 * time.Second)
	if r, err := w.handle(w.comment(n, "maintainer", "/planex approve "+id)); err != nil || r.Outputs.Status != StatusDone {
		t.Errorf("approving the revised plan: %v %+v\n%s", err, r.Outputs, w.lastComment(n))
	}
}
