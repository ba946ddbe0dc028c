package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestSecondContinueIsRefusedWhileRunning: while one planex runs a
// session, a second `planex --continue` exits at once naming the holder;
// once the holder is killed, its lock is taken over.
func TestSecondContinueIsRefusedWhileRunning(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.setPlan(diamond()...)
	f.write(f.fake, "T3.block", "")
	cmd := f.command("-y", "add four files")
	ownTemp(t, cmd)
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitForFile(t, filepath.Join(f.fake, "T3.pid"), cmd, out)
	host, _ := os.Hostname()
	_, errOut, code := f.planex("--continue")
	want := fmt.Sprintf("is being run by another planex (pid %d on %s", cmd.Process.Pid, host)
	if code == 0 || !strings.Contains(errOut, want) {
		cmd.Process.Kill()
		t.Fatalf("second --continue: exit %d, stderr %q; want it refused with %q", code, errOut, want)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	agentsGone(t, f.fake)
	os.Remove(filepath.Join(f.fake, "T3.block"))
	o2, e2, code := f.planex("--continue", "--review", "skip")
	if code != 0 {
		t.Fatalf("continue after the kill: %d\n%s\n%s", code, o2, e2)
	}
	if !strings.Contains(o2, "was left locked by planex pid "+strconv.Itoa(cmd.Process.Pid)) {
		t.Errorf("the takeover of the dead holder's lock is not reported:\n%s", o2)
	}
	if got := strings.Join(f.branchLog(), " "); got != "T1:_base|T1 T2:_left|T2 T3:_right|T3 T4:_join|T4" {
		t.Errorf("branch = %s", got)
	}
	if _, err := os.Stat(filepath.Join(f.sessionDir(), ".lock")); !os.IsNotExist(err) {
		t.Errorf("the lock outlived the run: %v", err)
	}
}

// TestWideWavesDoNotRace runs a four-task wave with -c 4 in one
// repository, twice; task worktrees are created side by side every time.
// The race itself (git worktree add failing on another worktree's
// commondir) is pressed where it lives: gitrepo's
// TestConcurrentWorktreesDoNotRace adds 72 worktrees, six at a time, through
// two Repo values; here the engine's wide wave goes through it end to end.
func TestWideWavesDoNotRace(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.setPlan(
		task{ID: "T1", Title: "a", Scope: "a/**"}, task{ID: "T2", Title: "b", Scope: "b/**"},
		task{ID: "T3", Title: "c", Scope: "c/**"}, task{ID: "T4", Title: "d", Scope: "d/**"},
	)
	const runs = 2
	for i := 0; i < runs; i++ {
		out, errOut, code := f.planex("-y", "-c", "4", "--review", "skip", fmt.Sprintf("wide wave %d", i))
		if code != 0 || strings.Contains(out+errOut, "commondir") || !strings.Contains(out, "wave 1: T1, T2, T3, T4") {
			t.Fatalf("run %d: exit %d\n%s\n%s", i, code, out, errOut)
		}
	}
	branches := strings.Fields(f.git("for-each-ref", "--format=%(refname:short)", "refs/heads/planex/"))
	if len(branches) != runs {
		t.Fatalf("branches: %v", branches)
	}
	for _, b := range branches {
		if n := strings.Count(f.git("log", "--format=%s", f.base+".."+b), "\n"); n != 4 {
			t.Errorf("%s has %d commits", b, n)
		}
	}
}

// TestAgentsDieWithPlanexWithoutSandbox: with --sandbox off, an agent
// and the child it left in the background die with planex, whether
// planex is stopped (SIGTERM) or killed outright (SIGKILL): the agent
// runs under planex's reaper.
func TestAgentsDieWithPlanexWithoutSandbox(t *testing.T) {
	t.Parallel()
	signals := []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL}
	atOnce(t, len(signals), func(i int) string { return signals[i].String() }, func(t *testing.T, i int) {
		sig := signals[i]
		f := newFixture(t)
		f.setPlan(diamond()...)
		f.write(f.fake, "T3.block", "")
		// An agent that leaves a child in the background, out of its
		// process group.
		agent := filepath.Join(f.fake, "agent-with-child.sh")
		f.write(f.fake, "agent-with-child.sh", "#!/bin/sh\n(setsid sleep 300 >/dev/null 2>&1 &)\nexec "+f.agent+"\n")
		os.Chmod(agent, 0o755)
		cmd := f.command("-y", "--sandbox", "off", "add four files")
		cmd.Env = append(cmd.Env, "PLANEX_AGENT_CMD="+agent)
		tmp := ownTemp(t, cmd)
		out := &syncBuffer{}
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		waitForFile(t, filepath.Join(f.fake, "T3.pid"), cmd, out)
		cmd.Process.Signal(sig)
		err := cmd.Wait()
		agentsGone(t, f.fake)
		if sig == syscall.SIGTERM && !strings.Contains(out.String(), "interrupted; resume with planex --continue") {
			t.Errorf("SIGTERM: %v\n%s", err, out.String())
		}
		if sig == syscall.SIGTERM {
			// Stopped, planex removes the folders of the steps it
			// stopped; only its worktree folder stays, for --continue.
			entries, _ := os.ReadDir(tmp)
			for _, e := range entries {
				if !strings.HasPrefix(e.Name(), "planex-") || strings.Count(e.Name(), "-") > 1 {
					t.Errorf("SIGTERM left %s in planex's temporary folder", e.Name())
				}
			}
		}
		os.Remove(filepath.Join(f.fake, "T3.block"))
		if o, e, code := f.planex("--continue", "--sandbox", "off"); code != 0 {
			tc, _ := os.ReadFile(filepath.Join(f.sessionDir(), "tasks.csv"))
			t.Fatalf("continue: %d\n%s\n%s\nfirst run:\n%s\ntasks.csv:\n%s", code, o, e, out.String(), tc)
		}
		if n := len(f.branchLog()); n != 4 {
			t.Errorf("%d commits after the continue", n)
		}
	})
}

// TestWorkflowScopesAreFlagged: the CLI says before the tasks gate which
// tasks can change workflow files.
func TestWorkflowScopesAreFlagged(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.setPlan(task{ID: "T1", Title: "docs", Scope: "a/**"}, task{ID: "T2", Title: "ci", Scope: ".github/workflows/**"})
	out, errOut, code := f.planex("-y", "--review", "skip", "touch ci")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "warning: T2 can change files in .github/workflows/: pushing planex/") || !strings.Contains(out, "workflows permission") {
		t.Errorf("no warning:\n%s", out)
	}
	if strings.Contains(out, "T1 can change") || strings.Contains(out, "T1, T2 can change") {
		t.Errorf("T1 was flagged:\n%s", out)
	}
}
