package action

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/planexhq/planex/internal/agent"
	"github.com/planexhq/planex/internal/authz"
	"github.com/planexhq/planex/internal/event"
	"github.com/planexhq/planex/internal/gh"
)

func TestChangedLines(t *testing.T) {
	t.Parallel()
	posted := "one\ntwo\nthree\nfour\nfive"
	cases := []struct{ name, current, want string }{
		{"one line", "one\ntwo\nTHREE\nfour\nfive", "line 3 of the comment"},
		{"two lines", "one\nTWO\nTHREE\nfour\nfive", "lines 2–3 of the comment"},
		{"a line removed", "one\ntwo\nfour\nfive", "line 3 of the comment"},
		{"a line added", "one\ntwo\nnew\nthree\nfour\nfive", "text added before line 3 of the comment"},
		{"text appended", posted + "\nmore", "text added after the comment's last line"},
		{"everything", "x", "lines 1–5 of the comment"},
		{"unchanged", posted, "nothing"},
	}
	for _, c := range cases {
		if got := changedLines(posted, c.current); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// TestBodyHashIgnoresTheCreateMarker: the client's hidden create marker
// (and trailing space) is not the plan's text; anything else is.
func TestBodyHashIgnoresTheCreateMarker(t *testing.T) {
	t.Parallel()
	body := "## Plan\n\n| T1 | one |\n"
	if bodyHash(body) != bodyHash(body+"\n\n<!-- planex:req 0123abcd -->") {
		t.Error("the create marker changed the hash")
	}
	for _, edited := range []string{"## Plan\n\n| T1 | two |\n", "## Plan\n\n| T1 | one |\n<!-- planex:req 0123abcd --> x", "## Plan\n\n| T1 | one |\n\u200b"} {
		if bodyHash(body) == bodyHash(edited) {
			t.Errorf("edit %q kept the hash", edited)
		}
	}
}

func TestLastLabeller(t *testing.T) {
	t.Parallel()
	add := func(who string) gh.LabelEvent { return gh.LabelEvent{Labeled: true, Actor: who, ActorType: "User"} }
	del := func(who string) gh.LabelEvent { return gh.LabelEvent{Actor: who, ActorType: "User"} }
	cases := []struct {
		name string
		evs  []gh.LabelEvent
		want string // "" = nobody
	}{
		{"none", nil, ""},
		{"one", []gh.LabelEvent{add("m")}, "m"},
		{"removed and added again by another", []gh.LabelEvent{add("m"), del("m"), add("helper")}, "helper"},
		{"removed last", []gh.LabelEvent{add("m"), del("helper")}, ""},
		{"ghost actor", []gh.LabelEvent{add("")}, ""},
	}
	for _, c := range cases {
		got, ok := lastLabeller(c.evs)
		if (c.want == "") == ok || got.Actor != c.want {
			t.Errorf("%s: %+v %v, want %q", c.name, got, ok, c.want)
		}
	}
}

func TestAccessOf(t *testing.T) {
	t.Parallel()
	cases := []struct {
		dec  authz.Decision
		want string
	}{
		{authz.Decision{Permission: "read", Role: "triage"}, "triage access"},
		{authz.Decision{Permission: "read"}, "read access"},
		{authz.Decision{Permission: "none", Role: "none"}, "no access"},
		{authz.Decision{}, "a bot"},
		// A custom role is named by the organisation: one built on read
		// or triage and named like a role that may is shown by its level.
		{authz.Decision{Permission: "read", Role: "Maintain"}, "read access"},
		{authz.Decision{Permission: "read", Role: "Write"}, "read access"},
		{authz.Decision{Permission: "read", Role: "ADMIN"}, "read access"},
		{authz.Decision{Permission: "none", Role: "maintain"}, "no access"},
		{authz.Decision{Permission: "read", Role: "Issue Keeper"}, "Issue Keeper access"},
	}
	for _, c := range cases {
		if got := accessOf(c.dec); got != c.want {
			t.Errorf("%+v: %q, want %q", c.dec, got, c.want)
		}
	}
}

// TestScheduleChecksWhoLabelled: the schedule plans an issue only when
// whoever last added planex:auto may; with auto-approve, a bot labeller
// is refused too. A skipped issue gets no comment and keeps its label,
// and its text never reaches the agent; the summary names who labelled
// it. (The rows on issues a reader wrote, a triage label, one added again
// by triage after a write user's was removed and one by a writer since
// demoted, were internal/cli's TestRedTeamActionScheduleLabeller.)
func TestScheduleChecksWhoLabelled(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.agent.setPlan(wTask{ID: "T1", Title: "one", Scope: "a/**"})
	w.fake.SetPermission(wRepo, "helper", "triage")
	w.fake.AddUser("automation[bot]", "Bot")
	w.fake.SetPermission(wRepo, "automation[bot]", "write")
	// Most issues are a maintainer's: one a user without write access
	// wrote waits for an approval whoever labels it
	// (TestRedTeamAutoApproveRunsNonWritersText).
	issueBy := func(author, title, body string, labels ...[2]string) int {
		n := w.fake.AddIssue(wRepo, author, title, body)
		for _, l := range labels {
			if l[1] == "-" {
				w.fake.UnlabelIssue(wRepo, n, l[0], "planex:auto")
			} else {
				w.fake.LabelIssue(wRepo, n, l[0], "planex:auto")
			}
		}
		return n
	}
	issue := func(title string, labels ...[2]string) int { return issueBy("maintainer", title, "", labels...) }
	byTriage := issue("triage", [2]string{"helper"})
	relabelled := issue("relabelled", [2]string{"maintainer"}, [2]string{"maintainer", "-"}, [2]string{"helper"})
	byBot := issue("bot", [2]string{"automation[bot]"})
	readersByTriage := issueBy("reader", "Rewrite everything", "my text", [2]string{"helper"})
	readersRelabelled := issueBy("reader", "Also rewrite", "", [2]string{"maintainer"}, [2]string{"maintainer", "-"}, [2]string{"helper"})
	w.fake.SetPermission(wRepo, "former", "write")
	readersDemoted := issueBy("reader", "Demoted", "", [2]string{"former"})
	w.fake.SetPermission(wRepo, "former", "read")
	byFormer := issue("former writer", [2]string{"former"})
	ok := issue("ok", [2]string{"maintainer"})
	r, out, err := w.handleOut(&event.Event{Name: event.Schedule, Owner: wOwner, Repo: wName}, func(c *Config) { c.AutoApprove = true; c.MaxIssues = 10 })
	if err != nil || r.Outputs.Status != StatusPlanned || r.Outputs.PlannedIssues != "1" || !strings.Contains(out, "schedule: planned 1 issue") {
		t.Fatalf("schedule: %v %+v\n%s", err, r.Outputs, out)
	}
	for _, n := range []int{byTriage, relabelled, byBot, byFormer, readersByTriage, readersRelabelled, readersDemoted} {
		if len(w.fake.Comments(wRepo, n)) != 0 || len(w.labels(n)) != 1 || !strings.Contains(r.Outputs.Summary, "#"+strconv.Itoa(n)+":") {
			t.Errorf("#%d was not skipped with a note: labels %v\n%s", n, w.labels(n), r.Outputs.Summary)
		}
	}
	if !strings.Contains(r.Outputs.Summary, "@helper, who may not have it planned (triage access)") ||
		!strings.Contains(r.Outputs.Summary, "@automation[bot], who may not have it planned") ||
		!strings.Contains(r.Outputs.Summary, "last added by @helper") || !strings.Contains(r.Outputs.Summary, "last added by @former") {
		t.Errorf("summary:\n%s", r.Outputs.Summary)
	}
	if l := w.labels(ok); !strings.Contains(strings.Join(l, ","), LabelDone) {
		t.Errorf("#%d labelled by a write user: labels %v", ok, l)
	}
	if prs := w.fake.PullRequests(wRepo); len(prs) != 1 || !strings.Contains(prs[0].Body, "#"+strconv.Itoa(ok)) {
		t.Errorf("pull requests %+v", prs)
	}
	for _, phase := range []agent.Phase{agent.PhaseAnalyze, agent.PhaseExplore, agent.PhasePlan, agent.PhaseExecute} {
		if strings.Contains(w.agent.prompt(phase), "my text") {
			t.Errorf("a triage-labelled issue's text reached the agent's %s prompt", phase)
		}
	}
	w.noRefusedRequests()
}

// TestMatrixTaskRedelivered: a task job delivered twice runs its agent
// once; the second finds the published result.
func TestMatrixTaskRedelivered(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.agent.setPlan(wTask{ID: "T1", Title: "one", Scope: "a/**"})
	n := w.fake.AddIssue(wRepo, "maintainer", "One file", "")
	if _, err := w.handle(w.comment(n, "maintainer", "/planex one file"), matrixMode("1")); err != nil {
		t.Fatal(err)
	}
	approved, err := w.handle(w.comment(n, "maintainer", "/planex approve "+w.planID(n)), matrixMode("1"))
	if err != nil || approved.Outputs.Status != StatusRunning {
		t.Fatalf("approve: %v %+v", err, approved.Outputs)
	}
	ctx := context.Background()
	ev := &event.Event{Name: event.WorkflowDispatch, Owner: wOwner, Repo: wName, DefaultBranch: "main", Inputs: event.Inputs{Issue: n}}
	prep, _ := w.job(matrixMode("2"))
	if err := prep.Prepare(ctx, ev); err != nil || prep.Outputs.HasTasks != "true" {
		t.Fatalf("prepare: %v %+v", err, prep.Outputs)
	}
	executes := func() int {
		w.agent.mu.Lock()
		defer w.agent.mu.Unlock()
		k := 0
		for _, c := range w.agent.calls {
			if strings.HasPrefix(c, "execute ") {
				k++
			}
		}
		return k
	}
	for i := 0; i < 2; i++ {
		job, out := w.job(matrixMode("2"))
		if err := job.RunTask(ctx, ev, "T1"); err != nil {
			t.Fatalf("task job %d: %v", i+1, err)
		}
		if i == 1 && !strings.Contains(out.String(), "already has a result") {
			t.Errorf("second delivery: %s", out.String())
		}
	}
	if got := executes(); got != 1 {
		t.Errorf("the task's agent ran %d times", got)
	}
	collect, _ := w.job(matrixMode("2"))
	if err := collect.Collect(ctx, ev); err != nil || collect.Outputs.Status != StatusDone {
		t.Fatalf("collect: %v %+v", err, collect.Outputs)
	}
	// One commit for T1 (was internal/cli's TestActionMatrixTaskRedelivered).
	if got := strings.Join(w.branch("planex/"+approved.Outputs.SessionID), " | "); got != "T1:_one" {
		t.Errorf("branch = %s", got)
	}
}
