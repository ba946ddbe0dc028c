package action

import (
	"context"
	"strings"
	"testing"

	"github.com/planexhq/planex/internal/event"
)

// handleOut is handle that also returns what the job printed.
func (w *world) handleOut(ev *event.Event, mutate ...func(*Config)) (*Runner, string, error) {
	w.t.Helper()
	r, out := w.job(mutate...)
	err := r.LoadSettings(context.Background())
	if err == nil {
		err = r.Handle(context.Background(), ev)
	}
	return r, out.String(), err
}

// TestRedTeamDispatchSender: a workflow_dispatch with auto-approve from a
// sender who may not approve plans runs nothing, whether the form or the
// setting asks for it, with an issue or a requirement only; the sender is
// told. A write user's dispatch of an issue someone without write access
// wrote plans it and waits; of their own issue, it runs. (Was
// internal/cli's TestRedTeamActionDispatchSender.)
func TestRedTeamDispatchSender(t *testing.T) {
	w := newParallelWorld(t)
	w.agent.setPlan(wTask{ID: "T1", Title: "one", Scope: "a/**"})
	w.fake.AddUser("helper", "User")
	w.fake.SetPermission(wRepo, "helper", "triage")
	n := w.fake.AddIssue(wRepo, "reader", "Add a file", "")
	dispatch := func(sender string, in event.Inputs) *event.Event {
		return &event.Event{Name: event.WorkflowDispatch, Owner: wOwner, Repo: wName, DefaultBranch: "main",
			Sender: event.User{Login: sender, Type: "User"}, Inputs: in}
	}
	autoSetting := func(c *Config) { c.AutoApprove = true }
	for _, c := range []struct {
		name    string
		inputs  event.Inputs
		setting bool
	}{
		{"auto-approve input", event.Inputs{Issue: n, AutoApprove: true}, false},
		{"auto-approve setting", event.Inputs{Issue: n}, true},
		{"requirement only", event.Inputs{Requirement: "Add a file", AutoApprove: true}, false},
	} {
		var mutate []func(*Config)
		if c.setting {
			mutate = append(mutate, autoSetting)
		}
		before := len(w.fake.Comments(wRepo, n))
		r, out, err := w.handleOut(dispatch("helper", c.inputs), mutate...)
		if err != nil || r.Outputs.Status != StatusRefused || w.agent.executed("T1") || len(w.commentsWith(n, "<!-- planex:plan ")) != 0 {
			t.Errorf("%s: %v %+v ran %v", c.name, err, r.Outputs, w.agent.executed("T1"))
		}
		if got := len(w.fake.Comments(wRepo, n)) - before; c.inputs.Issue != 0 && got != 1 || !strings.Contains(out+w.lastComment(n), "@helper") {
			t.Errorf("%s: %d new comments, last %q", c.name, got, w.lastComment(n))
		}
	}
	if prs := w.fake.PullRequests(wRepo); len(prs) != 0 {
		t.Errorf("%d pull requests", len(prs))
	}
	if r, err := w.handle(dispatch("maintainer", event.Inputs{Issue: n, AutoApprove: true})); err != nil || r.Outputs.Status != StatusPlanned || w.agent.executed("T1") {
		t.Fatalf("maintainer's dispatch of a reader's issue: %v %+v", err, r.Outputs)
	}
	own := w.fake.AddIssue(wRepo, "maintainer", "Add a file", "")
	if r, err := w.handle(dispatch("maintainer", event.Inputs{Issue: own, AutoApprove: true})); err != nil || r.Outputs.Status != StatusDone || !w.agent.executed("T1") {
		t.Fatalf("maintainer's dispatch: %v %+v", err, r.Outputs)
	}
	w.noInternalErrors(n)
	w.noInternalErrors(own)
}

// TestRedTeamLabelPath: the planex label plans only when added by someone
// with write access; with auto-approve on it runs the plan, so a bot's
// label (whatever its permission) is refused like a bot's approval. (Was
// internal/cli's TestRedTeamActionLabelPath.)
func TestRedTeamLabelPath(t *testing.T) {
	w := newParallelWorld(t)
	w.agent.setPlan(wTask{ID: "T1", Title: "one", Scope: "a/**"})
	w.fake.AddUser("helper", "User")
	w.fake.SetPermission(wRepo, "helper", "triage")
	w.fake.AddUser("automation[bot]", "Bot")
	w.fake.SetPermission(wRepo, "automation[bot]", "write")
	n := w.fake.AddIssue(wRepo, "maintainer", "Rewrite everything", "")
	labeled := func(sender, typ string) *event.Event {
		return &event.Event{Name: event.Issues, Action: "labeled", Owner: wOwner, Repo: wName, DefaultBranch: "main", Number: n,
			Sender: event.User{Login: sender, Type: typ}, Label: "planex",
			Issue: &event.Issue{Number: n, Title: "Rewrite everything", Author: event.User{Login: "maintainer", Type: "User"}}}
	}
	auto := func(c *Config) { c.AutoApprove = true }
	for _, c := range []struct{ login, typ string }{{"helper", "User"}, {"automation[bot]", "Bot"}} {
		if r, err := w.handle(labeled(c.login, c.typ), auto); err != nil || r.Outputs.Status != StatusRefused || !strings.Contains(w.lastComment(n), "@"+c.login) {
			t.Errorf("label by %s: %v %+v\n%s", c.login, err, r.Outputs, w.lastComment(n))
		}
	}
	if w.agent.executed("T1") || len(w.commentsWith(n, "<!-- planex:plan ")) != 0 {
		t.Fatal("a refused label planned or ran something")
	}
	if r, err := w.handle(labeled("maintainer", "User"), auto); err != nil || r.Outputs.Status != StatusDone || !w.agent.executed("T1") {
		t.Fatalf("label by a maintainer: %v %+v", err, r.Outputs)
	}
	w.noInternalErrors(n)
}

