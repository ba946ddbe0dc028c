package gitrepo

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestRedTeamGitResetWorktreeLeavesNothingBehind: a worktree kept for the
// next task is reset to that task's base whatever the last agent left in
// it, and the reset neither runs anything the agent planted nor writes
// outside the worktree.
func TestRedTeamGitResetWorktreeLeavesNothingBehind(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		leave func(t *testing.T, wt, outside string, e *evil)
	}{
		{"untracked, ignored and nested repository files", func(t *testing.T, wt, _ string, _ *evil) {
			os.WriteFile(filepath.Join(wt, ".gitignore"), []byte("*.log\nbuild/\n"), 0o644)
			os.MkdirAll(filepath.Join(wt, "build"), 0o755)
			os.WriteFile(filepath.Join(wt, "build", "out.bin"), []byte("x"), 0o644)
			os.WriteFile(filepath.Join(wt, "src", "debug.log"), []byte("x"), 0o644)
			os.WriteFile(filepath.Join(wt, "src", "left.txt"), []byte("x"), 0o644)
			cleanGit(t, wt, "init", "-q", filepath.Join(wt, "nested"))
		}},
		{"tracked files changed and deleted", func(t *testing.T, wt, _ string, _ *evil) {
			os.WriteFile(filepath.Join(wt, "src", "old.txt"), []byte("changed\n"), 0o755)
			os.Remove(filepath.Join(wt, "README.md"))
		}},
		{"its .git file pointed at a git directory of the agent's", func(t *testing.T, wt, _ string, e *evil) {
			own := filepath.Join(t.TempDir(), "own.git")
			cleanGit(t, wt, "init", "-q", "--bare", own)
			appendFile(t, filepath.Join(own, "config"), e.config("own-"))
			e.hooks(filepath.Join(own, "hooks"), "own-hook-")
			os.WriteFile(filepath.Join(wt, ".git"), []byte("gitdir: "+own+"\n"), 0o644)
		}},
		{"a tracked folder replaced by a symlink out of the worktree", func(t *testing.T, wt, outside string, _ *evil) {
			os.RemoveAll(filepath.Join(wt, "src"))
			if err := os.Symlink(outside, filepath.Join(wt, "src")); err != nil {
				t.Fatal(err)
			}
		}},
		{"untracked attributes re-encoding what the next checkout writes", func(t *testing.T, wt, _ string, _ *evil) {
			os.WriteFile(filepath.Join(wt, ".gitattributes"), []byte("* text eol=crlf\n"), 0o644)
			os.WriteFile(filepath.Join(wt, "src", ".gitattributes"), []byte("*.txt text working-tree-encoding=UTF-16LE\n"), 0o644)
		}},
		{"ignored attributes and modules files", func(t *testing.T, wt, _ string, _ *evil) {
			os.WriteFile(filepath.Join(wt, ".gitignore"), []byte(".gitattributes\n.gitmodules\n"), 0o644)
			os.WriteFile(filepath.Join(wt, ".gitattributes"), []byte("* text eol=crlf\n"), 0o644)
			os.WriteFile(filepath.Join(wt, ".gitmodules"), []byte("[submodule \"x\"]\n\tpath = src\n\turl = ../evil\n"), 0o644)
		}},
		{"attributes naming the repository's filters", func(t *testing.T, wt, _ string, _ *evil) {
			os.WriteFile(filepath.Join(wt, ".gitattributes"), []byte("* filter=evil diff=evil\n"), 0o644)
			os.WriteFile(filepath.Join(wt, "src", "old.txt"), []byte("changed\n"), 0o644)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			r := newRepo(t)
			e := newEvil(t)
			appendFile(t, filepath.Join(r.CommonDir, "config"), e.config("repo-"))
			head, _ := r.Head(ctx)
			wt := r.WorktreeDir("s1", "T1")
			if err := r.AddWorktree(ctx, wt, head); err != nil {
				t.Fatal(err)
			}
			defer r.RemoveWorktree(ctx, wt)
			// The next task's base: one more file.
			os.WriteFile(filepath.Join(wt, "src", "next.txt"), []byte("next\n"), 0o644)
			_, changes, err := r.Snapshot(ctx, wt, head)
			if err != nil {
				t.Fatal(err)
			}
			next, err := r.CommitChanges(ctx, head, changes, "next")
			if err != nil {
				t.Fatal(err)
			}
			outside := t.TempDir()
			c.leave(t, wt, outside, e)

			if err := r.ResetWorktree(ctx, wt, next); err != nil {
				t.Fatal(err)
			}
			if got := strings.Fields(cleanGit(t, wt, "ls-files", "-co")); strings.Join(got, " ") != "README.md src/next.txt src/old.txt" {
				t.Errorf("files after the reset = %v", got)
			}
			if b, _ := os.ReadFile(filepath.Join(wt, "src", "old.txt")); string(b) != "old\n" {
				t.Errorf("src/old.txt = %q", b)
			}
			// What the reset's checkout wrote is the blob, byte for byte.
			if b, _ := os.ReadFile(filepath.Join(wt, "src", "next.txt")); string(b) != "next\n" {
				t.Errorf("src/next.txt = %q, want the committed bytes", b)
			}
			if fi, err := os.Lstat(filepath.Join(wt, "src")); err != nil || !fi.IsDir() {
				t.Errorf("src is not a folder: %v", err)
			}
			if ents, _ := os.ReadDir(outside); len(ents) != 0 {
				t.Errorf("the reset wrote outside the worktree: %v", ents)
			}
			if got := cleanGit(t, wt, "status", "--porcelain", "--ignored"); got != "" {
				t.Errorf("status after the reset:\n%s", got)
			}
			// The next snapshot sees exactly the next task's work.
			os.WriteFile(filepath.Join(wt, "src", "task.txt"), []byte("task\n"), 0o644)
			if _, changes, err := r.Snapshot(ctx, wt, next); err != nil || strings.Join(Paths(changes), " ") != "src/task.txt" {
				t.Errorf("snapshot after the reset = %v, %v", Paths(changes), err)
			}
			e.assertNothingRan()
		})
	}
}

