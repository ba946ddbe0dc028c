package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func (f *fixture) agentCalls() string {
	b, _ := os.ReadFile(filepath.Join(f.fake, "agent-calls"))
	return string(b)
}

func (f *fixture) planHash() string {
	b, err := os.ReadFile(filepath.Join(f.sessionDir(), "session.json"))
	if err != nil {
		f.t.Fatal(err)
	}
	var m struct {
		PlanHash string `json:"plan_hash"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		f.t.Fatal(err)
	}
	return m.PlanHash
}

// A failed task is retried with `planex retry`, without editing
// tasks.csv: the approved plan (its hash) holds, completed tasks keep
// their commits. `planex --continue` on a finished session calls no agent
// and says the session is finished.
func TestRetryFailedTasksAndContinueFinished(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.setPlan(diamond()...)
	f.write(f.fake, "T2.fail", "could not do it")
	out, errOut, code := f.planex("-y", "--review", "skip", "add four files")
	if code != exitFailed {
		t.Fatalf("exit %d, want 1\n%s\n%s", code, out, errOut)
	}
	id := filepath.Base(f.sessionDir())
	if !strings.Contains(errOut, "planex retry "+id) {
		t.Errorf("the failure does not say how to retry: %s", errOut)
	}
	hash := f.planHash()
	if hash == "" {
		t.Fatal("no plan hash recorded")
	}

	calls := f.agentCalls()
	out, errOut, code = f.planex("--continue")
	if code != exitFailed || !strings.Contains(out, "session "+id+" is finished") {
		t.Errorf("--continue on a finished session with a failure: exit %d\n%s\n%s", code, out, errOut)
	}
	if got := f.agentCalls(); got != calls {
		t.Errorf("--continue on a finished session called the agent:\n%s", strings.TrimPrefix(got, calls))
	}

	if err := os.Remove(filepath.Join(f.fake, "T2.fail")); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = f.planex("retry", "--review", "skip")
	if code != exitOK {
		t.Fatalf("planex retry: exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "retrying 2 tasks") {
		t.Errorf("retry output: %s", out)
	}
	if got := strings.Join(f.branchLog(), " "); got != "T1:_base|T1 T3:_right|T3 T2:_left|T2 T4:_join|T4" {
		t.Errorf("branch = %s", got)
	}
	if got := f.planHash(); got != hash {
		t.Errorf("the plan hash changed from %s to %s", hash, got)
	}
	if strings.Contains(f.agentCalls(), "analyze") && strings.Count(f.agentCalls(), "plan ") > 1 {
		t.Errorf("retry planned again:\n%s", f.agentCalls())
	}

	calls = f.agentCalls()
	out, errOut, code = f.planex("--continue", id)
	if code != exitOK || !strings.Contains(out, "session "+id+" is finished") {
		t.Errorf("--continue on a finished session: exit %d\n%s\n%s", code, out, errOut)
	}
	if got := f.agentCalls(); got != calls {
		t.Errorf("--continue on a finished session called the agent:\n%s", strings.TrimPrefix(got, calls))
	}
	out, _, code = f.planex("status", id)
	if code != exitOK || !strings.Contains(out, "So far: ") {
		t.Errorf("status does not say what the session spent: exit %d\n%s", code, out)
	}
	out, _, code = f.planex("retry", id)
	if code != exitOK || !strings.Contains(out, "nothing to do") {
		t.Errorf("retry with nothing failed: exit %d\n%s", code, out)
	}
}
