//go:build linux

package gitrepo

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRedTeamGitDirStateIsAFIFO: as TestRedTeamGitDirFileIsAFIFO, for
// the files of the git directory git finds by listing a folder or writes
// as it goes, not by a fixed name: a loose ref (any branch: listing refs
// opens each), one that is a link to a FIFO or to /dev/zero (read
// without end), a ref log git appends to on every ref update, FETCH_HEAD
// (every fetch writes it), a pack's index (every object read lists the
// packs), a linked worktree's gitdir file (worktree add reads them all).
// Each hung the git planex ran in it until its context ended (the
// worktree's gitdir hung planex itself, which read it uncancellably).
// Every call naming the git directory refuses it now
// (ErrGitDirFileNotRegular), also after its folders were remembered
// clean.
func TestRedTeamGitDirStateIsAFIFO(t *testing.T) {
	t.Parallel()
	type op func(ctx context.Context, r *Repo, head string) error
	resolve := func(ctx context.Context, r *Repo, _ string) error {
		_, err := r.ResolveBranch(ctx, "main")
		return err
	}
	update := func(ctx context.Context, r *Repo, head string) error {
		return r.UpdateBranch(ctx, "planex/next", head, "", "planex: test")
	}
	// An object in no pack: every pack's index is opened looking for it.
	readObject := func(ctx context.Context, r *Repo, _ string) error {
		_, err := r.Git(ctx, "", "cat-file", "-e", strings.Repeat("1", 40))
		return err
	}
	addWorktree := func(ctx context.Context, r *Repo, head string) error {
		return r.AddWorktree(ctx, filepath.Join(r.worktreeBase(), "fifo-test-"+filepath.Base(r.Root)), head)
	}
	fifo := fifoAt
	link := func(t *testing.T, target, p string) {
		os.Remove(p)
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name  string
		plant func(t *testing.T, r *Repo)
		op    op
	}{
		{"loose ref", func(t *testing.T, r *Repo) { fifo(t, filepath.Join(r.CommonDir, "refs", "heads", "other")) }, resolve},
		{"ref linked to a FIFO", func(t *testing.T, r *Repo) {
			p := filepath.Join(t.TempDir(), "fifo")
			fifo(t, p)
			link(t, p, filepath.Join(r.CommonDir, "refs", "heads", "other"))
		}, resolve},
		{"ref linked to /dev/zero", func(t *testing.T, r *Repo) {
			link(t, "/dev/zero", filepath.Join(r.CommonDir, "refs", "heads", "zero"))
		}, resolve},
		{"ref log of HEAD", func(t *testing.T, r *Repo) { fifo(t, filepath.Join(r.CommonDir, "logs", "HEAD")) }, func(ctx context.Context, r *Repo, head string) error {
			_, err := r.Git(ctx, "", "update-ref", "-m", "planex: test", "HEAD", head)
			return err
		}},
		{"ref log of a new branch", func(t *testing.T, r *Repo) {
			fifo(t, filepath.Join(r.CommonDir, "logs", "refs", "heads", "planex", "next"))
		}, update},
		{"pack index", func(t *testing.T, r *Repo) {
			mustGit(t, r.Root, "gc", "-q")
			name := "pack-" + strings.Repeat("0", 40)
			fifo(t, filepath.Join(r.CommonDir, "objects", "pack", name+".idx"))
			if err := os.WriteFile(filepath.Join(r.CommonDir, "objects", "pack", name+".pack"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}, readObject},
		{"FETCH_HEAD", func(t *testing.T, r *Repo) { fifo(t, filepath.Join(r.CommonDir, "FETCH_HEAD")) }, func(ctx context.Context, r *Repo, head string) error {
			_, err := FetchListed(ctx, r, r.Root, "refs/planex/fetched", head)
			return err
		}},
		{"another worktree's gitdir", func(t *testing.T, r *Repo) {
			fifo(t, filepath.Join(r.CommonDir, "worktrees", "old", "gitdir"))
			if err := os.WriteFile(filepath.Join(r.CommonDir, "worktrees", "old", "HEAD"), []byte(strings.Repeat("0", 40)+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, addWorktree},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r, head := settledRepo(t)
			if len(r.scans.clean) == 0 {
				t.Fatal("no folder was remembered clean, so this test shows nothing about reuse")
			}
			tc.plant(t, r)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			opErr := tc.op(ctx, r, head)
			_, headErr := r.Head(ctx)
			if ctx.Err() != nil {
				t.Fatalf("git waited on the FIFO: %v, %v", opErr, headErr)
			}
			if opErr == nil {
				t.Errorf("the call went ahead")
			}
			if !errors.Is(headErr, ErrGitDirFileNotRegular) {
				t.Errorf("Head = %v, want ErrGitDirFileNotRegular", headErr)
			}
		})
	}
}
