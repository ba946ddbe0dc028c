//go:build linux

package gitrepo

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestRedTeamConfigNamesAFIFO: whoever could write the git directory (an
// earlier job on a reused runner, a kept worktree's writer) points a
// setting git reads a file for at a FIFO no one writes: diff.orderFile
// (every diff and show), core.attributesFile (every diff) or mailmap.file
// (names in logs). planex's git opened it and waited for ever: the job
// hung until its time-out. planex's git reads none of these files.
// (core.excludesFile is read on purpose: what it ignores is hidden from
// agents.)
func TestRedTeamConfigNamesAFIFO(t *testing.T) {
	t.Parallel()
	for _, key := range []string{"diff.orderFile", "core.attributesFile", "mailmap.file"} {
		t.Run(key, func(t *testing.T) {
			t.Parallel()
			r := newRepo(t)
			fifo := filepath.Join(t.TempDir(), "fifo")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(r.Root, "README.md"), []byte("changed\n"), 0o644)
			mustGit(t, r.Root, "commit", "-qam", "second")
			mustGit(t, r.Root, "config", key, fifo)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			if _, err := r.DiffText(ctx, "HEAD~1", "HEAD"); err != nil {
				t.Errorf("diff: %v", err)
			}
			for _, args := range [][]string{{"show", "--no-color", "HEAD"}, {"log", "-1", "--format=%aN %cN"}, {"diff-tree", "-p", "HEAD"}} {
				if _, err := r.Git(ctx, "", args...); err != nil {
					t.Errorf("git %v: %v", args, err)
				}
			}
		})
	}
}
