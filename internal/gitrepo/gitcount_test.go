package gitrepo

import (
	"context"
	"github.com/planexhq/planex/internal/gitrepo/gittest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// commitTask is what planex does for one task: open the repository, make
// the task's worktree, snapshot what the agent left, commit it and move
// the run branch. remember false makes the Repo scan for drivers before
// every call, as planex did before it reused scans.
func commitTask(t *testing.T, dir, task string, remember bool) {
	t.Helper()
	ctx := context.Background()
	r, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	r.TempDir = t.TempDir()
	if !remember {
		r.scans = nil
	}
	head, err := r.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wt := r.WorktreeDir("s1", task)
	if err := r.AddWorktree(ctx, wt, head); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(wt, task+".txt"), []byte(task+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tree, changes, err := r.Snapshot(ctx, wt, head)
	if err != nil {
		t.Fatal(err)
	}
	if len(changes) != 1 || changes[0].Path != task+".txt" {
		t.Fatalf("changes = %+v", changes)
	}
	// The branch is still at the task's base, so the snapshot's tree is
	// the commit's (execute.Runner.Commit).
	c, err := r.CommitTree(ctx, head, tree, TaskMessage("s1", task, "Add "+task, ""))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.UpdateBranch(ctx, "planex/"+task, c, "", "planex: "+task); err != nil {
		t.Fatal(err)
	}
}

// TestGitProcessesPerTaskCommit guards the number of git processes one
// task commit starts. Measured on git 2.39: 20 before planex reused
// driver scans and read the identity in one call (6 scans, 2 identity
// reads); 15 with reuse (2 scans: one for the main worktree's git
// directory, one for the task worktree's); 11 now: a task committed on
// the tip it ran on commits its snapshot's tree instead of building it
// again in a temporary index (read-tree, update-index, write-tree), and
// Open reads the identity and the remotes with one git config. 12 with
// scan reuse switched off. The limit, 13, leaves room for two more
// calls; a change that needs more should say why here.
func TestGitProcessesPerTaskCommit(t *testing.T) {
	// Not parallel: the counting git is put on this process's PATH.
	r := newRepo(t)
	settle()
	calls := gittest.CountGit(t)
	commitTask(t, r.Root, "T1", false)
	before := calls()
	commitTask(t, r.Root, "T2", true)
	got := calls()
	const limit = 13
	if len(got) > limit {
		t.Errorf("one task commit started %d git processes, more than %d:\n%s", len(got), limit, strings.Join(got, "\n"))
	}
	if len(got) >= len(before) {
		t.Errorf("reusing driver scans saved nothing: %d git processes, %d without", len(got), len(before))
	}
	if scans(got) == 0 {
		t.Errorf("no driver scan among the calls; the count shows nothing:\n%s", strings.Join(got, "\n"))
	}
	t.Logf("%d git processes (%d driver scans); %d (%d) scanning before every call", len(got), scans(got), len(before), scans(before))
}

func scans(calls []string) int {
	n := 0
	for _, c := range calls {
		if strings.Contains(c, "--get-regexp ^(filter|diff|merge") {
			n++
		}
	}
	return n
}

// TestStateSaveOnCountsAndParents: saving session state on a known tip
// starts four git processes (add, write-tree, commit-tree, update-ref),
// builds on the tip it is given whatever the local ref holds, and saving
// unchanged files makes no commit but points the ref back at the tip.
func TestStateSaveOnCountsAndParents(t *testing.T) {
	// Not parallel: the counting git is put on this process's PATH.
	ctx := context.Background()
	r := newRepo(t)
	settle() // the driver scan of the first save is kept for the second
	state := filepath.Join(t.TempDir(), "state")
	if err := os.MkdirAll(state, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(s string) {
		if err := os.WriteFile(filepath.Join(state, "github.json"), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const ref = "refs/planex/state/3"
	write(`{"state":"planned"}`)
	first, err := StateAt(r, ref).SaveOn(ctx, Saved{}, state, "planex: plan")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := StateAt(r, ref).Read(ctx); err != nil || got != first {
		t.Fatalf("Read = %+v, %v; SaveOn made %+v", got, err, first)
	}
	if p, _ := r.Parents(ctx, first.Commit); len(p) != 0 {
		t.Errorf("the first state has parents %v", p)
	}
	// The local ref moved elsewhere (a stale copy): the next state still
	// builds on the tip it is given.
	head, err := r.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.SetRef(ctx, ref, head); err != nil {
		t.Fatal(err)
	}
	write(`{"state":"running"}`)
	calls := gittest.CountGit(t)
	second, err := StateAt(r, ref).SaveOn(ctx, first, state, "planex: running")
	if err != nil {
		t.Fatal(err)
	}
	if got := calls(); len(got) != 1 {
		t.Errorf("saving state started %d git processes, want 1:\n%s", len(got), strings.Join(got, "\n"))
	}
	if p, _ := r.Parents(ctx, second.Commit); len(p) != 1 || p[0] != first.Commit {
		t.Errorf("second state's parents = %v, want [%s]", p, first.Commit)
	}
	if got, _ := StateAt(r, ref).Read(ctx); got != second {
		t.Errorf("ref at %+v, want %+v", got, second)
	}
	// Unchanged: no commit, the ref points at the tip again.
	if err := r.SetRef(ctx, ref, head); err != nil {
		t.Fatal(err)
	}
	again, err := StateAt(r, ref).SaveOn(ctx, Saved{Commit: second.Commit}, state, "planex: no change")
	if err != nil || again.Commit != second.Commit || again.Tree != second.Tree {
		t.Errorf("saving unchanged state = %+v, %v; want %+v", again, err, second)
	}
	if got, _ := StateAt(r, ref).Read(ctx); got != second {
		t.Errorf("after an unchanged save the ref is at %+v, want %+v", got, second)
	}
	if _, err := StateAt(r, "--output=x").Read(ctx); err == nil {
		t.Error("Read took an option for a revision")
	}
}

// TestConfigFileReadOnce: the agent's view of a config file and the files
// it references come from one read of its own entries, plus one of what
// it includes when it has an include: two git processes for such a file,
// one for a file without (three for either before).
func TestConfigFileReadOnce(t *testing.T) {
	// Not parallel: the counting git is put on this process's PATH.
	ctx := context.Background()
	r := newRepo(t)
	inc := filepath.Join(t.TempDir(), "creds.inc")
	if err := os.WriteFile(inc, []byte("[http]\n\textraheader = AUTHORIZATION: basic c2VjcmV0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	mustGit(t, r.Root, "config", "include.path", inc)
	mustGit(t, r.Root, "config", "remote.origin.url", "https://ci-token:s3cret@example.com/o/r.git")
	settle()
	// What the repository's config includes is listed once, before the
	// first call, then remembered (checkConfigFiles).
	if _, err := r.Head(ctx); err != nil {
		t.Fatal(err)
	}
	calls := gittest.CountGit(t)
	c, err := ReadConfigFile(ctx, r, filepath.Join(r.CommonDir, "config"))
	if err != nil {
		t.Fatal(err)
	}
	view := string(c.AgentView())
	refs, err := ReferencedFilesIn(ctx, r, c, "")
	if err != nil {
		t.Fatal(err)
	}
	if got := calls(); len(got) != 2 {
		t.Errorf("reading one config file started %d git processes, want 2:\n%s", len(got), strings.Join(got, "\n"))
	}
	if !strings.Contains(view, "https://example.com/o/r.git") || strings.Contains(view, "s3cret") || strings.Contains(view, "extraheader") {
		t.Errorf("agent view:\n%s", view)
	}
	if len(refs) != 1 || refs[0] != inc {
		t.Errorf("referenced files = %v, want [%s]", refs, inc)
	}

	// Without an include: one read, the helper's store still found.
	global := filepath.Join(t.TempDir(), "gitconfig")
	store := filepath.Join(t.TempDir(), "store")
	if err := os.WriteFile(global, []byte("[credential]\n\thelper = store --file="+store+"\n[user]\n\tname = Someone\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	settle()
	c, err = ReadConfigFile(ctx, r, global)
	if err != nil {
		t.Fatal(err)
	}
	refs, err = ReferencedFilesIn(ctx, r, c, "")
	if err != nil {
		t.Fatal(err)
	}
	if got := calls(); len(got) != 1 {
		t.Errorf("reading a config file without includes started %d git processes, want 1:\n%s", len(got), strings.Join(got, "\n"))
	}
	if len(refs) != 1 || refs[0] != store {
		t.Errorf("referenced files = %v, want [%s]", refs, store)
	}
}

// TestResolveFoldersReadsAtOnce: resolving many configuration folders
// (planex asks for about thirty before every task) reads the paths on
// the way with one listing and one read per link, where it ran one git
// per path before (thirty and more). The answer is the one the walk gives: .github -> ci makes
// .github/workflows ci/workflows, read when the walk reaches ci.
func TestResolveFoldersReadsAtOnce(t *testing.T) {
	// Not parallel: the counting git is put on this process's PATH.
	ctx := context.Background()
	r := newRepo(t)
	if err := os.MkdirAll(filepath.Join(r.Root, "ci", "workflows"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(r.Root, "ci", "workflows", "x.yml"), []byte("on: push\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("ci", filepath.Join(r.Root, ".github")); err != nil {
		t.Fatal(err)
	}
	mustGit(t, r.Root, "add", "-A")
	mustGit(t, r.Root, "commit", "-qm", "links")
	head, err := r.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	folders := []string{".github", ".github/workflows", ".github/actions", "docs", "AGENTS.md", "CLAUDE.md", ".claude", ".codex",
		".gemini", ".cursor", ".vscode", ".devcontainer", ".husky", ".zed", ".roo", ".junie"}
	settle()
	calls := gittest.CountGit(t)
	got, err := r.Tree(head).ResolveFolders(ctx, folders)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{".github": "ci", ".github/workflows": "ci/workflows", ".github/actions": "ci/actions"}
	if len(got) != len(want) {
		t.Errorf("ResolveFolders = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("ResolveFolders[%s] = %q, want %q (all: %v)", k, got[k], v, got)
		}
	}
	// One listing of the way, the link's target, then ci, ci/workflows
	// and ci/actions as the walk reaches them; no driver scans counted.
	var listed []string
	for _, c := range calls() {
		if !strings.Contains(c, "--get-regexp") {
			listed = append(listed, c)
		}
	}
	if len(listed) > 5 {
		t.Errorf("resolving %d folders started %d git processes, want at most 5:\n%s", len(folders), len(listed), strings.Join(listed, "\n"))
	}
}

// TestFetchRefConnections: fetching a ref the remote holds (a session's
// state on every run after the first) opens two connections, the listing
// that finds the ref of exactly that name and the fetch of its object (a
// fetch by name alone took a decoy for a missing ref: see
// TestRedTeamFetchRefTakesNoGuess); a missing ref opens the listing
// alone and reports false, with no error, and a remote that cannot be
// reached an error, not a missing ref.
func TestFetchRefConnections(t *testing.T) {
	// Not parallel: the counting git is put on this process's PATH.
	ctx := context.Background()
	r := newRepo(t)
	origin, c := cloneOf(t, r)
	const ref = "refs/planex/state/3"
	mustGit(t, r.Root, "push", "-q", origin, "HEAD:"+ref)
	want := strings.TrimSpace(mustGit(t, r.Root, "rev-parse", "HEAD"))
	settle()
	calls := gittest.CountGit(t)
	connections := func() []string {
		var out []string
		for _, call := range calls() {
			if strings.Contains(call, "fetch ") || strings.Contains(call, "ls-remote ") {
				out = append(out, call)
			}
		}
		return out
	}
	if found, err := c.FetchRef(ctx, "origin", ref); err != nil || !found {
		t.Fatalf("FetchRef of a ref origin holds = %v, %v", found, err)
	}
	if got := connections(); len(got) != 2 {
		t.Errorf("fetching a ref origin holds opened %d connections, want 2 (the listing, then the fetch):\n%s", len(got), strings.Join(got, "\n"))
	}
	if got := strings.TrimSpace(mustGit(t, c.Root, "rev-parse", ref)); got != want {
		t.Errorf("fetched %s = %s, want %s", ref, got, want)
	}
	if found, err := c.FetchRef(ctx, "origin", "refs/planex/state/99"); err != nil || found {
		t.Errorf("FetchRef of a missing ref = %v, %v", found, err)
	}
	if got := connections(); len(got) != 1 {
		t.Errorf("fetching a missing ref opened %d connections, want 1 (the listing alone):\n%s", len(got), strings.Join(got, "\n"))
	}
	if err := os.RemoveAll(origin); err != nil {
		t.Fatal(err)
	}
	if found, err := c.FetchRef(ctx, "origin", ref); err == nil || found {
		t.Errorf("FetchRef from a remote that is gone = %v, %v; want an error", found, err)
	}
}
