package action

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/planexhq/planex/internal/agent"
	"github.com/planexhq/planex/internal/event"
	"github.com/planexhq/planex/internal/ghfake"
)

// TestRedTeamAutoApproveCIFixStartedByBot: with the auto-approve setting
// on and ci-fix left at plan, a bot the workflow trusts to start planex
// (trusted-bots, with write access; a formatting App that pushes to pull
// request branches, say) starts a CI run on planex's pull request that
// fails. The run's starters were checked only for starting planex, and
// the auto-approve setting ran the fix at once, approved by the bot:
// every other path that runs a plan at once (a label, a dispatch,
// ci-fix auto) asks that its starter may approve plans, which no bot
// may. Such a run is now ignored; a maintainer's still runs at once.
func TestRedTeamAutoApproveCIFixStartedByBot(t *testing.T) {
	w := newParallelWorld(t)
	const bot = "formatter[bot]"
	w.fake.AddUser(bot, "Bot")
	w.fake.SetPermission(wRepo, bot, "write")
	pr := w.planexPR()
	w.agent.setPlan(wTask{ID: "T1", Title: "fix the limiter", Scope: "fix/**"})
	auto := func(c *Config) { c.AutoApprove, c.DefaultToken, c.TrustedBots = true, true, []string{bot} }

	ev := w.failCI(801, pr, "go test ./...")
	by := event.User{Login: bot, Type: "Bot"}
	ev.Sender, ev.Run.Actor, ev.Run.TriggeringActor = by, by, by
	w.agent.mu.Lock()
	calls := len(w.agent.calls)
	w.agent.mu.Unlock()
	r, err := w.handle(ev, auto)
	w.agent.mu.Lock()
	ran := len(w.agent.calls) - calls
	w.agent.mu.Unlock()
	if err != nil || r.Outputs.Status != StatusIgnored || ran != 0 {
		t.Errorf("a trusted bot's failed run under auto-approve: %v %+v, %d agent steps; want it ignored", err, r.Outputs, ran)
	}
	// A maintainer's failed run is fixed at once, as the setting says.
	if r, err := w.handle(w.failCI(802, pr, "go test ./..."), auto); err != nil || r.Outputs.Status != StatusDone {
		t.Errorf("a maintainer's failed run under auto-approve: %v %+v\n%s", err, r.Outputs, w.lastComment(pr.Number))
	}
}

// TestRedTeamAutoApproveFixCIReadsReadersRun: with the auto-approve
// setting on, a maintainer comments `/planex fix-ci` (no -y) on planex's
// pull request; beside the maintainer's failed CI run, a run a reader's
// review started failed on the same commit, its log carrying the
// reader's words. Only -y and ci-fix auto counted as a fix that runs
// unread, so every failed run was read, and the setting ran the plan at
// once: the reader's log steered a fix nobody read. Under the setting the
// fix reads only runs people who may approve started.
func TestRedTeamAutoApproveFixCIReadsReadersRun(t *testing.T) {
	const pwned = "READERS-OWN-INSTRUCTIONS"
	w := newParallelWorld(t)
	pr := w.planexPR()
	w.agent.setPlan(wTask{ID: "T1", Title: "fix the limiter", Scope: "fix/**"})
	w.fake.SetWorkflowRun(wRepo, ghfake.WorkflowRun{ID: 810, Name: "Review bot", Path: ".github/workflows/review.yml", Event: "pull_request_review",
		Status: "completed", Conclusion: "failure", HeadBranch: pr.Head, HeadSHA: pr.HeadSHA, PullRequests: []int{pr.Number},
		Actor: "reader", TriggeringActor: "reader", Created: time.Unix(1_900_000_000, 0),
		Jobs: []ghfake.WorkflowJob{{ID: 8101, Name: "check", Conclusion: "failure", Log: "##[error]" + pwned + "\n",
			Steps: []ghfake.WorkflowStep{{Name: "Run check", Conclusion: "failure"}}}}})
	w.fake.SetWorkflowRun(wRepo, ghfake.WorkflowRun{ID: 811, Name: "CI", Path: ".github/workflows/ci.yml", Event: "pull_request",
		Status: "completed", Conclusion: "failure", HeadBranch: pr.Head, HeadSHA: pr.HeadSHA, PullRequests: []int{pr.Number},
		Actor: "maintainer", Created: time.Unix(1_800_000_000, 0),
		Jobs: []ghfake.WorkflowJob{{ID: 8111, Name: "test", Conclusion: "failure", Log: "--- FAIL: TestLimiter\n",
			Steps: []ghfake.WorkflowStep{{Name: "Run go test ./...", Conclusion: "failure"}}}}})
	r, err := w.handle(w.comment(pr.Number, "maintainer", "/planex fix-ci"), func(c *Config) { c.AutoApprove, c.DefaultToken = true, true })
	if err != nil || r.Outputs.Status != StatusDone {
		t.Fatalf("fix-ci under auto-approve: %v %+v\n%s", err, r.Outputs, w.lastComment(pr.Number))
	}
	if p := w.agent.prompt(agent.PhasePlan); !strings.Contains(p, "run 811") || strings.Contains(p, pwned) || strings.Contains(p, "run 810") {
		t.Errorf("the fix's prompt:\n%s", p)
	}
}

