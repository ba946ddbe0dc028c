package engine

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/planexhq/planex/internal/agent"
	"github.com/planexhq/planex/internal/execute"
	"github.com/planexhq/planex/internal/plan"
	"github.com/planexhq/planex/internal/session"
)

// pipelineAgent answers every phase as a model would: two angles, their
// findings, a two-task plan (T2 after T1, drawing on E1 and T1), and
// execute steps that write <scope dir>/<id>.txt. Each step costs a cent.
type pipelineAgent struct {
	mu      sync.Mutex
	steps   []string
	fail    map[string]bool // execute steps that report failure
	prompts map[string]string
}

func (p *pipelineAgent) agent() agent.Agent {
	return agent.Func(func(ctx context.Context, s agent.Step) (agent.Result, error) {
		p.mu.Lock()
		p.steps = append(p.steps, string(s.Phase)+":"+s.ID)
		if p.prompts == nil {
			p.prompts = map[string]string{}
		}
		p.prompts[string(s.Phase)+":"+s.ID] = s.Prompt
		fail := p.fail[s.ID]
		p.mu.Unlock()
		var v any
		switch s.Phase {
		case agent.PhaseAnalyze:
			v = agent.AnalyzeResult{Type: "feature", Complexity: "Medium", Angles: []agent.Angle{
				{ID: "E1", Angle: "patterns", Description: "look for patterns", Focus: "src"},
				{ID: "E2", Angle: "tests", Description: "look at tests", Focus: "tests"}}}
		case agent.PhaseExplore:
			v = agent.ExploreResult{Report: agent.Report{ID: s.ID, Status: "completed", Findings: "findings of " + s.ID}, KeyFiles: []string{"README.md"}}
		case agent.PhasePlan:
			v = agent.PlanResult{Summary: "two files", Approach: "one then the other", Tasks: []agent.PlannedTask{
				{ID: "T1", Title: "first", Description: "write a", Scope: "a/**", Deps: []string{}, ContextFrom: []string{}},
				{ID: "T2", Title: "second", Description: "write b", Scope: "b/**", Deps: []string{"T1"}, ContextFrom: []string{"E1", "T1"}}}}
		case agent.PhaseExecute:
			if fail {
				v = agent.ExecuteResult{Report: agent.Report{ID: s.ID, Status: "failed", Error: "could not do " + s.ID}, FilesModified: []string{}}
				break
			}
			dir := filepath.Join(s.Dir, strings.TrimSuffix(s.Scope, "/**"))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return agent.Result{}, err
			}
			if err := os.WriteFile(filepath.Join(dir, s.ID+".txt"), []byte(s.ID), 0o644); err != nil {
				return agent.Result{}, err
			}
			v = agent.ExecuteResult{Report: agent.Report{ID: s.ID, Status: "completed", Findings: "did " + s.ID}, TestsPassed: true, FilesModified: []string{}}
		default:
			return agent.Result{}, errors.New("unexpected phase " + string(s.Phase))
		}
		raw, _ := json.Marshal(v)
		res := agent.Result{Raw: raw, Usage: agent.Usage{InputTokens: 100, OutputTokens: 50, CostUSD: 0.01}}
		if s.Phase == agent.PhaseExplore && s.ID == "E2" {
			res.MCPCalls = []string{"mcp__tickets__lookup_ticket"}
		}
		return res, nil
	})
}

func (p *pipelineAgent) ran() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.steps, " ")
}

// scriptedGate answers each gate from a map (Defer when absent).
type scriptedGate map[session.Gate]Decision

func (g scriptedGate) Confirm(_ context.Context, gate session.Gate, _ *session.Session, preview string) (Decision, error) {
	if preview == "" {
		return Cancel, errors.New("no preview at the " + string(gate) + " gate")
	}
	return g[gate], nil
}

