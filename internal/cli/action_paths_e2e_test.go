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

// actionProc is a `planex action` process started in its own clone.
type actionProc struct {
	p        *matrixProc
	sumFile  string
	outputs  map[string]string
	code     int
	stdout   string
	stderror string
}

// start starts `planex action` (single mode) for an event as workflow
// run runID, without waiting for it.
func (g *ghEnv) start(eventName, eventPath, runID string, env ...string) *actionProc {
	g.t.Helper()
	ws := filepath.Join(g.t.TempDir(), "ws")
	g.git("clone", "-q", g.origin, ws)
	pr := &actionProc{p: &matrixProc{outFile: filepath.Join(g.t.TempDir(), "output")}, sumFile: filepath.Join(g.t.TempDir(), "summary")}
	cmd := g.actionCmd(ws, eventName, eventPath)
	cmd.Env = append(cmd.Env, "GITHUB_OUTPUT="+pr.p.outFile, "GITHUB_STEP_SUMMARY="+pr.sumFile, "GITHUB_RUN_ID="+runID)
	cmd.Env = append(cmd.Env, env...)
	pr.p.cmd = cmd
	cmd.Stdout, cmd.Stderr = &pr.p.out, &pr.p.err
	if err := cmd.Start(); err != nil {
		g.t.Fatal(err)
	}
	return pr
}

func (pr *actionProc) wait() *actionProc {
	pr.outputs, pr.code = pr.p.wait()
	pr.stdout, pr.stderror = pr.p.out.String(), pr.p.err.String()
	return pr
}

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

// planned makes a one-task plan on a new issue and returns it and its id.
func (g *ghEnv) plannedOne(title string) (int, string) {
	g.t.Helper()
	n := g.fake.AddIssue(ghRepo, "maintainer", title, "")
	if r := g.run("issue_comment", g.comment(n, false, "maintainer", "/planex "+strings.ToLower(title))); r.code != 0 {
		g.t.Fatalf("plan: %d\n%s", r.code, r.err)
	}
	return n, g.lastPlanID(n)
}

// statusSays is what the one status comment of a thread says; the test
// fails when there is not exactly one.
func (g *ghEnv) statusSays(n int) string {
	g.t.Helper()
	var s []string
	for _, b := range g.botComments(n) {
		if strings.Contains(b, "<!-- planex:status -->") {
			s = append(s, b)
		}
	}
	if len(s) != 1 {
		g.t.Fatalf("%d status comments on #%d", len(s), n)
	}
	return s[0]
}

// commentBy finds the id of the comment login wrote with body.
func (g *ghEnv) commentBy(n int, login, body string) int64 {
	for _, c := range g.fake.Comments(ghRepo, n) {
		if c.Author == login && c.Body == body {
			return c.ID
		}
	}
	g.t.Fatalf("no comment %q by %s on #%d", body, login, n)
	return 0
}

const lostRace = "Another planex run handled this thread's plan at the same time"

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

// together starts two events as two workflow runs at once (b first on
// odd rounds, so either may win) and waits for both.
func (g *ghEnv) together(round int, a, b string) (*actionProc, *actionProc) {
	var pa, pb *actionProc
	if round%2 == 1 {
		pb = g.start("issue_comment", b, "502")
		pa = g.start("issue_comment", a, "501")
	} else {
		pa = g.start("issue_comment", a, "501")
		pb = g.start("issue_comment", b, "502")
	}
	pa, pb = pa.wait(), pb.wait()
	g.t.Logf("together: %s / %s", pa.outputs["status"], pb.outputs["status"])
	return pa, pb
}

// raceRounds: each race is run once with each process started first
// (together alternates the order by round).
const raceRounds = 2

