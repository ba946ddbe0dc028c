package action

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/planexhq/planex/internal/ghfake"
)

// TestRedTeamForgedSelfApproverOnRealCIFix: with ci-fix auto, a failed CI
// run a maintainer's push started was fixed by a plan run in that
// maintainer's name, whose comment planex posted with the failure it
// read; the run failed and the maintainer then lost write access, so a
// retry must be refused. Whoever can push rewrites the thread's state ref
// to name planex's own account as the approver: a real CI fix's comment
// shows the failure, so the approval was taken for one of planex's own
// push and not checked, and someone else's /planex retry ran it in
// nobody's name. The plan comment now names whom the plan runs for.
func TestRedTeamForgedSelfApproverOnRealCIFix(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.fake.AddUser("lead", "User")
	w.fake.SetPermission(wRepo, "lead", "write")
	pr := w.planexPR()
	w.agent.setPlan(wTask{ID: "T1", Title: "fix the limiter", Scope: "fix/**"})
	w.agent.failTask("T1", "not now")
	auto := func(c *Config) { c.CIFix, c.CIFixAttempts = CIFixAuto, 3 }
	r, err := w.handle(w.failCI(611, pr, "go test ./..."), auto)
	if err != nil || r.Outputs.Status != StatusFailed {
		t.Fatalf("the CI fix run: %v %+v", err, r.Outputs)
	}
	w.agent.failTask("T1", "")
	before := len(w.branch(pr.Head))
	w.fake.SetPermission(wRepo, "maintainer", "read")
	forgeState(t, w, pr.Number, func(dir string) error {
		editJSON(t, filepath.Join(dir, recordFile), func(rec map[string]any) { rec["approved_by"] = ghfake.DefaultActor })
		return nil
	})
	r, err = w.handle(w.comment(pr.Number, "lead", "/planex retry"), auto)
	if r.Outputs.Status == StatusDone || len(w.branch(pr.Head)) != before {
		t.Errorf("the retry ran a real CI fix whose forged state names planex as its approver: %v, status %q, %d commits (%d before)",
			err, r.Outputs.Status, len(w.branch(pr.Head)), before)
	}
	cs := w.fake.Comments(wRepo, pr.Number)
	if last := cs[len(cs)-1].Body; !strings.Contains(last, "for @maintainer, not for @"+ghfake.DefaultActor) {
		t.Errorf("the refusal does not say whom the plan runs for: %q", last)
	}
}
