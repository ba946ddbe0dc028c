package gitrepo

import (
	"context"
	"path/filepath"
	"testing"
)

// TestRedTeamConditionalDriverInAnotherGitDir: whoever could write the
// git directory puts a filter's commands in a file the config includes
// only under a condition the call planex scans does not meet, but a git
// that call starts does: `git worktree add` checks the new worktree out
// in a child git whose git directory is the worktree's admin folder
// (.git/worktrees/<name>), so an `includeIf "gitdir:**/worktrees/**"`
// (or `onbranch:` for a branch checked out elsewhere) hid the filter from
// the scan, which ran in the main git directory, and the child ran its
// smudge with planex's environment. A driver any included file names,
// whatever its condition, is now switched off. An include on a remote's
// URL (hasconfig:remote.*.url:) is held the same way.
func TestRedTeamConditionalDriverInAnotherGitDir(t *testing.T) {
	t.Parallel()
	for _, cond := range []string{"gitdir:**/worktrees/**", "gitdir/i:**/WORKTREES/**", "hasconfig:remote.*.url:https://example.com/**"} {
		t.Run(cond, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			r := newRepo(t)
			mustGit(t, r.Root, "remote", "add", "origin", "https://example.com/o/r.git")
			e := newEvil(t)
			prog := e.prog("smudge")
			appendFile(t, filepath.Join(r.Root, ".gitattributes"), "*.txt filter=late\n")
			appendFile(t, filepath.Join(r.Root, "a.txt"), "one\n")
			commit := commitAll(ctx, t, r, "attributes")
			appendFile(t, filepath.Join(r.CommonDir, "late.cfg"), "[filter \"late\"]\n\tsmudge = "+prog+"\n\tclean = "+prog+"\n")
			appendFile(t, filepath.Join(r.CommonDir, "config"), "[includeIf \""+cond+"\"]\n\tpath = late.cfg\n")
			dir := filepath.Join(t.TempDir(), "wt")
			if err := r.AddWorktree(ctx, dir, commit); err != nil {
				t.Fatal(err)
			}
			if err := r.ResetWorktree(ctx, dir, commit); err != nil {
				t.Fatal(err)
			}
			e.assertNothingRan()
		})
	}
}
