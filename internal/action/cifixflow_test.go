package action

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/planexhq/planex/internal/agent"
	"github.com/planexhq/planex/internal/event"
	"github.com/planexhq/planex/internal/ghfake"
)

// failCI declares a failed CI run of pr's head (a failed test job whose
// failed step runs command, with its log, and a passing lint job) and
// returns its workflow_run event.
func (w *world) failCI(id int64, pr ghfake.PullRequest, command string) *event.Event {
	url := w.fake.ServerURL() + "/" + wRepo + "/actions/runs/" + strconv.FormatInt(id, 10)
	var log strings.Builder
	for i, l := range []string{"##[group]Run " + command, command, "shell: /usr/bin/bash -e {0}", "##[endgroup]",
		"--- FAIL: TestLimiter (0.00s)", "    limiter_test.go:42: Allowed() = false after reset, want true", "FAIL",
		"##[error]Process completed with exit code 1."} {
		fmt.Fprintf(&log, "2026-11-23T14:02:%02d.0000000Z %s\n", i, l)
	}
	w.fake.SetWorkflowRun(wRepo, ghfake.WorkflowRun{ID: id, Name: "CI", Path: ".github/workflows/ci.yml", Event: "pull_request",
		Status: "completed", Conclusion: "failure", HeadBranch: pr.Head, HeadSHA: pr.HeadSHA, PullRequests: []int{pr.Number},
		Created: time.Unix(1_800_000_000+id, 0),
		Jobs: []ghfake.WorkflowJob{
			{ID: id*10 + 1, Name: "lint", Conclusion: "success", Steps: []ghfake.WorkflowStep{{Name: "Run golangci-lint", Conclusion: "success"}}, Log: "lint ok\n"},
			{ID: id*10 + 2, Name: "test", Conclusion: "failure", Log: log.String(), Steps: []ghfake.WorkflowStep{
				{Name: "Set up job", Conclusion: "success"}, {Name: "Run " + command, Conclusion: "failure"}}},
		}})
	return &event.Event{Name: event.WorkflowRun, Action: "completed", Owner: wOwner, Repo: wName, DefaultBranch: "main",
		Sender: event.User{Login: "maintainer", Type: "User"}, Number: pr.Number, IsPR: true,
		Run: &event.Run{ID: id, Name: "CI", Path: ".github/workflows/ci.yml", Event: "pull_request", Status: "completed", Conclusion: "failure", Actor: event.User{Login: "maintainer", Type: "User"},
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

	r, err := w.handle(w.failCI(601, pr, "go test ./..."), auto)
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
	r, err = w.handle(w.failCI(602, pr, "go test ./..."), auto)
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
	if r, err := w.handle(w.failCI(603, pr, "go test ./..."), auto); err != nil || r.Outputs.Status != StatusIgnored || w.writes() != writes {
		t.Errorf("third failure: %v %+v, %d writes", err, r.Outputs, w.writes()-writes)
	}
	if len(w.fake.PullRequests(wRepo)) != 1 {
		t.Error("a second pull request was opened")
	}
	w.noRefusedRequests()
}

// prompt is the newest prompt the agent had for phase.
func (a *scriptedAgent) prompt(phase agent.Phase) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.prompts[phase]
}

// commitToMain commits a file to origin's main, as a contributor would.
func (w *world) commitToMain(path, content string) {
	w.t.Helper()
	dir := filepath.Join(w.t.TempDir(), "contrib")
	run(w.t, w.origin, "clone", "-q", w.origin, dir)
	if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, path)), 0o755); err != nil {
		w.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, path), []byte(content), 0o644); err != nil {
		w.t.Fatal(err)
	}
	run(w.t, dir, "add", ".")
	run(w.t, dir, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-qm", "change "+path)
	run(w.t, dir, "push", "-q", "origin", "main")
}