// TestRedTeamGitSnapshotSeesChangesWithRestoredTimes: an agent that
// rewrites a file with content of the same size and puts its modification
// time back cannot hide the change from the snapshot, even when the
// repository's config tells git to ignore change times: the private
// index's stat data is trusted only with the change time too.
func TestRedTeamGitSnapshotSeesChangesWithRestoredTimes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRepo(t)
	// The repository's config asks git to ignore the change time.
	appendFile(t, filepath.Join(r.CommonDir, "config"), "[core]\n\ttrustctime = false\n\tcheckstat = minimal\n")
	head, _ := r.Head(ctx)
	wt := r.WorktreeDir("s1", "T1")
	if err := r.AddWorktree(ctx, wt, head); err != nil {
		t.Fatal(err)
	}
	defer r.RemoveWorktree(ctx, wt)
	// An old modification time, recorded in the private index by a
	// snapshot that finds nothing: the entry is then trusted on stat data
	// (it is not "racily clean").
	p := filepath.Join(wt, "src", "old.txt")
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
	// The change time Chtimes gave is no later than now.
	changed := time.Now()
	if _, changes, err := r.Snapshot(ctx, wt, head); err != nil || len(changes) != 0 {
		t.Fatalf("first snapshot = %v, %v", changes, err)
	}
	// Git keeps change times to the second: the rewrite must fall in a
	// later second than that change (the margin covers the kernel's
	// coarser file clock). Too short a wait fails the test, never passes it.
	time.Sleep(time.Until(changed.Truncate(time.Second).Add(time.Second + 30*time.Millisecond)))
	if err := os.WriteFile(p, []byte("new\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
	_, changes, err := r.Snapshot(ctx, wt, head)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(Paths(changes), " "); got != "src/old.txt" {
		t.Errorf("changes = %q, want src/old.txt", got)
	}
}

func TestResetWorktreeRefusesWhatIsNotAKeptWorktree(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRepo(t)
	head, _ := r.Head(ctx)
	wt := r.WorktreeDir("s1", "T1")
	cases := []struct {
		name, want string
		setup      func()
	}{
		{"no worktree", "is not a worktree", func() {}},
		{"no private index", "no private index", func() {
			if err := r.AddWorktree(ctx, wt, head); err != nil {
				t.Fatal(err)
			}
			os.Remove(indexFile(wt))
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.setup()
			if err := r.ResetWorktree(ctx, wt, head); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("ResetWorktree = %v, want an error containing %q", err, c.want)
			}
		})
	}
	if err := r.RemoveWorktree(ctx, wt); err != nil {
		t.Fatal(err)
	}
}

func TestStreamBlobs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRepo(t)
	readme := strings.TrimSpace(cleanGit(t, r.Root, "rev-parse", "HEAD:README.md"))
	old := strings.TrimSpace(cleanGit(t, r.Root, "rev-parse", "HEAD:src/old.txt"))
	tree := strings.TrimSpace(cleanGit(t, r.Root, "rev-parse", "HEAD^{tree}"))
	cases := []struct {
		name string
		shas []string
		// read is how many bytes of each blob fn reads (-1: all).
		read    int
		want    []string
		wantErr string
	}{
		{"none", nil, -1, nil, ""},
		{"two blobs read whole", []string{readme, old}, -1, []string{"hello\n", "old\n"}, ""},
		{"two blobs read in part, the rest skipped", []string{readme, old, readme}, 2, []string{"he", "ol", "he"}, ""},
		{"a tree", []string{tree}, -1, nil, "not a blob"},
		{"a missing object", []string{readme, strings.Repeat("1", 40)}, -1, nil, "not a blob"},
		{"not an id", []string{"HEAD"}, -1, nil, "is not an object id"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			err := r.StreamBlobs(ctx, c.shas, func(sha string, content io.Reader) error {
				if c.read >= 0 {
					content = io.LimitReader(content, int64(c.read))
				}
				b, err := io.ReadAll(content)
				got = append(got, string(b))
				return err
			})
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("StreamBlobs = %v, want an error containing %q", err, c.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(got, c.want) {
				t.Fatalf("StreamBlobs = %q, %v; want %q", got, err, c.want)
			}
		})
	}
}