// TestRedTeamActionRaceApproveCancel: an approve and a cancel handled at
// once. Exactly one wins; the thread, labels, reactions and outputs say
// what happened and nothing else.
func TestRedTeamActionRaceApproveCancel(t *testing.T) {
	t.Parallel()
	g := newGHEnv(t)
	g.setPlan(task{ID: "T1", Title: "one", Scope: "a/**"})
	g.markRuns("T1")
	for round := 0; round < raceRounds; round++ {
		os.Remove(filepath.Join(g.fixture.fake, "T1.ran"))
		n, id := g.plannedOne("Add a file")
		approve := g.comment(n, false, "maintainer", "/planex approve "+id)
		cancel := g.comment(n, false, "owner", "/planex cancel")
		pa, pc := g.together(round, approve, cancel)
		if pa.code != 0 || pc.code != 0 {
			t.Fatalf("round %d: exits %d %d\n%s\n%s", round, pa.code, pc.code, pa.stderror, pc.stderror)
		}
		bots := g.botComments(n)
		approval := g.reactions(g.commentBy(n, "maintainer", "/planex approve "+id))
		status := g.statusSays(n)
		switch {
		case pa.outputs["status"] == "done":
			if !g.ran("T1") || !hasLabel(approval, "rocket") || !hasLabel(g.issueLabels(n), "planex:done") || !strings.Contains(status, "**done**") {
				t.Errorf("round %d: approval won, but ran %v, reactions %v, labels %v\n%s", round, g.ran("T1"), approval, g.issueLabels(n), status)
			}
			if pc.outputs["status"] != "superseded" && pc.outputs["status"] != "refused" || countWith(bots, "is cancelled") != 0 {
				t.Errorf("round %d: cancel after the run won: %v\n%s", round, pc.outputs, strings.Join(bots, "\n---\n"))
			}
		case pc.outputs["status"] == "cancelled":
			if g.ran("T1") || hasLabel(approval, "rocket") || len(g.issueLabels(n)) != 0 || !strings.Contains(status, "cancelled") {
				t.Errorf("round %d: cancel won, but ran %v, reactions %v, labels %v\n%s", round, g.ran("T1"), approval, g.issueLabels(n), status)
			}
			if pa.outputs["status"] != "superseded" && pa.outputs["status"] != "refused" || countWith(bots, "is cancelled") != 1 {
				t.Errorf("round %d: approval after the cancel won: %v\n%s", round, pa.outputs, strings.Join(bots, "\n---\n"))
			}
			if sid := pc.outputs["session-id"]; sid == "" || g.branchCommits("planex/"+sid) != nil {
				t.Errorf("round %d: session %q: its run branch reached origin", round, sid)
			}
		default:
			t.Fatalf("round %d: neither won: approve %v, cancel %v\n%s\n%s", round, pa.outputs, pc.outputs, pa.stderror, pc.stderror)
		}
		if k := countWith(bots, lostRace); k > 1 || countWith(bots, "already being handled") > 0 {
			t.Errorf("round %d: %d lost-race replies\n%s", round, k, strings.Join(bots, "\n---\n"))
		}
		g.noInternalErrors(n)
	}
}

