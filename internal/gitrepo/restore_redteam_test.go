package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestRedTeamRestoreDirRestoresOnlyFiles: a state ref is pushed by
// whoever can push to the repository, and the Action restores the
// session folder from it before anything else checks it. A forged state
// whose tree holds a link (tasks.csv leading to a file elsewhere on the
// runner, the discovery board leading to a file planex would then append
// to) or a gitlink is refused: nothing of it is written, and no link is
// left in the session folder for planex to read or write through.
func TestRedTeamRestoreDirRestoresOnlyFiles(t *testing.T) {
	t.Parallel()
	outside := filepath.Join(t.TempDir(), "runner-secret")
	if err := os.WriteFile(outside, []byte("token=secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		entry func(t *testing.T, r *Repo) string // one ls-tree line for mktree
	}{
		{"a link to a file outside", func(t *testing.T, r *Repo) string {
			return "120000 blob " + hashObject(t, r, outside) + "\ttasks.csv"
		}},
		{"a link to a folder outside", func(t *testing.T, r *Repo) string {
			return "120000 blob " + hashObject(t, r, filepath.Dir(outside)) + "\tsteps"
		}},
		{"a gitlink", func(t *testing.T, r *Repo) string {
			return "160000 commit " + strings.TrimSpace(mustGit(t, r.Root, "rev-parse", "HEAD")) + "\tsub"
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			r := newRepo(t)
			forgeStateRef(t, r, "refs/planex/state/1", c.entry(t, r))

			dest := filepath.Join(t.TempDir(), "s1")
			err := r.RestoreDir(ctx, "refs/planex/state/1", dest)
			if err == nil {
				t.Error("RestoreDir restored a state holding " + c.name)
			}
			filepath.Walk(dest, func(p string, fi os.FileInfo, err error) error {
				if err == nil && fi.Mode()&os.ModeSymlink != 0 {
					t.Errorf("RestoreDir left the link %s in the session folder", p)
				}
				return nil
			})
			if b, _ := os.ReadFile(outside); string(b) != "token=secret\n" {
				t.Errorf("the file outside changed: %q", b)
			}
		})
	}
}

// taskSnapshot makes task T1's worktree of session s1 at base, writes
// files (slash path to content) into it, and snapshots it against base.
func taskSnapshot(ctx context.Context, t *testing.T, r *Repo, base string, files map[string]string) (wt, tree string, changes []Change) {
	t.Helper()
	wt = r.WorktreeDir("s1", "T1")
	if err := r.AddWorktree(ctx, wt, base); err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(wt, filepath.FromSlash(name)), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tree, changes, err := r.Snapshot(ctx, wt, base)
	if err != nil {
		t.Fatal(err)
	}
	return wt, tree, changes
}

// forgeStateRef points ref of r at a new commit whose tree holds session
// s1's session.json and the entries given as ls-tree lines.
func forgeStateRef(t *testing.T, r *Repo, ref string, entries ...string) {
	t.Helper()
	meta := hashObject(t, r, `{"id":"s1"}`)
	lines := append([]string{"100644 blob " + meta + "\tsession.json"}, entries...)
	tree := strings.TrimSpace(mustGitIn(t, r.Root, strings.Join(lines, "\n")+"\n", "mktree"))
	commit := strings.TrimSpace(mustGit(t, r.Root, "commit-tree", tree, "-m", "planex: forged"))
	mustGit(t, r.Root, "update-ref", ref, commit)
}

// hashObject writes content as a blob of r and returns its id.
func hashObject(t *testing.T, r *Repo, content string) string {
	t.Helper()
	return strings.TrimSpace(mustGitIn(t, r.Root, content, "hash-object", "-w", "--stdin"))
}

func mustGitIn(t *testing.T, dir, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return string(out)
}

// TestRedTeamPatchIgnoresWorkTreeAttributes: a task's agent commits a
// .gitattributes marking every file as binary (`* -diff`). Once that
// commit is in the work tree planex runs in (a follow-up's worktree at
// the pull request's tip, a checkout of a planex branch), git's diffs
// there showed every later change as "Binary files differ": the
// review read nothing of what the next agents committed. The patches
// planex reads for reviews (ShowCommit, DiffText) take no attribute from
// a work tree.
func TestRedTeamPatchIgnoresWorkTreeAttributes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRepo(t)
	base := strings.TrimSpace(mustGit(t, r.Root, "rev-parse", "HEAD"))
	os.WriteFile(filepath.Join(r.Root, ".gitattributes"), []byte("* -diff\n*.txt binary\n"), 0o644)
	mustGit(t, r.Root, "add", ".gitattributes")
	mustGit(t, r.Root, "commit", "-qm", "attributes")
	os.WriteFile(filepath.Join(r.Root, "src", "old.txt"), []byte("old\nslipped in\n"), 0o644)
	mustGit(t, r.Root, "commit", "-qam", "later task")
	head := strings.TrimSpace(mustGit(t, r.Root, "rev-parse", "HEAD"))

	show, err := r.ShowCommit(ctx, head)
	if err != nil {
		t.Fatal(err)
	}
	diff, err := r.DiffText(ctx, base, head)
	if err != nil {
		t.Fatal(err)
	}
	for name, patch := range map[string]string{"ShowCommit": show, "DiffText": diff} {
		if !strings.Contains(patch, "+slipped in") || strings.Contains(patch, "Binary files") {
			t.Errorf("%s hid the change behind the work tree's attributes:\n%s", name, patch)
		}
	}
}

