package execute

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/planexhq/planex/internal/agent"
	"github.com/planexhq/planex/internal/gitrepo"
	"github.com/planexhq/planex/internal/plan"
)

func testRepo(t *testing.T) (*gitrepo.Repo, string) {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("RUNNER_TEMP", t.TempDir())
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"config", "user.name", "T"}, {"config", "user.email", "t@example.com"},
		{"commit", "-q", "--allow-empty", "-m", "initial"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	repo, err := gitrepo.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	head, err := repo.Head(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return repo, head
}

// writer is an agent that writes <id>.txt with the given content (its id
// when empty) and reports the step's folder.
func writer(content map[string]string, dirs *[]string, also func(dir string)) agent.Agent {
	return agent.Func(func(_ context.Context, s agent.Step) (agent.Result, error) {
		*dirs = append(*dirs, s.Dir)
		text := content[s.ID]
		if text == "" {
			text = s.ID
		}
		if err := os.WriteFile(filepath.Join(s.Dir, s.ID+".txt"), []byte(text), 0o644); err != nil {
			return agent.Result{}, err
		}
		if also != nil {
			also(s.Dir)
		}
		raw, _ := json.Marshal(map[string]any{"id": s.ID, "status": "completed", "findings": "ok", "tests_passed": true})
		return agent.Result{Raw: raw}, nil
	})
}

// TestRunnerKeepsWorktreesBetweenTasks: tasks run one after another share
// one worktree, each starting clean at its own base with only its own
// changes; a worktree that cannot be reset is replaced; Close removes it.
func TestRunnerKeepsWorktreesBetweenTasks(t *testing.T) {
	ctx := context.Background()
	repo, tip := testRepo(t)
	var dirs []string
	breakIt := false
	a := writer(nil, &dirs, func(dir string) {
		os.WriteFile(filepath.Join(dir, "junk.log"), []byte(dir+time.Now().String()), 0o644)
		os.WriteFile(filepath.Join(dir, "untracked.tmp"), []byte("x"), 0o644)
		if breakIt {
			// Beyond repair (a contained agent cannot reach the private
			// index; the test can): the next task gets a new worktree.
			os.Remove(dir + ".index")
		}
	})
	r := &Runner{Repo: repo, Agent: a}
	if err := repo.UpdateBranch(ctx, "run", tip, "", "start"); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"T1", "T2", "T3"} {
		breakIt = id == "T2"
		task := plan.Task{ID: id, Title: id, Scope: "**"}
		o := r.Run(ctx, Job{Task: task, Base: tip, Session: "s", Timeout: time.Minute})
		if o.Status != plan.StatusCompleted {
			t.Fatalf("%s: %s %s", id, o.Status, o.Error)
		}
		if got := strings.Join(o.Files(), " "); got != id+".txt junk.log untracked.tmp" && !(id != "T1" && got == id+".txt junk.log") {
			t.Errorf("%s changed %s, want only its own files", id, got)
		}
		sha, err := r.Commit(ctx, "run", tip, "s", task, o)
		if err != nil {
			t.Fatal(err)
		}
		tip = sha
	}
	if dirs[0] != dirs[1] || dirs[1] != dirs[2] {
		t.Errorf("worktrees = %v, want one kept for all tasks", dirs)
	}
	r.Close(ctx)
	if _, err := os.Stat(dirs[0]); !os.IsNotExist(err) {
		t.Errorf("the kept worktree outlived Close: %v", err)
	}
	if out, _ := repo.Git(ctx, "", "worktree", "list", "--porcelain"); strings.Count(out, "worktree ") != 1 {
		t.Errorf("worktrees left registered:\n%s", out)
	}
}

func TestRunnerRefusesSecretsInChanges(t *testing.T) {
	ctx := context.Background()
	repo, tip := testRepo(t)
	t.Setenv("PLANEX_TEST_TOKEN", "s3cr3t-value-123456")
	var dirs []string
	a := writer(map[string]string{"T1": "token s3cr3t-value-123456 here"}, &dirs, nil)
	r := &Runner{Repo: repo, Agent: a, Contain: agent.Containment{SecretEnv: []string{"PLANEX_TEST_TOKEN"}}}
	defer r.Close(ctx)
	cases := []struct {
		id, want string
		status   plan.Status
	}{
		{"T1", "the changes contain secret values, so nothing was committed: T1.txt (PLANEX_TEST_TOKEN)", plan.StatusFailed},
		{"T2", "", plan.StatusCompleted},
	}
	for _, c := range cases {
		o := r.Run(ctx, Job{Task: plan.Task{ID: c.id, Title: c.id, Scope: "**"}, Base: tip, Session: "s", Timeout: time.Minute})
		if o.Status != c.status || o.Error != c.want {
			t.Errorf("%s: %s %q, want %s %q", c.id, o.Status, o.Error, c.status, c.want)
		}
	}
}
