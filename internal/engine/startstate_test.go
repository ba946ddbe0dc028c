package engine

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestNewSessionStartState: the session's base commit, base branch and
// the note about uncommitted work come from the one status read, and the
// separate reads still decide when that read fails.
func TestNewSessionStartState(t *testing.T) {
	t.Parallel()
	git := func(t *testing.T, dir string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	cases := []struct {
		name       string
		setup      func(t *testing.T, dir string) (base string)
		wantBranch string
		wantNote   string // "" = no note
		wantErr    bool
	}{
		{"dirty on main", func(t *testing.T, dir string) string {
			os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a"), 0o644)
			os.WriteFile(filepath.Join(dir, "b.txt"), []byte("b"), 0o644)
			return ""
		}, "main", "2 uncommitted changes in your working tree are left alone", false},
		{"clean and detached", func(t *testing.T, dir string) string {
			git(t, dir, "checkout", "-q", "--detach")
			return ""
		}, "", "", false},
		{"base given on a branch", func(t *testing.T, dir string) string {
			base := git(t, dir, "rev-parse", "HEAD")
			git(t, dir, "checkout", "-q", "-b", "feature/x")
			git(t, dir, "commit", "-q", "--allow-empty", "-m", "second")
			os.WriteFile(filepath.Join(dir, "c.txt"), []byte("c"), 0o644)
			return base
		}, "feature/x", "1 uncommitted change in your working tree is left alone", false},
		{"no commit", func(t *testing.T, dir string) string {
			git(t, dir, "checkout", "-q", "--orphan", "empty")
			return ""
		}, "", "", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			repo := testRepo(t)
			base := c.setup(t, repo.Root)
			var out bytes.Buffer
			e, err := New(repo, Options{Out: &out, Approver: "tester", Concurrency: 1})
			if err != nil {
				t.Fatal(err)
			}
			s, err := e.newSession(ctx, Request{Requirement: "start state", Base: base, Imported: twoTasks()})
			if c.wantErr {
				if err == nil {
					t.Fatalf("newSession succeeded with no commit checked out: %+v", s.Meta)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			wantBase := base
			if wantBase == "" {
				wantBase = git(t, repo.Root, "rev-parse", "HEAD")
			}
			if s.Meta.Base != wantBase || s.Meta.BaseBranch != c.wantBranch {
				t.Errorf("base %s on %q; want %s on %q", s.Meta.Base, s.Meta.BaseBranch, wantBase, c.wantBranch)
			}
			if c.wantNote != "" && !strings.Contains(out.String(), c.wantNote+" and not part of the run (it starts from "+wantBase[:10]+")") ||
				c.wantNote == "" && strings.Contains(out.String(), "uncommitted change") {
				t.Errorf("output %q; want note %q", out.String(), c.wantNote)
			}
		})
	}
}
