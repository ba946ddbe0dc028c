package action

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/planexhq/planex/internal/event"
	"github.com/planexhq/planex/internal/ghfake"
	"github.com/planexhq/planex/internal/render/md/mdtest"
)

var planIDRe = regexp.MustCompile("approve ([0-9a-f]{10})")

// TestPlanApprovePullRequestWithinItsRESTBudget runs plan → approve →
// pull request with four tasks and counts what it asks of GitHub (issue
// #15): at most 25 calls, no read repeated within a job, and status edits
// at most one per task plus start and end.
func TestPlanApprovePullRequestWithinItsRESTBudget(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.agent.setPlan(diamond()...)
	n := w.fake.AddIssue(wRepo, "maintainer", "Add four files", "We need a, b, c and d.")

	start := len(w.fake.Requests())
	r, err := w.handle(w.comment(n, "maintainer", "/planex add four files"))
	if err != nil || r.Outputs.Status != StatusPlanned {
		t.Fatalf("plan: %v, outputs %+v", err, r.Outputs)
	}
	planned := len(w.fake.Requests())
	id := w.planID(n)
	if !slices.Contains(w.labels(n), LabelPlanned) {
		t.Errorf("labels after planning = %v", w.labels(n))
	}
	approving := len(w.fake.Requests())
	r, err = w.handle(w.comment(n, "maintainer", "/planex approve "+id))
	if err != nil || r.Outputs.Status != StatusDone {
		t.Fatalf("approve: %v, outputs %+v\n%s", err, r.Outputs, w.lastComment(n))
	}
	reqs := w.fake.Requests()
	planRun, approveRun := reqs[start:planned], reqs[approving:]

	if got := strings.Join(w.branch("planex/"+r.Outputs.SessionID), " "); got != "T1:_base T2:_left T3:_right T4:_join" {
		t.Errorf("run branch = %s", got)
	}
	prs := w.fake.PullRequests(wRepo)
	if len(prs) != 1 || !strings.Contains(prs[0].Body, "Closes #") || !slices.Contains(prs[0].RequestedReviewers, "maintainer") {
		t.Fatalf("pull requests = %+v", prs)
	}
	if l := w.labels(n); !slices.Contains(l, LabelDone) || len(l) != 1 {
		t.Errorf("issue labels = %v", l)
	}
	if is, _ := w.fake.Issue(wRepo, prs[0].Number); !slices.Contains(is.Labels, LabelDone) {
		t.Errorf("pull request labels = %v", is.Labels)
	}
	statuses := w.commentsWith(n, "<!-- planex:status -->")
	if len(statuses) != 1 || !strings.Contains(statuses[0], "**done**") || !strings.Contains(statuses[0], "4 of 4 tasks completed") {
		t.Errorf("status comments:\n%s", strings.Join(statuses, "\n---\n"))
	}

	for name, run := range map[string][]ghfake.Request{"plan": planRun, "approve": approveRun} {
		seen := map[string]bool{}
		for _, q := range run {
			key := q.Method + " " + q.Path + "?" + q.Query
			if q.Method == "GET" && seen[key] {
				t.Errorf("%s job read %s twice", name, key)
			}
			seen[key] = true
		}
	}
	edits := 0
	for _, q := range approveRun {
		if q.Route == "PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}" {
			edits++
		}
	}
	total := len(planRun) + len(approveRun)
	t.Logf("REST calls for plan → approve → pull request (4 tasks): plan %d + approve %d = %d; status edits %d",
		len(planRun), len(approveRun), total, edits)
	if total > 25 || edits > 4+2 {
		var lines []string
		for _, q := range append(append([]ghfake.Request(nil), planRun...), approveRun...) {
			lines = append(lines, q.Method+" "+q.Path)
		}
		t.Errorf("%d REST calls (at most 25), %d status edits (at most 6):\n%s", total, edits, strings.Join(lines, "\n"))
	}
	w.noRefusedRequests()
}

