package apicommit

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/planexhq/planex/internal/gh"
	"github.com/planexhq/planex/internal/ghfake"
	"github.com/planexhq/planex/internal/gitrepo"
)

const repoName = "octo/demo"

// env is a local repository whose origin is the bare repository backing a
// fake GitHub, with one commit (base) on both.
type env struct {
	t          *testing.T
	dir, bare  string
	base       string
	fake       *ghfake.Fake
	pub        *Publisher
	repo       *gitrepo.Repo
	ctx        context.Context
	branchName string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	e := &env{t: t, dir: t.TempDir(), bare: filepath.Join(t.TempDir(), "origin.git"), ctx: context.Background(), branchName: "planex/s1"}
	e.git("init", "-q", "-b", "main")
	e.git("config", "user.name", "Maintainer")
	e.git("config", "user.email", "m@example.com")
	e.write("README.md", "# demo\n")
	e.write("old.txt", "to be deleted\n")
	e.git("add", ".")
	e.git("commit", "-qm", "initial")
	e.base = e.git("rev-parse", "HEAD")
	e.git("clone", "-q", "--bare", e.dir, e.bare)
	e.git("remote", "add", "origin", e.bare)
	e.fake = ghfake.New(t)
	e.fake.AddRepo(repoName, ghfake.Repo{})
	e.fake.SetGitDir(repoName, e.bare)
	client, err := gh.NewClient(e.ctx, gh.Options{Token: "t", APIURL: e.fake.URL(), HTTPClient: e.fake.HTTPClient(),
		Retry: gh.RetryPolicy{BaseDelay: time.Millisecond, MaxDelay: time.Millisecond, SettleWindow: -1}})
	if err != nil {
		t.Fatal(err)
	}
	if e.repo, err = gitrepo.Open(e.ctx, e.dir); err != nil {
		t.Fatal(err)
	}
	e.pub = &Publisher{GH: client, Local: e.repo, Owner: "octo", Repo: "demo", Remote: "origin"}
	return e
}

