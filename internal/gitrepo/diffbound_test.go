package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// floodEntries is index input adding n entries of one blob, each path
// about 500 bytes long, under d/.
func floodEntries(blob string, n int) string {
	var b strings.Builder
	long := strings.Repeat("x", 480)
	for i := range n {
		fmt.Fprintf(&b, "100644 %s\td/%s%08d\n", blob, long, i)
	}
	return b.String()
}

// gitIndexIn runs git on repo with index as its index file and stdin.
func gitIndexIn(t *testing.T, repo, index, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), "GIT_INDEX_FILE="+index)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return strings.TrimSpace(string(out))
}

// copyIndex writes a copy of the index file src at dst, streamed: the
// flood's indexes are tens of megabytes.
func copyIndex(t *testing.T, src, dst string) {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// allocated is how many bytes fn allocated.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestRedTeamChangeListBounded: whoever can push puts a task commit on
// the run branch (or a matrix task's result ref) whose tree adds 150,000
// files of 500-byte names, or a contained agent makes as many in its
// worktree; planex lists the commit's changes (to recheck it) and, for
// the agent's, resets the kept worktree through the private index that
// now holds them. Both read git's whole answer into memory (75 MB of
// names, several times over as it was split and copied), growing with
// whatever was pushed or made. The change list is read as it comes and
// refused past a bound (ErrTooManyChanges), and the reset keeps only the
// submodule entries of the index it lists.
//
// Not parallel: it measures the process's allocations.
func TestRedTeamChangeListBounded(t *testing.T) {
	ctx := context.Background()
	r := newRepo(t)
	head, err := r.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	blob := mustGitIn(t, r.Root, "flood\n", "hash-object", "-w", "--stdin")
	blob = strings.TrimSpace(blob)
	flood := floodEntries(blob, 150_000)
	idx := filepath.Join(t.TempDir(), "index")
	gitIndexIn(t, r.Root, idx, "", "read-tree", head)
	gitIndexIn(t, r.Root, idx, flood, "update-index", "--index-info")
	tree := gitIndexIn(t, r.Root, idx, "", "write-tree")
	forged := gitIndexIn(t, r.Root, idx, "", "commit-tree", "-p", head, "-m", "T1", tree)

	var derr error
	if got := allocated(func() { _, derr = r.DiffTrees(ctx, head, forged) }); got > 64<<20 {
		t.Errorf("listing the forged commit's changes allocated %d MiB; want at most 64 MiB", got>>20)
	}
	if !errors.Is(derr, ErrTooManyChanges) {
		t.Errorf("DiffTrees = %v; want ErrTooManyChanges", derr)
	}
	// An ordinary commit's changes are listed as before.
	if ch, err := r.DiffTrees(ctx, head+"^{tree}", head); err != nil || len(ch) != 0 {
		t.Errorf("DiffTrees of a commit with itself = %v, %v", ch, err)
	}

	// The agent's worktree, whose private index the snapshot filled.
	wt := r.WorktreeDir("s1", "T1")
	if err := r.AddWorktree(ctx, wt, head); err != nil {
		t.Fatal(err)
	}
	// The index that made the forged tree holds what the agent's would:
	// the commit's files and the flood. A copy spares git reading the
	// 75 MB of entries again.
	copyIndex(t, idx, indexFile(wt))
	var rerr error
	if got := allocated(func() { rerr = r.ResetWorktree(ctx, wt, head) }); got > 64<<20 {
		t.Errorf("resetting the worktree allocated %d MiB; want at most 64 MiB", got>>20)
	}
	if rerr != nil {
		t.Fatal(rerr)
	}
	if _, err := os.Stat(filepath.Join(wt, "README.md")); err != nil {
		t.Errorf("the reset worktree lacks its files: %v", err)
	}
}

// TestRedTeamLinkTargetsBounded: whoever can push puts a task commit on
// the run branch whose tree adds 64 symlink entries (mode 120000), each
// the same 4 MiB blob. To recheck the commit planex reads where every
// link of the tree leads, and read each link's blob whole, one copy per
// entry: 256 MiB for one 4 MiB object, and as much more as entries were
// pushed. A link whose target is longer than a checkout can follow
// leads nowhere in the repository, so it escapes without being read, as
// a link on the way to a folder does.
//
// Not parallel: it measures the process's allocations.
func TestRedTeamLinkTargetsBounded(t *testing.T) {
	ctx := context.Background()
	r := newRepo(t)
	head, err := r.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	big := strings.TrimSpace(mustGitIn(t, r.Root, strings.Repeat("../", 4<<20/3), "hash-object", "-w", "--stdin"))
	ok := strings.TrimSpace(mustGitIn(t, r.Root, "README.md", "hash-object", "-w", "--stdin"))
	var entries strings.Builder
	for i := range 64 {
		fmt.Fprintf(&entries, "120000 %s\tlink%02d\n", big, i)
	}
	fmt.Fprintf(&entries, "120000 %s\tfine\n", ok)
	idx := filepath.Join(t.TempDir(), "index")
	gitIndexIn(t, r.Root, idx, "", "read-tree", head)
	gitIndexIn(t, r.Root, idx, entries.String(), "update-index", "--index-info")
	tree := gitIndexIn(t, r.Root, idx, "", "write-tree")
	changes, err := r.DiffTrees(ctx, head, tree)
	if err != nil {
		t.Fatal(err)
	}
	var bad []string
	if got := allocated(func() { bad, err = r.SymlinkEscapes(ctx, tree, changes) }); got > 32<<20 {
		t.Errorf("reading the links allocated %d MiB; want at most 32 MiB", got>>20)
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(bad) != 64 {
		t.Errorf("%d links escape; want the 64 too long to follow", len(bad))
	}
	for _, b := range bad {
		if strings.HasPrefix(b, "fine") || len(b) > 4096 {
			t.Errorf("escaping link reported as %.80q (%d bytes)", b, len(b))
		}
	}
}

// TestRedTeamCommitMessageBounded: whoever can push publishes a matrix
// task's result ref (refs/planex/tasks/…) as a commit whose message is
// 64 MiB; the collect job reads the message, where planex's task jobs
// put the task's result, whole. A message longer than planex writes
// (ErrLongMessage) is refused after reading at most its bound.
//
// Not parallel: it measures the process's allocations.
func TestRedTeamCommitMessageBounded(t *testing.T) {
	ctx := context.Background()
	r := newRepo(t)
	head, err := r.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tree := strings.TrimSpace(mustGit(t, r.Root, "rev-parse", head+"^{tree}"))
	huge := "planex: T1\n\n{\"status\":\"completed\",\"findings\":\"" + strings.Repeat("x", 64<<20) + "\"}\n"
	forged := strings.TrimSpace(mustGitIn(t, r.Root, huge, "commit-tree", tree, "-p", head, "-F", "-"))
	var msg string
	if got := allocated(func() { msg, err = r.CommitMessage(ctx, forged) }); got > 8<<20 {
		t.Errorf("reading the forged message allocated %d MiB; want at most 8 MiB", got>>20)
	}
	if !errors.Is(err, ErrLongMessage) || msg != "" {
		t.Errorf("CommitMessage = %d bytes, %v; want ErrLongMessage", len(msg), err)
	}
	if msg, err := r.CommitMessage(ctx, head); err != nil || msg == "" {
		t.Errorf("CommitMessage of an ordinary commit = %q, %v", msg, err)
	}
}

// TestRedTeamGitStderrBounded: an agent leaves `* text eol=crlf` in a
// .gitattributes of its worktree and thousands of files with long names:
// planex's `git add` of its changes warns once for each file (LF will be
// replaced by CRLF), and planex kept all of git's standard error in
// memory, growing with the files the agent made. Only its first 64 KiB
// are kept (they go into an error message at most).
//
// Not parallel: it measures the process's allocations.
func TestRedTeamGitStderrBounded(t *testing.T) {
	ctx := context.Background()
	r := newRepo(t)
	long := filepath.Join(strings.Repeat("d", 200), strings.Repeat("e", 200))
	if err := os.MkdirAll(filepath.Join(r.Root, long), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(r.Root, ".gitattributes"), []byte("* text eol=crlf\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for i := range 12_000 {
		name := filepath.Join(r.Root, long, fmt.Sprintf("%s%06d", strings.Repeat("f", 200), i))
		if err := os.WriteFile(name, []byte("line\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var err error
	if got := allocated(func() { _, err = r.Git(ctx, "", "add", "--all") }); got > 4<<20 {
		t.Errorf("git add allocated %d MiB in planex; want at most 4 MiB", got>>20)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// TestRedTeamFolderListingBounded: whoever can push puts a commit whose
// .github/workflows folder holds 300,000 entries; the CI-configuration
// check lists that folder to read its first 200 workflows, and held the
// whole listing (and its split) in memory first. The listing is read as
// it comes and left once those are found.
//
// Not parallel: it measures the process's allocations.
func TestRedTeamFolderListingBounded(t *testing.T) {
	ctx := context.Background()
	r := newRepo(t)
	head, err := r.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	blob := strings.TrimSpace(mustGitIn(t, r.Root, "on: push\n", "hash-object", "-w", "--stdin"))
	var entries strings.Builder
	long := strings.Repeat("w", 90)
	for i := range 300_000 {
		fmt.Fprintf(&entries, "100644 %s\t.github/workflows/%s%06d.yml\n", blob, long, i)
	}
	idx := filepath.Join(t.TempDir(), "index")
	gitIndexIn(t, r.Root, idx, "", "read-tree", head)
	gitIndexIn(t, r.Root, idx, entries.String(), "update-index", "--index-info")
	tree := gitIndexIn(t, r.Root, idx, "", "write-tree")
	var files map[string][]byte
	if got := allocated(func() { files, err = r.Tree(tree).FolderFiles(ctx, ".github/workflows", 200, 1<<20) }); got > 16<<20 {
		t.Errorf("listing the folder allocated %d MiB; want at most 16 MiB", got>>20)
	}
	if !errors.Is(err, ErrTooManyFiles) {
		t.Errorf("FolderFiles = %d files, %v; want ErrTooManyFiles", len(files), err)
	}
}

// TestRedTeamManyShortLinksBounded: a repository's tree holds 300,000
// symlinks with short names and a one-byte target (one blob, so the
// push is small), and a task commit adds one more link. To recheck it
// planex reads every link of the tree: their names and targets come to
// under the 16 MiB bound on links, but each also cost planex its object
// name, git's header and the copies of both, held all at once (git's
// whole answer to them all as one string): far more than the bound on
// what the names and targets say.
//
// Not parallel: it measures the process's allocations.
func TestRedTeamManyShortLinksBounded(t *testing.T) {
	ctx := context.Background()
	r := newRepo(t)
	head, err := r.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	target := strings.TrimSpace(mustGitIn(t, r.Root, "x", "hash-object", "-w", "--stdin"))
	var entries strings.Builder
	for i := range 300_000 {
		fmt.Fprintf(&entries, "120000 %s\tl/%06d\n", target, i)
	}
	idx := filepath.Join(t.TempDir(), "index")
	gitIndexIn(t, r.Root, idx, "", "read-tree", head)
	gitIndexIn(t, r.Root, idx, entries.String(), "update-index", "--index-info")
	base := gitIndexIn(t, r.Root, idx, "", "write-tree")
	gitIndexIn(t, r.Root, idx, "120000 "+target+"\tnew\n", "update-index", "--index-info")
	tree := gitIndexIn(t, r.Root, idx, "", "write-tree")
	changes, err := r.DiffTrees(ctx, base, tree)
	if err != nil {
		t.Fatal(err)
	}
	var bad []string
	got := allocated(func() { bad, err = r.SymlinkEscapes(ctx, tree, changes) })
	t.Logf("allocated %d MiB", got>>20)
	if got > 64<<20 {
		t.Errorf("reading the links allocated %d MiB; want at most 64 MiB", got>>20)
	}
	if err != nil && !errors.Is(err, ErrTooManyChanges) {
		t.Fatal(err)
	}
	if err == nil && len(bad) != 0 {
		t.Errorf("links escape: %v", bad)
	}
}

// TestRedTeamParentsBounded: whoever can push publishes a matrix task's
// result naming as its commit one that lists 1,000,000 parents (the
// wave's base over and over: git takes the object). The collect job asks
// git for the commit's parents to check it has one, and held git's whole
// answer (41 MB) and a string per parent.
//
// Not parallel: it measures the process's allocations.
func TestRedTeamParentsBounded(t *testing.T) {
	ctx := context.Background()
	r := newRepo(t)
	head, err := r.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tree, err := r.TreeOf(ctx, head)
	if err != nil {
		t.Fatal(err)
	}
	var c strings.Builder
	c.WriteString("tree " + tree + "\n")
	for range 1_000_000 {
		c.WriteString("parent " + head + "\n")
	}
	c.WriteString("author A <a@example.com> 1700000000 +0000\ncommitter A <a@example.com> 1700000000 +0000\n\nresult\n")
	commit := strings.TrimSpace(mustGitIn(t, r.Root, c.String(), "hash-object", "-t", "commit", "-w", "--literally", "--stdin"))
	var parents []string
	got := allocated(func() { parents, err = r.Parents(ctx, commit) })
	if got > 8<<20 {
		t.Errorf("reading the parents allocated %d MiB; want at most 8 MiB", got>>20)
	}
	if !errors.Is(err, ErrTooManyParents) {
		t.Errorf("Parents = %d parents, %v; want ErrTooManyParents", len(parents), err)
	}
	if ps, err := r.Parents(ctx, head); err != nil || len(ps) != 0 {
		t.Errorf("Parents of the root commit = %v, %v", ps, err)
	}
}

// TestRedTeamTaskHistoryBounded: whoever can push puts 100 commits on
// the run branch, each a task commit (planex's trailers) whose message
// is just under the 1 MiB a message may hold; messages of one repeated
// byte travel in a push of kilobytes. To reconcile the run planex lists
// the branch's task commits, keeping every one's message: the bound on
// one message held none on all of them (90 MiB kept, several times that
// allocated, growing with the commits).
//
// Not parallel: it measures the process's allocations.
func TestRedTeamTaskHistoryBounded(t *testing.T) {
	ctx := context.Background()
	r := newRepo(t)
	head, err := r.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var in strings.Builder
	body := strings.Repeat("a", 900<<10)
	for i := range 100 {
		msg := fmt.Sprintf("T%d: forged\n\n%s\n\n%s: s1\n%s: T%d\n", i, body, TrailerSession, TrailerTask, i)
		fmt.Fprintf(&in, "commit refs/heads/run\ncommitter A <a@example.com> 1700000000 +0000\ndata %d\n%s\n", len(msg), msg)
		if i == 0 {
			fmt.Fprintf(&in, "from %s\n", head)
		}
	}
	// Compression's speed over size: the 90 MB of messages are deltas of
	// one another, so the pack stays small either way.
	mustGitIn(t, r.Root, in.String(), "-c", "pack.compression=1", "fast-import", "--quiet")
	in.Reset()
	var commits []TaskCommit
	got := allocated(func() { commits, err = r.TaskCommits(ctx, "run", head) })
	if got > 32<<20 {
		t.Errorf("listing the task commits allocated %d MiB; want at most 32 MiB", got>>20)
	}
	if !errors.Is(err, ErrLongMessage) {
		t.Errorf("TaskCommits = %d commits, %v; want ErrLongMessage", len(commits), err)
	}
}

// TestRedTeamLinkWayListingBounded: whoever can push puts a commit whose
// .github folder holds 300,000 entries beside workflows/. To find where
// .github/workflows leads, the CI-configuration check lists the entries
// on the way to it, and git lists a folder asked for beside a path in it
// by its whole content: planex held that listing (and its split) to keep
// two entries of it.
//
// Not parallel: it measures the process's allocations.
func TestRedTeamLinkWayListingBounded(t *testing.T) {
	ctx := context.Background()
	r := newRepo(t)
	head, err := r.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	blob := strings.TrimSpace(mustGitIn(t, r.Root, "x\n", "hash-object", "-w", "--stdin"))
	var entries strings.Builder
	long := strings.Repeat("g", 90)
	for i := range 300_000 {
		fmt.Fprintf(&entries, "100644 %s\t.github/%s%06d\n", blob, long, i)
	}
	fmt.Fprintf(&entries, "100644 %s\t.github/workflows/ci.yml\n", blob)
	idx := filepath.Join(t.TempDir(), "index")
	gitIndexIn(t, r.Root, idx, "", "read-tree", head)
	gitIndexIn(t, r.Root, idx, entries.String(), "update-index", "--index-info")
	tree := gitIndexIn(t, r.Root, idx, "", "write-tree")
	var to map[string]string
	if got := allocated(func() { to, err = r.Tree(tree).ResolveFolders(ctx, []string{".github/workflows"}) }); got > 16<<20 {
		t.Errorf("resolving .github/workflows allocated %d MiB; want at most 16 MiB", got>>20)
	}
	if err != nil || len(to) != 0 {
		t.Errorf("ResolveFolders = %v, %v; want no link", to, err)
	}
}

// TestRedTeamFolderTextBounded: whoever can push puts 200 workflows of
// 1 MiB each in .github/workflows (one blob, so the push is small); the
// CI-configuration check read them all before looking at any, 200 MiB
// held at once, within its bounds of 200 files and 1 MiB a file. What a
// folder's files hold is now bounded in all: past 16 MiB it is refused.
//
// Not parallel: it measures the process's allocations.
func TestRedTeamFolderTextBounded(t *testing.T) {
	ctx := context.Background()
	r := newRepo(t)
	head, err := r.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	blob := strings.TrimSpace(mustGitIn(t, r.Root, "on: push\n#"+strings.Repeat("x", 1<<20-16)+"\n", "hash-object", "-w", "--stdin"))
	var entries strings.Builder
	for i := range 200 {
		fmt.Fprintf(&entries, "100644 %s\t.github/workflows/w%03d.yml\n", blob, i)
	}
	idx := filepath.Join(t.TempDir(), "index")
	gitIndexIn(t, r.Root, idx, "", "read-tree", head)
	gitIndexIn(t, r.Root, idx, entries.String(), "update-index", "--index-info")
	tree := gitIndexIn(t, r.Root, idx, "", "write-tree")
	var files map[string][]byte
	if got := allocated(func() { files, err = r.Tree(tree).FolderFiles(ctx, ".github/workflows", 200, 1<<20+1) }); got > 48<<20 {
		t.Errorf("reading the workflows allocated %d MiB; want at most 48 MiB", got>>20)
	}
	if !errors.Is(err, ErrTooManyFiles) {
		t.Errorf("FolderFiles = %d files, %v; want ErrTooManyFiles", len(files), err)
	}
}
