package action

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/planexhq/planex/internal/agent"
	"github.com/planexhq/planex/internal/apicommit"
	"github.com/planexhq/planex/internal/engine"
	"github.com/planexhq/planex/internal/event"
	"github.com/planexhq/planex/internal/explore"
	"github.com/planexhq/planex/internal/gh"
	"github.com/planexhq/planex/internal/ghfake"
	"github.com/planexhq/planex/internal/gitrepo"
	"github.com/planexhq/planex/internal/gitrepo/gittest"
	"github.com/planexhq/planex/internal/review"
)

// world is one repository as the Action sees it: a fake GitHub (stateful,
// every request checked against GitHub's REST description and recorded),
// a real bare origin, and a scripted agent. Each job runs a fresh Runner
// in a fresh clone, as a workflow run would.
type world struct {
	t      *testing.T
	fake   *ghfake.Fake
	origin string
	agent  *scriptedAgent
	// tmp is where the world's jobs keep task worktrees: the
	// repository's TempDir, which a workflow's runner fills from
	// $RUNNER_TEMP. Each world has its own, so worlds run side by side.
	tmp string
	// clock is the world's time, shared by the fake GitHub's timestamps
	// and every job's Runner: a test moves it on instead of sleeping.
	clock *worldClock
	// retry is the jobs' GitHub client's retry policy: no settle window
	// (the fake answers in order); a test of faults shortens the backoff.
	retry gh.RetryPolicy
	// config changes every job's Config before a job's own changes, as
	// a workflow's inputs would.
	config []func(*Config)
}

// worldClock is the wall clock moved on by what tests skip ahead.
type worldClock struct {
	mu   sync.Mutex
	skip time.Duration
}

func (c *worldClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.skip)
}

// advance moves the world's time on by d, as if d had passed.
func (c *worldClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.skip += d
}

const (
	wOwner = "octo"
	wName  = "demo"
	wRepo  = wOwner + "/" + wName
)

// newWorld is a world of its own: it shares no folder, port or
// environment with any other, so the test may call t.Parallel.
func newWorld(t *testing.T) *world {
	t.Helper()
	return buildWorld(t)
}

// newParallelWorld is newWorld for a test that runs in parallel with
// others: it calls t.Parallel first.
func newParallelWorld(t *testing.T) *world {
	t.Helper()
	t.Parallel()
	return buildWorld(t)
}

func buildWorld(t *testing.T) *world {
	t.Helper()
	clock := &worldClock{}
	w := &world{t: t, fake: ghfake.New(t, ghfake.WithClock(clock.now)), origin: filepath.Join(t.TempDir(), "origin.git"),
		agent: &scriptedAgent{}, tmp: t.TempDir(), clock: clock, retry: gh.RetryPolicy{SettleWindow: -1}}
	// The origin is templateOrigin's copy (main_test.go says how it is
	// made): a README on main, kept as GitHub keeps pushes.
	if err := gittest.CopyTree(templateOrigin, w.origin); err != nil {
		t.Fatal(err)
	}
	w.fake.AddRepo(wRepo, ghfake.Repo{DefaultBranch: "main"})
	for login, role := range map[string]string{"maintainer": "write", "reader": "read"} {
		w.fake.AddUser(login, "User")
		w.fake.SetPermission(wRepo, login, role)
	}
	w.fake.SetBranchCheck(func(_, branch string) bool {
		cmd := exec.Command("git", "rev-parse", "--verify", "--quiet", "refs/heads/"+branch)
		cmd.Dir = w.origin
		return cmd.Run() == nil
	})
	return w
}

