package gitrepo

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestRedTeamConfigMovesTheWorkTree: whoever wrote the git directory (an
// earlier uncontained step, an agent run without the sandbox) sets
// core.worktree in the checkout's .git/config to another folder, by an
// absolute or a relative path. git then works on that folder, and planex
// took it for the checkout: the ignored files it hides from agents and
// the uncommitted changes it reports were the other folder's, while
// every task started from the checkout's commits. Opening must refuse
// such a repository; a git directory kept apart whose core.worktree names
// the checkout itself (git init --separate-git-dir, a submodule's) opens
// as before.
func TestRedTeamConfigMovesTheWorkTree(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		worktree func(root, other string) string
	}{
		{"absolute", func(_, other string) string { return other }},
		{"relative", func(root, other string) string {
			rel, err := filepath.Rel(filepath.Join(root, ".git"), other)
			if err != nil {
				t.Fatal(err)
			}
			return rel
		}},
		{"above", func(string, string) string { return "../.." }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := newRepo(t)
			other := t.TempDir()
			mustGit(t, r.Root, "config", "core.worktree", c.worktree(r.Root, other))
			for _, dir := range []string{r.Root, filepath.Join(r.Root, "src")} {
				got, err := Open(context.Background(), dir)
				if err == nil {
					t.Errorf("Open(%s) took %s for the work tree, want ErrWorkTreeElsewhere", dir, got.Root)
				} else if !errors.Is(err, ErrWorkTreeElsewhere) {
					t.Errorf("Open(%s) = %v, want ErrWorkTreeElsewhere", dir, err)
				}
			}
		})
	}
	t.Run("separate git dir naming the checkout", func(t *testing.T) {
		t.Parallel()
		base := t.TempDir()
		work, gitDir := filepath.Join(base, "work"), filepath.Join(base, "git")
		if err := os.Mkdir(work, 0o755); err != nil {
			t.Fatal(err)
		}
		mustGit(t, work, "init", "-q", "--separate-git-dir", gitDir)
		mustGit(t, work, "config", "core.worktree", work)
		mustGit(t, work, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "i")
		got, err := Open(context.Background(), work)
		if err != nil {
			t.Fatalf("Open = %v", err)
		}
		if a, b := stat(t, got.Root), stat(t, work); !os.SameFile(a, b) {
			t.Errorf("Root = %s, want %s", got.Root, work)
		}
	})
}

func stat(t *testing.T, p string) os.FileInfo {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi
}

// TestRedTeamNestedRepositoryMovesItsWorkTree: a repository inside the
// checkout (a project an earlier step cloned there, or a submodule),
// whose own configuration sets core.worktree to another folder: git's
// listing in it listed that folder's ignored files, so its own .env was
// not among those hidden from contained agents. Each is listed in its own
// folder, whatever its configuration says.
func TestRedTeamNestedRepositoryMovesItsWorkTree(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	nested := filepath.Join(r.Root, "clones", "other")
	if err := os.MkdirAll(nested, 0o755); err != nil {
		t.Fatal(err)
	}
	mustGit(t, nested, "init", "-q", "-b", "main")
	decoy := t.TempDir()
	for dir, files := range map[string]map[string]string{
		nested: {".gitignore": ".env\n", ".env": "SECRET=1\n"},
		decoy:  {".gitignore": "*.log\n", "a.log": "x\n"},
	} {
		writeFiles(t, dir, files)
	}
	mustGit(t, nested, "config", "core.worktree", decoy)
	got, _, err := Ignored(context.Background(), r, 100)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(nested, ".env"); !slices.Contains(got, want) {
		t.Errorf("Ignored = %q, lacks %s", got, want)
	}
}
