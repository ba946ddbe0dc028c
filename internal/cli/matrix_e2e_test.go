package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Matrix mode, end to end and without GitHub: the approve run dispatches
// the matrix workflow; each "workflow run" is a prepare process, one
// process per task (truly concurrent, each in its own clone of the bare
// origin) and a collect process.

var matrixSHARe = regexp.MustCompile(`\b[0-9a-f]{7,40}\b`)

const dispatchRoute = "POST /repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches"

// dispatches counts the workflow_dispatch requests GitHub accepted.
func (g *ghEnv) dispatches() int {
	n := 0
	for _, r := range g.fake.Requests() {
		if r.Route == dispatchRoute && r.Status == 204 {
			n++
		}
	}
	return n
}

// dispatchEvent is the workflow_dispatch event of the matrix workflow.
func (g *ghEnv) dispatchEvent(issue int) string {
	return g.eventFrom("event.workflow_dispatch.json", func(p map[string]any) {
		p["inputs"] = map[string]any{"issue": strconv.Itoa(issue)}
		p["workflow"] = ".github/workflows/planex-matrix.yml"
	})
}

// matrixProc is a `planex action` process started in its own clone.
type matrixProc struct {
	cmd      *exec.Cmd
	out, err bytes.Buffer
	outFile  string
}

func (g *ghEnv) startAction(eventName, eventPath string, env ...string) *matrixProc {
	g.t.Helper()
	ws := filepath.Join(g.t.TempDir(), "ws")
	g.git("clone", "-q", g.origin, ws)
	p := &matrixProc{outFile: filepath.Join(g.t.TempDir(), "output")}
	p.cmd = exec.Command(os.Args[0], "action")
	p.cmd.Dir = ws
	p.cmd.Env = append(os.Environ(), "PLANEX_TEST_AS_MAIN=1", "FAKE_DIR="+g.fixture.fake, testAllowEnv, "PLANEX_SANDBOX_WRITE="+g.fixture.fake, "PLANEX_SANDBOX_READ="+testdataDir(g.fixture.t),
		"GITHUB_EVENT_NAME="+eventName, "GITHUB_EVENT_PATH="+eventPath, "GITHUB_REPOSITORY="+ghRepo,
		"GITHUB_WORKSPACE="+ws, "GITHUB_API_URL="+g.fake.URL(), "GITHUB_SERVER_URL="+g.fake.ServerURL(),
		"GITHUB_RUN_ID=42", "GITHUB_OUTPUT="+p.outFile, "INPUT_GITHUB_TOKEN=ghs_test", "INPUT_AGENT=command",
		"INPUT_AGENT_COMMAND="+g.agent, "GITHUB_TOKEN=ghs_test", "INPUT_MODE=matrix", "INPUT_BOT_LOGIN=github-actions[bot]")
	p.cmd.Env = append(p.cmd.Env, g.env...)
	p.cmd.Env = append(p.cmd.Env, env...)
	ownTemp(g.t, p.cmd) // each job on a runner of its own; a test kills one
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.err
	if err := p.cmd.Start(); err != nil {
		g.t.Fatal(err)
	}
	return p
}

func (p *matrixProc) wait() (map[string]string, int) {
	err := p.cmd.Wait()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	return readOutputs(p.outFile), code
}

// step runs one matrix step to its end and fails the test if it fails.
func (g *ghEnv) step(issue int, runID string, env ...string) map[string]string {
	g.t.Helper()
	p := g.startAction("workflow_dispatch", g.dispatchEvent(issue), append([]string{"GITHUB_RUN_ID=" + runID}, env...)...)
	out, code := p.wait()
	if code != 0 {
		g.t.Fatalf("%v: exit %d\n%s\n%s", env, code, p.out.String(), p.err.String())
	}
	return out
}

// wave runs one matrix workflow run: prepare, the task jobs side by side,
// collect. It returns the tasks of the wave (none when prepare had none).
func (g *ghEnv) wave(issue int, runID string) []string {
	g.t.Helper()
	prep := g.step(issue, runID, "INPUT_MATRIX_STEP=prepare")
	if prep["has-tasks"] != "true" {
		return nil
	}
	var m struct {
		Include []struct {
			Task string `json:"task"`
		} `json:"include"`
	}
	if err := json.Unmarshal([]byte(prep["matrix"]), &m); err != nil {
		g.t.Fatalf("matrix output %q: %v", prep["matrix"], err)
	}
	if mp, _ := strconv.Atoi(prep["max-parallel"]); mp < 1 || mp > len(m.Include) {
		g.t.Errorf("max-parallel = %q for %d task(s)", prep["max-parallel"], len(m.Include))
	}
	var ids []string
	procs := map[string]*matrixProc{}
	for _, inc := range m.Include {
		ids = append(ids, inc.Task)
		procs[inc.Task] = g.startAction("workflow_dispatch", g.dispatchEvent(issue), "GITHUB_RUN_ID="+runID,
			"INPUT_MATRIX_STEP=task", "INPUT_TASK="+inc.Task)
	}
	for id, p := range procs {
		if _, code := p.wait(); code > 0 {
			g.t.Errorf("task %s: exit %d\n%s", id, code, p.err.String())
		}
	}
	// A collect that ends the plan failed exits 1 (the job shows red).
	p := g.startAction("workflow_dispatch", g.dispatchEvent(issue), "GITHUB_RUN_ID="+runID, "INPUT_MATRIX_STEP=collect")
	if out, code := p.wait(); code != 0 && (code != 1 || out["status"] != "failed") {
		g.t.Fatalf("collect: exit %d, outputs %v\n%s\n%s", code, out, p.out.String(), p.err.String())
	}
	return ids
}

