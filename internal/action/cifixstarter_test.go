package action

import (
	"testing"

	"github.com/planexhq/planex/internal/event"
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
		{"planex's push, maintainer re-ran", maintainer, self, maintainer, CIFixPlan, true},
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
