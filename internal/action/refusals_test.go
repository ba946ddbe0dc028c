package action

import (
	"slices"
	"strings"
	"testing"
)

// botComments are the bodies of the comments on thread n by a bot (the
// world's jobs comment as the Actions bot).
func (w *world) botComments(n int) []string {
	var out []string
	for _, c := range w.fake.Comments(wRepo, n) {
		if strings.HasSuffix(c.Author, "[bot]") {
			out = append(out, c.Body)
		}
	}
	return out
}

// TestDeletedPlanComment: an approval of a plan whose comment was deleted
// is told to re-plan (revise), not "internal error", and nothing runs.
// (Was internal/cli's TestActionDeletedPlanComment.)
func TestDeletedPlanComment(t *testing.T) {
	w := newParallelWorld(t)
	w.agent.setPlan(wTask{ID: "T1", Title: "one", Scope: "a/**"})
	n, id := w.plannedOne("Add a file")
	for _, c := range w.fake.Comments(wRepo, n) {
		if strings.HasPrefix(c.Body, "<!-- planex:plan ") {
			w.fake.DeleteComment(wRepo, c.ID)
		}
	}
	r, err := w.handle(w.comment(n, "maintainer", "/planex approve "+id))
	if reply := w.lastComment(n); err != nil || r.Outputs.Status != StatusRefused || !strings.Contains(reply, "was deleted") ||
		!strings.Contains(reply, "revise") || w.agent.executed("T1") {
		t.Fatalf("approve: %v %+v\n%s", err, r.Outputs, reply)
	}
	w.noInternalErrors(n)
}

// TestRedTeamReaderCommentFlood: a read-only user who keeps writing
// commands gets one refusal reply, then 👎 reactions only; someone else
// on the same thread is still answered. (Was internal/cli's
// TestRedTeamActionReaderCommentFlood.)
func TestRedTeamReaderCommentFlood(t *testing.T) {
	w := newParallelWorld(t)
	n := w.fake.AddIssue(wRepo, "reader", "Idea", "")
	for i, body := range []string{"/planex do it", "/planex do it now", "/planex help", "/planex aprove"} {
		ev := w.comment(n, "reader", body)
		r, err := w.handle(ev)
		if err != nil || r.Outputs.Status != StatusRefused {
			t.Errorf("comment %d: %v %+v", i+1, err, r.Outputs)
		}
		if rs := w.reactionsOn(ev.Comment.ID); !slices.Contains(rs, "-1") {
			t.Errorf("comment %d: reactions %v", i+1, rs)
		}
	}
	if bots := w.botComments(n); len(bots) != 1 || !strings.Contains(bots[0], "@reader") {
		t.Fatalf("planex replied %d times:\n%s", len(bots), strings.Join(bots, "\n---\n"))
	}
	w.fake.AddUser("other", "User")
	w.fake.SetPermission(wRepo, "other", "read")
	if _, err := w.handle(w.comment(n, "other", "/planex do it")); err != nil {
		t.Fatal(err)
	}
	if bots := w.botComments(n); len(bots) != 2 || !strings.Contains(bots[1], "@other") {
		t.Fatalf("another reader: %d replies", len(bots))
	}
	w.noInternalErrors(n)
}

// TestRedTeamApprovalElsewhere: an approval of a thread's plan id written
// on another issue, or by someone whose write access was removed since
// the plan was posted, runs nothing, and the plan stays planned. (Was
// internal/cli's TestRedTeamActionApprovalElsewhere.)
func TestRedTeamApprovalElsewhere(t *testing.T) {
	w := newParallelWorld(t)
	w.agent.setPlan(wTask{ID: "T1", Title: "one", Scope: "a/**"})
	n, id := w.plannedOne("Add a file")
	w.fake.AddUser("helper", "User")
	other := w.fake.AddIssue(wRepo, "helper", "Unrelated", "")
	if r, err := w.handle(w.comment(other, "maintainer", "/planex approve "+id)); err != nil || r.Outputs.Status != StatusRefused ||
		!strings.Contains(w.lastComment(other), "There is no plan to approve here") {
		t.Errorf("approval on another issue: %v %+v\n%s", err, r.Outputs, w.lastComment(other))
	}
	w.fake.AddUser("former", "User")
	w.fake.SetPermission(wRepo, "former", "write")
	ev := w.comment(n, "former", "/planex approve "+id)
	w.fake.SetPermission(wRepo, "former", "read")
	if r, err := w.handle(ev); err != nil || r.Outputs.Status != StatusRefused || !strings.Contains(w.lastComment(n), "@former") {
		t.Errorf("approval by a demoted user: %v %+v\n%s", err, r.Outputs, w.lastComment(n))
	}
	if w.agent.executed("T1") || !slices.Contains(w.labels(n), LabelPlanned) {
		t.Fatalf("something ran: labels %v", w.labels(n))
	}
	w.noInternalErrors(n)
}
