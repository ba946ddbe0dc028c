package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/planexhq/planex/internal/ghfake"
)

// signingEnv is a repository whose origin is the bare repository backing
// a fake GitHub's Git Data API, with a plan whose tasks make an
// executable file, a binary file, a file larger than a tree request
// carries inline, a symlink, a deletion and a mode change.
func signingEnv(t *testing.T) *ghEnv {
	t.Helper()
	g := newGHEnv(t)
	g.fake.SetGitDir(ghRepo, g.origin)
	g.git("remote", "add", "origin", g.origin)
	g.setPlan(
		task{ID: "T1", Title: "tools", Scope: "a/**"},
		task{ID: "T2", Title: "tidy", Scope: "b/**", Deps: []string{"T1"}},
		task{ID: "T3", Title: "data", Scope: "c/**", Deps: []string{"T2"}},
	)
	g.write(g.fake_dir(), "T1.sh", "printf '#!/bin/sh\\necho hi\\n' > a/tool.sh && chmod +x a/tool.sh && printf 'bin\\000ary\\377\\n' > a/blob.bin\n")
	g.write(g.fake_dir(), "T2.sh", "rm b/keep.txt && ln -s ../README.md b/readme-link && echo new > b/new.txt\n")
	g.write(g.fake_dir(), "T3.sh", "chmod +x c/keep.txt && seq 1 30000 > c/big.txt\n")
	return g
}

// signingCmd is planex in the fixture's repository with GitHub configured.
func (g *ghEnv) signingArgs(args ...string) (string, string, int) {
	g.t.Helper()
	cmd := g.command(args...)
	cmd.Env = append(cmd.Env, "GITHUB_TOKEN=ghs_test", "GITHUB_REPOSITORY="+ghRepo, "GITHUB_API_URL="+g.fake.URL(), "GITHUB_SERVER_URL="+g.fake.ServerURL())
	out, errOut := &syncBuffer{}, &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, errOut
	code := 0
	if err := cmd.Run(); err != nil {
		ee, ok := err.(interface{ ExitCode() int })
		if !ok {
			g.t.Fatal(err)
		}
		code = ee.ExitCode()
	}
	return out.String(), errOut.String(), code
}

// runBranches lists planex's run branches in the local repository, by name.
func (g *ghEnv) runBranches() []string {
	return strings.Fields(g.git("for-each-ref", "--format=%(refname:short)", "refs/heads/planex/"))
}

// taskCommits lists a branch's commits since the base, oldest first.
func (g *ghEnv) taskCommits(branch string) []string {
	return strings.Fields(g.git("rev-list", "--reverse", g.base+".."+branch))
}

func (g *ghEnv) countRequests(route string) int {
	n := 0
	for _, r := range g.fake.Requests() {
		if r.Route == route {
			n++
		}
	}
	return n
}