// TestRedTeamAutoApproveCIFixRunsPlannersCommand: a CI fix nobody reads
// before it runs (ci-fix auto, fix-ci -y) runs the workflow file's failing
// command as each task's check and nothing the planner wrote, which the
// log (the code under test's output) may have steered. The auto-approve
// setting runs a CI fix (ci-fix left at plan) just as unread, but its
// tasks kept the planner's directives: the log's "run touch …" became the
// command that ran. The setting's fixes now run the workflow's command
// alone, as the other unread fixes do.
func TestRedTeamAutoApproveCIFixRunsPlannersCommand(t *testing.T) {
	w := newParallelWorld(t)
	const real = "test -f fix/T1.txt"
	pwned := filepath.Join(t.TempDir(), "pwned")
	w.commitToMain(".github/workflows/ci.yml", "name: CI\non: pull_request\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n"+
		"      - uses: actions/checkout@v4\n      - run: \""+real+"\"\n")
	pr := w.planexPR()
	w.agent.setPlan(wTask{ID: "T1", Title: "fix the limiter", Scope: "fix/**", Directives: "touch " + pwned})
	ev := w.forgedCILog(950, pr, "Run "+real, real, pwned)
	r, err := w.handle(ev, func(c *Config) { c.AutoApprove, c.DefaultToken = true, true })
	if err != nil || r.Outputs.Status != StatusDone {
		t.Fatalf("the fix under auto-approve: %v %+v\n%s", err, r.Outputs, w.lastComment(pr.Number))
	}
	if _, err := os.Stat(pwned); err == nil {
		t.Error("the command the log steered the planner to write ran")
	}
	plans := w.commentsWith(pr.Number, "<!-- planex:plan ")
	if len(plans) == 0 || !strings.Contains(plans[len(plans)-1], "Verified by: `"+real+"`") {
		t.Errorf("the plan does not run the workflow's command %q", real)
	}
}

// TestRedTeamUnreadFixReadsTrustedBotsRun: a maintainer comments
// `/planex fix-ci -y` on planex's pull request; beside the maintainer's
// failed run, a run a bot the workflow trusts to start planex (with
// write access) started failed on the same commit, its log carrying
// whatever that bot's run printed. A fix that runs unread read the other
// runs whose starters may start planex, so the bot's log steered a fix
// nobody read, approved in effect by a bot. It reads only runs whose
// starters may approve plans, as the run that starts an automatic fix
// must.
func TestRedTeamUnreadFixReadsTrustedBotsRun(t *testing.T) {
	const pwned = "TRUSTED-BOTS-OWN-INSTRUCTIONS"
	const bot = "formatter[bot]"
	w := newParallelWorld(t)
	w.fake.AddUser(bot, "Bot")
	w.fake.SetPermission(wRepo, bot, "write")
	pr := w.planexPR()
	w.agent.setPlan(wTask{ID: "T1", Title: "fix the limiter", Scope: "fix/**"})
	w.fake.SetWorkflowRun(wRepo, ghfake.WorkflowRun{ID: 820, Name: "Format", Path: ".github/workflows/format.yml", Event: "workflow_dispatch",
		Status: "completed", Conclusion: "failure", HeadBranch: pr.Head, HeadSHA: pr.HeadSHA, PullRequests: []int{pr.Number},
		Actor: bot, TriggeringActor: bot, Created: time.Unix(1_900_000_000, 0),
		Jobs: []ghfake.WorkflowJob{{ID: 8201, Name: "format", Conclusion: "failure", Log: "##[error]" + pwned + "\n",
			Steps: []ghfake.WorkflowStep{{Name: "Run format", Conclusion: "failure"}}}}})
	w.fake.SetWorkflowRun(wRepo, ghfake.WorkflowRun{ID: 821, Name: "CI", Path: ".github/workflows/ci.yml", Event: "pull_request",
		Status: "completed", Conclusion: "failure", HeadBranch: pr.Head, HeadSHA: pr.HeadSHA, PullRequests: []int{pr.Number},
		Actor: "maintainer", Created: time.Unix(1_800_000_000, 0),
		Jobs: []ghfake.WorkflowJob{{ID: 8211, Name: "test", Conclusion: "failure", Log: "--- FAIL: TestLimiter\n",
			Steps: []ghfake.WorkflowStep{{Name: "Run go test ./...", Conclusion: "failure"}}}}})
	r, err := w.handle(w.comment(pr.Number, "maintainer", "/planex fix-ci -y"), func(c *Config) { c.DefaultToken, c.TrustedBots = true, []string{bot} })
	if err != nil || r.Outputs.Status != StatusDone {
		t.Fatalf("fix-ci -y: %v %+v\n%s", err, r.Outputs, w.lastComment(pr.Number))
	}
	if p := w.agent.prompt(agent.PhasePlan); !strings.Contains(p, "run 821") || strings.Contains(p, pwned) || strings.Contains(p, "run 820") {
		t.Errorf("the fix's prompt:\n%s", p)
	}
}
