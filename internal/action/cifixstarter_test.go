package action

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/planexhq/planex/internal/agent"
	"github.com/planexhq/planex/internal/event"
	"github.com/planexhq/planex/internal/gh"
	"github.com/planexhq/planex/internal/ghfake"
)

// TestRedTeamCIFixStartedByNonWriter: a user without write access submits
// a review on planex's pull request; the repository's workflow on
// pull_request_review runs on the pull request's head commit and fails.
// Its workflow_run event was taken as CI failing on planex's branch: a
// fix was planned (and with ci-fix auto, run) on the strength of a run
// only a reader started, or that a maintainer merely re-ran. A failed run
// answers only when everyone who started it (the sender, the run's actor
// and whoever triggered this attempt) has write access or is planex.
func TestRedTeamCIFixStartedByNonWriter(t *testing.T) {
	w := newParallelWorld(t)
	pr := w.planexPR()
	w.agent.setPlan(wTask{ID: "T1", Title: "fix the limiter", Scope: "fix/**"})
	reader := event.User{Login: "reader", Type: "User"}
	maintainer := event.User{Login: "maintainer", Type: "User"}
	self := event.User{Login: ActionsBot, Type: "Bot"}
	id := int64(700)
	for _, c := range []struct {
		name                   string
		sender, actor, trigger event.User
		mode                   CIFixMode
		allowed                bool
	}{
		{"reader's review run, plan", reader, reader, reader, CIFixPlan, false},
		{"reader's review run, auto", reader, reader, reader, CIFixAuto, false},
		{"reader's run a maintainer re-ran", maintainer, reader, maintainer, CIFixPlan, false},
		{"maintainer's run, reader sender", reader, maintainer, maintainer, CIFixPlan, false},
		{"another workflow's job token", self, self, self, CIFixPlan, false},
		{"maintainer's push, maintainer re-ran", maintainer, maintainer, maintainer, CIFixPlan, true},
	} {
		id++
		ev := w.failCI(id, pr, "go test ./...")
		ev.Sender, ev.Run.Actor, ev.Run.TriggeringActor = c.sender, c.actor, c.trigger
		ev.Run.Event = "pull_request_review"
		comments := len(w.fake.Comments(wRepo, pr.Number))
		w.agent.mu.Lock()
		calls := len(w.agent.calls)
		w.agent.mu.Unlock()
		r, err := w.handle(ev, func(cfg *Config) { cfg.CIFix, cfg.DefaultToken = c.mode, true })
		w.agent.mu.Lock()
		ran := len(w.agent.calls) - calls
		w.agent.mu.Unlock()
		if c.allowed {
			if err != nil || r.Outputs.Status != StatusPlanned {
				t.Errorf("%s: %v %+v", c.name, err, r.Outputs)
			}
			continue
		}
		if err != nil || r.Outputs.Status != StatusIgnored || ran != 0 || len(w.fake.Comments(wRepo, pr.Number)) != comments {
			t.Errorf("%s: %v %+v, %d agent steps, %d new comments", c.name, err, r.Outputs, ran, len(w.fake.Comments(wRepo, pr.Number))-comments)
		}
	}
	w.noRefusedRequests()
}

// TestRedTeamCIFixReadsOnlyWritersRuns: a maintainer's CI run fails on
// planex's pull request; beside it, on the same commit, a run a reader's
// review started failed too, its log carrying the reader's words. A fix
// that runs unread (ci-fix auto, or `/planex fix-ci -y`) read every
// failed run of the commit, so the reader's log was part of it. Runs that
// someone without write access started are left out of such a fix.
func TestRedTeamCIFixReadsOnlyWritersRuns(t *testing.T) {
	const pwned = "READERS-OWN-INSTRUCTIONS"
	for _, byComment := range []bool{false, true} {
		t.Run(map[bool]string{false: "ci-fix auto", true: "fix-ci -y"}[byComment], func(t *testing.T) {
			w := newParallelWorld(t)
			pr := w.planexPR()
			w.agent.setPlan(wTask{ID: "T1", Title: "fix the limiter", Scope: "fix/**"})
			w.fake.SetWorkflowRun(wRepo, ghfake.WorkflowRun{ID: 710, Name: "Review bot", Path: ".github/workflows/review.yml", Event: "pull_request_review",
				Status: "completed", Conclusion: "failure", HeadBranch: pr.Head, HeadSHA: pr.HeadSHA, PullRequests: []int{pr.Number},
				Actor: "reader", TriggeringActor: "reader", Created: time.Unix(1_900_000_000, 0),
				Jobs: []ghfake.WorkflowJob{{ID: 7101, Name: "check", Conclusion: "failure", Log: "##[error]" + pwned + "\n",
					Steps: []ghfake.WorkflowStep{{Name: "Run check", Conclusion: "failure"}}}}})
			ev := w.failCI(711, pr, "go test ./...")
			w.fake.SetWorkflowRun(wRepo, ghfake.WorkflowRun{ID: 711, Name: "CI", Path: ".github/workflows/ci.yml", Event: "pull_request",
				Status: "completed", Conclusion: "failure", HeadBranch: pr.Head, HeadSHA: pr.HeadSHA, PullRequests: []int{pr.Number},
				Actor: "maintainer", Created: time.Unix(1_800_000_000, 0),
				Jobs: []ghfake.WorkflowJob{{ID: 7111, Name: "test", Conclusion: "failure", Log: "--- FAIL: TestLimiter\n",
					Steps: []ghfake.WorkflowStep{{Name: "Run go test ./...", Conclusion: "failure"}}}}})
			mutate := func(c *Config) { c.CIFix, c.DefaultToken = CIFixAuto, true }
			if byComment {
				ev = w.comment(pr.Number, "maintainer", "/planex fix-ci -y")
				mutate = func(c *Config) { c.DefaultToken = true }
			}
			r, err := w.handle(ev, mutate)
			if err != nil || r.Outputs.Status != StatusDone {
				t.Fatalf("fix: %v %+v\n%s", err, r.Outputs, w.lastComment(pr.Number))
			}
			if p := w.agent.prompt(agent.PhasePlan); !strings.Contains(p, "run 711") || strings.Contains(p, pwned) || strings.Contains(p, "run 710") {
				t.Errorf("the fix's prompt:\n%s", p)
			}
			w.noRefusedRequests()
		})
	}
}

