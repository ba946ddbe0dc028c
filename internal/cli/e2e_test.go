package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/planexhq/planex/internal/gh"
	"github.com/planexhq/planex/internal/gitrepo/gittest"
)

// refuseLocalOriginEnv, set to 1, runs the test binary as planex does
// outside tests: the Action refuses a local origin. Every other e2e test's
// origin is a bare repository on disk.
const refuseLocalOriginEnv = "PLANEX_TEST_REFUSE_LOCAL_ORIGIN"

// The test binary doubles as the planex binary, so tests run planex as a
// separate process (needed to SIGKILL it mid-run) without a build step.
func TestMain(m *testing.M) {
	if os.Getenv("PLANEX_TEST_AS_MAIN") == "1" {
		// As cmd/planex does: SIGINT and SIGTERM cancel the run.
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		// The fake GitHub fails on purpose (faults_e2e_test.go): its
		// retries wait milliseconds, not GitHub's seconds. Waits GitHub
		// names (Retry-After, a rate limit's reset) are still waited for.
		code := Run(ctx, os.Args[1:], IO{In: os.Stdin, Out: os.Stdout, Err: os.Stderr, Getenv: os.Getenv,
			AllowLocalOrigin: os.Getenv(refuseLocalOriginEnv) != "1",
			GitHubRetry:      gh.RetryPolicy{BaseDelay: 5 * time.Millisecond, MaxDelay: 20 * time.Millisecond}})
		stop()
		os.Exit(code)
	}
	flag.Parse()
	parallelByDefault()
	collectLessOften()
	// The fixtures' clones, worktrees and git's lock files are made and
	// deleted by the thousand: their scratch goes to memory (about half of
	// this package's CPU was system time on disk; issue 32, item 4).
	os.Exit(gittest.InMemory("planex-cli-test", func() int { return runWithTemplate(m) }))
}

// templateRepo is the repository every fixture starts as, templateBase
// its commit and templateOrigin its bare clone (every ghEnv's origin),
// made by runWithTemplate before any test runs and only read after: a
// fixture copied from them runs one git process where making it ran six
// (seven, and a clone's helpers, with an origin).
var templateRepo, templateBase, templateOrigin string

// runWithTemplate makes the fixtures' template repositories, runs the
// tests and removes the templates.
func runWithTemplate(m *testing.M) int {
	dir, err := os.MkdirTemp("", "planex-fixture-template-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "making the fixtures' template:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	templateRepo, templateOrigin = filepath.Join(dir, "repo"), filepath.Join(dir, "origin.git")
	if templateBase, err = makeTemplate(templateRepo, templateOrigin); err != nil {
		fmt.Fprintln(os.Stderr, "making the fixtures' template:", err)
		return 1
	}
	return m.Run()
}

// makeTemplate makes, at repo, a repository with a README and a file in
// each of a, b, c and d, committed on main by the maintainer, and at
// origin its bare clone as GitHub would hold it; it returns the commit.
func makeTemplate(repo, origin string) (string, error) {
	files := map[string]string{"README.md": "# demo\n"}
	for _, d := range []string{"a", "b", "c", "d"} {
		files[d+"/keep.txt"] = d + "\n"
	}
	for rel, content := range files {
		p := filepath.Join(repo, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return "", err
		}
	}
	// GitHub runs no gc after a push; receive-pack's gc --auto would be
	// a git process per push here. GitHub keeps what a push sends as a
	// pack, not loose objects (unpackLimit 1): each clone of origin (a
	// job's checkout) links a few pack files instead of making a folder
	// and a link for every object pushed so far.
	head := ""
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"config", "user.name", "Maintainer"}, {"config", "user.email", "m@example.com"},
		{"add", "."}, {"commit", "-qm", "initial"}, {"clone", "-q", "--bare", "-c", "receive.autogc=false", "-c", "receive.unpackLimit=1", repo, origin}, {"rev-parse", "HEAD"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		out, err := cmd.CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("git %v: %w\n%s", args, err, out)
		}
		head = strings.TrimSpace(string(out))
	}
	return head, nil
}

// childGCPercent is the GOGC of this test binary and of every planex
// process it starts (they inherit it through the environment; agents do
// not, as GOGC is not on planex's allow-list): a collection when the heap
// has grown eight times its live size. A planex process's live heap is a
// few MiB, so at Go's default of 100 the collector ran over and over in
// every run: its mark workers alone were 5% of the package's CPU in a
// profile (issue 32, item 4).
const childGCPercent = 800

