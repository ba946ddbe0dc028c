package action

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/planexhq/planex/internal/event"
	"github.com/planexhq/planex/internal/ghfake"
)

// TestRedeliveredPlanEvent: the same /planex comment delivered twice
// plans once; and when the job failed after saving the plan but before
// its comment got out (GitHub refused every attempt to post it), the
// redelivery posts it without asking the agent again. (Was internal/cli's
// TestActionRedeliveredPlanEvent.)
func TestRedeliveredPlanEvent(t *testing.T) {
	w := newParallelWorld(t)
	// GitHub's 502s are retried after milliseconds, not seconds.
	w.fastRetries()
	w.agent.setPlan(diamond()...)
	n := w.fake.AddIssue(wRepo, "maintainer", "Add four files", "")
	ev := w.comment(n, "maintainer", "/planex add four files")
	if _, err := w.handle(ev); err != nil {
		t.Fatalf("plan: %v", err)
	}
	id := w.planID(n)
	if r, err := w.handle(ev); err != nil || r.Outputs.PlanID != id || r.Outputs.Status != StatusPlanned {
		t.Fatalf("redelivery: %v %+v", err, r.Outputs)
	}
	if plans := w.commentsWith(n, "<!-- planex:plan "); len(plans) != 1 {
		t.Errorf("%d plan comments after a redelivery", len(plans))
	}

	m := w.fake.AddIssue(wRepo, "maintainer", "Add four files again", "")
	ev = w.comment(m, "maintainer", "/planex add four files")
	w.fake.InjectFault("POST /repos/{owner}/{repo}/issues/{issue_number}/comments", 5, ghfake.ServerError(502))
	if r, err := w.handle(ev); err == nil {
		t.Fatalf("a plan whose comment never got out succeeded: %+v", r.Outputs)
	}
	if plans := w.commentsWith(m, "<!-- planex:plan "); len(plans) != 0 {
		t.Fatalf("%d plan comments", len(plans))
	}
	w.agent.takeCalls()
	if r, err := w.handle(ev); err != nil || r.Outputs.Status != StatusPlanned {
		t.Fatalf("redelivery: %v %+v", err, r.Outputs)
	}
	if plans := w.commentsWith(m, "<!-- planex:plan "); len(plans) != 1 {
		t.Errorf("%d plan comments after the redelivery", len(plans))
	}
	if again := w.agent.takeCalls(); len(again) != 0 {
		t.Errorf("the redelivery planned again: agent calls %q", again)
	}
}

// TestRerunDispatchDoesNotPlanAgain: a workflow_dispatch run with a
// requirement whose first attempt lost GitHub's answer to the issue it
// opened (the create is not repeated), re-run (same run id, attempt 2),
// finds that issue and its plan instead of opening and planning another.
// (Was internal/cli's TestActionRerunDispatchDoesNotPlanAgain.)
func TestRerunDispatchDoesNotPlanAgain(t *testing.T) {
	w := newParallelWorld(t)
	w.agent.setPlan(wTask{ID: "T1", Title: "one", Scope: "a/**"})
	ev := &event.Event{Name: event.WorkflowDispatch, Owner: wOwner, Repo: wName, DefaultBranch: "main",
		Sender: event.User{Login: "maintainer", Type: "User"}, Inputs: event.Inputs{Requirement: "Add a health check"}}
	attempt := func(a string) func(*Config) { return func(c *Config) { c.RunID, c.RunAttempt = "77", a } }
	w.fake.InjectFault("POST /repos/{owner}/{repo}/issues", 1, ghfake.LostResponse(502))
	first, err := w.handle(ev, attempt("1"))
	if err != nil || first.Outputs.Status != StatusPlanned {
		t.Fatalf("dispatch: %v %+v", err, first.Outputs)
	}
	again, err := w.handle(ev, attempt("2"))
	if err != nil || again.Outputs.PlanID != first.Outputs.PlanID || again.Outputs.SessionID != first.Outputs.SessionID {
		t.Fatalf("re-run: %v %+v, first %+v", err, again.Outputs, first.Outputs)
	}
	issues := 0
	for n := 1; ; n++ {
		is, ok := w.fake.Issue(wRepo, n)
		if !ok {
			break
		}
		if strings.HasPrefix(is.Title, "planex: ") {
			issues++
			if plans := w.commentsWith(n, "<!-- planex:plan "); len(plans) != 1 {
				t.Errorf("#%d has %d plan comments", n, len(plans))
			}
		}
	}
	if issues != 1 {
		t.Errorf("%d issues opened for one dispatch", issues)
	}
}

