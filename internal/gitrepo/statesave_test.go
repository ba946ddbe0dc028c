package gitrepo

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestSaveOnRoundTrip: a state saved by one fast-import comes back file
// for file, in both object formats, whatever its files are named: a name
// holding a line break, a quote, a backslash or a fast-import command
// ("\nM 100644 inline x") is a file of that name, not a command of the
// stream, and an executable file keeps its mode as git add kept it.
func TestSaveOnRoundTrip(t *testing.T) {
	t.Parallel()
	names := map[string]string{
		"record.json":           `{"state":"running"}` + "\n",
		"logs/task 1.log":       "line\n",
		"q\"uote\\back":         "x",
		"nl\nM 100644 inline x": "injected?",
		"tab\there":             "",
		"ünï/cödé.txt":          strings.Repeat("z", 70<<10),
		"deep/a/b/c/d.txt":      "d",
	}
	if runtime.GOOS == "windows" {
		t.Skip("file names with line breaks and quotes are not allowed on Windows")
	}
	for _, format := range formats {
		t.Run(string(format), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			r := newFormatRepo(t, format)
			dir := t.TempDir()
			for name, body := range names {
				p := filepath.Join(dir, filepath.FromSlash(name))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(filepath.Join(dir, "run.sh"), []byte("#!/bin/sh\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			const ref = "refs/planex/state/7"
			first, err := StateAt(r, ref).SaveOn(ctx, Saved{}, dir, "planex: one\nsecond line")
			if err != nil {
				t.Fatal(err)
			}
			if !format.IsID(first.Commit) || !format.IsID(first.Tree) {
				t.Fatalf("SaveOn = %+v: not %s ids", first, format)
			}
			if got, err := StateAt(r, ref).Read(ctx); err != nil || got != first {
				t.Fatalf("Read = %+v, %v; want %+v", got, err, first)
			}
			if msg, _ := r.Git(ctx, "", "log", "-1", "--format=%B", first.Commit); strings.TrimSpace(msg) != "planex: one\nsecond line" {
				t.Errorf("message = %q", msg)
			}
			tree, err := ListState(ctx, r, ref)
			if err != nil {
				t.Fatal(err)
			}
			if tree.Refusal() != nil {
				t.Fatalf("the saved state is refused: %v", tree.Refusal())
			}
			if len(tree.Files) != len(names)+1 {
				t.Errorf("saved %d files, want %d: %v", len(tree.Files), len(names)+1, tree.Files)
			}
			if f := tree.Files["run.sh"]; f.Mode != "100755" {
				t.Errorf("run.sh saved with mode %q, want 100755", f.Mode)
			}
			out := t.TempDir()
			if err := tree.Restore(ctx, r, out); err != nil {
				t.Fatal(err)
			}
			for name, body := range names {
				got, err := os.ReadFile(filepath.Join(out, filepath.FromSlash(name)))
				if err != nil || !bytes.Equal(got, []byte(body)) {
					t.Errorf("%q restored as %q, %v", name, abbrevBytes(got), err)
				}
			}
			if _, err := os.Stat(filepath.Join(out, "x")); err == nil {
				t.Error("a file name's line break wrote a file of its own")
			}

			// The same files on a parent whose tree the caller does not
			// know: no commit, the ref back at the parent, its tree found.
			if err := r.SetRef(ctx, ref, first.Commit); err != nil {
				t.Fatal(err)
			}
			again, err := StateAt(r, ref).SaveOn(ctx, Saved{Commit: first.Commit}, dir, "planex: same")
			if err != nil || again != first {
				t.Errorf("unchanged save = %+v, %v; want %+v", again, err, first)
			}
			// A change on that parent: one new commit whose parent it is.
			if err := os.WriteFile(filepath.Join(dir, "record.json"), []byte(`{"state":"done"}`), 0o644); err != nil {
				t.Fatal(err)
			}
			second, err := StateAt(r, ref).SaveOn(ctx, Saved{Commit: first.Commit}, dir, "planex: two")
			if err != nil {
				t.Fatal(err)
			}
			if p, _ := r.Parents(ctx, second.Commit); len(p) != 1 || p[0] != first.Commit {
				t.Errorf("second state's parents = %v, want [%s]", p, first.Commit)
			}
		})
	}
}

func abbrevBytes(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "…"
	}
	return string(b)
}

// TestSaveOnRefusesHostileInput: a ref name or parent that would end a
// fast-import command early is refused before git runs.
func TestSaveOnRefusesHostileInput(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newFormatRepo(t, SHA1)
	dir := t.TempDir()
	for _, ref := range []string{"refs/planex/state/1\ncommit refs/heads/main", "refs/a b", "-x", "HEAD", "refs/a/", "refs/../x", "refs/a:b"} {
		if _, err := StateAt(r, ref).SaveOn(ctx, Saved{}, dir, "m"); !errors.Is(err, ErrStateRefName) {
			t.Errorf("ref %q: SaveOn = %v, want ErrStateRefName", ref, err)
		}
	}
	if _, err := StateAt(r, "refs/planex/state/1").SaveOn(ctx, Saved{Commit: "main\nreset refs/heads/main"}, dir, "m"); !errors.Is(err, ErrNotObjectID) {
		t.Errorf("a parent that is no id: SaveOn = %v, want ErrNotObjectID", err)
	}
}

func TestQuotePath(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"a/b.txt":   `"a/b.txt"`,
		"q\"\\":     `"q\"\\"`,
		"nl\nx":     `"nl\012x"`,
		"del\x7f":   `"del\177"`,
		"ünï":       `"ünï"`,
		"sp ace\tt": `"sp ace\011t"`,
	}
	for in, want := range cases {
		if got := quotePath(in); got != want {
			t.Errorf("quotePath(%q) = %s, want %s", in, got, want)
		}
	}
}