// TestRedTeamShippedGitmodulesRunNothing: a repository ships a submodule
// whose .gitmodules runs a command on update (update = !cmd), fetches
// through an ext:: transport that runs one, points its path out of the
// tree and its URL like an option, beside an lfs filter and an .lfsconfig
// naming a file:// store. Everything planex's git does with a task's
// worktree (make it, snapshot what an agent wrote into the submodule's
// folder, reset it, list its ignored files, diff and show the commit) runs
// none of it: planex never updates or fetches submodules, and git reads no
// driver the repository's config does not name. Held before this test
// was written.
func TestRedTeamShippedGitmodulesRunNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEvil(t)
	r := newRepo(t)
	modules := "[submodule \"s\"]\n\tpath = s\n\turl = ext::" + e.prog("ext-url") + " %S\n\tupdate = !" + e.prog("update-cmd") + "\n" +
		"[submodule \"--upload-pack=" + e.prog("upload-pack") + "\"]\n\tpath = ../outside\n\turl = --upload-pack=" + e.prog("upload-pack-url") + "\n"
	os.WriteFile(filepath.Join(r.Root, ".gitmodules"), []byte(modules), 0o644)
	os.WriteFile(filepath.Join(r.Root, ".gitattributes"), []byte("* filter=lfs diff=lfs merge=lfs\n"), 0o644)
	os.WriteFile(filepath.Join(r.Root, ".lfsconfig"), []byte("[lfs]\n\turl = file://"+e.dir+"\n"), 0o644)
	mustGit(t, r.Root, "add", ".gitmodules", ".gitattributes", ".lfsconfig")
	head := strings.TrimSpace(mustGit(t, r.Root, "rev-parse", "HEAD"))
	mustGit(t, r.Root, "update-index", "--add", "--cacheinfo", "160000,"+head+",s")
	mustGit(t, r.Root, "commit", "-qm", "ships a submodule")
	base := strings.TrimSpace(mustGit(t, r.Root, "rev-parse", "HEAD"))

	wt, tree, changes := taskSnapshot(ctx, t, r, base, map[string]string{"s/planted.txt": "x\n", "src/new.txt": "new\n"})
	sha, err := r.CommitChanges(ctx, base, changes, "T1")
	if err != nil || tree == "" {
		t.Fatalf("commit: %v", err)
	}
	if _, err := r.ShowCommit(ctx, sha); err != nil {
		t.Fatal(err)
	}
	if _, err := r.DiffText(ctx, base, sha); err != nil {
		t.Fatal(err)
	}
	if err := r.ResetWorktree(ctx, wt, sha); err != nil {
		t.Fatal(err)
	}
	wtRepo, err := Open(ctx, wt)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := Ignored(ctx, wtRepo, 100); err != nil {
		t.Fatal(err)
	}
	if err := r.RemoveWorktree(ctx, wt); err != nil {
		t.Fatal(err)
	}
	e.assertNothingRan()
}

// zeroBlob writes a blob of n zero bytes to r (zlib keeps it small on
// disk) and returns its id.
func zeroBlob(t *testing.T, r *Repo, n int64) string {
	t.Helper()
	cmd := exec.Command("git", "hash-object", "-w", "--stdin")
	cmd.Dir = r.Root
	cmd.Stdin = io.LimitReader(zeros{}, n)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git hash-object: %v", err)
	}
	return strings.TrimSpace(string(out))
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// TestRedTeamRestoreDirBounded: whoever can push writes a state ref
// whose tree holds a blob larger than planex ever writes (tasks.csv of
// 64 MiB and a byte), the same 60 MiB blob under five names (300 MiB in
// all, one object on the remote), or 1,025 files. RestoreDir wrote each
// out whole into the session folder; now it refuses before writing
// anything, with ErrStateTooLarge naming the file (or the count) and
// the ref, and the session folder is not made. A state of planex's own
// size restores.
func TestRedTeamRestoreDirBounded(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		lines func(t *testing.T, r *Repo) []string // ls-tree lines for mktree besides session.json
		want  string                               // in the error; "" when it restores
	}{
		{"one file over the bound", func(t *testing.T, r *Repo) []string {
			return []string{"100644 blob " + zeroBlob(t, r, MaxStateFileBytes+1) + "\ttasks.csv"}
		}, `"tasks.csv" holds 67108865 bytes, more than 67108864`},
		{"the total over the bound", func(t *testing.T, r *Repo) []string {
			b := zeroBlob(t, r, 60<<20)
			var out []string
			for _, n := range []string{"a", "b", "c", "d", "e"} {
				out = append(out, "100644 blob "+b+"\t"+n+".csv")
			}
			return out
		}, "its files hold more than 268435456 bytes in all"},
		{"too many files", func(t *testing.T, r *Repo) []string {
			b := hashObject(t, r, "x")
			var out []string
			for i := range MaxStateEntries + 1 {
				out = append(out, fmt.Sprintf("100644 blob %s\tf%05d", b, i))
			}
			return out
		}, "more files than the 1024 planex restores"},
		{"planex's own size", func(t *testing.T, r *Repo) []string {
			return []string{"100644 blob " + zeroBlob(t, r, 1<<20) + "\ttasks.csv"}
		}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			r := newRepo(t)
			forgeStateRef(t, r, "refs/planex/state/7", c.lines(t, r)...)

			dest := filepath.Join(t.TempDir(), "s1")
			err := r.RestoreDir(ctx, "refs/planex/state/7", dest)
			if c.want == "" {
				if err != nil {
					t.Fatalf("RestoreDir: %v", err)
				}
				if fi, err := os.Stat(filepath.Join(dest, "tasks.csv")); err != nil || fi.Size() != 1<<20 {
					t.Errorf("tasks.csv not restored: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrStateTooLarge) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "refs/planex/state/7") {
				t.Errorf("RestoreDir = %v, want ErrStateTooLarge with %q and the ref", err, c.want)
			}
			if _, err := os.Lstat(dest); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the session folder was made for a refused state: %v", err)
			}
		})
	}
}
