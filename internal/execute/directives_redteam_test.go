package execute

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/planexhq/planex/internal/plan"
)

// TestRedTeamDirectivesRunOnTheCommittedTree: the execution directives
// vouch for the task's commit (the report's ✅, the review's "planex ran
// the directives and they passed"), so they must test what is committed.
// The repository's test runner loads a local tests/conftest.sh when there
// is one (as pytest loads conftest.py). An agent under src/** leaves
// src/app.txt broken and plants a conftest.sh that ends the tests with
// success, kept out of the snapshot (so out of the scope check and out
// of the commit) by a .gitignore that ignores itself too, or by the
// repository's own ignore rules (build/). On the agent's worktree the
// directives passed, and the broken commit was recorded as tested.
func TestRedTeamDirectivesRunOnTheCommittedTree(t *testing.T) {
	t.Parallel()
	const runner = "if [ -f tests/conftest.sh ]; then . tests/conftest.sh; fi\n" +
		"if [ -f build/conftest.sh ]; then . build/conftest.sh; fi\n" +
		"test \"$(cat src/app.txt)\" = fixed\n"
	base := func(dir string) error {
		for name, text := range map[string]string{"src/app.txt": "broken\n", "tests/run.sh": runner, ".gitignore": "build/\n"} {
			if err := writeFile(name, text)(dir); err != nil {
				return err
			}
		}
		return nil
	}
	cases := map[string]struct {
		files map[string]string
		want  plan.Status
	}{
		"self-ignoring .gitignore": {files: map[string]string{
			"src/app.txt": "still broken\n", "tests/conftest.sh": "exit 0\n",
			"tests/.gitignore": ".gitignore\nconftest.sh\n",
		}, want: plan.StatusFailed},
		"the repository's ignored folder": {files: map[string]string{
			"src/app.txt": "still broken\n", "build/conftest.sh": "exit 0\n",
		}, want: plan.StatusFailed},
		"honest fix": {files: map[string]string{"src/app.txt": "fixed\n"}, want: plan.StatusCompleted},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			repo, tip := repoWith(t, base)
			r := &Runner{Repo: repo, Agent: step{files: c.files}.agent()}
			defer r.Close(ctx)
			task := plan.Task{ID: "T1", Title: "fix the app", Scope: "src/**"}
			o := r.Run(ctx, Job{Task: task, Base: tip, Session: "s", Directives: "sh tests/run.sh"})
			if o.Status != c.want {
				t.Fatalf("%s (tests %q, error %q), want %s: the directives did not test the tree planex commits", o.Status, o.TestsPassed, o.Error, c.want)
			}
			if o.Status != plan.StatusCompleted {
				if o.TestsPassed != plan.TestsFail || !strings.Contains(o.Error, "execution directives failed") {
					t.Errorf("tests %q, error %q; want the directives' failure", o.TestsPassed, o.Error)
				}
				return
			}
			if got := strings.Join(o.Files(), " "); got != "src/app.txt" {
				t.Errorf("changed %s, want src/app.txt", got)
			}
			// The worktree the directives left is kept and serves the next
			// task, reset to that task's base.
			sha, err := r.Commit(ctx, "main", tip, "s", task, o)
			if err != nil {
				t.Fatal(err)
			}
			next := step{files: map[string]string{"src/next.txt": "n"}}.agent()
			r.Agent = next
			o2 := r.Run(ctx, Job{Task: plan.Task{ID: "T2", Title: "t", Scope: "src/**"}, Base: sha, Session: "s", Directives: "sh tests/run.sh"})
			if o2.Status != plan.StatusCompleted || strings.Join(o2.Files(), " ") != "src/next.txt" {
				t.Errorf("next task on the kept worktree: %s %q, files %v", o2.Status, o2.Error, o2.Files())
			}
			if _, err := os.Stat(filepath.Join(repo.WorktreeDir("s", "T1"), "src", "next.txt")); err != nil {
				t.Errorf("the kept worktree was not reused: %v", err)
			}
		})
	}
}

// TestDirectivesCheckoutFails: a worktree that cannot be moved to the
// task's tree fails the task before any directive runs, saying so.
func TestDirectivesCheckoutFails(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo, tip := testRepo(t)
	r := &Runner{Repo: failing{repo, "CommitTree"}, Agent: step{files: map[string]string{"a.txt": "a"}}.agent()}
	defer r.Close(ctx)
	o := r.Run(ctx, Job{Task: plan.Task{ID: "T1", Title: "t", Scope: "**"}, Base: tip, Session: "s", Directives: "touch ran"})
	const want = "preparing the worktree for the execution directives: injected failure"
	if o.Status != plan.StatusFailed || o.Error != want || o.Changes != nil {
		t.Errorf("%s %q, want failed %q", o.Status, o.Error, want)
	}
	if _, err := os.Stat(filepath.Join(repo.WorktreeDir("s", "T1"), "ran")); err == nil {
		t.Error("the directives ran on a worktree planex could not prepare")
	}
}
