package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/planexhq/planex/internal/ghfake"
	"github.com/planexhq/planex/internal/gitrepo/gittest"
)

const ghRepo = "octo/demo"

// ghEnv is a fake GitHub, a bare origin and a scripted agent: enough to
// run `planex action` as GitHub would, one fresh runner per event.
type ghEnv struct {
	*fixture
	fake   *ghfake.Fake
	origin string
}

func newGHEnv(t *testing.T) *ghEnv {
	t.Helper()
	f := newFixture(t)
	g := &ghEnv{fixture: f, fake: ghfake.New(t)}
	// The origin is templateOrigin's copy: the fixture's repository as
	// GitHub holds it, with no gc after a push.
	g.origin = filepath.Join(t.TempDir(), "origin.git")
	if err := gittest.CopyTree(templateOrigin, g.origin); err != nil {
		t.Fatal(err)
	}
	g.fake.AddRepo(ghRepo, ghfake.Repo{DefaultBranch: "main"})
	for login, role := range map[string]string{"maintainer": "write", "owner": "admin", "reader": "read"} {
		g.fake.AddUser(login, "User")
		g.fake.SetPermission(ghRepo, login, role)
	}
	g.fake.SetBranchCheck(func(repo, branch string) bool {
		return strings.TrimSpace(g.originGit("ls-remote", g.origin, "refs/heads/"+branch)) != ""
	})
	return g
}

// skipReview runs every `planex action` of g with the input review:
// skip, for the tests of what a run does around its tasks: each review is
// one more agent step per task (a third of a small run's CPU), and the
// reviews are review_e2e_test.go's and internal/action's tests.
func (g *ghEnv) skipReview() { g.env = append(g.env, "INPUT_REVIEW=skip") }