// collectLessOften sets childGCPercent for this process and for the
// processes it starts, unless the caller chose a GOGC.
func collectLessOften() {
	if _, set := os.LookupEnv("GOGC"); set {
		return
	}
	debug.SetGCPercent(childGCPercent)
	os.Setenv("GOGC", strconv.Itoa(childGCPercent))
}

// parallelByDefault lets more of this package's tests run at once than
// Go's default of one per CPU, unless -parallel was given: most of an
// end-to-end test's time is spent waiting on the planex, git and agent
// processes it starts (and on GitHub client backoffs), not running on a
// CPU, so one test per CPU leaves the CPUs idle.
func parallelByDefault() {
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		flag.Set("test.parallel", strconv.Itoa(4*runtime.GOMAXPROCS(0)))
	}
}

// atOnce runs n subtests, named name(i), all side by side as soon as t
// runs. A subtest that calls t.Parallel instead waits for its parent to
// return and then behind every top-level test still waiting for a slot,
// so the slow subtests of this package (the real CLIs' runs among them)
// started last and ran alone at the end, one CPU of two idle.
// testing.T.Run may be called from several goroutines at once; atOnce
// returns when every subtest has.
func atOnce(t *testing.T, n int, name func(i int) string, run func(t *testing.T, i int)) {
	t.Helper()
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t.Run(name(i), func(t *testing.T) { run(t, i) })
		}()
	}
	wg.Wait()
}

type fixture struct {
	t     *testing.T
	repo  string
	fake  string
	agent string
	base  string
	// env is added to the environment of every planex process and of the
	// test's own git: what a test would otherwise set with t.Setenv, which
	// the process shares with every test running in parallel.
	env []string
}

// newFixture makes a repository with a few files (a copy of
// templateRepo: README.md and a, b, c and d each with keep.txt, one
// commit on main) and a scripted agent.
func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{t: t, repo: t.TempDir(), fake: t.TempDir()}
	// Task worktrees go under RUNNER_TEMP; keep them with the test's files.
	f.env = []string{"RUNNER_TEMP=" + t.TempDir()}
	abs, err := filepath.Abs("testdata/scripted-agent.sh")
	if err != nil {
		t.Fatal(err)
	}
	f.agent = abs
	if err := gittest.CopyTree(templateRepo, f.repo); err != nil {
		t.Fatal(err)
	}
	// The copies' times and inodes are not those the template's index
	// recorded: refreshing it spares every later git a look at contents.
	f.git("update-index", "-q", "--refresh")
	f.base = templateBase
	return f
}

// twoAngles makes the scripted agent's analyze step name two angles, E1
// and E2, instead of one: for the tests that look at the second.
func (f *fixture) twoAngles() { f.write(f.fake, "two-angles", "") }

// envValue is the value f.env gives name, "" if none: what planex sees.
func (f *fixture) envValue(name string) string {
	v := ""
	for _, kv := range f.env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == name {
			v = val
		}
	}
	return v
}

