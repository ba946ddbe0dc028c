package gitrepo

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// cloneOf makes a bare origin from r and a fresh clone of it.
func cloneOf(t *testing.T, r *Repo) (origin string, clone *Repo) {
	t.Helper()
	origin = filepath.Join(t.TempDir(), "origin.git")
	mustGit(t, r.Root, "clone", "-q", "--bare", r.Root, origin)
	dir := filepath.Join(t.TempDir(), "clone")
	mustGit(t, r.Root, "clone", "-q", origin, dir)
	c, err := Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return origin, c
}

func TestStateRoundTripThroughOrigin(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRepo(t)
	origin, a := cloneOf(t, r)
	a = a.WithAuth("https://github.com", "secret-token")

	state := filepath.Join(t.TempDir(), "state")
	os.MkdirAll(filepath.Join(state, "sess"), 0o755)
	os.WriteFile(filepath.Join(state, "sess", "tasks.csv"), []byte("id\n"), 0o644)
	os.WriteFile(filepath.Join(state, "github.json"), []byte(`{"state":"planned"}`), 0o644)
	const ref = "refs/planex/state/7"
	first, err := saveState(ctx, a, ref, state, "planex: plan")
	if err != nil {
		t.Fatal(err)
	}
	if again, err := saveState(ctx, a, ref, state, "planex: no change"); err != nil || again != first {
		t.Fatalf("saving unchanged state made %s (%v), want %s", again, err, first)
	}
	if err := a.PushRef(ctx, "origin", ref, true, ""); err != nil {
		t.Fatal(err)
	}
	// A lease on a stale value is refused.
	os.WriteFile(filepath.Join(state, "github.json"), []byte(`{"state":"running"}`), 0o644)
	second, err := saveState(ctx, a, ref, state, "planex: running")
	if err != nil {
		t.Fatal(err)
	}
	if err := a.PushRef(ctx, "origin", ref, true, strings.Repeat("1", 40)); err == nil {
		t.Fatal("a push with a stale lease succeeded")
	}
	if err := a.PushRef(ctx, "origin", ref, true, first); err != nil {
		t.Fatal(err)
	}

	// A fresh runner restores the state.
	_, b := cloneOf(t, r)
	mustGit(t, b.Root, "remote", "set-url", "origin", origin)
	// Remotes are pinned when the repository is opened.
	b, err = Open(ctx, b.Root)
	if err != nil {
		t.Fatal(err)
	}
	found, err := b.FetchRef(ctx, "origin", ref)
	if err != nil || !found {
		t.Fatalf("FetchRef = %v, %v", found, err)
	}
	if got, _ := b.RemoteRef(ctx, "origin", ref); got != second {
		t.Errorf("remote ref %s, want %s", got, second)
	}
	dest := filepath.Join(t.TempDir(), "restored")
	if err := b.RestoreDir(ctx, ref, dest); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(dest, "github.json")); string(got) != `{"state":"running"}` {
		t.Errorf("restored github.json = %q", got)
	}
	if _, err := os.Stat(filepath.Join(dest, "sess", "tasks.csv")); err != nil {
		t.Error("restored state lacks sess/tasks.csv")
	}
	if found, err := b.FetchRef(ctx, "origin", "refs/planex/state/99"); err != nil || found {
		t.Errorf("FetchRef of a missing ref = %v, %v", found, err)
	}
	refs, err := b.ListRemoteRefs(ctx, "origin", "refs/planex/state/*")
	if err != nil || refs[ref] != second {
		t.Errorf("ListRemoteRefs = %v, %v", refs, err)
	}
}

func TestPushRefusesOtherRefs(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	_, c := cloneOf(t, r)
	for _, ref := range []string{"refs/heads/main", "refs/heads/feature", "refs/tags/v1"} {
		err := c.PushRef(context.Background(), "origin", ref, false, "")
		if !errors.Is(err, ErrProtectedRef) {
			t.Errorf("PushRef(%s) = %v, want ErrProtectedRef", ref, err)
		}
	}
}

