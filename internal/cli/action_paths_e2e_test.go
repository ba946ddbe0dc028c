package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// End-to-end rows for every path to a run (issue 34): who asked, what
// they read, and two jobs handling one thread at once. Each runs
// `planex action` as GitHub would, against the fake GitHub.

// botComments are planex's comments on a thread.
func (g *ghEnv) botComments(n int) []string {
	var out []string
	for _, c := range g.fake.Comments(ghRepo, n) {
		if strings.HasSuffix(c.Author, "[bot]") {
			out = append(out, c.Body)
		}
	}
	return out
}

func countWith(bodies []string, part string) int {
	k := 0
	for _, b := range bodies {
		if strings.Contains(b, part) {
			k++
		}
	}
	return k
}

func (g *ghEnv) ran(id string) bool {
	_, err := os.Stat(filepath.Join(g.fixture.fake, id+".ran"))
	return err == nil
}

// noInternalErrors fails when planex told the thread about an internal
// error, or the fake saw a request GitHub would refuse.
func (g *ghEnv) noInternalErrors(n int) {
	g.t.Helper()
	if k := countWith(g.botComments(n), "internal error"); k > 0 {
		g.t.Errorf("%d internal error replies on #%d:\n%s", k, n, strings.Join(g.botComments(n), "\n---\n"))
	}
	if errs := g.fake.Errors(); len(errs) > 0 {
		g.t.Errorf("requests GitHub would refuse: %v", errs)
	}
}

// TestRedTeamActionDispatchSender: a workflow_dispatch with auto-approve
// from a sender who may not approve plans runs nothing.
func TestRedTeamActionDispatchSender(t *testing.T) {
	t.Parallel()
	g := newGHEnv(t)
	g.setPlan(task{ID: "T1", Title: "one", Scope: "a/**"})
	g.markRuns("T1")
	g.fake.SetPermission(ghRepo, "helper", "triage")
	n := g.fake.AddIssue(ghRepo, "reader", "Add a file", "")
	dispatch := func(sender string, inputs map[string]any) string {
		return g.eventFrom("event.workflow_dispatch.json", func(p map[string]any) {
			p["inputs"] = inputs
			p["sender"].(map[string]any)["login"] = sender
		})
	}
	for _, c := range []struct {
		name   string
		inputs map[string]any
		env    []string
	}{
		{"auto-approve input", map[string]any{"issue": itoa(n), "auto-approve": "true"}, nil},
		{"auto-approve setting", map[string]any{"issue": itoa(n)}, []string{"INPUT_AUTO_APPROVE=true"}},
		{"requirement only", map[string]any{"requirement": "Add a file", "auto-approve": "true"}, nil},
	} {
		before := len(g.fake.Comments(ghRepo, n))
		r := g.run("workflow_dispatch", dispatch("helper", c.inputs), c.env...)
		if r.code != 0 || r.outputs["status"] != "refused" || g.ran("T1") || g.lastPlanCommentOrEmpty(n) != "" {
			t.Errorf("%s: %d %v ran %v\n%s", c.name, r.code, r.outputs, g.ran("T1"), r.err)
		}
		if got := len(g.fake.Comments(ghRepo, n)) - before; c.inputs["issue"] != nil && got != 1 || !strings.Contains(r.out+g.lastComment(n), "@helper") {
			t.Errorf("%s: %d new comments, last %q", c.name, got, g.lastComment(n))
		}
	}
	if prs := g.fake.PullRequests(ghRepo); len(prs) != 0 {
		t.Errorf("%d pull requests", len(prs))
	}
	// A write user's dispatch with auto-approve naming an issue someone
	// without write access wrote plans it and waits for an approval (its
	// text may have changed since it was read); naming the write user's
	// own issue, it runs.
	if r := g.run("workflow_dispatch", dispatch("maintainer", map[string]any{"issue": itoa(n), "auto-approve": "true"})); r.outputs["status"] != "planned" || g.ran("T1") {
		t.Fatalf("maintainer's dispatch of a reader's issue: %v\n%s", r.outputs, r.err)
	}
	own := g.fake.AddIssue(ghRepo, "maintainer", "Add a file", "")
	if r := g.run("workflow_dispatch", dispatch("maintainer", map[string]any{"issue": itoa(own), "auto-approve": "true"})); r.outputs["status"] != "done" || !g.ran("T1") {
		t.Fatalf("maintainer's dispatch: %v\n%s", r.outputs, r.err)
	}
	g.noInternalErrors(n)
	g.noInternalErrors(own)
}