func (f *fixture) write(dir, rel, content string) {
	f.t.Helper()
	p := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) git(args ...string) string {
	f.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = f.repo
	if len(f.env) > 0 {
		cmd.Env = append(os.Environ(), f.env...)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		f.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

type task struct {
	ID, Title, Scope string
	Deps             []string
	Directives       string
}

// setPlan makes the agent propose tasks; each task writes <scope dir>/<id>.txt.
func (f *fixture) setPlan(tasks ...task) {
	var ts []map[string]any
	for _, t := range tasks {
		ts = append(ts, map[string]any{
			"id": t.ID, "title": t.Title, "description": "do " + t.ID, "test": "file exists",
			"acceptance_criteria": "file has content", "scope": t.Scope, "hints": "",
			"execution_directives": t.Directives, "deps": orEmpty(t.Deps), "context_from": []string{"E1"},
		})
		dir := strings.TrimSuffix(t.Scope, "/**")
		f.write(f.fake, t.ID+".sh", "mkdir -p "+dir+" && echo '"+t.ID+" was here' > "+dir+"/"+strings.ToLower(t.ID)+".txt\n")
	}
	b, _ := json.Marshal(map[string]any{"summary": "demo plan", "approach": "one file per task", "tasks": ts})
	f.write(f.fake, "plan.json", string(b))
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func diamond() []task {
	return []task{
		{ID: "T1", Title: "base", Scope: "a/**"},
		{ID: "T2", Title: "left", Scope: "b/**", Deps: []string{"T1"}},
		{ID: "T3", Title: "right", Scope: "c/**", Deps: []string{"T1"}},
		{ID: "T4", Title: "join", Scope: "d/**", Deps: []string{"T2", "T3"}},
	}
}

// planex runs the binary in the fixture's repository.
func (f *fixture) planex(args ...string) (stdout, stderr string, code int) {
	f.t.Helper()
	cmd := f.command(args...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	code = 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		f.t.Fatal(err)
	}
	return o.String(), e.String(), code
}

// testAllowEnv lets the test agents' own variables through planex's
// environment allow-list (they name the fixture's folders and attacks).
const testAllowEnv = "PLANEX_ALLOW_ENV=FAKE_DIR,FAKE_COST,RED_TEAM,RED_TEAM_PLANEX"

func (f *fixture) command(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Dir = f.repo
	cmd.Env = append(os.Environ(), "PLANEX_TEST_AS_MAIN=1", "FAKE_DIR="+f.fake, testAllowEnv, "PLANEX_SANDBOX_WRITE="+f.fake, "PLANEX_SANDBOX_READ="+testdataDir(f.t), "PLANEX_AGENT_CMD="+f.agent, "GITHUB_TOKEN=must-not-leak")
	cmd.Env = append(cmd.Env, f.env...)
	return cmd
}

// testdataDir is where the test agents live; contained agents must be
// able to read it even when the checkout is under /tmp, which the
// sandbox replaces with an empty one.
func testdataDir(t *testing.T) string {
	t.Helper()
	abs, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

func (f *fixture) sessionDir() string {
	ents, err := os.ReadDir(filepath.Join(f.repo, ".git", "planex", "sessions"))
	if err != nil || len(ents) != 1 {
		f.t.Fatalf("sessions: %v %v", ents, err)
	}
	return filepath.Join(f.repo, ".git", "planex", "sessions", ents[0].Name())
}

// branchLog returns the run branch's commits, oldest first, as
// "subject|task trailer".
func (f *fixture) branchLog() []string {
	branch := "planex/" + filepath.Base(f.sessionDir())
	if strings.TrimSpace(f.git("branch", "--list", branch)) == "" {
		return nil
	}
	out := f.git("log", "--reverse", "--format=%s|%(trailers:key=Planex-Task,valueonly,separator=)", f.base+".."+branch)
	return strings.Fields(strings.ReplaceAll(strings.TrimSpace(out), " ", "_"))
}

func TestDiamondThreeWavesFourCommits(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.twoAngles() // the report shows E2's findings
	f.setPlan(diamond()...)
	f.write(f.repo, "README.md", "# demo\nuncommitted user work\n")
	out, errOut, code := f.planex("-y", "add four files")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"wave 1: T1", "wave 2: T2, T3", "wave 3: T4", "uncommitted change"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	got := f.branchLog()
	want := []string{"T1:_base|T1", "T2:_left|T2", "T3:_right|T3", "T4:_join|T4"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("branch commits = %v, want %v", got, want)
	}
	// Each commit holds exactly its task's file.
	branch := "planex/" + filepath.Base(f.sessionDir())
	for i, id := range []string{"t1", "t2", "t3", "t4"} {
		rev := branch + strings.Repeat("^", 3-i)
		files := strings.Fields(f.git("diff-tree", "--no-commit-id", "--name-only", "-r", rev))
		if len(files) != 1 || !strings.HasSuffix(files[0], id+".txt") {
			t.Errorf("commit %s changes %v", rev, files)
		}
	}
	// The user's branch, index and working tree are untouched.
	if head := strings.TrimSpace(f.git("rev-parse", "main")); head != f.base {
		t.Errorf("main moved to %s", head)
	}
	if st := f.git("status", "--porcelain"); strings.TrimSpace(st) != "M README.md" {
		t.Errorf("git status = %q", st)
	}
	sd := f.sessionDir()
	for _, name := range []string{"explore.csv", "tasks.csv", "results.csv", "discoveries.ndjson", "context.md", "session.json"} {
		if _, err := os.Stat(filepath.Join(sd, name)); err != nil {
			t.Errorf("session lacks %s", name)
		}
	}
	tasksCSV, _ := os.ReadFile(filepath.Join(sd, "tasks.csv"))
	if !strings.HasPrefix(string(tasksCSV), "id,title,description,test,acceptance_criteria,scope,hints,execution_directives,deps,context_from,wave,status,findings,files_modified,tests_passed,acceptance_met,error") {
		t.Errorf("tasks.csv header: %s", strings.SplitN(string(tasksCSV), "\n", 2)[0])
	}
	report, _ := os.ReadFile(filepath.Join(sd, "context.md"))
	for _, want := range []string{"4 completed, 0 failed", "### E1: patterns (✅ completed)", "findings of E2", "### T4: join (✅ completed)", "`d/t4.txt`"} {
		if !strings.Contains(string(report), want) {
			t.Errorf("context.md lacks %q", want)
		}
	}
	// Continuing a finished session adds nothing.
	if _, _, code := f.planex("--continue"); code != 0 {
		t.Fatalf("continue on a finished session exited %d", code)
	}
	if again := f.branchLog(); len(again) != 4 {
		t.Errorf("after --continue the branch has %d commits", len(again))
	}
	st, _, _ := f.planex("status")
	for _, want := range []string{"wave 3", "T4   completed", "4 completed, 0 failed, 0 skipped, 0 pending"} {
		if !strings.Contains(st, want) {
			t.Errorf("status lacks %q:\n%s", want, st)
		}
	}
}

func TestFailureSkipsDependents(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.setPlan(diamond()...)
	f.write(f.fake, "T2.fail", "could not do it")
	out, errOut, code := f.planex("-y", "--review", "skip", "add four files")
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "planex: 1 task failed and 1 task was skipped; see ") {
		t.Errorf("stderr: %s", errOut)
	}
	if got := strings.Join(f.branchLog(), " "); got != "T1:_base|T1 T3:_right|T3" {
		t.Errorf("branch = %s", got)
	}
	tasks, _ := os.ReadFile(filepath.Join(f.sessionDir(), "tasks.csv"))
	for _, want := range []string{"could not do it", ",skipped,", ",dependency T2 failed,"} {
		if !strings.Contains(string(tasks), want) {
			t.Errorf("tasks.csv lacks %q", want)
		}
	}
}

func TestOutOfScopeWriteIsCaught(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.setPlan(task{ID: "T1", Title: "sneaky", Scope: "a/**"}, task{ID: "T2", Title: "fine", Scope: "b/**"})
	f.write(f.fake, "T1.sh", "echo x > a/ok.txt; echo y > README.md; mkdir -p z && echo z > z/new.txt\n")
	out, errOut, code := f.planex("-y", "--review", "skip", "scope test")
	if code != 1 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, `T1: failed: wrote outside its scope "a/**": README.md, z/new.txt`) {
		t.Errorf("output:\n%s", out)
	}
	if got := strings.Join(f.branchLog(), " "); got != "T2:_fine|T2" {
		t.Errorf("branch = %s", got)
	}
}

func TestNoChangesAndDirectives(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.setPlan(
		task{ID: "T1", Title: "lazy", Scope: "a/**"},
		task{ID: "T2", Title: "tested", Scope: "b/**", Directives: "test -f b/t2.txt && grep -q here b/t2.txt"},
		task{ID: "T3", Title: "broken", Scope: "c/**", Directives: "echo failing check >&2; exit 4"},
	)
	f.write(f.fake, "T1.sh", "true\n")
	out, _, _ := f.planex("-y", "--review", "skip", "checks")
	if !strings.Contains(out, "T1: failed: no changes") {
		t.Errorf("T1 not failed for no changes:\n%s", out)
	}
	if !strings.Contains(out, "T3: failed: execution directives failed: exit status 4: failing check") {
		t.Errorf("T3 not failed by its directive:\n%s", out)
	}
	if got := strings.Join(f.branchLog(), " "); got != "T2:_tested|T2" {
		t.Errorf("branch = %s", got)
	}
}

func TestGatesWithoutTerminal(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.setPlan(diamond()...)
	// Waiting at a gate without a terminal exits 3.
	out, _, code := f.planex("add four files")
	if code != exitWaiting || !strings.Contains(out, "planex --continue ") || !strings.Contains(out, "explore.csv") {
		t.Fatalf("first stop: exit %d\n%s", code, out)
	}
	out, _, code = f.planex("--continue")
	if code != exitWaiting || !strings.Contains(out, "tasks.csv") || !strings.Contains(out, "planex --continue ") {
		t.Fatalf("second stop: exit %d\n%s", code, out)
	}
	if n := len(f.branchLog()); n != 0 {
		t.Fatalf("tasks ran before approval: %d commits", n)
	}
	// The user edits the plan (drops T4) before approving it.
	tasksPath := filepath.Join(f.sessionDir(), "tasks.csv")
	b, _ := os.ReadFile(tasksPath)
	var kept []string
	for _, l := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(l, "T4,") {
			kept = append(kept, l)
		}
	}
	os.WriteFile(tasksPath, []byte(strings.Join(kept, "\n")), 0o644)
	id := filepath.Base(f.sessionDir())
	out, _, code = f.planex("--review", "skip", "--continue", id)
	if code != 0 {
		t.Fatalf("third run: exit %d\n%s", code, out)
	}
	if got := len(f.branchLog()); got != 3 {
		t.Errorf("branch has %d commits, want 3 (T4 was removed)", got)
	}
}

// TestBadPlansAreRefused: a plan file given as the requirement that
// planex refuses (here one it cannot read as CSV and one whose tasks
// form a cycle) stops the run before anything starts, says what is wrong
// and where, and leaves the file alone. What each refusal says (duplicate
// ids, unknown deps and context, cycles, overlapping scopes, empty
// fields, malformed CSV) is internal/plan's TestValidateErrors and
// TestReadTasksMalformed.
func TestBadPlansAreRefused(t *testing.T) {
	t.Parallel()
	header := "id,title,description,test,acceptance_criteria,scope,hints,execution_directives,deps,context_from,wave,status,findings,files_modified,tests_passed,acceptance_met,error\n"
	cases := []struct{ name, rows, want string }{
		{"cycle", "T1,a,d,,,a/**,,,T2,,,,,,,,\nT2,b,d,,,b/**,,,T1,,,,,,,,\n", "dependency cycle: T1 → T2 → T1"},
		{"malformed", "T1,\"a,d\n", "line 2: malformed CSV"},
	}
	atOnce(t, len(cases), func(i int) string { return cases[i].name }, func(t *testing.T, i int) {
		c := cases[i]
		f := newFixture(t)
		p := filepath.Join(t.TempDir(), "tasks.csv")
		os.WriteFile(p, []byte(header+c.rows), 0o644)
		_, errOut, code := f.planex("-y", p)
		if code == 0 || !strings.Contains(errOut, c.want) {
			t.Fatalf("exit %d, stderr %q, want it to contain %q", code, errOut, c.want)
		}
		if b, _ := os.ReadFile(p); string(b) != header+c.rows {
			t.Error("the user's file was changed")
		}
		if out := f.git("branch", "--list", "planex/*"); strings.TrimSpace(out) != "" {
			t.Errorf("a run branch was created: %s", out)
		}
	})
}

func TestHandEditedTasksCSVIsRefusedBeforeRunning(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.setPlan(diamond()...)
	f.planex("add four files")
	f.planex("--continue")
	tasksPath := filepath.Join(f.sessionDir(), "tasks.csv")
	b, _ := os.ReadFile(tasksPath)
	broken := strings.Replace(string(b), "T4,join,do T4,file exists,file has content,d/**,,,T2;T3", "T4,join,do T4,file exists,file has content,d/**,,,T2;T3;T4", 1)
	if broken == string(b) {
		t.Fatal("edit did not apply")
	}
	os.WriteFile(tasksPath, []byte(broken), 0o644)
	_, errOut, code := f.planex("--continue")
	if code == 0 || !strings.Contains(errOut, `(T4), field "deps": T4 depends on itself`) {
		t.Fatalf("exit %d stderr %s", code, errOut)
	}
	if after, _ := os.ReadFile(tasksPath); string(after) != broken {
		t.Error("planex rewrote the user's broken tasks.csv")
	}
	if n := len(f.branchLog()); n != 0 {
		t.Errorf("%d commits after a refused plan", n)
	}
}

func TestImportedPlanJSON(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.setPlan(task{ID: "T1", Title: "one", Scope: "a/**"})
	out, errOut, code := f.planex("-y", "--review", "skip", filepath.Join(f.fake, "plan.json"))
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if strings.Contains(out, "analyze:") {
		t.Error("an imported plan was analyzed")
	}
	if got := strings.Join(f.branchLog(), " "); got != "T1:_one|T1" {
		t.Errorf("branch = %s", got)
	}
}

func TestRequirementFromMarkdownFile(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.setPlan(task{ID: "T1", Title: "one", Scope: "a/**"})
	p := filepath.Join(t.TempDir(), "req.md")
	os.WriteFile(p, []byte("# Add logging\n\nPlease add logging.\n"), 0o644)
	out, _, code := f.planex("-y", "--review", "skip", p)
	if code != 0 || !strings.Contains(out, "session add-logging-") {
		t.Fatalf("exit %d\n%s", code, out)
	}
	if _, _, code := f.planex("-y", filepath.Join(t.TempDir(), "missing.md")); code == 0 {
		t.Error("a missing requirement file was accepted")
	}
}

func TestAllExplorationsFailStillPlans(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.setPlan(task{ID: "T1", Title: "one", Scope: "a/**"})
	f.twoAngles()
	f.write(f.fake, "E1.fail", "x")
	f.write(f.fake, "E2.fail", "x")
	out, errOut, code := f.planex("-y", "--review", "skip", "something")
	if code != 0 || !strings.Contains(out, "planning from the requirement alone") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
}

func TestNoAgentConfigured(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	cmd := f.command("-y", "x")
	cmd.Env = append(cmd.Env, "PLANEX_AGENT_CMD=")
	out, _ := cmd.CombinedOutput()
	if !strings.Contains(string(out), "no agent configured") {
		t.Errorf("output: %s", out)
	}
}

// TestKilledRunResumes SIGKILLs planex while a wave is in flight and
// checks that --continue reaches the same branch as a run that was never
// interrupted, with no duplicate commits.
// killAfterT2 runs the diamond plan of f with T3 blocked, SIGKILLs planex
// once T2 is committed, and checks the branch then holds T1 and T2 alone
// and no agent outlived planex.
func killAfterT2(t *testing.T, f *fixture) {
	t.Helper()
	f.write(f.fake, "T3.block", "")
	cmd := f.command("-y", "add four files")
	ownTemp(t, cmd)
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(f.fake, "T3.pid")
	waitForFile(t, pidFile, cmd, out)
	// Let T2 (which does not block) finish and be committed first.
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) && !strings.Contains(out.String(), "T2: completed") {
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	agentsGone(t, f.fake)
	os.Remove(filepath.Join(f.fake, "T3.block"))
	if got := strings.Join(f.branchLog(), " "); got != "T1:_base|T1 T2:_left|T2" {
		t.Fatalf("after the kill the branch is %q\n%s", got, out.String())
	}
}

func TestKilledRunResumes(t *testing.T) {
	t.Parallel()
	ref := newFixture(t)
	ref.setPlan(diamond()...)
	if out, errOut, code := ref.planex("-y", "--review", "skip", "add four files"); code != 0 {
		t.Fatalf("reference run: %d\n%s\n%s", code, out, errOut)
	}

	f := newFixture(t)
	f.setPlan(diamond()...)
	killAfterT2(t, f)

	o2, e2, code := f.planex("--continue", "--review", "skip")
	if code != 0 {
		t.Fatalf("continue: %d\n%s\n%s", code, o2, e2)
	}
	if got, want := f.branchLog(), ref.branchLog(); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("resumed branch %v, uninterrupted %v", got, want)
	}
	treeOf := func(x *fixture) string {
		return strings.TrimSpace(x.git("rev-parse", "planex/"+filepath.Base(x.sessionDir())+"^{tree}"))
	}
	if treeOf(f) != treeOf(ref) {
		t.Error("resumed branch's tree differs from the uninterrupted run's")
	}
	if wts := f.git("worktree", "list"); strings.Count(wts, "\n") != 1 {
		t.Errorf("worktrees left behind:\n%s", wts)
	}
}