// TestCommandsOnAPlannedThread drives one planned thread through the
// commands people type, each in a job of its own, and checks the answer
// on the thread, the outputs and the state each leaves.
func TestCommandsOnAPlannedThread(t *testing.T) {
	w := newParallelWorld(t) // no task runs
	w.agent.setPlan(wTask{ID: "T1", Title: "only", Scope: "a/**"})
	n := w.fake.AddIssue(wRepo, "maintainer", "Add a file", "One file.")
	planned, err := w.handle(w.comment(n, "maintainer", "/planex add a file"))
	if err != nil {
		t.Fatal(err)
	}
	id := w.planID(n)
	cases := []struct {
		name, login, body string
		status            Status // Outputs.Status
		reply             string // in the newest comment
		label             string // the state label after it ("" = unchanged)
	}{
		{"help", "maintainer", "/planex help", "replied", "approve", ""},
		{"status", "maintainer", "/planex status", StatusPlanned, "is **planned**", ""},
		{"a reader cannot approve", "reader", "/planex approve " + id, "refused", "@reader", ""},
		// Told once already (above): only a reaction, no second reply.
		{"a reader refused again", "reader", "/planex do more", "refused", "/planex do more", ""},
		{"unknown plan id", "maintainer", "/planex approve 0000000000", "refused", "There is no plan `0000000000` here; the current plan is `" + id + "`", ""},
		{"retry needs a failed plan", "maintainer", "/planex retry", "refused", "Nothing to retry", ""},
		{"revise needs feedback", "maintainer", "/planex revise", "refused", "needs feedback", ""},
		{"a plain comment is ignored", "maintainer", "thanks!", "ignored", "thanks!", ""},
		{"cancel", "maintainer", "/planex cancel", StatusCancelled, "is cancelled", "none"},
		{"approve after cancel", "maintainer", "/planex approve " + id, "refused", "was cancelled", ""},
		{"cancel again", "maintainer", "/planex cancel", "refused", "Nothing to cancel", ""},
	}
	for _, c := range cases {
		r, err := w.handle(w.comment(n, c.login, c.body))
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if r.Outputs.Status != c.status {
			t.Errorf("%s: status %q, want %q", c.name, r.Outputs.Status, c.status)
		}
		if last := w.lastComment(n); !strings.Contains(last, c.reply) {
			t.Errorf("%s: last comment %q lacks %q", c.name, last, c.reply)
		}
		if c.label == "none" && len(w.labels(n)) != 0 {
			t.Errorf("%s: labels %v", c.name, w.labels(n))
		}
	}
	if run := "planex/" + planned.Outputs.SessionID; w.branchExists(run) {
		t.Errorf("a refused or cancelled plan has a run branch: %s %v", run, w.branch(run))
	}
	w.noRefusedRequests()
}

// TestFailedTaskThenRetry: a failed task fails the run (labels, status,
// Failure output), and a retry after the cause is gone finishes it.
func TestFailedTaskThenRetry(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.agent.setPlan(wTask{ID: "T1", Title: "one", Scope: "a/**"}, wTask{ID: "T2", Title: "two", Scope: "b/**", Deps: []string{"T1"}})
	w.agent.failTask("T2", "the tests did not pass")
	n := w.fake.AddIssue(wRepo, "maintainer", "Two files", "")
	if _, err := w.handle(w.comment(n, "maintainer", "/planex two files")); err != nil {
		t.Fatal(err)
	}
	r, err := w.handle(w.comment(n, "maintainer", "/planex approve "+w.planID(n)))
	if err != nil || r.Outputs.Status != StatusFailed || !strings.Contains(r.Outputs.Failure, "T2 failed: the tests did not pass") {
		t.Fatalf("approve: %v %+v", err, r.Outputs)
	}
	if l := w.labels(n); !slices.Equal(l, []string{LabelFailed}) {
		t.Errorf("labels = %v", l)
	}
	w.agent.failTask("T2", "")
	r, err = w.handle(w.comment(n, "maintainer", "/planex retry"))
	if err != nil || r.Outputs.Status != StatusDone {
		t.Fatalf("retry: %v %+v", err, r.Outputs)
	}
	if got := w.branch("planex/" + r.Outputs.SessionID); len(got) != 2 {
		t.Errorf("run branch after retry = %v", got)
	}
	if l := w.labels(n); !slices.Equal(l, []string{LabelDone}) {
		t.Errorf("labels = %v", l)
	}
	// A repeated approval does not run it again.
	_, err = w.handle(w.comment(n, "maintainer", "/planex approve "+w.planID(n)))
	if err != nil || !strings.Contains(w.lastComment(n), "already approved by @maintainer") {
		t.Errorf("repeated approve: %v %q", err, w.lastComment(n))
	}
	w.noRefusedRequests()
}