// TestCIFixAutoOfPlanexsOwnRun: with ci-fix auto, CI that planex's own
// push started (an App's token, whose runs name planex as sender and
// actor) fails: the fix runs. The CI-fix approval named planex as its
// approver, and planex, a bot, was refused as one, so the fix never ran
// where CI runs at all. (The job token's pushes start no CI, and its
// account is every workflow's: TestRedTeamCIFixStartedByNonWriter.)
func TestCIFixAutoOfPlanexsOwnRun(t *testing.T) {
	w := newParallelWorld(t)
	const app = "planex-app[bot]"
	w.fake.SetToken("ghs_test", app)
	w.fake.SetPermission(wRepo, app, "write")
	w.config = append(w.config, func(c *Config) { c.BotLogin = app })
	pr := w.planexPR()
	w.agent.setPlan(wTask{ID: "T1", Title: "fix the limiter", Scope: "fix/**"})
	ev := w.failCI(901, pr, "go test ./...")
	self := event.User{Login: app, Type: "Bot"}
	ev.Sender, ev.Run.Actor, ev.Run.TriggeringActor = self, self, self
	if r, err := w.handle(ev, func(c *Config) { c.CIFix = CIFixAuto }); err != nil || r.Outputs.Status != StatusDone {
		t.Fatalf("auto fix of planex's own run: %v %+v\n%s", err, r.Outputs, w.lastComment(pr.Number))
	}
	w.noInternalErrors(pr.Number)
}

// listedRuns is the CI API of failedRuns: the listing alone.
type listedRuns struct {
	ciAPI
	runs []gh.WorkflowRun
}

func (l listedRuns) ListWorkflowRuns(context.Context, string, string, gh.RunFilter) ([]gh.WorkflowRun, error) {
	return l.runs, nil
}

// TestRedTeamCIFixRunsNamingNobody: a failed run whose event or listing
// names nobody who started it (no actor, no triggering actor) was
// answered on the sender alone, and listed beside the named run its log
// was read into a fix that runs unread: nobody was checked. Such a run
// starts nothing and is left out of an unread fix.
func TestRedTeamCIFixRunsNamingNobody(t *testing.T) {
	t.Parallel()
	e := &env{Cfg: &Config{Owner: wOwner, Repo: wName}, Log: slog.New(slog.DiscardHandler), self: &identity{pinned: "planex-app[bot]"}}
	sha := strings.Repeat("a", 40)
	e.GH.CI = listedRuns{runs: []gh.WorkflowRun{
		{ID: 2, HeadSHA: sha, Conclusion: "failure"},
		{ID: 3, HeadSHA: sha, Conclusion: "failure", Actor: "planex-app[bot]"},
	}}
	f := &ciFixer{env: e}
	unread, err := f.failedRuns(context.Background(), "planex/1-x", sha, nil, true)
	if err != nil || len(unread) != 1 || unread[0].ID != 3 {
		t.Errorf("an unread fix reads %+v (%v), want run 3 alone", unread, err)
	}
	read, err := f.failedRuns(context.Background(), "planex/1-x", sha, nil, false)
	if err != nil || len(read) != 2 {
		t.Errorf("a fix whose plan is read first reads %+v (%v), want both", read, err)
	}
	ev := &event.Event{Name: event.WorkflowRun, Sender: event.User{Login: "maintainer", Type: "User"}, Run: &event.Run{ID: 4}}
	if why, err := f.notStartedByWriters(context.Background(), ev); err != nil || !strings.Contains(why, "names nobody") {
		t.Errorf("a run naming nobody: %q %v", why, err)
	}
}
