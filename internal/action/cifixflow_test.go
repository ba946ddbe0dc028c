package action

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/planexhq/planex/internal/event"
	"github.com/planexhq/planex/internal/ghfake"
)

// failCI declares a failed CI run of pr's head (a failed test job with
// its log, a passing lint job) and returns its workflow_run event.
func (w *world) failCI(id int64, pr ghfake.PullRequest) *event.Event {
	url := w.fake.ServerURL() + "/" + wRepo + "/actions/runs/" + strconv.FormatInt(id, 10)
	log := "2026-11-23T14:02:00.0000000Z ##[group]Run go test ./...\n" +
		"2026-11-23T14:02:00.1370000Z --- FAIL: TestLimiter (0.00s)\n" +
		"2026-11-23T14:02:00.2740000Z     limiter_test.go:42: Allowed() = false after reset, want true\n" +
		"2026-11-23T14:02:00.4110000Z ##[error]Process completed with exit code 1.\n"
	w.fake.SetWorkflowRun(wRepo, ghfake.WorkflowRun{ID: id, Name: "CI", Path: ".github/workflows/ci.yml", Event: "pull_request",
		Status: "completed", Conclusion: "failure", HeadBranch: pr.Head, HeadSHA: pr.HeadSHA, PullRequests: []int{pr.Number},
		Created: time.Unix(1_800_000_000+id, 0),
		Jobs: []ghfake.WorkflowJob{
			{ID: id*10 + 1, Name: "lint", Conclusion: "success", Steps: []ghfake.WorkflowStep{{Name: "Run golangci-lint", Conclusion: "success"}}, Log: "lint ok\n"},
			{ID: id*10 + 2, Name: "test", Conclusion: "failure", Log: log, Steps: []ghfake.WorkflowStep{
				{Name: "Set up job", Conclusion: "success"}, {Name: "Run go test ./...", Conclusion: "failure"}}},
		}})
	return &event.Event{Name: event.WorkflowRun, Action: "completed", Owner: wOwner, Repo: wName, DefaultBranch: "main",
		Sender: event.User{Login: "maintainer", Type: "User"}, Number: pr.Number, IsPR: true,
		Run: &event.Run{ID: id, Name: "CI", Path: ".github/workflows/ci.yml", Event: "pull_request", Status: "completed", Conclusion: "failure",
			HeadBranch: pr.Head, HeadSHA: pr.HeadSHA, HeadRepo: wRepo, HTMLURL: url, PullRequests: []int{pr.Number}}}
}

// planexPR has planex open a pull request (auto-approved) and tells the
// fake where its head is (the fake does not see pushes).
func (w *world) planexPR() ghfake.PullRequest {
	w.t.Helper()
	w.agent.setPlan(wTask{ID: "T1", Title: "base", Scope: "a/**"})
	n := w.fake.AddIssue(wRepo, "maintainer", "Add a limiter", "")
	if r, err := w.handle(w.comment(n, "maintainer", "/planex -y add a limiter")); err != nil || r.Outputs.Status != StatusDone {
		w.t.Fatalf("planning the pull request: %v %+v", err, r.Outputs)
	}
	prs := w.fake.PullRequests(wRepo)
	if len(prs) != 1 {
		w.t.Fatalf("%d pull requests", len(prs))
	}
	pr := prs[0]
	pr.HeadSHA = run(w.t, w.origin, "rev-parse", pr.Head)
	w.fake.SetPullRequestHead(wRepo, pr.Number, pr.HeadSHA)
	return pr
}

// TestCIFixAutoThenAttemptLimit: with ci-fix auto a failed CI run of
// planex's pull request is fixed on its branch without an approval (with
// the workflow's own token, the round says CI will not test its
// commits); with one fix run allowed, the next failure stops the fixing
// with one comment that says so and how to ask for more, and a third
// failure writes nothing at all. (Was internal/cli's
// TestActionCIFixAutoThenAttemptLimit.)
func TestCIFixAutoThenAttemptLimit(t *testing.T) {
	w := newParallelWorld(t)
	pr := w.planexPR()
	w.agent.setPlan(wTask{ID: "T1", Title: "fix the limiter", Scope: "fix/**"})
	auto := func(c *Config) { c.CIFix, c.CIFixAttempts, c.DefaultToken = CIFixAuto, 1, true }

	r, err := w.handle(w.failCI(601, pr), auto)
	if err != nil || r.Outputs.Status != StatusDone {
		t.Fatalf("auto fix: %v %+v", err, r.Outputs)
	}
	if got := strings.Join(w.branch(pr.Head), " | "); got != "T1:_base | T1:_fix_the_limiter" {
		t.Errorf("branch = %s", got)
	}
	if prs := w.fake.PullRequests(wRepo); len(prs) != 1 || !strings.Contains(prs[0].Body, "### CI-fix round 1") ||
		!strings.Contains(prs[0].Body, "so CI does not test them by itself") {
		t.Errorf("pull requests = %+v", prs)
	}

	// CI fails again on the fixed commit: one fix run was the limit.
	pr.HeadSHA = run(t, w.origin, "rev-parse", pr.Head)
	w.fake.SetPullRequestHead(wRepo, pr.Number, pr.HeadSHA)
	before := len(w.fake.Comments(wRepo, pr.Number))
	r, err = w.handle(w.failCI(602, pr), auto)
	if err != nil || r.Outputs.Status != StatusStopped || r.Outputs.Notice == "" {
		t.Fatalf("second failure: %v %+v", err, r.Outputs)
	}
	cs := w.fake.Comments(wRepo, pr.Number)
	if last := cs[len(cs)-1].Body; len(cs) != before+1 || !strings.Contains(last, "planex has stopped fixing CI on this pull request: it has made 1 fix run") ||
		!strings.Contains(last, "/actions/runs/602") || !strings.Contains(last, "`/planex fix-ci`") {
		t.Errorf("stop comment: %d new, last %q", len(cs)-before, last)
	}
	if got := len(w.branch(pr.Head)); got != 2 {
		t.Errorf("%d commits after the limit", got)
	}

	// A third failure: said once already, so nothing at all is written.
	writes := w.writes()
	if r, err := w.handle(w.failCI(603, pr), auto); err != nil || r.Outputs.Status != StatusIgnored || w.writes() != writes {
		t.Errorf("third failure: %v %+v, %d writes", err, r.Outputs, w.writes()-writes)
	}
	if len(w.fake.PullRequests(wRepo)) != 1 {
		t.Error("a second pull request was opened")
	}
	w.noRefusedRequests()
}
