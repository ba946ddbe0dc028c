package cli

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/planexhq/planex/internal/ghfake"
)

// Faults as a busy repository produces them, where only a process shows
// them: runs killed mid-wave, cancelled jobs, pushes GitHub refuses for a
// reason planex does not know. Nothing may be lost, duplicated or left
// "running". (Rate limits, lost answers and the refused workflow push are
// internal/action's tests against the Runner.)

// commentsWith counts the comments on n that start with prefix.
func (g *ghEnv) commentsWith(n int, prefix string) []string {
	var out []string
	for _, c := range g.fake.Comments(ghRepo, n) {
		if strings.HasPrefix(c.Body, prefix) {
			out = append(out, c.Body)
		}
	}
	return out
}

// planned posts a plan for the diamond on a new issue and returns the
// issue and the plan id.
func (g *ghEnv) planned(tasks ...task) (int, string) {
	g.t.Helper()
	g.setPlan(tasks...)
	n := g.fake.AddIssue(ghRepo, "maintainer", "Add four files", "We need a, b, c and d.")
	if r := g.run("issue_comment", g.comment(n, false, "maintainer", "/planex add four files")); r.code != 0 {
		g.t.Fatalf("plan run: %d\n%s\n%s", r.code, r.out, r.err)
	}
	return n, g.lastPlanID(n)
}

// assertDone checks a run that finished: the four commits once each, one
// pull request, one status comment saying done, the done label.
func (g *ghEnv) assertDone(n int, r actionRun) {
	g.t.Helper()
	if r.code != 0 || r.outputs["status"] != "done" {
		g.t.Fatalf("run: %d %v\n%s\n%s", r.code, r.outputs, r.out, r.err)
	}
	prs := g.fake.PullRequests(ghRepo)
	if len(prs) != 1 {
		g.t.Fatalf("%d pull requests", len(prs))
	}
	if got := strings.Join(g.branchCommits(prs[0].Head), " | "); got != "T1: base | T2: left | T3: right | T4: join" {
		g.t.Errorf("branch %s = %s", prs[0].Head, got)
	}
	if !strings.Contains(prs[0].Body, "Closes #"+itoa(n)) || !strings.Contains(prs[0].Body, "| T4 | join | ✅ completed |") {
		g.t.Errorf("pull request body:\n%s", prs[0].Body)
	}
	statuses := g.commentsWith(n, "<!-- planex:status -->")
	if len(statuses) != 1 || !strings.Contains(statuses[0], "**done**") {
		g.t.Errorf("status comments: %q", statuses)
	}
	if l := g.issueLabels(n); !hasLabel(l, "planex:done") || hasLabel(l, "planex:running") || hasLabel(l, "planex:failed") {
		g.t.Errorf("labels = %v", l)
	}
	if errs := g.fake.Errors(); len(errs) > 0 {
		g.t.Errorf("requests GitHub would refuse: %v", errs)
	}
}

// originRunRefs is what origin's files say of its run branches (their
// loose ref files and packed-refs), read without starting git: it
// changes whenever a push moves one.
func (g *ghEnv) originRunRefs() string {
	var b strings.Builder
	filepath.WalkDir(filepath.Join(g.origin, "refs", "heads", "planex"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			c, _ := os.ReadFile(p)
			b.WriteString(p + " " + string(c))
		}
		return nil
	})
	c, _ := os.ReadFile(filepath.Join(g.origin, "packed-refs"))
	b.Write(c)
	return b.String()
}

// startBackground starts `planex action` for an event in a fresh clone, in
// the background.
func (g *ghEnv) startBackground(eventPath string, extraEnv ...string) (*exec.Cmd, *syncBuffer) {
	g.t.Helper()
	ws := filepath.Join(g.t.TempDir(), "ws")
	g.git("clone", "-q", g.origin, ws)
	cmd := g.actionCmd(ws, "issue_comment", eventPath)
	cmd.Env = append(cmd.Env, extraEnv...)
	ownTemp(g.t, cmd) // the tests kill it
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		g.t.Fatal(err)
	}
	return cmd, out
}