// TestRedTeamActionRaceApproveRevise: an approve and a revise handled at
// once. Either the approved plan runs and no second plan invites an
// approval, or the revised plan waits and nothing ran.
func TestRedTeamActionRaceApproveRevise(t *testing.T) {
	t.Parallel()
	g := newGHEnv(t)
	for round := 0; round < raceRounds; round++ {
		g.setPlan(task{ID: "T1", Title: "one", Scope: "a/**"})
		g.markRuns("T1")
		os.Remove(filepath.Join(g.fixture.fake, "T1.ran"))
		os.Remove(filepath.Join(g.fixture.fake, "plan-revised.json"))
		n, id := g.plannedOne("Add a file")
		b, err := os.ReadFile(filepath.Join(g.fixture.fake, "plan.json"))
		if err != nil {
			t.Fatal(err)
		}
		g.write(g.fixture.fake, "plan-revised.json", strings.Replace(string(b), `"title":"one"`, `"title":"one, smaller"`, 1))
		pa, pr := g.together(round, g.comment(n, false, "maintainer", "/planex approve "+id), g.comment(n, false, "owner", "/planex revise smaller please"))
		if pa.code != 0 || pr.code != 0 {
			t.Fatalf("round %d: exits %d %d\n%s\n%s", round, pa.code, pr.code, pa.stderror, pr.stderror)
		}
		bots := g.botComments(n)
		plans := countWith(bots, "<!-- planex:plan ")
		approval := g.reactions(g.commentBy(n, "maintainer", "/planex approve "+id))
		switch {
		case pa.outputs["status"] == "done":
			if plans != 1 || !g.ran("T1") || !hasLabel(approval, "rocket") || !hasLabel(g.issueLabels(n), "planex:done") {
				t.Errorf("round %d: approval won, but %d plan comments, ran %v, reactions %v, labels %v", round, plans, g.ran("T1"), approval, g.issueLabels(n))
			}
			if pr.outputs["status"] != "superseded" && pr.outputs["status"] != "refused" {
				t.Errorf("round %d: revise after the run won: %v", round, pr.outputs)
			}
		case pr.outputs["status"] == "planned":
			revised := g.lastPlanID(n)
			if plans != 2 || revised == id || g.ran("T1") || hasLabel(approval, "rocket") || !hasLabel(g.issueLabels(n), "planex:planned") ||
				!strings.Contains(g.statusSays(n), "approve "+revised) {
				t.Errorf("round %d: revise won, but %d plan comments, ran %v, reactions %v, labels %v\n%s", round, plans, g.ran("T1"), approval, g.issueLabels(n), g.statusSays(n))
			}
			if pa.outputs["status"] != "superseded" && pa.outputs["status"] != "refused" {
				t.Errorf("round %d: approval after the revise won: %v", round, pa.outputs)
			}
		default:
			t.Fatalf("round %d: neither won: approve %v, revise %v\n%s\n%s", round, pa.outputs, pr.outputs, pa.stderror, pr.stderror)
		}
		if k := countWith(bots, lostRace); k > 1 {
			t.Errorf("round %d: %d lost-race replies", round, k)
		}
		g.noInternalErrors(n)
	}
}

