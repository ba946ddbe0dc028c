package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// eventFrom writes an event file from one of GitHub's example payloads in
// testdata, pointed at the fake repository.
func (g *ghEnv) eventFrom(fixture string, mutate func(p map[string]any)) string {
	g.t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", fixture))
	if err != nil {
		g.t.Fatal(err)
	}
	var p map[string]any
	if err := json.Unmarshal(b, &p); err != nil {
		g.t.Fatal(err)
	}
	repo := p["repository"].(map[string]any)
	repo["full_name"], repo["name"], repo["default_branch"] = ghRepo, "demo", "main"
	repo["owner"].(map[string]any)["login"] = "octo"
	mutate(p)
	path := filepath.Join(g.t.TempDir(), "event.json")
	out, _ := json.Marshal(p)
	if err := os.WriteFile(path, out, 0o644); err != nil {
		g.t.Fatal(err)
	}
	return path
}

// TestActionEditedAndBotCommentsAreIgnored: read from event files, an
// edited comment and a bot's comment never act, and get no answer. (The
// replies to commands on a thread without a plan are checked in
// internal/action, TestCommandsWithoutAPlan.)
func TestActionEditedAndBotCommentsAreIgnored(t *testing.T) {
	t.Parallel()
	g := newGHEnv(t)
	n := g.fake.AddIssue(ghRepo, "maintainer", "Idea", "")
	before := len(g.fake.Comments(ghRepo, n))
	ev := g.comment(n, false, "maintainer", "/planex help")
	b, _ := os.ReadFile(ev)
	edited := strings.Replace(string(b), `"action":"created"`, `"action":"edited"`, 1)
	os.WriteFile(ev, []byte(edited), 0o644)
	if r := g.run("issue_comment", ev); r.code != 0 || r.outputs["status"] != "ignored" {
		t.Errorf("edited comment: %v", r.outputs)
	}
	id := g.fake.AddComment(ghRepo, n, "helper[bot]", "/planex help")
	botEv := g.payload("bot", func(p map[string]any) {
		c := p["comment"].(map[string]any)
		c["id"], c["body"] = id, "/planex help"
		c["user"].(map[string]any)["login"], c["user"].(map[string]any)["type"] = "helper[bot]", "Bot"
		p["issue"].(map[string]any)["number"] = n
	})
	if r := g.run("issue_comment", botEv); r.code != 0 || r.outputs["status"] != "ignored" {
		t.Errorf("bot comment: %v", r.outputs)
	}
	if got := len(g.fake.Comments(ghRepo, n)); got != before+2 {
		t.Errorf("planex answered an edit or a bot: %d new comments", got-before)
	}
}

// TestActionFailureExitsOneSayingWhy: a run that fails before it can do
// anything (a dispatch without its inputs, a settings file with an
// unknown field) exits 1 and says why on stderr, the status output
// failed. (The flows are checked in internal/action:
// TestDispatchAndLabelEvents, TestSettingsTriggerAndCancel.)
func TestActionFailureExitsOneSayingWhy(t *testing.T) {
	t.Parallel()
	g := newGHEnv(t)
	dispatch := g.eventFrom("event.workflow_dispatch.json", func(p map[string]any) {
		p["inputs"] = map[string]any{}
		p["sender"].(map[string]any)["login"] = "maintainer"
	})
	if r := g.run("workflow_dispatch", dispatch); r.code != 1 || r.outputs["status"] != "failed" || !strings.Contains(r.err, "needs the input `issue` or `requirement`") {
		t.Errorf("dispatch without inputs: %d %v %s", r.code, r.outputs, r.err)
	}
	g.fake.SetFile(ghRepo, "main", ".github/planex.yml", []byte("colour: blue\n"))
	n := g.fake.AddIssue(ghRepo, "maintainer", "Idea", "")
	if r := g.run("issue_comment", g.comment(n, false, "maintainer", "/planex status")); r.code != 1 || !strings.Contains(r.err, ".github/planex.yml line 1: field colour not found") {
		t.Errorf("bad settings: %d %s", r.code, r.err)
	}
}

// TestActionFinalizeAfterKilledJob kills the job mid-run, as a timeout
// would, then runs the final-status step and /planex retry.
func TestActionFinalizeAfterKilledJob(t *testing.T) {
	t.Parallel()
	g := newGHEnv(t)
	g.skipReview()
	g.setPlan(diamond()...)
	g.write(g.fake_dir(), "T3.block", "")
	n := g.fake.AddIssue(ghRepo, "maintainer", "Add four files", "")
	g.run("issue_comment", g.comment(n, false, "maintainer", "/planex add four files"))
	id := g.lastPlanID(n)

	ev := g.comment(n, false, "maintainer", "/planex approve "+id)
	ws := filepath.Join(t.TempDir(), "ws")
	g.git("clone", "-q", g.origin, ws)
	cmd := g.actionCmd(ws, "issue_comment", ev)
	ownTemp(t, cmd)
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(g.fake_dir(), "T3.pid")
	waitForFile(t, pidFile, cmd, out)
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	agentsGone(t, g.fake_dir())
	os.Remove(filepath.Join(g.fake_dir(), "T3.block"))

	r := g.runArgs([]string{"action", "--finalize"}, "issue_comment", ev)
	if r.code != 0 || r.outputs["status"] != "failed" {
		t.Fatalf("finalize: %d %v\n%s", r.code, r.outputs, r.err)
	}
	if !hasLabel(g.issueLabels(n), "planex:failed") {
		t.Errorf("labels after finalize = %v", g.issueLabels(n))
	}
	status := ""
	for _, c := range g.fake.Comments(ghRepo, n) {
		if strings.HasPrefix(c.Body, "<!-- planex:status -->") {
			status = c.Body
		}
	}
	if !strings.Contains(status, "ended before the plan finished") || !strings.Contains(status, "/planex retry") {
		t.Errorf("status comment:\n%s", status)
	}
	// A fresh runner picks up from the first unfinished task.
	r = g.run("issue_comment", g.comment(n, false, "maintainer", "/planex retry"))
	if r.code != 0 || r.outputs["status"] != "done" {
		t.Fatalf("retry: %d %v\n%s", r.code, r.outputs, r.err)
	}
	branch := "planex/" + r.outputs["session-id"]
	if got := strings.Join(g.branchCommits(branch), " | "); got != "T1: base | T2: left | T3: right | T4: join" {
		t.Errorf("branch after retry = %s", got)
	}
}

// pushToMain commits a file to origin's main, as another contributor would.
func (g *ghEnv) pushToMain(path, content string) {
	g.t.Helper()
	dir := filepath.Join(g.t.TempDir(), "contrib")
	g.git("clone", "-q", g.origin, dir)
	g.write(dir, path, content)
	for _, args := range [][]string{{"add", "."}, {"commit", "-qm", "change " + path}, {"push", "-q", "origin", "main"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			g.t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}
