package action

import (
	"path/filepath"
	"testing"

	"github.com/planexhq/planex/internal/ghfake"
)

// TestRedTeamForgedSelfAutoApprover: under the auto-approve setting a
// maintainer's bare /planex ran a plan in their name, which failed; the
// maintainer then lost write access, so someone else's /planex retry is
// refused (TestRedTeamRevokedAutoApprover). Whoever can push rewrites the
// thread's state ref to name planex's own account as the approver: an
// approval by a setting in planex's name was taken for a CI fix of
// planex's own push, which no permission describes, and was not checked
// at all, so the retry ran in nobody's name. Only a CI fix's approval
// may name planex now.
func TestRedTeamForgedSelfAutoApprover(t *testing.T) {
	t.Parallel()
	w, n, session, auto := failedAutoPlanRevoked(t)
	forgeState(t, w, n, func(dir string) error {
		editJSON(t, filepath.Join(dir, recordFile), func(rec map[string]any) { rec["approved_by"] = ghfake.DefaultActor })
		return nil
	})
	r, err := w.handle(w.comment(n, "lead", "/planex retry"), auto)
	if r.Outputs.Status == StatusDone || len(w.branch("planex/"+session)) != 1 {
		t.Errorf("the retry ran on an auto-approval forged to name planex: %v, status %q, branch %v", err, r.Outputs.Status, w.branch("planex/"+session))
	}
}