func (e *env) git(args ...string) string {
	e.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = e.dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		e.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func (e *env) write(rel, content string) {
	e.t.Helper()
	p := filepath.Join(e.dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
}

// commit records the working tree as a commit on parent without moving
// any branch, as planex's task commits are made.
func (e *env) commit(parent, msg string) string {
	e.t.Helper()
	e.git("add", "-A")
	return e.git("commit-tree", e.git("write-tree"), "-p", parent, "-m", msg)
}

func (e *env) requests(route string) int {
	n := 0
	for _, r := range e.fake.Requests() {
		if r.Route == route {
			n++
		}
	}
	return n
}

const (
	routeBlob   = "POST /repos/{owner}/{repo}/git/blobs"
	routeTree   = "POST /repos/{owner}/{repo}/git/trees"
	routeCommit = "POST /repos/{owner}/{repo}/git/commits"
)

// TestPublishSplitsLargeChangesAndSendsEachContentOnce: a change with more
// entries than one tree request takes is sent as a chain of trees, the
// same binary content at two paths is one blob, and the result is git's
// tree, with a deletion, on a branch GitHub created.
func TestPublishSplitsLargeChangesAndSendsEachContentOnce(t *testing.T) {
	e := newEnv(t)
	e.pub.entriesPerTree = 2
	for _, name := range []string{"a.txt", "b.txt", "c.txt"} {
		e.write("docs/"+name, name+"\n")
	}
	e.write("bin/one.dat", "\x00\x01binary\xff")
	e.write("bin/two.dat", "\x00\x01binary\xff")
	e.git("rm", "-q", "old.txt")
	local := e.commit(e.base, "T1: many files\n\nPlanex-Session: s1\nPlanex-Task: T1\n")

	made, err := e.pub.Publish(e.ctx, e.branchName, e.base, local)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := e.git("rev-parse", made+"^{tree}"), e.git("rev-parse", local+"^{tree}"); got != want {
		t.Errorf("tree %s, want git's %s", got, want)
	}
	if got := e.git("log", "-1", "--format=%B", made); got != e.git("log", "-1", "--format=%B", local) {
		t.Errorf("message %q", got)
	}
	if n := e.requests(routeTree); n != 3 {
		t.Errorf("%d tree requests for 6 entries at 2 per request, want 3", n)
	}
	if n := e.requests(routeBlob); n != 1 {
		t.Errorf("%d blob requests, want 1 (two paths, one binary content)", n)
	}
	if !e.fake.Verification(repoName, made).Verified {
		t.Error("the commit is not verified")
	}
	if remote := strings.Fields(e.git("ls-remote", e.bare, "refs/heads/"+e.branchName)); len(remote) == 0 || remote[0] != made {
		t.Errorf("GitHub's branch = %v, want %s", remote, made)
	}
}

// TestPublishRefusesAFileOverTheLimitBeforeSendingAnything names the file.
func TestPublishRefusesAFileOverTheLimitBeforeSendingAnything(t *testing.T) {
	e := newEnv(t)
	e.pub.MaxBlob = 1000
	e.write("small.txt", "fine\n")
	e.write("data/huge.bin", strings.Repeat("x", 1001))
	local := e.commit(e.base, "T1: huge")
	_, err := e.pub.Publish(e.ctx, e.branchName, e.base, local)
	if !errors.Is(err, ErrBlobTooLarge) || !strings.Contains(err.Error(), "data/huge.bin is 1001 bytes") {
		t.Fatalf("err = %v, want one naming data/huge.bin", err)
	}
	for _, route := range []string{routeBlob, routeTree, routeCommit} {
		if n := e.requests(route); n != 0 {
			t.Errorf("%d requests %s", n, route)
		}
	}
}

// TestPublishNeverOverwritesABranchGitHubHasElsewhere: a run branch on
// GitHub that is not at the commit's parent stops publishing.
func TestPublishNeverOverwritesABranchGitHubHasElsewhere(t *testing.T) {
	e := newEnv(t)
	e.write("x.txt", "x\n")
	other := e.commit(e.base, "someone else's")
	e.git("push", "-q", "origin", other+":refs/heads/"+e.branchName)
	e.write("y.txt", "y\n")
	local := e.commit(e.base, "T1: mine")
	_, err := e.pub.Publish(e.ctx, e.branchName, e.base, local)
	if !errors.Is(err, gh.ErrBranchMoved) {
		t.Fatalf("err = %v, want ErrBranchMoved", err)
	}
	if n := e.requests(routeCommit); n != 0 {
		t.Errorf("%d commits made", n)
	}
	if remote := strings.Fields(e.git("ls-remote", e.bare, "refs/heads/"+e.branchName)); remote[0] != other {
		t.Errorf("GitHub's branch moved to %v", remote)
	}
}

// TestPublishSurvivesALostAnswerToTheRefUpdate: the fast-forward was
// applied but its answer lost; publishing finds it done and does not fail.
func TestPublishSurvivesALostAnswerToTheRefUpdate(t *testing.T) {
	e := newEnv(t)
	e.write("one.txt", "1\n")
	first := e.commit(e.base, "T1: one")
	made1, err := e.pub.Publish(e.ctx, e.branchName, e.base, first)
	if err != nil {
		t.Fatal(err)
	}
	e.write("two.txt", "2\n")
	second := e.commit(made1, "T2: two")
	e.fake.InjectFault("PATCH /repos/{owner}/{repo}/git/refs/{ref}", 1, ghfake.LostResponse(502))
	made2, err := e.pub.Publish(e.ctx, e.branchName, made1, second)
	if err != nil {
		t.Fatal(err)
	}
	if remote := strings.Fields(e.git("ls-remote", e.bare, "refs/heads/"+e.branchName)); remote[0] != made2 {
		t.Errorf("GitHub's branch = %v, want %s", remote, made2)
	}
	if got := e.git("rev-parse", made2+"^"); got != made1 {
		t.Errorf("parent %s, want %s", got, made1)
	}
}

// TestSyncTakesGitHubsBranchWhenAhead and refuses a diverged one.
func TestSyncTakesGitHubsBranchWhenAhead(t *testing.T) {
	e := newEnv(t)
	e.git("branch", e.branchName, e.base)
	e.write("one.txt", "1\n")
	made, err := e.pub.Publish(e.ctx, e.branchName, e.base, e.commit(e.base, "T1: one"))
	if err != nil {
		t.Fatal(err)
	}
	if err := e.pub.Sync(e.ctx, e.branchName); err != nil {
		t.Fatal(err)
	}
	if got := e.git("rev-parse", e.branchName); got != made {
		t.Errorf("local branch at %s, want GitHub's %s", got, made)
	}
	e.write("two.txt", "2\n")
	e.git("update-ref", "refs/heads/"+e.branchName, e.commit(e.base, "diverged"))
	if err := e.pub.Sync(e.ctx, e.branchName); err == nil || !strings.Contains(err.Error(), "have diverged") {
		t.Errorf("diverged branch: err = %v", err)
	}
}
