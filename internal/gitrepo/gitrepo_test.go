package gitrepo

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/planexhq/planex/internal/gitrepo/gittest"
)

// newRepo makes a repository with one commit (a copy of templateRepo)
// and returns it opened.
func newRepo(t *testing.T) *Repo {
	t.Helper()
	dir := t.TempDir()
	if err := gittest.CopyTree(templateRepo, dir); err != nil {
		t.Fatal(err)
	}
	// The copies' times and inodes are not those the template's index
	// recorded: refreshing it spares every later git a look at contents.
	mustGit(t, dir, "update-index", "-q", "--refresh")
	r, err := Open(context.Background(), filepath.Join(dir, "src"))
	if err != nil {
		t.Fatal(err)
	}
	r.TempDir = t.TempDir()
	return r
}

func mustGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func TestWorktreeCommitAndHistory(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRepo(t)
	head, err := r.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.CurrentBranch(ctx); got != "main" {
		t.Fatalf("CurrentBranch = %q", got)
	}
	// The user has uncommitted work; nothing below may touch it.
	os.WriteFile(filepath.Join(r.Root, "README.md"), []byte("user edit\n"), 0o644)

	wt := r.WorktreeDir("s1", "T1")
	if err := r.AddWorktree(ctx, wt, head); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(wt, "src", "new.go"), []byte("package src\n"), 0o644)
	os.Remove(filepath.Join(wt, "src", "old.txt"))
	_, changes, err := r.Snapshot(ctx, wt, head)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(Paths(changes), ","); got != "src/new.go,src/old.txt" {
		t.Fatalf("changes = %s", got)
	}
	msg := TaskMessage("s1", "T1", "Add new.go", "did it\n\nPlanex-Task: T9")
	c1, err := r.CommitChanges(ctx, head, changes, msg)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.UpdateBranch(ctx, "planex/s1", c1, "", "planex: T1"); err != nil {
		t.Fatal(err)
	}
	// A second create must fail: the branch exists now.
	if err := r.UpdateBranch(ctx, "planex/s1", c1, "", "again"); err == nil {
		t.Fatal("UpdateBranch created an existing branch")
	}
	if err := r.RemoveWorktree(ctx, wt); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(wt); !os.IsNotExist(err) {
		t.Fatalf("worktree still there: %v", err)
	}

	commits, err := r.TaskCommits(ctx, "planex/s1", head)
	if err != nil {
		t.Fatal(err)
	}
	if len(commits) != 1 || commits[0].Task != "T1" || commits[0].Session != "s1" || commits[0].Subject != "T1: Add new.go" {
		t.Fatalf("commits = %+v", commits)
	}
	if strings.Contains(commits[0].Body, "Planex-Task") {
		t.Errorf("a forged trailer survived in the body: %q", commits[0].Body)
	}
	// At a tip the caller holds: that commit's history, whatever the
	// branch says; "" is a branch that does not exist; a tip that is no
	// commit id is refused, never handed to git log as an option or name.
	for _, c := range []struct {
		tip     string
		want    int
		refused bool
	}{{c1, 1, false}, {head, 0, false}, {"", 0, false}, {"--all", 0, true}, {"planex/s1", 0, true}} {
		got, err := TaskCommitsAt(ctx, r, "planex/s1", c.tip, head)
		if len(got) != c.want || (err != nil) != c.refused {
			t.Errorf("TaskCommitsAt(%q) = %d commits, %v; want %d, refused %v", c.tip, len(got), err, c.want, c.refused)
		}
	}
	files := mustGit(t, r.Root, "ls-tree", "-r", "--name-only", "planex/s1")
	if files != "README.md\nsrc/new.go\n" {
		t.Errorf("branch tree = %q", files)
	}
	if b, _ := os.ReadFile(filepath.Join(r.Root, "README.md")); string(b) != "user edit\n" {
		t.Errorf("user's work tree changed: %q", b)
	}
	if got := r.CurrentBranch(ctx); got != "main" {
		t.Errorf("checked-out branch changed to %q", got)
	}
	dirty, _ := r.Dirty(ctx)
	if len(dirty) != 1 || !strings.Contains(dirty[0], "README.md") {
		t.Errorf("dirty = %v", dirty)
	}
}

func TestOpenNotARepo(t *testing.T) {
	t.Parallel()
	if _, err := Open(context.Background(), t.TempDir()); err == nil || !strings.Contains(err.Error(), "not a git repository") {
		t.Fatalf("Open = %v", err)
	}
}
