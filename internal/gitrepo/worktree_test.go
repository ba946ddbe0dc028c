package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/planexhq/planex/internal/safefile"
)

func TestWorktreeLivesOutsideTheRepository(t *testing.T) {
	// Not parallel: one row sets TMPDIR, which the OS temp dir is read from.
	ctx := context.Background()
	for _, c := range []struct {
		name, runnerTemp string
	}{
		{"RUNNER_TEMP", "runner"},
		{"OS temp dir", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRepo(t)
			want := t.TempDir()
			if c.runnerTemp != "" {
				want = filepath.Join(want, c.runnerTemp)
				os.Mkdir(want, 0o755)
				r.TempDir = want
			} else {
				r.TempDir = ""
				t.Setenv("TMPDIR", want)
			}
			head, _ := r.Head(ctx)
			wt := r.WorktreeDir("s1", "T1")
			base := filepath.Dir(wt)
			if filepath.Dir(base) != want || !strings.HasPrefix(filepath.Base(base), "planex-") {
				t.Fatalf("WorktreeDir = %s, want it in a planex folder directly under %s", wt, want)
			}
			if within(r.Root, wt) || within(r.CommonDir, wt) {
				t.Fatalf("WorktreeDir %s is inside the repository", wt)
			}
			if err := r.AddWorktree(ctx, wt, head); err != nil {
				t.Fatal(err)
			}
			fi, err := os.Stat(base)
			if err != nil || fi.Mode().Perm() != 0o700 {
				t.Errorf("worktree folder %s: %v, %v; want mode 0700", base, fi.Mode(), err)
			}
			if _, err := os.Stat(filepath.Join(wt, "README.md")); err != nil {
				t.Errorf("worktree not checked out: %v", err)
			}
			// Another repository gets a folder of its own.
			o := newRepo(t)
			o.TempDir = r.TempDir
			if o.WorktreeDir("s1", "T1") == wt {
				t.Error("two repositories share a worktree path")
			}
			if err := r.RemoveWorktree(ctx, wt); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(wt); !os.IsNotExist(err) {
				t.Errorf("worktree left behind: %v", err)
			}
		})
	}
}

func TestWorktreeFolderIsPrivate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cases := []struct {
		name    string
		plant   func(t *testing.T, base string)
		wantErr string
	}{
		{"a readable mode is tightened", func(t *testing.T, base string) { os.Mkdir(base, 0o755); os.Chmod(base, 0o755) }, ""},
		// Others could have put entries into it already.
		{"a folder others may write is refused", func(t *testing.T, base string) { os.Mkdir(base, 0o777); os.Chmod(base, 0o777) }, "writable by group or others"},
		{"a planted symlink is refused", func(t *testing.T, base string) { os.Symlink(t.TempDir(), base) }, "symbolic link"},
		// A link to a folder holding a worktree's name: the stale-worktree
		// removal must not follow it there (checked below).
		{"a planted symlink leads no removal", func(t *testing.T, base string) {
			victim := t.TempDir()
			os.MkdirAll(filepath.Join(victim, "s1.T1"), 0o755)
			os.WriteFile(filepath.Join(victim, "s1.T1", "keep"), []byte("mine"), 0o644)
			os.Symlink(victim, base)
		}, "symbolic link"},
		{"a planted file is refused", func(t *testing.T, base string) { os.WriteFile(base, nil, 0o644) }, "is a regular file"},
	}
	if os.Getuid() == 0 {
		cases = append(cases, struct {
			name    string
			plant   func(t *testing.T, base string)
			wantErr string
		}{"another user's folder is refused", func(t *testing.T, base string) { os.Mkdir(base, 0o700); os.Chown(base, 4242, 4242) }, "belongs to uid 4242"})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := newRepo(t)
			head, _ := r.Head(ctx)
			wt := r.WorktreeDir("s1", "T1")
			base := filepath.Dir(wt)
			c.plant(t, base)
			err := r.AddWorktree(ctx, wt, head)
			if c.wantErr == "" {
				fi, _ := os.Lstat(base)
				if err != nil || fi.Mode().Perm() != 0o700 {
					t.Fatalf("AddWorktree = %v, folder mode %v; want success and 0700", err, fi.Mode())
				}
				return
			}
			if !errors.Is(err, safefile.ErrNotPrivate) || !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("AddWorktree = %v, want ErrNotPrivate saying %q", err, c.wantErr)
			}
			if err := r.RemoveWorktree(ctx, wt); !errors.Is(err, safefile.ErrNotPrivate) {
				t.Errorf("RemoveWorktree = %v, want ErrNotPrivate", err)
			}
			if target, err := os.Readlink(base); err == nil && strings.Contains(c.name, "removal") {
				if _, err := os.Stat(filepath.Join(target, "s1.T1", "keep")); err != nil {
					t.Errorf("a file below the planted link's target was removed: %v", err)
				}
			}
		})
	}
}

