package action

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// pushRunBranchFirst plans T1 (scope **) and T2 on a new issue n and,
// before any approval, has someone who can push create the plan's run
// branch (its name follows from the plan comment's session) at a commit
// of theirs: made by commit on a clone checked out at the plan's base.
// It returns the issue and the commit pushed.
func pushRunBranchFirst(t *testing.T, commit func(dir, base string)) (w *world, n int, pushed string) {
	t.Helper()
	w = newWorld(t)
	w.agent.setPlan(wTask{ID: "T1", Title: "one", Scope: "**"}, wTask{ID: "T2", Title: "two", Scope: "b/**", Deps: []string{"T1"}})
	n = w.fake.AddIssue(wRepo, "maintainer", "Two files", "")
	if _, err := w.handle(w.comment(n, "maintainer", "/planex two files")); err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Base   string `json:"base"`
		Branch string `json:"branch"`
	}
	if err := json.Unmarshal([]byte(run(t, w.origin, "show", "refs/planex/state/"+strconv.Itoa(n)+":github.json")), &rec); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "pusher")
	run(t, t.TempDir(), "clone", "-q", w.origin, dir)
	run(t, dir, "checkout", "-q", "--detach", rec.Base)
	commit(dir, rec.Base)
	run(t, dir, "push", "-q", "origin", "HEAD:refs/heads/"+rec.Branch)
	return w, n, strings.TrimSpace(run(t, dir, "rev-parse", "HEAD"))
}

// TestRedTeamRunBranchPushedBeforeApproval: between a plan's posting and
// its approval, someone who can push creates the plan's run branch
// themselves: at the base with a commit of theirs on top (no planex
// trailers, a workflow and a change to the code the tasks build on), or
// at a commit of a history that does not hold the plan's base at all.
// planex took the branch as its own: the approved tasks ran on that
// commit, which the plan comment never showed, and the pull request it
// opened carried the pusher's commit as part of planex's work. Now a run
// whose branch holds commits before any of its tasks committed, or does
// not hold the plan's base, stops before anything runs: no task runs,
// no pull request is opened, and the thread is told why.
func TestRedTeamRunBranchPushedBeforeApproval(t *testing.T) {
	t.Parallel()
	cases := map[string]func(t *testing.T) func(dir, base string){
		"a commit of theirs on the base": func(t *testing.T) func(dir, base string) {
			return func(dir, _ string) {
				os.MkdirAll(filepath.Join(dir, ".github", "workflows"), 0o755)
				os.WriteFile(filepath.Join(dir, ".github", "workflows", "x.yml"), []byte("on: push\njobs: {}\n"), 0o644)
				os.WriteFile(filepath.Join(dir, "a.txt"), []byte("backdoor\n"), 0o644)
				run(t, dir, "add", "-A")
				run(t, dir, asForger("commit", "-q", "-m", "tweak")...)
			}
		},
		"a history without the base": func(t *testing.T) func(dir, base string) {
			return func(dir, _ string) {
				run(t, dir, "checkout", "-q", "--orphan", "other")
				os.WriteFile(filepath.Join(dir, "a.txt"), []byte("another project\n"), 0o644)
				run(t, dir, "add", "-A")
				run(t, dir, asForger("commit", "-q", "-m", "unrelated")...)
			}
		},
	}
	for name, commit := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			w, n, pushed := pushRunBranchFirst(t, commit(t))
			r, err := w.handle(w.comment(n, "maintainer", "/planex approve "+w.planID(n)))
			if err == nil && r.Outputs.Status == StatusDone {
				t.Errorf("the run built on the pushed branch and finished: %+v", r.Outputs)
			}
			if prs := w.fake.PullRequests(wRepo); len(prs) != 0 {
				t.Errorf("a pull request was opened carrying the pushed commit:\n%s", prs[0].Body)
			}
			w.agent.mu.Lock()
			calls := strings.Join(w.agent.calls, ", ")
			w.agent.mu.Unlock()
			if strings.Contains(calls, "execute") {
				t.Errorf("tasks ran on the pushed branch: %s", calls)
			}
			if c := w.lastComment(n); !strings.Contains(c, "will not run") || !strings.Contains(c, pushed[:10]) {
				t.Errorf("the thread is not told why the run stopped:\n%s", c)
			}
		})
	}
}

// TestRedTeamCommitPushedMidRunIsNamed: once a task of the run has
// committed, later commits on the run branch are kept (a maintainer's fix
// before /planex retry), so someone who can push adds one of theirs
// between the run and its retry: the pull request carried it under
// planex's report, which named only the tasks. The pull request's body
// now names every commit on the branch that no task of the run made.
func TestRedTeamCommitPushedMidRunIsNamed(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.agent.setPlan(wTask{ID: "T1", Title: "one", Scope: "a/**"}, wTask{ID: "T2", Title: "two", Scope: "b/**", Deps: []string{"T1"}})
	w.agent.failTask("T2", "not yet")
	n := w.fake.AddIssue(wRepo, "maintainer", "Two files", "")
	if _, err := w.handle(w.comment(n, "maintainer", "/planex two files")); err != nil {
		t.Fatal(err)
	}
	if _, err := w.handle(w.comment(n, "maintainer", "/planex approve "+w.planID(n))); err != nil {
		t.Fatal(err)
	}
	prs := w.fake.PullRequests(wRepo)
	if len(prs) != 1 {
		t.Fatalf("pull requests after the first run: %d", len(prs))
	}
	dir := filepath.Join(t.TempDir(), "pusher")
	run(t, t.TempDir(), "clone", "-q", w.origin, dir)
	run(t, dir, "checkout", "-q", prs[0].Head)
	os.WriteFile(filepath.Join(dir, "c.txt"), []byte("theirs\n"), 0o644)
	run(t, dir, "add", "-A")
	run(t, dir, asForger("commit", "-q", "-m", "Sneaked in under the report")...)
	run(t, dir, "push", "-q", "origin", "HEAD:refs/heads/"+prs[0].Head)
	sneaked := strings.TrimSpace(run(t, dir, "rev-parse", "HEAD"))

	w.agent.failTask("T2", "")
	if _, err := w.handle(w.comment(n, "maintainer", "/planex retry")); err != nil {
		t.Fatal(err)
	}
	body := w.fake.PullRequests(wRepo)[0].Body
	if !strings.Contains(body, "1 commit") || !strings.Contains(body, sneaked[:10]) || !strings.Contains(body, "Sneaked in under the report") {
		t.Errorf("the pull request's body does not name the commit no task made:\n%s", body)
	}
}
