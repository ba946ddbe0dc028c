package action

import (
	"strings"
	"testing"

	"github.com/planexhq/planex/internal/apicommit"
)

// TestMatrixCommitSigningAPI: in matrix mode with commit-signing: api
// each task job has GitHub make its commit on the wave's base, and
// collect moves the run branch through the API only: to the task job's
// own commit when it sits on the tip (the first task of a wave), to a
// commit GitHub makes again on the tip for the tasks after it. (Was
// internal/cli's TestActionMatrixCommitSigningAPI, a planex process per
// job; the Publisher is wired as internal/cli wires it, whose
// TestActionCommitSigningAPI keeps the process end to end.)
func TestMatrixCommitSigningAPI(t *testing.T) {
	w := newParallelWorld(t)
	w.config = append(w.config, func(c *Config) { c.CommitSigning = apicommit.ModeAPI })
	w.fake.SetGitDir(wRepo, w.origin)
	w.agent.setPlan(diamond()...)
	n := w.fake.AddIssue(wRepo, "maintainer", "Add four files", "We need a, b, c and d.")
	if r, err := w.handle(w.comment(n, "maintainer", "/planex add four files")); err != nil || r.Outputs.Status != StatusPlanned {
		t.Fatalf("plan: %v %+v", err, r.Outputs)
	}
	r, err := w.handle(w.comment(n, "maintainer", "/planex approve "+w.planID(n)), matrixMode("1"))
	if err != nil || r.Outputs.Status != StatusRunning || w.dispatches() != 1 {
		t.Fatalf("approve: %v %+v, %d dispatches", err, r.Outputs, w.dispatches())
	}
	branch := "planex/" + r.Outputs.SessionID
	if w.branchExists(branch) {
		t.Fatal("the approve run executed tasks itself")
	}
	for _, run := range []string{"101", "102", "103", "104", "105"} {
		if len(w.fake.PullRequests(wRepo)) != 0 {
			break
		}
		if _, ids := w.runWave(n, run); ids == nil {
			break
		}
	}
	if got := strings.Join(w.branch(branch), " | "); got != "T1:_base | T2:_left | T3:_right | T4:_join" {
		t.Fatalf("origin %s = %s", branch, got)
	}
	if prs := w.fake.PullRequests(wRepo); len(prs) != 1 || prs[0].Head != branch {
		t.Fatalf("pull requests: %+v", prs)
	}
	log := w.fake.RefLog(wRepo, "refs/heads/"+branch)
	if len(log) != 4 {
		t.Errorf("GitHub's branch moved %d times, want 4: %+v", len(log), log)
	}
	for _, u := range log {
		if !u.API {
			t.Errorf("the run branch was pushed: %+v", u)
		}
		if !w.fake.Verification(wRepo, u.New).Verified {
			t.Errorf("commit %s is not verified", u.New)
		}
	}
	// T1, T2 and T4 are their task jobs' commits; only T3, the second task
	// of wave 2, is made again on top of T2.
	commits := 0
	for _, q := range w.fake.Requests() {
		if q.Route == "POST /repos/{owner}/{repo}/git/commits" {
			commits++
		}
	}
	if commits != 5 {
		t.Errorf("%d commit requests, want 5 (4 task jobs and T3 again on T2)", commits)
	}
	w.noRefusedRequests()
}
