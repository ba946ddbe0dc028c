package engine

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/planexhq/planex/internal/agent"
	"github.com/planexhq/planex/internal/plan"
	"github.com/planexhq/planex/internal/session"
)

// TestRedTeamAgentMovesTheRunBranch: the run reads its branch once, when
// it starts, and builds on the tip it holds. An agent that reaches the
// repository's refs during its step and moves the run branch to a commit
// of its own is not built on: T1's commit is a compare-and-swap from the
// tip the run read, so it fails and the branch stays where the agent put
// it, never silently overwritten or taken as the run's.
func TestRedTeamAgentMovesTheRunBranch(t *testing.T) {
	t.Parallel()
	repo := testRepo(t)
	log := &stepLog{}
	var sess *session.Session
	var planted string
	log.before = func(s agent.Step) {
		if s.ID != "T1" {
			return
		}
		git := func(args ...string) string {
			cmd := exec.Command("git", args...)
			cmd.Dir = repo.Root
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Errorf("git %v: %v\n%s", args, err, out)
			}
			return strings.TrimSpace(string(out))
		}
		planted = git("commit-tree", "-p", sess.Meta.Base, "-m", "agent's commit", sess.Meta.Base+"^{tree}")
		git("update-ref", "refs/heads/"+sess.Meta.Branch, planted)
	}
	e := newTestEngine(t, repo, log.agent(), true)
	var err error
	if sess, err = e.newSession(context.Background(), Request{Requirement: "two files", Imported: twoTasks()}); err != nil {
		t.Fatal(err)
	}
	out, _ := e.run(context.Background(), sess, modeStart)
	if planted == "" {
		t.Fatal("the agent's step never ran")
	}
	tip, err := repo.ResolveBranch(context.Background(), sess.Meta.Branch)
	if err != nil || tip != planted {
		t.Errorf("branch at %s (%v), want the agent's %s left as it was", tip, err, planted)
	}
	tasks, err := sess.ReadTasks()
	if err != nil {
		t.Fatal(err)
	}
	if tasks[0].Status == plan.StatusCompleted || tasks[0].Commit != "" || !strings.Contains(tasks[0].Error, "moved underneath") {
		t.Errorf("T1 = %s %q (%s), want not committed: the branch moved", tasks[0].Status, tasks[0].Commit, tasks[0].Error)
	}
	if out != nil && out.Counts.Completed != 0 {
		t.Errorf("completed = %d, want 0", out.Counts.Completed)
	}
}