// TestCommitSigningAPIMakesVerifiedCommitsWithGitModesTrees runs the same
// plan in git mode and in api mode: every task's tree is the same in both;
// the api-mode commits are GitHub's own (verified, authored by the token's
// account, with planex's message and trailers), the branch on GitHub was
// only ever moved through the API, and the local branch is GitHub's.
func TestCommitSigningAPIMakesVerifiedCommitsWithGitModesTrees(t *testing.T) {
	t.Parallel()
	g := signingEnv(t)
	if out, errOut, code := g.signingArgs("-y", "--review", "skip", "signing in git mode"); code != 0 {
		t.Fatalf("git mode: exit %d\n%s\n%s", code, out, errOut)
	}
	if n := len(g.fake.Requests()); n != 0 {
		t.Errorf("git mode sent %d requests to GitHub", n)
	}
	if out, errOut, code := g.signingArgs("-y", "--review", "skip", "--commit-signing", "api", "signing in api mode"); code != 0 {
		t.Fatalf("api mode: exit %d\n%s\n%s", code, out, errOut)
	}
	// Picked by name: both runs can start within the same second, so the
	// branches' creation dates do not order them.
	branches := g.runBranches()
	if len(branches) != 2 {
		t.Fatalf("run branches: %v", branches)
	}
	if strings.Contains(branches[0], "api-mode") {
		branches[0], branches[1] = branches[1], branches[0]
	}
	if !strings.Contains(branches[0], "git-mode") || !strings.Contains(branches[1], "api-mode") {
		t.Fatalf("run branches: %v", branches)
	}
	gitMode, apiMode := g.taskCommits(branches[0]), g.taskCommits(branches[1])
	if len(gitMode) != 3 || len(apiMode) != 3 {
		t.Fatalf("commits: git mode %v, api mode %v", gitMode, apiMode)
	}
	for i := range gitMode {
		gt := strings.TrimSpace(g.git("rev-parse", gitMode[i]+"^{tree}"))
		at := strings.TrimSpace(g.git("rev-parse", apiMode[i]+"^{tree}"))
		if gt != at {
			t.Errorf("task %d: tree %s in git mode, %s in api mode:\n%s", i+1, gt, at, g.git("diff-tree", "-r", gitMode[i], apiMode[i]))
		}
	}
	// What the trees hold: the executable, the deletion, the symlink, the
	// mode change, the binary file.
	last := branches[1]
	ls := g.git("ls-tree", "-r", last)
	for _, want := range []string{"100755 blob", "a/tool.sh", "120000 blob", "b/readme-link", "a/blob.bin"} {
		if !strings.Contains(ls, want) {
			t.Errorf("tree of %s lacks %q:\n%s", last, want, ls)
		}
	}
	if strings.Contains(ls, "b/keep.txt") {
		t.Errorf("b/keep.txt was not deleted:\n%s", ls)
	}
	if !strings.Contains(g.git("ls-tree", last, "c/keep.txt"), "100755") {
		t.Error("c/keep.txt did not become executable")
	}

	remote := strings.Fields(g.originGit("ls-remote", g.origin, "refs/heads/"+last))
	if len(remote) == 0 || remote[0] != apiMode[2] {
		t.Fatalf("GitHub's %s = %v, local = %s", last, remote, apiMode[2])
	}
	client := g.fake.Client("ghs_test")
	for i, sha := range apiMode {
		c, _, err := client.Git.GetCommit(context.Background(), "octo", "demo", sha)
		if err != nil {
			t.Fatal(err)
		}
		if !c.GetVerification().GetVerified() || c.GetVerification().GetReason() != "valid" {
			t.Errorf("commit %d (%s) verification = %+v", i+1, sha, c.GetVerification())
		}
		if c.GetAuthor().GetName() != ghfake.DefaultActor {
			t.Errorf("commit %d author = %q, want the token's account", i+1, c.GetAuthor().GetName())
		}
		wantMsg := strings.TrimSpace(g.git("log", "-1", "--format=%B", gitMode[i]))
		wantMsg = strings.Replace(wantMsg, "Planex-Session: "+strings.TrimPrefix(branches[0], "planex/"), "Planex-Session: "+strings.TrimPrefix(last, "planex/"), 1)
		if got := strings.TrimSpace(c.GetMessage()); got != wantMsg {
			t.Errorf("commit %d message:\n%s\nwant (as in git mode):\n%s", i+1, got, wantMsg)
		}
	}
	for _, sha := range gitMode {
		if g.fake.Verification(ghRepo, sha).Verified {
			t.Errorf("git-mode commit %s is reported verified", sha)
		}
	}
	log := g.fake.RefLog(ghRepo, "refs/heads/"+last)
	if len(log) != 3 {
		t.Errorf("GitHub's %s moved %d times, want 3 (one per task): %+v", last, len(log), log)
	}
	for _, u := range log {
		if !u.API {
			t.Errorf("GitHub's %s was moved other than through the API: %+v", last, u)
		}
	}
	// Blobs: only the binary file and the large one; the rest travel
	// inside the tree requests.
	if n := g.countRequests("POST /repos/{owner}/{repo}/git/blobs"); n != 2 {
		t.Errorf("%d blob requests, want 2 (a/blob.bin, c/big.txt)", n)
	}
	if n := g.countRequests("POST /repos/{owner}/{repo}/git/commits"); n != 3 {
		t.Errorf("%d commit requests, want 3", n)
	}
}