// syncBuffer is a bytes.Buffer safe to read while a process writes to it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestAgentSelectionErrors(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	cases := []struct {
		args []string
		env  []string
		want string
	}{
		{[]string{"--agent", "nope", "x"}, nil, `unknown agent "nope" (choose one of: anthropic, openai, claude, codex, gemini, command)`},
		{[]string{"--agent", "openai", "x"}, []string{"OPENAI_API_KEY="}, "OPENAI_API_KEY"},
		{[]string{"--agent", "anthropic", "--api-key-env", "MY_KEY", "x"}, []string{"MY_KEY="}, "MY_KEY"},
	}
	for _, c := range cases {
		cmd := f.command(c.args...)
		cmd.Env = append(cmd.Env, c.env...)
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), c.want) {
			t.Errorf("%v: err %v, output %q, want %q", c.args, err, out, c.want)
		}
	}
}

func TestBudgetStopsBeforeAStep(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.twoAngles() // analyze and two explorations spend $1.50
	f.setPlan(diamond()...)
	cmd := f.command("-y", "--max-cost-usd", "1.2", "add four files")
	cmd.Env = append(cmd.Env, "FAKE_COST=0.5")
	out, err := cmd.CombinedOutput()
	// A budget stop is a failed run: exit 1.
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != exitFailed {
		t.Fatalf("err %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "cost budget: $1.50 spent of $1.20, and the next plan step is estimated at $0.50") {
		t.Errorf("output:\n%s", out)
	}
	report, _ := os.ReadFile(filepath.Join(f.sessionDir(), "context.md"))
	if !strings.Contains(string(report), "Stopped before the end:** cost budget") {
		t.Errorf("context.md does not say why it stopped")
	}
	// With a larger budget the same session finishes, and the report sums
	// every step that reported usage: analyze, 2 explorations and 4 tasks
	// at $0.50 (the scripted plan step reports none).
	cmd = f.command("--continue", "--max-cost-usd", "10")
	cmd.Env = append(cmd.Env, "FAKE_COST=0.5")
	out, err = cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("continue: %v\n%s", err, out)
	}
	report, _ = os.ReadFile(filepath.Join(f.sessionDir(), "context.md"))
	if !strings.Contains(string(report), "| Estimated cost | $3.50 |") || !strings.Contains(string(report), "| Tokens | 700 in, 70 out |") {
		t.Errorf("context.md totals wrong:\n%s", report)
	}
	tasks, _ := os.ReadFile(filepath.Join(f.sessionDir(), "tasks.csv"))
	if !strings.Contains(string(tasks), ",100,10,0.500000,") {
		t.Errorf("tasks.csv lacks per-task accounting:\n%s", tasks)
	}
}

