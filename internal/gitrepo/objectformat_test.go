package gitrepo

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// newFormatRepo makes a repository of the given object format with one
// commit (README.md, src/old.txt) and opens it, with its worktrees kept
// under t's own temporary folder (TempDir). It sets no environment, so
// tests using it run in parallel.
func newFormatRepo(t *testing.T, format ObjectFormat) *Repo {
	t.Helper()
	dir := t.TempDir()
	mustGit(t, dir, "init", "-q", "-b", "main", "--object-format="+string(format))
	mustGit(t, dir, "config", "user.name", "Test")
	mustGit(t, dir, "config", "user.email", "test@example.com")
	os.MkdirAll(filepath.Join(dir, "src"), 0o755)
	os.WriteFile(filepath.Join(dir, "README.md"), []byte("hello\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "src", "old.txt"), []byte("old\n"), 0o644)
	mustGit(t, dir, "add", ".")
	mustGit(t, dir, "commit", "-qm", "initial")
	r, err := Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	r.TempDir = t.TempDir()
	return r
}

var formats = []ObjectFormat{SHA1, SHA256}

func TestParseObjectFormat(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in   string
		want ObjectFormat
		err  bool
	}{
		{"sha1", SHA1, false},
		{"sha256\n", SHA256, false},
		{"SHA256", "", true},
		{"blake3", "", true},
		{"", "", true},
		{"--show-object-format", SHA1, false}, // a git too old to know the option
	}
	for _, c := range cases {
		got, err := reportedFormat(c.in)
		if got != c.want || (err != nil) != c.err {
			t.Errorf("reportedFormat(%q) = %q, %v; want %q (error %v)", c.in, got, err, c.want, c.err)
		}
		if err != nil && !errors.Is(err, ErrObjectFormat) {
			t.Errorf("reportedFormat(%q): %v is not ErrObjectFormat", c.in, err)
		}
	}
}

func TestObjectIDs(t *testing.T) {
	t.Parallel()
	sha1 := strings.Repeat("ab", 20)
	sha256 := strings.Repeat("cd", 32)
	cases := []struct {
		format ObjectFormat
		hexLen int
		ids    map[string]bool
	}{
		{SHA1, 40, map[string]bool{sha1: true, sha256: false, sha1[:39]: false, strings.ToUpper(sha1): false, strings.Repeat("0", 40): true, "HEAD": false}},
		{SHA256, 64, map[string]bool{sha256: true, sha1: false, sha256 + "0": false, strings.Repeat("g", 64): false, strings.Repeat("0", 64): true}},
	}
	for _, c := range cases {
		if got := c.format.HexLen(); got != c.hexLen {
			t.Errorf("%s: HexLen = %d, want %d", c.format, got, c.hexLen)
		}
		if z := c.format.Zero(); len(z) != c.hexLen || strings.Trim(z, "0") != "" {
			t.Errorf("%s: Zero = %q", c.format, z)
		}
		for id, want := range c.ids {
			if got := c.format.IsID(id); got != want {
				t.Errorf("%s: IsID(%q) = %v, want %v", c.format, id, got, want)
			}
		}
	}
}

// TestFormatsWorktreeAndCommit runs, in a repository of each object
// format, what executing a task does with object ids: its worktree, the
// snapshot, the commit (with a deletion, which names the zero id),
// creating the run branch (the zero id again) and reading blobs.
func TestFormatsWorktreeAndCommit(t *testing.T) {
	t.Parallel()
	for _, format := range formats {
		t.Run(string(format), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			r := newFormatRepo(t, format)
			if r.format != format {
				t.Fatalf("the repository's format = %q, want %q", r.format, format)
			}
			head, err := r.Head(ctx)
			if err != nil || !format.IsID(head) {
				t.Fatalf("Head = %q, %v; want a %d-digit id", head, err, format.HexLen())
			}
			wt := filepath.Join(t.TempDir(), "wt", "T1")
			if err := r.AddWorktree(ctx, wt, head); err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(wt, "src", "new.go"), []byte("package src\n"), 0o644)
			os.Remove(filepath.Join(wt, "src", "old.txt"))
			_, changes, err := r.Snapshot(ctx, wt, head)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(Paths(changes), ","); got != "src/new.go,src/old.txt" {
				t.Fatalf("changes = %s", got)
			}
			c1, err := r.CommitChanges(ctx, head, changes, TaskMessage("s1", "T1", "new.go", ""))
			if err != nil {
				t.Fatal(err)
			}
			if got := mustGit(t, r.Root, "ls-tree", "-r", "--name-only", c1); got != "README.md\nsrc/new.go\n" {
				t.Fatalf("T1's tree = %q (the deletion was not applied)", got)
			}
			if err := r.UpdateBranch(ctx, "planex/s1", c1, "", "planex: T1"); err != nil {
				t.Fatalf("creating the run branch: %v", err)
			}
			if err := r.UpdateBranch(ctx, "planex/s1", c1, "", "again"); !errors.Is(err, ErrRefMoved) {
				t.Fatalf("creating the branch again = %v, want ErrRefMoved", err)
			}
			blobs, err := readBlobsForTest(ctx, r, []string{changes[0].Blob})
			if err != nil || string(blobs[changes[0].Blob]) != "package src\n" {
				t.Fatalf("ReadBlobs = %q, %v", blobs, err)
			}
			other := strings.Repeat("1", 40)
			if format == SHA1 {
				other = strings.Repeat("1", 64)
			}
			if _, err := readBlobsForTest(ctx, r, []string{other}); err == nil {
				t.Errorf("ReadBlobs took an id of the other format, %s", other)
			}
			if err := r.RemoveWorktree(ctx, wt); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestFormatsHistoryAndState: in a repository of each object format, the
// history a resumed run reads lists the task commits only, oldest first,
// by their full ids; the branch moves only from where it is; the state
// kept on a ref is created (from the zero id), updated and restored.
func TestFormatsHistoryAndState(t *testing.T) {
	t.Parallel()
	for _, format := range formats {
		t.Run(string(format), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			r := newFormatRepo(t, format)
			head, _ := r.Head(ctx)
			c1, err := r.CommitChanges(ctx, head, nil, TaskMessage("s1", "T1", "first", ""))
			if err != nil {
				t.Fatal(err)
			}
			note, err := r.NoteCommit(ctx, c1, "a note\n")
			if err != nil {
				t.Fatal(err)
			}
			c2, err := r.CommitChanges(ctx, note, nil, TaskMessage("s1", "T2", "second", "why\n\nPlanex-Task: T9"))
			if err != nil {
				t.Fatal(err)
			}
			if err := r.UpdateBranch(ctx, "planex/s1", c1, "", "planex: T1"); err != nil {
				t.Fatal(err)
			}
			if err := r.UpdateBranch(ctx, "planex/s1", c2, c1, "planex: T2"); err != nil {
				t.Fatal(err)
			}
			if err := r.UpdateBranch(ctx, "planex/s1", head, c1, "stale"); !errors.Is(err, ErrRefMoved) {
				t.Fatalf("moving the branch from a stale tip = %v, want ErrRefMoved", err)
			}
			commits, err := r.TaskCommits(ctx, "planex/s1", head)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range commits {
				got = append(got, c.Task+"@"+c.SHA)
			}
			if want := []string{"T1@" + c1, "T2@" + c2}; strings.Join(got, " ") != strings.Join(want, " ") {
				t.Fatalf("TaskCommits = %v, want %v", got, want)
			}
			if commits, err := r.TaskCommits(ctx, "planex/s1", c1); err != nil || len(commits) != 1 || commits[0].SHA != c2 {
				t.Errorf("TaskCommits from T1 = %+v, %v; want T2 alone", commits, err)
			}
			if commits, err := r.TaskCommits(ctx, "planex/none", head); err != nil || commits != nil {
				t.Errorf("TaskCommits of a missing branch = %+v, %v", commits, err)
			}
			wrongLength := head[:40] // a SHA-1-long prefix of a SHA-256 id
			if format == SHA1 {
				wrongLength = head + strings.Repeat("0", 24)
			}
			for _, base := range []string{wrongLength, "HEAD~1", "--all"} {
				if _, err := r.TaskCommits(ctx, "planex/s1", base); err == nil || !strings.Contains(err.Error(), "is not a commit id") {
					t.Errorf("TaskCommits from base %q = %v, want it refused", base, err)
				}
			}

			state := t.TempDir()
			os.WriteFile(filepath.Join(state, "meta.csv"), []byte("a,b\n"), 0o644)
			if s1, err := saveState(ctx, r, "refs/planex/state", state, "state 1"); err != nil || !format.IsID(s1) {
				t.Fatalf("first Save = %q, %v", s1, err)
			}
			os.WriteFile(filepath.Join(state, "meta.csv"), []byte("a,c\n"), 0o644)
			if _, err := saveState(ctx, r, "refs/planex/state", state, "state 2"); err != nil {
				t.Fatalf("second Save: %v", err)
			}
			back := t.TempDir()
			if err := r.RestoreDir(ctx, "refs/planex/state", back); err != nil {
				t.Fatal(err)
			}
			if b, _ := os.ReadFile(filepath.Join(back, "meta.csv")); string(b) != "a,c\n" {
				t.Errorf("restored state = %q", b)
			}
		})
	}
}

// TestTaskCommitsBounded: a commit message longer than planex reads
// stops the history read with ErrLongMessage instead of being held.
func TestTaskCommitsBounded(t *testing.T) {
	t.Parallel()
	for _, format := range formats {
		t.Run(string(format), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			r := newFormatRepo(t, format)
			head, _ := r.Head(ctx)
			long := "T1: huge\n\n" + strings.Repeat("x", maxMessage) + "\n\nPlanex-Task: T1\n"
			c, err := r.CommitChanges(ctx, head, nil, long)
			if err != nil {
				t.Fatal(err)
			}
			if err := r.UpdateBranch(ctx, "planex/big", c, "", "test"); err != nil {
				t.Fatal(err)
			}
			if _, err := r.TaskCommits(ctx, "planex/big", head); !errors.Is(err, ErrLongMessage) {
				t.Fatalf("TaskCommits = %v, want ErrLongMessage", err)
			}
		})
	}
}

// readBlobsForTest gathers StreamBlobs' answers into memory (test sizes only).
func readBlobsForTest(ctx context.Context, r *Repo, shas []string) (map[string][]byte, error) {
	out := map[string][]byte{}
	err := r.StreamBlobs(ctx, shas, func(sha string, content io.Reader) error {
		b, err := io.ReadAll(content)
		out[sha] = b
		return err
	})
	return out, err
}
