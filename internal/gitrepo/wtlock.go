package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/planexhq/planex/internal/safefile"
)

// worktreeLockFile serialises changes to <common>/worktrees/. `git
// worktree add` reads the admin files of every other worktree while it
// creates its own, and finds a half-written one (an empty commondir:
// "failed to read …/commondir") when two adds run side by side. The lock
// is a file lock in the common directory, so it holds across goroutines,
// Repo values opened on the same repository and processes; the kernel
// releases it when its holder dies.
//
// It lives in planex's private folder of the common directory
// (planexDir, session.PrivateDir), which the sandbox covers for every
// contained process. A flock needs only a descriptor open for reading,
// and a read-only mount does not stop one: at the top of the git
// directory, which contained agents read, an agent took the lock and
// held it, and planex made and removed no worktree until that agent's
// step ended (every other task of its wave waiting).
const (
	planexDir        = "planex"
	worktreeLockFile = "worktree.lock"
)

// lockWorktrees takes the worktree lock, waiting for it while ctx allows,
// and returns its release.
func (r *Repo) lockWorktrees(ctx context.Context) (func(), error) {
	dir := filepath.Join(r.CommonDir, planexDir)
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("making the folder of the worktree lock: %w", err)
	}
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("opening the worktree lock: %s is not a folder", dir)
	}
	p := filepath.Join(dir, worktreeLockFile)
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