// branchShape lists a run branch's commits on origin, oldest first, as
// "subject|session|task|tree".
func (g *ghEnv) branchShape(branch string) []string {
	out := g.originGit("log", "--reverse", "--format=%s|%(trailers:key=Planex-Session,valueonly,separator=)|%(trailers:key=Planex-Task,valueonly,separator=)|%T", "main.."+branch)
	return strings.Split(strings.TrimSpace(out), "\n")
}

// overlapping makes T2 and T3 wait for each other: each finishes only once
// the other has started, which proves they run at the same time.
func overlapping(g *ghEnv) {
	for _, pair := range [][2]string{{"T2", "T3"}, {"T3", "T2"}} {
		me, other := pair[0], pair[1]
		script := fmt.Sprintf(`touch "$FAKE_DIR/started.%[1]s"
i=0; while [ ! -f "$FAKE_DIR/started.%[2]s" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done
[ -f "$FAKE_DIR/started.%[2]s" ] && touch "$FAKE_DIR/overlap.%[1]s"
`, me, other)
		old, _ := os.ReadFile(filepath.Join(g.fixture.fake, me+".sh"))
		g.write(g.fixture.fake, me+".sh", script+string(old))
	}
}

// approveMatrix plans the diamond on a new issue and approves it in
// matrix mode; it returns the issue and the run branch.
func approveMatrix(t *testing.T, g *ghEnv) (int, string) {
	t.Helper()
	n := g.fake.AddIssue(ghRepo, "maintainer", "Add four files", "We need a, b, c and d.")
	r := g.run("issue_comment", g.comment(n, false, "maintainer", "/planex add four files"))
	if r.code != 0 {
		t.Fatalf("plan: %d\n%s", r.code, r.err)
	}
	r = g.run("issue_comment", g.comment(n, false, "maintainer", "/planex approve "+g.lastPlanID(n)), "INPUT_MODE=matrix")
	if r.code != 0 || r.outputs["status"] != "running" {
		t.Fatalf("approve: %d %v\n%s\n%s", r.code, r.outputs, r.out, r.err)
	}
	if g.dispatches() != 1 {
		t.Fatalf("approve made %d dispatches, want 1", g.dispatches())
	}
	branch := "planex/" + r.outputs["session-id"]
	if g.branchCommits(branch) != nil {
		t.Fatal("the approve run executed tasks itself")
	}
	return n, branch
}