// TestCommitSigningAPIResumeFindsTasksGitHubTook: planex is killed while
// T2 runs, after GitHub took T1's commit; the local branch is rewound as
// if the kill had come before planex recorded it. --continue (without the
// flag: the session remembers api mode) finds T1 on GitHub by its
// trailers and does not make it again.
func TestCommitSigningAPIResumeFindsTasksGitHubTook(t *testing.T) {
	t.Parallel()
	g := signingEnv(t)
	g.write(g.fake_dir(), "T2.block", "")
	cmd := g.command("-y", "--review", "skip", "--commit-signing", "api", "signing resumed")
	cmd.Env = append(cmd.Env, "GITHUB_TOKEN=ghs_test", "GITHUB_REPOSITORY="+ghRepo, "GITHUB_API_URL="+g.fake.URL(), "GITHUB_SERVER_URL="+g.fake.ServerURL())
	ownTemp(t, cmd)
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitForFile(t, filepath.Join(g.fake_dir(), "T2.pid"), cmd, out)
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	agentsGone(t, g.fake_dir())
	branch := g.runBranches()[0]
	t1 := strings.Fields(g.originGit("ls-remote", g.origin, "refs/heads/"+branch))
	if len(t1) == 0 {
		t.Fatalf("GitHub has no %s after T1:\n%s", branch, out.String())
	}
	g.git("update-ref", "refs/heads/"+branch, g.base)
	os.Remove(filepath.Join(g.fake_dir(), "T2.block"))

	// The session remembers api mode: continuing it in git mode is refused
	// before anything runs, and a bare --continue keeps api mode.
	if o, e, code := g.signingArgs("--continue", "--review", "skip", "--commit-signing", "git"); code == 0 || !strings.Contains(o+e, "makes its task commits with --commit-signing api") {
		t.Fatalf("continue in git mode: exit %d\n%s\n%s", code, o, e)
	}
	o2, e2, code := g.signingArgs("--continue", "--review", "skip")
	if code != 0 {
		t.Fatalf("continue: exit %d\n%s\n%s\nfirst run:\n%s", code, o2, e2, out.String())
	}
	if strings.Contains(o2, "T1: marked completed but its commit is not on") || strings.Contains(o2, "T1: started") {
		t.Errorf("T1's commit on GitHub was not found:\n%s", o2)
	}
	commits := g.taskCommits(branch)
	if len(commits) != 3 || commits[0] != t1[0] {
		t.Errorf("branch %s = %v, want 3 commits starting with T1's %s", branch, commits, t1[0])
	}
	if n := g.countRequests("POST /repos/{owner}/{repo}/git/commits"); n != 3 {
		t.Errorf("%d commit requests, want 3 (T1 is never made again)", n)
	}
	for _, sha := range commits {
		if !g.fake.Verification(ghRepo, sha).Verified {
			t.Errorf("commit %s is not verified", sha)
		}
	}
	if calls, _ := os.ReadFile(filepath.Join(g.fake_dir(), "agent-calls")); strings.Count(string(calls), "execute T1") != 1 {
		t.Errorf("T1 ran more than once:\n%s", calls)
	}
}