func (g *ghEnv) originGit(args ...string) string {
	g.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = g.origin
	out, err := cmd.CombinedOutput()
	if err != nil {
		g.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// payload writes an issue_comment event file shaped like GitHub's example.
func (g *ghEnv) payload(name string, mutate func(p map[string]any)) string {
	return g.eventFrom("event.issue_comment.json", mutate)
}

// comment posts a comment on the fake and returns its issue_comment event.
func (g *ghEnv) comment(number int, isPR bool, login, body string) string {
	id := g.fake.AddComment(ghRepo, number, login, body)
	is, _ := g.fake.Issue(ghRepo, number)
	return g.payload("comment", func(p map[string]any) {
		c := p["comment"].(map[string]any)
		c["id"], c["body"] = id, body
		c["user"].(map[string]any)["login"], c["user"].(map[string]any)["type"] = login, "User"
		i := p["issue"].(map[string]any)
		i["number"], i["title"], i["body"], i["labels"] = number, is.Title, is.Body, []any{}
		if isPR {
			i["pull_request"] = map[string]any{"url": "https://api.github.com/repos/octo/demo/pulls/" + itoa(number)}
		}
		p["sender"].(map[string]any)["login"] = login
	})
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

type actionRun struct {
	out, err string
	code     int
	outputs  map[string]string
	summary  string
}

// run executes `planex action` for an event in a fresh clone of origin.
func (g *ghEnv) run(eventName, eventPath string, extraEnv ...string) actionRun {
	return g.runArgs([]string{"action"}, eventName, eventPath, extraEnv...)
}

// actionCmd prepares a planex process as GitHub would start it.
func (g *ghEnv) actionCmd(ws, eventName, eventPath string, args ...string) *exec.Cmd {
	if len(args) == 0 {
		args = []string{"action"}
	}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Dir = ws
	cmd.Env = append(os.Environ(), "PLANEX_TEST_AS_MAIN=1", "FAKE_DIR="+g.fake_dir(), testAllowEnv, "PLANEX_SANDBOX_WRITE="+g.fake_dir(), "PLANEX_SANDBOX_READ="+testdataDir(g.t),
		"GITHUB_EVENT_NAME="+eventName, "GITHUB_EVENT_PATH="+eventPath, "GITHUB_REPOSITORY="+ghRepo,
		"GITHUB_WORKSPACE="+ws, "GITHUB_API_URL="+g.fake.URL(), "GITHUB_SERVER_URL="+g.fake.ServerURL(),
		"GITHUB_RUN_ID=42", "INPUT_GITHUB_TOKEN=ghs_test", "INPUT_AGENT=command", "INPUT_AGENT_COMMAND="+g.agent, "GITHUB_TOKEN=ghs_test",
		// The fake's token acts as the Actions bot; action.yml pins
		// planex's account for the job token (PLANEX_DEFAULT_TOKEN).
		"INPUT_BOT_LOGIN=github-actions[bot]")
	cmd.Env = append(cmd.Env, g.env...)
	return cmd
}

// runArgs runs planex with args for an event in a fresh clone of origin.
func (g *ghEnv) runArgs(args []string, eventName, eventPath string, extraEnv ...string) actionRun {
	g.t.Helper()
	ws := filepath.Join(g.t.TempDir(), "ws")
	g.git("clone", "-q", g.origin, ws)
	outFile := filepath.Join(g.t.TempDir(), "output")
	sumFile := filepath.Join(g.t.TempDir(), "summary")
	cmd := g.actionCmd(ws, eventName, eventPath, args...)
	cmd.Env = append(cmd.Env, "GITHUB_OUTPUT="+outFile, "GITHUB_STEP_SUMMARY="+sumFile)
	cmd.Env = append(cmd.Env, extraEnv...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	r := actionRun{out: o.String(), err: e.String(), outputs: map[string]string{}}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		g.t.Fatal(err)
	}
	r.outputs = readOutputs(outFile)
	b, _ := os.ReadFile(sumFile)
	r.summary = string(b)
	return r
}

func (g *ghEnv) fake_dir() string { return g.fixture.fake }

// readOutputs parses GITHUB_OUTPUT's name<<delimiter blocks.
func readOutputs(path string) map[string]string {
	out := map[string]string{}
	b, err := os.ReadFile(path)
	if err != nil {
		return out
	}
	lines := strings.Split(string(b), "\n")
	for i := 0; i < len(lines); i++ {
		name, delim, ok := strings.Cut(lines[i], "<<")
		if !ok {
			if k, v, ok := strings.Cut(lines[i], "="); ok {
				out[k] = v
			}
			continue
		}
		var val []string
		for i++; i < len(lines) && lines[i] != delim; i++ {
			val = append(val, lines[i])
		}
		out[name] = strings.Join(val, "\n")
	}
	return out
}

var planIDRe = regexp.MustCompile("approve ([0-9a-f]{10})")

// lastPlanID reads the plan id from the newest plan comment on a thread.
func (g *ghEnv) lastPlanID(number int) string {
	g.t.Helper()
	cs := g.fake.Comments(ghRepo, number)
	for i := len(cs) - 1; i >= 0; i-- {
		if strings.HasPrefix(cs[i].Body, "<!-- planex:plan ") {
			return planIDRe.FindStringSubmatch(cs[i].Body)[1]
		}
	}
	g.t.Fatalf("no plan comment on #%d", number)
	return ""
}

func (g *ghEnv) lastComment(number int) string {
	cs := g.fake.Comments(ghRepo, number)
	if len(cs) == 0 {
		return ""
	}
	return cs[len(cs)-1].Body
}

// branchCommits lists the subjects on an origin branch since main.
func (g *ghEnv) branchCommits(branch string) []string {
	if strings.TrimSpace(g.originGit("ls-remote", g.origin, "refs/heads/"+branch)) == "" {
		return nil
	}
	out := g.originGit("log", "--reverse", "--format=%s", "main.."+branch)
	return strings.Split(strings.TrimSpace(out), "\n")
}

func hasLabel(labels []string, l string) bool {
	for _, x := range labels {
		if x == l {
			return true
		}
	}
	return false
}

func (g *ghEnv) issueLabels(n int) []string {
	is, _ := g.fake.Issue(ghRepo, n)
	return is.Labels
}

func TestActionPlanApprovePullRequest(t *testing.T) {
	t.Parallel()
	g := newGHEnv(t)
	g.setPlan(diamond()...)
	n := g.fake.AddIssue(ghRepo, "maintainer", "Add four files", "We need a, b, c and d.")
	start := len(g.fake.Requests())
	r := g.run("issue_comment", g.comment(n, false, "maintainer", "/planex add four files"))
	if r.code != 0 {
		t.Fatalf("plan run: %d\n%s\n%s", r.code, r.out, r.err)
	}
	planned := len(g.fake.Requests())
	plan := ""
	for _, c := range g.fake.Comments(ghRepo, n) {
		if strings.HasPrefix(c.Body, "<!-- planex:plan ") {
			plan = c.Body
		}
	}
	for _, want := range []string{"## planex plan", "**Wave 2**", "```mermaid", "T1 --> T2", "/planex approve "} {
		if !strings.Contains(plan, want) {
			t.Errorf("plan comment lacks %q:\n%s", want, plan)
		}
	}
	id := g.lastPlanID(n)
	if r.outputs["plan-id"] != id || r.outputs["status"] != "planned" || !strings.HasPrefix(r.outputs["session-id"], itoa(n)+"-add-four-files") {
		t.Errorf("outputs = %v", r.outputs)
	}
	if !hasLabel(g.issueLabels(n), "planex:planned") {
		t.Errorf("labels = %v", g.issueLabels(n))
	}
	if g.branchCommits("planex/"+r.outputs["session-id"]) != nil {
		t.Fatal("tasks ran before approval")
	}
	if !strings.Contains(g.originGit("for-each-ref", "refs/planex/"), "refs/planex/state/"+itoa(n)) {
		t.Error("no state ref on origin")
	}

	approving := len(g.fake.Requests())
	r2 := g.run("issue_comment", g.comment(n, false, "maintainer", "/planex approve "+id))
	if r2.code != 0 {
		t.Fatalf("approve run: %d\n%s\n%s", r2.code, r2.out, r2.err)
	}
	g.checkRequestBudget(g.fake.Requests()[start:planned], g.fake.Requests()[approving:], 4)
	branch := "planex/" + r.outputs["session-id"]
	if got := strings.Join(g.branchCommits(branch), " | "); got != "T1: base | T2: left | T3: right | T4: join" {
		t.Errorf("origin %s = %s", branch, got)
	}
	prs := g.fake.PullRequests(ghRepo)
	if len(prs) != 1 {
		t.Fatalf("%d pull requests", len(prs))
	}
	pr := prs[0]
	// What matrix mode must reproduce (the redelivery below changes neither).
	shape := g.branchShape(branch)
	if pr.Head != branch || pr.Base != "main" || !pr.Draft || !strings.Contains(pr.Body, "Closes #"+itoa(n)) ||
		!strings.Contains(pr.Body, "| T4 | join | ✅ completed | ❔ agent says passed (not run by planex) |") || !hasLabel(pr.RequestedReviewers, "maintainer") {
		t.Errorf("pull request = %+v", pr)
	}
	if r2.outputs["status"] != "done" || !strings.Contains(r2.outputs["pull-request-url"], "/pull/") {
		t.Errorf("outputs = %v", r2.outputs)
	}
	if !strings.Contains(r2.summary, "4 completed, 0 failed") {
		t.Errorf("job summary:\n%s", r2.summary)
	}
	if l := g.issueLabels(n); !hasLabel(l, "planex:done") || hasLabel(l, "planex:planned") || hasLabel(l, "planex:running") {
		t.Errorf("labels = %v", l)
	}
	// The status comment was edited in place, not posted again.
	statuses := 0
	for _, c := range g.fake.Comments(ghRepo, n) {
		if strings.HasPrefix(c.Body, "<!-- planex:status -->") {
			statuses++
			if !strings.Contains(c.Body, "**done**") || !strings.Contains(c.Body, "Pull request:") {
				t.Errorf("status comment:\n%s", c.Body)
			}
		}
	}
	if statuses != 1 {
		t.Errorf("%d status comments", statuses)
	}

	// A redelivered approval does not run the plan again.
	r3 := g.run("issue_comment", g.comment(n, false, "maintainer", "/planex approve "+id))
	if r3.code != 0 || !strings.Contains(g.lastComment(n), "already approved by @maintainer") {
		t.Errorf("redelivered approve: %d %s\n%s", r3.code, g.lastComment(n), r3.err)
	}
	if got := len(g.branchCommits(branch)); got != 4 {
		t.Errorf("%d commits after a repeated approve", got)
	}
	if len(g.fake.PullRequests(ghRepo)) != 1 {
		t.Error("a second pull request was opened")
	}
	if errs := g.fake.Errors(); len(errs) > 0 {
		t.Errorf("requests GitHub would refuse: %v", errs)
	}
	// The same plan in matrix mode is checked against this run.
	t.Run("matrix mode matches", func(t *testing.T) { matrixMatchesSingleJob(t, shape, pr.Body) })
}

func (g *ghEnv) lastPlanCommentOrEmpty(n int) string {
	for _, c := range g.fake.Comments(ghRepo, n) {
		if strings.HasPrefix(c.Body, "<!-- planex:plan ") {
			return c.Body
		}
	}
	return ""
}

// checkRequestBudget holds plan → approve → pull request to its REST
// budget (issue #15): at most 25 calls in all, no read repeated within a
// run, and status comment edits at most one per task plus start and end.
func (g *ghEnv) checkRequestBudget(planRun, approveRun []ghfake.Request, tasks int) {
	g.t.Helper()
	for name, run := range map[string][]ghfake.Request{"plan": planRun, "approve": approveRun} {
		seen := map[string]bool{}
		for _, q := range run {
			key := q.Method + " " + q.Path + "?" + q.Query
			if q.Method == "GET" && seen[key] {
				g.t.Errorf("%s run: %s read twice", name, key)
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
	g.t.Logf("REST calls: plan %d + approve %d = %d (status edits while running: %d)", len(planRun), len(approveRun), total, edits)
	// 26: the approve run reads the status comment on record once before
	// editing it (the state ref's id could name anyone's comment).
	if total > 26 || edits > tasks+2 {
		var all []string
		for _, q := range append(append([]ghfake.Request(nil), planRun...), approveRun...) {
			all = append(all, q.Method+" "+q.Path)
		}
		g.t.Errorf("%d REST calls (want at most 26), %d status edits (want at most %d):\n%s", total, edits, tasks+2, strings.Join(all, "\n"))
	}
}