// TestRestoreRefusesPathsOutsideTheFolder: a state whose tree names
// "..", a folder ".." holding a file, or a .git folder in any case (git
// mktree writes such trees; anyone who can push a state ref can push
// one) is refused with ErrStatePath and nothing is written, inside the
// folder or next to it.
func TestRestoreRefusesPathsOutsideTheFolder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newFormatRepo(t, SHA1)
	blob := strings.TrimSpace(mustGit(t, r.Root, "hash-object", "-w", "--stdin", "--path=x"))
	mktree := func(entries string) string {
		cmd := exec.Command("git", "mktree")
		cmd.Dir = r.Root
		cmd.Stdin = strings.NewReader(entries)
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(out))
	}
	inner := mktree("100644 blob " + blob + "\tescaped\n")
	cases := map[string]string{
		"a file named ..":   "100644 blob " + blob + "\t..\n100644 blob " + blob + "\trecord.json\n",
		"a folder named ..": "040000 tree " + inner + "\t..\n100644 blob " + blob + "\trecord.json\n",
		"a .GIT folder":     "040000 tree " + inner + "\t.GIT\n100644 blob " + blob + "\trecord.json\n",
		"a .git. folder":    "040000 tree " + inner + "\t.git.\n100644 blob " + blob + "\trecord.json\n",
		// NTFS's short name and HFS+'s ignored code points name .git too.
		"a GIT~1 folder":      "040000 tree " + inner + "\tGIT~1\n100644 blob " + blob + "\trecord.json\n",
		"a .g\u200cit folder": "040000 tree " + inner + "\t.g\u200cit\n100644 blob " + blob + "\trecord.json\n",
		"a .GIT\ufeff folder": "040000 tree " + inner + "\t.GIT\ufeff\n100644 blob " + blob + "\trecord.json\n",
	}
	n := 0
	for name, entries := range cases {
		n++
		tree := mktree(entries)
		commit := strings.TrimSpace(mustGit(t, r.Root, "commit-tree", tree, "-m", "hostile state"))
		ref := "refs/planex/state/" + strconv.Itoa(n)
		mustGit(t, r.Root, "update-ref", ref, commit)
		parent := t.TempDir()
		dir := filepath.Join(parent, "session")
		err := r.RestoreDir(ctx, ref, dir)
		if !errors.Is(err, ErrStatePath) {
			t.Errorf("%s: RestoreDir = %v, want ErrStatePath", name, err)
		}
		for _, p := range []string{filepath.Join(parent, "escaped"), filepath.Join(dir, "record.json"), filepath.Join(dir, ".GIT", "escaped")} {
			if _, err := os.Stat(p); err == nil {
				t.Errorf("%s: %s was written", name, p)
			}
		}
	}
}

// TestCommitter: a state commit names whom git would: the
// GIT_COMMITTER_* variables, then the identity read at Open, then
// planex; angle brackets and line breaks, which would end fast-import's
// committer command, are dropped.
func TestCommitter(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, envName, envEmail string
		config                  []setting
		wantName, wantEmail     string
	}{
		{"none", "", "", nil, "planex", "planex@users.noreply.github.com"},
		{"config", "", "", []setting{{"user.name", "Ann"}, {"user.email", "ann@example.com"}}, "Ann", "ann@example.com"},
		{"variables first", "Bob", "bob@example.com", []setting{{"user.name", "Ann"}, {"user.email", "ann@example.com"}}, "Bob", "bob@example.com"},
		{"crud dropped", "", "", []setting{{"user.name", "Eve <x>\nfrom 0000"}, {"user.email", "<e@x>"}}, "Eve xfrom 0000", "e@x"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			env := map[string]string{"GIT_COMMITTER_NAME": c.envName, "GIT_COMMITTER_EMAIL": c.envEmail}
			name, email := committer(c.config, func(k string) string { return env[k] })
			if name != c.wantName || email != c.wantEmail {
				t.Errorf("committer = %q <%s>, want %q <%s>", name, email, c.wantName, c.wantEmail)
			}
		})
	}
}

