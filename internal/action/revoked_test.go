package action

import (
	"strings"
	"testing"
)

// TestRedTeamRevokedPermission: write access is read when it is used,
// never remembered from the plan. Someone who asked for a plan and lost
// write access before approving it cannot approve it; and a run whose
// approver lost write access after approving is not resumed by someone
// else's /planex retry: the approval no longer holds, and nothing more
// runs.
func TestRedTeamRevokedPermission(t *testing.T) {
	t.Parallel()
	t.Run("before the approval", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		w.agent.setPlan(wTask{ID: "T1", Title: "one", Scope: "a/**"})
		n := w.fake.AddIssue(wRepo, "maintainer", "Add a file", "")
		if r, err := w.handle(w.comment(n, "maintainer", "/planex add a file")); err != nil || r.Outputs.Status != StatusPlanned {
			t.Fatalf("plan: %v %+v", err, r.Outputs)
		}
		w.fake.SetPermission(wRepo, "maintainer", "read")
		r, err := w.handle(w.comment(n, "maintainer", "/planex approve "+w.planID(n)))
		if err != nil || r.Outputs.Status != StatusRefused {
			t.Errorf("approval by a former maintainer: %v, status %q", err, r.Outputs.Status)
		}
		if len(w.fake.PullRequests(wRepo)) != 0 || w.branchExists("planex/"+r.Outputs.SessionID) && r.Outputs.SessionID != "" {
			t.Error("the plan ran on the approval of someone without write access")
		}
	})
	t.Run("between the approval and a retry", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		w.fake.AddUser("lead", "User")
		w.fake.SetPermission(wRepo, "lead", "write")
		n, r := w.failedRun("Two files", "/planex two files", "not now")
		session := r.Outputs.SessionID
		w.agent.failTask("T2", "")
		w.fake.SetPermission(wRepo, "maintainer", "read")
		r, err := w.handle(w.comment(n, "lead", "/planex retry"))
		if r.Outputs.Status == StatusDone || len(w.branch("planex/"+session)) != 1 {
			t.Errorf("the retry ran on the approval of someone who lost write access: %v, status %q, branch %v", err, r.Outputs.Status, w.branch("planex/"+session))
		}
		if !strings.Contains(w.lastComment(n), "cannot approve plans") {
			t.Errorf("the thread is not told why:\n%s", w.lastComment(n))
		}
	})
}

// TestRedTeamRevokedAutoApprover: with the auto-approve setting on, a
// maintainer's bare /planex (or label) approves the plan: the setting
// runs it in their name. A run whose approver lost write access after
// approving is not resumed by someone else's /planex retry when the
// approval was a comment (TestRedTeamRevokedPermission), but an approval
// by the setting was not checked again at all: the retry, and each wave
// of a matrix plan, ran on the approval of someone who no longer had
// access. It is now checked as any other approver's.
func TestRedTeamRevokedAutoApprover(t *testing.T) {
	t.Parallel()
	w, n, session, auto := failedAutoPlanRevoked(t)
	r, err := w.handle(w.comment(n, "lead", "/planex retry"), auto)
	if r.Outputs.Status == StatusDone || len(w.branch("planex/"+session)) != 1 {
		t.Errorf("the retry ran on the auto-approval of someone who lost write access: %v, status %q, branch %v", err, r.Outputs.Status, w.branch("planex/"+session))
	}
	if !strings.Contains(w.lastComment(n), "cannot approve plans") {
		t.Errorf("the thread is not told why:\n%s", w.lastComment(n))
	}
	// Given back their access, the same retry runs.
	w.fake.SetPermission(wRepo, "maintainer", "write")
	if r, err := w.handle(w.comment(n, "lead", "/planex retry"), auto); err != nil || r.Outputs.Status != StatusDone {
		t.Errorf("retry after the access came back: %v %+v\n%s", err, r.Outputs, w.lastComment(n))
	}
}

// failedAutoPlanRevoked is the start of the revoked-approver attacks: a
// maintainer's plan the auto-approve setting ran fails at its second
// task, "lead" may still write, and the maintainer's access falls to
// read. It returns the world, the issue, the session and the setting.
func failedAutoPlanRevoked(t *testing.T) (w *world, n int, session string, auto func(*Config)) {
	t.Helper()
	w = newWorld(t)
	w.fake.AddUser("lead", "User")
	w.fake.SetPermission(wRepo, "lead", "write")
	auto = func(c *Config) { c.AutoApprove = true }
	w.agent.setPlan(wTask{ID: "T1", Title: "one", Scope: "a/**"}, wTask{ID: "T2", Title: "two", Scope: "b/**", Deps: []string{"T1"}})
	w.agent.failTask("T2", "not now")
	n = w.fake.AddIssue(wRepo, "maintainer", "Two files", "")
	r, err := w.handle(w.comment(n, "maintainer", "/planex two files"), auto)
	if err != nil || r.Outputs.Status != StatusFailed {
		t.Fatalf("the auto-approved run: %v %+v", err, r.Outputs)
	}
	session = r.Outputs.SessionID
	w.agent.failTask("T2", "")
	w.fake.SetPermission(wRepo, "maintainer", "read")
	return w, n, session, auto
}
