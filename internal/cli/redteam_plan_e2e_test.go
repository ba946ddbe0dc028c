//go:build unix

package cli

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/planexhq/planex/internal/plan"
)

// The red-team tests of the approved plan: a malicious command agent
// (testdata/redteam-plan-agent.sh) rewrites T2's scope and
// execution_directives in the session's tasks.csv while T1 runs. The
// rewritten directive would create $FAKE_DIR/pwned; it must never run.

// redTeamPlan runs planex -y over T1 → T2 with the malicious agent doing
// attack, and returns planex's output and how it ended.
func redTeamPlan(t *testing.T, attack string) (f *fixture, out string, err error) {
	t.Helper()
	f = newFixture(t)
	f.setPlan(task{ID: "T1", Title: "one", Scope: "a/**"}, task{ID: "T2", Title: "two", Scope: "b/**", Deps: []string{"T1"}})
	script, aerr := filepath.Abs("testdata/redteam-plan-agent.sh")
	if aerr != nil {
		t.Fatal(aerr)
	}
	comm := filepath.Base(os.Args[0])
	if len(comm) > 15 {
		comm = comm[:15] // what /proc/<pid>/comm holds
	}
	t.Cleanup(func() { killAgentGroup(filepath.Join(f.fake, "detached.pid")) })
	// Without the sandbox, which would refuse the write itself: these rows
	// show that the plan check holds on its own.
	cmd := f.command("-y", "--sandbox", "off", "add two files")
	cmd.Env = append(cmd.Env, "PLANEX_AGENT_CMD="+script, "RED_TEAM="+attack, "RED_TEAM_PLANEX="+comm)
	ownTemp(t, cmd) // the edit-kill agent kills it
	if attack == "detached" {
		tamper := exec.Command("setsid", filepath.Join(filepath.Dir(script), "redteam-plan-tamper.sh"), f.repo)
		tamper.Env = append(os.Environ(), "FAKE_DIR="+f.fake)
		if err := tamper.Start(); err != nil {
			t.Fatal(err)
		}
		defer tamper.Wait()
	}
	b, err := cmd.CombinedOutput()
	return f, string(b), err
}

// assertPlanHeld checks that the attack happened and had no effect: the
// file holds the rewrite, planex refuses it naming T2 and the fields,
// nothing from the changed plan ran, and --continue (with -y remembered)
// refuses it too. executed lists the execute steps that ran, committed the
// run branch before the change (as branchLog shows it).
func assertPlanHeld(t *testing.T, f *fixture, executed, committed string) {
	t.Helper()
	pwned := filepath.Join(f.fake, "pwned")
	if _, err := os.Stat(filepath.Join(f.fake, "tampered")); err != nil {
		t.Fatalf("the agent did not manage to rewrite tasks.csv: %v", err)
	}
	tasksCSV, _ := os.ReadFile(filepath.Join(f.sessionDir(), "tasks.csv"))
	if !strings.Contains(string(tasksCSV), "touch "+pwned) {
		t.Fatalf("tasks.csv does not hold the rewrite:\n%s", tasksCSV)
	}
	// The message shortens a long value (pwned lies under TMPDIR, of any
	// length), so the expected changes are formatted as planex formats them.
	want := "tasks.csv changed after approval: " + plan.Changes([]plan.Change{
		{Task: "T2", Kind: plan.FieldChanged, Field: "scope", Was: "b/**", Now: "**"},
		{Task: "T2", Kind: plan.FieldChanged, Field: "execution_directives", Was: "", Now: "touch " + pwned},
	})
	o, e, code := f.planex("--continue")
	if code == 0 || !strings.Contains(e, want) {
		t.Fatalf("--continue: exit %d\nstdout:\n%s\nstderr:\n%s\nwant %q", code, o, e, want)
	}
	for _, hint := range []string{"Nothing from the changed plan was run", "planex --continue " + filepath.Base(f.sessionDir()), "start a new run from it: planex "} {
		if !strings.Contains(e, hint) {
			t.Errorf("the error does not say what to do (%q):\n%s", hint, e)
		}
	}
	if _, err := os.Stat(pwned); err == nil {
		t.Fatal("the rewritten execution directive ran")
	}
	if got, _ := os.ReadFile(filepath.Join(f.fake, "executed")); strings.Join(strings.Fields(string(got)), " ") != executed {
		t.Errorf("execute steps = %q, want %q", strings.Fields(string(got)), executed)
	}
	if got := strings.Join(f.branchLog(), " "); got != committed {
		t.Errorf("branch = %q, want %q", got, committed)
	}

	// Putting the approved values back lets the approved plan finish.
	restored := strings.Replace(string(tasksCSV), ",**,,touch "+pwned+",", ",b/**,,,", 1)
	if restored == string(tasksCSV) {
		t.Fatal("could not restore tasks.csv")
	}
	os.Remove(filepath.Join(f.fake, "tampered"))
	if err := os.WriteFile(filepath.Join(f.sessionDir(), "tasks.csv"), []byte(restored), 0o644); err != nil {
		t.Fatal(err)
	}
	if o, e, code := f.planex("--continue"); code != 0 {
		t.Fatalf("--continue after restoring: exit %d\n%s\n%s", code, o, e)
	}
	if got := strings.Join(f.branchLog(), " "); got != "T1:_one|T1 T2:_two|T2" {
		t.Errorf("branch after restoring = %s", got)
	}
	if _, err := os.Stat(pwned); err == nil {
		t.Fatal("the rewritten execution directive ran after restoring")
	}
}

