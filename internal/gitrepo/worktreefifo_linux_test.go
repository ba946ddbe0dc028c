//go:build linux

package gitrepo

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestRedTeamAgentLeavesFIFOsGitReads: a contained agent, which may write
// anything in its worktree, leaves a FIFO where git reads a file of the
// tree's: `.gitignore`, `.gitattributes` or `.gitmodules`, at the top or
// in a folder. planex's snapshot of the task (`git add --all`) opened it
// and waited for a writer that never comes: the run hung until the job's
// time-out. The snapshot now refuses such a tree (ErrTreeFileNotRegular),
// naming the file, and the reset for the next task removes it.
func TestRedTeamAgentLeavesFIFOsGitReads(t *testing.T) {
	t.Parallel()
	for _, rel := range []string{".gitignore", "sub/.gitignore", ".gitattributes", "sub/.gitattributes", ".gitmodules"} {
		t.Run(rel, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			r, head, dir := taskWorktree(ctx, t)
			p := filepath.Join(dir, filepath.FromSlash(rel))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Mkfifo(p, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "sub", "work.txt"), []byte("done\n"), 0o644); err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			_, _, err := r.Snapshot(ctx, dir, head)
			if ctx.Err() != nil {
				t.Fatalf("the snapshot waited on the FIFO: %v", err)
			}
			if !errors.Is(err, ErrTreeFileNotRegular) {
				t.Errorf("Snapshot = %v, want ErrTreeFileNotRegular", err)
			}
			if err := r.ResetWorktree(ctx, dir, head); err != nil {
				t.Errorf("ResetWorktree: %v", err)
			}
			if ctx.Err() != nil {
				t.Fatalf("the reset waited on the FIFO: %v", err)
			}
		})
	}
}
