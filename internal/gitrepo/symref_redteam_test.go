package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRedTeamWritesThroughNoSymbolicRef: whoever could write the git
// directory before planex ran (an agent run without the sandbox, an
// earlier uncontained step of a self-hosted runner) makes a ref planex is
// about to write, its run branch or a thread's state ref, a symbolic ref
// to the user's own branch (`git symbolic-ref refs/heads/planex/s1
// refs/heads/main`). git follows a symbolic ref when it writes one unless
// told not to, so moving the run branch to a task's commit, setting or
// fetching a state ref, or saving a state by fast-import each moved main
// instead: to a task commit, or to a commit holding only the session's
// files. Each write must leave main where it was.
func TestRedTeamWritesThroughNoSymbolicRef(t *testing.T) {
	t.Parallel()
	type write = func(ctx context.Context, c *Repo, origin, ref, main, other string) error
	cases := []struct {
		name string
		ref  string
		do   write
	}{
		{"UpdateBranch", "refs/heads/planex/s1", func(ctx context.Context, c *Repo, _, _, main, other string) error {
			return c.UpdateBranch(ctx, "planex/s1", other, main, "planex: T1")
		}},
		{"SetRef", "refs/planex/tasks/s1/T1", func(ctx context.Context, c *Repo, _, ref, _, other string) error {
			return c.SetRef(ctx, ref, other)
		}},
		{"SetRef deleting", "refs/planex/tasks/s1/T1", func(ctx context.Context, c *Repo, _, ref, _, _ string) error {
			return c.SetRef(ctx, ref, "")
		}},
		{"FetchRef", "refs/planex/state/7", func(ctx context.Context, c *Repo, _, ref, _, _ string) error {
			_, err := c.FetchRef(ctx, "origin", ref)
			return err
		}},
		{"SaveOn", "refs/planex/state/7", func(ctx context.Context, c *Repo, _, ref, _, _ string) error {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "github.json"), []byte(`{"state":"planned"}`), 0o600); err != nil {
				return err
			}
			_, err := StateAt(c, ref).SaveOn(ctx, Saved{}, dir, "planex: state")
			return err
		}},
	}
	// git reads a symbolic ref from a loose file holding "ref: <name>",
	// and from a link whose text starts with refs/.
	forms := map[string]func(t *testing.T, c *Repo, ref string){
		"file": func(t *testing.T, c *Repo, ref string) {
			mustGit(t, c.Root, "symbolic-ref", ref, "refs/heads/main")
		},
		"link": func(t *testing.T, c *Repo, ref string) {
			p := filepath.Join(c.CommonDir, filepath.FromSlash(ref))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("refs/heads/main", p); err != nil {
				t.Fatal(err)
			}
		},
	}
	for _, tc := range cases {
		for form, plant := range forms {
			t.Run(tc.name+"/"+form, func(t *testing.T) {
				t.Parallel()
				writeThroughNoSymbolicRef(t, tc.name, tc.ref, tc.do, plant)
			})
		}
	}
}

// writeThroughNoSymbolicRef plants ref as a symbolic ref to main in a
// clone, runs one write of planex's on it and checks main stayed.
func writeThroughNoSymbolicRef(t *testing.T, name, ref string, do func(ctx context.Context, c *Repo, origin, ref, main, other string) error, plant func(t *testing.T, c *Repo, ref string)) {
	ctx := context.Background()
	r := newRepo(t)
	origin, c := cloneOf(t, r)
	main := strings.TrimSpace(mustGit(t, c.Root, "rev-parse", "refs/heads/main"))
	mustGit(t, r.Root, "commit", "-q", "--allow-empty", "-m", "another")
	other := strings.TrimSpace(mustGit(t, r.Root, "rev-parse", "HEAD"))
	mustGit(t, r.Root, "push", "-q", origin, "HEAD:refs/planex/state/7")
	mustGit(t, c.Root, "fetch", "-q", "origin", other)
	plant(t, c, ref)

	err := do(ctx, c, origin, ref, main, other)
	if got := strings.TrimSpace(mustGit(t, c.Root, "rev-parse", "refs/heads/main")); got != main {
		t.Fatalf("%s through the symbolic ref %s moved main from %s to %s (err %v)", name, ref, main, got, err)
	}
	// fast-import and fetch cannot be told not to follow one: the save
	// and the fetch are refused. The others replace or delete the
	// symbolic ref itself.
	if wantRefused := name == "SaveOn" || name == "FetchRef"; wantRefused != errors.Is(err, ErrSymbolicRef) || (!wantRefused && err != nil) {
		t.Errorf("%s = %v, want refused with ErrSymbolicRef: %v", name, err, wantRefused)
	}
}

// TestRedTeamPushesNoSymbolicRef: as above, for a push: the writer makes
// planex's run branch, or a state ref, a symbolic ref to a local branch
// the user never published (refs/heads/private). git pushes what a
// symbolic ref names, so planex's push of its own ref published the
// user's private commit on the remote under planex's name. The push is
// refused (ErrSymbolicRef) and the remote gets nothing.
func TestRedTeamPushesNoSymbolicRef(t *testing.T) {
	t.Parallel()
	for _, ref := range []string{"refs/heads/planex/s1", "refs/planex/state/7"} {
		for _, batch := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s batch=%v", ref, batch), func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				r := newRepo(t)
				origin, c := cloneOf(t, r)
				mustGit(t, c.Root, "commit", "-q", "--allow-empty", "-m", "the user's unpublished work")
				private := strings.TrimSpace(mustGit(t, c.Root, "rev-parse", "HEAD"))
				mustGit(t, c.Root, "update-ref", "refs/heads/private", private)
				mustGit(t, c.Root, "symbolic-ref", ref, "refs/heads/private")
				var err error
				if batch {
					err = c.PushRefs(ctx, "origin", []RefPush{{Ref: ref}})
				} else {
					err = c.PushRef(ctx, "origin", ref, false, "")
				}
				if out := mustGit(t, origin, "for-each-ref", "--format=%(objectname)"); strings.Contains(out, private) {
					t.Fatalf("the push of %s published the private commit (err %v)", ref, err)
				}
				if !errors.Is(err, ErrSymbolicRef) {
					t.Errorf("push of %s = %v, want ErrSymbolicRef", ref, err)
				}
			})
		}
	}
}
