package action

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
)

// TestSaveWithBranch: after a task the state and the run branch are
// published together. Against a real origin: both move; a state another
// run moved stops the branch too (errStateMoved); a branch that cannot
// fast-forward still lets the state be saved, its own failure told apart,
// as when the two were pushed one after the other.
func TestSaveWithBranch(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name        string
		stateMoved  bool // another run pushed the state first
		branchMoved bool // someone pushed the branch elsewhere
	}{
		{name: "both move"},
		{name: "state moved", stateMoved: true},
		{name: "branch moved", branchMoved: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			origin, repo := sessionClone(t)
			r := &Runner{Cfg: Config{Remote: "origin"}, Repo: repo, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
			f := r.flows()
			const branch = "planex/s1"
			rec := &Record{Thread: 1, SessionID: "s1", State: StateRunning, Branch: branch, repo: repo}
			if err := f.store.saveRecord(ctx, rec); err != nil {
				t.Fatal(err)
			}
			first := rec.remote.Commit
			head := git(t, repo.Root, "rev-parse", "HEAD")
			git(t, repo.Root, "update-ref", "refs/heads/"+branch, head)
			if err := f.store.pushBranch(ctx, rec); err != nil {
				t.Fatal(err)
			}
			if c.stateMoved {
				taken := git(t, origin, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit-tree", git(t, origin, "rev-parse", stateRef(1)+"^{tree}"), "-p", first, "-m", "taken over")
				git(t, origin, "update-ref", stateRef(1), taken)
			}
			elsewhere := git(t, origin, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit-tree", git(t, origin, "rev-parse", head+"^{tree}"), "-p", head, "-m", "elsewhere")
			if c.branchMoved {
				git(t, origin, "update-ref", "refs/heads/"+branch, elsewhere)
			}
			task := git(t, repo.Root, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit-tree", git(t, repo.Root, "rev-parse", head+"^{tree}"), "-p", head, "-m", "T1")
			git(t, repo.Root, "update-ref", "refs/heads/"+branch, task)
			rec.State = StateDone

			stateErr, branchErr := f.store.saveWithBranch(ctx, rec)
			stateAt, branchAt := git(t, origin, "rev-parse", stateRef(1)), git(t, origin, "rev-parse", "refs/heads/"+branch)
			switch {
			case c.stateMoved:
				if !errors.Is(stateErr, errStateMoved) || branchErr != nil || branchAt != head {
					t.Errorf("state moved: errors %v, %v; branch at %s, want it left at %s", stateErr, branchErr, branchAt, head)
				}
			case c.branchMoved:
				if stateErr != nil || branchErr == nil || branchAt != elsewhere || stateAt != rec.remote.Commit || stateAt == first {
					t.Errorf("branch moved: errors %v, %v; state at %s (record %s, first %s), branch at %s", stateErr, branchErr, stateAt, rec.remote.Commit, first, branchAt)
				}
			default:
				if stateErr != nil || branchErr != nil || branchAt != task || stateAt != rec.remote.Commit || stateAt == first {
					t.Errorf("errors %v, %v; state at %s (record %s, first %s), branch at %s, want %s", stateErr, branchErr, stateAt, rec.remote.Commit, first, branchAt, task)
				}
			}
		})
	}
}
