package action

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/planexhq/planex/internal/event"
	"github.com/planexhq/planex/internal/ghfake"
)

// These flows were end-to-end tests in internal/cli (TestActionRefusals,
// TestActionCommandsWithoutAPlan, TestActionCancelAndSettings,
// TestActionDispatch, TestActionLabeledIssueIsPlanned,
// TestActionReactionsTellTheTruth, TestActionFollowUpOnPullRequest); what only a
// process shows (event files, exit codes, stderr) stays there.

// TestCommandsWithoutAPlan: every command on a thread with no plan gets
// a reply that says so, and nothing else happens.
func TestCommandsWithoutAPlan(t *testing.T) {
	w := newParallelWorld(t)
	n := w.fake.AddIssue(wRepo, "maintainer", "Idea", "")
	cases := []struct{ body, want string }{
		{"/planex help", "approve"},
		{"/planex status", "No plan here yet"},
		{"/planex cancel", "Nothing to cancel: no plan"},
		{"/planex approve abcdef0123", "There is no plan to approve here"},
		{"/planex retry", "Nothing to retry"},
		{"/planex revise smaller", "no plan waiting for approval"},
	}
	for _, c := range cases {
		if _, err := w.handle(w.comment(n, "maintainer", c.body)); err != nil || !strings.Contains(w.lastComment(n), c.want) {
			t.Errorf("%s: %v, last comment %q, want %q", c.body, err, w.lastComment(n), c.want)
		}
	}
	if calls := w.agent.takeCalls(); len(calls) > 0 {
		t.Errorf("the agent ran: %q", calls)
	}
	if l := w.labels(n); len(l) != 0 {
		t.Errorf("labels = %v", l)
	}
	w.noRefusedRequests()
}

// TestSettingsTriggerAndCancel: .github/planex.yml on the default branch
// replaces the trigger phrase (the default one is then ignored); a
// cancelled plan cannot be approved; a settings file with an unknown
// field fails the run, naming the file, line and field.
func TestSettingsTriggerAndCancel(t *testing.T) {
	w := newParallelWorld(t)
	w.agent.setPlan(wTask{ID: "T1", Title: "one", Scope: "a/**"})
	w.fake.SetFile(wRepo, "main", ".github/planex.yml", []byte("trigger-phrase: /bot\n"))
	n := w.fake.AddIssue(wRepo, "maintainer", "Idea", "")
	if r, err := w.handle(w.comment(n, "maintainer", "/planex do it")); err != nil || r.Outputs.Status != StatusIgnored {
		t.Errorf("the default trigger still worked: %v %+v", err, r.Outputs)
	}
	if r, err := w.handle(w.comment(n, "maintainer", "/bot do it")); err != nil || r.Outputs.Status != StatusPlanned {
		t.Fatalf("configured trigger: %v %+v", err, r.Outputs)
	}
	id := w.planID(n)
	if _, err := w.handle(w.comment(n, "maintainer", "/bot cancel")); err != nil || !strings.Contains(w.lastComment(n), "is cancelled") {
		t.Errorf("cancel: %v %q", err, w.lastComment(n))
	}
	if _, err := w.handle(w.comment(n, "maintainer", "/bot approve "+id)); err != nil || !strings.Contains(w.lastComment(n), "was cancelled") {
		t.Errorf("approving a cancelled plan: %v %q", err, w.lastComment(n))
	}
	w.fake.SetFile(wRepo, "main", ".github/planex.yml", []byte("colour: blue\n"))
	if _, err := w.handle(w.comment(n, "maintainer", "/bot status")); err == nil || !strings.Contains(err.Error(), ".github/planex.yml line 1: field colour not found") {
		t.Errorf("bad settings: %v", err)
	}
}