// TestFixCICommand: /planex fix-ci on planex's pull request plans a fix
// from the newest failed run of its head commit (not an older commit's,
// not another workflow's success), with the maintainer's words and the
// workflow file's command for the failed step; the plan comment quotes
// the run. On an issue, on a pull request planex did not open, and from
// a reader, it is refused. (Was internal/cli's TestActionFixCICommand.)
func TestFixCICommand(t *testing.T) {
	w := newParallelWorld(t)
	w.commitToMain(".github/workflows/ci.yml", "name: CI\non: pull_request\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n"+
		"      - uses: actions/checkout@v4\n      - run: \"test ! -e limit/broken\"\n")
	pr := w.planexPR()
	w.agent.setPlan(wTask{ID: "T1", Title: "fix the limiter", Scope: "fix/**"})
	old := pr
	old.HeadSHA = "3333333333333333333333333333333333333333"
	w.failCI(801, old, "make old")
	w.failCI(802, pr, "test ! -e limit/broken")
	w.fake.SetWorkflowRun(wRepo, ghfake.WorkflowRun{ID: 803, Name: "Docs", Status: "completed", Conclusion: "success",
		HeadBranch: pr.Head, HeadSHA: pr.HeadSHA, PullRequests: []int{pr.Number}, Created: time.Unix(1_900_000_000, 0)})

	r, err := w.handle(w.comment(pr.Number, "maintainer", "/planex fix-ci the limiter test only"))
	if err != nil || r.Outputs.Status != StatusPlanned {
		t.Fatalf("fix-ci: %v %+v\n%s", err, r.Outputs, w.lastComment(pr.Number))
	}
	prompt := w.agent.prompt(agent.PhasePlan)
	for _, want := range []string{"run 802", "limiter_test.go:42", "The maintainer adds: the limiter test only", "`test ! -e limit/broken`"} {
		if !strings.Contains(prompt, want) {
			t.Errorf("plan prompt lacks %q:\n%s", want, prompt)
		}
	}
	if strings.Contains(prompt, "make old") || strings.Contains(prompt, "run 801") {
		t.Errorf("the prompt has another commit's run:\n%s", prompt)
	}
	plans := w.commentsWith(pr.Number, "<!-- planex:plan ")
	if len(plans) != 1 || !strings.Contains(plans[0], "run 802") {
		t.Errorf("the plan comment does not quote run 802:\n%s", strings.Join(plans, "\n---\n"))
	}

	n := w.fake.AddIssue(wRepo, "maintainer", "Other", "")
	if r, err := w.handle(w.comment(n, "maintainer", "/planex fix-ci")); err != nil || r.Outputs.Status != StatusRefused ||
		!strings.Contains(w.lastComment(n), "works on pull requests planex opened") {
		t.Errorf("fix-ci on an issue: %v %+v %q", err, r.Outputs, w.lastComment(n))
	}
	human := w.fake.AddPullRequest(wRepo, ghfake.PullRequest{Title: "by hand", Author: "maintainer", Head: "feature/y"})
	if r, err := w.handle(w.comment(human, "maintainer", "/planex fix-ci")); err != nil || r.Outputs.Status != StatusRefused ||
		!strings.Contains(w.lastComment(human), "is not on a planex branch") {
		t.Errorf("fix-ci on another pull request: %v %+v %q", err, r.Outputs, w.lastComment(human))
	}
	if r, err := w.handle(w.comment(pr.Number, "reader", "/planex fix-ci")); err != nil || r.Outputs.Status != StatusRefused {
		t.Errorf("fix-ci by a reader: %v %+v", err, r.Outputs)
	}
	w.noRefusedRequests()
}

// TestRedTeamCIFixLimitForgedState: with ci-fix auto and one fix run
// allowed, whoever can push rewrites the thread's state ref after the
// first round so that its record lists no CI-fix run (or deletes the
// state ref). The attempt limit was counted from that record alone, so
// the next failure got a second automatic round, and so on without end,
// each a model run on the maintainer's key. The rounds the pull
// request's body reports count too: the next failure stops the fixing.
func TestRedTeamCIFixLimitForgedState(t *testing.T) {
	for _, deleteRef := range []bool{false, true} {
		t.Run(map[bool]string{false: "runs emptied", true: "state ref deleted"}[deleteRef], func(t *testing.T) {
			w := newParallelWorld(t)
			pr := w.planexPR()
			w.agent.setPlan(wTask{ID: "T1", Title: "fix the limiter", Scope: "fix/**"})
			auto := func(c *Config) { c.CIFix, c.CIFixAttempts, c.DefaultToken = CIFixAuto, 1, true }
			if r, err := w.handle(w.failCI(601, pr, "go test ./..."), auto); err != nil || r.Outputs.Status != StatusDone {
				t.Fatalf("auto fix: %v %+v", err, r.Outputs)
			}
			state := "refs/planex/state/" + strconv.Itoa(pr.Number)
			dir := filepath.Join(t.TempDir(), "forge")
			run(t, t.TempDir(), "clone", "-q", w.origin, dir)
			if deleteRef {
				run(t, dir, "push", "-q", "origin", ":"+state)
			} else {
				run(t, dir, "fetch", "-q", "origin", "+"+state+":"+state)
				run(t, dir, "checkout", "-q", "--detach", state)
				var rec map[string]any
				if err := json.Unmarshal([]byte(run(t, dir, "show", "HEAD:github.json")), &rec); err != nil {
					t.Fatal(err)
				}
				delete(rec, "ci_fix_runs")
				b, _ := json.MarshalIndent(rec, "", "  ")
				os.WriteFile(filepath.Join(dir, "github.json"), b, 0o644)
				run(t, dir, "add", "github.json")
				run(t, dir, asForger("commit", "-q", "-m", "state")...)
				run(t, dir, "push", "-q", "--force", "origin", "HEAD:"+state)
			}

			pr.HeadSHA = run(t, w.origin, "rev-parse", pr.Head)
			w.fake.SetPullRequestHead(wRepo, pr.Number, pr.HeadSHA)
			w.agent.mu.Lock()
			before := len(w.agent.calls)
			w.agent.mu.Unlock()
			r, err := w.handle(w.failCI(602, pr, "go test ./..."), auto)
			if err != nil {
				t.Logf("second failure: %v", err)
			}
			w.agent.mu.Lock()
			calls := w.agent.calls[before:]
			w.agent.mu.Unlock()
			if len(calls) != 0 || (r.Outputs.Status != StatusStopped && r.Outputs.Status != StatusIgnored) {
				t.Errorf("a second automatic round ran past the limit: agent steps %v, outputs %+v", calls, r.Outputs)
			}
		})
	}
}
