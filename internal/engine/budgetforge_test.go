package engine

import (
	"context"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/planexhq/planex/internal/agent"
	"github.com/planexhq/planex/internal/plan"
	"github.com/planexhq/planex/internal/session"
)

// TestRedTeamAgentRefundsItsCost: an agent reports what it spent, and the
// budget sums the reports. One that reports a cost of -100 dollars (or
// NaN, which makes every comparison false) for its first step paid back
// what every later step spent: with a cost cap of $0.015 the whole plan
// ran. Its claim is now bounded at 0, so the cap stops the run before
// any task, as it does for honest steps of a cent each.
func TestRedTeamAgentRefundsItsCost(t *testing.T) {
	for name, claim := range map[string]float64{"a negative cost": -100, "a cost that is no number": math.NaN()} {
		t.Run(name, func(t *testing.T) {
			repo := testRepo(t)
			p := &pipelineAgent{}
			inner := p.agent()
			liar := agent.Func(func(ctx context.Context, s agent.Step) (agent.Result, error) {
				res, err := inner.Run(ctx, s)
				if s.Phase == agent.PhaseAnalyze {
					res.Usage.CostUSD = claim
				}
				return res, err
			})
			e, err := New(repo, Options{Agent: liar, Yes: true, Approver: "tester", Budget: Budget{MaxCostUSD: 0.015}, Concurrency: 1})
			if err != nil {
				t.Fatal(err)
			}
			out, err := e.Start(context.Background(), Request{Requirement: "add two files"})
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(p.ran(), "execute") || out.Stage != StageStopped || !strings.Contains(out.Reason, "cost budget") {
				t.Errorf("steps %s, stage %s (%q): the claimed refund let the run past its cost cap", p.ran(), out.Stage, out.Reason)
			}
		})
	}
}

// TestStepsGetWhatTheBudgetLeaves: each step is told what the session's
// budget leaves it when it starts (agent.Step.Limit), which a named
// CLI's model gateway holds its calls to: the first step the whole cap,
// later ones the cap less what earlier steps recorded, never nothing.
func TestStepsGetWhatTheBudgetLeaves(t *testing.T) {
	t.Parallel()
	repo := testRepo(t)
	p := &pipelineAgent{}
	inner := p.agent()
	var mu sync.Mutex
	limits := map[agent.Phase][]agent.Limit{}
	seen := agent.Func(func(ctx context.Context, s agent.Step) (agent.Result, error) {
		mu.Lock()
		limits[s.Phase] = append(limits[s.Phase], s.Limit)
		mu.Unlock()
		return inner.Run(ctx, s)
	})
	budget := Budget{MaxCostUSD: 5, MaxTokens: 10_000_000}
	e, err := New(repo, Options{Agent: seen, Yes: true, Approver: "tester", Budget: budget, Concurrency: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Start(context.Background(), Request{Requirement: "add two files"}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if got := limits[agent.PhaseAnalyze]; len(got) != 1 || got[0] != (agent.Limit{Tokens: budget.MaxTokens, CostUSD: budget.MaxCostUSD}) {
		t.Errorf("analyze was told %+v, want the whole budget", got)
	}
	exec := limits[agent.PhaseExecute]
	if len(exec) == 0 {
		t.Fatalf("no execute step ran: %v", limits)
	}
	for _, l := range exec {
		if !(l.CostUSD > 0 && l.CostUSD < budget.MaxCostUSD && l.Tokens > 0 && l.Tokens < budget.MaxTokens) {
			t.Errorf("an execute step was told %+v: not what the budget left after the steps before it", l)
		}
	}
}

// limitReviewer is a Reviewer that records what the budget leaves a
// review step.
type limitReviewer struct{ got []agent.Limit }

func (r *limitReviewer) Review(_ context.Context, _ *session.Session, _ []plan.Task, limit func() agent.Limit) error {
	if limit != nil {
		r.got = append(r.got, limit())
	}
	return nil
}

// TestReviewGetsWhatTheBudgetLeaves: the review after the last wave is
// told what the session's budget leaves, the tasks' spending counted
// (review steps were given no limit, so a reviewer a task's diff
// prompt-injected spent past the cap).
func TestReviewGetsWhatTheBudgetLeaves(t *testing.T) {
	t.Parallel()
	repo := testRepo(t)
	p := &pipelineAgent{}
	rv := &limitReviewer{}
	budget := Budget{MaxCostUSD: 5, MaxTokens: 10_000_000}
	e, err := New(repo, Options{Agent: p.agent(), Yes: true, Approver: "tester", Budget: budget, Concurrency: 1, Reviewer: rv})
	if err != nil {
		t.Fatal(err)
	}
	out, err := e.Start(context.Background(), Request{Requirement: "add two files"})
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := out.Session.ReadTasks()
	if err != nil {
		t.Fatal(err)
	}
	spent := Spent(out.Session, tasks)
	want := agent.Limit{Tokens: budget.MaxTokens - spent.InputTokens - spent.OutputTokens, CostUSD: budget.MaxCostUSD - spent.CostUSD}
	if len(rv.got) != 1 || rv.got[0] != want || want.Tokens == budget.MaxTokens {
		t.Errorf("the review was told %+v, want %+v (the budget less the session's spending)", rv.got, want)
	}
}

// TestTasksAtOnceShareTheRemainder: the tasks of an execution, and the
// explorations, which may run at once, are each told the remainder and
// given one agent.Shared per phase to count it together (each alone was
// allowed all of it, so N steps at once could spend N times the budget's
// remainder).
func TestTasksAtOnceShareTheRemainder(t *testing.T) {
	t.Parallel()
	for _, phase := range []agent.Phase{agent.PhaseExecute, agent.PhaseExplore} {
		t.Run(string(phase), func(t *testing.T) {
			t.Parallel()
			stepsShareTheRemainder(t, phase)
		})
	}
}

func stepsShareTheRemainder(t *testing.T, phase agent.Phase) {
	repo := testRepo(t)
	p := &pipelineAgent{}
	inner := p.agent()
	var mu sync.Mutex
	var shared []*agent.Shared
	seen := agent.Func(func(ctx context.Context, s agent.Step) (agent.Result, error) {
		if s.Phase == phase {
			mu.Lock()
			shared = append(shared, s.Limit.Shared)
			mu.Unlock()
		}
		return inner.Run(ctx, s)
	})
	e, err := New(repo, Options{Agent: seen, Yes: true, Approver: "tester", Budget: Budget{MaxCostUSD: 5}, Concurrency: 3})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Start(context.Background(), Request{Requirement: "add two files"}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(shared) < 2 {
		t.Fatalf("%d %s steps ran, want two or more", len(shared), phase)
	}
	for _, s := range shared {
		if s == nil || s != shared[0] {
			t.Fatalf("the %s steps were given %v, want one shared count for all", phase, shared)
		}
	}
}
