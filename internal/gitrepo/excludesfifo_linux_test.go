//go:build linux

package gitrepo

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"
)

// TestRedTeamExcludesFileIsAFIFO: whoever could write the git directory
// sets core.excludesFile to a FIFO no one writes (or one in the work
// tree, where an agent makes it), or leaves one where git looks for the
// user's ignore file by default ($XDG_CONFIG_HOME/git/ignore): every git
// planex ran that reads ignore rules (the listing of ignored files
// before each contained step, status, the task's snapshot) opened it
// and waited, and the job hung until its time-out. planex's git now
// reads an excludes file only when planex names it, and names one only
// when it is a regular file; a regular excludes file of the user's, or
// at the default place, is still honoured by the listing.
func TestRedTeamExcludesFileIsAFIFO(t *testing.T) {
	// Not parallel: the default place is under this process's
	// XDG_CONFIG_HOME, as it is for planex.
	xdg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", xdg)
	if err := os.MkdirAll(filepath.Join(xdg, "git"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, where := range []string{"repository config", "work tree", "default place", "default place, regular"} {
		t.Run(where, func(t *testing.T) {
			r := newRepo(t)
			fifo := filepath.Join(t.TempDir(), "fifo")
			defaultIgnore := filepath.Join(xdg, "git", "ignore")
			// The tests' own git (newRepo) reads it too.
			t.Cleanup(func() { os.Remove(defaultIgnore) })
			switch where {
			case "repository config":
				mustGit(t, r.Root, "config", "core.excludesFile", fifo)
			case "work tree":
				fifo = filepath.Join(r.Root, "ignore.txt")
				mustGit(t, r.Root, "config", "core.excludesFile", "ignore.txt")
			case "default place", "default place, regular":
				fifo = defaultIgnore
			}
			if where == "default place, regular" {
				if err := os.WriteFile(defaultIgnore, []byte("*.secret\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			} else if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(r.Root, "a.secret"), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			ignored, _, err := Ignored(ctx, r, 100)
			if err != nil {
				t.Errorf("Ignored: %v", err)
			}
			if _, err := r.Dirty(ctx); err != nil {
				t.Errorf("Dirty: %v", err)
			}
			head, err := r.Head(ctx)
			if err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(t.TempDir(), "wt")
			if err := r.AddWorktree(ctx, dir, head); err != nil {
				t.Fatalf("AddWorktree: %v", err)
			}
			if _, _, err := r.Snapshot(ctx, dir, head); err != nil {
				t.Errorf("Snapshot: %v", err)
			}
			if ctx.Err() != nil {
				t.Fatal("git waited on the FIFO")
			}
			if where == "default place, regular" && !slices.Contains(ignored, filepath.Join(r.Root, "a.secret")) {
				t.Errorf("the default ignore file was not honoured: Ignored = %q", ignored)
			}
		})
	}
}