// TestDispatchAndLabelEvents: a dispatched requirement without an issue
// opens one and, with auto-approve, runs to a pull request that closes
// it; a dispatch with neither input fails saying which inputs it needs.
// The planex label plans only when someone with write access adds it;
// another label is ignored; the plan reaches the job summary and the
// session is named after the issue.
func TestDispatchAndLabelEvents(t *testing.T) {
	w := newParallelWorld(t)
	w.agent.setPlan(wTask{ID: "T1", Title: "one", Scope: "a/**"})
	maintainer := event.User{Login: "maintainer", Type: "User"}
	dispatch := func(in event.Inputs) *event.Event {
		return &event.Event{Name: event.WorkflowDispatch, Owner: wOwner, Repo: wName, DefaultBranch: "main", Sender: maintainer, Inputs: in}
	}
	r, err := w.handle(dispatch(event.Inputs{Requirement: "Add a health check", AutoApprove: true}))
	if err != nil || r.Outputs.Status != StatusDone || r.Outputs.PullRequestURL == "" {
		t.Fatalf("dispatch: %v %+v", err, r.Outputs)
	}
	if prs := w.fake.PullRequests(wRepo); len(prs) != 1 || !strings.Contains(prs[0].Body, "Closes #") {
		t.Fatalf("pull requests = %+v", prs)
	}
	r, err = w.handle(dispatch(event.Inputs{}))
	if err == nil || r.Outputs.Status != StatusFailed || !strings.Contains(err.Error(), "needs the input `issue` or `requirement`") {
		t.Errorf("dispatch without inputs: %v %+v", err, r.Outputs)
	}

	n := w.fake.AddIssue(wRepo, "maintainer", "Cache the results", "They are slow.")
	labeled := func(label, sender string) *event.Event {
		return &event.Event{Name: event.Issues, Action: "labeled", Owner: wOwner, Repo: wName, DefaultBranch: "main", Number: n,
			Sender: event.User{Login: sender, Type: "User"}, Label: label,
			Issue: &event.Issue{Number: n, Title: "Cache the results", Body: "They are slow.", Author: maintainer}}
	}
	if r, err := w.handle(labeled("bug", "maintainer")); err != nil || r.Outputs.Status != StatusIgnored {
		t.Fatalf("another label: %v %+v", err, r.Outputs)
	}
	if r, err := w.handle(labeled("planex", "reader")); err != nil || r.Outputs.Status != StatusRefused {
		t.Fatalf("label by a reader: %v %+v", err, r.Outputs)
	}
	r, err = w.handle(labeled("planex", "maintainer"))
	if err != nil || r.Outputs.Status != StatusPlanned || !strings.HasPrefix(r.Outputs.SessionID, strconv.Itoa(n)+"-cache-the-results") {
		t.Fatalf("label by a maintainer: %v %+v", err, r.Outputs)
	}
	if !strings.Contains(r.Outputs.Summary, "## planex plan") {
		t.Errorf("job summary lacks the plan:\n%s", r.Outputs.Summary)
	}
	if !slices.Contains(w.labels(n), LabelPlanned) {
		t.Errorf("labels = %v", w.labels(n))
	}
	w.noRefusedRequests()
}

// reactionsOn are the reactions on comment id, in the order given.
func (w *world) reactionsOn(id int64) []string {
	w.t.Helper()
	c, ok := w.fake.Comment(wRepo, id)
	if !ok {
		w.t.Fatalf("no comment %d", id)
	}
	var out []string
	for _, r := range c.Reactions {
		out = append(out, r.Content)
	}
	return out
}