func TestExploreWithoutAgentThenContinue(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.write(f.repo, "a/limits.py", "def rate_limit(key):\n    return True\n")
	f.git("add", ".")
	f.git("commit", "-qm", "code")
	f.base = strings.TrimSpace(f.git("rev-parse", "HEAD"))
	f.setPlan(task{ID: "T1", Title: "one", Scope: "a/**"})
	cmd := f.command("explore", "add a rate limit per API key")
	cmd.Env = append(cmd.Env, "PLANEX_AGENT_CMD=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("explore: %v\n%s", err, out)
	}
	for _, want := range []string{"## Repository", " 1. a/limits.py", "## Exploration (feature requirement, 3 angles)", "E1 patterns: Most relevant files: a/limits.py (rate_limit)", "planex --continue add-a-rate-limit-per-api-key-"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("explore output lacks %q:\n%s", want, out)
		}
	}
	// explore makes no branch, and does not say it did.
	for _, wrong := range []string{"done:", "branch planex/", "(s)"} {
		if strings.Contains(string(out), wrong) {
			t.Errorf("explore output says %q:\n%s", wrong, out)
		}
	}
	if b := strings.TrimSpace(f.git("branch", "--list", "planex/*")); b != "" {
		t.Errorf("explore made a branch: %s", b)
	}
	explore, _ := os.ReadFile(filepath.Join(f.sessionDir(), "explore.csv"))
	if !strings.HasPrefix(string(explore), "id,angle,description,focus,deps,wave,status,findings,key_files,error\n") || strings.Count(string(explore), ",completed,") != 3 {
		t.Errorf("explore.csv:\n%s", explore)
	}
	// An agent then plans and executes from those explorations; analyze
	// and explore are not run again.
	o2, e2, code := f.planex("-y", "--continue")
	if code != 0 {
		t.Fatalf("continue: %d\n%s\n%s", code, o2, e2)
	}
	if strings.Contains(o2, "analyze:") || strings.Contains(o2, "explore E1") {
		t.Errorf("explorations were redone:\n%s", o2)
	}
	if got := strings.Join(f.branchLog(), " "); got != "T1:_one|T1" {
		t.Errorf("branch = %s", got)
	}
}

