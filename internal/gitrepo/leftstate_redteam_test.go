package gitrepo

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestRedTeamOperationLeftInProgress: the repository holds what an
// interrupted merge, cherry-pick, revert or rebase leaves in its git
// directory (MERGE_HEAD naming a commit of someone else's, MERGE_MSG,
// CHERRY_PICK_HEAD, REVERT_HEAD, REBASE_HEAD, a sequencer folder).
// git's own commit would take MERGE_HEAD for a second parent and its
// message for the commit's; planex's task commits are made with
// commit-tree on the parent it names, so each has that one parent and
// its own message, and its worktrees are made and reset as before.
// (Held: no change was needed.)
func TestRedTeamOperationLeftInProgress(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRepo(t)
	head, err := r.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	emptyTree := strings.TrimSpace(mustGitIn(t, r.Root, "", "mktree"))
	foreign := strings.TrimSpace(mustGit(t, r.Root, "commit-tree", "-m", "someone else's", emptyTree))
	for name, content := range map[string]string{
		"MERGE_HEAD": foreign + "\n", "MERGE_MSG": "Merge someone else's\n", "MERGE_MODE": "no-ff\n",
		"CHERRY_PICK_HEAD": foreign + "\n", "REVERT_HEAD": foreign + "\n", "REBASE_HEAD": foreign + "\n",
		"sequencer/todo": "pick " + foreign + " x\n", "sequencer/head": foreign + "\n",
	} {
		p := filepath.Join(r.CommonDir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	wt := r.WorktreeDir("s1", "T1")
	if err := r.AddWorktree(ctx, wt, head); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, wt, map[string]string{"src/task.txt": "task\n"})
	_, changes, err := r.Snapshot(ctx, wt, head)
	if err != nil {
		t.Fatal(err)
	}
	commit, err := r.CommitChanges(ctx, head, changes, "task T1\n")
	if err != nil {
		t.Fatal(err)
	}
	if ps, err := r.Parents(ctx, commit); err != nil || !slices.Equal(ps, []string{head}) {
		t.Errorf("Parents = %v, %v; want only %s", ps, err, head)
	}
	if msg, err := r.CommitMessage(ctx, commit); err != nil || msg != "task T1\n" {
		t.Errorf("CommitMessage = %q, %v; want the task's own", msg, err)
	}
	if err := r.ResetWorktree(ctx, wt, head); err != nil {
		t.Errorf("ResetWorktree: %v", err)
	}
}
