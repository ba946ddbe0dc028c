//go:build linux

package gitrepo

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestRedTeamWorktreeLockOutOfAgentsReach: a contained agent reads the
// repository's git directory (its own git needs it), all but planex's
// private folder, which the sandbox covers. A flock needs only a
// descriptor open for reading, which a read-only mount allows, so the
// agent opens every file it sees there and locks each one, holding the
// locks for the rest of its step. planex, making the worktree of another
// task of the wave meanwhile, waits for its worktree lock: before, that
// lock was a file at the top of the git directory, and no worktree was
// made or removed until the agent's step ended. Now the lock lies in the
// covered folder and the worktree is made at once.
func TestRedTeamWorktreeLockOutOfAgentsReach(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRepo(t)
	head, _ := r.Head(ctx)
	// A first task's worktree: the lock file exists from here on.
	if err := r.AddWorktree(ctx, r.WorktreeDir("s1", "T1"), head); err != nil {
		t.Fatal(err)
	}
	covered := filepath.Join(r.CommonDir, "planex")
	held := 0
	filepath.WalkDir(r.CommonDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && p == covered {
			return filepath.SkipDir
		}
		if !d.Type().IsRegular() {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return nil
		}
		t.Cleanup(func() { f.Close() })
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
			held++
		}
		return nil
	})
	if held == 0 {
		t.Fatal("the agent locked nothing in the git directory")
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if err := r.AddWorktree(ctx, r.WorktreeDir("s1", "T2"), head); err != nil {
		t.Fatalf("with %d files of the git directory locked by an agent, the next task's worktree was not made: %v", held, err)
	}
	if err := r.RemoveWorktree(ctx, r.WorktreeDir("s1", "T2")); err != nil {
		t.Fatalf("with %d files of the git directory locked by an agent, a worktree was not removed: %v", held, err)
	}
}