// TestDropPersistedCredentials: a header in .git/config goes, also one
// set twice (one key, two values, in the config and in a file it
// includes: removed once each, where a second removal used to fail).
func TestDropPersistedCredentials(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRepo(t)
	mustGit(t, r.Root, "config", "--local", "http.https://github.com/.extraheader", "AUTHORIZATION: basic c2VjcmV0")
	mustGit(t, r.Root, "config", "--local", "--add", "http.https://github.com/.extraheader", "X-Second: c2Vjb25k")
	inc := filepath.Join(t.TempDir(), "creds.config")
	mustGit(t, r.Root, "config", "--file", inc, "http.https://github.com/.extraheader", "AUTHORIZATION: basic aW5jbHVkZWQ=")
	mustGit(t, r.Root, "config", "--file", inc, "--add", "http.https://github.com/.extraheader", "X-Second: aW5jMg==")
	mustGit(t, r.Root, "config", "--local", "include.path", inc)
	removed, err := r.DropPersistedCredentials(ctx)
	if err != nil || len(removed) != 2 || removed[0] != "http.https://github.com/.extraheader" || removed[1] != inc+":http.https://github.com/.extraheader" {
		t.Fatalf("removed %q, %v", removed, err)
	}
	b, _ := os.ReadFile(filepath.Join(r.CommonDir, "config"))
	ib, _ := os.ReadFile(inc)
	if strings.Contains(string(b), "c2VjcmV0") || strings.Contains(string(b), "c2Vjb25k") || strings.Contains(string(ib), "aW5j") {
		t.Errorf("a credential is still there:\n%s\n%s", b, ib)
	}
	if removed, err := r.DropPersistedCredentials(ctx); err != nil || len(removed) != 0 {
		t.Errorf("second call removed %v, %v", removed, err)
	}
}

// TestDropPersistedCredentialsIncluded is actions/checkout v6's layout:
// the header lives in $RUNNER_TEMP/git-credentials-<uuid>.config, which
// .git/config includes for the repository and for its worktrees (so
// planex's task worktrees, where agents run, read it too). The token
// must be gone from that file, and git, asked from a worktree of the
// repository, must find no header any more.
func TestDropPersistedCredentialsIncluded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRepo(t)
	runnerTemp := filepath.Join(t.TempDir(), "runner temp")
	if err := os.MkdirAll(runnerTemp, 0o755); err != nil {
		t.Fatal(err)
	}
	creds := filepath.Join(runnerTemp, "git-credentials-1b4e28ba.config")
	const header = "AUTHORIZATION: basic eC1hY2Nlc3MtdG9rZW46Z2hzLXYtc2l4LXRva2Vu"
	mustGit(t, r.Root, "config", "--file", creds, "http.https://github.com/.extraheader", header)
	gitDir := filepath.Join(r.Root, ".git")
	mustGit(t, r.Root, "config", "--local", "includeIf.gitdir:"+gitDir+".path", creds)
	mustGit(t, r.Root, "config", "--local", "includeIf.gitdir:"+gitDir+"/worktrees/*.path", creds)
	mustGit(t, r.Root, "config", "--local", "includeIf.gitdir:/github/workspace/.git.path", "/github/runner_temp/git-credentials-1b4e28ba.config")
	wt := filepath.Join(t.TempDir(), "wt")
	mustGit(t, r.Root, "worktree", "add", "--detach", wt)
	if got := mustGit(t, wt, "config", "--get-regexp", "extraheader"); !strings.Contains(got, header) {
		t.Fatalf("the setup does not reach the worktree's config: %q", got)
	}

	removed, err := r.DropPersistedCredentials(ctx)
	if err != nil || len(removed) != 1 || removed[0] != creds+":http.https://github.com/.extraheader" {
		t.Fatalf("removed %q, %v", removed, err)
	}
	if b, _ := os.ReadFile(creds); strings.Contains(string(b), "eC1hY2Nlc3M") {
		t.Errorf("the token is still in %s:\n%s", creds, b)
	}
	for _, dir := range []string{r.Root, wt} {
		cmd := exec.Command("git", "config", "--get-regexp", "extraheader")
		cmd.Dir = dir
		if out, err := cmd.Output(); err == nil || len(out) > 0 {
			t.Errorf("git in %s still finds a header: %q", dir, out)
		}
	}
	if again, err := r.DropPersistedCredentials(ctx); err != nil || len(again) != 0 {
		t.Errorf("second call removed %v, %v", again, err)
	}
}

