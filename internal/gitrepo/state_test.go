package gitrepo

import (
	"context"
	"github.com/planexhq/planex/internal/gitrepo/gittest"
	"os"
	"path/filepath"
	"testing"
)

// TestStateMatchesSeparateReads: one git status answers what Head,
// CurrentBranch and Dirty answer, in every shape of worktree a session
// can start from.
func TestStateMatchesSeparateReads(t *testing.T) {
	t.Parallel()
	write := func(r *Repo, name, text string) {
		p := filepath.Join(r.Root, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name    string
		setup   func(r *Repo)
		branch  string
		changes int
	}{
		{"clean on main", func(r *Repo) {}, "main", 0},
		{"modified, untracked folder, ignored, staged rename, odd name", func(r *Repo) {
			write(r, "README.md", "user edit\n")
			write(r, "new/a.txt", "a\n")
			write(r, "new/b.txt", "b\n")
			write(r, ".gitignore", "*.log\n")
			write(r, "debug.log", "ignored\n")
			write(r, "line\nbreak.txt", "x\n")
			mustGit(t, r.Root, "mv", "src/old.txt", "src/moved.txt")
		}, "main", 5}, // README.md, new/, .gitignore, the odd name, the rename
		{"detached", func(r *Repo) { mustGit(t, r.Root, "checkout", "-q", "--detach") }, "", 0},
		{"branch with a slash", func(r *Repo) { mustGit(t, r.Root, "checkout", "-q", "-b", "feature/x") }, "feature/x", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			r := newRepo(t)
			c.setup(r)
			st, err := State(ctx, r)
			if err != nil {
				t.Fatal(err)
			}
			head, err := r.Head(ctx)
			if err != nil {
				t.Fatal(err)
			}
			dirty, err := r.Dirty(ctx)
			if err != nil {
				t.Fatal(err)
			}
			want := WorkTreeState{Head: head, Branch: r.CurrentBranch(ctx), Changes: len(dirty)}
			if st != want {
				t.Errorf("State = %+v; the separate reads give %+v", st, want)
			}
			if st.Branch != c.branch || st.Changes != c.changes {
				t.Errorf("State = %+v; want branch %q and %d changes", st, c.branch, c.changes)
			}
		})
	}
}

// TestStateNoCommit: State fails like Head on a repository with no
// commit, rather than returning an empty HEAD.
func TestStateNoCommit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	mustGit(t, dir, "init", "-q", "-b", "main")
	r, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Head(ctx); err == nil {
		t.Fatal("Head succeeded with no commit")
	}
	if st, err := State(ctx, r); err == nil {
		t.Errorf("State = %+v with no commit; want an error", st)
	}
}

// TestStateIsOneGitProcess counts what a session start pays to read the
// worktree: one git where Head, CurrentBranch and Dirty ran three. Each
// side starts from a freshly opened Repo, so each pays the one driver
// scan (git config) before its first status.
func TestStateIsOneGitProcess(t *testing.T) {
	// Not parallel: the counting git is put on this process's PATH.
	ctx := context.Background()
	r := newRepo(t)
	calls := gittest.CountGit(t)
	if _, err := State(ctx, r); err != nil {
		t.Fatal(err)
	}
	if got := calls(); len(got) != 2 {
		t.Errorf("State ran %d git processes (want the scan and one status): %q", len(got), got)
	}
	again, err := Open(ctx, r.Root)
	if err != nil {
		t.Fatal(err)
	}
	calls()
	again.Head(ctx)
	again.CurrentBranch(ctx)
	again.Dirty(ctx)
	if got := calls(); len(got) != 4 {
		t.Errorf("the separate reads ran %d git processes (want the scan and three): %q", len(got), got)
	}
}