func TestPipelineGates(t *testing.T) {
	const all = "analyze: explore:E1 explore:E2 plan: execute:T1 execute:T2"
	cases := []struct {
		name      string
		o         Options
		wantStage Stage
		wantGate  session.Gate
		wantSteps string
		wantHow   string // the approval record, when done
	}{
		{"-y passes every gate", Options{Yes: true}, StageDone, "", all, "-y"},
		{"no terminal: waits at the angles gate", Options{}, StageWaiting, session.GateAngles, "analyze:", ""},
		{"the Action passes the angles gate and waits at the tasks gate", Options{AutoAngles: true}, StageWaiting, session.GateTasks,
			"analyze: explore:E1 explore:E2 plan:", ""},
		{"approved at the terminal", Options{Gate: scriptedGate{session.GateAngles: Approve, session.GateTasks: Approve}}, StageDone, "", all, "terminal prompt"},
		{"modify at the tasks gate waits there", Options{Gate: scriptedGate{session.GateAngles: Approve, session.GateTasks: Modify}}, StageWaiting, session.GateTasks,
			"analyze: explore:E1 explore:E2 plan:", ""},
		{"cancelled at the angles gate", Options{Gate: scriptedGate{session.GateAngles: Cancel}}, StageCancelled, "", "analyze:", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			repo := testRepo(t)
			p := &pipelineAgent{}
			c.o.Agent, c.o.Approver, c.o.Concurrency = p.agent(), "tester", 1
			e, err := New(repo, c.o)
			if err != nil {
				t.Fatal(err)
			}
			out, err := e.Start(context.Background(), Request{Requirement: "add two files"})
			if err != nil {
				t.Fatal(err)
			}
			if out.Stage != c.wantStage || out.Gate != c.wantGate {
				t.Fatalf("stage %s gate %s, want %s %s (%s)", out.Stage, out.Gate, c.wantStage, c.wantGate, out.Reason)
			}
			if got := p.ran(); got != c.wantSteps {
				t.Errorf("steps = %s, want %s", got, c.wantSteps)
			}
			s, _ := session.Open(session.StoreFor(repo.Root, repo.CommonDir), out.Session.Meta.ID)
			if c.wantStage == StageDone {
				if s.Meta.Approval == nil || s.Meta.Approval.How != c.wantHow || out.Counts.Completed != 2 {
					t.Errorf("approval %+v, counts %+v", s.Meta.Approval, out.Counts)
				}
				if !strings.Contains(p.prompts["execute:T2"], "findings of E1") || !strings.Contains(p.prompts["execute:T2"], "did T1") {
					t.Errorf("T2's prompt lacks the context it draws on:\n%s", p.prompts["execute:T2"])
				}
				rows, err := s.ReadExplore()
				if err != nil || len(rows) != 2 || rows[0].Findings != "findings of E1" || rows[1].Findings != "findings of E2 MCP tools called: mcp__tickets__lookup_ticket." {
					t.Errorf("explore rows %+v (%v): E2's should name the MCP tool it called, E1's nothing", rows, err)
				}
			}
			if c.wantStage == StageCancelled {
				if _, err := e.Continue(context.Background(), s.Meta.ID); err == nil || !strings.Contains(err.Error(), "was cancelled") {
					t.Errorf("continue after cancel = %v", err)
				}
			}
		})
	}
}

// TestContinueApprovesTheGateItWaitsAt: each --continue approves the one
// gate the session waits at, and the approval names it.
func TestContinueApprovesTheGateItWaitsAt(t *testing.T) {
	repo := testRepo(t)
	p := &pipelineAgent{}
	e := newTestEngine(t, repo, p.agent(), false)
	ctx := context.Background()
	out, err := e.Start(ctx, Request{Requirement: "add two files"})
	if err != nil || out.Gate != session.GateAngles {
		t.Fatalf("start: %+v %v", out, err)
	}
	id := out.Session.Meta.ID
	for _, want := range []struct {
		stage Stage
		gate  session.Gate
	}{{StageWaiting, session.GateTasks}, {StageDone, ""}} {
		if out, err = e.Continue(ctx, id); err != nil || out.Stage != want.stage || out.Gate != want.gate {
			t.Fatalf("continue: %+v %v, want %s %s", out, err, want.stage, want.gate)
		}
	}
	if out.Session.Meta.Approval.How != "--continue at the gate" {
		t.Errorf("approval how = %q", out.Session.Meta.Approval.How)
	}
	report, err := os.ReadFile(out.Session.File("context.md"))
	if err != nil || !strings.Contains(string(report), "2 completed") {
		t.Errorf("report: %v\n%s", err, report)
	}
}

func TestBudgetStopsBeforeAStepItCannotAfford(t *testing.T) {
	cases := []struct {
		name       string
		budget     Budget
		wantSteps  string
		wantReason string
	}{
		{"cost: the explore steps are not afforded", Budget{MaxCostUSD: 0.015}, "analyze:", "cost budget: $0.01 spent of $0.01, and the next explore step"},
		{"tokens: the second task is not afforded", Budget{MaxTokens: 800}, "analyze: explore:E1 explore:E2 plan: execute:T1", "token budget: 750 tokens used of 800"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			repo := testRepo(t)
			p := &pipelineAgent{}
			e, err := New(repo, Options{Agent: p.agent(), Yes: true, Approver: "tester", Budget: c.budget, Concurrency: 1})
			if err != nil {
				t.Fatal(err)
			}
			out, err := e.Start(context.Background(), Request{Requirement: "add two files"})
			if err != nil {
				t.Fatal(err)
			}
			if out.Stage != StageStopped || !strings.Contains(out.Reason, c.wantReason) {
				t.Errorf("stage %s, reason %q; want stopped with %q", out.Stage, out.Reason, c.wantReason)
			}
			if got := p.ran(); got != c.wantSteps {
				t.Errorf("steps = %s, want %s", got, c.wantSteps)
			}
		})
	}
}