func TestLocateCommand(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.write(f.repo, "a/limits.py", "def rate_limit(key):\n    return True\n")
	f.git("add", ".")
	f.git("commit", "-qm", "code")
	f.base = strings.TrimSpace(f.git("rev-parse", "HEAD"))
	out, errOut, code := f.planex("locate", "--top", "2", "rate_limit is broken")
	if code != 0 || !strings.HasPrefix(out, "a/limits.py\n") {
		t.Fatalf("locate: %d %q %q", code, out, errOut)
	}
	if _, errOut, code := f.planex("locate", "   "); code == 0 || !strings.Contains(errOut, "query is empty") {
		t.Errorf("empty query: %d %q", code, errOut)
	}
}

// TestLocateExplain checks that --explain names, under each file, the
// signals that put it there: a traceback frame in a test is passed on to the
// code the test exercises, beside the identifiers and words that match.
func TestLocateExplain(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.write(f.repo, "shop/__init__.py", "")
	f.write(f.repo, "shop/limits.py", "def rate_limit(key):\n    \"\"\"Allow a key a few requests a minute.\"\"\"\n    return True\n")
	f.write(f.repo, "shop/cart.py", "from shop.limits import rate_limit\n\ndef checkout(cart):\n    return rate_limit(cart)\n")
	f.write(f.repo, "tests/test_limits.py", "from shop.limits import rate_limit\n\ndef test_minute():\n    assert not rate_limit('k')\n")
	f.git("add", ".")
	f.git("commit", "-qm", "code")
	// A past fix whose subject carries terminal escape sequences: the
	// repository's text, which --explain quotes without them.
	f.write(f.repo, "shop/limits.py", "def rate_limit(key):\n    \"\"\"Allow a key a few requests a minute.\"\"\"\n    return True  # per minute\n")
	f.git("commit", "-qam", "\x1b]0;owned\x07Fix the per-minute limit \x1b[2J never applied")
	query := "test_minute fails:\n\nTraceback (most recent call last):\n  File \"tests/test_limits.py\", line 4, in test_minute\n    assert not rate_limit('k')\nAssertionError\n\nThe limit per minute is never applied."
	qdir := t.TempDir()
	f.write(qdir, "query.txt", query)
	out, errOut, code := f.planex("locate", "--explain", "--top", "3", "--query-file", filepath.Join(qdir, "query.txt"))
	if code != 0 {
		t.Fatalf("locate --explain: %d %q %q", code, out, errOut)
	}
	blocks := map[string]string{}
	var cur string
	for _, line := range strings.Split(out, "\n") {
		if line != "" && !strings.HasPrefix(line, " ") {
			cur = line
			continue
		}
		blocks[cur] += line + "\n"
	}
	if !strings.HasPrefix(out, "shop/limits.py\n") {
		t.Errorf("shop/limits.py not first:\n%s", out)
	}
	if strings.ContainsAny(out, "\x1b\x07") {
		t.Errorf("--explain passed a commit's control characters to the terminal: %q", out)
	}
	for file, want := range map[string][]string{
		"shop/limits.py":       {"score ", "defines rate_limit", "tested by tests/test_limits.py", "content matches", "linked by imports to", "]0;ownedFix the per-minute limit [2J never applied"},
		"tests/test_limits.py": {"traceback frame 1 of 1: tests/test_limits.py", "test file"},
	} {
		for _, w := range want {
			if !strings.Contains(blocks[file], w) {
				t.Errorf("%s: explanation lacks %q:\n%s", file, w, blocks[file])
			}
		}
	}
	// Every reason carries its signed contribution to the score.
	for file, b := range blocks {
		for _, line := range strings.Split(strings.TrimSpace(b), "\n") {
			line = strings.TrimSpace(line)
			if line != "" && !strings.HasPrefix(line, "score ") && !strings.HasPrefix(line, "+") && !strings.HasPrefix(line, "-") {
				t.Errorf("%s: reason without a contribution: %q", file, line)
			}
		}
	}
}