// TestReactionsTellTheTruth: 👀 on every command, 🚀 only on an approval
// that passed permission, plan id, comment and hash checks, and 👎 or 😕
// with a reason on every refusal; help is an answer (👀 only).
func TestReactionsTellTheTruth(t *testing.T) {
	w := newParallelWorld(t)
	w.agent.setPlan(wTask{ID: "T1", Title: "base", Scope: "a/**"})
	n := w.fake.AddIssue(wRepo, "maintainer", "Add a file", "")
	if _, err := w.handle(w.comment(n, "maintainer", "/planex add a file")); err != nil {
		t.Fatal(err)
	}
	id := w.planID(n)
	w.agent.takeCalls()
	refused := []struct{ login, body, reply string }{
		{"reader", "/planex approve " + id, "@reader"},
		{"maintainer", "/planex approve 0000000000", "There is no plan `0000000000` here"},
		{"maintainer", "/planex approve --force " + id, "Unknown flag `--force`"},
		{"maintainer", "/planex aprove", "did you mean `/planex approve`"},
		{"maintainer", "/planex approve <plan-id>", "needs the plan id"},
		{"maintainer", "/planex status now", "takes no arguments"},
	}
	for _, c := range refused {
		ev := w.comment(n, c.login, c.body)
		r, err := w.handle(ev)
		if err != nil || r.Outputs.Status != StatusRefused || !strings.Contains(w.lastComment(n), c.reply) {
			t.Errorf("%q by %s: %v, status %q, reply %q", c.body, c.login, err, r.Outputs.Status, w.lastComment(n))
		}
		if rs := w.reactionsOn(ev.Comment.ID); !slices.Contains(rs, "eyes") || !(slices.Contains(rs, "-1") || slices.Contains(rs, "confused")) || slices.Contains(rs, "rocket") {
			t.Errorf("%q by %s: reactions %v", c.body, c.login, rs)
		}
	}
	if calls := w.agent.takeCalls(); len(calls) > 0 {
		t.Fatalf("a refused approval ran the agent: %q", calls)
	}
	help := w.comment(n, "maintainer", "/planex help")
	if r, err := w.handle(help); err != nil || r.Outputs.Status != StatusReplied {
		t.Errorf("help: %v %+v", err, r.Outputs)
	}
	if rs := w.reactionsOn(help.Comment.ID); strings.Join(rs, " ") != "eyes" {
		t.Errorf("help reactions = %v", rs)
	}
	approve := w.comment(n, "maintainer", "/planex approve "+id)
	if r, err := w.handle(approve); err != nil || r.Outputs.Status != StatusDone {
		t.Fatalf("approve: %v %+v", err, r.Outputs)
	}
	if rs := w.reactionsOn(approve.Comment.ID); strings.Join(rs, " ") != "eyes rocket" {
		t.Errorf("approval reactions = %v", rs)
	}
	w.noRefusedRequests()
}

// TestFollowUpOnPullRequest: a plan asked for on planex's pull request
// runs on that pull request's branch, after its commits, and opens no
// other pull request; the last comment is the status or the follow-up
// report.
func TestFollowUpOnPullRequest(t *testing.T) {
	w := newParallelWorld(t)
	pr := w.planexPR()
	w.agent.setPlan(wTask{ID: "T1", Title: "docs too", Scope: "d/**"})
	if _, err := w.handle(w.comment(pr.Number, "maintainer", "/planex also add docs")); err != nil {
		t.Fatalf("follow-up plan: %v", err)
	}
	if _, err := w.handle(w.comment(pr.Number, "maintainer", "/planex approve "+w.planID(pr.Number))); err != nil {
		t.Fatalf("follow-up approve: %v", err)
	}
	if got := strings.Join(w.branch(pr.Head), " | "); got != "T1:_base | T1:_docs_too" {
		t.Errorf("branch after follow-up = %s", got)
	}
	if len(w.fake.PullRequests(wRepo)) != 1 {
		t.Error("the follow-up opened another pull request")
	}
	if c := w.lastComment(pr.Number); !strings.Contains(c, "<!-- planex:status -->") && !strings.Contains(c, "Follow-up report") {
		t.Errorf("last PR comment: %q", c)
	}
	w.noRefusedRequests()
}

// writes counts the requests that changed something on GitHub.
func (w *world) writes() int {
	n := 0
	for _, r := range w.fake.Requests() {
		if r.Method != "GET" {
			n++
		}
	}
	return n
}