// TestReviseSupersedesThePlan: a revision posts a new plan; the old id
// is refused with the new one named, and the new one runs.
func TestReviseSupersedesThePlan(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.agent.setPlan(wTask{ID: "T1", Title: "first idea", Scope: "a/**"})
	n := w.fake.AddIssue(wRepo, "maintainer", "Something", "")
	if _, err := w.handle(w.comment(n, "maintainer", "/planex something")); err != nil {
		t.Fatal(err)
	}
	old := w.planID(n)
	w.agent.setPlan(wTask{ID: "T1", Title: "better idea", Scope: "a/**"}, wTask{ID: "T2", Title: "second", Scope: "b/**", Deps: []string{"T1"}})
	r, err := w.handle(w.comment(n, "maintainer", "/planex revise use a better idea"))
	if err != nil || r.Outputs.Status != StatusPlanned || r.Outputs.PlanID == old {
		t.Fatalf("revise: %v %+v", err, r.Outputs)
	}
	if _, err := w.handle(w.comment(n, "maintainer", "/planex approve "+old)); err != nil || !strings.Contains(w.lastComment(n), "Plan `"+old+"` was replaced by plan `"+r.Outputs.PlanID+"`") {
		t.Errorf("old id: %v %q", err, w.lastComment(n))
	}
	r, err = w.handle(w.comment(n, "maintainer", "/planex approve "+r.Outputs.PlanID))
	if err != nil || r.Outputs.Status != StatusDone {
		t.Errorf("approve the revision: %v %+v", err, r.Outputs)
	}
	// The revision is what ran (was internal/cli's TestActionReviseThenApproveOldID).
	if got := strings.Join(w.branch("planex/"+r.Outputs.SessionID), " | "); got != "T1:_better_idea | T2:_second" {
		t.Errorf("branch = %s", got)
	}
	w.noRefusedRequests()
}

// TestOtherEvents: a label, a dispatch with a requirement (and its
// re-run), a schedule, and -y on the planning command.
func TestOtherEvents(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.agent.setPlan(wTask{ID: "T1", Title: "one", Scope: "a/**"})
	n := w.fake.AddIssue(wRepo, "maintainer", "Labelled", "Plan me.")
	sender := event.User{Login: "maintainer", Type: "User"}
	labeled := &event.Event{Name: event.Issues, Action: "labeled", Owner: wOwner, Repo: wName, DefaultBranch: "main", Number: n,
		Sender: sender, Label: "planex", Issue: &event.Issue{Number: n, Title: "Labelled", Body: "Plan me."}}
	if r, err := w.handle(labeled); err != nil || r.Outputs.Status != StatusPlanned {
		t.Errorf("labeled: %v %+v", err, r.Outputs)
	}
	other := *labeled
	other.Label = "bug"
	if r, err := w.handle(&other); err != nil || r.Outputs.Status != "ignored" {
		t.Errorf("another label: %v %+v", err, r.Outputs)
	}

	dispatch := &event.Event{Name: event.WorkflowDispatch, Owner: wOwner, Repo: wName, DefaultBranch: "main", Sender: sender,
		Inputs: event.Inputs{Requirement: "Write a file", AutoApprove: true}}
	r, err := w.handle(dispatch, func(c *Config) { c.RunID = "77" })
	if err != nil || r.Outputs.Status != StatusDone {
		t.Fatalf("dispatch: %v %+v", err, r.Outputs)
	}
	// A re-run of the same workflow run finds its issue and its plan.
	if r, err := w.handle(dispatch, func(c *Config) { c.RunID = "77" }); err != nil || r.Outputs.Status != StatusDone {
		t.Errorf("dispatch re-run: %v %+v", err, r.Outputs)
	}
	issues := 0
	for i := 1; i < 100; i++ {
		if is, ok := w.fake.Issue(wRepo, i); ok && !is.IsPR && strings.HasPrefix(is.Title, "planex: Write a file") {
			issues++
		}
	}
	if issues != 1 {
		t.Errorf("%d issues opened for one dispatched requirement", issues)
	}

	auto := w.fake.AddIssue(wRepo, "maintainer", "Auto", "Scheduled.")
	w.fake.LabelIssue(wRepo, auto, "maintainer", "planex:auto")
	sched := &event.Event{Name: event.Schedule, Owner: wOwner, Repo: wName}
	if r, err := w.handle(sched); err != nil || r.Outputs.Status != StatusPlanned || r.Outputs.PlannedIssues != "1" || !slices.Contains(w.labels(auto), LabelPlanned) {
		t.Errorf("schedule: %v %+v labels %v", err, r.Outputs, w.labels(auto))
	}
	if r, err := w.handle(sched); err != nil || r.Outputs.Status != StatusIgnored || r.Outputs.PlannedIssues != "0" || r.Outputs.Notice == "" {
		t.Errorf("schedule again: %v %+v", err, r.Outputs)
	}

	y := w.fake.AddIssue(wRepo, "maintainer", "Yes", "")
	if r, err := w.handle(w.comment(y, "maintainer", "/planex -y write it")); err != nil || r.Outputs.Status != StatusDone {
		t.Errorf("-y: %v %+v", err, r.Outputs)
	}
	w.noRefusedRequests()
}