// TestUpdateBranchTellsMovedFromFailed: a branch found elsewhere after
// a failed compare-and-swap is ErrRefMoved; a lock file left by a
// crashed git, or a branch whose name is another branch's folder, is
// ErrRefUpdate with git's words, not a report that someone moved it.
func TestUpdateBranchTellsMovedFromFailed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cases := []struct {
		name   string
		branch string
		setup  func(t *testing.T, r *Repo, head string)
		old    func(head string) string
		want   error
		notIs  error
	}{
		{"moved by another writer", "planex/s1", func(t *testing.T, r *Repo, head string) {
			mustGit(t, r.Root, "branch", "planex/s1", head)
		}, func(string) string { return "" }, ErrRefMoved, ErrRefUpdate},
		{"stale lock file", "planex/s2", func(t *testing.T, r *Repo, head string) {
			lock := filepath.Join(r.CommonDir, "refs", "heads", "planex", "s2.lock")
			if err := os.MkdirAll(filepath.Dir(lock), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(lock, nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}, func(string) string { return "" }, ErrRefUpdate, ErrRefMoved},
		{"name clashes with a branch", "planex/s3", func(t *testing.T, r *Repo, head string) {
			mustGit(t, r.Root, "branch", "planex", head)
		}, func(string) string { return "" }, ErrRefUpdate, ErrRefMoved},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := newFormatRepo(t, SHA1)
			head, err := r.Head(ctx)
			if err != nil {
				t.Fatal(err)
			}
			c.setup(t, r, head)
			err = r.UpdateBranch(ctx, c.branch, head, c.old(head), "test")
			if !errors.Is(err, c.want) || errors.Is(err, c.notIs) {
				t.Fatalf("UpdateBranch = %v, want %v and not %v", err, c.want, c.notIs)
			}
		})
	}
}

// TestWriteRestoredExactSize: a blob shorter than its listed size (the
// object changed between listing and reading) leaves the file as it
// was; a longer one is cut at the size.
func TestWriteRestoredExactSize(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		content string
		size    int64
		want    string
		wantErr bool
	}{
		{"exact", "abcd", 4, "abcd", false},
		{"longer", "abcdef", 4, "abcd", false},
		{"shorter", "ab", 4, "old", true},
		{"empty", "", 0, "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			p := filepath.Join(dir, "sub", "record.json")
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte("old"), 0o644); err != nil {
				t.Fatal(err)
			}
			root, err := os.OpenRoot(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer root.Close()
			err = writeRestored(root, "sub/record.json", strings.NewReader(c.content), c.size, 0o644)
			if (err != nil) != c.wantErr {
				t.Fatalf("writeRestored = %v, want error %v", err, c.wantErr)
			}
			if got, _ := os.ReadFile(p); string(got) != c.want {
				t.Errorf("file holds %q, want %q", got, c.want)
			}
		})
	}
}

// TestRedTeamRestoreThroughALinkedFolder: a state naming sub/record.json,
// restored into a session folder where sub (or the folder itself) is a
// link to a folder elsewhere, writes nothing there: the link is refused
// with ErrStatePath, as checkout-index refused to write through a link.
func TestRedTeamRestoreThroughALinkedFolder(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("links need privileges on Windows")
	}
	ctx := context.Background()
	r := newFormatRepo(t, SHA1)
	src := t.TempDir()
	if err := os.MkdirAll(filepath.Join(src, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"record.json", "sub/record.json"} {
		if err := os.WriteFile(filepath.Join(src, p), []byte("forged\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const ref = "refs/planex/state/linked"
	if _, err := StateAt(r, ref).SaveOn(ctx, Saved{}, src, "state"); err != nil {
		t.Fatal(err)
	}
	cases := map[string]func(dir, outside string) error{
		"a folder of the session is a link": func(dir, outside string) error {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			return os.Symlink(outside, filepath.Join(dir, "sub"))
		},
		"the session folder is a link": func(dir, outside string) error {
			return os.Symlink(outside, dir)
		},
	}
	for name, plant := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			parent, outside := t.TempDir(), t.TempDir()
			dir := filepath.Join(parent, "session")
			if err := plant(dir, outside); err != nil {
				t.Fatal(err)
			}
			if err := r.RestoreDir(ctx, ref, dir); !errors.Is(err, ErrStatePath) {
				t.Errorf("RestoreDir = %v, want ErrStatePath", err)
			}
			if _, err := os.Stat(filepath.Join(outside, "record.json")); err == nil {
				t.Errorf("record.json was written through the link into %s", outside)
			}
		})
	}
}

