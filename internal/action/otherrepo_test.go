package action

import (
	"errors"
	"testing"

	"github.com/planexhq/planex/internal/event"
	"github.com/planexhq/planex/internal/ghfake"
)

// TestRedTeamEventOfAnotherRepository: an event whose payload names
// another repository than the one the workflow runs in (GITHUB_REPOSITORY),
// one where its sender is admin. Permission was read on the payload's
// repository and the command acted on the workflow's: a user with no
// access here planned and ran. Such an event is refused before anything
// is asked or written; the repository's name in another case is the same
// repository.
func TestRedTeamEventOfAnotherRepository(t *testing.T) {
	w := newParallelWorld(t)
	w.agent.setPlan(wTask{ID: "T1", Title: "one", Scope: "a/**"})
	w.fake.AddRepo("mallory/demo", ghfake.Repo{DefaultBranch: "main"})
	w.fake.AddUser("mallory", "User")
	w.fake.SetPermission("mallory/demo", "mallory", "admin")
	n := w.fake.AddIssue(wRepo, "mallory", "Add a file", "")
	mallory := event.User{Login: "mallory", Type: "User"}
	elsewhere := func(ev *event.Event) *event.Event {
		ev.Owner = "mallory"
		return ev
	}
	for _, c := range []struct {
		name string
		ev   *event.Event
	}{
		{"comment", elsewhere(w.comment(n, "mallory", "/planex -y add a file"))},
		{"label", elsewhere(&event.Event{Name: event.Issues, Action: "labeled", Owner: wOwner, Repo: wName, DefaultBranch: "main", Number: n,
			Sender: mallory, Label: "planex", Issue: &event.Issue{Number: n, Title: "Add a file", Author: mallory}})},
		{"dispatch", elsewhere(&event.Event{Name: event.WorkflowDispatch, Owner: wOwner, Repo: wName, DefaultBranch: "main",
			Sender: mallory, Inputs: event.Inputs{Issue: n, AutoApprove: true}})},
	} {
		r, err := w.handle(c.ev, func(cfg *Config) { cfg.AutoApprove = true })
		if !errors.Is(err, ErrOtherRepository) || r.Outputs.Status == StatusPlanned || r.Outputs.Status == StatusDone {
			t.Errorf("%s: %v %+v", c.name, err, r.Outputs)
		}
	}
	if w.agent.executed("T1") || len(w.commentsWith(n, "<!-- planex:plan ")) != 0 {
		t.Fatal("an event of another repository planned or ran something")
	}
	ev := w.comment(n, "maintainer", "/planex add a file")
	ev.Owner, ev.Repo = "OCTO", "Demo"
	if r, err := w.handle(ev); err != nil || r.Outputs.Status != StatusPlanned {
		t.Errorf("the repository named in capitals: %v %+v", err, r.Outputs)
	}
}