// TestCIFixIgnoresWhatIsNotPlanexs: a failed CI run that is not on a
// pull request planex opened and may work on, or that tested a commit
// the pull request has moved on from, or any run while ci-fix is off, is
// ignored with a notice saying why, before anything is written. (A run
// that did not fail, one from a fork and another event are ignored as
// the event is read: internal/event's TestLoad.)
func TestCIFixIgnoresWhatIsNotPlanexs(t *testing.T) {
	w := newParallelWorld(t)
	w.agent.setPlan(wTask{ID: "T1", Title: "base", Scope: "a/**"})
	n := w.fake.AddIssue(wRepo, "maintainer", "Add a limiter", "")
	if r, err := w.handle(w.comment(n, "maintainer", "/planex -y add a limiter")); err != nil || r.Outputs.Status != StatusDone {
		t.Fatalf("run: %v %+v", err, r.Outputs)
	}
	pr := w.fake.PullRequests(wRepo)[0]
	// The fake does not see pushes: tell it where the branch is.
	pr.HeadSHA = run(t, w.origin, "rev-parse", pr.Head)
	w.fake.SetPullRequestHead(wRepo, pr.Number, pr.HeadSHA)
	human := w.fake.AddPullRequest(wRepo, ghfake.PullRequest{Title: "by hand", Author: "maintainer", Head: "planex/99-by-hand"})
	var humanSHA string
	for _, p := range w.fake.PullRequests(wRepo) {
		if p.Number == human {
			humanSHA = p.HeadSHA
		}
	}
	failed := func(id int64, branch, sha string, prs ...int) *event.Event {
		w.fake.SetWorkflowRun(wRepo, ghfake.WorkflowRun{ID: id, Name: "CI", Path: ".github/workflows/ci.yml", Event: "pull_request",
			Status: "completed", Conclusion: "failure", HeadBranch: branch, HeadSHA: sha, PullRequests: prs})
		return &event.Event{Name: event.WorkflowRun, Action: "completed", Owner: wOwner, Repo: wName, DefaultBranch: "main",
			Sender: event.User{Login: "maintainer", Type: "User"}, Number: pr.Number, IsPR: true,
			Run: &event.Run{ID: id, Name: "CI", Path: ".github/workflows/ci.yml", Event: "pull_request", Status: "completed", Conclusion: "failure", Actor: event.User{Login: "maintainer", Type: "User"},
				HeadBranch: branch, HeadSHA: sha, HeadRepo: wRepo, PullRequests: prs}}
	}
	cases := []struct {
		name   string
		ev     *event.Event
		cfg    func(*Config)
		notice string
	}{
		{"other branch", failed(701, "feature/x", "1111111111111111111111111111111111111111"), nil, "not a branch planex works on"},
		{"pull request not opened by planex", failed(705, "planex/99-by-hand", humanSHA, human), nil, "was not opened by planex"},
		{"outdated commit", failed(706, pr.Head, "2222222222222222222222222222222222222222", pr.Number), nil, "has moved on"},
		{"ci-fix off", failed(707, pr.Head, pr.HeadSHA, pr.Number), func(c *Config) { c.CIFix = CIFixOff }, "ci-fix is off"},
	}
	for _, c := range cases {
		var mutate []func(*Config)
		if c.cfg != nil {
			mutate = append(mutate, c.cfg)
		}
		writes := w.writes()
		r, err := w.handle(c.ev, mutate...)
		if err != nil || r.Outputs.Status != StatusIgnored || !strings.Contains(r.Outputs.Notice, c.notice) {
			t.Errorf("%s: %v, status %q, notice %q, want %q", c.name, err, r.Outputs.Status, r.Outputs.Notice, c.notice)
		}
		if got := w.writes() - writes; got != 0 {
			t.Errorf("%s: %d write requests", c.name, got)
		}
	}
	if got := w.branch(pr.Head); len(got) != 1 {
		t.Errorf("commits on the branch: %v", got)
	}
	w.noRefusedRequests()
}

// TestScheduleOverLabelledIssues: the schedule plans every issue labelled
// planex:auto by someone who may (and no other), says how many on its
// output, and the next run, with nothing new to plan, is ignored with a
// notice.
func TestScheduleOverLabelledIssues(t *testing.T) {
	w := newParallelWorld(t)
	w.agent.setPlan(wTask{ID: "T1", Title: "one", Scope: "a/**"})
	var ns []int
	for _, title := range []string{"Fix the cart", "Speed up search", "Document the API"} {
		n := w.fake.AddIssue(wRepo, "maintainer", title, "details")
		w.fake.LabelIssue(wRepo, n, "maintainer", "planex:auto")
		ns = append(ns, n)
	}
	other := w.fake.AddIssue(wRepo, "maintainer", "Not for planex", "")
	schedule := func() (*Runner, string) {
		t.Helper()
		r, out := w.job()
		ctx := context.Background()
		if err := r.LoadSettings(ctx); err != nil {
			t.Fatal(err)
		}
		if err := r.Handle(ctx, &event.Event{Name: event.Schedule, Owner: wOwner, Repo: wName, Cron: "0 3 * * *"}); err != nil {
			t.Fatalf("schedule: %v\n%s", err, out)
		}
		return r, out.String()
	}
	r, out := schedule()
	if !strings.Contains(out, "schedule: planned 3 issues") || r.Outputs.Status != StatusPlanned || r.Outputs.PlannedIssues != "3" {
		t.Errorf("schedule: %+v\n%s", r.Outputs, out)
	}
	for _, n := range ns {
		if len(w.commentsWith(n, "<!-- planex:plan")) != 1 || !slices.Contains(w.labels(n), LabelPlanned) {
			t.Errorf("issue #%d was not planned: labels %v", n, w.labels(n))
		}
	}
	if len(w.fake.Comments(wRepo, other)) != 0 || len(w.labels(other)) != 0 {
		t.Errorf("the unlabelled issue #%d was touched", other)
	}
	r, out = schedule()
	if !strings.Contains(out, "schedule: planned 0 issues") || r.Outputs.Status != StatusIgnored || r.Outputs.PlannedIssues != "0" || r.Outputs.Notice == "" {
		t.Errorf("second schedule run: %+v\n%s", r.Outputs, out)
	}
	w.noRefusedRequests()
}