// fastRetries makes the world's GitHub client retry after milliseconds,
// as internal/cli's end-to-end tests do.
func (w *world) fastRetries() {
	w.retry.BaseDelay, w.retry.MaxDelay = 5*time.Millisecond, 20*time.Millisecond
}

// requestsTo counts the requests the fake received for route, and of
// all requests those whose answer an injected fault lost.
func (w *world) requestsTo(route string) (n, lost int) {
	for _, r := range w.fake.Requests() {
		if r.Route == route {
			n++
		}
		if r.Lost {
			lost++
		}
	}
	return n, lost
}

// assertDiamondDone checks a diamond run that finished: the four commits
// once each, one pull request closing #n, one status comment saying done,
// the done label only.
func (w *world) assertDiamondDone(n int, r *Runner, err error) {
	w.t.Helper()
	if err != nil || r.Outputs.Status != StatusDone {
		w.t.Fatalf("run: %v %+v", err, r.Outputs)
	}
	prs := w.fake.PullRequests(wRepo)
	if len(prs) != 1 {
		w.t.Fatalf("%d pull requests", len(prs))
	}
	if got := strings.Join(w.branch(prs[0].Head), " | "); got != "T1:_base | T2:_left | T3:_right | T4:_join" {
		w.t.Errorf("branch %s = %s", prs[0].Head, got)
	}
	if !strings.Contains(prs[0].Body, "Closes #"+strconv.Itoa(n)) || !strings.Contains(prs[0].Body, "| T4 | join | ✅ completed |") {
		w.t.Errorf("pull request body:\n%s", prs[0].Body)
	}
	if statuses := w.commentsWith(n, "<!-- planex:status -->"); len(statuses) != 1 || !strings.Contains(statuses[0], "**done**") {
		w.t.Errorf("status comments: %q", statuses)
	}
	if l := w.labels(n); !slices.Contains(l, LabelDone) || slices.Contains(l, LabelRunning) || slices.Contains(l, LabelFailed) {
		w.t.Errorf("labels = %v", l)
	}
	w.noRefusedRequests()
}

const routePulls = "POST /repos/{owner}/{repo}/pulls"