// TestBaseMovedSinceThePlan: main moving after the plan was made stops
// an approval only when the change is inside a task's scope; the reply
// names the file and the task, and nothing runs. (Were internal/cli's
// TestActionBaseMovedUnderThePlan and TestActionBaseMovedElsewhereStillRuns.)
func TestBaseMovedSinceThePlan(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		changes [][2]string // path, content, pushed to main in turn
		want    Status
		reply   string // "" when the plan runs
	}{
		{"elsewhere", [][2]string{{"README.md", "# demo, edited\n"}}, StatusDone, ""},
		{"in a task's scope", [][2]string{{"README.md", "# demo, edited\n"}, {"a/keep.txt", "changed under the plan\n"}}, StatusRefused,
			"cannot run: `main` moved since the plan was made and changed files in its tasks' scopes: `a/keep.txt` (T1)"},
		// A file whose name breaks out of a hand-made code span (a
		// contributor's, or one an agent made in an earlier planex pull
		// request that was merged): the refusal named it between backticks
		// of its own, so the reply pinged a team and referenced an issue
		// under planex's account. Every refusal is checked as Markdown below.
		{"a file name that breaks out of code", [][2]string{{"a/x` @org/everyone fixes #1 <img src=x> `y.txt", "changed under the plan\n"}}, StatusRefused,
			"moved since the plan was made"},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newParallelWorld(t)
			w.agent.setPlan(wTask{ID: "T1", Title: "one", Scope: "a/**"})
			n := w.fake.AddIssue(wRepo, "maintainer", "Idea", "")
			if r, err := w.handle(w.comment(n, "maintainer", "/planex add a file")); err != nil || r.Outputs.Status != StatusPlanned {
				t.Fatalf("plan: %v %+v", err, r.Outputs)
			}
			id := w.planID(n)
			for _, ch := range c.changes {
				w.commitToMain(ch[0], ch[1])
			}
			r, err := w.handle(w.comment(n, "maintainer", "/planex approve "+id))
			if err != nil || r.Outputs.Status != c.want {
				t.Fatalf("approve: %v %+v\n%s", err, r.Outputs, w.lastComment(n))
			}
			if c.reply == "" {
				return
			}
			if !strings.Contains(w.lastComment(n), c.reply) {
				t.Errorf("reply: %q", w.lastComment(n))
			}
			d, err := mdtest.Parse(w.lastComment(n))
			if err != nil {
				t.Fatal(err)
			}
			own := regexp.MustCompile(`<!-- planex:req [0-9a-f]+ -->`).FindString(w.lastComment(n))
			for _, p := range d.Problems(mdtest.Rules{Trigger: "/planex", OwnHTML: []string{own}}) {
				t.Errorf("the refusal: %s\n%s", p, w.lastComment(n))
			}
			if w.branch("planex/"+r.Outputs.SessionID) != nil || w.agent.executed("T1") {
				t.Error("the plan ran although its base moved")
			}
		})
	}
}