// TestReviewCommentFollowUpIsAnsweredInItsThread: a plan asked for in an
// inline review comment on planex's pull request runs on its branch, and
// its outcome is the one reply in the reviewer's thread. (Was
// internal/cli's TestActionReviewCommentFollowUpIsAnsweredInItsThread.)
func TestReviewCommentFollowUpIsAnsweredInItsThread(t *testing.T) {
	w := newParallelWorld(t)
	pr := w.planexPR()
	w.agent.setPlan(wTask{ID: "T1", Title: "docs too", Scope: "d/**"})
	ev := w.reviewComment(pr, "maintainer", "a/T1.txt", "/planex also add docs")
	if r, err := w.handle(ev); err != nil || r.Outputs.Status != StatusPlanned {
		t.Fatalf("follow-up plan: %v %+v", err, r.Outputs)
	}
	if r, err := w.handle(w.comment(pr.Number, "maintainer", "/planex approve "+w.planID(pr.Number))); err != nil || r.Outputs.Status != StatusDone {
		t.Fatalf("approve: %v %+v", err, r.Outputs)
	}
	var replies []string
	for _, c := range w.fake.ReviewComments(wRepo, pr.Number) {
		if c.InReplyTo == ev.Comment.ID {
			replies = append(replies, c.Body)
		}
	}
	if len(replies) != 1 || !strings.Contains(replies[0], "T1 (docs too): completed") {
		t.Fatalf("replies in the reviewer's thread = %q", replies)
	}
	w.noRefusedRequests()
}

// TestRedTeamSettingsNotFromATagNamedLikeTheDefaultBranch: branch
// protection guards main, but whoever can push may push a tag named main
// whose .github/planex.yml changes the trigger phrase (or turns
// auto-approve on). planex asked the contents API for the file at "main",
// a name git resolves to the tag first; it must ask for refs/heads/main,
// so the default branch's file (here none) is what counts.
func TestRedTeamSettingsNotFromATagNamedLikeTheDefaultBranch(t *testing.T) {
	w := newParallelWorld(t)
	w.agent.setPlan(wTask{ID: "T1", Title: "one", Scope: "a/**"})
	w.fake.SetFile(wRepo, "refs/tags/main", ".github/planex.yml", []byte("trigger-phrase: /bot\n"))
	n := w.fake.AddIssue(wRepo, "maintainer", "Idea", "")
	if r, err := w.handle(w.comment(n, "maintainer", "/bot do it")); err != nil || r.Outputs.Status == StatusPlanned {
		t.Errorf("the tag's trigger phrase planned: %v %+v", err, r.Outputs)
	}
	if r, err := w.handle(w.comment(n, "maintainer", "/planex do it")); err != nil || r.Outputs.Status != StatusPlanned {
		t.Errorf("the default trigger, with no settings on the default branch: %v %+v", err, r.Outputs)
	}
	// The same file on the branch itself is read, by its full name.
	w.fake.SetFile(wRepo, "main", ".github/planex.yml", []byte("trigger-phrase: /bot\n"))
	m := w.fake.AddIssue(wRepo, "maintainer", "Idea 2", "")
	if r, err := w.handle(w.comment(m, "maintainer", "/bot do it")); err != nil || r.Outputs.Status != StatusPlanned {
		t.Errorf("the default branch's trigger phrase: %v %+v", err, r.Outputs)
	}
	w.noRefusedRequests()
}