func TestEstimate(t *testing.T) {
	s := &session.Session{Meta: session.Meta{Usage: map[string]agent.Usage{
		"analyze": {InputTokens: 10, CostUSD: 1}, "E1": {InputTokens: 20, CostUSD: 2}, "E2": {InputTokens: 40, CostUSD: 4}}}}
	tasks := []plan.Task{{ID: "T1", InputTokens: 100, CostUSD: 10}, {ID: "T2"}}
	cases := []struct {
		phase agent.Phase
		tasks []plan.Task
		want  agent.Usage
	}{
		{agent.PhaseExplore, tasks, agent.Usage{InputTokens: 30, CostUSD: 3}},
		{agent.PhaseExecute, tasks, agent.Usage{InputTokens: 100, CostUSD: 10}},
		{agent.PhaseExecute, nil, agent.Usage{InputTokens: 23, CostUSD: 7.0 / 3}},
		{agent.PhasePlan, nil, agent.Usage{InputTokens: 23, CostUSD: 7.0 / 3}},
	}
	for _, c := range cases {
		if got := estimate(s, c.tasks, c.phase); got != c.want {
			t.Errorf("estimate(%s, %d tasks) = %+v, want %+v", c.phase, len(c.tasks), got, c.want)
		}
	}
	if got := estimate(&session.Session{}, nil, agent.PhasePlan); got != (agent.Usage{}) {
		t.Errorf("estimate with no history = %+v", got)
	}
}

// TestMatrixModeMatchesSingleProcess runs an approved plan task by task
// as separate jobs would (PrepareWave, RunTask, Integrate, Conclude): one
// commit per task, Integrate idempotent, the same tree as one process.
func TestMatrixModeMatchesSingleProcess(t *testing.T) {
	ctx := context.Background()
	single := testRepo(t)
	p := &pipelineAgent{}
	out, err := newTestEngine(t, single, p.agent(), true).Start(ctx, Request{Requirement: "two files", Imported: twoTasks()})
	if err != nil || out.Counts.Completed != 2 {
		tasks, _ := out.Session.ReadTasks()
		t.Fatalf("single process: %+v %v %+v", out, err, tasks)
	}
	want := branchTree(t, single, out.Session)

	repo := testRepo(t)
	e := newTestEngine(t, repo, p.agent(), false)
	out, err = e.Start(ctx, Request{Requirement: "two files", Imported: twoTasks()})
	if err != nil || out.Gate != session.GateTasks {
		t.Fatalf("start: %+v %v", out, err)
	}
	id, hash := out.Session.Meta.ID, plan.Hash(twoTasks())
	if err := e.ApprovePlan(ctx, id, hash, Approver{By: "m", How: "comment"}); err != nil {
		t.Fatal(err)
	}
	if err := e.CheckApproved(id, hash); err != nil {
		t.Fatal(err)
	}
	if err := e.PlanMatches(id, hash); err != nil {
		t.Fatal(err)
	}
	if err := e.CheckApproved(id, strings.Repeat("0", 64)); !errors.Is(err, ErrPlanChanged) {
		t.Errorf("CheckApproved with another hash = %v", err)
	}
	var waves []string
	for {
		w, err := e.PrepareWave(ctx, id, hash)
		if err != nil {
			t.Fatal(err)
		}
		if w.Number == 0 {
			break
		}
		waves = append(waves, strings.Join(w.IDs(), ","))
		var outs []execute.Outcome
		for _, tk := range w.Tasks {
			o, err := e.RunTask(ctx, id, tk.ID, w.Base, hash)
			if err != nil {
				t.Fatal(err)
			}
			outs = append(outs, o)
		}
		for range 2 { // the second time finds them on the branch
			if err := e.Integrate(ctx, id, outs, hash); err != nil {
				t.Fatal(err)
			}
		}
	}
	if got := strings.Join(waves, " "); got != "T1 T2" {
		t.Errorf("waves = %s", got)
	}
	res, err := e.Conclude(ctx, id, hash)
	if err != nil || res.Stage != StageDone || res.Counts.Completed != 2 {
		t.Fatalf("conclude: %+v %v", res, err)
	}
	s, _ := session.Open(session.StoreFor(repo.Root, repo.CommonDir), id)
	if got := branchTasks(t, repo, s); got != "T1 T2" {
		t.Errorf("commits = %s", got)
	}
	if got := branchTree(t, repo, s); got != want {
		t.Errorf("tree %s, single process %s", got, want)
	}
	if err := e.Integrate(ctx, id, []execute.Outcome{{ID: "T9"}}, hash); err == nil || !strings.Contains(err.Error(), `no task "T9"`) {
		t.Errorf("Integrate of an unknown task = %v", err)
	}
}

