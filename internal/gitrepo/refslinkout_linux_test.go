//go:build linux

package gitrepo

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestRedTeamRefsLinkToAFolderOutside: a git-directory writer links a
// folder under refs/ or logs/ to a folder outside the git directory (a
// tree of its own, /usr, / itself). git lists refs through the link, and
// planex walked the folder it leads to, whole, before every call, with
// no bound and no regard for the call's context: a link to / or to a
// large or slow file system cost a full walk of it each time, and what
// lies outside can change with no stamp of the git directory changing.
// Every call naming the git directory refuses it now
// (ErrGitDirFileNotRegular); a link to a folder inside the git directory
// is still followed.
func TestRedTeamRefsLinkToAFolderOutside(t *testing.T) {
	t.Parallel()
	outsideTree := func(t *testing.T) string {
		dir := t.TempDir()
		for _, sub := range []string{"a/b/c", "d/e", "f"} {
			if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	for _, tc := range []struct {
		name    string
		link    string // under the common git directory
		target  func(t *testing.T, r *Repo) string
		refused bool
	}{
		{"refs folder to a tree outside", "refs/heads/linked", func(t *testing.T, _ *Repo) string { return outsideTree(t) }, true},
		{"logs folder to a tree outside", "logs/refs/linked", func(t *testing.T, _ *Repo) string { return outsideTree(t) }, true},
		{"refs folder to the root", "refs/tags/root", func(*testing.T, *Repo) string { return "/" }, true},
		{"refs folder through a relative link out", "refs/heads/up", func(t *testing.T, r *Repo) string {
			out := outsideTree(t)
			rel, err := filepath.Rel(filepath.Join(r.CommonDir, "refs", "heads"), out)
			if err != nil {
				t.Fatal(err)
			}
			return rel
		}, true},
		{"logs itself to a tree outside", "logs", func(t *testing.T, r *Repo) string {
			if err := os.RemoveAll(filepath.Join(r.CommonDir, "logs")); err != nil {
				t.Fatal(err)
			}
			return outsideTree(t)
		}, true},
		{"refs folder to a folder inside", "refs/heads/alias", func(*testing.T, *Repo) string { return "../tags" }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r, _ := settledRepo(t)
			p := filepath.Join(r.CommonDir, filepath.FromSlash(tc.link))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(tc.target(t, r), p); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			_, err := r.Git(ctx, "", "for-each-ref", "--format=%(refname)")
			if got := errors.Is(err, ErrGitDirFileNotRegular); got != tc.refused {
				t.Errorf("for-each-ref = %v; refused %v, want %v", err, got, tc.refused)
			}
			if !tc.refused && err != nil {
				t.Errorf("a link inside the git directory: %v", err)
			}
		})
	}
}

// TestRedTeamAgentLinksItsWorktreeRefsOutside: as above, in a task
// worktree's own git directory (worktrees/<name>, which an agent run
// without the sandbox writes with its worktree): a folder under its
// refs/ linked to a folder outside. planex's next call on the worktree
// refuses it.
func TestRedTeamAgentLinksItsWorktreeRefsOutside(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r, _, dir := taskWorktree(ctx, t)
	admin, err := r.worktreeGitDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if err := os.MkdirAll(filepath.Join(out, "a", "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(admin, "refs", "bisect"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(out, filepath.Join(admin, "refs", "bisect", "linked")); err != nil {
		t.Fatal(err)
	}
	_, err = r.git(ctx, dir, []string{"GIT_DIR=" + admin, "GIT_WORK_TREE=" + dir}, "status", "--porcelain")
	if !errors.Is(err, ErrGitDirFileNotRegular) {
		t.Errorf("status in the worktree = %v, want ErrGitDirFileNotRegular", err)
	}
}
