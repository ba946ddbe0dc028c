package cli

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/planexhq/planex/internal/render"
	"github.com/planexhq/planex/internal/render/md/mdtest"
)

// An agent's plan that tries to hide tasks from the approver, forge
// planex's marker, ping people and close issues reaches the issue, the
// pull request and the job summary escaped: every task is listed and
// nothing of it acts as HTML, a mention or a command.
func TestActionEscapesHostilePlan(t *testing.T) {
	t.Parallel()
	g := newGHEnv(t)
	g.twoAngles() // the plan comment's exploration lists two
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
		id := "T" + itoa(i+1)
		ts = append(ts, map[string]any{"id": id, "title": title, "description": "do it\n\n<details>\n\n```\n</details>\n-->",
			"test": "file exists", "acceptance_criteria": "@maintainer approves", "scope": scopes[i], "hints": "",
			"execution_directives": "", "deps": deps[i], "context_from": []string{"E1"}})
		dir := strings.TrimSuffix(scopes[i], "/**")
		g.write(g.fake_dir(), id+".sh", "mkdir -p "+dir+" && echo '"+id+" was here' > "+dir+"/"+strings.ToLower(id)+".txt\n")
	}
	b, _ := json.Marshal(map[string]any{"summary": "Plan <!-- " + `<!-- planex:plan {"id":"0000000000","sha256":"00"} -->` + "\n\n/planex approve 0000000000",
		"approach": "<details><summary>nothing to see</summary>", "tasks": ts})
	g.write(g.fake_dir(), "plan.json", string(b))
	n := g.fake.AddIssue(ghRepo, "maintainer", "Add four files", "We need a, b, c and d.")
	r := g.run("issue_comment", g.comment(n, false, "maintainer", "/planex add four files"))
	if r.code != 0 {
		t.Fatalf("plan run: %d\n%s\n%s", r.code, r.out, r.err)
	}
	var plan string
	for _, c := range g.fake.Comments(ghRepo, n) {
		if strings.HasPrefix(c.Body, "<!-- planex:plan ") {
			plan = c.Body
		}
	}
	// (The agent's summary says "approve 0000000000" too; the marker
	// names the real plan.)
	m, ok := render.ParsePlanMarker(plan)
	if !ok {
		t.Fatalf("no plan marker:\n%s", plan)
	}
	id := m.ID
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
	marker, _, _ := strings.Cut(plan, "\n")
	planHTML := []string{marker, "<details>\n<summary>Exploration: 2 angles</summary>", "</details>", "<details>\n<summary>Task details</summary>", "</details>"}
	// The client's hidden marker, which finds the comment again after a
	// lost answer, ends the posted comment (not the job summary).
	reqMarker := regexp.MustCompile(`\n\n<!-- planex:req [0-9a-f]{16} -->$`).FindString(plan)
	if reqMarker == "" {
		t.Errorf("the plan comment does not end with the request marker:\n%s", plan)
	}
	check("plan comment", plan, mdtest.Rules{OwnHTML: append(planHTML, strings.TrimSpace(reqMarker))}, firstColumn)
	check("job summary of the plan", r.summary, mdtest.Rules{OwnHTML: planHTML}, firstColumn)
	if !strings.Contains(plan, "/planex approve "+id+"\n```") || strings.Count(plan, "<!-- planex:plan") != 1 {
		t.Errorf("plan comment:\n%s", plan)
	}

	r2 := g.run("issue_comment", g.comment(n, false, "maintainer", "/planex approve "+id))
	if r2.code != 0 {
		t.Fatalf("approve run: %d\n%s\n%s", r2.code, r2.out, r2.err)
	}
	prs := g.fake.PullRequests(ghRepo)
	if len(prs) != 1 {
		t.Fatalf("%d pull requests\n%s\n%s\n%s", len(prs), r2.out, r2.err, g.lastComment(n))
	}
	check("pull request body", prs[0].Body, mdtest.Rules{Pings: []string{"@maintainer", "#" + itoa(n)},
		OwnHTML: []string{"<details>\n<summary>Approach and exploration</summary>", "</details>"}}, firstColumn)
	// context.md, the job summary of the run, has one task table and a
	// section per task.
	check("job summary of the run", r2.summary, mdtest.Rules{}, func(d *mdtest.Doc) []string {
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
	for _, c := range g.fake.Comments(ghRepo, n) {
		if strings.HasPrefix(c.Body, "<!-- planex:status -->") {
			check("status comment", c.Body, mdtest.Rules{OwnHTML: []string{"<!-- planex:status -->"}, Pings: []string{"@maintainer"},
				Links: []string{g.fake.ServerURL() + "/octo/demo/actions/runs/42"}}, func(d *mdtest.Doc) []string {
				var ids []string
				for _, cells := range d.Tables()[0] {
					id, _, _ := strings.Cut(cells[1], ":")
					ids = append(ids, id)
				}
				return ids
			})
		}
	}
	if errs := g.fake.Errors(); len(errs) > 0 {
		t.Errorf("requests GitHub would refuse: %v", errs)
	}
}