// TestRetryRunsFailedAndSkippedTasksAgain: a failed task and the task it
// skipped run again on retry, and nothing completed runs twice.
func TestRetryRunsFailedAndSkippedTasksAgain(t *testing.T) {
	ctx := context.Background()
	repo := testRepo(t)
	p := &pipelineAgent{fail: map[string]bool{"T1": true}}
	e := newTestEngine(t, repo, p.agent(), true)
	out, err := e.Start(ctx, Request{Requirement: "two files", Imported: twoTasks()})
	if err != nil || out.Counts != (plan.Counts{Total: 2, Failed: 1, Skipped: 1}) {
		t.Fatalf("first run: %+v %v", out, err)
	}
	id := out.Session.Meta.ID
	p.fail = nil
	out, err = e.Retry(ctx, id, "")
	if err != nil || out.Counts.Completed != 2 {
		t.Fatalf("retry: %+v %v", out, err)
	}
	if _, err := e.ResetFailed(ctx, id, ""); !errors.Is(err, ErrNothingToRetry) {
		t.Errorf("ResetFailed with nothing failed = %v", err)
	}
	if got := p.ran(); got != "execute:T1 execute:T1 execute:T2" {
		t.Errorf("steps = %s", got)
	}
}

func TestReplanThrowsThePlanAway(t *testing.T) {
	ctx := context.Background()
	repo := testRepo(t)
	p := &pipelineAgent{}
	e, err := New(repo, Options{Agent: p.agent(), AutoAngles: true, Approver: "tester"})
	if err != nil {
		t.Fatal(err)
	}
	out, err := e.Start(ctx, Request{Requirement: "add two files"})
	if err != nil || out.Gate != session.GateTasks {
		t.Fatalf("start: %+v %v", out, err)
	}
	out, err = e.Replan(ctx, out.Session.Meta.ID, "smaller tasks please")
	if err != nil || out.Gate != session.GateTasks {
		t.Fatalf("replan: %+v %v", out, err)
	}
	if !strings.Contains(p.prompts["plan:"], "smaller tasks please") {
		t.Errorf("the feedback is not in the plan prompt")
	}
	if _, err := e.Resume(ctx, out.Session.Meta.ID, ""); !errors.Is(err, ErrNotApproved) {
		t.Errorf("Resume of an unapproved plan = %v", err)
	}
}

func TestStartExploredAndPresets(t *testing.T) {
	repo := testRepo(t)
	e := newTestEngine(t, repo, (&pipelineAgent{}).agent(), false)
	kind, angles := PresetAngles("fix the crash when the list is empty", 2)
	if kind == "" || len(angles) != 2 {
		t.Fatalf("PresetAngles = %s %v", kind, angles)
	}
	rows := []plan.ExploreRow{{ID: "E1", Angle: angles[0], Description: "d", Status: plan.StatusCompleted, Findings: "found", Wave: 1}}
	s, err := e.StartExplored(context.Background(), Request{Requirement: "fix the crash"}, rows, &RepoContext{Summary: "Go", TestCommand: "go test ./..."})
	if err != nil {
		t.Fatal(err)
	}
	if !s.Meta.Approved[session.GateAngles] || !s.Exists(session.ExploreFile) {
		t.Errorf("explored session: %+v", s.Meta)
	}
	if _, err := e.StartExplored(context.Background(), Request{}, rows, nil); err == nil {
		t.Error("an empty requirement was accepted")
	}
}

// TestRedTeamReportRedactsHeldValues: a plan (written by an agent) whose
// task title holds the value of a variable planex holds and does not pass
// on: the report holds only the variable's name.
func TestRedTeamReportRedactsHeldValues(t *testing.T) {
	ctx := context.Background()
	repo := testRepo(t)
	const dsn = "https://redteam-key@o1.ingest.sentry.io/42"
	t.Setenv("SENTRY_DSN", dsn)
	p := &pipelineAgent{}
	e := newTestEngine(t, repo, p.agent(), true)
	tasks := twoTasks()
	tasks[0].Title = "report to " + dsn
	out, err := e.Start(ctx, Request{Requirement: "two files", Imported: tasks})
	if err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(out.Session.File(session.ContextFile))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(md), dsn) || !strings.Contains(string(md), "[redacted SENTRY_DSN]") {
		t.Errorf("context.md:\n%s", md)
	}
}
