package action

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRedTeamDeadRunWithLapsedApproval: a plan's run died (runner lost,
// no finalize step) and, before anyone took it over, its approver lost
// write access. The plan stays "running"; a /planex retry is refused, as
// it must be (TestRedTeamRevokedAutoApprover), and tells the thread to
// approve the plan again. A maintainer's /planex approve was taken for a
// takeover that re-checked the old, lapsed approval and was refused the
// same way, so nobody could ever move the plan on: it said running for
// ever. Approving it now takes it over in the new approver's name, and
// only that: a non-writer's approval still runs nothing.
func TestRedTeamDeadRunWithLapsedApproval(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.fake.AddUser("lead", "User")
	w.fake.SetPermission(wRepo, "lead", "write")
	w.fake.AddUser("reader", "User")
	w.fake.SetPermission(wRepo, "reader", "read")
	n, r := w.failedRun("Two files", "/planex two files", "runner lost")
	session := r.Outputs.SessionID
	// The run died with the plan running: its record still says so.
	forgeState(t, w, n, func(dir string) error {
		p := filepath.Join(dir, recordFile)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		running := strings.Replace(string(b), `"state": "failed"`, `"state": "running"`, 1)
		if running == string(b) {
			t.Fatalf("the record says no failure:\n%s", b)
		}
		return os.WriteFile(p, []byte(running), 0o644)
	})
	w.agent.failTask("T2", "")
	w.fake.SetPermission(wRepo, "maintainer", "read")
	nextAttempt := func(c *Config) { c.RunAttempt = "2" }

	if r, err := w.handle(w.comment(n, "lead", "/planex retry"), nextAttempt); err != nil || r.Outputs.Status != StatusRefused {
		t.Fatalf("retry on a lapsed approval: %v %+v", err, r.Outputs)
	}
	if !strings.Contains(w.lastComment(n), "approve it") {
		t.Errorf("the thread is not told how to go on:\n%s", w.lastComment(n))
	}
	if r, err := w.handle(w.comment(n, "reader", "/planex approve "+w.planID(n)), nextAttempt); err != nil || r.Outputs.Status == StatusDone || len(w.branch("planex/"+session)) != 1 {
		t.Fatalf("a reader's approval took the plan over: %v %+v", err, r.Outputs)
	}
	// The approval takes the dead run over in the maintainer's name: the
	// plan is no longer running; a task that failed before stays failed
	// until a retry, which the new approval carries.
	r, err := w.handle(w.comment(n, "lead", "/planex approve "+w.planID(n)), nextAttempt)
	if err != nil || r.Outputs.Status == StatusRefused || r.Outputs.Status == StatusRunning {
		t.Fatalf("a maintainer's approval of the dead run: %v %+v\n%s", err, r.Outputs, w.lastComment(n))
	}
	if r, err := w.handle(w.comment(n, "lead", "/planex retry"), nextAttempt); err != nil || r.Outputs.Status != StatusDone {
		t.Fatalf("retry after the new approval: %v %+v\n%s", err, r.Outputs, w.lastComment(n))
	}
	if got := len(w.branch("planex/" + session)); got != 2 {
		t.Errorf("branch has %d commits after the takeover, want 2", got)
	}
}
