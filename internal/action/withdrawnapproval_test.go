package action

import (
	"strings"
	"testing"
)

// TestRedTeamWithdrawnApproval: a maintainer approved a plan that failed
// half-way, then deleted their approving comment (they no longer want it
// run). Another maintainer's /planex retry does not resume it on the
// approval that is gone, and says why; approving it again, in their own
// name, runs it. (Held.)
func TestRedTeamWithdrawnApproval(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.fake.AddUser("lead", "User")
	w.fake.SetPermission(wRepo, "lead", "write")
	n, r := w.failedRun("Two files", "/planex two files", "not now")
	session := r.Outputs.SessionID
	w.agent.failTask("T2", "")
	for _, c := range w.fake.Comments(wRepo, n) {
		if strings.HasPrefix(c.Body, "/planex approve ") {
			w.fake.DeleteComment(wRepo, c.ID)
		}
	}
	r, err := w.handle(w.comment(n, "lead", "/planex retry"))
	if err != nil || r.Outputs.Status != StatusRefused || len(w.branch("planex/"+session)) != 1 {
		t.Fatalf("retry on a deleted approval: %v %+v, branch %v", err, r.Outputs, w.branch("planex/"+session))
	}
	if !strings.Contains(w.lastComment(n), "approving comment is not on") {
		t.Errorf("the thread is not told why:\n%s", w.lastComment(n))
	}
	if r, err := w.handle(w.comment(n, "lead", "/planex approve "+w.planID(n))); err != nil || r.Outputs.Status == StatusRefused {
		t.Fatalf("approving it again: %v %+v\n%s", err, r.Outputs, w.lastComment(n))
	}
	if r, err := w.handle(w.comment(n, "lead", "/planex retry")); err != nil || r.Outputs.Status != StatusDone {
		t.Errorf("retry on the new approval: %v %+v\n%s", err, r.Outputs, w.lastComment(n))
	}
}