// TestRedTeamDispatchByNonWriter: a workflow_dispatch without
// auto-approve whose sender has no write access (a triage user; the
// shared Actions bot, as another workflow that a reader's comment started
// dispatches planex naming an issue or a requirement) planned all the
// same: only a dispatch that approved itself checked its sender. Now every
// dispatch's sender must be allowed to run planex; the refused one is told
// on the issue and nothing is planned.
func TestRedTeamDispatchByNonWriter(t *testing.T) {
	w := newParallelWorld(t)
	w.agent.setPlan(wTask{ID: "T1", Title: "one", Scope: "a/**"})
	w.fake.AddUser("helper", "User")
	w.fake.SetPermission(wRepo, "helper", "triage")
	n := w.fake.AddIssue(wRepo, "reader", "Add a file", "")
	for _, c := range []struct {
		sender event.User
		in     event.Inputs
	}{
		{event.User{Login: "helper", Type: "User"}, event.Inputs{Issue: n}},
		{event.User{Login: "helper", Type: "User"}, event.Inputs{Requirement: "Add a file"}},
		{event.User{Login: ActionsBot, Type: "Bot"}, event.Inputs{Issue: n}},
	} {
		ev := &event.Event{Name: event.WorkflowDispatch, Owner: wOwner, Repo: wName, DefaultBranch: "main", Sender: c.sender, Inputs: c.in}
		r, out, err := w.handleOut(ev)
		if err != nil || r.Outputs.Status != StatusRefused || !strings.Contains(out+w.lastComment(n), "@"+c.sender.Login) {
			t.Errorf("dispatch by %s of %+v: %v %+v", c.sender.Login, c.in, err, r.Outputs)
		}
	}
	if len(w.commentsWith(n, "<!-- planex:plan ")) != 0 || func() bool { _, ok := w.fake.Issue(wRepo, n+1); return ok }() {
		t.Fatal("a dispatch by someone without write access planned")
	}
	w.noInternalErrors(n)
}

// TestRedTeamOtherAppStartsNothing: a GitHub App with write access that
// labels issues for others (an issue importer, a triage bot acting on a
// reader's request) adds the trigger label: its write access was taken
// as a maintainer's and the reader's issue was planned. A bot starts
// planex only when the workflow names it in trusted-bots; named, it plans
// but never approves. (A bot's comments were ignored already; they still
// are, named or not.)
func TestRedTeamOtherAppStartsNothing(t *testing.T) {
	w := newParallelWorld(t)
	w.agent.setPlan(wTask{ID: "T1", Title: "one", Scope: "a/**"})
	const app = "importer[bot]"
	w.fake.AddUser(app, "Bot")
	w.fake.SetPermission(wRepo, app, "write")
	bot := event.User{Login: app, Type: "Bot"}
	byApp := func(n int, body string) *event.Event {
		ev := w.comment(n, app, body)
		ev.Sender, ev.Comment.Author = bot, bot
		return ev
	}
	labeled := func(n int) *event.Event {
		return &event.Event{Name: event.Issues, Action: "labeled", Owner: wOwner, Repo: wName, DefaultBranch: "main", Number: n,
			Sender: bot, Label: "planex", Issue: &event.Issue{Number: n, Title: "Rewrite everything", Author: event.User{Login: "reader", Type: "User"}}}
	}
	trusted := func(c *Config) { c.TrustedBots = []string{"Importer[bot]"} }
	n := w.fake.AddIssue(wRepo, "reader", "Rewrite everything", "")
	if r, err := w.handle(labeled(n)); err != nil || r.Outputs.Status != StatusRefused || !strings.Contains(w.lastComment(n), "trusted-bots") {
		t.Errorf("label by an App: %v %+v\n%s", err, r.Outputs, w.lastComment(n))
	}
	for _, mutate := range []func(*Config){func(*Config) {}, trusted} {
		if r, err := w.handle(byApp(n, "/planex rewrite everything"), mutate); err != nil || r.Outputs.Status != StatusIgnored {
			t.Errorf("comment by an App: %v %+v", err, r.Outputs)
		}
	}
	w.agent.mu.Lock()
	calls := len(w.agent.calls)
	w.agent.mu.Unlock()
	if calls != 0 || len(w.commentsWith(n, "<!-- planex:plan ")) != 0 {
		t.Fatalf("an App's command or label planned something (%d agent steps)", calls)
	}
	if r, err := w.handle(labeled(n), trusted); err != nil || r.Outputs.Status != StatusPlanned {
		t.Fatalf("a trusted App's label: %v %+v\n%s", err, r.Outputs, w.lastComment(n))
	}
	if r, err := w.handle(labeled(n), trusted, func(c *Config) { c.AutoApprove = true }); err != nil || r.Outputs.Status != StatusRefused || w.agent.executed("T1") {
		t.Errorf("a trusted App's label under auto-approve: %v %+v\n%s", err, r.Outputs, w.lastComment(n))
	}
	w.noInternalErrors(n)
}