// TestRedTeamGitResetEmptiesSubmoduleFolders: git's clean and checkout
// never enter a submodule's folder. An agent that makes a repository of
// its own in the worktree has it recorded by the snapshot as a
// submodule, and one that writes into the folder of a submodule the base
// holds (unpopulated in a task worktree) writes where git never looks:
// either way what it left reached the next task's worktree, a failed
// task's too, for that task's agent and test command to find. After the
// reset the first is gone and the second is an empty folder again; the
// next snapshot sees only the next task's work.
func TestRedTeamGitResetEmptiesSubmoduleFolders(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		leave   func(t *testing.T, wt string)
		gone    string
		emptied string
	}{
		{"a repository of the agent's, snapshotted", func(t *testing.T, wt string) {
			own := filepath.Join(wt, "src", "own")
			cleanGit(t, wt, "init", "-q", own)
			os.WriteFile(filepath.Join(own, "conftest.py"), []byte("planted\n"), 0o644)
			cleanGit(t, own, "add", ".")
			cleanGit(t, own, "-c", "user.name=a", "-c", "user.email=b@c", "commit", "-qm", "own")
		}, "src/own", ""},
		{"files in the base's unpopulated submodule", func(t *testing.T, wt string) {
			lib := filepath.Join(wt, "vendor", "lib")
			os.WriteFile(filepath.Join(lib, "conftest.py"), []byte("planted\n"), 0o644)
			os.MkdirAll(filepath.Join(lib, "deep"), 0o755)
			os.WriteFile(filepath.Join(lib, "deep", "x.sh"), []byte("planted\n"), 0o755)
		}, "", "vendor/lib"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			r := newRepo(t)
			head, _ := r.Head(ctx)
			// The base holds a submodule, as a repository with one does.
			mustGit(t, r.Root, "update-index", "--add", "--cacheinfo", "160000,"+head+",vendor/lib")
			mustGit(t, r.Root, "commit", "-qm", "a submodule")
			base, _ := r.Head(ctx)
			wt := r.WorktreeDir("s1", "T1")
			if err := r.AddWorktree(ctx, wt, base); err != nil {
				t.Fatal(err)
			}
			defer r.RemoveWorktree(ctx, wt)
			c.leave(t, wt)
			// planex snapshots every task's worktree, failed or not.
			if _, _, err := r.Snapshot(ctx, wt, base); err != nil {
				t.Fatal(err)
			}
			if err := r.ResetWorktree(ctx, wt, base); err != nil {
				t.Fatal(err)
			}
			if c.gone != "" {
				if _, err := os.Lstat(filepath.Join(wt, c.gone)); err == nil {
					t.Errorf("%s is still in the worktree after the reset", c.gone)
				}
			}
			if c.emptied != "" {
				if ents, err := os.ReadDir(filepath.Join(wt, c.emptied)); err != nil || len(ents) != 0 {
					t.Errorf("%s after the reset: %v, %v; want an empty folder", c.emptied, ents, err)
				}
			}
			os.WriteFile(filepath.Join(wt, "src", "task.txt"), []byte("task\n"), 0o644)
			if _, changes, err := r.Snapshot(ctx, wt, base); err != nil || strings.Join(Paths(changes), " ") != "src/task.txt" {
				t.Errorf("snapshot after the reset = %v, %v", Paths(changes), err)
			}
		})
	}
}

// TestStaleIndexLockOfAStoppedRun: planex stopped (SIGTERM, Ctrl-C)
// while git staged a task's changes kills that git, which leaves its
// lock beside the worktree's private index; the run's --continue then
// failed every snapshot there ("index.lock: File exists"). No git uses
// a worktree's private index while planex makes or resets the worktree,
// so a lock found then is a dead process's and goes.
func TestStaleIndexLockOfAStoppedRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRepo(t)
	head, _ := r.Head(ctx)
	for _, reuse := range []string{"reset", "made again"} {
		wt := r.WorktreeDir("s1", "T-"+strings.ReplaceAll(reuse, " ", "-"))
		if err := r.AddWorktree(ctx, wt, head); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(indexFile(wt)+".lock", nil, 0o600); err != nil {
			t.Fatal(err)
		}
		switch reuse {
		case "reset":
			if err := r.ResetWorktree(ctx, wt, head); err != nil {
				t.Fatalf("%s: %v", reuse, err)
			}
		default:
			if err := os.RemoveAll(wt); err != nil {
				t.Fatal(err)
			}
			if err := r.AddWorktree(ctx, wt, head); err != nil {
				t.Fatalf("%s: %v", reuse, err)
			}
		}
		if err := os.WriteFile(filepath.Join(wt, "new.txt"), []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, changes, err := r.Snapshot(ctx, wt, head); err != nil || len(changes) != 1 {
			t.Errorf("%s: Snapshot after a stopped run = %v, %v", reuse, changes, err)
		}
	}
}
