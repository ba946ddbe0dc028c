package gitrepo

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/planexhq/planex/internal/safefile"
)

// worktreeLockFile serialises changes to <common>/worktrees/. `git
// worktree add` reads the admin files of every other worktree while it
// creates its own, and finds a half-written one (an empty commondir:
// "failed to read …/commondir") when two adds run side by side. The lock
// is a file lock on the common directory, so it holds across goroutines,
// Repo values opened on the same repository and processes; the kernel
// releases it when its holder dies.
const worktreeLockFile = "planex-worktree.lock"

// lockWorktrees takes the worktree lock, waiting for it while ctx allows,
// and returns its release.
func (r *Repo) lockWorktrees(ctx context.Context) (func(), error) {
	p := filepath.Join(r.CommonDir, worktreeLockFile)
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|safefile.NoFollow, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening the worktree lock: %w", err)
	}
	wait := time.Millisecond
	for {
		ok, err := safefile.TryLock(f)
		if ok {
			return func() {
				safefile.Unlock(f)
				f.Close()
			}, nil
		}
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("taking the worktree lock %s: %w", p, err)
		}
		// Polling rather than a blocking flock, so that a cancelled run
		// does not wait on a holder that hangs.
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			f.Close()
			return nil, fmt.Errorf("waiting for the worktree lock: %w", ctx.Err())
		case <-t.C:
		}
		wait = min(2*wait, 50*time.Millisecond)
	}
}