func run(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// job is one workflow job: a Runner in a fresh clone of origin.
func (w *world) job(mutate ...func(*Config)) (*Runner, *strings.Builder) {
	w.t.Helper()
	ctx := context.Background()
	ws := filepath.Join(w.t.TempDir(), "ws")
	run(w.t, w.origin, "clone", "-q", w.origin, ws)
	repo, err := gitrepo.Open(ctx, ws)
	if err != nil {
		w.t.Fatal(err)
	}
	repo.TempDir = w.tmp
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	client, err := gh.NewClient(ctx, gh.Options{Token: "ghs_test", APIURL: w.fake.URL(), ServerURL: w.fake.ServerURL(), Logger: log,
		Retry: w.retry})
	if err != nil {
		w.t.Fatal(err)
	}
	// The token acts as the fake's default actor, the Actions bot; the
	// identity is pinned as the job token's (or a bot-login input) pins it.
	cfg := Config{Owner: wOwner, Repo: wName, RunID: "42", RunAttempt: "1", DefaultBranch: "main", Review: review.ModeSkip,
		BotLogin: ghfake.DefaultActor}
	for _, m := range append(slices.Clone(w.config), mutate...) {
		m(&cfg)
	}
	out := &strings.Builder{}
	r := &Runner{Cfg: cfg, GH: NewGitHub(client), Repo: repo, Out: &lockedWriter{w: out}, Log: log, Now: w.clock.now,
		Engine: engine.Options{Agent: w.agent, Mapper: explore.Mapper{Log: log, Memo: &explore.Memo{}}, Log: log}}
	if cfg.CommitSigning == apicommit.ModeAPI {
		// As internal/cli wires it: GitHub makes the task commits.
		r.Engine.Publisher = &apicommit.Publisher{GH: client, Local: repo, Owner: wOwner, Repo: wName, Remote: "origin", Log: log}
	}
	return r, out
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// handle runs one event in a new job and returns its runner.
func (w *world) handle(ev *event.Event, mutate ...func(*Config)) (*Runner, error) {
	w.t.Helper()
	r, _ := w.job(mutate...)
	if err := r.LoadSettings(context.Background()); err != nil {
		return r, err
	}
	return r, r.Handle(context.Background(), ev)
}

// comment posts body on number as login and returns its event.
func (w *world) comment(number int, login, body string) *event.Event {
	id := w.fake.AddComment(wRepo, number, login, body)
	is, _ := w.fake.Issue(wRepo, number)
	author := event.User{Login: login, Type: "User"}
	return &event.Event{Name: event.IssueComment, Action: "created", Owner: wOwner, Repo: wName, DefaultBranch: "main",
		Number: number, IsPR: is.IsPR, Sender: author,
		Comment: &event.Comment{Kind: event.KindIssueComment, ID: id, Body: body, Author: author},
		Issue:   &event.Issue{Number: number, Title: is.Title, Body: is.Body, Author: author, IsPR: is.IsPR}}
}

// failedRun plans two tasks, the second after the first, on an issue a
// maintainer opens and commands, and approves them; the second fails
// with reason, so the run ends failed with the first task committed, the
// state a retry starts from. It returns the issue and the approval's run.
func (w *world) failedRun(title, command, reason string) (int, *Runner) {
	w.t.Helper()
	w.agent.setPlan(wTask{ID: "T1", Title: "one", Scope: "a/**"}, wTask{ID: "T2", Title: "two", Scope: "b/**", Deps: []string{"T1"}})
	w.agent.failTask("T2", reason)
	n := w.fake.AddIssue(wRepo, "maintainer", title, "")
	if r, err := w.handle(w.comment(n, "maintainer", command)); err != nil || r.Outputs.Status != StatusPlanned {
		w.t.Fatalf("plan: %v %+v", err, r.Outputs)
	}
	r, err := w.handle(w.comment(n, "maintainer", "/planex approve "+w.planID(n)))
	if err != nil || r.Outputs.Status != StatusFailed {
		w.t.Fatalf("approve: %v %+v", err, r.Outputs)
	}
	return n, r
}

// planID is the id in the newest plan comment on a thread.
func (w *world) planID(number int) string {
	w.t.Helper()
	cs := w.fake.Comments(wRepo, number)
	for i := len(cs) - 1; i >= 0; i-- {
		if m := planIDRe.FindStringSubmatch(cs[i].Body); m != nil && strings.HasPrefix(cs[i].Body, "<!-- planex:plan ") {
			return m[1]
		}
	}
	w.t.Fatalf("no plan comment on #%d", number)
	return ""
}

func (w *world) lastComment(number int) string {
	cs := w.fake.Comments(wRepo, number)
	if len(cs) == 0 {
		return ""
	}
	return cs[len(cs)-1].Body
}

func (w *world) commentsWith(number int, prefix string) []string {
	var out []string
	for _, c := range w.fake.Comments(wRepo, number) {
		if strings.HasPrefix(c.Body, prefix) {
			out = append(out, c.Body)
		}
	}
	return out
}

func (w *world) labels(number int) []string {
	is, _ := w.fake.Issue(wRepo, number)
	return is.Labels
}

// branch lists the subjects on an origin branch since main.
func (w *world) branch(name string) []string {
	cmd := exec.Command("git", "log", "--reverse", "--format=%s", "main.."+name)
	cmd.Dir = w.origin
	out, err := cmd.Output()
	if err != nil {
		return nil
	}
	return strings.Fields(strings.ReplaceAll(strings.TrimSpace(string(out)), " ", "_"))
}

func (w *world) branchExists(name string) bool {
	cmd := exec.Command("git", "rev-parse", "--verify", "--quiet", "refs/heads/"+name)
	cmd.Dir = w.origin
	return cmd.Run() == nil
}

func (w *world) noRefusedRequests() {
	w.t.Helper()
	if errs := w.fake.Errors(); len(errs) > 0 {
		w.t.Errorf("requests GitHub would refuse: %v", errs)
	}
}

// wTask is a task of the scripted plan.
type wTask struct {
	ID, Title, Scope string
	Deps             []string
	// Directives are the planner's execution directives for the task.
	Directives string
	// Attributes, when set, is a path in Scope where the agent also
	// writes a .gitattributes file that marks the scope's files generated.
	Attributes string
}

// scriptedAgent answers every phase as a command agent would: the plan
// it is given, and for each task a file in the task's scope. Tasks named
// in fail report failure with that text.
type scriptedAgent struct {
	mu    sync.Mutex
	tasks []wTask
	fail  map[string]string
	calls []string
	// review is the review result ("__ID__" becomes the step's id); empty
	// means a pass with one criterion met.
	review string
	// prompts holds the newest prompt of each phase.
	prompts map[agent.Phase]string
	// rawPlan, when set, is the plan answered as it is (tasks are then
	// only what it lists); twoAngles has the analysis name two angles.
	rawPlan   map[string]any
	twoAngles bool
	// during, by task id, runs while that task's step works (a change on
	// GitHub in the middle of a run), given the step's context.
	during map[string]func(context.Context)
}

var findingRe = regexp.MustCompile("finding `([0-9a-f]+)`")

// fixPlan is the plan for a prompt that asks to fix review findings: one
// task whose hints cite every finding key in the prompt.
func fixPlan(prompt string) map[string]any {
	var keys []string
	for _, m := range findingRe.FindAllStringSubmatch(prompt, -1) {
		keys = append(keys, m[1])
	}
	return map[string]any{"summary": "fix review findings", "approach": "one task", "tasks": []map[string]any{{
		"id": "T1", "title": "Fix review findings", "description": "Address findings", "test": "gone", "acceptance_criteria": "addressed",
		"scope": "fixes/**", "hints": "answers: " + strings.Join(keys, " "), "execution_directives": "", "deps": []string{}, "context_from": []string{}}}}
}

func (a *scriptedAgent) setPlan(tasks ...wTask) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.tasks = tasks
}

func (a *scriptedAgent) failTask(id, why string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.fail == nil {
		a.fail = map[string]string{}
	}
	if why == "" {
		delete(a.fail, id)
		return
	}
	a.fail[id] = why
}

func diamond() []wTask {
	return []wTask{
		{ID: "T1", Title: "base", Scope: "a/**"},
		{ID: "T2", Title: "left", Scope: "b/**", Deps: []string{"T1"}},
		{ID: "T3", Title: "right", Scope: "c/**", Deps: []string{"T1"}},
		{ID: "T4", Title: "join", Scope: "d/**", Deps: []string{"T2", "T3"}},
	}
}

func (a *scriptedAgent) Run(ctx context.Context, s agent.Step) (agent.Result, error) {
	a.mu.Lock()
	a.calls = append(a.calls, string(s.Phase)+" "+s.ID)
	if a.prompts == nil {
		a.prompts = map[agent.Phase]string{}
	}
	a.prompts[s.Phase] = s.Prompt
	tasks, why, reviewJSON, rawPlan, two := a.tasks, a.fail[s.ID], a.review, a.rawPlan, a.twoAngles
	during := a.during[s.ID]
	a.mu.Unlock()
	if s.Phase == agent.PhaseExecute && during != nil {
		during(ctx)
	}
	if s.Phase == agent.PhaseReview && reviewJSON != "" {
		return agent.Result{Raw: json.RawMessage(strings.ReplaceAll(reviewJSON, "__ID__", s.ID))}, nil
	}
	if s.Phase == agent.PhasePlan && strings.Contains(s.Prompt, "findings of planex's review") {
		raw, err := json.Marshal(fixPlan(s.Prompt))
		return agent.Result{Raw: raw}, err
	}
	var v any
	switch s.Phase {
	case agent.PhaseAnalyze:
		angles := []map[string]string{{"id": "E1", "angle": "patterns", "description": "find patterns", "focus": "code"}}
		if two {
			angles = append(angles, map[string]string{"id": "E2", "angle": "tests", "description": "find tests", "focus": "tests"})
		}
		v = map[string]any{"type": "feature", "complexity": "Medium", "angles": angles}
	case agent.PhasePlan:
		if rawPlan != nil {
			v = rawPlan
			break
		}
		v = planOf(tasks)
	case agent.PhaseExplore:
		v = map[string]any{"id": s.ID, "status": "completed", "findings": "findings of " + s.ID, "key_files": []string{"README.md"}, "error": ""}
	case agent.PhaseReview:
		v = map[string]any{"id": s.ID, "verdict": "pass", "summary": "looks right",
			"criteria": []map[string]any{{"criterion": "file has content", "met": true, "evidence": "README.md:1"}}, "findings": []any{}}
	case agent.PhaseExecute:
		if why != "" {
			v = map[string]any{"id": s.ID, "status": "failed", "findings": "", "tests_passed": false, "error": why}
			break
		}
		dir := filepath.Join(s.Dir, strings.TrimSuffix(s.Scope, "/**"))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return agent.Result{}, err
		}
		if err := os.WriteFile(filepath.Join(dir, s.ID+".txt"), []byte(s.ID+"\n"), 0o644); err != nil {
			return agent.Result{}, err
		}
		for _, t := range tasks {
			if t.ID == s.ID && t.Attributes != "" {
				if err := os.WriteFile(filepath.Join(s.Dir, t.Attributes), []byte("* linguist-generated -diff\n"), 0o644); err != nil {
					return agent.Result{}, err
				}
			}
		}
		v = map[string]any{"id": s.ID, "status": "completed", "findings": "did " + s.ID, "files_modified": []string{},
			"tests_passed": true, "acceptance_met": "all"}
	default:
		return agent.Result{}, fmt.Errorf("unexpected phase %s", s.Phase)
	}
	raw, err := json.Marshal(v)
	return agent.Result{Raw: raw}, err
}

// planOf is the plan the scripted agent answers for tasks.
func planOf(tasks []wTask) map[string]any {
	var ts []map[string]any
	for _, t := range tasks {
		deps := t.Deps
		if deps == nil {
			deps = []string{}
		}
		ts = append(ts, map[string]any{"id": t.ID, "title": t.Title, "description": "do " + t.ID, "test": "the file exists",
			"acceptance_criteria": "file has content", "scope": t.Scope, "hints": "", "execution_directives": t.Directives,
			"deps": deps, "context_from": []string{}})
	}
	return map[string]any{"summary": "the plan", "approach": "one file per task", "tasks": ts}
}

// plannedOne plans the agent's set plan on a new issue a maintainer opened
// and returns the issue and the plan's id.
func (w *world) plannedOne(title string) (int, string) {
	w.t.Helper()
	n := w.fake.AddIssue(wRepo, "maintainer", title, "")
	if r, err := w.handle(w.comment(n, "maintainer", "/planex "+strings.ToLower(title))); err != nil || r.Outputs.Status != StatusPlanned {
		w.t.Fatalf("plan: %v %+v", err, r.Outputs)
	}
	return n, w.planID(n)
}