// TestRedTeamActionRaceTwoApprovals: two approvals handled at once run
// the plan once, with one 🚀.
func TestRedTeamActionRaceTwoApprovals(t *testing.T) {
	t.Parallel()
	g := newGHEnv(t)
	g.setPlan(task{ID: "T1", Title: "one", Scope: "a/**"})
	for round := 0; round < raceRounds; round++ {
		n, id := g.plannedOne("Add a file")
		a := g.comment(n, false, "maintainer", "/planex approve "+id)
		b := g.comment(n, false, "owner", "/planex approve "+id)
		pa, pb := g.together(round, a, b)
		if pa.code != 0 || pb.code != 0 {
			t.Fatalf("round %d: exits %d %d\n%s\n%s", round, pa.code, pb.code, pa.stderror, pb.stderror)
		}
		done := 0
		for _, p := range []*actionProc{pa, pb} {
			if p.outputs["status"] == "done" {
				done++
			}
		}
		rockets := 0
		for _, who := range []string{"maintainer", "owner"} {
			if hasLabel(g.reactions(g.commentBy(n, who, "/planex approve "+id)), "rocket") {
				rockets++
			}
		}
		sid := pa.outputs["session-id"]
		if got := strings.Join(g.branchCommits("planex/"+sid), " | "); done != 1 || rockets != 1 || got != "T1: one" {
			t.Errorf("round %d: %d runs done, %d rockets, branch %q; outputs %v %v", round, done, rockets, got, pa.outputs, pb.outputs)
		}
		if prs := g.fake.PullRequests(ghRepo); len(prs) != round+1 {
			t.Errorf("round %d: %d pull requests", round, len(prs))
		}
		if !strings.Contains(g.statusSays(n), "**done**") || !hasLabel(g.issueLabels(n), "planex:done") {
			t.Errorf("round %d: status or labels disagree: %v", round, g.issueLabels(n))
		}
		g.noInternalErrors(n)
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

// TestRedTeamActionRaceTwoPlans: two planning requests on a fresh issue
// handled at once leave one plan, one plan comment, one status comment.
func TestRedTeamActionRaceTwoPlans(t *testing.T) {
	t.Parallel()
	g := newGHEnv(t)
	g.setPlan(task{ID: "T1", Title: "one", Scope: "a/**"})
	for round := 0; round < 2; round++ {
		n := g.fake.AddIssue(ghRepo, "maintainer", "Add a file", "")
		pa, pb := g.together(round, g.comment(n, false, "maintainer", "/planex add a file"), g.comment(n, false, "owner", "/planex add one file"))
		if pa.code != 0 || pb.code != 0 {
			t.Fatalf("round %d: exits %d %d\n%s\n%s", round, pa.code, pb.code, pa.stderror, pb.stderror)
		}
		bots := g.botComments(n)
		won := 0
		for _, p := range []*actionProc{pa, pb} {
			if p.outputs["status"] == "planned" {
				won++
			}
		}
		if won == 2 {
			// One ran after the other had finished: two plans in turn,
			// the first superseded by the second.
			if countWith(bots, "<!-- planex:plan ") != 2 {
				t.Errorf("round %d: both planned, %d plan comments", round, countWith(bots, "<!-- planex:plan "))
			}
		} else if won != 1 || countWith(bots, "<!-- planex:plan ") != 1 || countWith(bots, lostRace) != 1 {
			t.Errorf("round %d: %d won; comments:\n%s", round, won, strings.Join(bots, "\n---\n"))
		}
		g.statusSays(n)
		if !hasLabel(g.issueLabels(n), "planex:planned") {
			t.Errorf("round %d: labels %v", round, g.issueLabels(n))
		}
		g.noInternalErrors(n)
	}
}

// TestRedTeamActionRaceTwoRetries: two /planex retry of a failed plan
// handled at once re-run it once.
func TestRedTeamActionRaceTwoRetries(t *testing.T) {
	t.Parallel()
	g := newGHEnv(t)
	g.setPlan(task{ID: "T1", Title: "one", Scope: "a/**"})
	for round := 0; round < 2; round++ {
		g.write(g.fixture.fake, "T1.fail", "not yet")
		n, id := g.plannedOne("Add a file")
		if r := g.run("issue_comment", g.comment(n, false, "maintainer", "/planex approve "+id)); r.outputs["status"] != "failed" {
			t.Fatalf("round %d: approve: %v\n%s", round, r.outputs, r.err)
		}
		os.Remove(filepath.Join(g.fixture.fake, "T1.fail"))
		g.clearAgentCalls()
		pa, pb := g.together(round, g.comment(n, false, "maintainer", "/planex retry"), g.comment(n, false, "owner", "/planex retry"))
		if pa.code != 0 || pb.code != 0 {
			t.Fatalf("round %d: exits %d %d\n%s\n%s", round, pa.code, pb.code, pa.stderror, pb.stderror)
		}
		done := 0
		for _, p := range []*actionProc{pa, pb} {
			if p.outputs["status"] == "done" {
				done++
			}
		}
		if calls := strings.Count(g.agentCalls(), "execute T1"); done != 1 || calls != 1 {
			t.Errorf("round %d: %d retries done, T1 ran %d times; %v %v", round, done, calls, pa.outputs, pb.outputs)
		}
		if !strings.Contains(g.statusSays(n), "**done**") || !hasLabel(g.issueLabels(n), "planex:done") || hasLabel(g.issueLabels(n), "planex:running") {
			t.Errorf("round %d: status or labels disagree: %v", round, g.issueLabels(n))
		}
		g.noInternalErrors(n)
	}
}