// TestActionKilledRunIsTakenOver SIGKILLs the job running a plan, in the
// middle of its first task and in the middle of a wave after a task was
// committed (no finalize step runs). While GitHub says the job's workflow
// run goes on, /planex retry leaves it alone; once the run has ended, a
// retry from a new run takes it over and resumes from the last task
// commit: every task committed once, one pull request, the plan done.
func TestActionKilledRunIsTakenOver(t *testing.T) {
	t.Parallel()
	cases := []struct {
		block     string
		committed int
	}{{"T1", 0}, {"T3", 2}}
	atOnce(t, len(cases), func(i int) string { return "killed in " + cases[i].block }, func(t *testing.T, i int) {
		c := cases[i]
		g := newGHEnv(t)
		g.skipReview()
		n, id := g.planned(diamond()...)
		g.write(g.fake_dir(), c.block+".block", "")
		g.fake.SetWorkflowRun(ghRepo, ghfake.WorkflowRun{ID: 42, Status: "in_progress"})
		cmd, out := g.startBackground(g.comment(n, false, "maintainer", "/planex approve "+id))
		waitForFile(t, filepath.Join(g.fake_dir(), c.block+".pid"), cmd, out)
		committed := func() int {
			refs := strings.Fields(g.originGit("for-each-ref", "--format=%(refname:short)", "refs/heads/planex/"))
			if len(refs) != 1 {
				return 0
			}
			return len(g.branchCommits(refs[0]))
		}
		// Counted again only when a push has moved a ref: counting takes
		// three git processes, and polling with them every 20 ms was
		// hundreds of processes while T2 ran on a busy machine.
		for seen, deadline := "", time.Now().Add(60*time.Second); c.committed > 0; time.Sleep(20 * time.Millisecond) {
			if state := g.originRunRefs(); state != seen {
				if seen = state; committed() >= c.committed {
					break
				}
			}
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				t.Fatalf("%d task(s) never reached origin:\n%s", c.committed, out.String())
			}
		}
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		agentsGone(t, g.fake_dir())
		os.Remove(filepath.Join(g.fake_dir(), c.block+".block"))
		if l := g.issueLabels(n); !hasLabel(l, "planex:running") {
			t.Fatalf("after the kill: labels %v", l)
		}

		r := g.run("issue_comment", g.comment(n, false, "maintainer", "/planex retry"), "GITHUB_RUN_ID=43")
		if r.code != 0 || !strings.Contains(g.lastComment(n), "is running in [workflow run 42]") {
			t.Fatalf("retry while the run goes on: %d %q\n%s", r.code, g.lastComment(n), r.err)
		}
		if got := committed(); got != c.committed {
			t.Fatalf("a refused retry ran tasks: %d commits", got)
		}

		g.fake.SetWorkflowRun(ghRepo, ghfake.WorkflowRun{ID: 42, Status: "completed", Conclusion: "cancelled"})
		r = g.run("issue_comment", g.comment(n, false, "maintainer", "/planex retry"), "GITHUB_RUN_ID=44")
		if !strings.Contains(r.out, "Taking over from [workflow run 42]") || !strings.Contains(r.out, "ended (cancelled)") {
			t.Errorf("takeover not reported:\n%s", r.out)
		}
		g.assertDone(n, r)
	})
}

// TestActionCancelledJobEndsFailed: a job cancelled mid-wave (SIGTERM,
// as GitHub sends it) reports the plan failed on its way out, without a
// finalize step, and a retry finishes it.
func TestActionCancelledJobEndsFailed(t *testing.T) {
	t.Parallel()
	g := newGHEnv(t)
	g.skipReview()
	n, id := g.planned(diamond()...)
	g.write(g.fake_dir(), "T3.block", "")
	cmd, out := g.startBackground(g.comment(n, false, "maintainer", "/planex approve "+id))
	waitForFile(t, filepath.Join(g.fake_dir(), "T3.pid"), cmd, out)
	cmd.Process.Signal(syscall.SIGTERM)
	cmd.Wait()
	agentsGone(t, g.fake_dir())
	os.Remove(filepath.Join(g.fake_dir(), "T3.block"))
	statuses := g.commentsWith(n, "<!-- planex:status -->")
	if len(statuses) != 1 || !strings.Contains(statuses[0], "**failed**") || !strings.Contains(statuses[0], "cancelled or timed out") {
		t.Fatalf("status comment after the cancel: %q\n%s", statuses, out.String())
	}
	if l := g.issueLabels(n); !hasLabel(l, "planex:failed") || hasLabel(l, "planex:running") {
		t.Errorf("labels = %v", l)
	}
	if c := g.lastComment(n); strings.Contains(c, "internal error") {
		t.Errorf("last comment: %s", c)
	}
	r := g.run("issue_comment", g.comment(n, false, "maintainer", "/planex retry"), "GITHUB_RUN_ID=43")
	g.assertDone(n, r)
}

// TestActionInternalErrorEndsFailedOnce: a push refused for a reason
// planex does not know is an internal error: reported once, and the plan
// ends failed, not running.
func TestActionInternalErrorEndsFailedOnce(t *testing.T) {
	t.Parallel()
	g := newGHEnv(t)
	g.skipReview()
	g.write(g.origin, "hooks/pre-receive", "#!/bin/sh\nwhile read -r old new ref; do case $ref in refs/heads/planex/*) echo 'branch pushes are frozen' >&2; exit 1;; esac; done\n")
	os.Chmod(filepath.Join(g.origin, "hooks", "pre-receive"), 0o755)
	n, id := g.planned(task{ID: "T1", Title: "one", Scope: "a/**"})
	before := len(g.fake.Comments(ghRepo, n))
	r := g.run("issue_comment", g.comment(n, false, "maintainer", "/planex approve "+id))
	if r.code == 0 || r.outputs["status"] != "failed" {
		t.Fatalf("run: %d %v\n%s", r.code, r.outputs, r.err)
	}
	internal := 0
	for _, c := range g.fake.Comments(ghRepo, n)[before:] {
		if strings.HasPrefix(c.Body, "planex hit an internal error") {
			internal++
		}
	}
	if internal != 1 {
		t.Errorf("%d internal-error comments, want 1", internal)
	}
	if l := g.issueLabels(n); !hasLabel(l, "planex:failed") || hasLabel(l, "planex:running") {
		t.Errorf("labels = %v", l)
	}
	if s := g.commentsWith(n, "<!-- planex:status -->"); len(s) != 1 || !strings.Contains(s[0], "**failed**") {
		t.Errorf("status: %q", s)
	}
}