// TestDropPersistedCredentialsSubmodules: actions/checkout v4 with
// submodules: true writes the header into every submodule's config
// (.git/modules/<name>/config), which an agent reads like the rest of
// the git directory; nested submodules' configs too. All are cleaned.
func TestDropPersistedCredentialsSubmodules(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRepo(t)
	sub := newRepo(t)
	mustGit(t, r.Root, "-c", "protocol.file.allow=always", "submodule", "add", "-q", sub.Root, "libs/core")
	mustGit(t, r.Root, "commit", "-qm", "add a submodule")
	const header = "AUTHORIZATION: basic eC1hY2Nlc3MtdG9rZW46c3VibW9kdWxl"
	configs := []string{
		filepath.Join(r.CommonDir, "modules", "libs", "core", "config"),
		// A nested submodule's git directory, as git lays it out.
		filepath.Join(r.CommonDir, "modules", "libs", "core", "modules", "deep", "config"),
	}
	if err := os.MkdirAll(filepath.Dir(configs[1]), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(filepath.Dir(configs[1]), "HEAD"), []byte("ref: refs/heads/main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, cfg := range configs {
		mustGit(t, r.Root, "config", "--file", cfg, "http.https://github.com/.extraheader", header)
	}
	if got := ConfigFiles(r); len(got) != 3 || got[0] != filepath.Join(r.CommonDir, "config") {
		t.Fatalf("ConfigFiles = %q, want the repository's and both submodules'", got)
	}
	removed, err := r.DropPersistedCredentials(ctx)
	if err != nil || len(removed) != 2 {
		t.Fatalf("removed %q, %v", removed, err)
	}
	for _, cfg := range configs {
		if b, _ := os.ReadFile(cfg); strings.Contains(string(b), "eC1hY2Nlc3M") {
			t.Errorf("the token is still in %s", cfg)
		}
	}
}

// TestWorkflowPushRefusal pushes to an origin that refuses workflow
// changes the way GitHub does for a token without the workflows
// permission, and checks that the refusal is recognised as that.
func TestWorkflowPushRefusal(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRepo(t)
	origin, a := cloneOf(t, r)
	hook, err := os.ReadFile("testdata/pre-receive-workflows.sh")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(origin, "hooks", "pre-receive"), hook, 0o755); err != nil {
		t.Fatal(err)
	}
	head, _ := a.Head(ctx)
	commit := func(path string) string {
		wt := a.WorktreeDir("s", "T")
		if err := a.AddWorktree(ctx, wt, head); err != nil {
			t.Fatal(err)
		}
		defer a.RemoveWorktree(ctx, wt)
		os.MkdirAll(filepath.Dir(filepath.Join(wt, path)), 0o755)
		os.WriteFile(filepath.Join(wt, path), []byte("x\n"), 0o644)
		_, changes, err := a.Snapshot(ctx, wt, head)
		if err != nil {
			t.Fatal(err)
		}
		sha, err := a.CommitChanges(ctx, head, changes, "T1: change "+path)
		if err != nil {
			t.Fatal(err)
		}
		return sha
	}
	ok := commit("docs/x.md")
	mustGit(t, a.Root, "update-ref", "refs/heads/planex/fine", ok)
	if err := a.PushRef(ctx, "origin", "refs/heads/planex/fine", false, ""); err != nil {
		t.Fatalf("an ordinary push was refused: %v", err)
	}
	bad := commit(".github/workflows/ci.yml")
	mustGit(t, a.Root, "update-ref", "refs/heads/planex/wf", bad)
	err = a.PushRef(ctx, "origin", "refs/heads/planex/wf", false, "")
	var we *WorkflowPushError
	if !errors.As(err, &we) || we.Workflow != ".github/workflows/ci.yml" || we.Ref != "refs/heads/planex/wf" ||
		!strings.Contains(we.Message, "without `workflows` permission") {
		t.Fatalf("want a WorkflowPushError naming the file, got %v", err)
	}
	if got := strings.TrimSpace(mustGit(t, origin, "for-each-ref", "refs/heads/planex/wf")); got != "" {
		t.Errorf("the refused branch is on origin: %s", got)
	}
}

