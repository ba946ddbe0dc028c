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
	"github.com/planexhq/planex/internal/plan"
)

// TestRedTeamLateWriterChangesNoCommit: an agent run without the sandbox
// (where nothing ends its processes with the step) leaves a process that
// waits until planex has checked its changes and then rewrites an
// in-scope file with a held value's stand-in and adds a file outside the
// scope, hoping the commit reads the worktree again. The commit is the
// checked snapshot's tree: neither late write is in it.
func TestRedTeamLateWriterChangesNoCommit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo, tip := testRepo(t)
	var late *exec.Cmd
	// The writer waits for planex's check to end (the test's signal), so
	// it lands between the check and the commit whatever the machine's load.
	signal := filepath.Join(t.TempDir(), "checked")
	a := agent.Func(func(_ context.Context, s agent.Step) (agent.Result, error) {
		if err := writeFile("src/a.txt", "checked\n")(s.Dir); err != nil {
			return agent.Result{}, err
		}
		late = exec.Command("sh", "-c", "while [ ! -e \"$1\" ]; do sleep 0.05; done; echo late > src/a.txt; echo late > outside.txt; touch done", "sh", signal)
		late.Dir = s.Dir
		if err := late.Start(); err != nil {
			return agent.Result{}, err
		}
		raw, _ := json.Marshal(map[string]any{"id": s.ID, "status": "completed", "findings": "ok", "tests_passed": true})
		return agent.Result{Raw: raw}, nil
	})
	r := &Runner{Repo: repo, Agent: a}
	defer r.Close(ctx)
	if err := repo.UpdateBranch(ctx, "run", tip, "", "start"); err != nil {
		t.Fatal(err)
	}
	task := plan.Task{ID: "T1", Title: "t", Scope: "src/**"}
	o := r.Run(ctx, Job{Task: task, Base: tip, Session: "s", Timeout: time.Minute})
	if o.Status != plan.StatusCompleted {
		t.Fatalf("%s %q", o.Status, o.Error)
	}
	if err := os.WriteFile(signal, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := late.Wait(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(repo.WorktreeDir("s", "T1"), "done")); err != nil {
		t.Fatalf("the late writer did not run: %v", err)
	}
	sha, err := r.Commit(ctx, "run", tip, "s", task, o)
	if err != nil {
		t.Fatal(err)
	}
	files, err := repo.Git(ctx, "", "ls-tree", "-r", "--name-only", sha)
	if err != nil {
		t.Fatal(err)
	}
	content, err := repo.Git(ctx, "", "cat-file", "blob", sha+":src/a.txt")
	if err != nil || content != "checked\n" || strings.TrimSpace(files) != "src/a.txt" {
		t.Errorf("the commit holds %q with src/a.txt %q (%v); want only the checked content", files, content, err)
	}
}

// TestRedTeamResultForAnotherTask: an agent's result names another
// task's id. The outcome stays its own task's: planex ran T1's step, and
// what it found in T1's worktree is T1's.
func TestRedTeamResultForAnotherTask(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo, tip := testRepo(t)
	res := map[string]any{"id": "T2", "status": "completed", "findings": "T2 is done", "tests_passed": true}
	r := &Runner{Repo: repo, Agent: step{files: map[string]string{"a.txt": "a"}, result: res}.agent()}
	defer r.Close(ctx)
	o := r.Run(ctx, Job{Task: plan.Task{ID: "T1", Title: "t", Scope: "**"}, Base: tip, Session: "s"})
	if o.ID != "T1" || o.Status != plan.StatusCompleted || strings.Join(o.Files(), " ") != "a.txt" {
		t.Errorf("outcome %s %s %v, want T1's own", o.ID, o.Status, o.Files())
	}
}

// TestRedTeamNamesThatOnlyLookInScope: the scope is matched on the bytes
// of git's names, as git commits them. A name that normalises to an
// in-scope one (NFD "café" for an NFC scope), differs only in case, or is
// no UTF-8 at all, is outside a scope that does not match its bytes; an
// in-scope name that is no UTF-8 is committed as it is.
func TestRedTeamNamesThatOnlyLookInScope(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		name, want string
	}{
		"NFD for an NFC scope":       {"cafe\u0301/x.txt", "wrote outside its scope"},
		"case only":                  {"CAF\u00c9/x.txt", "wrote outside its scope"},
		"invalid UTF-8 folder":       {"caf\xe9/x.txt", "wrote outside its scope"},
		"invalid UTF-8 in the scope": {"caf\u00e9/\xff\xfe.txt", ""},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			repo, tip := testRepo(t)
			r := &Runner{Repo: repo, Agent: step{files: map[string]string{c.name: "x"}}.agent()}
			defer r.Close(ctx)
			o := r.Run(ctx, Job{Task: plan.Task{ID: "T1", Title: "t", Scope: "caf\u00e9/**"}, Base: tip, Session: "s"})
			if c.want != "" {
				if o.Status != plan.StatusFailed || !strings.Contains(o.Error, c.want) {
					t.Errorf("%s %q, want refused: %s", o.Status, o.Error, c.want)
				}
				return
			}
			if o.Status != plan.StatusCompleted || len(o.Files()) != 1 || o.Files()[0] != c.name {
				t.Errorf("%s %q %q, want %q committed", o.Status, o.Error, o.Files(), c.name)
			}
		})
	}
}
