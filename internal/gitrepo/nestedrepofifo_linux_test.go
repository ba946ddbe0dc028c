//go:build linux

package gitrepo

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestRedTeamAgentLeavesNestedRepoFIFOs: a contained agent makes a
// folder of its worktree look like a repository of its own (sub/.git),
// whose state git reads to record the folder as a gitlink: its HEAD, the
// branch HEAD names (loose or in packed-refs), a .git file's gitdir or
// the commondir is a FIFO. planex's snapshot (`git add --all`) waited on
// it until its context ended (every case but the .git file, which git
// reads only when regular). The snapshot now refuses the tree
// (ErrTreeFileNotRegular) and the reset for the next task removes the
// nested .git.
func TestRedTeamAgentLeavesNestedRepoFIFOs(t *testing.T) {
	t.Parallel()
	mk := fifoAt
	write := writeAt
	// repo makes sub/.git look like a git directory to git's check.
	repo := func(t *testing.T, g string) {
		for _, d := range []string{"objects", "refs/heads"} {
			if err := os.MkdirAll(filepath.Join(g, d), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, tc := range []struct {
		name  string
		plant func(t *testing.T, dir string)
	}{
		{"HEAD", func(t *testing.T, dir string) {
			g := filepath.Join(dir, "sub", ".git")
			repo(t, g)
			mk(t, filepath.Join(g, "HEAD"))
		}},
		{"loose branch", func(t *testing.T, dir string) {
			g := filepath.Join(dir, "sub", ".git")
			repo(t, g)
			write(t, filepath.Join(g, "HEAD"), "ref: refs/heads/main\n")
			mk(t, filepath.Join(g, "refs", "heads", "main"))
		}},
		{"packed-refs", func(t *testing.T, dir string) {
			g := filepath.Join(dir, "sub", ".git")
			repo(t, g)
			write(t, filepath.Join(g, "HEAD"), "ref: refs/heads/main\n")
			mk(t, filepath.Join(g, "packed-refs"))
		}},
		{"config", func(t *testing.T, dir string) {
			g := filepath.Join(dir, "sub", ".git")
			repo(t, g)
			write(t, filepath.Join(g, "HEAD"), "ref: refs/heads/main\n")
			mk(t, filepath.Join(g, "config"))
		}},
		{"commondir", func(t *testing.T, dir string) {
			g := filepath.Join(dir, "sub", ".git")
			repo(t, g)
			write(t, filepath.Join(g, "HEAD"), "ref: refs/heads/main\n")
			mk(t, filepath.Join(g, "commondir"))
		}},
		{"gitdir file naming a folder", func(t *testing.T, dir string) {
			g := filepath.Join(dir, "other")
			repo(t, g)
			mk(t, filepath.Join(g, "HEAD"))
			write(t, filepath.Join(dir, "sub", ".git"), "gitdir: ../other\n")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			r, head, dir := taskWorktree(ctx, t)
			tc.plant(t, dir)
			write(t, filepath.Join(dir, "sub", "work.txt"), "done\n")
			_, _, snapErr := r.Snapshot(ctx, dir, head)
			if ctx.Err() != nil {
				t.Fatalf("the snapshot waited on the FIFO: %v", snapErr)
			}
			resetErr := r.ResetWorktree(ctx, dir, head)
			if ctx.Err() != nil {
				t.Fatalf("the reset waited on the FIFO: %v", resetErr)
			}
			if !errors.Is(snapErr, ErrTreeFileNotRegular) {
				t.Errorf("Snapshot = %v, want ErrTreeFileNotRegular", snapErr)
			}
			if resetErr != nil {
				t.Errorf("ResetWorktree: %v", resetErr)
			}
			if _, err := os.Lstat(filepath.Join(dir, "sub", ".git")); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("the reset left sub/.git: %v", err)
			}
		})
	}
}