// TestCommitSigningAPINeedsGitHub: api mode without a token or remote is
// refused before anything runs, naming what is missing.
func TestCommitSigningAPINeedsGitHub(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.setPlan(task{ID: "T1", Title: "x", Scope: "a/**"})
	cmd := f.command("-y", "--commit-signing", "api", "no github")
	cmd.Env = append(cmd.Env, "GITHUB_TOKEN=")
	var o strings.Builder
	cmd.Stdout, cmd.Stderr = &o, &o
	err := cmd.Run()
	if err == nil || !strings.Contains(o.String(), "needs a token with contents: write in GITHUB_TOKEN") {
		t.Errorf("err %v, output:\n%s", err, o.String())
	}
	if _, _, code := f.planex("-y", "--commit-signing", "gpg", "bad mode"); code != 2 {
		t.Errorf("--commit-signing gpg: exit %d, want 2", code)
	}
	if _, err := os.Stat(filepath.Join(f.repo, ".git", "planex", "sessions")); err == nil {
		t.Error("a session was started")
	}
}

// TestActionCommitSigningAPI: with the input commit-signing: api the
// Action's task commits are GitHub's own (verified) and its run branch is
// never pushed, only moved through the API (the plan's state ref, which is
// pushed, shows that the ref log tells the two apart); the pull request is
// opened on it. (The trees of both modes are compared by
// TestCommitSigningAPIMakesVerifiedCommitsWithGitModesTrees.)
func TestActionCommitSigningAPI(t *testing.T) {
	t.Parallel()
	g := newGHEnv(t)
	g.skipReview()
	g.fake.SetGitDir(ghRepo, g.origin)
	g.setPlan(diamond()...)
	bad := g.fake.AddIssue(ghRepo, "maintainer", "Bad input", "")
	if r := g.run("issue_comment", g.comment(bad, false, "maintainer", "/planex add a file"), "INPUT_COMMIT_SIGNING=gpg"); r.code != 2 || !strings.Contains(r.out+r.err, `commit-signing is "gpg"; use git or api`) {
		t.Errorf("commit-signing: gpg: exit %d\n%s\n%s", r.code, r.out, r.err)
	}
	n := g.fake.AddIssue(ghRepo, "maintainer", "Add four files", "We need a, b, c and d.")
	r := g.run("issue_comment", g.comment(n, false, "maintainer", "/planex add four files"), "INPUT_COMMIT_SIGNING=api")
	if r.code != 0 {
		t.Fatalf("plan run: %d\n%s\n%s", r.code, r.out, r.err)
	}
	r2 := g.run("issue_comment", g.comment(n, false, "maintainer", "/planex approve "+g.lastPlanID(n)), "INPUT_COMMIT_SIGNING=api")
	if r2.code != 0 || r2.outputs["status"] != "done" {
		t.Fatalf("approve run: %d %v\n%s\n%s", r2.code, r2.outputs, r2.out, r2.err)
	}
	branch := "planex/" + r.outputs["session-id"]
	if got := strings.Join(g.branchCommits(branch), " | "); got != "T1: base | T2: left | T3: right | T4: join" {
		t.Errorf("origin %s = %s", branch, got)
	}
	log := g.fake.RefLog(ghRepo, "refs/heads/"+branch)
	if len(log) != 4 {
		t.Errorf("GitHub's branch moved %d times, want 4 (one per task): %+v", len(log), log)
	}
	for _, u := range log {
		if !u.API {
			t.Errorf("the run branch was pushed: %+v", u)
		}
		if !g.fake.Verification(ghRepo, u.New).Verified {
			t.Errorf("commit %s is not verified", u.New)
		}
	}
	if state := g.fake.RefLog(ghRepo, "refs/planex/state/"+itoa(n)); len(state) == 0 || state[0].API {
		t.Errorf("the state ref's pushes are not in the ref log as pushes: %+v", state)
	}
	if prs := g.fake.PullRequests(ghRepo); len(prs) != 1 || prs[0].Head != branch {
		t.Fatalf("pull requests: %+v", prs)
	}
	local := strings.Fields(g.originGit("rev-list", "--reverse", "main.."+branch))
	for _, sha := range local {
		if !g.fake.Verification(ghRepo, sha).Verified {
			t.Errorf("commit %s on %s is not verified", sha, branch)
		}
	}
}