// ownTemp gives a planex the test will SIGKILL a temporary folder of its
// own, removed with the test: the step folders, homes, overlays and proxy
// sockets it has no chance to remove go with it instead of staying in
// the machine's /tmp. The folder's name is short (t.TempDir's holds the
// test's name), so planex's sockets stay there too. It returns the
// folder.
func ownTemp(t *testing.T, cmd *exec.Cmd) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "pxk-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	cmd.Env = append(cmd.Env, "TMPDIR="+dir)
	return dir
}

// waitForFile waits for a blocking scripted agent to record its pid.
func waitForFile(t *testing.T, path string, cmd *exec.Cmd, out *syncBuffer) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("%s never appeared:\n%s", path, out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// agentsGone checks that no process of a killed planex's agent is left:
// the sandbox's init dies with planex and takes the step's processes with
// it. A survivor (found by the fixture's FAKE_DIR in its environment) is
// killed and reported.
func agentsGone(t *testing.T, fakeDir string) {
	t.Helper()
	needle := []byte("FAKE_DIR=" + fakeDir + "\x00")
	var left []int
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		left = left[:0]
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid == os.Getpid() {
				continue
			}
			if b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ")); err == nil && bytes.Contains(b, needle) {
				left = append(left, pid)
			}
		}
		if len(left) == 0 || time.Now().After(deadline) {
			break
		}
	}
	for _, pid := range left {
		if p, err := os.FindProcess(pid); err == nil {
			p.Kill()
		}
	}
	if len(left) > 0 {
		t.Errorf("agent processes outlived planex: %v", left)
	}
}