// TestRedTeamFailedSaveLeavesNoCrashReport: a state save that git
// fast-import gives up on (here a parent commit the repository does not
// hold, as a forged or pruned state ref names) leaves no
// fast_import_crash_<pid> report in the git directory: one was written
// at every failure, naming the state's files and the commit, and they
// piled up, one a failed save.
func TestRedTeamFailedSaveLeavesNoCrashReport(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newFormatRepo(t, SHA1)
	src := t.TempDir()
	if err := os.WriteFile(filepath.Join(src, "record.json"), []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := Saved{Commit: strings.Repeat("ab", 20)}
	for i := 0; i < 2; i++ {
		if _, err := StateAt(r, "refs/planex/state/1").SaveOn(ctx, missing, src, "state"); err == nil {
			t.Fatal("SaveOn on a parent the repository lacks succeeded")
		}
	}
	for _, d := range []string{r.gitDir, r.CommonDir} {
		found, err := filepath.Glob(filepath.Join(d, "fast_import_crash_*"))
		if err != nil {
			t.Fatal(err)
		}
		if len(found) > 0 {
			t.Errorf("crash reports left in %s: %v", d, found)
		}
	}
}

// TestRedTeamSaveRefusesWhatRestoreRefuses: a session folder grown past
// what a restore writes (a file over MaxStateFileBytes, as an agent's
// discoveries appended run after run make, or more than MaxStateEntries
// files) is refused when saved, with ErrStateTooLarge, and the ref keeps
// the state before it: it was saved and pushed, and every later job
// refused to restore it, the thread's run lost.
func TestRedTeamSaveRefusesWhatRestoreRefuses(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newFormatRepo(t, SHA1)
	cases := map[string]func(dir string) error{
		"a file too large": func(dir string) error {
			return os.Truncate(filepath.Join(dir, "discoveries.ndjson"), MaxStateFileBytes+1)
		},
		"too many files": func(dir string) error {
			for i := 0; i < MaxStateEntries; i++ {
				if err := os.WriteFile(filepath.Join(dir, "f"+strconv.Itoa(i)), nil, 0o644); err != nil {
					return err
				}
			}
			return nil
		},
	}
	n := 0
	for name, grow := range cases {
		n++
		ref := "refs/planex/state/" + strconv.Itoa(n)
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "discoveries.ndjson"), []byte("{}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		first, err := StateAt(r, ref).SaveOn(ctx, Saved{}, dir, "state")
		if err != nil {
			t.Fatal(err)
		}
		if err := grow(dir); err != nil {
			t.Fatal(err)
		}
		if _, err := StateAt(r, ref).SaveOn(ctx, first, dir, "grown"); !errors.Is(err, ErrStateTooLarge) {
			t.Errorf("%s: SaveOn = %v, want ErrStateTooLarge", name, err)
		}
		if got, _ := StateAt(r, ref).Read(ctx); got.Commit != first.Commit {
			t.Errorf("%s: the ref moved to %s, a state no restore writes", name, got.Commit)
		}
	}
}

// TestRedTeamSaveReadsNoLinkSwappedIn: a session file replaced by a link
// to a runner file (the runner's credentials) after the save listed the
// folder and before it opened the file is refused, and nothing of the
// file it leads to goes into the stream (the state is pushed where
// whoever can read the repository reads it). The swap is made before
// the stream is written, as a racing writer would.
func TestRedTeamSaveReadsNoLinkSwappedIn(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("links need privileges on Windows")
	}
	dir, outside := t.TempDir(), t.TempDir()
	secret := filepath.Join(outside, "credentials")
	if err := os.WriteFile(secret, []byte("token-of-the-runner"), 0o600); err != nil {
		t.Fatal(err)
	}
	rec := filepath.Join(dir, "record.json")
	if err := os.WriteFile(rec, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	files, err := stateFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(rec); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, rec); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err = writeStateStream(&out, dir, "refs/planex/state/1", Saved{}, files, "planex", "p@x", "state", time.Unix(0, 0))
	if err == nil {
		t.Error("the stream was written through a link swapped in")
	}
	if bytes.Contains(out.Bytes(), []byte("token-of-the-runner")) {
		t.Error("the linked runner file went into the stream")
	}
}