// TestWorktreeStaleIsReplaced: a worktree left by an interrupted run, or
// one whose directory the OS already cleaned from the temp dir, is
// replaced, leaving exactly one admin entry; removing it leaves none.
func TestWorktreeStaleIsReplaced(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRepo(t)
	head, _ := r.Head(ctx)
	wt := r.WorktreeDir("s1", "T1")
	admins := func() []string {
		a, err := r.adminDirsFor(wt)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	if err := r.AddWorktree(ctx, wt, head); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(wt, "leftover.txt"), []byte("from the killed run\n"), 0o644)
	os.Chmod(filepath.Join(wt, "src"), 0o500) // an agent took the write bit off
	if err := r.AddWorktree(ctx, wt, head); err != nil {
		t.Fatalf("replacing a stale worktree: %v", err)
	}
	if _, err := os.Stat(filepath.Join(wt, "leftover.txt")); !os.IsNotExist(err) {
		t.Errorf("the stale worktree's files survived: %v", err)
	}
	if a := admins(); len(a) != 1 {
		t.Errorf("admin entries = %v, want one", a)
	}
	os.RemoveAll(wt) // the temp dir was cleaned under planex
	if err := r.AddWorktree(ctx, wt, head); err != nil {
		t.Fatalf("recreating a vanished worktree: %v", err)
	}
	if a := admins(); len(a) != 1 {
		t.Errorf("admin entries = %v, want one", a)
	}
	if _, _, err := r.Snapshot(ctx, wt, head); err != nil {
		t.Fatal(err)
	}
	if err := r.RemoveWorktree(ctx, wt); err != nil {
		t.Fatal(err)
	}
	if a := admins(); len(a) != 0 {
		t.Errorf("admin entries after removal = %v", a)
	}
	if out := mustGit(t, r.Root, "worktree", "list", "--porcelain"); strings.Count(out, "worktree ") != 1 {
		t.Errorf("git still lists planex's worktree:\n%s", out)
	}
}

// TestRedTeamGitSnapshotIgnoresRewrittenGitFile: the agent points its
// worktree's .git file at a git dir of its own, with hooks, fsmonitor, a
// filter and an index of its choosing. planex's snapshot still reads the
// worktree through the real admin entry, runs none of it, and records
// exactly the files on disk.
func TestRedTeamGitSnapshotIgnoresRewrittenGitFile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRepo(t)
	head, _ := r.Head(ctx)
	wt := r.WorktreeDir("s1", "T1")
	if err := r.AddWorktree(ctx, wt, head); err != nil {
		t.Fatal(err)
	}
	admin, err := r.worktreeGitDir(wt)
	if err != nil {
		t.Fatal(err)
	}
	e := newEvil(t)
	// The agent's git dir: a full clone, so that trusting it would work.
	own := filepath.Join(t.TempDir(), "own.git")
	cleanGit(t, r.Root, "clone", "-q", "--bare", r.Root, own)
	appendFile(t, filepath.Join(own, "config"), "[core]\n\tbare = false\n"+e.config("own-"))
	e.hooks(filepath.Join(own, "hooks"), "own-hook-")
	appendFile(t, filepath.Join(own, "info", "attributes"), "* filter=evil\n")
	if err := os.WriteFile(filepath.Join(wt, ".git"), []byte("gitdir: "+own+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(wt, "src", "task.txt"), []byte("task work\n"), 0o644)

	tree, changes, err := r.Snapshot(ctx, wt, head)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(Paths(changes), " "); got != "src/task.txt" {
		t.Errorf("changes = %q, want src/task.txt", got)
	}
	if got := cleanGit(t, r.Root, "cat-file", "-p", tree+":src/task.txt"); got != "task work\n" {
		t.Errorf("recorded content = %q", got)
	}
	if err := r.RemoveWorktree(ctx, wt); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(admin); !os.IsNotExist(err) {
		t.Errorf("the admin entry survived the rewritten .git file: %v", err)
	}
	if _, err := os.Stat(filepath.Join(own, "HEAD")); err != nil {
		t.Errorf("removing the worktree followed its .git file into the agent's git dir: %v", err)
	}
	e.assertNothingRan()
}

// TestRedTeamGitSnapshotIgnoresCraftedIndex: the agent stages content
// of its choosing in its worktree's own index and hides it from `git add`
// (skip-worktree). planex's snapshot uses an index of its own seeded from
// the base tree, so what is committed is what is on disk.
func TestRedTeamGitSnapshotIgnoresCraftedIndex(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRepo(t)
	head, _ := r.Head(ctx)
	wt := r.WorktreeDir("s1", "T1")
	if err := r.AddWorktree(ctx, wt, head); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(wt, "src", "task.txt"), []byte("on disk\n"), 0o644)
	crafted := filepath.Join(t.TempDir(), "crafted.txt")
	os.WriteFile(crafted, []byte("smuggled\n"), 0o644)
	blob := strings.TrimSpace(cleanGit(t, wt, "hash-object", "-w", crafted))
	cleanGit(t, wt, "update-index", "--add", "--cacheinfo", "100644,"+blob+",src/task.txt")
	cleanGit(t, wt, "update-index", "--skip-worktree", "src/task.txt")
	cleanGit(t, wt, "update-index", "--add", "--cacheinfo", "100644,"+blob+",outside.txt")
	cleanGit(t, wt, "update-index", "--skip-worktree", "outside.txt")

	tree, changes, err := r.Snapshot(ctx, wt, head)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(Paths(changes), " "); got != "src/task.txt" {
		t.Errorf("changes = %q, want only src/task.txt", got)
	}
	if got := cleanGit(t, r.Root, "cat-file", "-p", tree+":src/task.txt"); got != "on disk\n" {
		t.Errorf("recorded content = %q, want the file on disk", got)
	}
}

