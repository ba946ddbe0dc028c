package gitrepo

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestRedTeamSparseCheckoutLeavesTaskWorktreesWhole: the repository's
// configuration turns on a sparse checkout (core.sparseCheckout, its
// cone mode, a sparse index) naming only src/ — a monorepo's user does
// this, and so can whoever wrote the git directory before planex ran. A
// task's worktree is planex's: it must hold the whole base tree, the
// agent's file outside the cone must be committed, and no file missing
// from the worktree may be read as deleted. Before, `git worktree add`
// copied the sparse rules into the task's worktree: README.md was not
// there for the agent, and the snapshot failed on a file the agent
// added outside the cone.
func TestRedTeamSparseCheckoutLeavesTaskWorktreesWhole(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		config [][]string
		rules  string
	}{
		{"patterns", [][]string{{"core.sparseCheckout", "true"}}, "/src/\n"},
		{"cone", [][]string{{"core.sparseCheckout", "true"}, {"core.sparseCheckoutCone", "true"}}, "/*\n!/*/\n/src/\n"},
		{"sparse index", [][]string{{"core.sparseCheckout", "true"}, {"core.sparseCheckoutCone", "true"}, {"index.sparse", "true"}}, "/*\n!/*/\n/src/\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			r := newRepo(t)
			writeFiles(t, r.Root, map[string]string{"docs/guide.md": "guide\n"})
			head := commitAll(ctx, t, r, "docs")
			for _, kv := range c.config {
				mustGit(t, r.Root, "config", kv[0], kv[1])
			}
			rules := filepath.Join(r.CommonDir, "info", "sparse-checkout")
			if err := os.MkdirAll(filepath.Dir(rules), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(rules, []byte(c.rules), 0o644); err != nil {
				t.Fatal(err)
			}
			mustGit(t, r.Root, "read-tree", "-mu", "HEAD")
			if _, err := os.Lstat(filepath.Join(r.Root, "docs", "guide.md")); err == nil {
				t.Fatal("the sparse rules do not apply to the checkout here")
			}

			wt := r.WorktreeDir("s1", "T1")
			if err := r.AddWorktree(ctx, wt, head); err != nil {
				t.Fatal(err)
			}
			for _, p := range []string{"README.md", "docs/guide.md", "src/old.txt"} {
				if _, err := os.Lstat(filepath.Join(wt, filepath.FromSlash(p))); err != nil {
					t.Errorf("the task's worktree lacks %s: %v", p, err)
				}
			}
			writeFiles(t, wt, map[string]string{"docs/new.md": "new\n", "src/old.txt": "changed\n"})
			_, changes, err := r.Snapshot(ctx, wt, head)
			if err != nil {
				t.Fatalf("Snapshot: %v", err)
			}
			got := Paths(changes)
			slices.Sort(got)
			if want := "docs/new.md src/old.txt"; strings.Join(got, " ") != want {
				t.Errorf("changes = %v, want %s", got, want)
			}
			// The next task's worktree, reset in place, is whole too.
			if err := r.ResetWorktree(ctx, wt, head); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Lstat(filepath.Join(wt, "README.md")); err != nil {
				t.Errorf("the reset worktree lacks README.md: %v", err)
			}
			// The user's own checkout keeps its sparse rules: nothing
			// outside the cone reads as deleted.
			if dirty, err := r.Dirty(ctx); err != nil || len(dirty) != 0 {
				t.Errorf("Dirty = %v, %v; want the sparse checkout clean", dirty, err)
			}
		})
	}
}
