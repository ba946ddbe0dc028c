//go:build linux

package gitrepo

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestRedTeamConfigIncludesAFIFO: whoever could write the git directory
// adds an include (include.path, includeIf.<condition>.path) naming a
// FIFO no one writes, directly, relative to the config file, or from a
// file the config includes; or makes the repository's config file a
// FIFO itself. git reads an included file while it reads its
// configuration, before anything else: every git planex ran waited on
// it, and the job hung until its time-out. Now every call first checks
// the config files git will read for it (the repository's, the
// worktree's, and what they include) and refuses one that exists and is
// not a regular file (ErrConfigNotAFile); a regular or missing included
// file is git's to read.
func TestRedTeamConfigIncludesAFIFO(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		refused bool
	}{
		{"include.path", true},
		{"includeIf.gitdir", true},
		{"relative include", true},
		{"nested include", true},
		{"config is a FIFO", true},
		{"regular include", false},
		{"missing include", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newRepo(t)
			dir := t.TempDir()
			fifo := makeFIFO(t, dir)
			regular := filepath.Join(dir, "regular")
			if err := os.WriteFile(regular, []byte("[core]\n\tquotePath = false\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			config := filepath.Join(r.CommonDir, "config")
			switch tc.name {
			case "include.path":
				mustGit(t, r.Root, "config", "include.path", fifo)
			case "includeIf.gitdir":
				mustGit(t, r.Root, "config", "includeIf.gitdir:/.path", fifo)
			case "relative include":
				if err := syscall.Mkfifo(filepath.Join(r.CommonDir, "more"), 0o600); err != nil {
					t.Fatal(err)
				}
				mustGit(t, r.Root, "config", "include.path", "more")
			case "nested include":
				if err := os.WriteFile(regular, []byte("[include]\n\tpath = "+fifo+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				mustGit(t, r.Root, "config", "include.path", regular)
			case "config is a FIFO":
				os.Remove(config)
				if err := syscall.Mkfifo(config, 0o600); err != nil {
					t.Fatal(err)
				}
			case "regular include":
				mustGit(t, r.Root, "config", "include.path", regular)
			case "missing include":
				mustGit(t, r.Root, "config", "include.path", filepath.Join(dir, "missing"))
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			_, headErr := r.Head(ctx)
			_, dirtyErr := r.Dirty(ctx)
			if ctx.Err() != nil {
				t.Fatalf("git waited on the FIFO: %v, %v", headErr, dirtyErr)
			}
			for _, err := range []error{headErr, dirtyErr} {
				if errors.Is(err, ErrConfigNotAFile) != tc.refused {
					t.Errorf("err = %v, want refused %v", err, tc.refused)
				}
			}
		})
	}
}

// TestRedTeamGitDirFileIsAFIFO: as above, for the files git opens by
// name in the git directory: a FIFO in place of packed-refs hung every
// ref read, of shallow or objects/info/alternates every log, of
// info/exclude every status, of the index every index read. Every call
// naming the git directory refuses it now (ErrGitDirFileNotRegular).
func TestRedTeamGitDirFileIsAFIFO(t *testing.T) {
	t.Parallel()
	for _, rel := range []string{"packed-refs", "shallow", "info/exclude", "objects/info/alternates", "index"} {
		t.Run(rel, func(t *testing.T) {
			t.Parallel()
			r := newRepo(t)
			p := filepath.Join(r.CommonDir, filepath.FromSlash(rel))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			os.Remove(p)
			if err := syscall.Mkfifo(p, 0o600); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			_, headErr := r.Head(ctx)
			_, dirtyErr := r.Dirty(ctx)
			_, logErr := r.Git(ctx, "", "log", "-1", "--format=%H")
			if ctx.Err() != nil {
				t.Fatalf("git waited on the FIFO: %v, %v, %v", headErr, dirtyErr, logErr)
			}
			for _, err := range []error{headErr, dirtyErr, logErr} {
				if !errors.Is(err, ErrGitDirFileNotRegular) {
					t.Errorf("err = %v, want ErrGitDirFileNotRegular", err)
				}
			}
		})
	}
}

// makeFIFO makes a FIFO named fifo in dir, which nobody writes, and
// returns its path.
func makeFIFO(t *testing.T, dir string) string {
	t.Helper()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	return fifo
}

// fifoAt makes a FIFO nobody writes at p, its folder made and anything
// there before removed: the state a git-directory writer or an agent
// plants in the FIFO attacks.
func fifoAt(t *testing.T, p string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	os.Remove(p)
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Fatal(err)
	}
}

// writeAt writes text to p, its folder made.
func writeAt(t *testing.T, p, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// settledRepo is a new repository whose git-directory folders planex has
// looked at once and, past the racy window, remembers as clean: a FIFO
// planted after must be seen all the same. It returns the head.
func settledRepo(t *testing.T) (*Repo, string) {
	t.Helper()
	r := newRepo(t)
	head, err := r.Head(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	settle()
	if _, err := r.Head(context.Background()); err != nil {
		t.Fatal(err)
	}
	return r, head
}

// taskWorktree is a new repository with a task's worktree at its head,
// where an agent's attack files are planted.
func taskWorktree(ctx context.Context, t *testing.T) (r *Repo, head, dir string) {
	t.Helper()
	r = newRepo(t)
	head, err := r.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	dir = filepath.Join(t.TempDir(), "wt")
	if err := r.AddWorktree(ctx, dir, head); err != nil {
		t.Fatal(err)
	}
	return r, head, dir
}
