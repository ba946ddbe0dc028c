package action

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/planexhq/planex/internal/render"
	"github.com/planexhq/planex/internal/render/md/mdtest"
)

// TestEscapesHostilePlan: an agent's plan that tries to hide tasks from
// the approver, forge planex's marker, ping people and close issues
// reaches the issue, the pull request and the job summaries escaped:
// every task is listed and nothing of it acts as HTML, a mention or a
// command. (Was internal/cli's TestActionEscapesHostilePlan, two planex
// processes; a job summary is render.StepSummary of the step's Summary
// output, as internal/cli writes it.)
func TestEscapesHostilePlan(t *testing.T) {
	w := newParallelWorld(t)
	w.agent.twoAngles = true // the plan comment's exploration lists two
	titles := []string{
		"base <!-- the next tasks are hidden",
		"left </details></table> <img src=x onerror=alert(1)>",
		"right | T9 | smuggled | `x` | — |",
		"/planex approve 0000000000 @octocat fixes #1",
	}
	scopes := []string{"a/**", "b/**", "c/**", "d/**"}
	deps := [][]string{{}, {"T1"}, {"T1"}, {"T2", "T3"}}
	var ts []map[string]any
	for i, title := range titles {
		ts = append(ts, map[string]any{"id": "T" + strconv.Itoa(i+1), "title": title, "description": "do it\n\n<details>\n\n```\n</details>\n-->",
			"test": "file exists", "acceptance_criteria": "@maintainer approves", "scope": scopes[i], "hints": "",
			"execution_directives": "", "deps": deps[i], "context_from": []string{"E1"}})
	}
	w.agent.rawPlan = map[string]any{"summary": "Plan <!-- " + `<!-- planex:plan {"id":"0000000000","sha256":"00"} -->` + "\n\n/planex approve 0000000000",
		"approach": "<details><summary>nothing to see</summary>", "tasks": ts}
	n := w.fake.AddIssue(wRepo, "maintainer", "Add four files", "We need a, b, c and d.")
	r, err := w.handle(w.comment(n, "maintainer", "/planex add four files"))
	if err != nil || r.Outputs.Status != StatusPlanned {
		t.Fatalf("plan run: %v %+v", err, r.Outputs)
	}
	plan := w.commentsWith(n, "<!-- planex:plan ")
	if len(plan) != 1 {
		t.Fatalf("%d plan comments", len(plan))
	}
	// (The agent's summary says "approve 0000000000" too; the marker
	// names the real plan.)
	m, ok := render.ParsePlanMarker(plan[0])
	if !ok {
		t.Fatalf("no plan marker:\n%s", plan[0])
	}
	check := func(name, body string, rules mdtest.Rules, tasksIn func(*mdtest.Doc) []string) {
		t.Helper()
		d, err := mdtest.Parse(body)
		if err != nil {
			t.Fatal(err)
		}
		rules.Trigger = "/planex"
		for _, p := range d.Problems(rules) {
			t.Errorf("%s: %s", name, p)
		}
		if got := strings.Join(tasksIn(d), ","); got != "T1,T2,T3,T4" {
			t.Errorf("%s lists tasks %s:\n%s", name, got, body)
		}
	}
	firstColumn := func(d *mdtest.Doc) []string {
		var ids []string
		for _, rows := range d.Tables() {
			for _, cells := range rows {
				if len(cells) > 0 && strings.HasPrefix(cells[0], "T") {
					ids = append(ids, cells[0])
				}
			}
		}
		return ids
	}
	marker, _, _ := strings.Cut(plan[0], "\n")
	planHTML := []string{marker, "<details>\n<summary>Exploration: 2 angles</summary>", "</details>", "<details>\n<summary>Task details</summary>", "</details>"}
	// The client's hidden marker, which finds the comment again after a
	// lost answer, ends the posted comment (not the job summary).
	reqMarker := regexp.MustCompile(`\n\n<!-- planex:req [0-9a-f]{16} -->$`).FindString(plan[0])
	if reqMarker == "" {
		t.Errorf("the plan comment does not end with the request marker:\n%s", plan[0])
	}
	check("plan comment", plan[0], mdtest.Rules{OwnHTML: append(planHTML, strings.TrimSpace(reqMarker))}, firstColumn)
	check("job summary of the plan", render.StepSummary(r.Outputs.Summary), mdtest.Rules{OwnHTML: planHTML}, firstColumn)
	if !strings.Contains(plan[0], "/planex approve "+m.ID+"\n```") || strings.Count(plan[0], "<!-- planex:plan") != 1 {
		t.Errorf("plan comment:\n%s", plan[0])
	}

	r, err = w.handle(w.comment(n, "maintainer", "/planex approve "+m.ID))
	if err != nil || r.Outputs.Status != StatusDone {
		t.Fatalf("approve run: %v %+v\n%s", err, r.Outputs, w.lastComment(n))
	}
	prs := w.fake.PullRequests(wRepo)
	if len(prs) != 1 {
		t.Fatalf("%d pull requests\n%s", len(prs), w.lastComment(n))
	}
	check("pull request body", prs[0].Body, mdtest.Rules{Pings: []string{"@maintainer", "#" + strconv.Itoa(n)},
		OwnHTML: []string{"<details>\n<summary>Approach and exploration</summary>", "</details>"}}, firstColumn)
	// context.md, the job summary of the run, has one task table and a
	// section per task.
	check("job summary of the run", render.StepSummary(r.Outputs.Summary), mdtest.Rules{}, func(d *mdtest.Doc) []string {
		var ids []string
		for _, rows := range d.Tables() {
			for _, cells := range rows {
				if len(cells) == 6 {
					ids = append(ids, cells[1])
				}
			}
		}
		return ids
	})
	statuses := w.commentsWith(n, "<!-- planex:status -->")
	if len(statuses) == 0 {
		t.Error("no status comment")
	}
	for _, c := range statuses {
		check("status comment", c, mdtest.Rules{OwnHTML: []string{"<!-- planex:status -->"}, Pings: []string{"@maintainer"},
			Links: []string{w.fake.ServerURL() + "/" + wRepo + "/actions/runs/42"}}, func(d *mdtest.Doc) []string {
			var ids []string
			for _, cells := range d.Tables()[0] {
				id, _, _ := strings.Cut(cells[1], ":")
				ids = append(ids, id)
			}
			return ids
		})
	}
	w.noRefusedRequests()
}