// TestRedTeamActionScheduleLabeller: the schedule plans (and, with
// auto-approve, runs) only issues whose last planex:auto labelling was by
// someone with write access; a triage user's label, also one added after
// a write user's label was removed, is skipped with a note in the job
// summary.
func TestRedTeamActionScheduleLabeller(t *testing.T) {
	t.Parallel()
	g := newGHEnv(t)
	g.setPlan(task{ID: "T1", Title: "one", Scope: "a/**"})
	g.fake.SetPermission(ghRepo, "helper", "triage")
	byTriage := g.fake.AddIssue(ghRepo, "reader", "Rewrite everything", "my text")
	g.fake.LabelIssue(ghRepo, byTriage, "helper", "planex:auto")
	relabelled := g.fake.AddIssue(ghRepo, "reader", "Also rewrite", "")
	g.fake.LabelIssue(ghRepo, relabelled, "maintainer", "planex:auto")
	g.fake.UnlabelIssue(ghRepo, relabelled, "maintainer", "planex:auto")
	g.fake.LabelIssue(ghRepo, relabelled, "helper", "planex:auto")
	demoted := g.fake.AddIssue(ghRepo, "reader", "Demoted", "")
	g.fake.SetPermission(ghRepo, "former", "write")
	g.fake.LabelIssue(ghRepo, demoted, "former", "planex:auto")
	g.fake.SetPermission(ghRepo, "former", "read")
	// A maintainer's own issue: one written without write access waits
	// for an approval (internal/action's TestRedTeamAutoApproveRunsNonWritersText).
	ok := g.fake.AddIssue(ghRepo, "maintainer", "Add a file", "")
	g.fake.LabelIssue(ghRepo, ok, "maintainer", "planex:auto")
	ev := g.payload("schedule", func(p map[string]any) {
		for k := range p {
			delete(p, k)
		}
		p["schedule"] = "0 3 * * *"
	})
	r := g.run("schedule", ev, "INPUT_AUTO_APPROVE=true", "INPUT_MAX_ISSUES=10")
	if r.code != 0 || !strings.Contains(r.out, "schedule: planned 1 issue") {
		t.Fatalf("schedule: %d\n%s\n%s", r.code, r.out, r.err)
	}
	if r.outputs["status"] != "planned" || r.outputs["planned-issues"] != "1" {
		t.Errorf("outputs status %q, planned-issues %q; want planned and 1", r.outputs["status"], r.outputs["planned-issues"])
	}
	for _, n := range []int{byTriage, relabelled, demoted} {
		if len(g.fake.Comments(ghRepo, n)) != 0 || len(g.issueLabels(n)) != 1 || !strings.Contains(r.summary, "#"+itoa(n)+":") {
			t.Errorf("#%d: comments %d, labels %v; summary:\n%s", n, len(g.fake.Comments(ghRepo, n)), g.issueLabels(n), r.summary)
		}
	}
	if !strings.Contains(r.summary, "last added by @helper") || !strings.Contains(r.summary, "last added by @former") {
		t.Errorf("summary:\n%s", r.summary)
	}
	prs := g.fake.PullRequests(ghRepo)
	if len(prs) != 1 || !strings.Contains(prs[0].Body, "#"+itoa(ok)) || !hasLabel(g.issueLabels(ok), "planex:done") {
		t.Errorf("pull requests %+v, labels of #%d %v", prs, ok, g.issueLabels(ok))
	}
	if b, _ := os.ReadFile(filepath.Join(g.fixture.fake, "prompt-plan.txt")); bytes.Contains(b, []byte("my text")) {
		t.Error("a triage-labelled issue's text reached the agent")
	}
	if errs := g.fake.Errors(); len(errs) > 0 {
		t.Errorf("requests GitHub would refuse: %v", errs)
	}
}

// TestRedTeamActionLabelPath: the planex label plans only when added by
// someone with write access; with auto-approve on it runs the plan, so a
// bot's label (whatever its permission) is refused like a bot's approval.
func TestRedTeamActionLabelPath(t *testing.T) {
	t.Parallel()
	g := newGHEnv(t)
	g.setPlan(task{ID: "T1", Title: "one", Scope: "a/**"})
	g.markRuns("T1")
	g.fake.SetPermission(ghRepo, "helper", "triage")
	g.fake.AddUser("automation[bot]", "Bot")
	g.fake.SetPermission(ghRepo, "automation[bot]", "write")
	n := g.fake.AddIssue(ghRepo, "maintainer", "Rewrite everything", "")
	labeled := func(sender, typ string) string {
		return g.eventFrom("event.issues_labeled.json", func(p map[string]any) {
			i := p["issue"].(map[string]any)
			i["number"], i["title"], i["body"] = n, "Rewrite everything", ""
			i["user"] = map[string]any{"login": "maintainer", "type": "User"}
			p["label"].(map[string]any)["name"] = "planex"
			p["sender"].(map[string]any)["login"] = sender
			p["sender"].(map[string]any)["type"] = typ
		})
	}
	for _, c := range []struct{ login, typ string }{{"helper", "User"}, {"automation[bot]", "Bot"}} {
		if r := g.run("issues", labeled(c.login, c.typ), "INPUT_AUTO_APPROVE=true"); r.code != 0 || r.outputs["status"] != "refused" || !strings.Contains(g.lastComment(n), "@"+c.login) {
			t.Errorf("label by %s: %d %v\n%s\n%s", c.login, r.code, r.outputs, g.lastComment(n), r.err)
		}
	}
	if g.ran("T1") || g.lastPlanCommentOrEmpty(n) != "" {
		t.Fatal("a refused label planned or ran something")
	}
	if r := g.run("issues", labeled("maintainer", "User"), "INPUT_AUTO_APPROVE=true"); r.outputs["status"] != "done" || !g.ran("T1") {
		t.Fatalf("label by a maintainer: %v\n%s", r.outputs, r.err)
	}
	g.noInternalErrors(n)
}