// TestRemoveWorktreeNeverFollowsSymlinks: a worktree directory replaced
// by a symlink to somewhere else is unlinked, not emptied.
func TestRemoveWorktreeNeverFollowsSymlinks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRepo(t)
	head, _ := r.Head(ctx)
	wt := r.WorktreeDir("s1", "T1")
	if err := r.AddWorktree(ctx, wt, head); err != nil {
		t.Fatal(err)
	}
	precious := t.TempDir()
	os.WriteFile(filepath.Join(precious, "keep.txt"), []byte("keep\n"), 0o644)
	os.RemoveAll(wt)
	if err := os.Symlink(precious, wt); err != nil {
		t.Fatal(err)
	}
	if err := r.RemoveWorktree(ctx, wt); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(precious, "keep.txt")); err != nil {
		t.Errorf("the symlink's target was emptied: %v", err)
	}
	if _, err := os.Lstat(wt); err == nil {
		t.Error("the symlink is still there")
	}
}

// TestConcurrentWorktreesDoNotRace adds, snapshots and removes many task
// worktrees side by side, as a wide wave does, through two Repo values on
// the same repository. Unserialised, `git worktree add` fails here with
// "failed to read …/worktrees/<other>/commondir". Two rounds of 16 catch
// that about as often as twelve rounds of 6 did, for less than half the
// git processes: with the lock switched off, 16x2 failed in 65 of 76 runs
// and 6x12 in 77 of 96 (2 shared cores, load average 3 to 14, November
// 2026). Wider rounds put more adds side by side, which is what races.
func TestConcurrentWorktreesDoNotRace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRepo(t)
	other, err := Open(ctx, r.Root)
	if err != nil {
		t.Fatal(err)
	}
	other.TempDir = r.TempDir
	head, _ := r.Head(ctx)
	const rounds, width = 2, 16
	for round := 0; round < rounds; round++ {
		var wg sync.WaitGroup
		errs := make(chan error, width*3)
		for i := 0; i < width; i++ {
			repo := r
			if i%2 == 1 {
				repo = other
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				wt := repo.WorktreeDir(fmt.Sprintf("s%d", round), fmt.Sprintf("T%d", i))
				if err := repo.AddWorktree(ctx, wt, head); err != nil {
					errs <- err
					return
				}
				os.WriteFile(filepath.Join(wt, fmt.Sprintf("t%d.txt", i)), []byte("x\n"), 0o644)
				if _, changes, err := repo.Snapshot(ctx, wt, head); err != nil || len(changes) != 1 {
					errs <- fmt.Errorf("snapshot of T%d: %v %v", i, changes, err)
				}
				if err := repo.RemoveWorktree(ctx, wt); err != nil {
					errs <- err
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Errorf("round %d: %v", round, err)
		}
		if t.Failed() {
			return
		}
	}
	ents, _ := os.ReadDir(filepath.Join(r.CommonDir, "worktrees"))
	if len(ents) != 0 {
		t.Errorf("%d worktree admin entries left behind", len(ents))
	}
}

// TestOtherWorktrees: from a linked worktree, the main work tree and the
// user's other linked worktree are listed; planex's own task worktrees,
// the worktree itself and one whose folder is gone are not.
func TestOtherWorktrees(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	main := newRepo(t)
	head, _ := main.Head(ctx)
	dir := t.TempDir()
	feature, other, gone := filepath.Join(dir, "feature"), filepath.Join(dir, "other"), filepath.Join(dir, "gone")
	for _, wt := range []string{feature, other, gone} {
		mustGit(t, main.Root, "worktree", "add", "-q", "--detach", wt)
	}
	if err := os.RemoveAll(gone); err != nil {
		t.Fatal(err)
	}
	if err := main.AddWorktree(ctx, main.WorktreeDir("s1", "T1"), head); err != nil {
		t.Fatal(err)
	}
	r, err := Open(ctx, feature)
	if err != nil {
		t.Fatal(err)
	}
	r.TempDir = main.TempDir
	// Listed in the git directory's order, which the file system decides.
	sorted := func(ps []string) string { ps = slices.Clone(ps); slices.Sort(ps); return strings.Join(ps, " ") }
	got := OtherWorktrees(r)
	want := []string{main.Root, other}
	if sorted(got) != sorted(want) {
		t.Errorf("OtherWorktrees = %q, want %q", got, want)
	}
	if got := OtherWorktrees(main); sorted(got) != sorted([]string{feature, other}) {
		t.Errorf("from the main work tree: %q, want the two linked ones", got)
	}
}