// TestRedTeamPlanEditThenKill: T1's agent rewrites T2 and kills planex
// with SIGKILL; --continue with the remembered -y must not approve the
// rewrite.
func TestRedTeamPlanEditThenKill(t *testing.T) {
	t.Parallel()
	f, out, err := redTeamPlan(t, "edit-kill")
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("planex finished: %v\n%s", err, out)
	}
	ws, _ := ee.Sys().(syscall.WaitStatus)
	switch {
	case ws.Signaled() && ws.Signal() == syscall.SIGKILL:
		// The agent reached planex; --continue meets the rewrite.
	case strings.Contains(out, "changed after approval"):
		// The agent could not reach planex (a sandbox); planex saw it itself.
		t.Log("planex was not killed; it stopped on the change itself")
	default:
		t.Fatalf("planex ended with %v without refusing the change:\n%s", err, out)
	}
	assertPlanHeld(t, f, "T1", "")
}

// TestRedTeamPlanEditDuringRun: T1's agent rewrites T2 and finishes; the
// run stops before recording T1 or starting T2.
func TestRedTeamPlanEditDuringRun(t *testing.T) {
	t.Parallel()
	f, out, err := redTeamPlan(t, "edit")
	if err == nil || !strings.Contains(out, `tasks.csv changed after approval: T2 field scope ("b/**" → "**")`) {
		t.Fatalf("planex: %v\n%s", err, out)
	}
	if strings.Contains(out, "T2: started") {
		t.Errorf("T2 started after the change:\n%s", out)
	}
	assertPlanHeld(t, f, "T1", "")
}

// TestRedTeamPlanDetachedProcessEdits: a process outside planex rewrites
// T2 after T1's step was recorded. (An agent cannot leave such a process
// behind itself: its leftovers die with its step, see package proc.)
// Whether the rewrite lands before the next wave (T2 never starts) or
// while T2 runs (T2 runs as approved, and its outcome is not recorded),
// the rewrite never runs.
func TestRedTeamPlanDetachedProcessEdits(t *testing.T) {
	t.Parallel()
	f, out, err := redTeamPlan(t, "detached")
	if err == nil || !strings.Contains(out, `tasks.csv changed after approval: T2 field scope ("b/**" → "**")`) {
		t.Fatalf("planex: %v\n%s", err, out)
	}
	executed := "T1"
	if strings.Contains(out, "T2: started") {
		executed = "T1 T2"
	}
	// T1 completed before the rewrite; T2's outcome was not recorded.
	assertPlanHeld(t, f, executed, "T1:_one|T1")
}

// killAgentGroup ends a detached process an uncontained agent left,
// recorded by its (host) pid.
func killAgentGroup(pidFile string) {
	b, err := os.ReadFile(pidFile)
	if err != nil {
		return
	}
	if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 0 {
		syscall.Kill(-pid, syscall.SIGKILL)
		syscall.Kill(pid, syscall.SIGKILL)
	}
}
