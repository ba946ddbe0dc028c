package action

import (
	"strconv"
	"strings"
	"testing"

	"github.com/planexhq/planex/internal/agent"
	"github.com/planexhq/planex/internal/event"
)

// TestRedTeamScheduleFloodedIssue: one labelled issue's events are
// flooded past what planex reads (mentions make events; here label
// noise). It is skipped with the reason, and the schedule still plans
// the next issue, from its body as GitHub holds it now: the list of
// labelled issues keeps no body (an issue form may label what anyone
// opens), so the planned one is read again.
func TestRedTeamScheduleFloodedIssue(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.agent.setPlan(wTask{ID: "T1", Title: "one", Scope: "a/**"})
	flooded := w.fake.AddIssue(wRepo, "maintainer", "flooded", "")
	for range 2501 {
		w.fake.LabelIssue(wRepo, flooded, "maintainer", "noise")
		w.fake.UnlabelIssue(wRepo, flooded, "maintainer", "noise")
	}
	w.fake.LabelIssue(wRepo, flooded, "maintainer", "planex:auto")
	ok := w.fake.AddIssue(wRepo, "maintainer", "ok", "write the greeting file")
	w.fake.LabelIssue(wRepo, ok, "maintainer", "planex:auto")
	r, out, err := w.handleOut(&event.Event{Name: event.Schedule, Owner: wOwner, Repo: wName}, func(c *Config) { c.AutoApprove = true; c.MaxIssues = 10 })
	if err != nil || r.Outputs.Status != StatusPlanned || r.Outputs.PlannedIssues != "1" {
		t.Fatalf("schedule: %v %+v\n%s", err, r.Outputs, out)
	}
	if !strings.Contains(r.Outputs.Summary, "#"+strconv.Itoa(flooded)+": its events are too many") {
		t.Errorf("the flooded issue was not skipped with its reason:\n%s", r.Outputs.Summary)
	}
	if !strings.Contains(w.agent.prompt(agent.PhasePlan), "write the greeting file") {
		t.Errorf("the planned issue's body did not reach the plan's prompt")
	}
}