// matrixMatchesSingleJob runs the diamond in matrix mode, its tasks in
// jobs of their own (T2's and T3's at the same time), and checks the
// waves, one dispatch per collect, and that the
// branch and the pull request's report are those of single-job mode on
// the same plan and agent results (want and singleBody, from
// TestActionPlanApprovePullRequest's run).
func matrixMatchesSingleJob(t *testing.T, want []string, singleBody string) {
	g := newGHEnv(t)
	g.setPlan(diamond()...)
	overlapping(g)
	n, branch := approveMatrix(t, g)
	var waves [][]string
	for w := 1; w <= 5; w++ {
		runID := strconv.Itoa(100 + w)
		before := g.dispatches()
		ids := g.wave(n, runID)
		if ids == nil {
			break
		}
		waves = append(waves, ids)
		// That a repeated collect and a re-run task job add nothing is
		// checked in internal/action (TestMatrixModeRunsWaveByWave).
		if len(g.fake.PullRequests(ghRepo)) == 0 && g.dispatches() != before+1 {
			t.Errorf("wave %d: %d dispatches after collect, want %d", w, g.dispatches(), before+1)
		}
		if len(g.fake.PullRequests(ghRepo)) > 0 {
			break
		}
	}
	if got := fmt.Sprint(waves); got != "[[T1] [T2 T3] [T4]]" {
		t.Errorf("waves = %s", got)
	}
	for _, id := range []string{"T2", "T3"} {
		if _, err := os.Stat(filepath.Join(g.fixture.fake, "overlap."+id)); err != nil {
			t.Errorf("%s did not run at the same time as its sibling", id)
		}
	}
	if got := g.branchShape(branch); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("matrix branch differs from single-job mode:\n got %v\nwant %v", got, want)
	}
	prs := g.fake.PullRequests(ghRepo)
	if len(prs) != 1 || prs[0].Head != branch || !strings.Contains(prs[0].Body, "| T4 | join | ✅ completed | ❔ agent says passed (not run by planex) |") {
		t.Fatalf("pull requests = %+v", prs)
	}
	if !hasLabel(g.issueLabels(n), "planex:done") {
		t.Errorf("labels = %v", g.issueLabels(n))
	}
	// The report is the same as single mode's, but for commit ids.
	norm := func(s string) string { return matrixSHARe.ReplaceAllString(s, "<sha>") }
	if a, b := norm(prs[0].Body), norm(singleBody); a != b {
		t.Errorf("pull request body differs from single-job mode:\n%s\n----\n%s", a, b)
	}
	// A redelivered dispatch after the end prepares nothing.
	if out := g.step(n, "200", "INPUT_MATRIX_STEP=prepare"); out["has-tasks"] != "false" {
		t.Errorf("prepare after the end: %v", out)
	}
	if errs := g.fake.Errors(); len(errs) > 0 {
		t.Errorf("requests GitHub would refuse: %v", errs)
	}
}

// TestBenchWidePlan measures wall time for a wide plan (8 independent
// tasks of a fixed length) in single-job mode with concurrency 1 and 2 and
// in matrix mode with 8 task processes at once. It is a benchmark, run on
// demand:
//
//	PLANEX_BENCH=1 go test ./internal/cli -run TestBenchWidePlan -v
//
// PLANEX_BENCH_SLEEP sets the task length in seconds (default 2).
func TestBenchWidePlan(t *testing.T) {
	if os.Getenv("PLANEX_BENCH") == "" {
		t.Skip("set PLANEX_BENCH=1 to run the wide-plan benchmark")
	}
	sleep := os.Getenv("PLANEX_BENCH_SLEEP")
	if sleep == "" {
		sleep = "2"
	}
	var tasks []task
	for i := 1; i <= 8; i++ {
		tasks = append(tasks, task{ID: fmt.Sprintf("T%d", i), Title: fmt.Sprintf("task %d", i), Scope: fmt.Sprintf("w%d/**", i)})
	}
	setup := func() (*ghEnv, int) {
		g := newGHEnv(t)
		g.setPlan(tasks...)
		for _, tk := range tasks {
			old, _ := os.ReadFile(filepath.Join(g.fixture.fake, tk.ID+".sh"))
			g.write(g.fixture.fake, tk.ID+".sh", "sleep "+sleep+"\n"+string(old))
		}
		n := g.fake.AddIssue(ghRepo, "maintainer", "Wide plan", "")
		if r := g.run("issue_comment", g.comment(n, false, "maintainer", "/planex wide plan")); r.code != 0 {
			t.Fatalf("plan: %s", r.err)
		}
		return g, n
	}
	results := map[string]time.Duration{}
	for _, c := range []int{1, 2} {
		g, n := setup()
		start := time.Now()
		r := g.run("issue_comment", g.comment(n, false, "maintainer", "/planex approve "+g.lastPlanID(n)), "INPUT_CONCURRENCY="+strconv.Itoa(c))
		results[fmt.Sprintf("single c=%d", c)] = time.Since(start)
		if r.code != 0 || r.outputs["status"] != "done" {
			t.Fatalf("single c=%d: %v\n%s", c, r.outputs, r.err)
		}
	}
	g, n := setup()
	start := time.Now()
	r := g.run("issue_comment", g.comment(n, false, "maintainer", "/planex approve "+g.lastPlanID(n)), "INPUT_MODE=matrix", "INPUT_CONCURRENCY=8")
	if r.code != 0 {
		t.Fatalf("matrix approve: %s", r.err)
	}
	if ids := g.wave(n, "101"); len(ids) != 8 {
		t.Fatalf("matrix wave = %v", ids)
	}
	results["matrix 8 jobs"] = time.Since(start)
	if prs := g.fake.PullRequests(ghRepo); len(prs) != 1 || !strings.Contains(prs[0].Body, "| T8 | task 8 | ✅ completed") {
		t.Fatalf("matrix result: %+v", prs)
	}
	m := results["matrix 8 jobs"]
	for _, k := range []string{"single c=1", "single c=2", "matrix 8 jobs"} {
		t.Logf("%-14s %6.2fs  (%.2fx the matrix run)", k, results[k].Seconds(), results[k].Seconds()/m.Seconds())
	}
}