func TestWorkflowRefusalWordings(t *testing.T) {
	t.Parallel()
	for _, out := range []string{
		"!\trefs/heads/planex/x:refs/heads/planex/x\t[remote rejected] (refusing to allow a GitHub App to create or update workflow `.github/workflows/a.yml` without `workflows` permission)",
		"remote: refusing to allow an OAuth App to create or update workflow `.github/workflows/a.yml` without `workflow` scope",
		"refusing to allow a Personal Access Token to create or update workflow `.github/workflows/a.yml` without `workflow` scope",
	} {
		we := workflowRefusal("refs/heads/planex/x", out)
		if we == nil || we.Workflow != ".github/workflows/a.yml" || strings.HasSuffix(we.Message, ")") {
			t.Errorf("%q: %+v", out, we)
		}
	}
	if we := workflowRefusal("r", "! [rejected] (non-fast-forward)"); we != nil {
		t.Errorf("an ordinary rejection: %+v", we)
	}
}

// TestPushRefsAtomic: a state ref with a lease and a branch that must
// fast-forward go in one push; a stale lease, or a branch that does not
// fast-forward, moves neither; a ref outside planex's is refused before
// git runs.
func TestPushRefsAtomic(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRepo(t)
	origin, a := cloneOf(t, r)
	const state, branch = "refs/planex/state/5", "refs/heads/planex/run"
	head, err := a.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "state")
	os.MkdirAll(dir, 0o755)
	write := func(s string) Saved {
		t.Helper()
		os.WriteFile(filepath.Join(dir, "github.json"), []byte(s), 0o644)
		saved, err := StateAt(a, state).SaveOn(ctx, Saved{}, dir, "state "+s)
		if err != nil {
			t.Fatal(err)
		}
		return saved
	}
	remoteAt := func(ref string) string {
		t.Helper()
		out, _ := exec.Command("git", "--git-dir", origin, "for-each-ref", "--format=%(objectname)", ref).Output()
		return strings.TrimSpace(string(out))
	}
	first := write("1")
	if err := a.SetRef(ctx, branch, head); err != nil {
		t.Fatal(err)
	}
	if err := a.PushRefs(ctx, "origin", []RefPush{{Ref: state, Lease: true}, {Ref: branch}}); err != nil {
		t.Fatal(err)
	}
	if remoteAt(state) != first.Commit || remoteAt(branch) != head {
		t.Fatalf("origin has %s at %s and %s at %s", state, remoteAt(state), branch, remoteAt(branch))
	}
	// A stale lease: the branch does not move either.
	next, err := a.NoteCommit(ctx, head, "next")
	if err != nil {
		t.Fatal(err)
	}
	a.SetRef(ctx, branch, next)
	write("2")
	if err := a.PushRefs(ctx, "origin", []RefPush{{Ref: state, Lease: true, Expected: strings.Repeat("1", 40)}, {Ref: branch}}); err == nil {
		t.Error("a push with a stale lease succeeded")
	}
	if remoteAt(state) != first.Commit || remoteAt(branch) != head {
		t.Errorf("a refused atomic push moved refs: %s, %s", remoteAt(state), remoteAt(branch))
	}
	// A branch that does not fast-forward: the state does not move.
	other, err := a.NoteCommit(ctx, head, "elsewhere")
	if err != nil {
		t.Fatal(err)
	}
	mustGit(t, a.Root, "push", "-q", "origin", other+":"+branch)
	if err := a.PushRefs(ctx, "origin", []RefPush{{Ref: state, Lease: true, Expected: first.Commit}, {Ref: branch}}); err == nil {
		t.Error("a branch that does not fast-forward was pushed")
	}
	if remoteAt(state) != first.Commit || remoteAt(branch) != other {
		t.Errorf("a refused atomic push moved refs: %s, %s", remoteAt(state), remoteAt(branch))
	}
	if err := a.PushRefs(ctx, "origin", []RefPush{{Ref: state, Lease: true, Expected: first.Commit}, {Ref: "refs/heads/main"}}); !errors.Is(err, ErrProtectedRef) {
		t.Errorf("pushing main: %v, want ErrProtectedRef", err)
	}
}

// saveState saves dir on ref on top of whatever ref holds (none when it
// does not exist), as the Action's store does with the tip it read.
func saveState(ctx context.Context, r *Repo, ref, dir, message string) (string, error) {
	parent, _ := StateAt(r, ref).Read(ctx)
	saved, err := StateAt(r, ref).SaveOn(ctx, parent, dir, message)
	return saved.Commit, err
}
