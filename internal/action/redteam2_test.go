package action

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/planexhq/planex/internal/event"
	"github.com/planexhq/planex/internal/ghfake"
)

// TestRedTeamPlanCommentEditedAndChangedBack: someone who may edit
// comments changes the visible text of planex's plan comment, lets an
// approver read it and approve, then puts the text back before the
// approval's job reads the comment. The text's hash matches again, but
// what the approver read was not the plan: nothing runs and the plan is
// posted again.
func TestRedTeamPlanCommentEditedAndChangedBack(t *testing.T) {
	t.Parallel()
	t.Run("hash kept", func(t *testing.T) { t.Parallel(); editedAndChangedBack(t, false) })
	// A plan posted by a planex that kept no hash of the comment.
	t.Run("no hash kept", func(t *testing.T) { t.Parallel(); editedAndChangedBack(t, true) })
}

func editedAndChangedBack(t *testing.T, noHash bool) {
	w := newWorld(t)
	w.agent.setPlan(wTask{ID: "T1", Title: "only", Scope: "a/**"})
	n := w.fake.AddIssue(wRepo, "maintainer", "Add a file", "One file.")
	if _, err := w.handle(w.comment(n, "maintainer", "/planex add a file")); err != nil {
		t.Fatal(err)
	}
	id := w.planID(n)
	if noHash {
		r, _ := w.job()
		store := r.flows().store
		rec, found, err := store.loadRecord(context.Background(), n)
		if err != nil || !found {
			t.Fatalf("record: %v %v", found, err)
		}
		rec.PlanBodyHash = ""
		if err := store.saveRecord(context.Background(), rec); err != nil {
			t.Fatal(err)
		}
	}
	var planComment int64
	var original string
	for _, c := range w.fake.Comments(wRepo, n) {
		if strings.HasPrefix(c.Body, "<!-- planex:plan ") {
			planComment, original = c.ID, c.Body
		}
	}
	// GitHub's times have whole seconds: the edit comes a second later.
	w.clock.advance(1100 * time.Millisecond)
	w.fake.EditComment(wRepo, planComment, strings.Replace(original, "only", "only (and delete the tests)", 1))
	approve := w.comment(n, "maintainer", "/planex approve "+id)
	w.fake.EditComment(wRepo, planComment, original)
	r, err := w.handle(approve)
	if err != nil {
		t.Fatal(err)
	}
	if r.Outputs.Status != "refused" || w.branchExists("planex/"+r.Outputs.SessionID) {
		t.Fatalf("an approval of a plan comment edited and changed back ran: status %q\n%s", r.Outputs.Status, w.lastComment(n))
	}
	if plans := w.commentsWith(n, "<!-- planex:plan "); len(plans) != 2 || !strings.Contains(w.lastComment(n), "edited") {
		t.Fatalf("plan comments %d; last comment:\n%s", len(plans), w.lastComment(n))
	}
	// The plan as posted again runs on a fresh approval.
	r, err = w.handle(w.comment(n, "maintainer", "/planex approve "+id))
	if err != nil || r.Outputs.Status != StatusDone {
		t.Fatalf("approval of the re-posted plan: %v %q\n%s", err, r.Outputs.Status, w.lastComment(n))
	}
}

// TestRedTeamScheduleLabellerPastFirstPage: a triage user buries their
// addition of the auto label under more than a page of other label
// events, after a maintainer's earlier addition; another issue's events
// cannot be read at all. Neither is planned.
func TestRedTeamScheduleLabellerPastFirstPage(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.agent.setPlan(wTask{ID: "T1", Title: "one", Scope: "a/**"})
	w.fake.SetPermission(wRepo, "helper", "triage")
	buried := w.fake.AddIssue(wRepo, "reader", "buried", "")
	w.fake.LabelIssue(wRepo, buried, "maintainer", "planex:auto")
	for i := range 150 {
		w.fake.LabelIssue(wRepo, buried, "helper", "x-"+strconv.Itoa(i))
	}
	w.fake.UnlabelIssue(wRepo, buried, "helper", "planex:auto")
	w.fake.LabelIssue(wRepo, buried, "helper", "planex:auto")
	r, err := w.handle(&event.Event{Name: event.Schedule, Owner: wOwner, Repo: wName}, func(c *Config) { c.AutoApprove = true; c.MaxIssues = 10 })
	if err != nil || r.Outputs.Status != StatusIgnored || r.Outputs.PlannedIssues != "0" || len(w.fake.Comments(wRepo, buried)) != 0 ||
		!strings.Contains(r.Outputs.Summary, "#"+strconv.Itoa(buried)+": `planex:auto` was last added by @helper") {
		t.Fatalf("buried labelling: %v %+v", err, r.Outputs)
	}

	unreadable := w.fake.AddIssue(wRepo, "reader", "unreadable", "")
	w.fake.LabelIssue(wRepo, unreadable, "maintainer", "planex:auto")
	w.fake.InjectFault("GET /repos/{owner}/{repo}/issues/{issue_number}/events", 1000, ghfake.Fault{Status: 403})
	r, err = w.handle(&event.Event{Name: event.Schedule, Owner: wOwner, Repo: wName}, func(c *Config) { c.AutoApprove = true; c.MaxIssues = 10 })
	if err == nil || r.Outputs.Status != StatusFailed || len(w.fake.Comments(wRepo, unreadable)) != 0 || w.branchExists("planex/"+r.Outputs.SessionID) {
		t.Fatalf("unreadable events: %v %+v comments %d", err, r.Outputs, len(w.fake.Comments(wRepo, unreadable)))
	}
}