// TestLostAnswersAreNotDuplicated: GitHub applies writes whose answers
// never arrive (a 502 or 504 after the write, a dropped connection) and
// refuses a read three times; planning and running the plan post each
// comment, reaction, label, pull request and reviewer request once.
// (Was internal/cli's TestActionLostAnswersAreNotDuplicated.)
func TestLostAnswersAreNotDuplicated(t *testing.T) {
	w := newParallelWorld(t)
	w.fastRetries()
	w.agent.setPlan(diamond()...)
	n := w.fake.AddIssue(wRepo, "maintainer", "Add four files", "We need a, b, c and d.")
	comments := "POST /repos/{owner}/{repo}/issues/{issue_number}/comments"
	w.fake.InjectFault(comments, 1, ghfake.LostResponse(502)) // the plan comment
	w.fake.InjectFault(comments, 1, ghfake.LostConnection())  // the status comment
	w.fake.InjectFault("POST /repos/{owner}/{repo}/issues/comments/{comment_id}/reactions", 1, ghfake.LostResponse(504))
	w.fake.InjectFault("POST /repos/{owner}/{repo}/issues/{issue_number}/labels", 1, ghfake.LostConnection())
	w.fake.InjectFault("GET /repos/{owner}/{repo}/collaborators/{username}/permission", 3, ghfake.ServerError(502))
	if r, err := w.handle(w.comment(n, "maintainer", "/planex add four files")); err != nil || r.Outputs.Status != StatusPlanned {
		t.Fatalf("plan run: %v %+v", err, r.Outputs)
	}
	if plans := w.commentsWith(n, "<!-- planex:plan "); len(plans) != 1 {
		t.Fatalf("%d plan comments", len(plans))
	}
	if statuses := w.commentsWith(n, "<!-- planex:status -->"); len(statuses) != 1 {
		t.Fatalf("%d status comments", len(statuses))
	}
	if !slices.Contains(w.labels(n), LabelPlanned) {
		t.Errorf("labels = %v", w.labels(n))
	}
	if _, lost := w.requestsTo(routePulls); lost != 4 {
		t.Errorf("%d answers were lost, want the 4 injected", lost)
	}

	w.fake.InjectFault(routePulls, 1, ghfake.LostResponse(502))
	w.fake.InjectFault("POST /repos/{owner}/{repo}/pulls/{pull_number}/requested_reviewers", 1, ghfake.LostConnection())
	w.fake.InjectFault("PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}", 2, ghfake.ServerError(503))
	r, err := w.handle(w.comment(n, "maintainer", "/planex approve "+w.planID(n)))
	w.assertDiamondDone(n, r, err)
	creates, lost := w.requestsTo(routePulls)
	if lost != 6 {
		t.Errorf("%d answers were lost, want the 6 injected", lost)
	}
	if creates != 1 {
		t.Errorf("the pull request was sent %d times", creates)
	}
	if pr := w.fake.PullRequests(wRepo)[0]; !slices.Contains(pr.RequestedReviewers, "maintainer") {
		t.Errorf("reviewers = %v", pr.RequestedReviewers)
	}
}

// TestRunAdoptsExistingPullRequest: GitHub answers 422 "A pull request
// already exists" (another job opened one from the branch); planex adopts
// it and updates its report instead of failing. (Was internal/cli's
// TestActionPullRequestThatExistsIsAdopted.)
func TestRunAdoptsExistingPullRequest(t *testing.T) {
	w := newParallelWorld(t)
	w.fastRetries()
	w.agent.setPlan(diamond()...)
	n := w.fake.AddIssue(wRepo, "maintainer", "Add four files", "We need a, b, c and d.")
	if r, err := w.handle(w.comment(n, "maintainer", "/planex add four files")); err != nil || r.Outputs.Status != StatusPlanned {
		t.Fatalf("plan run: %v %+v", err, r.Outputs)
	}
	session := w.commentsWith(n, "<!-- planex:plan ")[0]
	session = session[strings.Index(session, `"session":"`)+len(`"session":"`):]
	session = session[:strings.Index(session, `"`)]
	// The branch must exist for GitHub to have a pull request from it.
	run(t, w.origin, "update-ref", "refs/heads/planex/"+session, "main")
	existing := w.fake.AddPullRequest(wRepo, ghfake.PullRequest{Title: "planex: stale", Head: "planex/" + session, Base: "main", Body: "stale report"})
	run(t, w.origin, "update-ref", "-d", "refs/heads/planex/"+session)
	r, err := w.handle(w.comment(n, "maintainer", "/planex approve "+w.planID(n)))
	w.assertDiamondDone(n, r, err)
	if pr := w.fake.PullRequests(wRepo)[0]; pr.Number != existing {
		t.Errorf("pull request #%d, want the existing #%d", pr.Number, existing)
	}
	if creates, _ := w.requestsTo(routePulls); creates != 1 {
		t.Errorf("%d creates", creates)
	}
}
